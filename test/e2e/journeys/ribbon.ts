import { check, checkEqual, type Journey } from "../harness";
import { FINANCIALS_COLUMNS } from "./datasets";

/**
 * The ribbon's "Refresh all" runs the real command bundle in its own runtime (no task pane code),
 * refreshes every bound table with the device's stored connections and reports the outcome.
 */
export const ribbonRefreshAll: Journey = {
  name: "ribbon: Refresh all (function command) refreshes every bound table and reports the result",
  async run(t) {
    const tables = await t.page.evaluate(() => {
      type Wb = { tables(): Array<{ name: string }> };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
      return wb?.tables().map((x) => x.name) ?? [];
    });
    check(tables.length >= 2, `several bound tables to refresh (${tables.join(", ")})`);
    // The full financials table (all 12 columns) shows whether data really changed.
    let full = null;
    for (const name of tables) {
      const place = await t.table(name);
      const cells = await t.sheetValues(place.sheet);
      const header = (cells[place.headerRow - 1] ?? []).slice(place.firstColumn).map((c) => c.value);
      if (JSON.stringify(header.slice(0, place.columns)) === JSON.stringify(FINANCIALS_COLUMNS)) {
        full = place;
        break;
      }
    }
    check(full, "the financials table is in the workbook");
    await t.openSheet(full.sheet);
    const before = [];
    for (let i = 1; i <= 10; i++) before.push((await t.cell(full.address(i, 6))).value);
    await t.control("regenerate", { company: "acme", dataset: "financials" });

    // The pane is closed: the command needs no task pane.
    await t.page.getByTestId("preview-pane-close").click();
    check(!(await t.page.locator("#taskpane").isVisible()), "the task pane is closed");
    const ribbonButton = t.page.getByTestId("ribbon-refresh-all");
    await ribbonButton.click();
    // While it runs, the command shows that it is working (a dialog with a progress bar)…
    const frame = t.page.frameLocator("[data-testid=preview-dialog] iframe");
    await t.expectVisible(frame.getByTestId("ribbon-working"), "the command's working dialog", 60_000);
    // …then reports in an Office dialog (summary.html), and completes when the user closes it.
    const dialog = t.page.getByTestId("preview-dialog");
    await t.expectVisible(dialog, "the command's summary dialog", 60_000);
    const summary = frame.getByTestId("ribbon-summary");
    await t.until("the summary text", async () => /updated/.test(await summary.innerText().catch(() => "")), 60_000);
    const text = await summary.innerText();
    check(await ribbonButton.isDisabled(), "the command is still running while its dialog is open");
    const m = /(\d+) updated, (\d+) unchanged, (\d+) failed/.exec(text);
    check(m, `the command reports a summary (${text})`);
    const [updated, unchanged, failed] = [Number(m[1]), Number(m[2]), Number(m[3])];
    checkEqual(failed, 0, `failed tables (${text})`);
    checkEqual(updated + unchanged, tables.length, `tables accounted for (${text})`);
    check(updated >= 1, `the regenerated export was written (${text})`);
    // Every table is named with its outcome, not only the failures.
    for (const name of tables) check(new RegExp(`^${name}: (updated|unchanged), [\\d,]+ rows?$`, "m").test(text), `the summary names ${name} with its outcome (${text})`);

    const after = [];
    for (let i = 1; i <= 10; i++) after.push((await t.cell(full.address(i, 6))).value);
    check(JSON.stringify(after) !== JSON.stringify(before), "financials values changed after the ribbon refresh");
    await t.screenshot("19-ribbon-refresh-all");
    await t.page.frameLocator("[data-testid=preview-dialog] iframe").getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    await t.until("the command to complete", () => ribbonButton.isEnabled());
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
  },
};
