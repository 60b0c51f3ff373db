/**
 * Issue 10: documented behaviours of real Excel that break add-ins, each reproduced by the workbook
 * emulator (sources in src/emulator/README.md, "Excel as it really behaves") and each survived by the
 * add-in. One describe per behaviour, B1 to B18, in the order. Where the behaviour cannot be
 * reproduced in Node (B17 the function runtime's window, B18 the browser's network block), the
 * add-in's side of the contract is tested.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { existsSync } from "node:fs";
import * as ts from "typescript";
import { EmulatedExcelError, Workbook, createExcelNamespace, createEmulatedContext, createRequestContext, inspect, seed, snapshot, toWorkbookFile } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable, refreshAllTables } from "../../src/workbook/refresh";
import { lockTiming } from "../../src/workbook/lock";
import { readBaseline, saveBaseline } from "../../src/workbook/writeback";
import { runExcel, createEngine } from "../../src/addin/engine";
import { createRefreshAllCommand, reportSummary, type DialogUi } from "../../src/commands/refreshAll";
import { ConnectionStore } from "../../src/addin/connectionStore";
import { PpmClient } from "../../src/service/client";
import type { RefreshSource } from "../../src/refresh/source";
import type { Baseline } from "../../src/records/baseline";
import type { CellValue, Column, Table } from "../../src/table/model";
import { MemoryStorage } from "../helpers/memoryStorage";
import { bindingDraft, finRows, finTable, fixedNow, imported, rejection, TOKEN } from "./helpers";
import type { PpmError } from "../../src/service/errors";

const noQuery = (t: Table) => ({ table: t });
const later = () => new Date("2026-02-01T08:00:00Z");
const GEN2 = "2026-02-01T07:00:00Z";
const updated = (rows: CellValue[][], columns?: Column[]): RefreshSource => ({
  fetch: async () => ({ status: "updated", table: finTable(rows, { generatedAt: GEN2, etag: '"e2"' }, columns), validators: { etag: '"e2"', generatedAt: GEN2 } }),
});
const g = globalThis as unknown as { Excel?: unknown };
/** Microsoft's own `Excel` global (tests install a namespace bound to their workbook and put this back). */
const libraryExcel = g.Excel;

function importOptions(table: Table) {
  return { binding: bindingDraft(table), secrets: [TOKEN], now: fixedNow };
}
function tableRect(wb: Workbook, name: string) {
  const t = wb.tables.find((x) => x.name === name);
  if (!t) throw new Error(`no table ${name}`);
  return { ...t.rect };
}
async function addTable(wb: Workbook, sheet: string, address: string, name: string): Promise<void> {
  const ctx = createEmulatedContext(wb);
  const t = ctx.workbook.worksheets.getItem(sheet).tables.add(address, true);
  t.name = name;
  await ctx.sync();
}

describe("B1 cell-edit mode: every Excel.run passes delayForCellEdit", () => {
  afterEach(() => {
    g.Excel = libraryExcel;
  });

  it("a batch without the option fails at once while the user types in a cell (the emulator's Excel)", async () => {
    const wb = new Workbook({});
    wb.enterCellEditMode();
    const ns = createExcelNamespace(wb);
    const err = await rejection(ns.run(async (ctx) => {
      ctx.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["x"]];
      await ctx.sync();
    }));
    expect(err.code).toBe("InvalidOperationInCellEditMode");
  });

  it("the add-in's import waits until the user leaves the cell, then completes", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    g.Excel = createExcelNamespace(wb);
    wb.enterCellEditMode();
    const table = finTable(finRows(3));
    let settled = false;
    const p = runExcel((ctx) => importTable(ctx, table, importOptions(table)));
    p.then(() => (settled = true), () => (settled = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(settled).toBe(false);
    wb.exitCellEditMode();
    const result = await p;
    expect(result.rowCount).toBe(3);
    expect(inspect(wb, "'financials (json)'!B3").values[0][0]).toBe("Project 0");
  });
});

