/**
 * Issue #21, items 1–10: refresh that is right in every workbook. One `describe` per numbered item;
 * each failed on the code before issue #21 (the emulator's model behaviours of issue #21 in place).
 */
import { Workbook, EmulatedExcelError, createEmulatedContext, createRequestContext, inspect, seed, snapshot, toWorkbookFile } from "../../src/emulator";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { readRefreshLog } from "../../src/workbook/refreshLog";
import { importTable } from "../../src/workbook/writer";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Column, Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, imported, TOKEN, keyedSource } from "./helpers";

const SHEET = "financials (json)";
const later = () => new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });

const keyed = keyedSource;

/** Rows with one name changed, one row removed and one new record in the middle (a delta's kind of change). */
function changed(base: CellValue[][]): CellValue[][] {
  const rows = base.map((r) => [...r]);
  rows[2][1] = "Renamed";
  rows.splice(5, 1);
  rows.splice(10, 0, [1000, "New record", 7.5, 3, "2024-05-05", "2024-03-10T09:15:00Z", false, "1"]);
  return rows;
}

const binding = async (wb: Workbook) => (await readBindings(createRequestContext(wb))).bindings[0];
const ids = (wb: Workbook, n: number) => inspect(wb, `'${SHEET}'!A3:A${2 + n}`).values.map((r) => r[0]);
/** Every cell of the data sheet but the info line, and the tables: what a failed refresh must leave exactly as it was. */
function dataState(wb: Workbook): string {
  const f = toWorkbookFile(wb);
  const sheet = f.sheets.find((s) => s.name === SHEET)!;
  return JSON.stringify({ cells: sheet.cells.filter((c) => !(c.r === 0 && c.c === 0)), fills: sheet.fills ?? [], tables: f.tables });
}

describe("1. the 1904 date system: a delta writes that system's serials", () => {
  it("a date a delta writes in a 1904 workbook shows its own day (2026-01-15, not 2030-01-16), and the next delta sees it as unchanged", async () => {
    // Dates on two rows only (the others empty), so that the old delta planned one changed row.
    const base = finRows(60).map((r, i) => (i < 2 ? r : [...r.slice(0, 4), null, null, ...r.slice(6)]));
    const { wb } = await imported(base, {}, { date1904: true });
    const rows = base.map((r) => [...r]);
    rows[10][4] = "2026-01-15";
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later });
    expect(report.delta?.strategy).toBe("delta");
    expect(inspect(wb, `'${SHEET}'!E13`).text[0][0]).toBe("2026-01-15");
    expect(inspect(wb, `'${SHEET}'!E3:E4`).text.map((r) => r[0])).toEqual(["2024-01-01", "2024-02-02"]);
    rows[20][1] = "only this";
    const again = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later });
    expect(again.delta).toMatchObject({ strategy: "delta", changed: 1, cellsWritten: 1 });
    expect(inspect(wb, `'${SHEET}'!E13`).text[0][0]).toBe("2026-01-15");
  });
});

describe("2. a cleared cell never turns into a formula or a number", () => {
  it("after Clear All (format back to General), a delta writes the text format before the value: 00317 and =SUM(A1:A9) stay text", async () => {
    const base = finRows(30);
    base[3][1] = "00317";
    base[4][1] = "=SUM(A1:A9)";
    const { wb } = await imported(base);
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem(SHEET).getRange("B6:B7").clear("All");
    await context.sync();
    expect(inspect(wb, `'${SHEET}'!B6:B7`).numberFormat).toEqual([["General"], ["General"]]);
    const rows = base.map((r) => [...r]);
    rows[20][1] = "something else changed";
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later });
    expect(report.delta?.strategy).toBe("delta");
    const cells = inspect(wb, `'${SHEET}'!B6:B7`);
    expect(cells.values).toEqual([["00317"], ["=SUM(A1:A9)"]]);
    expect(cells.valueTypes).toEqual([["String"], ["String"]]);
    expect(cells.numberFormat).toEqual([["@"], ["@"]]);
    expect(snapshot(wb).sheets[1].cells.find((c) => c.address === "B7")?.formula ?? null).toBeNull();
  });
});

