import { check, checkEqual, type E2E, type GridCell, type Journey, type TablePlace } from "../harness";
import { ACME_TOKEN, openTab, workbookText } from "./connections";

export function datasetRow(t: E2E, key: string) {
  return t.tp.locator(`[data-testid=dataset-row][data-key="${key}"]`);
}

/** The financials columns in service order (the reference service's demo dataset). */
export const FINANCIALS_COLUMNS = [
  "project_id", "project_name", "cost_center_code", "fiscal_year", "period_number", "budget",
  "actual_cost", "variance_pct", "period_start", "last_updated", "is_capex", "external_ref",
];

/**
 * Starts an import/snapshot job with `start` and waits for ITS result (not the previous job's):
 * the result element present before is marked, and only an unmarked or changed one counts.
 */
export async function runJob(
  t: E2E,
  start: () => Promise<void>,
  expect: "done" | "cancelled" | "error" = "done",
): Promise<{ rows: number; table: string; sheet: string; text: string }> {
  const frame = t.frame();
  const read = () =>
    frame.evaluate(() => {
      const el = document.querySelector<HTMLElement>('[data-testid="job-result"]');
      if (!el) return null;
      const attrs = ["state", "rows", "table", "sheet"].map((k) => el.getAttribute(`data-${k}`) ?? "").join("|");
      return { marked: el.dataset.e2eSeen === "1", attrs, state: el.dataset.state ?? "", rows: el.dataset.rows ?? "", table: el.dataset.table ?? "", sheet: el.dataset.sheet ?? "", text: el.innerText };
    });
  const before = await read();
  await frame.evaluate(() => {
    const el = document.querySelector<HTMLElement>('[data-testid="job-result"]');
    if (el) el.dataset.e2eSeen = "1";
  });
  await start();
  const result = await t.until(
    "the job to finish",
    async () => {
      const cur = await read();
      if (!cur || !["done", "cancelled", "error"].includes(cur.state)) return null;
      if (cur.marked && before && cur.attrs === before.attrs) return null;
      return cur;
    },
    60_000,
  );
  if (result.state !== expect) {
    const panels = await frame.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('[data-testid="error-panel"]')].map((p) => `${p.dataset.code}: ${p.innerText}`).join(" | "),
    );
    throw new Error(`job ended "${result.state}" instead of "${expect}": ${result.text}${panels ? ` (error panel: ${panels})` : ""}`);
  }
  return { rows: Number(result.rows), table: result.table, sheet: result.sheet, text: result.text };
}

/** Opens the import panel of a dataset from the list. */
export async function openImport(t: E2E, key: string): Promise<void> {
  await openTab(t, "datasets");
  // The panel of a previous import may still be open; go back to the list as a user would.
  if ((await t.id("import-panel").count()) > 0) await t.id("import-close").click();
  const row = datasetRow(t, key);
  await row.waitFor();
  await row.getByTestId("dataset-import").click();
  await t.attr(t.id("import-panel"), "data-key", key);
}

/** The list reflects the manifest: states, counts, formats, and the search box. */
export const listDatasets: Journey = {
  name: "datasets: the manifest's datasets with states (ready, no export, 0 rows) and search",
  async run(t) {
    await openTab(t, "datasets");
    await t.id("datasets-list").waitFor();
    check((await t.id("datasets-company").innerText()).includes("acme"), "company shown above the list");

    const fin = datasetRow(t, "financials");
    checkEqual(await fin.getAttribute("data-state"), "ready", "financials state");
    checkEqual(await fin.getByTestId("dataset-rows").getAttribute("data-count"), "120", "financials row count");
    checkEqual(await fin.getByTestId("dataset-schema").innerText().then((s) => s.includes("3")), true, "financials schema version 3 shown");
    const generated = await fin.getByTestId("dataset-generated").getAttribute("datetime");
    check(generated !== null && !Number.isNaN(Date.parse(generated)), `generated_at is a time (${generated})`);
    check((await fin.getByTestId("dataset-generated-absolute").innerText()).trim() !== "", "absolute generation time shown");
    const formats = await fin.getByTestId("dataset-formats").innerText();
    for (const f of ["json", "csv"]) check(formats.toLowerCase().includes(f), `formats list ${f} (${formats})`);

    const risks = datasetRow(t, "risks");
    checkEqual(await risks.getAttribute("data-state"), "no_export", "risks state (listed, never generated)");
    checkEqual(await risks.getAttribute("aria-disabled"), "true", "risks row is disabled");
    check(await t.isDisabled(risks.getByTestId("dataset-import")), "risks cannot be imported");
    checkEqual(await risks.getByTestId("dataset-generated").innerText(), "No export yet", "risks says there is no export yet");
    check((await risks.getByTestId("dataset-state-note").innerText()).includes("retry after the service's next generation"), "risks says when to retry");

    const milestones = datasetRow(t, "milestones");
    checkEqual(await milestones.getAttribute("data-state"), "empty", "milestones state");
    checkEqual((await milestones.getByTestId("dataset-rows").innerText()).trim(), "0 rows", "milestones row text");
    check(!(await t.isDisabled(milestones.getByTestId("dataset-import"))), "an empty dataset is importable");
    await t.screenshotPane("03-datasets");

    await t.fill(t.id("datasets-search"), "FIN");
    await t.until("search to leave only financials", async () => (await t.id("dataset-row").count()) === 1);
    checkEqual(await t.id("dataset-row").getAttribute("data-key"), "financials", "search result");
    await t.fill(t.id("datasets-search"), "no-such-dataset");
    await t.id("datasets-empty").waitFor();
    await t.fill(t.id("datasets-search"), "");
    await t.until("all datasets listed again", async () => (await t.id("dataset-row").count()) === 6);
  },
};