describe("B2 tables grow into adjacent writes: a neighbouring table is never enlarged", () => {
  it("the emulator's Excel grows a table over values written right below it", async () => {
    const wb = new Workbook({});
    seed(wb, "Sheet1!A1:B2", [["a", "b"], [1, 2]]);
    await addTable(wb, "Sheet1", "A1:B2", "Other");
    const ctx = createEmulatedContext(wb);
    ctx.workbook.worksheets.getItem("Sheet1").getRange("A3:B3").values = [[3, 4]];
    await ctx.sync();
    expect(snapshot(wb).sheets[0].tables[0].address).toBe("A1:B3");
  });

  it("an import right below a table is refused before anything is written; the table keeps its size", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    seed(wb, "Sheet1!A1:B3", [["a", "b"], [1, 2], [3, 4]]);
    await addTable(wb, "Sheet1", "A1:B3", "Other");
    const before = toWorkbookFile(wb);
    const table = finTable(finRows(3));
    const err = await rejection(importTable(createRequestContext(wb), table, { ...importOptions(table), target: { sheetName: "Sheet1", anchor: "A4" } }));
    expect(err.code).toBe("adjacent_table");
    expect(err.message).toMatch(/"Other"/);
    expect(tableRect(wb, "Other")).toEqual({ r0: 0, c0: 0, r1: 2, c1: 1 });
    expect(toWorkbookFile(wb).sheets).toEqual(before.sheets);
  });

  it("a refresh that would grow a table up to the next one is refused, nothing written", async () => {
    const { wb } = await imported(finRows(2));
    // ppm_financials: header row 2, body rows 3-4; another table starts at row 8.
    seed(wb, "'financials (json)'!A8:B9", [["x", "y"], [1, 2]]);
    await addTable(wb, "financials (json)", "A8:B9", "Below");
    const before = toWorkbookFile(wb);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 1)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("adjacent_table");
    // The one cell a failed refresh changes: the info line's stale mark (issue #15).
    const info = inspect(wb, "'financials (json)'!A1").values[0][0];
    expect(String(info)).toMatch(/^PPM · ⚠ Not refreshed: The refreshed table "ppm_financials" would grow up to the table "Below"/);
    seed(wb, "'financials (json)'!A1", [[before.sheets.find((s) => s.name === "financials (json)")!.cells.find((c) => c.r === 0 && c.c === 0)!.v]]);
    expect(toWorkbookFile(wb).sheets).toEqual(before.sheets);
    expect(tableRect(wb, "Below")).toEqual({ r0: 7, c0: 0, r1: 8, c1: 1 });
  });
});

describe("B3 oversized requests on the web fail as GeneralException: the block is halved", () => {
  it("an import into Excel on the web that answers GeneralException to large requests completes in smaller blocks", async () => {
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: 60_000, oversizeRequestError: "GeneralException" });
    const table = finTable(finRows(2_000));
    const result = await importTable(createRequestContext(wb), table, importOptions(table));
    expect(result.rowCount).toBe(2_000);
    expect(result.shrinks).toBeGreaterThan(0);
    expect(wb.stats.rejectedSyncs).toBeGreaterThan(0);
    expect(inspect(wb, "'financials (json)'!B2002").values[0][0]).toBe("Project 1999");
  });

  it("the first block holds at most 5,000 rows (Microsoft's large-range guidance), then grows", async () => {
    // 12,000 rows fit one 4 MB request by size; they go as 5,000 + 7,000 rows.
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable(finRows(12_000));
    const result = await importTable(createRequestContext(wb), table, importOptions(table));
    expect(result.blocks).toBe(2);
    expect(result.shrinks).toBe(0);
  });
});

describe("B4 totals row: a refresh keeps it below the new data, its formulas over the whole column", () => {
  async function withTotals(rows: number) {
    const r = await imported(finRows(rows));
    const ctx = createEmulatedContext(r.wb);
    ctx.workbook.tables.getItem("ppm_financials").showTotals = true;
    await ctx.sync();
    return r;
  }

  it("grows: Table.getRange() includes the totals row, which ends up under the last new row", async () => {
    const { wb } = await withTotals(3);
    // Header row 2, body rows 3-5, totals row 6; the last column (ledger, text) is counted.
    expect(inspect(wb, "'financials (json)'!A6:H6").formulas[0][7]).toBe("=SUBTOTAL(103,[ledger])");
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 1)), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    expect(tableRect(wb, "ppm_financials")).toEqual({ r0: 1, c0: 0, r1: 7, c1: 7 });
    const totals = inspect(wb, "'financials (json)'!A8:H8");
    expect(totals.values[0][0]).toBe("Total");
    expect(totals.formulas[0][7]).toBe("=SUBTOTAL(103,[ledger])");
    expect(totals.values[0][7]).toBe(5);
    expect(inspect(wb, "'financials (json)'!B7").values[0][0]).toBe("Project 5");
  });

  it("shrinks: the totals row moves up and nothing is left below it", async () => {
    const { wb } = await withTotals(4);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(2, 1)), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    expect(tableRect(wb, "ppm_financials")).toEqual({ r0: 1, c0: 0, r1: 4, c1: 7 });
    expect(inspect(wb, "'financials (json)'!A5:H5").values[0][7]).toBe(2);
    expect(inspect(wb, "'financials (json)'!A6:H7").values.flat().every((v) => v === "")).toBe(true);
  });
});

