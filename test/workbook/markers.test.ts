/**
 * Issue #35: a refresh marker is untrusted input. A workbook can carry `ppm.refreshing.*` settings
 * the add-in never wrote (planted, damaged, or put back by a co-author's stale settings copy after the
 * refresh committed). Recovery runs when the add-in starts, before any consent, so a marker it does
 * not recognise as its bound table's must write nothing: it is reported once and removed.
 *
 * Before issue #35, the first case made recovery copy a rollback sheet over M1:M3 (outside every
 * table), erasing a note there, and a whole-sheet marker did not finish in 10 minutes.
 */
import { Workbook, createRequestContext, inspect, seed, serializeWorkbook, toWorkbookFile } from "../../src/emulator";
import { markerKey, recoverInterruptedRefreshes, REFRESH_MARKER_PREFIX, rollbackSheetName } from "../../src/workbook/recovery";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import type { Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, fixedNow, keyedSource, TOKEN } from "./helpers";

const T0 = Date.parse("2026-02-01T08:00:00Z");

/** A workbook with one bound table (A1 info line, header A2, 12 rows), refreshed once so its rollback sheet exists, and a note at M2. */
async function start(): Promise<{ wb: Workbook; sheet: string }> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(12));
  const { sheetName } = await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, "b1"), secrets: [TOKEN], now: fixedNow });
  const next = finRows(12).map((r, i) => (i === 3 ? [r[0], "changed", ...r.slice(2)] : r));
  const report = await refreshTable(createRequestContext(wb), "b1", keyedSource(next), { applyQuery: (x: Table) => ({ table: x }), now: () => new Date(T0) });
  expect(report.outcome).toBe("updated");
  // The rollback sheet is the add-in's and holds nothing between refreshes; an attacker fills it too.
  expect(wb.sheetByName(rollbackSheetName("b1"))?.visibility).toBe("VeryHidden");
  seed(wb, `'${rollbackSheetName("b1")}'!M1:M3`, [["planted"], ["planted"], ["planted"]]);
  seed(wb, `'${sheetName}'!M2`, [["my note"]]);
  return { wb, sheet: sheetName };
}

/** Every cell and table of the workbook's sheets (what recovery must not touch), and its sheets. */
function cellsOf(wb: Workbook): string {
  const f = toWorkbookFile(wb);
  return JSON.stringify({ sheets: f.sheets.filter((s) => s.name !== rollbackSheetName("b1")), tables: f.tables, names: f.definedNames });
}

const rect = (row: number, column: number, rowCount: number, columnCount: number) => [row, column, rowCount, columnCount];
const marker = (t: number[], r: number[], extra: Record<string, unknown> = {}) => JSON.stringify({ v: 1, o: "planted-owner", at: "2026-01-01T00:00:00Z", t, r, c: 1, ...extra });

const planted: Array<[string, string, unknown]> = [
  ["outside the table (M1:M3, the old attack)", markerKey("b1"), marker(rect(0, 12, 3, 1), rect(0, 12, 3, 1))],
  ["the whole sheet", markerKey("b1"), marker(rect(0, 0, 1_048_576, 16_384), rect(0, 0, 1_048_576, 16_384))],
  ["the table's columns down to the last row of the grid", markerKey("b1"), marker(rect(1, 0, 1_048_575, 8), rect(2, 0, 1_048_574, 8))],
  ["the table shifted one column", markerKey("b1"), marker(rect(1, 1, 13, 8), rect(2, 1, 12, 8))],
  ["a marker of no bound table", markerKey("b9"), marker(rect(0, 12, 3, 1), rect(0, 12, 3, 1))],
  ["garbage text", markerKey("b1"), "}{ not json"],
  ["a wrong shape", markerKey("b1"), JSON.stringify({ v: 1, o: 7, t: "A1", r: [1, 2] })],
  ["negative and fractional rectangles", markerKey("b1"), marker([-1, 0, 3, 1], [0.5, 0, 2, 1])],
  ["a 30,000-character key", `${REFRESH_MARKER_PREFIX}${"x".repeat(30_000)}`, marker(rect(0, 12, 3, 1), rect(0, 12, 3, 1))],
];

describe("issue #35: planted refresh markers write nothing and finish at once", () => {
  for (const [what, key, value] of planted) {
    it(`${what}: ignored and removed, reported once; no cell of any sheet changes; under a second`, async () => {
      const { wb, sheet } = await start();
      wb.setSetting(key, value);
      const before = cellsOf(wb);
      const syncs = wb.stats.syncCount;
      const written = wb.stats.cellsWritten;
      const started = Date.now();
      const first = await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 60 * 60_000) });
      const elapsed = Date.now() - started;
      // What matters first: no cell of any sheet written (before issue #35, M1:M3 was overwritten).
      expect(inspect(wb, `'${sheet}'!M2`).values).toEqual([["my note"]]);
      expect(cellsOf(wb)).toBe(before);
      expect(wb.stats.cellsWritten).toBe(written);
      expect(elapsed).toBeLessThan(1_000);
      expect(first).toHaveLength(1);
      expect(first[0].outcome).toBe("ignored");
      expect(first[0].message).toMatch(/ignored and removed.*Nothing was written to any table/);
      expect(wb.settings.has(key)).toBe(false);
      // Deterministic budget: a handful of requests whatever the rectangles say.
      expect(wb.stats.syncCount - syncs).toBeLessThanOrEqual(14);
      // Reported once: the next start finds nothing.
      expect(await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 2 * 60 * 60_000) })).toEqual([]);
    });
  }

  it("a marker of the bound table whose info line shows no unfinished refresh (a stale one, e.g. put back by a co-author's copy after the commit) is cleared without touching the table", async () => {
    const { wb } = await start();
    const t = wb.tables.find((x) => x.name === "ppm_financials")!;
    const whole = rect(t.rect.r0, t.rect.c0, t.rect.r1 - t.rect.r0 + 1, t.rect.c1 - t.rect.c0 + 1);
    wb.setSetting(markerKey("b1"), marker(whole, rect(t.rect.r0 + 1, t.rect.c0, t.rect.r1 - t.rect.r0, t.rect.c1 - t.rect.c0 + 1)));
    const before = serializeWorkbook(wb);
    const out = await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 60 * 60_000) });
    expect(out.map((r) => r.outcome)).toEqual(["cleared"]);
    // The file differs only by the marker gone and the add-in's rollback sheet emptied.
    const after = JSON.parse(serializeWorkbook(wb)) as ReturnType<typeof toWorkbookFile>;
    const was = JSON.parse(before) as ReturnType<typeof toWorkbookFile>;
    expect(after.settings.map(([k]) => k)).toEqual(was.settings.map(([k]) => k).filter((k) => k !== markerKey("b1")));
    expect(after.sheets.filter((s) => s.name !== rollbackSheetName("b1"))).toEqual(was.sheets.filter((s) => s.name !== rollbackSheetName("b1")));
    expect(after.sheets.find((s) => s.name === rollbackSheetName("b1"))?.cells).toEqual([]);
  });
});
