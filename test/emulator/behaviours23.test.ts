/**
 * Issue #23 item 4: documented behaviours of Excel the host lacked, each through Microsoft's own
 * client library (sources in src/emulator/README.md, "Behaviours added with the host"). The ones
 * issue #21 adds to the model (references adjusting on insert/delete, #REF!, stale dependents under
 * suspended calculation, values null above 5 million cells) are tested with #21.
 */
import { Workbook, createExcelNamespace, createRequestContext, inspect, loadWorkbook, seed, serializeWorkbook, snapshot } from "../../src/emulator";
import { failure } from "./helpers";

const newWorkbook = () => new Workbook({ currentYear: 2025, platform: "web" });


describe("Range.copyFrom tiles a source over a larger destination", () => {
  it("a 2x2 source into a 2x6 destination gives 3 copies (formulas moved per copy)", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B2", [[1, "=A1*10"], ["x", "=A2&\"!\""]]);
    const context = createRequestContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("D1:I2").copyFrom("A1:B2", "All");
    await context.sync();
    expect(inspect(wb, "D1:I2").values).toEqual([
      [1, 10, 1, 10, 1, 10],
      ["x", "x!", "x", "x!", "x", "x!"],
    ]);
    expect(inspect(wb, "I1").formulas).toEqual([["=H1*10"]]);
    expect(wb.stats.copyFromCalls).toBe(1);
  });

  it("a destination that is no multiple of the source gets one copy at its top-left cell", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B2", [[1, 2], [3, 4]]);
    const context = createRequestContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("D1:H2").copyFrom("A1:B2", "Values");
    await context.sync();
    expect(inspect(wb, "D1:H2").values).toEqual([[1, 2, "", "", ""], [3, 4, "", "", ""]]);
  });

  it("tiles in both directions (2x2 into 4x4 is 4 copies)", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B2", [["a", "b"], ["c", "d"]]);
    const context = createRequestContext(wb);
    const source = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B2");
    context.workbook.worksheets.getItem("Sheet1").getRange("D4:G7").copyFrom(source, "Values");
    await context.sync();
    expect(inspect(wb, "D4:G7").values).toEqual([["a", "b", "a", "b"], ["c", "d", "c", "d"], ["a", "b", "a", "b"], ["c", "d", "c", "d"]]);
  });
});

describe("Range.insert with shift Right and Range.delete with shift Left", () => {
  it("insert Right moves the cells of the range's rows right by its width, formulas translated; other rows stay", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:D3", [[1, 2, 3, "=C1*2"], [5, 6, 7, 8], [9, 10, 11, 12]]);
    const context = createRequestContext(wb);
    const inserted = context.workbook.worksheets.getItem("Sheet1").getRange("B1:C2").insert("Right");
    inserted.load("address");
    await context.sync();
    expect(inserted.address).toBe("Sheet1!B1:C2");
    expect(inspect(wb, "A1:F3").values).toEqual([
      [1, "", "", 2, 3, 6],
      [5, "", "", 6, 7, 8],
      [9, 10, 11, 12, "", ""],
    ]);
    expect(inspect(wb, "F1").formulas).toEqual([["=E1*2"]]);
  });

  it("delete Left removes the cells and pulls the rest of their rows left", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:E2", [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]);
    const context = createRequestContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("B1:C1").delete("Left");
    await context.sync();
    expect(inspect(wb, "A1:E2").values).toEqual([[1, 4, 5, "", ""], [6, 7, 8, 9, 10]]);
  });

  it("a table wholly to the right within the rows moves with the cells; part of a table is refused", async () => {
    const wb = newWorkbook();
    seed(wb, "C1:D3", [["h1", "h2"], [1, 2], [3, 4]]);
    const context = createRequestContext(wb);
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    sheet.tables.add("C1:D3", true);
    await context.sync();
    sheet.getRange("A1:A3").insert("Right");
    await context.sync();
    expect(snapshot(wb).sheets[0].tables[0].address).toBe("D1:E3");
    sheet.getRange("A2").insert("Right");
    const err = await failure(context.sync());
    expect(err.code).toBe("InvalidOperation");
    expect(err.message).toMatch(/shift cells in the table/);
  });

  it("the other directions are refused (insert Up, delete Right)", async () => {
    const wb = newWorkbook();
    const context = createRequestContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("A1").delete("Right" as never);
    expect((await failure(context.sync())).code).toBe("InvalidArgument");
  });
});

