import { check, checkEqual, type E2E, type Journey, type TablePlace } from "../harness";
import { FINANCIALS_COLUMNS, openImport, runJob } from "./datasets";

type Cells = Array<Array<{ type: string; value: string }>>;

/** The data cells (header and rows) of a table. */
async function tableCells(t: E2E, place: TablePlace): Promise<Cells> {
  const all = await t.sheetValues(place.sheet);
  return all.slice(place.headerRow - 1, place.headerRow + place.dataRows).map((r) => r.slice(place.firstColumn, place.firstColumn + place.columns));
}

/** The complete financials table in the workbook whose header is the full column list. */
async function findFullFinancials(t: E2E, exclude: string[]): Promise<TablePlace> {
  const names = await t.page.evaluate(() => {
    type Wb = { tables(): Array<{ name: string }> };
    const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
    return wb?.tables().map((x) => x.name) ?? [];
  });
  for (const name of names) {
    if (exclude.includes(name)) continue;
    const place = await t.table(name);
    const cells = await tableCells(t, place);
    if (JSON.stringify((cells[0] ?? []).map((c) => c.value)) === JSON.stringify(FINANCIALS_COLUMNS) && place.dataRows === 120) return place;
  }
  throw new Error("no complete financials table in the workbook");
}

/** JSON, CSV and OData are three forms of the same export: the sheet gets identical cells from each. */
export const importFormats: Journey = {
  name: "import: CSV and OData forms give cell-for-cell the same table as JSON",
  async run(t) {
    const json = await findFullFinancials(t, []);
    const expected = await tableCells(t, json);
    for (const format of ["csv", "odata"] as const) {
      await openImport(t, "financials");
      await t.fill(t.id("query-paste"), "");
      await t.check(t.id(`import-format-${format}`));
      const sent = await t.id("query-preview-sent").innerText();
      check(format === "csv" ? sent.includes("financials.csv") : sent.includes("/odata/"), `${format}: what will be sent (${sent})`);
      const job = await runJob(t, () => t.id("import-start").click());
      checkEqual(job.rows, 120, `${format}: rows`);
      const got = await tableCells(t, await t.table(job.table));
      const diff: string[] = [];
      expected.forEach((row, r) =>
        row.forEach((cell, c) => {
          const other = got[r]?.[c];
          if (!other || other.type !== cell.type || other.value !== cell.value) {
            diff.push(`row ${r} ${FINANCIALS_COLUMNS[c]}: json ${JSON.stringify(cell)} vs ${format} ${JSON.stringify(other)}`);
          }
        }),
      );
      checkEqual(diff.slice(0, 5), [], `${format}: cells differing from the JSON import`);
    }
  },
};
