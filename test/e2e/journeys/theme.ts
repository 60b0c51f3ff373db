import { check, checkEqual, type Journey } from "../harness";

/**
 * The pane follows Office's theme: opened with the dark theme's colours (the preview's
 * `?theme=dark`), it switches its palette. A second window of the same origin shares the device's
 * connections, as two Excel windows do.
 */
export const darkTheme: Journey = {
  name: "theme: with Office's dark theme the pane switches palette; connections are shared by a second window",
  async run(t) {
    const page = await t.page.context().newPage();
    try {
      await page.goto(`${t.origin}/preview.html?theme=dark`);
      const tp = page.frameLocator("#taskpane");
      await tp.getByTestId("app").waitFor({ state: "attached" });
      const frame = page.frame({ name: "taskpane" });
      check(frame, "the second window's task pane frame");
      await t.until("the pane to apply the dark theme", () => frame.evaluate(() => document.documentElement.dataset.theme === "dark"));
      const bg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
      checkEqual(bg, "rgb(41, 41, 41)", "the pane's background is Office's dark body colour");
      await tp.getByTestId("tab-datasets").click();
      await tp.locator('[data-testid=dataset-row][data-key="financials"]').waitFor();
      await page.locator("#taskpane").screenshot({ path: t.screenshotPath("22-dark-theme") });
    } finally {
      await page.close();
    }
  },
};
