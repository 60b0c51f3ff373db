/** In-place refresh against the workbook emulator. */
import { Workbook, createRequestContext, createEmulatedContext, inspect, seed, snapshot, toWorkbookFile, serializeWorkbook } from "../../src/emulator";
import { refreshTable, refreshAllTables } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { readRefreshLog } from "../../src/workbook/refreshLog";
import type { RefreshSource, SourceResult } from "../../src/refresh/source";
import type { Table } from "../../src/table/model";
import { finRows, finTable, imported, TOKEN, FIN_COLUMNS } from "./helpers";

const noQuery = (t: Table) => ({ table: t });
const later = () => new Date("2026-02-01T08:00:00Z");
const GEN2 = "2026-02-01T07:00:00Z";

function sourceOf(result: () => Promise<SourceResult>): RefreshSource & { calls: number } {
  const s = { calls: 0, fetch: async () => (s.calls++, result()) };
  return s;
}
const updated = (rows: Table["rows"], columns = FIN_COLUMNS): RefreshSource & { calls: number } =>
  sourceOf(async () => ({ status: "updated", table: finTable(rows, { generatedAt: GEN2, etag: '"e2"' }, columns), validators: { etag: '"e2"', generatedAt: GEN2 } }));

/** Everything of the workbook except settings (where bindings and their failure records live). */
function sheetsAndTables(wb: Workbook): string {
  const f = toWorkbookFile(wb);
  return JSON.stringify({ sheets: f.sheets, tables: f.tables });
}

/**
 * A failed refresh changes one cell: the info line gets the stale mark (issue #15). Checks that, then
 * puts the old line back so the caller can compare everything else byte for byte.
 */
function expectStaleMark(wb: Workbook, infoBefore: unknown): void {
  const now = inspect(wb, "'financials (json)'!A1").values[0][0];
  expect(String(now)).toMatch(/^PPM · ⚠ Not refreshed: .+, \d{4}-\d\d-\d\d \d\d:\d\d UTC · dataset financials \(json\) · generated /);
  seed(wb, "'financials (json)'!A1", [[infoBefore]]);
}

async function binding(wb: Workbook) {
  return (await readBindings(createRequestContext(wb))).bindings[0];
}

/** User work on the imported table: a calculated column, a notes column, a sort, and a cell to the right. */
async function addUserWork(wb: Workbook): Promise<void> {
  const context = createEmulatedContext(wb);
  const t = context.workbook.tables.getItem("ppm_financials");
  const calc = t.columns.add(undefined, undefined, "double");
  calc.getDataBodyRange().formulas = [["=[@amount]*2"]];
  const notes = t.columns.add(undefined, undefined, "notes");
  notes.getDataBodyRange().getCell(0, 0).values = [["my note"]];
  t.sort.apply([{ key: 0, ascending: false }]);
  await context.sync();
  seed(wb, "'financials (json)'!L3", [["outside"]]);
  seed(wb, "'financials (json)'!L5", [["=SUM(ppm_financials[amount])"]]);
}

