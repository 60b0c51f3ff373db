/**
 * Issue #34, item 3: a refresh calculates exactly the add-in's own formulas (its block checksums and
 * scratch cells, `Range.calculate`), never the application (`Application.calculate` recalculates every
 * open workbook: docs, Excel.Application.calculate) and never suspends API calculation (which would
 * oblige it to). So the user's calculation mode decides for the user's formulas: in manual mode a
 * formula stays as it was until the user calculates, whatever the refresh wrote; in automatic mode
 * Excel recalculates the formulas that depend on the table (issue #21, item 10, in issue21.test.ts).
 * Seen failing before #34: the refresh's Application.calculate recalculated the manual workbook.
 */
import { Workbook, createEmulatedContext, createRequestContext, inspect, seed } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, keyedSource, TOKEN } from "./helpers";

const noQuery = <T>(t: T) => ({ table: t });
const keyed = (rows: CellValue[][]): RefreshSource => keyedSource(rows);

describe("manual calculation mode stays manual through a refresh", () => {
  it("a formula that does not depend on the table stays stale, one that does keeps its old result, and the delta still verifies its blocks", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    wb.addSheet("Data");
    wb.addSheet("Report");
    const base = finRows(300);
    const t0 = finTable(base);
    await importTable(createRequestContext(wb), t0, { binding: bindingDraft(t0), secrets: [TOKEN], target: { sheetName: "Data", anchor: "A1" } });
    seed(wb, "Report!A1:C1", [[1, "=A1*2", "=SUM(Data!C3:C302)"]]);
    const sum = (rows: CellValue[][]) => rows.reduce((s, r) => s + (r[2] as number), 0);
    expect(inspect(wb, "Report!B1:C1").values).toEqual([[2, sum(base)]]);
    // The user works in manual mode and changes a cell: its dependent waits for F9.
    const ctx = createEmulatedContext(wb);
    ctx.application.calculationMode = "Manual";
    await ctx.sync();
    seed(wb, "Report!A1", [[5]]);
    expect(inspect(wb, "Report!B1").values).toEqual([[2]]);
    const calculatedBefore = wb.stats.calculations?.length ?? 0;
    let rows = base;
    for (const delta of [true, false]) {
      rows = rows.map((r, i) => [r[0], r[1], (r[2] as number) + (i === 7 ? 100 : 0) + (delta ? 0 : 1), ...r.slice(3)]);
      const r = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, delta });
      expect(r.outcome).toBe("updated");
      expect(r.delta?.strategy).toBe(delta ? "delta" : "full");
      expect(inspect(wb, "Data!C10").values[0][0]).toBe(rows[7][2]);
      // Nothing of the user's was calculated: the formula not depending on the table is still stale,
      // and the one that does still shows the sum of the import (manual mode: until the user asks).
      expect(inspect(wb, "Report!B1:C1").values).toEqual([[2, sum(base)]]);
    }
    expect(wb.calculationMode).toBe("Manual");
    expect(wb.stats.calculateCalls).toBe(0);
    expect(wb.stats.suspendCalculationCalls).toBe(0);
    // What was calculated: ranges of the add-in's own checksum sheet, nothing else.
    const calculated = (wb.stats.calculations ?? []).slice(calculatedBefore);
    expect(calculated.length).toBeGreaterThan(0);
    for (const c of calculated) expect(c).toMatch(/^range ppm_c_[A-Za-z0-9_-]+!/);
    // The user's F9 (Application.calculate) brings every formula up to date.
    const f9 = createEmulatedContext(wb);
    f9.application.calculate("Recalculate");
    await f9.sync();
    expect(inspect(wb, "Report!B1:C1").values).toEqual([[10, sum(rows)]]);
  });
});
