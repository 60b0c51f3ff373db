/**
 * `Range.conditionalFormats` in the emulator (ExcelApi 1.6, issue #15's "Show changes"): custom rules,
 * their fill, evaluation per cell, the formula relative to the range it is reached through, delete,
 * getRange, the saved file, and `Worksheet.delete` of a very hidden sheet.
 */
import { Workbook, createEmulatedContext, loadWorkbook, serializeWorkbook, snapshot, seed } from "../../src/emulator";

/** Sheet1!B2:D4 holds 1…9; sheet "mask" (very hidden) marks B1 and C3 with 1, row 2 with 2. */
async function setUp() {
  const wb = new Workbook({});
  const context = createEmulatedContext(wb);
  const sheet = context.workbook.worksheets.getItem("Sheet1");
  sheet.getRange("B2:D4").values = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
  const mask = context.workbook.worksheets.add("mask");
  mask.getRange("A1:C3").values = [[1, 0, 0], [2, 2, 2], [0, 0, 1]];
  mask.visibility = "VeryHidden";
  await context.sync();
  return { wb, context, sheet };
}

const cfFill = (wb: Workbook, address: string) => {
  const cell = snapshot(wb).sheets.find((s) => s.name === "Sheet1")!.cells.find((c) => c.address === address);
  return cell?.conditionalFill ?? null;
};