describe("unchanged refresh", () => {
  it("sends one request, writes zero cells, and records the check", async () => {
    const { wb } = await imported(finRows(5));
    const before = sheetsAndTables(wb);
    const cells = wb.stats.cellsWritten;
    const src = sourceOf(async () => ({ status: "unchanged", validators: { etag: '"e1"' } }));
    const report = await refreshTable(createRequestContext(wb), "b1", src, { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("unchanged");
    expect(src.calls).toBe(1);
    expect(wb.stats.cellsWritten).toBe(cells);
    expect(sheetsAndTables(wb)).toBe(before);
    expect((await binding(wb)).lastCheckedAt).toBe(later().toISOString());
  });

  it("treats an unchanged generated_at as unchanged even on a 200", async () => {
    const { wb } = await imported(finRows(5));
    const cells = wb.stats.cellsWritten;
    const src = sourceOf(async () => ({ status: "updated", table: finTable(finRows(9)), validators: { generatedAt: "2026-01-01T00:00:00Z" } }));
    expect((await refreshTable(createRequestContext(wb), "b1", src, { applyQuery: noQuery, now: later })).outcome).toBe("unchanged");
    expect(wb.stats.cellsWritten).toBe(cells);
  });
});

describe("refresh with new data", () => {
  it("grows the table in place and keeps the user's columns, formulas, sort and outside cells", async () => {
    const { wb } = await imported(finRows(4));
    const tableId = snapshot(wb).sheets[1].tables[0].id;
    await addUserWork(wb);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(7, 100)), { applyQuery: noQuery, now: later, secrets: [TOKEN] });
    expect(report).toMatchObject({ outcome: "updated", rowCount: 7, warnings: [] });
    const t = snapshot(wb).sheets[1].tables[0];
    expect([t.id, t.name, t.address]).toEqual([tableId, "ppm_financials", "A2:J9"]);
    expect(t.columns.slice(-2)).toEqual(["double", "notes"]);
    // The calculated column reaches every row, including the new ones, and computes from the new data.
    const calc = inspect(wb, "'financials (json)'!I3:I9");
    expect(calc.formulas.every((r) => r[0] === "=[@amount]*2")).toBe(true);
    const amounts = inspect(wb, "'financials (json)'!C3:C9").values.map((r) => r[0] as number);
    expect(calc.values.map((r) => r[0])).toEqual(amounts.map((a) => a * 2));
    // The sort (project_id descending) was reapplied to the new rows.
    expect(inspect(wb, "'financials (json)'!A3:A9").values.map((r) => r[0])).toEqual(["7", "6", "5", "4", "3", "2", "1"]);
    expect(t.sort?.fields).toEqual([{ key: 0, ascending: false }]);
    expect(inspect(wb, "'financials (json)'!L3").values).toEqual([["outside"]]);
    // A formula outside the table that references a table column follows the resized table.
    expect(inspect(wb, "'financials (json)'!L5").values[0][0]).toBeCloseTo(amounts.reduce((a, b) => a + b, 0), 6);
    expect(inspect(wb, "'financials (json)'!J3:J9").values.flat().filter((v) => v !== "")).toEqual(["my note"]);
    expect(inspect(wb, "'financials (json)'!A1").values[0][0]).toMatch(/generated 2026-02-01 07:00 UTC · schema 3 · refreshed 2026-02-01 08:00 UTC · 7 rows/);
    expect(await binding(wb)).toMatchObject({ rowCount: 7, validators: { etag: '"e2"', generatedAt: GEN2 }, lastRefreshAt: later().toISOString(), lastFailure: null });
  });

  it("keeps the table's filter and applies it to the new rows", async () => {
    const { wb } = await imported(finRows(4));
    const context = createEmulatedContext(wb);
    const t = context.workbook.tables.getItem("ppm_financials");
    t.autoFilter.apply(t.getRange(), 6, { filterOn: "Values", values: ["TRUE"] });
    await context.sync();
    await refreshTable(createRequestContext(wb), "b1", updated(finRows(9, 3)), { applyQuery: noQuery, now: later });
    const sheet = snapshot(wb).sheets[1];
    expect(sheet.tables[0].filters).toEqual([{ column: 6, criteria: { filterOn: "Values", values: ["TRUE"] } }]);
    const active = inspect(wb, "'financials (json)'!G3:G11").values.map((r) => r[0]);
    const hidden = active.map((v, i) => (v === true ? null : i + 2)).filter((x) => x !== null);
    expect(sheet.hiddenRows).toEqual(hidden);
    expect(hidden.length).toBeGreaterThan(0);
  });

  it("a failed refresh marks the info line stale; the next successful one removes the mark (#15)", async () => {
    const { wb } = await imported(finRows(3));
    const fail = sourceOf(async () => { throw Object.assign(new Error("Service unavailable."), { code: "http_503", status: 503 }); });
    await refreshTable(createRequestContext(wb), "b1", fail, { applyQuery: noQuery, now: later });
    expect(String(inspect(wb, "'financials (json)'!A1").values[0][0])).toMatch(/^PPM · ⚠ Not refreshed: Service unavailable\. \(http_503\), 2026-02-01 08:00 UTC · .* generated 2026-01-01 00:00 UTC .* refreshed 2026-01-01 00:00 UTC/);
    const unchanged = sourceOf(async () => ({ status: "unchanged", validators: { etag: '"e1"', generatedAt: "2026-01-01T00:00:00Z" } }));
    await refreshTable(createRequestContext(wb), "b1", unchanged, { applyQuery: noQuery, now: later });
    expect(String(inspect(wb, "'financials (json)'!A1").values[0][0])).toMatch(/^PPM · dataset financials \(json\) · generated 2026-01-01 00:00 UTC/);
    await refreshTable(createRequestContext(wb), "b1", fail, { applyQuery: noQuery, now: later });
    await refreshTable(createRequestContext(wb), "b1", updated(finRows(4)), { applyQuery: noQuery, now: later });
    expect(String(inspect(wb, "'financials (json)'!A1").values[0][0])).toMatch(/^PPM · dataset financials \(json\) · generated 2026-02-01 07:00 UTC .* refreshed 2026-02-01 08:00 UTC · 4 rows/);
    const log = await readRefreshLog(createRequestContext(wb));
    expect(log.map((e) => e.outcome)).toEqual(["failed", "unchanged", "failed", "updated"]);
    expect(log[3]).toMatchObject({ tableName: "ppm_financials", added: 1, removed: 0 });
    expect(JSON.stringify(log)).not.toContain(TOKEN);
  });

  it("refuses when a bound column header was renamed, before writing", async () => {
    const { wb } = await imported(finRows(3));
    seed(wb, "'financials (json)'!B2", [["renamed"]]);
    const before = sheetsAndTables(wb);
    const info = inspect(wb, "'financials (json)'!A1").values[0][0];
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("table_changed");
    expectStaleMark(wb, info);
    expect(sheetsAndTables(wb)).toBe(before);
  });

  it("shrinks the table in place and clears the rows it leaves", async () => {
    const { wb } = await imported(finRows(6));
    await addUserWork(wb);
    await refreshTable(createRequestContext(wb), "b1", updated(finRows(2, 50)), { applyQuery: noQuery, now: later });
    expect(snapshot(wb).sheets[1].tables[0].address).toBe("A2:J4");
    expect(inspect(wb, "'financials (json)'!A5:J8").values.flat().every((v) => v === "")).toBe(true);
    expect(inspect(wb, "'financials (json)'!I3:I4").formulas.map((r) => r[0])).toEqual(["=[@amount]*2", "=[@amount]*2"]);
    expect(inspect(wb, "'financials (json)'!L3").values).toEqual([["outside"]]);
  });

  it("an empty result leaves a table with one blank row and records zero rows", async () => {
    const { wb } = await imported(finRows(3));
    await refreshTable(createRequestContext(wb), "b1", updated([]), { applyQuery: noQuery, now: later });
    expect(snapshot(wb).sheets[1].tables[0].address).toBe("A2:H3");
    expect(inspect(wb, "'financials (json)'!A3:H4").values.flat().every((v) => v === "")).toBe(true);
    expect((await binding(wb)).rowCount).toBe(0);
  });

  it("re-applies the stored local query", async () => {
    const { wb } = await imported(finRows(3), {});
    const context = createRequestContext(wb);
    const b = await binding(wb);
    context.workbook.settings.add("ppm.binding.b1", JSON.stringify({ ...b, query: { top: 2 } }));
    await context.sync();
    await refreshTable(createRequestContext(wb), "b1", updated(finRows(10, 7)), { applyQuery: (t, q) => ({ table: { ...t, rows: t.rows.slice(0, q.top) } }), now: later });
    expect(snapshot(wb).sheets[1].tables[0].address).toBe("A2:H4");
  });
});