describe("Range.getRowsBelow", () => {
  it("gives the rows right below the range in its columns (one by default)", async () => {
    const wb = newWorkbook();
    const context = createRequestContext(wb);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("B2:D3");
    const one = r.getRowsBelow();
    const three = r.getRowsBelow(3);
    one.load("address");
    three.load("address");
    await context.sync();
    expect(one.address).toBe("Sheet1!B4:D4");
    expect(three.address).toBe("Sheet1!B4:D6");
    r.getRowsBelow(0).load("address");
    expect((await failure(context.sync())).code).toBe("InvalidArgument");
    context.workbook.worksheets.getItem("Sheet1").getRange("A1048576").getRowsBelow().load("address");
    expect((await failure(context.sync())).code).toBe("InvalidArgument");
  });
});

describe("worksheet-scoped names", () => {
  it("Worksheet.names.add scopes a name to the sheet; the scope reads back; a table cannot take it", async () => {
    const wb = newWorkbook();
    const context = createRequestContext(wb);
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    const local = sheet.names.add("Rates", sheet.getRange("A1:A3"));
    const global = context.workbook.names.add("Total", "=Sheet1!$B$1");
    local.load("name, scope");
    global.load("name, scope");
    await context.sync();
    expect([local.name, local.scope]).toEqual(["Rates", "Worksheet"]);
    expect([global.name, global.scope]).toEqual(["Total", "Workbook"]);
    // eslint-disable-next-line office-addins/load-object-before-read -- `names` is a navigation property (a collection object), loaded on the next line
    const names = sheet.names;
    names.load("items/name");
    const ws = local.worksheetOrNullObject;
    ws.load("name");
    await context.sync();
    expect(names.items.map((n) => n.name)).toEqual(["Rates"]);
    expect(ws.name).toBe("Sheet1");
    seed(wb, "D1:E2", [["a", "b"], [1, 2]]);
    const t = sheet.tables.add("D1:E2", true);
    t.name = "Rates";
    expect((await failure(context.sync())).code).toBe("ItemAlreadyExists");
    expect(loadWorkbook(serializeWorkbook(wb)).sheets[0].names).toEqual(["Rates"]);
  });
});

describe("ISO text typed into a General cell", () => {
  it("2018-12-31 becomes a date with Excel's default format m/d/yyyy (office-js #229)", async () => {
    const wb = newWorkbook();
    const context = createRequestContext(wb);
    const a1 = context.workbook.worksheets.getItem("Sheet1").getRange("A1");
    a1.values = [["2018-12-31"]];
    a1.load("values, numberFormat, text");
    await context.sync();
    expect(a1.values).toEqual([[43465]]);
    expect(a1.numberFormat).toEqual([["m/d/yyyy"]]);
    expect(a1.text).toEqual([["12/31/2018"]]);
  });
});

describe("calculation mode is the application's", () => {
  it("is not saved with the file: the reopened workbook calculates automatically", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B1", [[1, "=A1+1"]]);
    await createExcelNamespace(wb).run(async (context) => {
      context.application.calculationMode = "Manual";
      await context.sync();
    });
    const file = serializeWorkbook(wb);
    expect(file).not.toMatch(/calculationMode|Manual/);
    const reopened = loadWorkbook(file);
    expect(reopened.calculationMode).toBe("Automatic");
    // A file of an older emulator that stored the mode opens in the application's mode all the same.
    expect(loadWorkbook(file.replace('"activeSheetId"', '"calculationMode":"Manual","activeSheetId"')).calculationMode).toBe("Automatic");
  });
});

describe("rows.add(…, alwaysInsert false)", () => {
  async function table(wb: Workbook) {
    seed(wb, "A1:B2", [["k", "v"], [1, 2]]);
    const context = createRequestContext(wb);
    context.workbook.worksheets.getItem("Sheet1").tables.add("A1:B2", true).name = "T";
    await context.sync();
    return context;
  }

  it("takes the empty rows right below the table without shifting anything", async () => {
    const wb = newWorkbook();
    const context = await table(wb);
    seed(wb, "A6:C6", [["below", "stays", "put"]]);
    context.workbook.tables.getItem("T").rows.add(undefined, [[3, 4], [5, 6]], false);
    await context.sync();
    expect(snapshot(wb).sheets[0].tables[0].address).toBe("A1:B4");
    expect(inspect(wb, "A3:B6").values).toEqual([[3, 4], [5, 6], ["", ""], ["below", "stays"]]);
    expect(wb.stats.rowsAddCalls).toBe(1);
  });

  it("rows below that hold data are shifted down, as with true", async () => {
    const wb = newWorkbook();
    const context = await table(wb);
    seed(wb, "A3", [["occupied"]]);
    context.workbook.tables.getItem("T").rows.add(undefined, [[3, 4]], false);
    await context.sync();
    expect(inspect(wb, "A3:A4").values).toEqual([[3], ["occupied"]]);
  });

  it("with true (the default) the cells below shift even when the row is empty", async () => {
    const wb = newWorkbook();
    const context = await table(wb);
    seed(wb, "A4", [["two below"]]);
    context.workbook.tables.getItem("T").rows.add(undefined, [[3, 4]]);
    await context.sync();
    expect(inspect(wb, "A5").values).toEqual([["two below"]]);
  });
});

