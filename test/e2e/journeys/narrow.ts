import { check, checkEqual, type E2E, type Journey } from "../harness";
import { openImport } from "./datasets";

const TABS = ["connections", "datasets", "snapshots", "refresh", "records"] as const;

/**
 * Elements of the pane's document wider than the pane, or reaching past its right edge, and whether
 * the page scrolls sideways. Plain JavaScript (evaluated in the page as is).
 */
const OVERFLOW = `(() => {
  var w = document.documentElement.clientWidth;
  var out = [];
  document.querySelectorAll("#app *").forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (!r.width && !r.height) return;
    if (el.closest(".visually-hidden, .offscreen")) return;
    if (r.width > w + 0.5 || r.right > w + 0.5) out.push(el.tagName.toLowerCase() + (el.dataset.testid ? "[" + el.dataset.testid + "]" : "") + " " + Math.round(r.left) + ".." + Math.round(r.right));
  });
  return { width: w, scrollWidth: document.documentElement.scrollWidth, wide: out.slice(0, 8) };
})()`;

/** After scrolling to the bottom of the section: is the whole tab strip on screen? */
const NAV_VISIBLE = `(() => {
  window.scrollTo(0, document.documentElement.scrollHeight);
  var nav = document.querySelector('[role=tablist]').getBoundingClientRect();
  return { top: nav.top, bottom: nav.bottom, height: window.innerHeight, scrolled: window.scrollY };
})()`;

/** Sets the pane's width with the preview's toolbar (320, 350 or 450 px), as a user would; the previous width. */
async function setPaneWidth(t: E2E, px: number): Promise<number> {
  const control = t.page.getByTestId("preview-pane-width");
  const was = Number(await control.inputValue());
  await control.selectOption(String(px));
  return was;
}

/**
 * Narrow widths: at a 320 px pane every section fits (no element wider than the pane, no sideways
 * scrolling) and the section tabs stay visible while the section scrolls.
 */
export const narrowPane: Journey = {
  name: "narrow pane: at 320 px every section fits without sideways scrolling and the tabs stay visible",
  async run(t) {
    const was = await setPaneWidth(t, 320);
    try {
      const frame = t.frame();
      await t.until("the pane to be 320 px wide", async () => (await frame.evaluate<number>("document.documentElement.clientWidth")) <= 320);
      const sections: Array<{ name: string; open: () => Promise<void> }> = [
        ...TABS.map((tab) => ({
          name: tab,
          open: async () => {
            await t.id(`tab-${tab}`).click();
            await t.attr(t.id(`tab-${tab}`), "aria-selected", "true");
            await t.page.waitForTimeout(300); // sections load their lists on show
          },
        })),
        { name: "import panel", open: () => openImport(t, "financials") },
        {
          name: "import panel's Summarize step",
          open: async () => {
            await t.id("summary-toggle").click();
            await t.id("summary-aggregate-add").click();
            await t.id("summary-aggregate-add").click();
            await t.selectOption(t.id("summary-aggregate-row").last().getByTestId("summary-aggregate-method"), "count");
          },
        },
      ];
      for (const s of sections) {
        await s.open();
        const o = await frame.evaluate<{ width: number; scrollWidth: number; wide: string[] }>(OVERFLOW);
        checkEqual(o.wide, [], `elements wider than the ${o.width} px pane in ${s.name}`);
        check(o.scrollWidth <= o.width, `no sideways scrolling in ${s.name} (${o.scrollWidth} > ${o.width})`);
        const nav = await frame.evaluate<{ top: number; bottom: number; height: number; scrolled: number }>(NAV_VISIBLE);
        check(nav.top >= 0 && nav.bottom <= nav.height, `the tabs are visible after scrolling ${s.name} to its end (${JSON.stringify(nav)})`);
        if (s.name === "import panel") await t.screenshotPane("25-narrow-import");
        await frame.evaluate("window.scrollTo(0, 0)");
      }
      await t.id("import-close").click();
    } finally {
      await setPaneWidth(t, was);
    }
  },
};
