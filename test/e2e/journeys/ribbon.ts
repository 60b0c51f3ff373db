import { check, checkEqual, type Journey } from "../harness";
import { FINANCIALS_COLUMNS } from "./datasets";
import { openTab } from "./connections";

/**
 * The ribbon's "Refresh all" runs the real command bundle (in the shared runtime, the task pane's),
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
    // The service answers slowly for the moment, so the refresh is still running when its dialog
    // is ready: otherwise a fast refresh on an idle machine ends first and the dialog opens straight
    // on the summary, and the working state could not be seen.
    await t.control("delay", { path: "/api/*", ms: 1000 });
    await ribbonButton.click();
    // While it runs, the command shows that it is working (a dialog with a progress bar)…
    const frame = t.page.frameLocator("[data-testid=preview-dialog] iframe");
    try {
      await t.expectVisible(frame.getByTestId("ribbon-working"), "the command's working dialog", 60_000);
    } finally {
      await t.control("delay", { path: "/api/*", ms: 0 });
    }
    // …then reports in an Office dialog (summary.html) and completes as soon as it is shown:
    // Excel closes a function command's runtime after 5 minutes, so it never waits for the user.
    const dialog = t.page.getByTestId("preview-dialog");
    await t.expectVisible(dialog, "the command's summary dialog", 60_000);
    const summary = frame.getByTestId("ribbon-summary");
    await t.until("the summary text", async () => /updated/.test(await summary.innerText().catch(() => "")), 60_000);
    const text = await summary.innerText();
    await t.until("the command to complete while its dialog is still open", () => ribbonButton.isEnabled());
    check(await dialog.isVisible(), "the summary dialog stays until the user closes it");
    const m = /(\d+) updated, (\d+) unchanged, (\d+) failed/.exec(text);
    check(m, `the command reports a summary (${text})`);
    const [updated, unchanged, failed] = [Number(m[1]), Number(m[2]), Number(m[3])];
    checkEqual(failed, 0, `failed tables (${text})`);
    checkEqual(updated + unchanged, tables.length, `tables accounted for (${text})`);
    check(updated >= 1, `the regenerated export was written (${text})`);
    // Every table is named with its outcome, not only the failures.
    // Named "sheet › table" (issue #25).
    for (const name of tables) check(new RegExp(`^.+ › ${name}: (updated|unchanged), [\\d,]+ rows?( — .+)?$`, "m").test(text), `the summary names ${name} with its outcome (${text})`);
    // One list item per table under the headline, not one block of text (issue #37, item 19).
    checkEqual(await summary.locator(".headline").innerText(), `${updated} updated, ${unchanged} unchanged, ${failed} failed`, "the dialog's headline");
    checkEqual(await summary.locator("li").count(), tables.length, "one line per table in the dialog");

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

/**
 * One shared runtime (issue 17): the ribbon's commands run in the task pane's runtime (no command
 * frame of their own), "Refresh this table" follows the selection (Office.ribbon.requestUpdate on
 * DocumentSelectionChanged), and the pane and the ribbon take turns on one refresh lock: while one
 * refreshes, the other's buttons are disabled.
 */
