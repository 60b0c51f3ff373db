/**
 * The preview's view of the emulated workbook: what the grid draws for each kind of cell, and that
 * its user actions (type, select, activate) go through the `Excel` API as Excel's own UI would.
 */
import fc from "fast-check";
import { createPreviewWorkbook, type PreviewWorkbook } from "./preview-workbook";
import { parseA1 } from "./a1";

type Ctx = {
  workbook: {
    worksheets: {
      getItem(n: string): {
        getRange(a: string): { values: unknown; numberFormat: unknown };
      };
      add(n: string): unknown;
    };
    tables: { add(address: string, hasHeaders: boolean): { name: string } };
  };
  sync(): Promise<void>;
};

function excel(wb: PreviewWorkbook): { run<T>(f: (context: Ctx) => Promise<T>): Promise<T> } {
  return wb.Excel as { run<T>(f: (context: Ctx) => Promise<T>): Promise<T> };
}

/** Writes raw values (and optionally formats) through the API, as the add-in does. */
async function put(wb: PreviewWorkbook, address: string, values: unknown[][], formats?: string[][]): Promise<void> {
  await excel(wb).run(async (context) => {
    const range = context.workbook.worksheets.getItem("Sheet1").getRange(address);
    if (formats) range.numberFormat = formats;
    range.values = values;
    await context.sync();
  });
}

describe("preview workbook: cells as the grid draws them", () => {
  it("reports type, raw value, format and display text per kind of cell", async () => {
    const wb = createPreviewWorkbook(null);
    await put(wb, "A1:F1", [[42.5, "00420", true, "=A1*2", "", "#N/A"]], [["0.00", "@", "General", "General", "General", "General"]]);
    const row = [0, 1, 2, 3, 4, 5].map((c) => wb.cell("Sheet1", 0, c));
    expect(row.map((c) => c.type)).toEqual(["number", "text", "boolean", "formula", "empty", "error"]);
    expect(row[0]).toMatchObject({ value: "42.5", format: "0.00", text: "42.50", formula: null });
    expect(row[1]).toMatchObject({ value: "00420", format: "@", editText: "00420" });
    expect(row[2]).toMatchObject({ value: "true", editText: "TRUE" });
    expect(row[3]).toMatchObject({ value: "85", formula: "=A1*2", editText: "=A1*2" });
    expect(row[5]).toMatchObject({ value: "#N/A" });
    expect(wb.usedExtent("Sheet1")).toEqual({ rows: 1, cols: 6 });
    expect(wb.cell("Sheet1", 10, 10).type).toBe("empty");
    expect(wb.cell("NoSuchSheet", 0, 0).type).toBe("empty");
  });

  it("marks cells of an Excel table, header row apart", async () => {
    const wb = createPreviewWorkbook(null);
    await put(wb, "B2:C3", [["a", "b"], [1, 2]]);
    await excel(wb).run(async (context) => {
      context.workbook.tables.add("Sheet1!B2:C3", true);
      await context.sync();
    });
    expect(wb.cell("Sheet1", 1, 1)).toMatchObject({ tableHeader: true });
    expect(wb.cell("Sheet1", 2, 2)).toMatchObject({ tableHeader: false });
    expect(wb.cell("Sheet1", 2, 2).table).not.toBeNull();
    expect(wb.cell("Sheet1", 0, 0).table).toBeNull();
    expect(wb.tables()).toEqual([expect.objectContaining({ sheet: "Sheet1", r0: 1, c0: 1, r1: 2, c1: 2 })]);
  });
});

