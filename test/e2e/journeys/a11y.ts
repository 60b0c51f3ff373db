import { check, checkEqual, E2EFailure, type E2E, type Journey } from "../harness";
import { axeFrame } from "../axe";
import { openTab } from "./connections";
import { openImport } from "./datasets";

const TABS = ["connections", "datasets", "snapshots", "refresh", "records"] as const;

/**
 * Roles whose elements must have an accessible name (WAI-ARIA 1.2 "name required", plus the tab
 * list and Chromium's role for a `<summary>`).
 */
const NAMED_ROLES = new Set([
  "alertdialog", "button", "checkbox", "combobox", "dialog", "link", "listbox", "menuitem", "menuitemcheckbox", "menuitemradio",
  "option", "progressbar", "radio", "radiogroup", "searchbox", "slider", "spinbutton", "switch", "tab", "tablist", "tabpanel",
  "textbox", "tree", "treeitem", "DisclosureTriangle",
]);

interface AxNode {
  ignored: boolean;
  role?: { value?: string };
  name?: { value?: string };
  backendDOMNodeId?: number;
}

/**
 * The task pane's controls as a screen reader gets them: Chromium's computed accessibility tree of
 * the pane's frame (DevTools protocol), which includes what Fluent's components hold in their
 * shadow roots (the `<input>` a text input's slotted label names, the combobox button a dropdown
 * renders, roles set through ElementInternals). Hidden elements are not in it. Returns the
 * controls of a role that must be named, with their names, and the unnamed ones described.
 */
async function paneControls(t: E2E): Promise<{ byRole: Map<string, string[]>; unnamed: string[] }> {
  const session = await t.page.context().newCDPSession(t.page);
  try {
    const { frameTree } = (await session.send("Page.getFrameTree")) as { frameTree: FrameTree };
    const frameId = findFrame(frameTree, "taskpane");
    check(frameId, "the task pane frame in the page's frame tree");
    const { nodes } = (await session.send("Accessibility.getFullAXTree", { frameId })) as { nodes: AxNode[] };
    const byRole = new Map<string, string[]>();
    const unnamed: string[] = [];
    for (const n of nodes) {
      const role = n.role?.value ?? "";
      if (n.ignored || !NAMED_ROLES.has(role)) continue;
      const name = (n.name?.value ?? "").trim();
      byRole.set(role, [...(byRole.get(role) ?? []), name]);
      if (name) continue;
      let where = "";
      if (n.backendDOMNodeId !== undefined) {
        const { node } = (await session.send("DOM.describeNode", { backendNodeId: n.backendDOMNodeId })) as { node: { localName: string; attributes?: string[] } };
        const attrs = node.attributes ?? [];
        const testid = attrs[attrs.indexOf("data-testid") + 1];
        where = `<${node.localName}${attrs.includes("data-testid") ? ` data-testid=${testid}` : ""}>`;
      }
      unnamed.push(`${role} ${where}`.trim());
    }
    return { byRole, unnamed };
  } finally {
    await session.detach();
  }
}

interface FrameTree {
  frame: { id: string; name?: string };
  childFrames?: FrameTree[];
}

function findFrame(tree: FrameTree, name: string): string | null {
  if (tree.frame.name === name) return tree.frame.id;
  for (const c of tree.childFrames ?? []) {
    const id = findFrame(c, name);
    if (id) return id;
  }
  return null;
}

/** Fails on any unnamed control; checks that the named ones include `expect` (role → names). */
async function checkNames(t: E2E, where: string, expect: Record<string, string[]> = {}): Promise<number> {
  const { byRole, unnamed } = await paneControls(t);
  checkEqual(unnamed, [], `controls without an accessible name in ${where}`);
  for (const [role, names] of Object.entries(expect)) {
    const got = byRole.get(role) ?? [];
    // A name, or a name followed by more words (a column's checkbox also says its type).
    for (const n of names) check(got.some((g) => g === n || g.startsWith(`${n} `)), `${where}: a ${role} named "${n}" (${role}s: ${JSON.stringify(got)})`);
  }
  return [...byRole.values()].reduce((a, b) => a + b.length, 0);
}

/**
 * Keyboard and screen-reader basics, checked on the live task pane: the section tabs follow the
 * ARIA tabs pattern (arrow keys, Home, End), and every visible control in every section, form,
 * the import panel and a confirmation dialog has an accessible name. Each of those screens is also
 * audited with axe-core in both themes at 320 and 450 px (`t.audit`; the other journeys audit
 * theirs at every screenshot), and so is the help page.
 */
