/**
 * Issue #15 in Excel: what a delta refresh writes, what it leaves alone, and how a delta that fails
 * half way is undone from the rollback copy (issue #10), in the workbook emulator.
 */
import { Workbook, createEmulatedContext, createRequestContext, inspect, seed, toWorkbookFile } from "../../src/emulator";
import { refreshTable } from "../../src/workbook/refresh";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { finRows, finTable, imported } from "./helpers";

const SHEET = "financials (json)";
const later = () => new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
const keyed = (rows: CellValue[][]): RefreshSource => ({
  fetch: () =>
    Promise.resolve({
      status: "updated",
      table: finTable(rows, { generatedAt: "2026-02-01T07:00:00Z", etag: '"e2"' }),
      validators: { etag: '"e2"', generatedAt: "2026-02-01T07:00:00Z" },
      key: { candidates: [["project_id"]], origin: "metadata", reason: "the key $metadata declares" },
    }),
});

/** 200 rows; then rows 11-13 removed, `adds` (3) new rows after row 50, row 150's name changed. */
function edited(base: CellValue[][], name150: string, adds = 3): CellValue[][] {
  const rows = base.map((r) => [...r]);
  rows[149][1] = name150;
  const added = Array.from({ length: adds }, (_, i) => i).map((i) => [1000 + i, `New ${i}`, 1.5, 1, "2024-01-01", "2024-03-10T00:15:00Z", true, "1"] as CellValue[]);
  rows.splice(50, 0, ...added);
  rows.splice(10, 3);
  return rows;
}

const dataSheet = (wb: Workbook) => toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!;

describe("delta refresh in the workbook", () => {
  it("writes only the changed cells and the added rows; a user's fill on an unchanged row stays with its row; cells under and beside the table stay put", async () => {
    const base = finRows(200);
    const { wb } = await imported(base);
    // Header on row 2, body rows 3-202. A note under the table, one beside it, a fill on row 181 (project 179).
    seed(wb, `'${SHEET}'!A210`, [["note under"]]);
    seed(wb, `'${SHEET}'!K5`, [["beside"]]);
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem(SHEET).getRange("B181").format.fill.color = "#FFFF00";
    await context.sync();
    wb.stats.cellsWritten = 0;
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(edited(base, "Renamed")), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    expect(report.delta).toMatchObject({ strategy: "delta", matchedBy: "key", added: 3, changed: 1, removed: 3 });
    // 1 changed cell + 3 rows × 8 columns, plus the info line and the fingerprint log.
    expect(report.delta?.cellsWritten).toBe(1 + 3 * 8);
    // Project 179 was on sheet row 181; three rows removed above it and three added: still row 181.
    expect(inspect(wb, `'${SHEET}'!A181:B181`).values).toEqual([["179", "Project 178"]]);
    expect(dataSheet(wb).fills).toEqual([["180,1", "#FFFF00"]]);
    expect(inspect(wb, `'${SHEET}'!B152`).values).toEqual([["Renamed"]]);
    expect(inspect(wb, `'${SHEET}'!A210`).values).toEqual([["note under"]]);
    expect(inspect(wb, `'${SHEET}'!K5`).values).toEqual([["beside"]]);
  });

  it("overwrites a data cell the user typed over on an unchanged row, as a full rewrite would", async () => {
    const base = finRows(200);
    const { wb } = await imported(base);
    seed(wb, `'${SHEET}'!B100`, [["typed by the user"]]);
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(edited(base, "Renamed")), { applyQuery: noQuery, now: later });
    expect(report.delta?.strategy).toBe("delta");
    // Row 100 held project 98; three rows removed above it and three added: it is still there, with its name back.
    expect(inspect(wb, `'${SHEET}'!A100:B100`).values).toEqual([["98", "Project 97"]]);
    expect(JSON.stringify(dataSheet(wb).cells)).not.toContain("typed by the user");
  });

  it.each(["a table", "merged cells", "a PivotTable", "an array formula"])("is written with %s below the table in the same columns: no row is inserted or deleted (issue #21)", async (what) => {
    const base = finRows(20);
    const { wb } = await imported(base);
    const context = createEmulatedContext(wb);
    const sheet = context.workbook.worksheets.getItem(SHEET);
    if (what === "a table") {
      sheet.getRange("A40:B41").values = [["x", "y"], [1, 2]];
      sheet.tables.add(sheet.getRange("A40:B41"), true).name = "Below";
    } else if (what === "merged cells") sheet.getRange("A40:C40").merge();
    await context.sync();
    if (what === "a PivotTable") wb.addObstacle(SHEET, "A40:D45", "pivot");
    if (what === "an array formula") wb.addObstacle(SHEET, "A40:A42", "array", "=B3:B5*2");
    // Row 3 renamed, row 6 removed, a new record after row 10: rows move, nothing shifts on the sheet.
    const rows = base.map((r) => [...r]);
    rows[2][1] = "Renamed";
    rows.splice(5, 1);
    rows.splice(10, 0, [1000, "New", 1.5, 1, "2024-01-01", "2024-03-10T00:15:00Z", true, "1"]);
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("updated");
    expect(report.delta?.strategy).toBe("delta");
    expect(inspect(wb, `'${SHEET}'!A3:A22`).values.map((r) => r[0])).toEqual(rows.map((r) => String(r[0])));
  });

  it("a delta Excel refuses falls back to a full rewrite; when that fails too the table (2 more rows) is restored exactly: rows, values, formats, fills, cells under the table, and the info line says so", async () => {
    // Requests over 25,000 bytes fail: the changed cell below is over that, the rows before it are not.
    const base = finRows(200);
    const { wb } = await imported(base, {}, { payloadLimitBytes: 25_000 });
    seed(wb, `'${SHEET}'!A210`, [["note under"]]);
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem(SHEET).getRange("B181").format.fill.color = "#FFFF00";
    await context.sync();
    const before = dataSheet(wb);
    const tablesBefore = toWorkbookFile(wb).tables;
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(edited(base, "y".repeat(30_000), 5)), { applyQuery: noQuery, now: later, targetRequestBytes: 10_000 });
    expect(report.outcome).toBe("failed");
    expect(report.failure?.code).toBe("payload_too_large");
    expect(report.failure?.message).toMatch(/previous data was restored/);
    const after = dataSheet(wb);
    expect(toWorkbookFile(wb).tables).toEqual(tablesBefore);
    const notInfo = (cells: typeof before.cells) => cells.filter((c) => !(c.r === 0 && c.c === 0));
    expect(notInfo(after.cells)).toEqual(notInfo(before.cells));
    expect(after.fills).toEqual(before.fills);
    expect(String(inspect(wb, `'${SHEET}'!A1`).values[0][0])).toMatch(/^PPM · ⚠ Not refreshed: Row 152 alone is larger than Excel accepts in one request\. The previous data was restored\. \(payload_too_large\), 2026-02-01 08:00 UTC · dataset financials \(json\) · generated 2026-01-01 00:00 UTC/);
    // The next refresh (without the oversized cell) goes through.
    const again = await refreshTable(createRequestContext(wb), "b1", keyed(edited(base, "Renamed")), { applyQuery: noQuery, now: later, targetRequestBytes: 10_000 });
    expect(again.outcome).toBe("updated");
    expect(inspect(wb, `'${SHEET}'!B152`).values).toEqual([["Renamed"]]);
  });
});
