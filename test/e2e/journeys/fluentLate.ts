import { check, checkEqual, type Journey } from "../harness";

/**
 * The Fluent UI components arrive in their own chunk after first paint. Held back here (the
 * chunk's requests wait until released), the pane must already be usable: sections switch, the
 * connection picker shows the active connection, the dataset list loads. Once the chunk arrives,
 * the elements upgrade in place and keep what they showed (selected tab, picked connection).
 */
export const beforeFluent: Journey = {
  name: "first paint: before the Fluent chunk has loaded the pane works and shows its state; the controls upgrade in place",
  async run(t) {
    const page = await t.page.context().newPage();
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    let held = 0;
    // The Fluent chunk and its vendor chunk (Fluent, FAST, tokens) are the only files named so.
    await page.route(/fluent[^/]*\.js(\?|$)/, async (route) => {
      held++;
      await released;
      await route.continue();
    });
    try {
      // The held chunk keeps the page's load event from firing: wait for the document only.
      await page.goto(`${t.origin}/preview.html`, { waitUntil: "domcontentloaded" });
      const tp = page.frameLocator("#taskpane");
      await t.attr(tp.getByTestId("app"), "data-ready", "true");
      const frame = page.frame({ name: "taskpane" });
      check(frame, "the task pane frame");
      checkEqual(await frame.evaluate(() => customElements.get("fluent-tablist") === undefined), true, "Fluent not defined yet (its chunk is held back)");
      check(held > 0, "the pane asked for the Fluent chunk right away");

      // Sections switch with a click, and the picker shows the active connection (not every option).
      const picker = tp.getByTestId("active-connection");
      const shown = (await picker.innerText()).trim();
      check(shown.startsWith("Acme (reference) — "), `the connection picker shows the active connection (${shown})`);
      await tp.getByTestId("tab-snapshots").click();
      await t.attr(tp.getByTestId("tab-snapshots"), "aria-selected", "true");
      check(await tp.getByTestId("panel-snapshots").isVisible(), "the snapshots section is shown");
      await tp.getByTestId("tab-datasets").click();
      await t.attr(tp.getByTestId("tab-datasets"), "aria-selected", "true");
      await tp.locator('[data-testid=dataset-row][data-key="financials"]').waitFor();
      checkEqual(await frame.evaluate(() => customElements.get("fluent-tablist") === undefined), true, "still without Fluent while the list loaded");

      release();
      await t.until("the Fluent components to be defined", () => frame.evaluate(() => customElements.get("fluent-text-input") !== undefined));
      // Upgraded in place, with the state they had.
      await t.attr(tp.getByTestId("tab-datasets"), "aria-selected", "true");
      check(await tp.getByTestId("panel-datasets").isVisible(), "the datasets section is still the one shown");
      check(!(await tp.getByTestId("panel-snapshots").isVisible()), "the snapshots section is hidden");
      const active = await t.until("the picker's value after the upgrade", () =>
        picker.evaluate((el) => {
          const v = (el as { value?: unknown }).value;
          return typeof v === "string" ? v : "";
        }),
      );
      const options = await t.options(picker);
      checkEqual(options.find((o) => o.value === active)?.label.startsWith("Acme (reference) — "), true, `the upgraded picker holds the active connection (${active})`);
      await t.fill(tp.getByTestId("datasets-search"), "financ");
      await t.until("the search to filter the list", async () => (await tp.getByTestId("dataset-row").count()) === 1);
      await tp.getByTestId("tab-connections").press("ArrowRight");
      await t.attr(tp.getByTestId("tab-datasets"), "aria-selected", "true");
    } finally {
      release();
      await page.close();
    }
  },
};
