/**
 * Issue #35: sheet and workbook-structure protection in the host, through Microsoft's own library.
 * Sources: docs Excel.WorksheetProtection (ExcelApi 1.2: `protected`, `options`, `protect(options,
 * password)` "Fails if the worksheet has already been protected", `unprotect(password)`),
 * Excel.WorksheetProtectionOptions, Excel.WorkbookProtection (ExcelApi 1.7); support.microsoft.com
 * "Protect a worksheet" (every cell locked by default) and "Protect a workbook" ("Protecting the
 * workbook structure prevents … adding, moving, deleting, or hiding worksheets, and renaming
 * worksheets"); error code `AccessDenied` ("You cannot perform the requested operation", Excel error
 * codes; Graph answers a write to a locked cell so, microsoft-graph-docs #4546; office-js #6784).
 */
import { Workbook, createRequestContext, inspect, loadWorkbook, seed, serializeWorkbook } from "../../src/emulator";
import { failure } from "./helpers";


function start(): Workbook {
  const wb = new Workbook({ currentYear: 2025 });
  wb.addSheet("Other");
  seed(wb, "Sheet1!A1:B3", [["k", "v"], [1, "a"], [2, "b"]]);
  return wb;
}

describe("sheet protection (Excel.WorksheetProtection)", () => {
  it("protect → protected with the given options (others false), read back; a second protect fails; the file keeps it", async () => {
    const wb = start();
    const ctx = createRequestContext(wb);
    const protection = ctx.workbook.worksheets.getItem("Sheet1").protection;
    protection.load("protected");
    await ctx.sync();
    expect(protection.protected).toBe(false);
    protection.protect({ allowFormatCells: true });
    protection.load("protected,options");
    await ctx.sync();
    expect(protection.protected).toBe(true);
    expect(protection.options.allowFormatCells).toBe(true);
    expect(protection.options.allowSort).toBe(false);
    protection.protect();
    expect((await failure(ctx.sync())).code).toBe("AccessDenied");
    const again = loadWorkbook(serializeWorkbook(wb));
    expect(again.sheetByName("Sheet1")?.protection?.options.allowFormatCells).toBe(true);
  });

  const refusals: Array<[string, (s: Excel.Worksheet, ctx: Excel.RequestContext) => void]> = [
    ["values", (s) => void (s.getRange("A2").values = [[9]])],
    ["formulas", (s) => void (s.getRange("C1").formulas = [["=1+1"]])],
    ["a number format", (s) => void (s.getRange("A2").numberFormat = [["0.00"]])],
    ["clear", (s) => s.getRange("A1:B3").clear()],
    ["insert cells", (s) => void s.getRange("A2:B2").insert("Down")],
    ["delete cells", (s) => s.getRange("A2:B2").delete("Up")],
    ["tables.add", (s) => void s.tables.add("A1:B3", true)],
    ["copyFrom into it", (s, ctx) => s.getRange("D1").copyFrom(ctx.workbook.worksheets.getItem("Other").getRange("A1"), "All")],
    ["a fill", (s) => void (s.getRange("A1").format.fill.color = "#FF0000")],
    ["autofit columns", (s) => s.getRange("A1:B3").format.autofitColumns()],
    ["a conditional format", (s) => void s.getRange("A1:B3").conditionalFormats.add("Custom")],
  ];
  for (const [what, act] of refusals) {
    it(`a protected sheet refuses ${what} with AccessDenied and applies nothing; reads still work`, async () => {
      const wb = start();
      const ctx = createRequestContext(wb);
      const sheet = ctx.workbook.worksheets.getItem("Sheet1");
      sheet.protection.protect();
      await ctx.sync();
      const before = serializeWorkbook(wb);
      act(sheet, ctx);
      const e = await failure(ctx.sync());
      expect(e.code).toBe("AccessDenied");
      expect(e.message).toMatch(/protected sheet/);
      expect(serializeWorkbook(wb)).toBe(before);
      const r = sheet.getRange("A1:B3");
      r.load("values");
      await ctx.sync();
      // eslint-disable-next-line office-addins/call-sync-after-load, office-addins/call-sync-before-read -- loaded and synced just above
      expect(r.values).toEqual([["k", "v"], [1, "a"], [2, "b"]]);
    });
  }

  it("allowFormatCells lets formats through, not values; another sheet is not protected; unprotect (with its password) lifts it", async () => {
    const wb = start();
    const ctx = createRequestContext(wb);
    const sheet = ctx.workbook.worksheets.getItem("Sheet1");
    sheet.protection.protect({ allowFormatCells: true }, "pw");
    await ctx.sync();
    sheet.getRange("A1").format.fill.color = "#FF0000";
    ctx.workbook.worksheets.getItem("Other").getRange("A1").values = [["free"]];
    await ctx.sync();
    sheet.protection.unprotect("wrong");
    expect((await failure(ctx.sync())).code).toBe("AccessDenied");
    sheet.getRange("A2").values = [[9]];
    expect((await failure(ctx.sync())).code).toBe("AccessDenied");
    sheet.protection.unprotect("pw");
    sheet.getRange("A2").values = [[9]];
    await ctx.sync();
    expect(inspect(wb, "Sheet1!A2").values).toEqual([[9]]);
  });

  it("a table on a protected sheet refuses resize, rows, sort and filter re-application", async () => {
    const wb = start();
    const ctx = createRequestContext(wb);
    const sheet = ctx.workbook.worksheets.getItem("Sheet1");
    const t = sheet.tables.add("Sheet1!A1:B3", true);
    t.name = "T";
    await ctx.sync();
    sheet.protection.protect({ allowAutoFilter: false });
    await ctx.sync();
    for (const act of [
      () => ctx.workbook.tables.getItem("T").resize("Sheet1!A1:B4"),
      () => void ctx.workbook.tables.getItem("T").rows.add(undefined, [[3, "c"]]),
      () => ctx.workbook.tables.getItem("T").sort.apply([{ key: 0, ascending: false }]),
      () => ctx.workbook.tables.getItem("T").autoFilter.reapply(),
    ]) {
      act();
      expect((await failure(ctx.sync())).code).toBe("AccessDenied");
    }
  });
});