describe("B5 name clash: table names share one namespace with defined names, checked before writing", () => {
  it("a workbook-scoped defined name is avoided when the table name is derived", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addDefinedName("ppm_financials");
    const table = finTable(finRows(2));
    const result = await importTable(createRequestContext(wb), table, importOptions(table));
    expect(result.tableName).toBe("ppm_financials_2");
  });

  it("a sheet-scoped defined name is avoided too", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addDefinedName("ppm_financials", "Sheet1");
    const table = finTable(finRows(2));
    const result = await importTable(createRequestContext(wb), table, importOptions(table));
    expect(result.tableName).toBe("ppm_financials_2");
  });

  it("a chosen table name that is a defined name is refused before anything is written", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addDefinedName("Budget", "Sheet1");
    const before = toWorkbookFile(wb);
    const table = finTable(finRows(2));
    const err = await rejection(importTable(createRequestContext(wb), table, { ...importOptions(table), tableName: "Budget" }));
    expect(err.code).toBe("name_taken");
    expect(toWorkbookFile(wb).sheets).toEqual(before.sheets);
  });
});

describe("B6 calculation mode is application-wide: never switched, never suspended, nothing but the add-in's own formulas calculated", () => {
  it("import and refresh never write application.calculationMode, never suspend API calculation and never calculate the application (issue #34)", async () => {
    const { wb } = await imported(finRows(300), { targetRequestBytes: 10_000 });
    await refreshTable(createRequestContext(wb), "b1", updated(finRows(400, 1)), { applyQuery: noQuery, now: later, targetRequestBytes: 10_000 });
    expect(wb.stats.calculationModeSets).toBe(0);
    expect(wb.stats.suspendCalculationCalls).toBe(0);
    expect(wb.stats.calculateCalls).toBe(0);
    // What was calculated: only ranges of the add-in's own very hidden sheets (its checksums).
    expect(wb.stats.calculations?.length).toBeGreaterThan(0);
    for (const c of wb.stats.calculations ?? []) expect(c).toMatch(/^range ppm_c_[A-Za-z0-9_-]+!/);
  });

  it("a runtime that dies in the middle of a write leaves the user's calculation mode as it was", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const ctx = createEmulatedContext(wb);
    const realSync = ctx.sync.bind(ctx);
    let n = 0;
    // Excel closes the runtime after the third request: nothing of the add-in runs any more.
    ctx.sync = async () => {
      if (++n > 3) throw new Error("The add-in's runtime was closed.");
      return realSync();
    };
    const table = finTable(finRows(500));
    await rejection(importTable(ctx, table, { ...importOptions(table), targetRequestBytes: 5_000 }));
    expect(wb.calculationMode).toBe("Automatic");
  });
});

describe("B7 the 1904 date system: dates are written as that system's serials", () => {
  it("dates and date-times show their own day in a 1904 workbook; dates before 1904 stay text", async () => {
    const wb = new Workbook({ currentYear: 2025, date1904: true });
    const rows = finRows(2);
    rows[0][4] = "2026-01-15";
    rows[0][5] = "2024-03-10T06:15:00Z";
    rows[1][4] = "1903-05-01";
    const table = finTable(rows);
    await importTable(createRequestContext(wb), table, importOptions(table));
    expect(inspect(wb, "'financials (json)'!E3:F3").text[0]).toEqual(["2026-01-15", "2024-03-10 06:15:00"]);
    expect(inspect(wb, "'financials (json)'!E4").values[0][0]).toBe("1903-05-01");
  });

  it("a refresh in a 1904 workbook writes 1904 serials too", async () => {
    const { wb } = await imported(finRows(2), {}, { date1904: true });
    const rows = finRows(2, 1);
    rows[1][4] = "2030-12-31";
    await refreshTable(createRequestContext(wb), "b1", updated(rows), { applyQuery: noQuery, now: later });
    expect(inspect(wb, "'financials (json)'!E4").text[0][0]).toBe("2030-12-31");
  });
});