describe("3. a formula the user typed over a data cell: one rule for delta, full rewrite and failure", () => {
  // Project 3 (sheet row 5) has amount 25; the user types =20+5 over it (same value).
  async function withUserFormula() {
    const base = finRows(30);
    const { wb } = await imported(base);
    seed(wb, `'${SHEET}'!C5`, [["=20+5"]]);
    expect(inspect(wb, `'${SHEET}'!C5`).values).toEqual([[25]]);
    const rows = base.map((r) => [...r]);
    rows[20][1] = "something else changed";
    return { wb, rows };
  }

  it("a delta puts the service's value back (the formula goes), as a full rewrite does", async () => {
    for (const delta of [true, false]) {
      const { wb, rows } = await withUserFormula();
      const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later, delta });
      expect(report.delta?.strategy).toBe(delta ? "delta" : "full");
      expect(inspect(wb, `'${SHEET}'!C5`).formulas).toEqual([[25]]);
    }
  });

  it("a failed refresh puts back exactly what was there, the formula included", async () => {
    const { wb, rows } = await withUserFormula();
    let values = 0;
    wb.faultInjector = (op) => (op.op === "set values" && ++values === 2 ? new EmulatedExcelError("InvalidOperation", "injected failure") : null);
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later, delta: false });
    wb.faultInjector = null;
    expect(report.outcome).toBe("failed");
    expect(report.failure?.message).toMatch(/previous data was restored/);
    expect(inspect(wb, `'${SHEET}'!C5`).formulas).toEqual([["=20+5"]]);
  });
});

describe("4. a failure after the delta's writes never blanks the table", () => {
  /** Runs a delta refresh with the k-th Excel operation failing (0: none); returns what it left. */
  async function withFailureAt(k: number) {
    const base = finRows(30);
    const { wb } = await imported(base);
    const before = dataState(wb);
    const rows = changed(base);
    let n = 0;
    wb.faultInjector = () => (++n === k ? new EmulatedExcelError("InvalidOperation", `injected failure at operation ${k}`) : null);
    // A failure reading the bindings, before the refresh itself starts, is thrown: nothing was written.
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later }).catch(() => ({ outcome: "failed" as const, delta: undefined }));
    wb.faultInjector = null;
    return { wb, report, before, rows, operations: n };
  }

  it("a failure at ANY Excel operation of a delta refresh leaves either the new table or exactly the old one", async () => {
    const clean = await withFailureAt(0);
    expect(clean.report.delta?.strategy).toBe("delta");
    let failed = 0;
    for (let k = 1; k <= clean.operations; k++) {
      const { wb, report, before, rows } = await withFailureAt(k);
      if (report.outcome === "updated") {
        expect(ids(wb, rows.length)).toEqual(rows.map((r) => String(r[0])));
        expect(inspect(wb, `'${SHEET}'!B5`).values).toEqual([["Renamed"]]);
      } else {
        failed++;
        expect(report.outcome).toBe("failed");
        // Never blank, never half written: the old table exactly (only the info line says why).
        expect(dataState(wb)).toBe(before);
        expect((await binding(wb)).validators.etag).toBe('"e1"');
      }
    }
    expect(failed).toBeGreaterThan(0);
  });
});

describe("5. outcome, info line, binding and sheet always agree", () => {
  it("when storing the binding fails after the data was written, the data is put back and the table is marked stale", async () => {
    const base = finRows(30);
    const { wb } = await imported(base);
    const before = dataState(wb);
    let failedOnce = false;
    wb.faultInjector = (op) => {
      const key = op.args[0];
      if (!failedOnce && op.op === "add" && typeof key === "string" && key.startsWith("ppm.binding.")) {
        failedOnce = true;
        return new EmulatedExcelError("InvalidArgument", "The argument is invalid or missing or has an incorrect format.");
      }
      return null;
    };
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(changed(base)), { applyQuery: noQuery, now: later });
    wb.faultInjector = null;
    expect(failedOnce).toBe(true);
    expect(report.outcome).toBe("failed");
    expect(dataState(wb)).toBe(before);
    const b = await binding(wb);
    expect(b.validators.etag).toBe('"e1"');
    expect(b.rowCount).toBe(30);
    expect(b.lastFailure).toMatchObject({ code: "write_failed", message: expect.stringMatching(/InvalidArgument.*The previous data was restored/) as unknown });
    expect(String(inspect(wb, `'${SHEET}'!A1`).values[0][0])).toMatch(/^PPM · ⚠ Not refreshed: /);
  });
});

describe("6. the user's own columns on a sorted table", () => {
  async function sortedWithNote() {
    const base = finRows(6);
    const { wb } = await imported(base);
    const context = createEmulatedContext(wb);
    const t = context.workbook.tables.getItem("ppm_financials");
    const note = t.columns.add(undefined, undefined, "note");
    // project 1 is on the first body row before sorting.
    note.getDataBodyRange().getCell(0, 0).values = [["note for id1"]];
    note.getDataBodyRange().getCell(3, 0).values = [["note for id4"]];
    t.sort.apply([{ key: 2, ascending: false }]);
    await context.sync();
    return { wb, source: keyed(base) };
  }
  const noteOf = (wb: Workbook) =>
    Object.fromEntries(inspect(wb, `'${SHEET}'!A3:I8`).values.filter((r) => r[8] !== "").map((r) => [String(r[8]), String(r[0])] as [string, string]));

  it.each([true, false])("each user cell stays beside its record (by key), and the sort is re-applied (delta allowed: %s)", async (delta) => {
    const { wb, source } = await sortedWithNote();
    const report = await refreshTable(createRequestContext(wb), "b1", source, { applyQuery: noQuery, now: later, delta });
    expect(report.outcome).toBe("updated");
    expect(noteOf(wb)).toEqual({ "note for id1": "1", "note for id4": "4" });
    expect(ids(wb, 6)).toEqual(["6", "5", "4", "3", "2", "1"]);
  });
});

