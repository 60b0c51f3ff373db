import { check, checkEqual, type Journey } from "../harness";

/** The preview hosts the real task pane next to the emulated workbook's grid, and typing into a cell behaves like Excel. */
export const previewLoads: Journey = {
  name: "preview: task pane and grid are up, typing into a cell is parsed like Excel",
  async run(t) {
    await t.id("app").waitFor({ state: "attached" });
    await t.attr(t.id("app"), "data-ready", "true");
    check((await t.sheetNames()).length >= 1, "the workbook shows at least one sheet tab");
    const sheet = await t.activeSheet();
    check(sheet !== "", "one sheet is active");
    const a1 = await t.cell("A1");
    checkEqual(a1.type, "empty", "A1 of a new workbook");

    // Typed input goes through Excel.run in the task pane's realm and is parsed as Excel parses typing.
    await t.typeInCell("C3", "1234.5");
    await t.typeInCell("C4", "'00420");
    await t.typeInCell("C5", "=1+1");
    const [c3, c4, c5] = [await t.cell("C3"), await t.cell("C4"), await t.cell("C5")];
    checkEqual([c3.type, c3.value], ["number", "1234.5"], "C3 after typing 1234.5");
    checkEqual([c4.type, c4.value], ["text", "00420"], "C4 after typing '00420");
    checkEqual(c5.type, "formula", "C5 after typing =1+1");
    for (const a of ["C3", "C4", "C5"]) await t.typeInCell(a, "");
    checkEqual((await t.cell("C3")).type, "empty", "C3 after clearing");
  },
};
