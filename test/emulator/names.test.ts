/**
 * Issue #35: names per scope, as Excel has them, through Microsoft's own library. Source:
 * support.microsoft.com KB Q104501, "XL: Making All Identical Names in a Workbook Local": "a defined
 * name can be either global or local … Local names take precedence over global names" (a global
 * `Sales` and a local `Sheet1!Sales` coexist; on Sheet1 `=Sales` is the local one, elsewhere the
 * global one); docs Excel.Worksheet.names ("Collection of names scoped to the current worksheet") and
 * Excel.NamedItem.scope. Tables still share one namespace with names of every scope (B5).
 */
import { Workbook, createRequestContext, inspect, loadWorkbook, seed, serializeWorkbook } from "../../src/emulator";
import { failure } from "./helpers";


function start(): Workbook {
  const wb = new Workbook({ currentYear: 2025 });
  wb.addSheet("Sheet2");
  seed(wb, "Sheet1!A1", [[0.2]]);
  seed(wb, "Sheet1!B1", [[0.3]]);
  seed(wb, "Sheet2!B1", [[0.5]]);
  return wb;
}

describe("a workbook-scoped and a sheet-scoped name of the same name coexist (KB Q104501)", () => {
  it("workbook Rate and Sheet1!Rate both exist, each reads back its scope and reference; a formula on Sheet1 uses the local one, on Sheet2 the global one", async () => {
    const wb = start();
    const context = createRequestContext(wb);
    context.workbook.names.add("Rate", "=Sheet1!$A$1");
    const sheet1 = context.workbook.worksheets.getItem("Sheet1");
    sheet1.names.add("Rate", sheet1.getRange("B1"));
    await context.sync();
    const global = context.workbook.names.getItem("Rate");
    const local = sheet1.names.getItem("Rate");
    global.load("name,scope,formula");
    local.load("name,scope,formula");
    const count = context.workbook.names.getCount();
    await context.sync();
    expect([global.name, global.scope, global.formula]).toEqual(["Rate", "Workbook", "=Sheet1!$A$1"]);
    expect([local.name, local.scope, local.formula]).toEqual(["Rate", "Worksheet", "=Sheet1!$B$1"]);
    // eslint-disable-next-line office-addins/load-object-before-read -- a ClientResult, read after the sync above
    expect(count.value).toBe(1);
    seed(wb, "Sheet1!C1", [["=Rate*100"]]);
    seed(wb, "Sheet2!C1", [["=Rate*100"]]);
    expect(inspect(wb, "Sheet1!C1").values).toEqual([[30]]);
    expect(inspect(wb, "Sheet2!C1").values).toEqual([[20]]);
    // Saved with the file and read back the same.
    const again = loadWorkbook(serializeWorkbook(wb));
    expect(inspect(again, "Sheet1!C1").values).toEqual([[30]]);
    expect(inspect(again, "Sheet2!C1").values).toEqual([[20]]);
  });

  it("the other order too, and another sheet may have its own Rate (a local name per sheet)", async () => {
    const wb = start();
    const context = createRequestContext(wb);
    const sheet2 = context.workbook.worksheets.getItem("Sheet2");
    sheet2.names.add("Rate", sheet2.getRange("B1"));
    context.workbook.worksheets.getItem("Sheet1").names.add("RATE", "=Sheet1!$B$1");
    context.workbook.names.add("rate", "=Sheet1!$A$1");
    await context.sync();
    seed(wb, "Sheet2!C1", [["=Rate"]]);
    expect(inspect(wb, "Sheet2!C1").values).toEqual([[0.5]]);
  });

  it("names stay unique within one scope (case-insensitive), and a table still cannot take a name of any scope, nor a name a table's", async () => {
    const wb = start();
    const context = createRequestContext(wb);
    context.workbook.names.add("Rate", "=Sheet1!$A$1");
    context.workbook.worksheets.getItem("Sheet1").names.add("Rate", "=Sheet1!$B$1");
    await context.sync();
    context.workbook.names.add("RATE", "=Sheet1!$B$1");
    expect((await failure(context.sync())).code).toBe("ItemAlreadyExists");
    context.workbook.worksheets.getItem("Sheet1").names.add("rate", "=Sheet1!$A$1");
    expect((await failure(context.sync())).code).toBe("ItemAlreadyExists");
    seed(wb, "Sheet2!E1:F3", [["a", "b"], [1, 2], [3, 4]]);
    const t = context.workbook.worksheets.getItem("Sheet2").tables.add("Sheet2!E1:F3", true);
    t.name = "Rate";
    expect((await failure(context.sync())).code).toBe("ItemAlreadyExists");
    const t2 = context.workbook.worksheets.getItem("Sheet2").tables.getItemAt(0);
    t2.name = "Prices";
    await context.sync();
    context.workbook.worksheets.getItem("Sheet2").names.add("Prices", "=Sheet2!$E$1");
    expect((await failure(context.sync())).code).toBe("ItemAlreadyExists");
  });
});