export const ribbonSharedRuntime: Journey = {
  name: "ribbon: one shared runtime, Refresh this table follows the selection, ribbon and pane share one lock",
  async run(t) {
    const runtime = t.page.getByTestId("preview-runtime");
    checkEqual(await runtime.getAttribute("data-shared"), "true", "the preview runs one shared runtime");
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    const place = await t.table("ppm_financials");
    await t.openSheet(place.sheet);
    const ribbonAll = t.page.getByTestId("ribbon-refresh-all");
    const ribbonTable = t.page.getByTestId("ribbon-refresh-table");

    await t.goTo(place.address(2, place.columns + 3));
    await t.attr(ribbonTable, "data-ribbon-enabled", "false");
    check(await ribbonTable.isDisabled(), "Refresh this table is disabled outside every bound table");
    await t.goTo(place.address(3, 2));
    await t.attr(ribbonTable, "data-ribbon-enabled", "true");
    check(await ribbonTable.isEnabled(), "Refresh this table is enabled inside a bound table");

    // The pane refreshes (slowly): the ribbon's buttons are disabled until it is done.
    await t.control("delay", { path: "/api/bi/v1/financials", ms: 2500, count: 1 });
    await openTab(t, "refresh");
    await t.id("refresh-selected").click();
    await t.attr(ribbonAll, "data-ribbon-enabled", "false");
    checkEqual(await ribbonTable.getAttribute("data-ribbon-enabled"), "false", "Refresh this table while the pane refreshes");
    await t.attr(t.id("refresh-summary"), "data-unchanged", "1", 30_000);
    await t.attr(ribbonAll, "data-ribbon-enabled", "true");
    await t.attr(ribbonTable, "data-ribbon-enabled", "true");

    // The ribbon's "Refresh this table" runs in the same runtime: the pane's buttons wait for it.
    await t.control("delay", { path: "/api/bi/v1/financials", ms: 2500, count: 1 });
    await ribbonTable.click();
    await t.until("the pane's Refresh all to wait for the ribbon", () => t.isDisabled(t.id("refresh-all")));
    checkEqual(await t.page.locator('iframe[title="Ribbon command runtime"]').count(), 0, "no separate command runtime");
    const dialog = t.page.getByTestId("preview-dialog");
    await t.expectVisible(dialog, "the command's summary dialog", 30_000);
    const summary = t.page.frameLocator("[data-testid=preview-dialog] iframe").getByTestId("ribbon-summary");
    await t.until("the summary text", async () => /updated/.test(await summary.innerText({ timeout: 1000 }).catch(() => "")), 30_000);
    const text = await summary.innerText();
    check(/^0 updated, 1 unchanged, 0 failed/.test(text), `one table refreshed, unchanged (${text})`);
    check(!(await t.isDisabled(t.id("refresh-all"))), "the pane's buttons are back once the ribbon's refresh is over");
    await t.page.frameLocator("[data-testid=preview-dialog] iframe").getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
  },
};

/**
 * Excel without SharedRuntime 1.1 (`?sharedRuntime=0`: iPad, volume-licensed Excel 2016/2019):
 * the add-in still works with separate runtimes, as before issue 17. The ribbon's command runs in
 * a runtime of its own (the command frame) and the pane says tables cannot refresh on open here.
 */
export const ribbonSeparateRuntimes: Journey = {
  name: "ribbon: without the shared runtime, commands run in their own runtime and the pane still works",
  async run(t) {
    const page = await t.page.context().newPage();
    try {
      await page.goto(`${t.origin}/preview.html?sharedRuntime=0`);
      const tp = page.frameLocator("#taskpane");
      await tp.getByTestId("app").waitFor({ state: "attached" });
      checkEqual(await page.getByTestId("preview-runtime").getAttribute("data-shared"), "false", "separate runtimes");
      const app = tp.getByTestId("app");
      await t.until("the pane to start", async () => (await app.getAttribute("data-ready")) === "true");
      checkEqual(await app.getAttribute("data-shared-runtime"), "false", "the pane knows it has no shared runtime");
      await tp.getByTestId("tab-refresh").click();
      await tp.getByTestId("open-refresh-unsupported").waitFor();
      await page.getByTestId("ribbon-refresh-all").click();
      const dialog = page.getByTestId("preview-dialog");
      await dialog.waitFor();
      const summary = page.frameLocator("[data-testid=preview-dialog] iframe").getByTestId("ribbon-summary");
      await t.until("the summary text", async () => (await summary.innerText()).trim() !== "");
      checkEqual((await summary.innerText()).split("\n")[0], "No PPM tables in this workbook to refresh.", "the command's summary");
      checkEqual(await page.locator('iframe[title="Ribbon command runtime"]').count(), 1, "the command ran in a runtime of its own");
      await page.frameLocator("[data-testid=preview-dialog] iframe").getByRole("button", { name: "Close" }).click();
      await dialog.waitFor({ state: "detached" });
    } finally {
      await page.close();
    }
  },
};
