/**
 * Issue #34, item 4: a cell read back (`formulas`, `values`, `numberFormat`) and written again holds
 * what it held. The formulas getter drops a quote prefix (office-js #6687), so every path that writes
 * read-back cells (a record's user cells moving with it under co-authoring, their restore, the totals
 * row, what a colleague typed where the table grows, write-back's held edits) goes through
 * `rewritableCell`. Round trips through Microsoft's library and the emulated host, in a General, a
 * date-formatted and a text-formatted cell.
 */
import { Workbook, createExcelNamespace, inspect } from "../../src/emulator";
import { rewritableCell, textNeedsQuote } from "../../src/workbook/cells";

test("which texts Excel would read as something else when typed into a cell that is not text", () => {
  for (const t of ["00123", "1/2", "=x", "+1", "-a", "@x", "'quoted", "#N/A", "12%", "1E5", "TRUE", " false ", "2025-01-31", "13:45", "note 2", "＝SUM(A1)", "＋1", "－a", "＠x", "\u00a0=x"]) expect([t, textNeedsQuote(t)]).toEqual([t, true]);
  for (const t of ["note", "call Bob", "x y", "", "Wahr", "n/a"]) expect([t, textNeedsQuote(t)]).toEqual([t, false]);
});

test("what is written back: formulas as formulas, text as text (quote-prefixed where the format would parse it), values as they are", () => {
  expect(rewritableCell("=A1*2", 4, "General")).toBe("=A1*2");
  expect(rewritableCell("=x", "=x", "General")).toBe("'=x");
  expect(rewritableCell("=x", "=x", "@")).toBe("=x");
  expect(rewritableCell("00123", "00123", "General")).toBe("'00123");
  expect(rewritableCell("00123", "00123", "@")).toBe("00123");
  expect(rewritableCell("a note", "a note", "General")).toBe("a note");
  expect(rewritableCell(123, 123, "0")).toBe(123);
  expect(rewritableCell(true, true, "General")).toBe(true);
  expect(rewritableCell("", "", "General")).toBe("");
  // Values not read (a data row kept from the plan): a string starting with "=" is taken as a formula.
  expect(rewritableCell("=SUM(A1)", undefined, "General")).toBe("=SUM(A1)");
});

test.each([["General"], ["m/d/yyyy"], ["@"]])("a round trip through Excel keeps every kind of cell (%s)", async (format) => {
  const wb = new Workbook({ currentYear: 2025 });
  const typed = ["'00123", "'1/2", "'=x", "''twice", "=1+1", "7", "a note", "TRUE"];
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:H1");
    r.numberFormat = [typed.map(() => format)];
    r.values = [typed];
    await context.sync();
  });
  const before = inspect(wb, "A1:H1");
  await Excel.run(async (context) => {
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    const from = sheet.getRange("A1:H1");
    from.load("formulas,values,numberFormat");
    await context.sync();
    const to = sheet.getRange("A2:H2");
    to.numberFormat = from.numberFormat;
    to.formulas = [from.formulas[0].map((f, c) => rewritableCell(f, from.values[0][c], from.numberFormat[0][c]))] as string[][];
    await context.sync();
  });
  const after = inspect(wb, "A2:H2");
  expect({ values: after.values, types: after.valueTypes, formulas: after.formulas }).toEqual({ values: before.values, types: before.valueTypes, formulas: before.formulas });
});