describe("conditional formats (custom rules)", () => {
  it("add puts a custom format over the range; its rule is evaluated per cell relative to the top-left cell", async () => {
    const { wb, context, sheet } = await setUp();
    const changed = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    changed.custom.rule.formula = "=mask!A1=1";
    changed.custom.format.fill.color = "#FFEB9C";
    const added = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    added.custom.rule.formula = "='mask'!A1=2";
    added.custom.format.fill.color = "#c6efce";
    await context.sync();
    const fills = ["B2", "C2", "B3", "D3", "D4", "C4"].map((a) => cfFill(wb, a));
    expect(fills).toEqual(["#FFEB9C", null, "#C6EFCE", "#C6EFCE", "#FFEB9C", null]);
    // The cells' own fill is not touched (it reads as No Fill).
    const own = sheet.getRange("B2:D4").format.fill;
    own.load("color,tintAndShade");
    await context.sync();
    expect([own.color, own.tintAndShade]).toEqual(["#FFFFFF", null]);
  });

  it("items are the formats overlapping the range, newest first; type, priority, formula, fill read back", async () => {
    const { context, sheet } = await setUp();
    const a = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    a.custom.rule.formula = "=B2>4";
    a.custom.format.fill.color = "#FF0000";
    const b = sheet.getRange("F1").conditionalFormats.add("Custom");
    b.custom.rule.formula = "=TRUE";
    const over = sheet.getRange("C3").conditionalFormats;
    over.load("items/type,items/priority");
    const all = sheet.getRange("A1:F9").conditionalFormats;
    all.load("items/id");
    const count = all.getCount();
    await context.sync();
    expect(over.items.map((i) => [i.type, i.priority])).toEqual([["Custom", 0]]);
    // eslint-disable-next-line office-addins/load-object-before-read -- a ClientResult (getCount) is read after sync, not loaded
    expect(count.value).toBe(2);
    // Newest first: the F1 format was added last, at the top priority.
    const r = all.items[0].getRange();
    r.load("address");
    const rule = all.items[1].custom.rule;
    rule.load("formula");
    const fill = all.items[1].custom.format.fill;
    fill.load("color");
    await context.sync();
    expect(r.address).toBe("Sheet1!F1");
    // Read through A1:F9, the rule is given for A1 (office-js #5194: relative to the fetching range).
    expect(rule.formula).toBe("=A1>4");
    expect(fill.color).toBe("#FF0000");
  });

  it("a formula written through another range is taken relative to that range's top-left cell (office-js #5194)", async () => {
    const { wb, context, sheet } = await setUp();
    const cf = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    cf.custom.rule.formula = "=B2=5";
    cf.custom.format.fill.color = "#00FF00";
    await context.sync();
    // Fetched through D4, "=D4" means "this cell": every cell now tests itself against 9, which for
    // the format's own top-left cell reads "=B2=9".
    const viaD4 = sheet.getRange("D4").conditionalFormats.getItemAt(0);
    viaD4.custom.rule.formula = "=D4=9";
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats.map((c) => c.formula)).toEqual(["=B2=9"]);
    expect([cfFill(wb, "D4"), cfFill(wb, "C3")]).toEqual(["#00FF00", null]);
  });

  it("delete removes exactly that format; a deleted one fails at sync", async () => {
    const { wb, context, sheet } = await setUp();
    const keep = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    keep.custom.rule.formula = "=B2>8";
    keep.custom.format.fill.color = "#0000FF";
    const drop = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    drop.custom.rule.formula = "=TRUE";
    drop.custom.format.fill.color = "#FF0000";
    await context.sync();
    expect(cfFill(wb, "B2")).toBe("#FF0000");
    drop.delete();
    await context.sync();
    expect([cfFill(wb, "B2"), cfFill(wb, "D4")]).toEqual([null, "#0000FF"]);
    drop.delete();
    await expect(context.sync()).rejects.toMatchObject({ code: "ItemNotFound" });
  });

  it("stopIfTrue ends the search; a rule without fill applies nothing; errors and text never apply", async () => {
    const { wb, context, sheet } = await setUp();
    seed(wb, "Sheet1!B2", [["text"]]);
    const low = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    low.custom.rule.formula = "=TRUE";
    low.custom.format.fill.color = "#FF0000";
    const top = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    top.custom.rule.formula = "=B2";
    top.stopIfTrue = true;
    await context.sync();
    // B2 holds text (not applied → the lower format's fill); C2 holds 2 (applies, no fill, stops).
    expect([cfFill(wb, "B2"), cfFill(wb, "C2")]).toEqual(["#FF0000", null]);
    const bad = sheet.getRange("B2").conditionalFormats.add("Custom");
    bad.custom.rule.formula = "=1/0";
    bad.custom.format.fill.color = "#00FF00";
    await context.sync();
    expect(cfFill(wb, "B2")).toBe("#FF0000");
  });

  it("refuses types other than Custom, rules that are not formulas and named colours (stricter)", async () => {
    const { context, sheet } = await setUp();
    sheet.getRange("B2").conditionalFormats.add("DataBar");
    await expect(context.sync()).rejects.toMatchObject({ code: "InvalidArgument" });
    const cf = sheet.getRange("B2").conditionalFormats.add("Custom");
    await context.sync();
    cf.custom.rule.formula = "B2>1";
    await expect(context.sync()).rejects.toMatchObject({ code: "InvalidArgument" });
    cf.custom.format.fill.color = "yellow";
    await expect(context.sync()).rejects.toMatchObject({ code: "InvalidArgument" });
  });

  it("properties must be loaded before they are read", async () => {
    const { context, sheet } = await setUp();
    const cfs = sheet.getRange("B2").conditionalFormats;
    const cf = cfs.add("Custom");
    await context.sync();
    expect(() => cf.type).toThrow(/not available/);
    expect(() => cfs.items).toThrow(/not available/);
  });

  it("travel with the saved file", async () => {
    const { wb, context, sheet } = await setUp();
    const cf = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    cf.custom.rule.formula = "='mask'!A1=2";
    cf.custom.format.fill.color = "#C6EFCE";
    await context.sync();
    const again = loadWorkbook(serializeWorkbook(wb));
    expect(snapshot(again).sheets[0].conditionalFormats).toEqual(snapshot(wb).sheets[0].conditionalFormats);
    expect(cfFill(again, "C3")).toBe("#C6EFCE");
    expect(() => loadWorkbook(serializeWorkbook(wb).replace('"fill":"#C6EFCE"', '"fill":"green"'))).toThrow(/conditional format .* malformed/);
  });

  it("move and resize with Range.insert / delete like any reference to the cells (issue #21); deleted with all their cells", async () => {
    const { wb, context, sheet } = await setUp();
    const cf = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    cf.custom.rule.formula = "=$B2>0";
    cf.custom.format.fill.color = "#FF0000";
    await context.sync();
    sheet.getRange("A1:E1").insert("Down");
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats.map((c) => [c.address, c.formula])).toEqual([["B3:D5", "=$B3>0"]]);
    sheet.getRange("A4:E4").delete("Up");
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats.map((c) => [c.address, c.formula])).toEqual([["B3:D4", "=$B3>0"]]);
    sheet.getRange("A3:E4").delete("Up");
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats).toEqual([]);
  });
});

describe("Worksheet.delete and conditional formats", () => {
  it("a very hidden sheet cannot be deleted until it is made hidden or visible (docs: Worksheet.delete)", async () => {
    const { wb, context } = await setUp();
    context.workbook.worksheets.getItem("mask").delete();
    await expect(context.sync()).rejects.toMatchObject({ code: "InvalidOperation" });
    const mask = context.workbook.worksheets.getItem("mask");
    mask.visibility = "Hidden";
    mask.delete();
    await context.sync();
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1"]);
  });

  it("a format naming a deleted sheet loses the reference (#REF!) and applies nowhere", async () => {
    const { wb, context, sheet } = await setUp();
    const cf = sheet.getRange("B2:D4").conditionalFormats.add("Custom");
    cf.custom.rule.formula = "='mask'!A1=1";
    cf.custom.format.fill.color = "#FFEB9C";
    await context.sync();
    const mask = context.workbook.worksheets.getItem("mask");
    mask.visibility = "Hidden";
    mask.delete();
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats.map((c) => c.formula)).toEqual(["=#REF!=1"]);
    expect(cfFill(wb, "B2")).toBeNull();
  });
});
