import { RESOURCE_DEDUP_KEY } from "../../../src/contract/contract";
import { check, checkEqual, type E2E, type Journey } from "../harness";
import { ACME_TOKEN, openTab } from "./connections";
import { runJob } from "./datasets";

/** Rows of a snapshot endpoint, fetched directly from the service: the oracle the sheet is compared with. */
async function serviceRows(t: E2E, path: string): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${t.serviceUrl}${path}`, { headers: { "Company-Api-Token": ACME_TOKEN } });
  if (!res.ok) throw new Error(`oracle ${path}: HTTP ${res.status}`);
  const body = (await res.json()) as unknown;
  const rows = Array.isArray(body) ? body : ((body as { value?: unknown[] }).value ?? []);
  return rows as Array<Record<string, unknown>>;
}

function dedupKey(row: Record<string, unknown>): string {
  return JSON.stringify(RESOURCE_DEDUP_KEY.map((k) => row[k] ?? null));
}

async function importSnapshot(t: E2E, endpoint: string): Promise<{ rows: number; sheet: string; table: string }> {
  await openTab(t, "snapshots");
  const row = t.tp.locator(`[data-testid=snapshot-row][data-endpoint="${endpoint}"]`);
  await row.waitFor();
  const job = await runJob(t, () => row.getByTestId("snapshot-import").click());
  if ((await t.activeSheet()) !== job.sheet) await t.openSheet(job.sheet);
  return job;
}

/** An Excel table as header → cell, read from the grid's workbook. */
async function sheetTable(t: E2E, tableName: string): Promise<{ header: string[]; rows: Array<Record<string, { type: string; value: string }>> }> {
  const place = await t.table(tableName);
  const cells = await t.sheetValues(place.sheet);
  const slice = (r: number) => (cells[r] ?? []).slice(place.firstColumn, place.firstColumn + place.columns);
  const header = slice(place.headerRow - 1).map((c) => c.value);
  const rows: Array<Record<string, { type: string; value: string }>> = [];
  for (let i = 1; i <= place.dataRows; i++) {
    const r = slice(place.headerRow - 1 + i);
    rows.push(Object.fromEntries(header.map((h, k) => [h, r[k] ?? { type: "empty", value: "" }])));
  }
  return { header, rows };
}

/** Snapshot lists import like datasets; combined resources are de-duplicated as the spec says. */
export const importSnapshots: Journey = {
  name: "snapshots: projects list and combined resources (projects + proposals, de-duplicated)",
  async run(t) {
    const projects = await serviceRows(t, "/api/snapshot/projects");
    const job = await importSnapshot(t, "projects");
    checkEqual(job.rows, projects.length, "project rows imported");
    const sheet = await sheetTable(t, job.table);
    checkEqual(sheet.rows.length, projects.length, "project rows in the sheet");
    check(sheet.header.includes("project_token"), `projects have project_token (${sheet.header.join(", ")})`);
    // Custom fields arrive as columns named by display name; a code with leading zeros stays text.
    check(sheet.header.includes("Cost Center Code"), "custom field column 'Cost Center Code'");
    const codes = sheet.rows.map((r) => r["Cost Center Code"]).filter((c) => c && c.type !== "empty");
    check(codes.length > 0 && codes.every((c) => c.type === "text"), "Cost Center Code cells are text");
    check(codes.some((c) => /^0\d+$/.test(c.value)), "a code keeps its leading zeros");
    // start_date: every value is a calendar date, so the column is real dates, like dataset dates (issue #25).
    const place = await t.table(job.table);
    const startCol = sheet.header.indexOf("start_date");
    check(startCol >= 0, "projects have start_date");
    const first = await t.cell(place.address(1, startCol));
    checkEqual([first.type, first.format, first.text], ["number", "yyyy-mm-dd", String(projects[0].start_date)], "start_date is a real date (a serial with a date format), shown as the service sent it");
    check(sheet.rows.every((r) => r.start_date.type === "number"), "every start_date is a date serial");
    await t.screenshot("14-snapshot-projects");

    const projectRes = await serviceRows(t, "/api/snapshot/projects/resources");
    const proposalRes = await serviceRows(t, "/api/snapshot/proposals/resources");
    const seen = new Set(projectRes.filter((r) => r.work_type === "non_project_work").map(dedupKey));
    const duplicates = proposalRes.filter((r) => r.work_type === "non_project_work" && seen.has(dedupKey(r))).length;
    check(duplicates > 0, "the demo data has overlapping non-project time (otherwise this checks nothing)");
    const expected = projectRes.length + proposalRes.length - duplicates;

    // The grid shows a new sheet from column A, whatever the previous sheet's scroll (issue #37, item 17).
    const scroller = t.page.getByTestId("preview-grid-scroll");
    const scrolled = await scroller.evaluate((el) => {
      el.scrollLeft = 900;
      return el.scrollLeft;
    });
    check(scrolled > 0, `the projects sheet scrolled sideways (${scrolled})`);
    const combined = await importSnapshot(t, "combinedResources");
    await t.settled();
    checkEqual(await scroller.evaluate((el) => el.scrollLeft), 0, "the new sheet's grid starts at column A");
    await t.screenshot("41-new-sheet-from-a1");
    checkEqual(combined.rows, expected, "combined resource rows (projects + proposals − duplicates)");
    const table = await sheetTable(t, combined.table);
    checkEqual(table.rows.length, expected, "combined rows in the sheet");
    for (const k of [...RESOURCE_DEDUP_KEY, "snapshot_source", "estimate"]) check(table.header.includes(k), `column ${k}`);
    const sources = new Set(table.rows.map((r) => r.snapshot_source.value));
    checkEqual([...sources].sort(), ["projects", "proposals"], "sources in the combined sheet");
    const npt = table.rows.filter((r) => r.work_type.value === "non_project_work");
    const keys = new Set(npt.map((r) => JSON.stringify(RESOURCE_DEDUP_KEY.map((k) => r[k].value))));
    checkEqual(keys.size, npt.length, "distinct de-duplication keys among non-project rows");
    check(table.rows.every((r) => r.estimate.type === "number" || r.estimate.type === "empty"), "estimates are numbers");
    await t.screenshot("15-snapshot-combined-resources");
  },
};