/** Reads data row `i` (1 = first data row) of a financials table as a map column → cell. */
async function financialsRow(t: E2E, place: TablePlace, i: number): Promise<Record<string, GridCell>> {
  const cells = await t.tableRow(place, i, FINANCIALS_COLUMNS.length);
  return Object.fromEntries(FINANCIALS_COLUMNS.map((c, k) => [c, cells[k]]));
}

/** The import writes a typed Excel table: numbers are numbers, dates are dates, text stays text. */
export const importFinancials: Journey = {
  name: "import: financials (JSON) into a new sheet, values, types and formats right in the grid",
  async run(t) {
    const sheetsBefore = await t.sheetNames();
    await openImport(t, "financials");
    check(await t.isChecked(t.id("import-dest-new-sheet")), "new sheet is the default destination");
    check(await t.isChecked(t.id("import-format-json")), "JSON is the default format");
    const sent = await t.id("query-preview-sent").innerText();
    check(sent.includes("/api/bi/v1/financials") && !sent.includes("$") && !sent.includes(ACME_TOKEN), `what will be sent: ${sent}`);
    // What each column becomes in the sheet (issue #37, item 11): external_ref is not promised as a number.
    const words = async (column: string) => (await t.tp.locator(`[data-testid=query-column][data-column="${column}"]`).evaluate((el) => el.closest(".check")?.textContent ?? "")).trim();
    checkEqual(await words("external_ref"), "external_ref whole number; the column is text if a value has over 15 digits", "the import panel's words for external_ref");
    checkEqual(await words("budget"), "budget decimal", "the import panel's words for budget");
    await t.screenshotPane("04-import-panel");
    const job = await runJob(t, () => t.id("import-start").click());
    checkEqual(job.rows, 120, "rows imported");
    check(!sheetsBefore.includes(job.sheet), `the import made a new sheet (${job.sheet})`);
    const place = await t.table(job.table);
    checkEqual(place.sheet, job.sheet, "the table is on the sheet the result names");
    checkEqual(place.dataRows, 120, "data rows in the Excel table");
    checkEqual(place.columns, FINANCIALS_COLUMNS.length, "columns in the Excel table");
    if ((await t.activeSheet()) !== job.sheet) await t.openSheet(job.sheet);

    const header = await t.tableRow(place, 0, FINANCIALS_COLUMNS.length + 1);
    checkEqual(header.slice(0, -1).map((c) => c.value), FINANCIALS_COLUMNS, "header row");
    checkEqual(header[FINANCIALS_COLUMNS.length].type, "empty", "nothing right of the table");
    check(header.slice(0, -1).every((c) => c.type === "text"), "headers are text");

    // Data row 1 is the first row of the demo data (i = 0).
    const r1 = await financialsRow(t, place, 1);
    checkEqual([r1.project_id.type, r1.project_id.value], ["text", "PRJ-0001"], "project_id");
    checkEqual(r1.fiscal_year.type, "number", "fiscal_year type");
    checkEqual(r1.period_number.value, "1", "period_number");
    checkEqual(r1.budget.type, "number", "budget type");
    check(/^\d+(\.\d+)?$/.test(r1.budget.value), `budget is a plain number (${r1.budget.value})`);
    checkEqual(r1.period_start.type, "number", "a date is a date serial");
    check(/[dmy]/i.test(r1.period_start.format) && !/h/i.test(r1.period_start.format), `period_start has a date format (${r1.period_start.format})`);
    check(/^\d+$/.test(r1.period_start.value), `a calendar date has no time part (${r1.period_start.value})`);
    checkEqual(r1.last_updated.type, "number", "a timestamp is a date serial");
    check(/h/i.test(r1.last_updated.format), `last_updated has a date-time format (${r1.last_updated.format})`);
    // 2^53 + 1 cannot be a double: it is kept exact, as text.
    checkEqual([r1.external_ref.type, r1.external_ref.value], ["text", "9007199254740993"], "external_ref beyond 2^53");
    // Leading zeros survive: a code is text, not the number 420.
    checkEqual(r1.cost_center_code.type, "text", "cost_center_code type");
    check(/^00\d{3}$/.test(r1.cost_center_code.value), `cost_center_code keeps its zeros (${r1.cost_center_code.value})`);
    const r2 = await financialsRow(t, place, 2);
    // The writer's documented rule: an integer column holding values beyond 2^53 is text as a whole.
    checkEqual([r2.external_ref.type, r2.external_ref.value, r2.external_ref.format], ["text", "100001", "@"], "the same column's ordinary Int64");
    check(["boolean", "empty"].includes(r2.is_capex.type), `is_capex is a boolean or empty (${r2.is_capex.type})`);

    // Text that looks like a formula, a number, a boolean or a date stays exactly that text.
    // (Demo data: row i has tricky text in project_name when i % 4 == 1.)
    const tricky: Array<[number, string]> = [
      [25, "=SUM(A1:A9)"],
      [29, "+41 44 668 18 00"],
      [41, "00123"],
      [49, "1E5"],
      [53, "TRUE"],
      [57, "2026-03-01"],
    ];
    for (const [i, text] of tricky) {
      const c = await t.cell(place.address(i + 1, 1));
      checkEqual([c.type, c.value, c.formula], ["text", text, null], `project_name of demo row ${i} (${c.address})`);
    }
    await t.goTo("A1");
    await t.screenshot("05-imported-financials");
    check(!(await workbookText(t)).includes(ACME_TOKEN), "the token is not in the workbook after an import");
  },
};