describe("7. references from outside the table: one rule for both strategies (they keep their positions)", () => {
  async function withOutsideReferences() {
    const base = finRows(20);
    const { wb } = await imported(base);
    wb.addSheet("Report");
    // Row 8 of the sheet holds the removed record and the new one arrives on row 13 (see `changed`):
    // every reference below row 8 is one an insert or delete would move.
    seed(wb, "Report!A1:A3", [[`='${SHEET}'!C10`], [`=SUM('${SHEET}'!C8:C12)`], ["=Ninth*2"]]);
    wb.addDefinedName("Ninth", undefined, `='${SHEET}'!$C$11`);
    const context = createEmulatedContext(wb);
    const cf = context.workbook.worksheets.getItem("Report").getRange("B1:B20").conditionalFormats.add("Custom");
    cf.custom.rule.formula = `='${SHEET}'!$C10>100`;
    cf.custom.format.fill.color = "#FFEB9C";
    await context.sync();
    return { wb, base };
  }
  const outside = (wb: Workbook) => {
    const report = snapshot(wb).sheets.find((s) => s.name === "Report")!;
    return {
      formulas: inspect(wb, "Report!A1:A3").formulas,
      values: inspect(wb, "Report!A1:A3").values,
      name: wb.nameFormula("Ninth", null),
      formats: report.conditionalFormats.map((c) => [c.address, c.formula]),
      fills: Array.from({ length: 20 }, (_, r) => wb.conditionalFillAt(wb.sheetByName("Report")!, r, 1)),
    };
  };

  it("formulas, defined names and conditional formats on another sheet see the same cells after a delta and after a full rewrite", async () => {
    const results = [];
    for (const delta of [true, false]) {
      const { wb, base } = await withOutsideReferences();
      const rows = changed(base);
      const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later, delta });
      expect(report.delta?.strategy).toBe(delta ? "delta" : "full");
      results.push(outside(wb));
    }
    expect(results[0]).toEqual(results[1]);
    // The rule: positions. C10 is the eighth row of the table, whatever record is there now.
    expect(results[0].formulas).toEqual([[`='${SHEET}'!C10`], [`=SUM('${SHEET}'!C8:C12)`], ["=Ninth*2"]]);
    expect(results[0].name).toBe(`='${SHEET}'!$C$11`);
    expect(results[0].formats).toEqual([["B1:B20", `='${SHEET}'!$C10>100`]]);
    expect(results[0].fills.filter((f) => f !== null).length).toBeGreaterThan(0);
  });
});

