import { check, checkEqual, type Journey } from "../harness";

const TABS = ["connections", "datasets", "snapshots", "refresh", "records"] as const;

/**
 * Visible controls without an accessible name (aria-label, aria-labelledby, a label, button text,
 * title). Plain JavaScript text: evaluated in the page as is, untouched by the TypeScript compiler's
 * helpers.
 */
const UNNAMED_CONTROLS = `(() => {
  function visible(el) {
    return !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length) && getComputedStyle(el).visibility !== "hidden";
  }
  function nameOf(el) {
    var aria = el.getAttribute("aria-label");
    if (aria && aria.trim()) return aria;
    var by = el.getAttribute("aria-labelledby");
    if (by) return by.split(/\\s+/).map(function (id) { var n = document.getElementById(id); return n ? n.textContent : ""; }).join(" ");
    if (el.id) {
      var label = document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
      if (label && label.textContent.trim()) return label.textContent;
    }
    var wrapping = el.closest("label");
    if (wrapping && wrapping.textContent.trim()) return wrapping.textContent;
    if (el.tagName === "BUTTON" || el.tagName === "FLUENT-BUTTON" || el.tagName === "SUMMARY" || el.getAttribute("role") === "tab") return el.textContent || "";
    return el.getAttribute("title") || "";
  }
  // Fluent UI web components count as controls too (their names come from the same attributes).
  return Array.from(document.querySelectorAll("button, input, select, textarea, summary, [role=tab], fluent-button, fluent-progress-bar"))
    .filter(function (el) { return visible(el) && el.type !== "hidden" && !nameOf(el).trim(); })
    .map(function (el) { return el.outerHTML.slice(0, 160); });
})()`;

/**
 * Keyboard and screen-reader basics, checked on the live task pane: the section tabs follow the
 * ARIA tabs pattern (arrow keys), and every visible control has an accessible name.
 */
export const accessibility: Journey = {
  name: "accessibility: tabs work with arrow keys; every visible control in every section has a name",
  async run(t) {
    await t.id("tab-connections").click();
    await t.id("tab-connections").press("ArrowRight");
    await t.attr(t.id("tab-datasets"), "aria-selected", "true");
    check(await t.id("tab-datasets").evaluate((el) => el === document.activeElement), "focus follows the selected tab");
    await t.id("tab-datasets").press("End");
    await t.attr(t.id("tab-records"), "aria-selected", "true");
    await t.id("tab-records").press("Home");
    await t.attr(t.id("tab-connections"), "aria-selected", "true");

    const frame = t.frame();
    for (const tab of TABS) {
      await t.id(`tab-${tab}`).click();
      await t.attr(t.id(`tab-${tab}`), "aria-selected", "true");
      checkEqual(await t.id(`panel-${tab}`).isVisible(), true, `panel ${tab} visible`);
      const unnamed = await frame.evaluate<string[]>(UNNAMED_CONTROLS);
      checkEqual(unnamed, [], `controls without an accessible name in ${tab}`);
    }
    await t.id("tab-connections").click();
  },
};