describe("B8 15 significant digits: integers of 16 or more digits are written as exact text", () => {
  it("a 16-digit integer below 2^53 keeps every digit; 15 digits stay a number", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const columns: Column[] = [{ name: "big", type: "integer" }, { name: "ok", type: "integer" }];
    const table = finTable([[1234567890123456, 123456789012345], [null, 1]], {}, columns);
    await importTable(createRequestContext(wb), table, importOptions(table));
    const cells = inspect(wb, "'financials (json)'!A3:B3");
    expect(cells.values[0]).toEqual(["1234567890123456", 123456789012345]);
    expect(cells.valueTypes[0]).toEqual(["String", "Double"]);
  });
});

describe("B9 two runtimes, one table: a lock in the workbook, the second caller is told which table is busy", () => {
  const lockKey = "ppm.lock.ppm_financials";
  const lockFor = (expiresAt: string) =>
    JSON.stringify({ owner: "ribbon-runtime", holder: "Refresh all on the ribbon", acquiredAt: "2026-02-01T07:59:00.000Z", expiresAt });

  it("a refresh of a table another runtime is refreshing is refused, naming the table and who has it", async () => {
    const { wb } = await imported(finRows(2));
    wb.setSetting(lockKey, lockFor("2026-02-01T08:09:00.000Z"));
    const before = toWorkbookFile(wb);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 1)), { applyQuery: noQuery, now: later });
    expect(report.failure?.code).toBe("table_busy");
    expect(report.failure?.message).toMatch(/"ppm_financials" is being refreshed right now by Refresh all on the ribbon/);
    expect(toWorkbookFile(wb).sheets).toEqual(before.sheets);
  });

  // Issue #26: a lease runs on this runtime's clock from when it first saw the lock, never on the lock's own dates.
  it("an expired lock (its runtime died) is taken over; the lock is gone after the refresh", async () => {
    const { wb } = await imported(finRows(2));
    wb.setSetting(lockKey, lockFor("2026-02-01T07:30:00.000Z"));
    const first = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 1)), { applyQuery: noQuery, now: later });
    expect(first.failure?.code).toBe("table_busy");
    const afterLease = () => new Date(later().getTime() + 10 * 60_000 + 1_000);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 1)), { applyQuery: noQuery, now: afterLease });
    expect(report.outcome).toBe("updated");
    expect(wb.settings.has(lockKey)).toBe(false);
  });

  it("two refreshes started together in two runtimes never both write", async () => {
    const { wb } = await imported(finRows(50));
    const slow = (seed: number): RefreshSource => ({
      fetch: async () => ({ status: "updated", table: finTable(finRows(60, seed), { generatedAt: GEN2, etag: `"e${seed}"` }), validators: { etag: `"e${seed}"`, generatedAt: GEN2 } }),
    });
    // A race of two runtimes: the lock's real wait before its read-back (test/helpers/setup.ts sets
    // its floor to 0 for tests that do not race; without the floor the wait is 3 emulator round trips,
    // and whether the second lock write lands inside it depends on the machine's timing).
    const floor = lockTiming.minSettleMs;
    lockTiming.minSettleMs = 250;
    const [a, b] = await Promise.all([
      refreshTable(createRequestContext(wb), "b1", slow(1), { applyQuery: noQuery, now: later, targetRequestBytes: 2_000 }),
      refreshTable(createRequestContext(wb), "b1", slow(2), { applyQuery: noQuery, now: later, targetRequestBytes: 2_000 }),
    ]).finally(() => (lockTiming.minSettleMs = floor));
    const outcomes = [a, b].map((r) => r.failure?.code ?? r.outcome).sort();
    expect(outcomes).toEqual(["table_busy", "updated"]);
    // The table holds exactly one of the two refreshes, whole.
    const names = inspect(wb, "'financials (json)'!B3:B62").values.map((r) => r[0]);
    const seedOf = a.outcome === "updated" ? 1 : 2;
    expect(names).toEqual(finRows(60, seedOf).map((r) => r[1]));
  });
});

describe("B10 rollback keeps text as text: quote-prefixed text never comes back as a formula", () => {
  it("text '=x' in a column the user set to General is restored as text after a mid-write failure", async () => {
    const rows = finRows(300);
    rows[0][1] = "=x";
    const { wb } = await imported(rows);
    const ctx = createEmulatedContext(wb);
    // The user switched the text column's format to General; the cell stays text (as a quote-prefixed cell).
    ctx.workbook.tables.getItem("ppm_financials").columns.getItem("name").getDataBodyRange().numberFormat = "General" as never;
    await ctx.sync();
    expect(inspect(wb, "'financials (json)'!B3").values[0][0]).toBe("=x");
    const ac = new AbortController();
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(300, 7)), {
      applyQuery: noQuery, now: later, signal: ac.signal, targetRequestBytes: 8_000,
      onProgress: (p) => { if ((p.rowsWritten ?? 0) > 50) ac.abort(); },
    });
    expect(report.failure?.code).toBe("cancelled");
    const cell = inspect(wb, "'financials (json)'!B3");
    expect(cell.values[0][0]).toBe("=x");
    expect(cell.valueTypes[0][0]).toBe("String");
  });
});

