/**
 * The Records section of the task pane: open a record (`open.ts`), create/update one (`form.ts`),
 * and write custom-field edits back from an imported projects/proposals snapshot table
 * (`writeback.ts`). This file is the shell: tabs, the credentials notice, and the wiring between
 * the screens; what they share is in `common.ts`.
 *
 * DOM only: every rule (validation, change detection, grouping, refresh order) is in `src/records`;
 * every Excel call is in `src/workbook/writeback.ts`. Test ids are listed in `TESTIDS.md`.
 */
import { h, replace } from "../dom";
import type { MountRecords, RecordsContext } from "../recordsHost";
import { screenContext } from "./common";
import { tabList } from "../controls";
import { mountFormScreen } from "./form";
import { mountOpenScreen } from "./open";
import { mountWritebackScreen } from "./writeback";

/** Mounts the Records section. Returns an unmount function. */
export const mountRecords: MountRecords = (container: HTMLElement, ctx: RecordsContext) => {
  const s = screenContext(ctx);

  const notice = h("div", { class: "records-notice", "data-testid": "records-credentials-missing", role: "note" });
  type Screen = "open" | "form" | "writeback";
  const panel = (name: Screen) => h("div", { id: `records-panel-${name}`, role: "tabpanel", "aria-labelledby": `records-tab-${name}`, "data-testid": `records-panel-${name}` });
  const panels = { open: panel("open"), form: panel("form"), writeback: panel("writeback") };
  const labels: Record<Screen, string> = { open: "Open", form: "Create / edit", writeback: "Write back" };
  const tabs = tabList({
    label: "Records",
    class: "records-tabs",
    size: "small",
    tabs: (Object.keys(panels) as Screen[]).map((k) => ({ id: `records-tab-${k}`, label: labels[k], testid: `records-tab-${k}`, panelId: `records-panel-${k}` })),
    onSelect: (id) => selectTab(id.slice("records-tab-".length) as Screen),
  });
  function selectTab(name: Screen): void {
    tabs.select(`records-tab-${name}`);
    for (const k of Object.keys(panels) as Screen[]) panels[k].hidden = k !== name;
    if (name === "writeback") void writeback.loadTables();
  }
  const root = h(
    "section",
    { class: "records", "data-testid": "records-root" },
    notice,
    tabs.el,
    panels.open,
    panels.form,
    panels.writeback,
  );

  const form = mountFormScreen(panels.form, s, { select: () => selectTab("form") });
  const writeback = mountWritebackScreen(panels.writeback, s);
  mountOpenScreen(panels.open, s, { edit: (view) => void form.start("update", view) });

  function renderNotice(): void {
    const p = s.credsProblem();
    notice.hidden = p === null;
    notice.textContent = p ?? "";
    if (p === null) notice.remove();
    else if (!notice.isConnected) root.insertBefore(notice, root.firstChild);
    form.credentialsChanged(p);
    writeback.updateConfirm();
  }

  replace(container, root);
  selectTab("open");
  void form.start("create", undefined, false);
  renderNotice();
  const off = ctx.onConnectionChange(() => {
    s.forgetCustomFields();
    renderNotice();
    form.revalidate();
  });
  return () => {
    off();
    container.replaceChildren();
  };
};
