import { check, checkEqual, type Journey } from "../harness";
import { ACME_TOKEN } from "./connections";
import { openImport, runJob } from "./datasets";

/**
 * A pasted OData query is applied locally: the service only ever sees the plain dataset request
 * (it rejects every `$` option), and the sheet gets exactly the filtered, projected, sorted top rows.
 */
export const importWithPastedQuery: Journey = {
  name: "import: pasted $filter/$select/$orderby/$top applied locally, the service never sees a $ option",
  async run(t) {
    await t.clearRequests();
    await openImport(t, "financials");
    // A full OData URL as a BI tool would show it, including a credential parameter that must be dropped.
    const pasted =
      `${t.serviceUrl}/api/bi/odata/v1/financials?$filter=fiscal_year eq 2026 and period_number le 6` +
      `&$select=project_id,fiscal_year,period_number,budget&$orderby=budget desc&$top=5&company_api_token=${ACME_TOKEN}`;
    await t.fill(t.id("query-paste"), pasted);
    await t.until("the local part of the query to show", async () => (await t.id("query-preview-local").innerText()).includes("$top"));
    const sent = await t.id("query-preview-sent").innerText();
    const local = await t.id("query-preview-local").innerText();
    check(!sent.includes("$") && sent.includes("financials"), `sent: ${sent}`);
    check(!sent.includes(ACME_TOKEN) && !local.includes(ACME_TOKEN), "the pasted token is shown nowhere");
    for (const part of ["$filter", "$select", "$orderby", "$top"]) check(local.includes(part), `applied locally: ${part} (${local})`);
    await t.id("query-preview-removed").waitFor();
    check(!(await t.id("query-preview-removed").innerText()).includes(ACME_TOKEN), "the removal note does not repeat the token");
    await t.screenshotPane("08-import-query");

    const job = await runJob(t, () => t.id("import-start").click());
    checkEqual(job.rows, 5, "rows after $top=5");
    const place = await t.table(job.table);
    checkEqual([place.sheet, place.columns, place.dataRows], [job.sheet, 4, 5], "table on its sheet: columns and rows");
    if ((await t.activeSheet()) !== job.sheet) await t.openSheet(job.sheet);

    const header = await t.tableRow(place, 0, 5);
    checkEqual(header.map((c) => c.value), ["project_id", "fiscal_year", "period_number", "budget", ""], "header after $select");
    const budgets: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const [id, fy, pn, budget] = await t.tableRow(place, i, 4);
      check(id.value.startsWith("PRJ-"), `project_id in row ${i}`);
      checkEqual([fy.type, fy.value], ["number", "2026"], `fiscal_year in row ${i}`);
      check(Number(pn.value) <= 6, `period_number <= 6 in row ${i} (${pn.value})`);
      checkEqual(budget.type, "number", `budget type in row ${i}`);
      budgets.push(Number(budget.value));
    }
    checkEqual([...budgets].sort((a, b) => b - a), budgets, "sorted by budget, descending");
    checkEqual((await t.cell(place.address(6, 0))).type, "empty", "nothing below the fifth row");

    const log = await t.requests();
    check(log.length > 0, "the service was called");
    const offending = log.filter((r) => r.query.includes("$") || /%24/i.test(r.query));
    checkEqual(offending, [], "requests carrying a $ option");
    check(log.every((r) => !/company_api_token/i.test(r.query)), "no request carried the token in the query string");
    check(log.some((r) => r.path.includes("financials") && r.status === 200), "the complete table was fetched");
    await t.screenshot("09-imported-with-query");
  },
};