describe("B11 filter and sort are re-applied one by one; a failure is a note", () => {
  it("on Excel for Mac, a table whose filter the user removed refreshes without an error, still sorted", async () => {
    const { wb } = await imported(finRows(5), {}, { platform: "mac" });
    const ctx = createEmulatedContext(wb);
    const t = ctx.workbook.tables.getItem("ppm_financials");
    t.sort.apply([{ key: 0, ascending: false }]);
    t.autoFilter.remove();
    await ctx.sync();
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(6, 1)), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    expect(report.warnings).toEqual([]);
    expect(inspect(wb, "'financials (json)'!A3:A8").values.map((r) => r[0])).toEqual(["6", "5", "4", "3", "2", "1"]);
  });

  it("the emulator's Mac throws re-applying a removed filter", async () => {
    const { wb } = await imported(finRows(2), {}, { platform: "mac" });
    const ctx = createEmulatedContext(wb);
    const t = ctx.workbook.tables.getItem("ppm_financials");
    t.autoFilter.remove();
    await ctx.sync();
    t.reapplyFilters();
    expect((await rejection(ctx.sync())).code).toBe("InvalidOperation");
  });
});

describe("B12 settings size: bindings within a stated budget, write-back records on a hidden sheet", () => {
  function bigBaseline(rows: number): Baseline {
    const record: Record<string, string> = {};
    for (let i = 0; i < rows; i++) record[`pt_acme_${String(i).padStart(6, "0")}`] = "a1b2c3d4,e5f6a7b8,c9d0e1f2,a3b4c5d6";
    return { v: 1, bindingId: "b7", tableName: "ppm_projects", capturedAt: "2026-01-01T00:00:00Z", etag: '"x"', tokenColumn: "project_token", columns: ["a", "b", "c", "d"], rows: record, duplicates: [], rowCount: rows, tooLarge: false };
  }

  it("a 2 MB write-back record is stored and read back without touching document settings", async () => {
    const wb = new Workbook({});
    const baseline = bigBaseline(40_000);
    await saveBaseline(createRequestContext(wb), baseline);
    expect(await readBaseline(createRequestContext(wb), "b7")).toEqual(baseline);
    expect([...wb.settings.values()].join("").length).toBeLessThan(10_000);
    expect(wb.sheets.find((s) => s.name.startsWith("ppm_bl_"))?.visibility).toBe("VeryHidden");
  });

  it("an import whose binding would take the add-in's settings over budget is refused before writing", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    for (let i = 0; i < 26; i++) wb.setSetting(`ppm.binding.old${i}`, "x".repeat(10_000));
    const before = toWorkbookFile(wb);
    const table = finTable(finRows(2));
    const err = await rejection(importTable(createRequestContext(wb), table, importOptions(table)));
    expect(err.code).toBe("settings_full");
    expect(err.message).toMatch(/Nothing was written/);
    expect(toWorkbookFile(wb).sheets).toEqual(before.sheets);
  });
});