export const accessibility: Journey = {
  name: "accessibility: tabs work with arrow keys; every visible control in every section, form and dialog has a name",
  async run(t) {
    await t.id("tab-connections").click();
    await t.id("tab-connections").press("ArrowRight");
    await t.attr(t.id("tab-datasets"), "aria-selected", "true");
    check(await t.id("tab-datasets").evaluate((el) => el === document.activeElement), "focus follows the selected tab");
    check(await t.id("panel-datasets").isVisible(), "the arrow key showed the datasets panel");
    await t.id("tab-datasets").press("End");
    await t.attr(t.id("tab-records"), "aria-selected", "true");
    await t.id("tab-records").press("Home");
    await t.attr(t.id("tab-connections"), "aria-selected", "true");

    let controls = 0;
    for (const tab of TABS) {
      await t.id(`tab-${tab}`).click();
      await t.attr(t.id(`tab-${tab}`), "aria-selected", "true");
      checkEqual(await t.id(`panel-${tab}`).isVisible(), true, `panel ${tab} visible`);
      controls += await checkNames(t, tab, { tab: ["Connect", "Datasets", "Snapshots", "Refresh", "Records"], combobox: ["Connection"] });
      await t.audit(`the ${tab} section`);
    }
    await t.id("records-tab-form").click();
    await t.id("records-panel-form").waitFor();
    controls += await checkNames(t, "records: create / edit", { combobox: ["Kind", "Action"], textbox: ["Add a custom field"], checkbox: ["Numeric"] });
    await t.audit("records: create / edit");
    await t.id("records-tab-writeback").click();
    await t.id("records-panel-writeback").waitFor();
    controls += await checkNames(t, "records: write back", { combobox: ["Table"] });
    await t.audit("records: write back");
    await t.id("records-tab-open").click();

    // The connection form: text inputs named by their labels (inside the Fluent component).
    await openTab(t, "connections");
    await t.id("connection-add").click();
    await t.id("connection-form").waitFor();
    controls += await checkNames(t, "the connection form", { textbox: ["Name", "Environment address", "Company API token"] });
    await t.audit("the connection form");
    await t.id("connection-cancel").click();

    // A confirmation dialog: named by its question, its buttons by their text.
    await t.id("connection-remove").first().click();
    await t.id("connection-remove-dialog").waitFor();
    controls += await checkNames(t, "the remove dialog", { alertdialog: [`Remove ${await t.id("connection-item-name").first().innerText()}?`], button: ["Remove", "Keep"] });
    check(await t.id("connection-remove-cancel").evaluate((el) => el === document.activeElement), "the dialog focuses Keep");
    await t.audit("the remove dialog");
    await t.page.keyboard.press("Escape");
    await t.id("connection-remove-dialog").waitFor({ state: "detached" });
    checkEqual(await t.id("connection-item").count() > 0, true, "Esc kept the connection");

    // The import panel: radios, checkboxes, dropdowns (also of a filter row and an aggregate of the
    // Summarize step), text inputs, textarea.
    await openImport(t, "financials");
    await t.id("query-filter-add").click();
    await t.id("summary-toggle").click();
    await t.id("summary-aggregate-add").click();
    controls += await checkNames(t, "the import panel", {
      radiogroup: ["Destination", "Format"],
      radio: ["New sheet", "JSON", "CSV"],
      checkbox: ["project_id", "budget"],
      combobox: ["Sort by", "Direction", "Filter 1 column", "Filter 1 comparison", "Aggregate 1: what to compute", "Aggregate 1: column"],
      textbox: ["Filter 1 value", "Aggregate 1: name of its result column", "Or paste an OData address or $filter=… / $apply=… text (replaces the options above)"],
      spinbutton: ["Keep the first N rows"],
    });
    await t.audit("the import panel with a filter and the Summarize step");
    await t.id("query-filter-remove").click();
    await t.id("summary-aggregate-remove").click();
    await t.id("summary-toggle").click();
    await t.id("import-close").click();
    t.note(`${controls} named controls checked in the accessibility tree`);

    // The help page (help.html, the manifest's SupportUrl), opened as a page of its own at both widths.
    const help = await t.page.context().newPage();
    try {
      for (const width of [320, 450]) {
        await help.setViewportSize({ width, height: 800 });
        await help.goto(`${t.origin}/help.html`);
        const found = await axeFrame(help.mainFrame());
        t.audits.push({ screen: "the help page", frame: "page", theme: "light", width, violations: found });
        if (found.length > 0) throw new E2EFailure(`accessibility (axe-core): the help page at ${width} px: ${found.map((v) => `${v.rule} (${v.impact}): ${v.nodes.join(" | ")}`).join("; ")}`);
      }
    } finally {
      await help.close();
    }
  },
};