describe("workbook structure protection (Excel.WorkbookProtection)", () => {
  it("refuses adding, deleting, renaming, hiding and showing a sheet with AccessDenied; cells stay writable; unprotect lifts it", async () => {
    const wb = start();
    const ctx = createRequestContext(wb);
    ctx.workbook.protection.protect();
    ctx.workbook.protection.load("protected");
    await ctx.sync();
    expect(ctx.workbook.protection.protected).toBe(true);
    const before = serializeWorkbook(wb);
    for (const act of [
      () => void ctx.workbook.worksheets.add("New"),
      () => ctx.workbook.worksheets.getItem("Other").delete(),
      () => void (ctx.workbook.worksheets.getItem("Other").name = "Renamed"),
      () => void (ctx.workbook.worksheets.getItem("Other").visibility = "VeryHidden"),
    ]) {
      act();
      const e = await failure(ctx.sync());
      expect(e.code).toBe("AccessDenied");
      expect(e.message).toMatch(/structure is protected/);
      expect(serializeWorkbook(wb)).toBe(before);
    }
    ctx.workbook.protection.protect();
    expect((await failure(ctx.sync())).code).toBe("AccessDenied");
    ctx.workbook.worksheets.getItem("Sheet1").getRange("C1").values = [["ok"]];
    await ctx.sync();
    expect(loadWorkbook(serializeWorkbook(wb)).structureProtection).not.toBeNull();
    ctx.workbook.protection.unprotect();
    ctx.workbook.worksheets.add("New");
    await ctx.sync();
    expect(wb.sheetByName("New")).toBeDefined();
  });
});