describe("B13 no read-back of the old table: the rollback copy stays inside Excel", () => {
  it("a refresh that changes every value moves at most 1.2x the bytes of a first import", async () => {
    const rows = finRows(3_000);
    const first = new Workbook({ currentYear: 2025 });
    const table = finTable(rows);
    await importTable(createRequestContext(first), table, importOptions(table));
    const importBytes = first.stats.requestBytesPerSync.reduce((a, b) => a + b, 0) + first.stats.responseBytesPerSync.reduce((a, b) => a + b, 0);

    const { wb } = await imported(finRows(3_000, 11));
    wb.stats.requestBytesPerSync = [];
    wb.stats.responseBytesPerSync = [];
    const report = await refreshTable(createRequestContext(wb), "b1", updated(rows), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    const refreshBytes = wb.stats.requestBytesPerSync.reduce((a, b) => a + b, 0) + wb.stats.responseBytesPerSync.reduce((a, b) => a + b, 0);
    expect(refreshBytes / importBytes).toBeLessThanOrEqual(1.2);
    expect(Math.max(...wb.stats.responseBytesPerSync)).toBeLessThan(50_000);
    // One copy of the old table's area in, none back (the refresh succeeded): only addresses cross the network.
    expect(wb.stats.copyFromCalls).toBe(1);
  });
});

describe("B14 the occupied-cell check never asks for one response over the limit", () => {
  it("an import over a large filled area is refused as occupied, reading the area in blocks: no response over the limit, none refused", async () => {
    const limit = 200_000;
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: limit });
    wb.addSheet("Data");
    // The whole overlap is 325 KB of formulas: reading it at once is refused.
    const filler = Array.from({ length: 400 }, () => Array.from({ length: 4 }, () => "z".repeat(200)));
    seed(wb, "Data!B2:E401", filler);
    const table = finTable(finRows(500));
    const err = await rejection(importTable(createRequestContext(wb), table, { ...importOptions(table), target: { sheetName: "Data", anchor: "A1" } }));
    expect(err.code).toBe("occupied");
    expect(err.message).toMatch(/B2 is not/);
    expect(Math.max(...wb.stats.responseBytesPerSync)).toBeLessThanOrEqual(limit);
    expect(wb.stats.rejectedSyncs).toBe(0);
  });

  it("a refresh growing over a long empty area reads it in blocks sized by bytes, every response under the limit, none refused", async () => {
    const limit = 200_000;
    const { wb } = await imported(finRows(10), {}, { payloadLimitBytes: limit });
    // Growing by 3,000 rows: the area below holds only a far-away cell, so every block is read.
    seed(wb, "'financials (json)'!A20000", [["far below"]]);
    seed(wb, "'financials (json)'!I3000", [["z".repeat(30_000)]]);
    wb.stats.responseBytesPerSync = [];
    wb.stats.rejectedSyncs = 0;
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(3_010, 1)), { applyQuery: noQuery, now: later, targetRequestBytes: 150_000, targetResponseBytes: 150_000 });
    expect(report.outcome).toBe("updated");
    expect(Math.max(...wb.stats.responseBytesPerSync)).toBeLessThanOrEqual(limit);
    expect(wb.stats.rejectedSyncs).toBe(0);
  });
});

describe("a failed full rewrite puts the user's own formats back (the rollback restores formats)", () => {
  it("a user's number format on a data column and a fill come back after a failure mid-write", async () => {
    const { wb } = await imported(finRows(50));
    const context = createEmulatedContext(wb);
    const amount = context.workbook.worksheets.getItem("financials (json)").getRange("C3:C52");
    amount.numberFormat = Array.from({ length: 50 }, () => ["0.0%"]);
    amount.format.fill.color = "#FFFF00";
    await context.sync();
    const before = toWorkbookFile(wb).sheets.find((s) => s.name === "financials (json)")!;
    let blocks = 0;
    // Excel refuses the second block (not for its size: the refresh fails and restores).
    wb.faultInjector = (op) => (op.op === "set values" && /!A\d+:H\d+$/.test(op.path) && ++blocks === 2 ? new EmulatedExcelError("InvalidOperation", "injected failure") : null);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(50, 3)), { applyQuery: noQuery, now: later, delta: false, targetRequestBytes: 2_000 });
    wb.faultInjector = null;
    expect(report.outcome).toBe("failed");
    expect(report.failure?.message).toMatch(/previous data was restored/);
    expect(inspect(wb, "'financials (json)'!C3:C52").numberFormat.every((r) => r[0] === "0.0%")).toBe(true);
    const after = toWorkbookFile(wb).sheets.find((s) => s.name === "financials (json)")!;
    expect(after.fills).toEqual(before.fills);
    expect(after.cells.filter((c) => !(c.r === 0 && c.c === 0))).toEqual(before.cells.filter((c) => !(c.r === 0 && c.c === 0)));
  });
});

describe("B15 selections: several areas, a whole column or a whole row", () => {
  afterEach(() => {
    g.Excel = libraryExcel;
  });
  const engine = createEngine();

  it("a whole column or row anchors at its first cell", async () => {
    const wb = new Workbook({});
    g.Excel = createExcelNamespace(wb);
    wb.select("Sheet1!C:C");
    expect(await engine.selectedCell()).toEqual({ sheetName: "Sheet1", anchor: "C1" });
    wb.select("Sheet1!3:4");
    expect(await engine.selectedCell()).toEqual({ sheetName: "Sheet1", anchor: "A3" });
  });

  it("several areas give a clear message; the table under the selection is simply none", async () => {
    const wb = new Workbook({});
    g.Excel = createExcelNamespace(wb);
    wb.select("Sheet1!A1:B2,D4");
    const err = await rejection(engine.selectedCell());
    expect(err.code).toBe("selection_invalid");
    expect(err.message).toMatch(/several areas/);
    expect(await engine.bindingAtSelection()).toBeNull();
  });
});

