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
import { btn, injectStyle, screenContext } from "./common";
import { mountFormScreen } from "./form";
import { mountOpenScreen } from "./open";
import { mountWritebackScreen } from "./writeback";

/** Mounts the Records section. Returns an unmount function. */
export const mountRecords: MountRecords = (container: HTMLElement, ctx: RecordsContext) => {
  injectStyle();
  const s = screenContext(ctx);

  const notice = h("div", { class: "records-notice", "data-testid": "records-credentials-missing", role: "note" });
  const panels = {
    open: h("div", { "data-testid": "records-panel-open" }),
    form: h("div", { "data-testid": "records-panel-form" }),
    writeback: h("div", { "data-testid": "records-panel-writeback" }),
  };
  const tabButtons = {
    open: btn("records-tab-open", "Open", () => selectTab("open")),
    form: btn("records-tab-form", "Create / edit", () => selectTab("form")),
    writeback: btn("records-tab-writeback", "Write back from sheet", () => selectTab("writeback")),
  };
  function selectTab(name: keyof typeof panels): void {
    for (const k of Object.keys(panels) as (keyof typeof panels)[]) {
      panels[k].hidden = k !== name;
      tabButtons[k].setAttribute("aria-selected", String(k === name));
    }
    if (name === "writeback") void writeback.loadTables();
  }
  const root = h(
    "section",
    { class: "records", "data-testid": "records-root" },
    notice,
    h("div", { class: "records-tabs", role: "tablist" }, tabButtons.open, tabButtons.form, tabButtons.writeback),
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
