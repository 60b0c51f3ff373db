/**
 * Issue #34, item 5: a source without a key, a table the user sorted, a new export with the same rows:
 * the refresh used to match rows by position, so each note landed beside whichever record the export
 * put on its row. Now a row whose whole content is unchanged and unique is its record, wherever it
 * stands: its note follows it; the other rows are matched by position, and the summary says how many
 * rows were matched which way. Seen failing before #34 (notes beside other records).
 */
import { Workbook, createEmulatedContext, createRequestContext } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { countsText, summarize } from "../../src/addin/refreshSummary";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, TOKEN } from "./helpers";

const noQuery = <T>(t: T) => ({ table: t });
let generation = 0;
/** A source whose $metadata declares no key (no `key` in the answer). */
function keyless(rows: CellValue[][]): RefreshSource {
  const gen = new Date(Date.UTC(2026, 1, 1, 7, 0, ++generation)).toISOString();
  return { fetch: async () => ({ status: "updated", table: finTable(rows, { generatedAt: gen, etag: `"${gen}"` }), validators: { etag: `"${gen}"`, generatedAt: gen } }) };
}

/** Every row of the table as the sheet shows it: [project_id, name, note]. */
function rowsWithNotes(wb: Workbook): unknown[][] {
  const t = wb.tables.find((x) => x.name === "ppm_financials")!;
  return wb.readValues(wb.requireSheetId(t.sheetId), wb.bodyRect(t)).map((r) => [r[0], r[1], r[8]]);
}

async function sortedWithNotes(rows: CellValue[][]): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(rows);
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN] });
  const ctx = createEmulatedContext(wb);
  const lo = ctx.workbook.tables.getItem("ppm_financials");
  lo.columns.add(undefined, undefined, "note");
  await ctx.sync();
  const body = lo.getDataBodyRange();
  body.load("values");
  await ctx.sync();
  body.getColumn(8).values = body.values.map((r) => [`note for ${String(r[0])}`]);
  // The user sorts by name, descending: every record on another row than the export puts it.
  lo.sort.apply([{ key: 1, ascending: false }]);
  await ctx.sync();
  return wb;
}

describe("a keyless table the user sorted", () => {
  it("notes stay with their records when the export's rows are unchanged; the rest by position, and the summary says so", async () => {
    const base = finRows(30);
    const wb = await sortedWithNotes(base);
    const before = rowsWithNotes(wb);
    expect(before[0][0]).not.toBe("1");
    for (const r of before) expect(r[2]).toBe(`note for ${String(r[0])}`);
    // A new export: the same rows in the export's order.
    const report = await refreshTable(createRequestContext(wb), "b1", keyless(base), { applyQuery: noQuery });
    expect(report.outcome).toBe("updated");
    const after = rowsWithNotes(wb);
    expect(after).toHaveLength(30);
    for (const r of after) expect([r[0], r[2]]).toEqual([r[0], `note for ${String(r[0])}`]);
    // The sort is applied again: the rows stand as the user sorted them.
    expect(after).toEqual(before);
    expect(report.delta).toMatchObject({ matchedBy: "position", byContent: 30, byPosition: 0 });
    const text = countsText(summarize([{ ...report, binding: { source: { kind: "dataset", key: "financials", format: "json" }, environment: "http://127.0.0.1:4100", companyId: "acme" } }] as never).items[0].counts!);
    expect(text).toMatch(/30 rows matched by identical content, 0 by position/);
  });

  it("rows alike in every cell are paired in order: each keeps a note, beside a row showing its record's content", async () => {
    const base = finRows(30);
    base[20] = [...base[10]];
    const wb = await sortedWithNotes(base);
    const before = rowsWithNotes(wb);
    expect(before.filter((r) => r[0] === "11")).toEqual([["11", "Project 10", "note for 11"], ["11", "Project 10", "note for 11"]]);
    const report = await refreshTable(createRequestContext(wb), "b1", keyless(base), { applyQuery: noQuery });
    expect(report.outcome).toBe("updated");
    const after = rowsWithNotes(wb);
    for (const r of after) expect([r[0], r[2]]).toEqual([r[0], `note for ${String(r[0])}`]);
    expect(after).toEqual(before);
    expect(report.delta).toMatchObject({ byContent: 30, byPosition: 0 });
  });

  it("a changed record is matched by position: never beside another record's note when its own row stood elsewhere (its note goes with the old row)", async () => {
    const base = finRows(30);
    const wb = await sortedWithNotes(base);
    const next = base.map((r) => (r[0] === 7 ? [r[0], "Renamed 7", ...r.slice(2)] : r));
    const report = await refreshTable(createRequestContext(wb), "b1", keyless(next), { applyQuery: noQuery });
    expect(report.outcome).toBe("updated");
    expect(report.delta).toMatchObject({ byContent: 29 });
    for (const r of rowsWithNotes(wb)) {
      // Every note is its own record's, or empty; none stands beside another record.
      if (r[2] !== "") expect(r[2]).toBe(`note for ${String(r[0])}`);
      else expect(r[0]).toBe("7");
    }
  });
});