describe("B16 cell text limit: longer text is refused during validation, naming column and row", () => {
  it("a 40,000-character text is refused before anything is written", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const rows = finRows(3);
    rows[1][1] = "t".repeat(40_000);
    const table = finTable(rows);
    const err = await rejection(importTable(createRequestContext(wb), table, importOptions(table)));
    expect(err.code).toBe("cell_too_long");
    expect(err.message).toMatch(/Row 2, column "name"/);
    expect(err.message).toMatch(/32,767/);
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1"]);
  });
});

describe("B17 the function-command window: Refresh all ends inside it on every path", () => {
  afterEach(() => {
    jest.useRealTimers();
  });
  function store() {
    const s = new ConnectionStore(new MemoryStorage(), { newId: () => "c1" });
    s.save({ name: "Acme", baseUrl: "https://eu.example.com", token: "t0ken-value" });
    return s;
  }
  // `closed()` is about the last dialog opened (the "working" dialog, which becomes the summary).
  const openedUi = (): { ui: DialogUi; closed: () => boolean } => {
    const dialogs: { closed: boolean }[] = [];
    return {
      ui: {
        displayDialogAsync: (_u, _o, cb) => {
          const d = { closed: false };
          dialogs.push(d);
          cb({ status: "succeeded", value: { close: () => (d.closed = true), addEventHandler: () => undefined, messageChild: () => undefined } });
        },
      },
      closed: () => dialogs.at(-1)?.closed ?? false,
    };
  };

  it("event.completed() does not wait for the user to close the summary dialog", async () => {
    const { ui, closed } = openedUi();
    let completed = 0;
    const command = createRefreshAllCommand({
      store,
      engine: async () => ({ refreshAll: async () => ({ reports: [], broken: [] }) }),
      ui: () => ui,
      pageUrl: () => "https://a.example.com/commands.html",
    });
    await command({ completed: () => completed++ });
    expect(completed).toBe(1);
    expect(closed()).toBe(false);
    expect(await reportSummary(ui, "https://a.example.com/commands.html", "x", "ok")).toBe("dialog");
  });

  it("a refresh that hangs still completes the command before Excel's 5 minutes are up", async () => {
    jest.useFakeTimers();
    let completed = 0;
    const command = createRefreshAllCommand({
      store,
      engine: async () => ({ refreshAll: () => new Promise(() => undefined) }),
      ui: () => undefined,
      pageUrl: () => "https://a.example.com/commands.html",
    });
    void command({ completed: () => completed++ });
    await jest.advanceTimersByTimeAsync(4 * 60_000);
    expect(completed).toBe(0);
    await jest.advanceTimersByTimeAsync(55_000);
    expect(completed).toBe(1);
  });

  it("after the deadline no further table starts; the rest are reported as skipped", async () => {
    const { wb } = await imported(finRows(2));
    const other = finTable(finRows(2), { key: "second" });
    await importTable(createRequestContext(wb), other, { binding: { ...bindingDraft(other, "b2"), source: { kind: "dataset", key: "second", format: "json" } }, secrets: [TOKEN], now: fixedNow });
    let refreshed = 0;
    const source: RefreshSource = { fetch: async () => (refreshed++, { status: "unchanged", validators: {} }) };
    const res = await refreshAllTables(createRequestContext(wb), () => source, { applyQuery: noQuery, now: later, deadline: { expired: () => refreshed >= 1 } });
    expect(res.reports.map((r) => r.failure?.code ?? r.outcome)).toEqual(["unchanged", "skipped"]);
    expect(res.reports[1].failure?.message).toMatch(/time for this run was used up/);
  });

  it("the commands bundle loads the engine lazily (no static import)", () => {
    // The commands take the engine from the add-in runtime (shared with the pane, issue 17), which
    // loads it with a dynamic import on first use. Every static import that survives compilation
    // (`import x`, `import * as`, `import {…}`, `export … from`, `import x = require`), followed
    // from commands.ts through the files it loads, must stop short of the engine.
    const src = join(__dirname, "../../src");
    const closure = staticValueImportClosure(join(src, "commands/commands.ts"));
    expect(closure.has(join(src, "addin/runtime.ts"))).toBe(true);
    expect(closure.has(join(src, "addin/engine.ts"))).toBe(false);
    const runtime = readFileSync(join(src, "addin/runtime.ts"), "utf8");
    expect(runtime).toMatch(/import\(\s*(\/\*[^*]*\*\/\s*)?"\.\/engine"\)/);
    // The check sees every static form (it would fail on any of them).
    for (const form of ['import * as e from "./engine";', 'import e from "./engine";', 'import { createEngine } from "./engine";', 'export { createEngine } from "./engine";', 'import e = require("./engine");', 'import "./engine";']) {
      expect(staticValueImports(form, "x.ts")).toEqual(["./engine"]);
    }
    for (const form of ['import type { Engine } from "./engine";', 'import { type Engine } from "./engine";', 'const e = () => import("./engine");', 'export type { Engine } from "./engine";']) {
      expect(staticValueImports(form, "x.ts")).toEqual([]);
    }
  });
});