describe("a failed refresh leaves the previous data exactly as it was", () => {
  const failing: [string, () => RefreshSource, string][] = [
    ["401", () => sourceOf(async () => { throw Object.assign(new Error("Credentials missing or wrong."), { code: "unauthorized", status: 401 }); }), "unauthorized"],
    ["404 not_generated", () => sourceOf(async () => { throw Object.assign(new Error("No successful export yet."), { code: "not_generated", status: 404 }); }), "not_generated"],
    ["network", () => sourceOf(async () => { throw new TypeError("fetch failed"); }), "error"],
    ["schema mismatch", () => updated([["x"]], [{ name: "other", type: "text" }]), "schema_mismatch"],
    ["invalid value", () => updated([[1, "a", 1, 1, "2024-02-30", null, null, "1"]]), "bad_value"],
  ];
  for (const [name, make, code] of failing) {
    it(`${name}: sheet byte-identical but for the stale mark, failure recorded`, async () => {
      const { wb } = await imported(finRows(4));
      await addUserWork(wb);
      const before = sheetsAndTables(wb);
      const info = inspect(wb, "'financials (json)'!A1").values[0][0];
      const report = await refreshTable(createRequestContext(wb), "b1", make(), { applyQuery: noQuery, now: later });
      expect(report.outcome).toBe("failed");
      expectStaleMark(wb, info);
      expect(sheetsAndTables(wb)).toBe(before);
      const b = await binding(wb);
      expect(b.lastFailure).toMatchObject({ at: later().toISOString(), code });
      expect(b.rowCount).toBe(4);
      expect(b.validators.generatedAt).toBe("2026-01-01T00:00:00Z");
    });
  }

  it("cancel before writing: byte-identical, recorded as cancelled", async () => {
    const { wb } = await imported(finRows(4));
    const before = sheetsAndTables(wb);
    const ac = new AbortController();
    const src = sourceOf(async () => {
      ac.abort();
      return { status: "updated", table: finTable(finRows(8), { generatedAt: GEN2 }), validators: { generatedAt: GEN2 } };
    });
    const report = await refreshTable(createRequestContext(wb), "b1", src, { applyQuery: noQuery, now: later, signal: ac.signal });
    expect(report.failure?.code).toBe("cancelled");
    expect(sheetsAndTables(wb)).toBe(before);
  });

  it("refuses to grow into occupied cells, before writing", async () => {
    const { wb } = await imported(finRows(4));
    seed(wb, "'financials (json)'!C9", [["below"]]);
    const before = sheetsAndTables(wb);
    const info = inspect(wb, "'financials (json)'!A1").values[0][0];
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(10)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("occupied");
    expect(report.failure?.message).toMatch(/C9 is not empty/);
    expectStaleMark(wb, info);
    expect(sheetsAndTables(wb)).toBe(before);
  });

  it("refuses a table that would grow past the sheet's last row", async () => {
    // Imported near the bottom of the sheet, so growing by a few rows is already too much.
    const { wb } = await imported(finRows(2), { target: { sheetName: "Sheet1", anchor: "A1048570" } });
    const before = sheetsAndTables(wb);
    const info = inspect(wb, "Sheet1!A1048570").values[0][0];
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(10)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("too_many_rows");
    expect(report.failure?.message).toMatch(/local filter/);
    expect(String(inspect(wb, "Sheet1!A1048570").values[0][0])).toMatch(/^PPM · ⚠ Not refreshed: .*too_many_rows/);
    seed(wb, "Sheet1!A1048570", [[info]]);
    expect(sheetsAndTables(wb)).toBe(before);
  });

  it("records a missing table", async () => {
    const { wb } = await imported(finRows(2));
    const context = createEmulatedContext(wb);
    context.workbook.tables.getItem("ppm_financials").convertToRange();
    await context.sync();
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(3)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("table_missing");
  });

  it("cancel mid-write restores the previous rows, size, user columns and says so", async () => {
    const { wb } = await imported(finRows(300));
    await addUserWork(wb);
    const before = toWorkbookFile(wb);
    const ac = new AbortController();
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(900, 5)), {
      applyQuery: noQuery,
      now: later,
      signal: ac.signal,
      targetRequestBytes: 20_000,
      onProgress: (p) => {
        if ((p.rowsWritten ?? 0) > 100) ac.abort();
      },
    });
    expect(report.failure?.code).toBe("cancelled");
    expect(report.failure?.message).toMatch(/previous data was restored/);
    const after = toWorkbookFile(wb);
    expect(after.tables).toEqual(before.tables);
    // Every cell is back, except the info line, which now says what happened.
    const cells = (f: typeof before) => f.sheets[1].cells.filter((c) => !(c.r === 0 && c.c === 0));
    expect(cells(after)).toEqual(cells(before));
    expect(inspect(wb, "'financials (json)'!A1").values[0][0]).toMatch(/^PPM · ⚠ refresh of dataset financials \(json\) failed 2026-02-01 08:00 UTC \(cancelled\).*previous data was restored/);
    expect((await binding(wb)).lastFailure?.code).toBe("cancelled");
    expect(wb.calculationMode).toBe("Automatic");
  });

  it("a payload failure mid-write restores too", async () => {
    const { wb } = await imported(finRows(50), {}, { payloadLimitBytes: 25_000 });
    const before = toWorkbookFile(wb);
    const rows = finRows(60, 1);
    rows[55][1] = "y".repeat(30_000); // within a cell's 32,767 characters, over the request limit
    const report = await refreshTable(createRequestContext(wb), "b1", updated(rows), { applyQuery: noQuery, now: later, targetRequestBytes: 10_000 });
    expect(report.failure?.code).toBe("payload_too_large");
    const after = toWorkbookFile(wb);
    expect(after.tables).toEqual(before.tables);
    const cells = (f: typeof before) => f.sheets[1].cells.filter((c) => !(c.r === 0 && c.c === 0));
    expect(cells(after)).toEqual(cells(before));
  });
});

describe("refresh all", () => {
  it("refreshes every bound table and never stores the token", async () => {
    const { wb } = await imported(finRows(2));
    const report = await refreshAllTables(createRequestContext(wb), () => updated(finRows(3, 1)), { applyQuery: noQuery, now: later, secrets: [TOKEN] });
    expect(report.reports.map((r) => [r.tableName, r.outcome, r.rowCount])).toEqual([["ppm_financials", "updated", 3]]);
    expect(serializeWorkbook(wb)).not.toContain(TOKEN);
  });
});
