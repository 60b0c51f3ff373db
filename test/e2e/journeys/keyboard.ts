import { check, checkEqual, type Journey } from "../harness";
import { datasetRow, openImport, runJob } from "./datasets";

/** Where keyboard focus is in the pane: the focused element's test id (or tag). */
const FOCUSED = `(() => { var el = document.activeElement; return el ? (el.getAttribute("data-testid") || el.tagName.toLowerCase()) : ""; })()`;

/** Whether an element of the pane is fully inside the pane's visible area. */
const IN_VIEW = (testid: string) => `(() => { var r = document.querySelector('[data-testid="${testid}"]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`;

/**
 * The keyboard path a user takes: from the dataset list, Ctrl+Enter imports from anywhere in the
 * panel (the hint says so next to Import, which ends the form and stays in view); focus is on Cancel
 * while it runs and on the result after; Tab also reaches Import; Esc cancels a running import.
 */
export const keyboardImport: Journey = {
  name: "keyboard: Ctrl+Enter imports from the panel, Import stays in view at the end of the form, focus on Cancel then the result, Esc cancels a running import",
  async run(t) {
    const frame = t.frame();
    await openImport(t, "projects");
    // Import ends the form, in view without scrolling, with its shortcut next to it (issue #25).
    check(await frame.evaluate<boolean>(IN_VIEW("import-start")), "Import is in view when the panel opens");
    checkEqual(await t.id("import-shortcut").innerText(), "or Ctrl+Enter", "the shortcut next to Import");
    // The panel opens with focus on its heading; Tab still reaches Import, after the form's fields.
    let presses = 0;
    const path: string[] = [];
    for (; presses < 80; presses++) {
      const at = await frame.evaluate<string>(FOCUSED);
      path.push(at);
      if (at === "import-start") break;
      await t.page.keyboard.press("Tab");
    }
    checkEqual(await frame.evaluate(FOCUSED), "import-start", "Tab reaches Import");
    check(await frame.evaluate<boolean>(IN_VIEW("import-start")), "Import is in view when Tab reaches it");
    // Back to the heading: Ctrl+Enter imports from there, in one key press.
    await t.tp.locator("[data-testid=import-panel] h3").focus();
    let cancelFocused = false;
    const result = await runJob(t, async () => {
      await t.page.keyboard.press("Control+Enter");
      // While it runs, focus is on Cancel, not dropped to the page (issue #25).
      cancelFocused = await t.until("the job to start", async () => ((await frame.evaluate<string>(FOCUSED)) === "progress-cancel" ? "yes" : (await t.id("job-result").count()) > 0 ? "done" : null)) === "yes";
    });
    check(result.rows > 0, `the keyboard import wrote rows (${result.text})`);
    await t.until("focus on the import's result", async () => (await frame.evaluate(FOCUSED)) === "job-result");
    t.note(`Import reached with ${presses} Tab presses, or Ctrl+Enter from the heading; focus on Cancel while it ran: ${cancelFocused ? "seen" : "too quick to see"}; then on "${result.text}"`);

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
