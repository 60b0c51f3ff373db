import { check, checkEqual, type Journey } from "../harness";
import { datasetRow, openImport, runJob } from "./datasets";

/** Where keyboard focus is in the pane: the focused element's test id (or tag). */
const FOCUSED = `(() => { var el = document.activeElement; return el ? (el.getAttribute("data-testid") || el.tagName.toLowerCase()) : ""; })()`;

/**
 * The keyboard path a user takes: from the dataset list to Import in a few key presses, focus on
 * the result after the import, and Esc cancels a running import.
 */
export const keyboardImport: Journey = {
  name: "keyboard: Import in a few key presses, focus lands on the result, Esc cancels a running import",
  async run(t) {
    const frame = t.frame();
    await openImport(t, "projects");
    // The panel opens with focus on its heading; count Tab presses to the Import button.
    let presses = 0;
    const path: string[] = [];
    for (; presses < 10; presses++) {
      path.push(await frame.evaluate<string>(FOCUSED));
      if (path[path.length - 1] === "import-start") break;
      await t.page.keyboard.press("Tab");
    }
    checkEqual(await frame.evaluate(FOCUSED), "import-start", "Tab reaches Import");
    check(presses <= 5, `Import is reachable in a few key presses (${presses} Tab presses from the panel's heading)`);
    const result = await runJob(t, () => t.page.keyboard.press("Enter"));
    check(result.rows > 0, `the keyboard import wrote rows (${result.text})`);
    await t.until("focus on the import's result", async () => (await frame.evaluate(FOCUSED)) === "job-result");
    t.note(`Import reached with ${presses} Tab presses (${path.join(" → ")}); focus on "${result.text}"`);

    // Esc cancels a running import, wherever focus is in the pane.
    await t.control("delay", { path: "/api/bi/v1/projects", ms: 30_000, count: 1 });
    try {
      const sheetsBefore = await t.sheetNames();
      await openImport(t, "projects");
      await runJob(
        t,
        async () => {
          await t.id("import-start").press("Control+Enter");
          await t.id("progress").waitFor();
          await t.page.keyboard.press("Escape");
        },
        "cancelled",
      );
      checkEqual(await t.sheetNames(), sheetsBefore, "sheets after an import cancelled with Esc");
    } finally {
      await t.control("delay", { path: "/api/bi/v1/projects", ms: 0 });
    }
    await t.id("import-close").click();
    await datasetRow(t, "projects").waitFor();
  },
};