describe("B18 Local Network Access: said only where it applies (a page reaching a more private address space)", () => {
  const blocked = (async () => {
    throw new TypeError("Failed to fetch");
  }) as unknown as typeof fetch;

  it("a page on the internet whose request to localhost or a private address fails is told about Local Network Access and the admin policy", async () => {
    for (const baseUrl of ["http://localhost:4100", "https://192.168.1.20:8080", "https://10.0.0.5"]) {
      const client = new PpmClient({ id: "c", name: "c", baseUrl, token: TOKEN }, { fetch: blocked, retries: 0, pageOrigin: "https://addins.example.com" });
      const err = await rejection(client.manifest());
      expect(err.code).toBe("network");
      expect(err.message).toMatch(/Local Network Access/);
      expect((err as PpmError).action).toMatch(/LocalNetworkAccessAllowedForUrls/);
      expect(err.message).not.toContain(TOKEN);
    }
  });

  it("a page on an intranet host reaching localhost is told too (private → local)", async () => {
    const client = new PpmClient({ id: "c", name: "c", baseUrl: "http://localhost:4100", token: TOKEN }, { fetch: blocked, retries: 0, pageOrigin: "https://10.1.2.3" });
    expect((await rejection(client.manifest())).message).toMatch(/Local Network Access/);
  });

  it("not for a public service, a page on localhost (the browser preview), or Node (the CLI): one short sentence, the possible causes in the details", async () => {
    const cases: Array<[string, string | undefined]> = [
      ["https://ppm.example.com", "https://addins.example.com"],
      ["http://localhost:4100", "http://localhost:3000"],
      ["http://localhost:4100", undefined],
      ["https://10.0.0.5", "https://10.0.0.9"],
    ];
    for (const [baseUrl, pageOrigin] of cases) {
      const client = new PpmClient({ id: "c", name: "c", baseUrl, token: TOKEN }, { fetch: blocked, retries: 0, pageOrigin });
      const err = await rejection(client.manifest());
      expect(err.code).toBe("network");
      expect(`${err.message} ${(err as PpmError).action}`).not.toMatch(/Local Network Access|LocalNetworkAccess/);
      expect(err.message).toBe(`Could not reach ${new URL(baseUrl).host}; the browser does not say why.`);
      expect((err as PpmError).details).toMatchObject({ cause: "unknown", detail: "Failed to fetch" });
      expect(((err as PpmError).details as { possibleCauses: string[] }).possibleCauses.join(" ")).toMatch(/stopped.*CORS/);
    }
  });
});

/**
 * Module specifiers of the imports in `code` that load the module at run time (the TypeScript
 * parser, as test/architecture.test.ts uses it): type-only imports and exports, and imports whose
 * every named binding is `type`, are erased by the compiler; `import()` is not static.
 */
function staticValueImports(code: string, fileName: string): string[] {
  const sf = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const clause = st.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      if (clause && !clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly)) continue;
      out.push(st.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      if (st.isTypeOnly) continue;
      out.push(st.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(st) && !st.isTypeOnly && ts.isExternalModuleReference(st.moduleReference) && ts.isStringLiteral(st.moduleReference.expression)) {
      out.push(st.moduleReference.expression.text);
    }
  }
  return out;
}

/** Every `.ts` file under src/ that `entry` loads through static imports (relative ones), itself included. */
function staticValueImportClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of staticValueImports(readFileSync(file, "utf8"), file)) {
      if (!spec.startsWith(".")) continue;
      const base = resolve(dirname(file), spec);
      const hit = [`${base}.ts`, join(base, "index.ts")].find((c) => existsSync(c));
      if (hit) todo.push(hit);
    }
  }
  return seen;
}
