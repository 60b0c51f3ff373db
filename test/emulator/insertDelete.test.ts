/** `Range.insert("Down")` / `Range.delete("Up")` and `Worksheet.visibility` in the emulator (issue #15). */
import { Workbook, createEmulatedContext, inspect, seed } from "../../src/emulator";

async function withTable() {
  const wb = new Workbook({});
  const context = createEmulatedContext(wb);
  const sheet = context.workbook.worksheets.getItem("Sheet1");
  sheet.getRange("A1:B4").values = [["id", "v"], [1, "a"], [2, "b"], [3, "c"]];
  context.workbook.tables.add("Sheet1!A1:B4", true).name = "T";
  await context.sync();
  seed(wb, "Sheet1!A6", [["below"]]);
  return { wb, context, sheet };
}

describe("Range.insert / Range.delete inside a table", () => {
  it("insert over the table's full width grows it and shifts the cells below, inserted cells are empty", async () => {
    const { wb, context, sheet } = await withTable();
    sheet.getRange("A3:B3").insert("Down");
    const t = context.workbook.tables.getItem("T").getRange();
    t.load("address");
    await context.sync();
    expect(t.address).toBe("Sheet1!A1:B5");
    expect(inspect(wb, "Sheet1!A2:B5").values).toEqual([[1, "a"], ["", ""], [2, "b"], [3, "c"]]);
    expect(inspect(wb, "Sheet1!A7").values).toEqual([["below"]]);
  });

  it("delete over the table's full width shrinks it and moves the cells below up", async () => {
    const { wb, context, sheet } = await withTable();
    sheet.getRange("A2:B3").delete("Up");
    const t = context.workbook.tables.getItem("T").getRange();
    t.load("address");
    await context.sync();
    expect(t.address).toBe("Sheet1!A1:B2");
    expect(inspect(wb, "Sheet1!A2:B2").values).toEqual([[3, "c"]]);
    expect(inspect(wb, "Sheet1!A4").values).toEqual([["below"]]);
  });

  it("refuses shifting part of a table, every body row, and other directions", async () => {
    const { context, sheet } = await withTable();
    sheet.getRange("A3").insert("Down");
    await expect(context.sync()).rejects.toThrow(/shift cells in the table 'T'/);
    sheet.getRange("A2:B4").delete("Up");
    await expect(context.sync()).rejects.toThrow(/every body row/);
    // Shifting right inside a table's rows moves part of it; a direction that does not exist is refused.
    sheet.getRange("A2:B2").insert("Right");
    await expect(context.sync()).rejects.toThrow(/shift cells in the table 'T'/);
    sheet.getRange("D2:E2").insert("Up" as never);
    await expect(context.sync()).rejects.toThrow(/shift must be 'Down' or 'Right'/);
  });

  it("a very hidden sheet is not the active sheet, and the last visible sheet cannot be hidden", async () => {
    const wb = new Workbook({});
    const context = createEmulatedContext(wb);
    const s = context.workbook.worksheets.add("hidden");
    s.activate();
    s.visibility = "VeryHidden";
    const v = context.workbook.worksheets.getItem("hidden");
    v.load("visibility");
    const active = context.workbook.worksheets.getActiveWorksheet();
    active.load("name");
    await context.sync();
    expect([v.visibility, active.name]).toEqual(["VeryHidden", "Sheet1"]);
    context.workbook.worksheets.getItem("Sheet1").visibility = "Hidden";
    await expect(context.sync()).rejects.toThrow(/at least one visible worksheet/);
  });
});
