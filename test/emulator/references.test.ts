/**
 * Issue #21: what moves when cells are inserted or deleted (formulas, defined names and conditional
 * formats on any sheet follow their cells; deleted cells become #REF!), what Excel refuses to shift
 * through (merged cells, PivotTables, array formulas), and Clear All resetting a cell's format.
 */
import { Workbook, createEmulatedContext, inspect, loadWorkbook, seed, serializeWorkbook, snapshot } from "../../src/emulator";

async function dataAndReport() {
  const wb = new Workbook({ currentYear: 2025 });
  const context = createEmulatedContext(wb);
  context.workbook.worksheets.getItem("Sheet1").name = "Data";
  context.workbook.worksheets.add("Report");
  await context.sync();
  seed(wb, "Data!A1:B6", [["id", "v"], [1, 10], [2, 20], [3, 30], [4, 40], [5, 50]]);
  return { wb, context, data: context.workbook.worksheets.getItem("Data") };
}

const formulaAt = (wb: Workbook, address: string) => inspect(wb, address).formulas[0][0];

describe("references follow inserted and deleted cells (any sheet)", () => {
  it("a formula on another sheet follows its cell down an insert and shows #REF! once the cell is deleted", async () => {
    const { wb, context, data } = await dataAndReport();
    seed(wb, "Report!A1:A3", [["=Data!B4"], ["=SUM(Data!B2:B6)"], ["='Data'!$B$6*2"]]);
    expect(inspect(wb, "Report!A1:A3").values).toEqual([[30], [150], [100]]);
    data.getRange("A3:B3").insert("Down");
    await context.sync();
    expect(inspect(wb, "Report!A1:A3").formulas).toEqual([["=Data!B5"], ["=SUM(Data!B2:B7)"], ["='Data'!$B$7*2"]]);
    expect(inspect(wb, "Report!A1:A3").values).toEqual([[30], [150], [100]]);
    data.getRange("A5:B5").delete("Up");
    await context.sync();
    expect(inspect(wb, "Report!A1:A3").formulas).toEqual([["=Data!#REF!"], ["=SUM(Data!B2:B6)"], ["='Data'!$B$6*2"]]);
    expect(inspect(wb, "Report!A1:A2").values).toEqual([["#REF!"], [120]]);
  });

  it("a reference above the insertion point stays; one to columns outside the shifted ones stays", async () => {
    const { wb, context, data } = await dataAndReport();
    seed(wb, "Data!D4", [["=B2+B5"]]);
    seed(wb, "Data!E1", [["=SUM(B2:C6)"]]);
    data.getRange("B3:B3").insert("Down");
    await context.sync();
    // D4 did not move (column D is not shifted); B5 moved to B6, B2 did not move.
    expect(formulaAt(wb, "Data!D4")).toBe("=B2+B6");
    // B2:C6 is only partly in the shifted column: left as it is (Excel's rule there is not documented).
    expect(formulaAt(wb, "Data!E1")).toBe("=SUM(B2:C6)");
  });

  it("a moved formula keeps pointing at what it pointed at", async () => {
    const { wb, context, data } = await dataAndReport();
    seed(wb, "Data!C2:C6", [["=B2*2"], ["=B3*2"], ["=B4*2"], ["=B5*2"], ["=$A$1"]]);
    data.getRange("A3:C4").delete("Up");
    await context.sync();
    expect(inspect(wb, "Data!C2:C4").formulas).toEqual([["=B2*2"], ["=B3*2"], ["=$A$1"]]);
    expect(inspect(wb, "Data!C2:C3").values).toEqual([[20], [80]]);
  });

  it("defined names (workbook.names.add, NamedItem.formula) follow their cells and evaluate where used", async () => {
    const { wb, context, data } = await dataAndReport();
    context.workbook.names.add("Fourth", data.getRange("B5"));
    context.workbook.names.add("Values", "=Data!$B$2:$B$6");
    await context.sync();
    seed(wb, "Report!B1:B2", [["=Fourth*2"], ["=SUM(Values)"]]);
    expect(inspect(wb, "Report!B1:B2").values).toEqual([[80], [150]]);
    data.getRange("A2:B2").insert("Down");
    await context.sync();
    const names = context.workbook.names;
    names.load("items/name,items/formula");
    await context.sync();
    expect(names.items.map((n) => [n.name, n.formula as string])).toEqual([["Fourth", "=Data!$B$6"], ["Values", "=Data!$B$3:$B$7"]]);
    expect(inspect(wb, "Report!B1:B2").values).toEqual([[80], [150]]);
    data.getRange("A6:B6").delete("Up");
    await context.sync();
    expect(wb.nameFormula("Fourth", null)).toBe("=Data!#REF!");
    expect(inspect(wb, "Report!B1:B2").values).toEqual([["#REF!"], [110]]);
    // Saved with the file.
    expect(loadWorkbook(serializeWorkbook(wb)).nameFormula("Values", null)).toBe("=Data!$B$3:$B$6");
  });

  it("conditional formats on another sheet whose rule points in follow too", async () => {
    const { wb, context } = await dataAndReport();
    const report = context.workbook.worksheets.getItem("Report");
    const cf = report.getRange("A1:A5").conditionalFormats.add("Custom");
    cf.custom.rule.formula = "=Data!$B2>25";
    cf.custom.format.fill.color = "#FFEB9C";
    await context.sync();
    context.workbook.worksheets.getItem("Data").getRange("A2:B3").delete("Up");
    await context.sync();
    expect(snapshot(wb).sheets.find((s) => s.name === "Report")!.conditionalFormats).toEqual([{ id: expect.any(String) as unknown, address: "A1:A5", formula: "=Data!#REF!>25", fill: "#FFEB9C" }]);
  });
});