describe("8. delta writes over 5 MB go in blocks; a delta Excel refuses is rewritten in full in the same refresh", () => {
  const TEXT: Column[] = [{ name: "project_id", type: "integer" }, ...Array.from({ length: 7 }, (_, i) => ({ name: `text_${i + 1}`, type: "text" as const }))];
  const wide = (n: number, from = 0): CellValue[][] => Array.from({ length: n }, (_, i) => [from + i + 1, ...Array.from({ length: 7 }, (_, c) => `${String(from + i).padStart(6, "0")}:${c} ${"w".repeat(96)}`)]);

  it("appended rows that make one 800 KB run are sent in requests under the limit (600 KB here)", async () => {
    const base = wide(3000);
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: 600_000 });
    const t0 = finTable(base, {}, TEXT);
    await importTable(createRequestContext(wb), t0, { binding: bindingDraft(t0), secrets: [TOKEN], targetRequestBytes: 400_000 });
    const rows = [...base, ...wide(1000, 3000)];
    wb.stats.maxRequestBytes = 0;
    wb.stats.rejectedSyncs = 0;
    const source = keyed(rows);
    const wideSource: RefreshSource = { fetch: async (s, r) => { const x = await source.fetch(s, r); return x.status === "updated" ? { ...x, table: { ...x.table, columns: TEXT } } : x; } };
    const report = await refreshTable(createRequestContext(wb), "b1", wideSource, { applyQuery: noQuery, now: later, targetRequestBytes: 400_000, targetResponseBytes: 400_000 });
    expect(report.outcome).toBe("updated");
    expect(report.delta).toMatchObject({ strategy: "delta", added: 1000 });
    expect(wb.stats.maxRequestBytes).toBeLessThanOrEqual(600_000);
    expect(wb.stats.rejectedSyncs).toBe(0);
    expect(inspect(wb, `'${SHEET}'!A4002`).values).toEqual([["4000"]]);
  }, 120_000); // 8-13 s of CPU: the 30 s default left a loaded CI too little room

  it("a delta Excel refuses (not for its size) falls back to a full rewrite inside the rollback; the log says so and why", async () => {
    const base = finRows(60);
    const { wb } = await imported(base);
    let refused = false;
    // The first one-row write of the delta is refused; nothing else is.
    wb.faultInjector = (op) => {
      if (!refused && op.op === "set values" && /![A-Z]+(\d+)(:[A-Z]+\1)?$/.test(op.path)) {
        refused = true;
        return new EmulatedExcelError("InvalidOperation", "This operation is not allowed.");
      }
      return null;
    };
    const rows = changed(base);
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later });
    wb.faultInjector = null;
    expect(refused).toBe(true);
    expect(report.outcome).toBe("updated");
    expect(report.delta).toMatchObject({ strategy: "full", fallback: "the delta was refused by Excel (InvalidOperation)" });
    expect(report.delta?.reason).toMatch(/full rewrite: the delta was refused by Excel \(InvalidOperation\)/);
    expect(ids(wb, rows.length)).toEqual(rows.map((r) => String(r[0])));
    const log = await readRefreshLog(createRequestContext(wb));
    expect(log[log.length - 1]).toMatchObject({ outcome: "updated", strategy: "full", fallback: "the delta was refused by Excel (InvalidOperation)" });
  });
});

describe("10. formulas that depend on the table show the new values (automatic mode: Excel recalculates what each write made dirty; issue #34: nothing suspended, nothing else calculated)", () => {
  it("a SUM on another sheet, a defined name and the totals row, after import, full rewrite and delta", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addSheet("Data");
    wb.addSheet("Report");
    seed(wb, "Report!A1:A2", [["=SUM(Data!C3:C12)"], ["=FirstAmount*2"]]);
    wb.addDefinedName("FirstAmount", undefined, "=Data!$C$3");
    expect(inspect(wb, "Report!A1:A2").values).toEqual([[0], [0]]);
    const base = finRows(10);
    const t0 = finTable(base);
    await importTable(createRequestContext(wb), t0, { binding: bindingDraft(t0), secrets: [TOKEN], target: { sheetName: "Data", anchor: "A1" } });
    const sum = (rows: CellValue[][]) => rows.reduce((s, r) => s + (r[2] as number), 0);
    expect(inspect(wb, "Report!A1:A2").values).toEqual([[sum(base)], [(base[0][2] as number) * 2]]);

    const context = createEmulatedContext(wb);
    context.workbook.tables.getItem("ppm_financials").showTotals = true;
    await context.sync();
    seed(wb, "Data!C13", [["=SUBTOTAL(109,[amount])"]]);
    expect(inspect(wb, "Data!C13").values).toEqual([[sum(base)]]);
    let rows = base;
    for (const delta of [false, true]) {
      rows = rows.map((r, i) => [r[0], r[1], (r[2] as number) + (delta ? (i === 4 ? 100 : 0) : 1000), ...r.slice(3)]);
      const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later, delta });
      expect(report.delta?.strategy).toBe(delta ? "delta" : "full");
      expect(inspect(wb, "Report!A1:A2").values).toEqual([[sum(rows)], [(rows[0][2] as number) * 2]]);
      expect(inspect(wb, "Data!C13").values).toEqual([[sum(rows)]]);
      // Never Application.calculate (every open workbook), never a suspension that would oblige one.
      expect(wb.stats.calculateCalls).toBe(0);
      expect(wb.stats.suspendCalculationCalls).toBe(0);
    }
  });
});

describe("Smaller: a table is created from a Range, never a bare address", () => {
  it("an import into a sheet that is not the active one puts its table on that sheet (TableCollection.add reads a bare address on the active sheet)", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addSheet("Data");
    expect(wb.activeSheet().name).toBe("Sheet1");
    const t0 = finTable(finRows(4));
    const result = await importTable(createRequestContext(wb), t0, { binding: bindingDraft(t0), secrets: [TOKEN], target: { sheetName: "Data", anchor: "B3" } });
    expect(result.sheetName).toBe("Data");
    const tables = snapshot(wb).sheets.filter((s) => !s.name.startsWith("ppm_")).map((s) => [s.name, s.tables.map((t) => t.address)]);
    expect(tables).toEqual([["Sheet1", []], ["Data", ["B4:I8"]]]);
  });
});
