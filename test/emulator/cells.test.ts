/**
 * The dense cell storage (`cells.ts`): what the Map-per-cell model guaranteed must still hold —
 * formats written over a range stay per cell even though rows share their format arrays, far-apart
 * cells are found in row-major order, moved cells keep everything they held.
 */
import { Workbook, createExcelNamespace, inspect, seed, serializeWorkbook, loadWorkbook } from "../../src/emulator";

test("a format written over a range, then changed in one cell, changes only that cell", async () => {
  const wb = new Workbook({ currentYear: 2025 });
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1:C4").numberFormat = [["0.00"]];
    s.getRange("B2").numberFormat = [["@"]];
    s.getRange("C3").numberFormat = [[""]];
    s.getRange("A1:C4").values = [
      [1, 2, 3],
      [4, "0005", 6],
      [7, 8, "0009"],
      [10, 11, 12],
    ];
    await context.sync();
  });
  expect(inspect(wb, "A1:C4").numberFormat).toEqual([
    ["0.00", "0.00", "0.00"],
    ["0.00", "@", "0.00"],
    ["0.00", "0.00", "General"],
    ["0.00", "0.00", "0.00"],
  ]);
  // B2 is text-formatted, so "0005" stays text; C3 is General again, so "0009" is typed input.
  expect(inspect(wb, "B2:C3").values).toEqual([["0005", 6], [8, 9]]);
  expect(inspect(wb, "A4").text).toEqual([["10.00"]]);
});

test("clearing formats of one row leaves the rows that shared its formats alone", async () => {
  const wb = new Workbook();
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1:B3").numberFormat = [["0%"]];
    s.getRange("A2:B2").clear("Formats");
    await context.sync();
  });
  expect(inspect(wb, "A1:B3").numberFormat).toEqual([["0%", "0%"], ["General", "General"], ["0%", "0%"]]);
});

test("cells far apart (first and last row, last column) are stored, saved and found in row-major order", () => {
  const wb = new Workbook();
  seed(wb, "XFD1048576", [["last"]]);
  seed(wb, "A1", [["first"]]);
  seed(wb, "C500000", [[3]]);
  const s = wb.sheets[0];
  expect(wb.usedRect(s)).toEqual({ r0: 0, c0: 0, r1: 1_048_575, c1: 16_383 });
  const seen: string[] = [];
  wb.forEachStoredCell(s, { r0: 0, c0: 0, r1: 1_048_575, c1: 16_383 }, (r, c, cell) => seen.push(`${r},${c},${typeof cell.v === "object" ? JSON.stringify(cell.v) : String(cell.v)}`));
  expect(seen).toEqual(["0,0,first", "499999,2,3", "1048575,16383,last"]);
  const reopened = loadWorkbook(serializeWorkbook(wb));
  expect(inspect(reopened, "XFD1048576").values).toEqual([["last"]]);
  expect(inspect(reopened, "C500000").values).toEqual([[3]]);
});

test("inserted table rows move values, formulas and formats together", async () => {
  const wb = new Workbook();
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("B2:B3").numberFormat = [["0.0"]];
    s.getRange("A1:B3").values = [["k", "v"], ["a", 1], ["b", 2]];
    s.getRange("C3").formulas = [["=B3*2"]];
    const t = context.workbook.tables.add("A1:B3", true);
    t.rows.add(0, [["z", 9]]);
    await context.sync();
  });
  expect(inspect(wb, "A2:B4").values).toEqual([["z", 9], ["a", 1], ["b", 2]]);
  expect(inspect(wb, "B3:B4").numberFormat).toEqual([["0.0"], ["0.0"]]);
  // C3 is outside the table's columns: it stays, and still points at B3 (now "a"'s value).
  expect(inspect(wb, "C3").formulas).toEqual([["=B3*2"]]);
  expect(inspect(wb, "C3").values).toEqual([[2]]);
});
