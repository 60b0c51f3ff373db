/**
 * Issue #34: calculation as the host models it. `Range.calculate` (ExcelApi 1.6, "Calculates a range
 * of cells on a worksheet") and `Worksheet.calculate(markAllDirty)` ("Calculates all cells on a
 * worksheet") calculate what they name, in manual mode too, and nothing else; `Application.calculate`
 * calculates everything. A suspended API calculation keeps every formula's result until one of them is
 * asked for. The host records every calculation (`stats.calculations`).
 */
import { Workbook, createExcelNamespace, inspect, seed } from "../../src/emulator";

async function batch(wb: InstanceType<typeof Workbook>, f: (context: Excel.RequestContext) => void): Promise<void> {
  await createExcelNamespace(wb).run(async (context) => {
    f(context);
    await context.sync();
  });
}

function manualBook() {
  const wb = new Workbook({ currentYear: 2025 });
  wb.addSheet("Other");
  seed(wb, "Sheet1!A1:D1", [[1, "=A1*10", "=B1+1", "=A1+100"]]);
  seed(wb, "Other!A1", [["=Sheet1!A1*2"]]);
  return wb;
}

test("manual mode: Range.calculate recalculates its cells (a formula of the range reading another of it gets the new value), nothing else", async () => {
  const wb = manualBook();
  await batch(wb, (c) => void (c.application.calculationMode = "Manual"));
  expect(inspect(wb, "Sheet1!B1:D1").values).toEqual([[10, 11, 101]]);
  seed(wb, "Sheet1!A1", [[5]]);
  expect(inspect(wb, "Sheet1!B1:D1").values).toEqual([[10, 11, 101]]);
  await batch(wb, (c) => c.workbook.worksheets.getItem("Sheet1").getRange("B1:C1").calculate());
  expect(inspect(wb, "Sheet1!B1:D1").values).toEqual([[50, 51, 101]]);
  expect(inspect(wb, "Other!A1").values).toEqual([[2]]);
  expect(wb.stats.calculations).toEqual(["range Sheet1!B1:C1"]);
  expect(wb.stats.calculateCalls).toBe(0);
});

test("manual mode: Worksheet.calculate recalculates that sheet only; Application.calculate everything (and is recorded as such)", async () => {
  const wb = manualBook();
  await batch(wb, (c) => void (c.application.calculationMode = "Manual"));
  seed(wb, "Sheet1!A1", [[5]]);
  await batch(wb, (c) => c.workbook.worksheets.getItem("Other").calculate(false));
  expect(inspect(wb, "Other!A1").values).toEqual([[10]]);
  expect(inspect(wb, "Sheet1!D1").values).toEqual([[101]]);
  await batch(wb, (c) => c.application.calculate("Recalculate"));
  expect(inspect(wb, "Sheet1!D1").values).toEqual([[105]]);
  expect(wb.stats.calculations).toEqual(["worksheet Other", "application Recalculate"]);
});

test("a suspended API calculation: formulas keep their results until a calculation names them (the range's; the worksheet's, which ends the wait for that sheet)", async () => {
  const wb = manualBook();
  await batch(wb, (c) => {
    c.application.suspendApiCalculationUntilNextSync();
    c.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [[7]];
  });
  expect(inspect(wb, "Sheet1!B1:D1").values).toEqual([[10, 11, 101]]);
  await batch(wb, (c) => c.workbook.worksheets.getItem("Sheet1").getRange("D1").calculate());
  expect(inspect(wb, "Sheet1!B1:D1").values).toEqual([[10, 11, 107]]);
  // A later automatic change does not pick the suspended one up (the stricter reading, model.ts).
  await batch(wb, (c) => void (c.workbook.worksheets.getItem("Other").getRange("B1").values = [["later"]]));
  expect(inspect(wb, "Other!A1").values).toEqual([[2]]);
  await batch(wb, (c) => c.workbook.worksheets.getItem("Other").calculate(false));
  expect(inspect(wb, "Other!A1").values).toEqual([[14]]);
  // Once its sheet was calculated, a formula there is automatic again.
  seed(wb, "Sheet1!A1", [[8]]);
  expect(inspect(wb, "Other!A1").values).toEqual([[16]]);
  expect(inspect(wb, "Sheet1!B1").values).toEqual([[10]]);
});