describe("TableRowCollection.deleteRowsAt", () => {
  it("deletes rows; on a filtered table it fails with InsertDeleteConflict and deletes nothing", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B5", [["k", "v"], [1, "a"], [2, "b"], [3, "c"], [4, "d"]]);
    const context = createRequestContext(wb);
    const t = context.workbook.worksheets.getItem("Sheet1").tables.add("A1:B5", true);
    t.rows.deleteRowsAt(1, 2);
    await context.sync();
    expect(inspect(wb, "A2:A3").values).toEqual([[1], [4]]);
    t.autoFilter.apply(t.getRange(), 0, { filterOn: "Custom", criterion1: ">1" });
    await context.sync();
    t.rows.deleteRowsAt(0);
    expect((await failure(context.sync())).code).toBe("InsertDeleteConflict");
    expect(inspect(wb, "A2:A3").values).toEqual([[1], [4]]);
  });
});

describe("a conditional format's priority", () => {
  it("can be set; the others keep a contiguous order", async () => {
    const wb = newWorkbook();
    const context = createRequestContext(wb);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B4");
    const ids: string[] = [];
    for (const f of ["=A1>1", "=A1>2", "=A1>3"]) {
      const cf = r.conditionalFormats.add("Custom");
      cf.custom.rule.formula = f;
      cf.load("id");
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one format per sync on purpose: each is added on top of the previous
      await context.sync();
      ids.push(cf.id);
    }
    // Added on top each time: the last added is priority 0.
    // eslint-disable-next-line office-addins/load-object-before-read -- a navigation property (the collection), loaded on the next line
    const before = r.conditionalFormats;
    before.load("items/id, items/priority");
    await context.sync();
    expect(before.items.map((c) => c.id)).toEqual([ids[2], ids[1], ids[0]]);
    const first = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B4").conditionalFormats.getItem(ids[0]);
    first.priority = 0;
    await context.sync();
    const after = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B4").conditionalFormats;
    after.load("items/id, items/priority");
    await context.sync();
    expect(after.items.map((c) => [c.id, c.priority])).toEqual([[ids[0], 0], [ids[2], 1], [ids[1], 2]]);
    // Beyond the bounds: the last place; negative: from the back.
    context.workbook.worksheets.getItem("Sheet1").getRange("A1:B4").conditionalFormats.getItem(ids[0]).priority = 99;
    await context.sync();
    context.workbook.worksheets.getItem("Sheet1").getRange("A1:B4").conditionalFormats.getItem(ids[1]).priority = -3;
    await context.sync();
    expect(snapshot(wb).sheets[0].conditionalFormats.map((c) => c.id)).toEqual([ids[1], ids[2], ids[0]]);
  });
});

describe("Range.getUsedRange", () => {
  it("gives ItemNotFound when nothing in the range is used; the used part otherwise", async () => {
    const wb = newWorkbook();
    seed(wb, "C3:D4", [[1, 2], [3, 4]]);
    const context = createRequestContext(wb);
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    const part = sheet.getRange("A1:C3").getUsedRange();
    part.load("address");
    await context.sync();
    expect(part.address).toBe("Sheet1!C3");
    sheet.getRange("F1:G9").getUsedRange().load("address");
    expect((await failure(context.sync())).code).toBe("ItemNotFound");
    const none = sheet.getRange("F1:G9").getUsedRangeOrNullObject();
    await context.sync();
    expect(none.isNullObject).toBe(true);
    // The worksheet's own used range of an empty sheet is A1 (documented), not an error.
    const empty = context.workbook.worksheets.add("Empty").getUsedRange();
    empty.load("address");
    await context.sync();
    expect(empty.address).toBe("Empty!A1");
  });
});
