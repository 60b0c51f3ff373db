import { check, checkEqual, type Journey } from "../harness";
import { openImport, runJob } from "./datasets";

/** "Existing sheet, at the selected cell": the table lands where the user's selection is. */
export const importAtSelection: Journey = {
  name: "import: into an existing sheet at the selected cell (Sheet1!C5), with a builder query ($top)",
  async run(t) {
    // From another sheet, through the name box with a sheet-qualified address, as in Excel.
    check((await t.activeSheet()) !== "Sheet1", "another sheet is active before");
    await t.goTo("Sheet1!C5");
    checkEqual(await t.activeSheet(), "Sheet1", "the name box switched to Sheet1");
    const sheetsBefore = await t.sheetNames();
    await openImport(t, "financials");
    await t.fill(t.id("query-paste"), "");
    await t.check(t.id("import-dest-selection"));
    // The small builder instead of pasted text: keep the first 3 rows.
    await t.fill(t.id("query-top"), "3");
    await t.until("the builder's $top to show as local", async () => (await t.id("query-preview-local").innerText()).includes("$top=3"));
    const job = await runJob(t, () => t.id("import-start").click());
    checkEqual(job.rows, 3, "rows imported");
    checkEqual(await t.sheetNames(), sheetsBefore, "no new sheet");
    const place = await t.table(job.table);
    checkEqual(place.sheet, "Sheet1", "the table's sheet");
    checkEqual(place.firstColumn, 2, "the table starts in column C");
    // The writer's info line takes the selected cell; the header follows right below it.
    checkEqual(place.headerRow, 6, "the header row, under the info line at C5");
    const info = await t.cell("C5");
    check(info.value.startsWith("PPM"), `the info line is in C5 (${JSON.stringify(info)})`);
    checkEqual((await t.cell(place.address(0, 0))).value, "project_id", "header's first cell");
    checkEqual((await t.cell(place.address(3, 0))).value, "PRJ-0001", "third data row");
    checkEqual((await t.cell(place.address(4, 0))).type, "empty", "nothing below the three rows");
    checkEqual((await t.cell("B6")).type, "empty", "nothing left of the table");
  },
};
