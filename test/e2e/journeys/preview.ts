import { check, checkEqual, type Journey } from "../harness";

/** The grid draws the emulated workbook, and typing into a cell is parsed the way Excel parses typing. */
export const previewGrid: Journey = {
  name: "preview: the grid shows the emulated workbook; typing into cells is parsed like Excel",
  async run(t) {
    await t.page.getByTestId("preview-grid").locator("td[data-address]").first().waitFor();
    check((await t.sheetNames()).length >= 1, "the workbook shows at least one sheet tab");
    const sheet = await t.activeSheet();
    check(sheet !== "", "one sheet is active");
    checkEqual((await t.cell("A1")).type, "empty", "A1 of a new workbook");

    // Typing goes through Excel.run in the task pane's realm, exactly as the add-in writes.
    await t.typeInCell("C3", "1234.5");
    await t.typeInCell("C4", "'00420");
    await t.typeInCell("C5", "=C3*2");
    await t.typeInCell("C6", "true");
    await t.typeInCell("C7", "1/15/2026");
    const [c3, c4, c5, c6, c7] = [await t.cell("C3"), await t.cell("C4"), await t.cell("C5"), await t.cell("C6"), await t.cell("C7")];
    checkEqual([c3.type, c3.value], ["number", "1234.5"], "C3 after typing 1234.5");
    checkEqual([c4.type, c4.value], ["text", "00420"], "C4 after typing '00420");
    checkEqual([c5.type, c5.formula, c5.value], ["formula", "=C3*2", "2469"], "C5 after typing =C3*2");
    checkEqual([c6.type, c6.value], ["boolean", "true"], "C6 after typing true");
    checkEqual(c7.type, "number", "a typed date is a date serial");
    check(/[dmy]/i.test(c7.format), `a typed date gets a date format (${c7.format})`);
    // The formula bar shows what would be edited: the formula, not its result.
    await t.goTo("C5");
    checkEqual(await t.page.getByTestId("preview-formula").inputValue(), "=C3*2", "formula bar for C5");
    for (const a of ["C3", "C4", "C5", "C6", "C7"]) await t.typeInCell(a, "");
    checkEqual((await t.cell("C5")).type, "empty", "C5 after clearing");
    checkEqual((await t.workbookStats()).cellWrites > 0, true, "typing wrote cells through the Excel API");

    // Reloading the task pane keeps the workbook (as closing the pane does in Excel); "New workbook" empties it.
    await t.typeInCell("A1", "kept");
    const reattached = () =>
      t.page.evaluate(() => {
        const w = window as unknown as { __ppmPreviewHost: { workbook(): unknown }; __e2eWorkbookBefore?: unknown };
        return w.__ppmPreviewHost.workbook() !== null && w.__ppmPreviewHost.workbook() !== w.__e2eWorkbookBefore;
      });
    await t.page.evaluate(() => {
      const w = window as unknown as { __ppmPreviewHost: { workbook(): unknown }; __e2eWorkbookBefore?: unknown };
      w.__e2eWorkbookBefore = w.__ppmPreviewHost.workbook();
      (document.getElementById("taskpane") as HTMLIFrameElement).contentWindow?.location.reload();
    });
    await t.until("the reloaded task pane to attach its workbook", reattached);
    checkEqual((await t.cell("A1")).value, "kept", "A1 after the task pane reloaded");
    await t.id("app").waitFor({ state: "attached" });
    await t.page.evaluate(() => {
      const w = window as unknown as { __ppmPreviewHost: { workbook(): unknown }; __e2eWorkbookBefore?: unknown };
      w.__e2eWorkbookBefore = w.__ppmPreviewHost.workbook();
    });
    await t.page.getByTestId("preview-reset").click();
    await t.until("a new workbook to attach", reattached);
    checkEqual((await t.cell("A1")).type, "empty", "A1 of the new workbook");
    checkEqual(await t.sheetNames(), ["Sheet1"], "sheets of a new workbook");
  },
};

/** The real task pane starts in the preview with the shimmed Office and the emulator's Excel. */
/** The client file Office loads and the platform it reports, per profile (src/emulator/profiles.ts). */
const PLATFORM: Record<string, [string, string]> = {
  web: ["excel-web-16.00.js", "OfficeOnline"],
  windows: ["excel-win32-16.01.js", "PC"],
  mac: ["excel-mac-16.00.js", "Mac"],
  "windows-2021": ["excel-win32-16.01.js", "PC"],
};

export const previewTaskPane: Journey = {
  name: "preview: the real task pane starts (Office.onReady with the shim, no office.js from the CDN)",
  async run(t) {
    await t.id("app").waitFor({ state: "attached" });
    await t.attr(t.id("app"), "data-ready", "true");
    // Microsoft's own client library for the page's platform profile, from the project's files.
    const profile = new URL(t.page.url()).searchParams.get("profile") ?? "web";
    const seen = await t.frame().evaluate(() => {
      const w = window as unknown as { Office: { context: { platform: string; requirements: { isSetSupported(n: string, v: string): boolean } } }; Excel: { RequestContext?: unknown } };
      return {
        scripts: [...document.scripts].map((s) => s.getAttribute("src") ?? "").filter((src) => src.includes("office-js/")),
        platform: w.Office.context.platform,
        excel: typeof w.Excel.RequestContext,
        excelApi115: w.Office.context.requirements.isSetSupported("ExcelApi", "1.15"),
      };
    });
    checkEqual(seen.scripts, [`office-js/${PLATFORM[profile][0]}`], "the client library the task pane page loads");
    checkEqual([seen.platform, seen.excel], [PLATFORM[profile][1], "function"], "Office.context.platform and Microsoft's Excel.RequestContext");
    checkEqual(seen.excelApi115, profile !== "windows-2021", "ExcelApi 1.15 (Excel 2021 volume-licensed stops at 1.14)");
  },
};
