import { check, checkEqual, type E2E, type GridCell, type Journey } from "../harness";
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
  if (result.state !== expect) throw new Error(`job ended "${result.state}" instead of "${expect}": ${result.text}`);
  return { rows: Number(result.rows), table: result.table, sheet: result.sheet, text: result.text };
}

/** Opens the import panel of a dataset from the list. */
export async function openImport(t: E2E, key: string): Promise<void> {
  await openTab(t, "datasets");
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
    checkEqual(await t.id("datasets-company").innerText(), "acme", "company shown above the list");

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
    check(await risks.getByTestId("dataset-import").isDisabled(), "risks cannot be imported");
    check(
      (await risks.getByTestId("dataset-state-note").innerText()).includes("no export yet"),
      "risks says there is no export yet",
    );

    const milestones = datasetRow(t, "milestones");
    checkEqual(await milestones.getAttribute("data-state"), "empty", "milestones state");
    checkEqual((await milestones.getByTestId("dataset-rows").innerText()).trim(), "0 rows", "milestones row text");
    check(await milestones.getByTestId("dataset-import").isEnabled(), "an empty dataset is importable");
    await t.screenshotPane("03-datasets");

    await t.id("datasets-search").fill("FIN");
    await t.until("search to leave only financials", async () => (await t.id("dataset-row").count()) === 1);
    checkEqual(await t.id("dataset-row").getAttribute("data-key"), "financials", "search result");
    await t.id("datasets-search").fill("no-such-dataset");
    await t.id("datasets-empty").waitFor();
    await t.id("datasets-search").fill("");
    await t.until("all datasets listed again", async () => (await t.id("dataset-row").count()) === 6);
  },
};

/** Reads a data row of the financials table as a map column → cell. */
async function financialsRow(t: E2E, sheetRow: number): Promise<Record<string, GridCell>> {
  const cells = await t.row(sheetRow, FINANCIALS_COLUMNS.length);
  return Object.fromEntries(FINANCIALS_COLUMNS.map((c, i) => [c, cells[i]]));
}

/** The import writes a typed Excel table: numbers are numbers, dates are dates, text stays text. */
export const importFinancials: Journey = {
  name: "import: financials (JSON) into a new sheet, values, types and formats right in the grid",
  async run(t) {
    const sheetsBefore = await t.sheetNames();
    await openImport(t, "financials");
    check(await t.id("import-dest-new-sheet").isChecked(), "new sheet is the default destination");
    check(await t.id("import-format-json").isChecked(), "JSON is the default format");
    const sent = await t.id("query-preview-sent").innerText();
    check(sent.includes("/api/bi/v1/financials") && !sent.includes("$") && !sent.includes(ACME_TOKEN), `what will be sent: ${sent}`);
    await t.screenshotPane("04-import-panel");
    const job = await runJob(t, () => t.id("import-start").click());
    checkEqual(job.rows, 120, "rows imported");
    check(!sheetsBefore.includes(job.sheet), `the import made a new sheet (${job.sheet})`);
    if ((await t.activeSheet()) !== job.sheet) await t.openSheet(job.sheet);

    const header = await t.row(1, FINANCIALS_COLUMNS.length + 1);
    checkEqual(header.slice(0, -1).map((c) => c.value), FINANCIALS_COLUMNS, "header row");
    checkEqual(header[FINANCIALS_COLUMNS.length].type, "empty", "nothing right of the table");
    check(header.every((c, i) => i === FINANCIALS_COLUMNS.length || c.type === "text"), "headers are text");

    // Row 2 is the first data row (i = 0 in the demo data).
    const r2 = await financialsRow(t, 2);
    checkEqual([r2.project_id.type, r2.project_id.value], ["text", "PRJ-0001"], "project_id");
    checkEqual(r2.fiscal_year.type, "number", "fiscal_year type");
    checkEqual(r2.period_number.value, "1", "period_number");
    checkEqual(r2.budget.type, "number", "budget type");
    check(/^\d+(\.\d+)?$/.test(r2.budget.value), `budget is a plain number (${r2.budget.value})`);
    checkEqual(r2.period_start.type, "number", "a date is a date serial");
    check(/[dmy]/i.test(r2.period_start.format) && !/h/i.test(r2.period_start.format), `period_start has a date format (${r2.period_start.format})`);
    check(/^\d+$/.test(r2.period_start.value), `a calendar date has no time part (${r2.period_start.value})`);
    checkEqual(r2.last_updated.type, "number", "a timestamp is a date serial");
    check(/h/i.test(r2.last_updated.format), `last_updated has a date-time format (${r2.last_updated.format})`);
    // 2^53 + 1 cannot be a double: it is kept exact, as text.
    checkEqual([r2.external_ref.type, r2.external_ref.value], ["text", "9007199254740993"], "external_ref beyond 2^53");
    const r3 = await financialsRow(t, 3);
    checkEqual([r3.external_ref.type, r3.external_ref.value], ["number", "100001"], "an ordinary Int64");
    checkEqual(["boolean", "empty"].includes(r3.is_capex.type), true, `is_capex is a boolean or empty (${r3.is_capex.type})`);
    // Leading zeros survive: a code is text, not the number 420.
    const code = (await financialsRow(t, 2)).cost_center_code;
    checkEqual(code.type, "text", "cost_center_code type");
    check(/^00\d{3}$/.test(code.value), `cost_center_code keeps its zeros (${code.value})`);

    // Text that looks like a formula, a number, a boolean or a date stays exactly that text.
    const tricky: Array<[number, string]> = [
      [27, "=SUM(A1:A9)"],
      [31, "+41 44 668 18 00"],
      [43, "00123"],
      [51, "1E5"],
      [55, "TRUE"],
      [59, "2026-03-01"],
    ];
    for (const [row, text] of tricky) {
      const c = await t.cell(`B${row}`);
      checkEqual([c.type, c.value, c.formula], ["text", text, null], `project_name B${row}`);
    }
    await t.goTo("A1");
    await t.screenshot("05-imported-financials");
    check(!(await workbookText(t)).includes(ACME_TOKEN), "the token is not in the workbook after an import");
  },
};