describe("preview workbook: user actions go through the Excel API", () => {
  it("typing is parsed like typing in Excel and counted as API writes", async () => {
    const wb = createPreviewWorkbook(null);
    let changes = 0;
    wb.onChange(() => changes++);
    await wb.typeInto(0, 0, "1,234.5");
    await wb.typeInto(1, 0, "'00420");
    await wb.typeInto(2, 0, "=A1+1");
    expect(wb.cell("Sheet1", 0, 0)).toMatchObject({ type: "number", value: "1234.5" });
    expect(wb.cell("Sheet1", 1, 0)).toMatchObject({ type: "text", value: "00420" });
    expect(wb.cell("Sheet1", 2, 0)).toMatchObject({ type: "formula", value: "1235.5" });
    expect(changes).toBe(3);
    expect(wb.stats()).toMatchObject({ cellWrites: 3, changes: 3 });
    expect(wb.stats().syncs).toBeGreaterThanOrEqual(3);
  });

  it("select and activate move Excel's selection and active sheet", async () => {
    const wb = createPreviewWorkbook(null);
    await excel(wb).run(async (context) => {
      context.workbook.worksheets.add("Data");
      await context.sync();
    });
    expect(wb.sheets()).toEqual(["Sheet1", "Data"]);
    await wb.activate("Data");
    expect(wb.activeSheet()).toBe("Data");
    await wb.select(4, 2);
    expect(wb.selection()).toEqual({ row: 4, col: 2 });
    await wb.activate("Sheet1");
    expect(wb.activeSheet()).toBe("Sheet1");
  });

  it("a bad sheet name is refused by the API, nothing changes", async () => {
    const wb = createPreviewWorkbook(null);
    await expect(wb.activate("Nope")).rejects.toMatchObject({ code: "ItemNotFound" });
    expect(wb.activeSheet()).toBe("Sheet1");
  });

  it("editing a text cell without changing it leaves it exactly as it was (apostrophe when needed)", async () => {
    // Text a writer stored as text (format @, then the column format reset to General as a user might).
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom("00123", "=SUM(A1:A9)", "TRUE", "1/2", "1E5", "+41 44", "-5 days", "2026-03-01", "'quoted", "#N/A", "12%"),
          fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() === s && s !== ""),
        ),
        async (text) => {
          const wb = createPreviewWorkbook(null);
          await put(wb, "A1", [[text]], [["@"]]);
          await put(wb, "A1", [[null]], [["General"]]);
          const before = wb.cell("Sheet1", 0, 0);
          expect(before).toMatchObject({ type: "text", value: text });
          await wb.typeInto(0, 0, before.editText);
          expect(wb.cell("Sheet1", 0, 0)).toMatchObject({ type: "text", value: text });
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("preview workbook: kept across a task pane reload", () => {
  it("serialises and restores cells, formats and tables", async () => {
    const wb = createPreviewWorkbook(null);
    await put(wb, "A1:B2", [["h1", "h2"], [1, "x"]]);
    await excel(wb).run(async (context) => {
      context.workbook.tables.add("Sheet1!A1:B2", true);
      await context.sync();
    });
    const again = createPreviewWorkbook(wb.serialise());
    expect(again.cell("Sheet1", 1, 0)).toEqual(wb.cell("Sheet1", 1, 0));
    expect(again.tables()).toEqual(wb.tables());
  });

  it("reports a cell's conditional fill apart from its own fill (the grid draws it on top)", async () => {
    const wb = createPreviewWorkbook(null);
    await put(wb, "A1:A2", [[1], [2]]);
    await excel(wb).run(async (context) => {
      const range = context.workbook.worksheets.getItem("Sheet1").getRange("A1:A2") as unknown as {
        format: { fill: { color: string } };
        conditionalFormats: { add(t: string): { custom: { rule: { formula: string }; format: { fill: { color: string } } } } };
      };
      range.format.fill.color = "#FF0000";
      const cf = range.conditionalFormats.add("Custom");
      cf.custom.rule.formula = "=A1=2";
      cf.custom.format.fill.color = "#FFEB9C";
      await context.sync();
    });
    expect([wb.cell("Sheet1", 0, 0).fill, wb.cell("Sheet1", 0, 0).cfFill]).toEqual(["#FF0000", null]);
    expect([wb.cell("Sheet1", 1, 0).fill, wb.cell("Sheet1", 1, 0).cfFill]).toEqual(["#FF0000", "#FFEB9C"]);
  });

  it("starts with a new workbook when the saved one cannot be read", () => {
    const wb = createPreviewWorkbook("{not json");
    expect(wb.sheets()).toEqual(["Sheet1"]);
    expect(wb.usedExtent("Sheet1")).toEqual({ rows: 0, cols: 0 });
  });
});

describe("name box addresses", () => {
  it("reads A1 addresses, with or without sheet, and refuses the rest", () => {
    expect(parseA1("B7")).toEqual({ row: 6, col: 1 });
    expect(parseA1("b7")).toEqual({ row: 6, col: 1 });
    expect(parseA1("Sheet1!C3:D4")).toEqual({ row: 2, col: 2, sheet: "Sheet1" });
    expect(parseA1("'My sheet'!A2")).toEqual({ row: 1, col: 0, sheet: "My sheet" });
    expect(parseA1("XFD1048576")).toEqual({ row: 1_048_575, col: 16_383 });
    expect(parseA1("XFE1")).toBeNull();
    expect(parseA1("")).toBeNull();
    expect(parseA1("hello world")).toBeNull();
  });
});