describe("cells Excel will not shift through", () => {
  it.each([
    ["merged", /merged cell/],
    ["pivot", /PivotTable/],
    ["array", /part of an array/],
  ] as const)("%s: an insert or delete moving any of its cells is refused (InvalidOperation), nothing changes", async (kind, message) => {
    const { wb, context, data } = await dataAndReport();
    if (kind === "merged") {
      data.getRange("A9:B9").merge();
      await context.sync();
    } else wb.addObstacle("Data", "A9:B10", kind, kind === "array" ? "=B2:B3*2" : undefined);
    const before = serializeWorkbook(wb);
    data.getRange("A3:B3").insert("Down");
    const e = await context.sync().then(() => null, (x: unknown) => x as { code: string; message: string });
    expect(e?.code).toBe("InvalidOperation");
    expect(e?.message).toMatch(message);
    expect(serializeWorkbook(wb)).toBe(before);
    // Cells beside it (other columns) still move.
    data.getRange("D3").insert("Down");
    await context.sync();
  });

  it("unmerge lets the cells move again", async () => {
    const { wb, context, data } = await dataAndReport();
    data.getRange("A9:B9").merge();
    await context.sync();
    // Merged: the delete that would move A9:B9 is refused, nothing moves.
    data.getRange("A3:B3").delete("Up");
    expect(await context.sync().then(() => null, (x: unknown) => (x as { code: string }).code)).toBe("InvalidOperation");
    expect(inspect(wb, "Data!A3:B4").values).toEqual([[2, 20], [3, 30]]);
    // Unmerged (issue #34, item 7: this test asserted nothing): the same delete moves the cells below up.
    data.getRange("A9:B9").unmerge();
    data.getRange("A3:B3").delete("Up");
    await context.sync();
    expect(inspect(wb, "Data!A3:B5").values).toEqual([[3, 30], [4, 40], [5, 50]]);
    expect(inspect(wb, "Data!A6:B6").values).toEqual([["", ""]]);
  });
});

describe("Clear All", () => {
  it("resets the number format to General, so typed input is parsed again (docs: Range.clear, ClearApplyTo.all)", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const context = createEmulatedContext(wb);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B1");
    r.numberFormat = [["@", "@"]];
    r.values = [["00317", "=SUM(A1)"]];
    await context.sync();
    expect(inspect(wb, "A1:B1").valueTypes).toEqual([["String", "String"]]);
    r.clear("All");
    await context.sync();
    expect(inspect(wb, "A1:B1").numberFormat).toEqual([["General", "General"]]);
    r.values = [["00317", "=1+1"]];
    await context.sync();
    expect(inspect(wb, "A1:B1").values).toEqual([[317, 2]]);
  });
});

describe("eager calculation (for bench/calculation.ts)", () => {
  it("after each batch that changed cells, the formulas reading that sheet are recalculated, unless API calculation was suspended", async () => {
    const wb = new Workbook({ currentYear: 2025, eagerCalculation: true });
    wb.addSheet("Other");
    seed(wb, "Sheet1!B1:B2", [["=A1*2"], ["=SUM(A1:A3)"]]);
    seed(wb, "Other!A1", [["=Sheet1!A1+1"]]);
    seed(wb, "Other!B1", [["=C1"]]);
    const context = createEmulatedContext(wb);
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    sheet.getRange("A1").values = [[5]];
    await context.sync();
    expect(wb.stats.formulaEvaluations).toBe(3);
    sheet.getRange("A2").values = [[6]];
    context.application.suspendApiCalculationUntilNextSync();
    await context.sync();
    expect(wb.stats.formulaEvaluations).toBe(3);
    context.application.calculate("Recalculate");
    await context.sync();
    expect(wb.stats.formulaEvaluations).toBe(7);
    expect(inspect(wb, "Sheet1!B2").values).toEqual([[11]]);
  });
});
