/**
 * What the pane shows of the refresh on open (issue 17): one quiet line with the outcome, and one
 * quiet note when this device has no connection for the flagged tables. Never an alert or a dialog:
 * the workbook opened fine, the data in it is the last refresh's, and each failed table carries its
 * failure in its binding (listed in the Refresh tab).
 */
import { h, replace } from "./dom";
import type { PaneContext } from "./context";
import { missingConnectionNote, type OpenRefreshOutcome } from "../addin/startup";
import { summarize } from "../addin/refreshSummary";

export function mountOpenRefreshNotes(ctx: PaneContext): void {
  const runtime = ctx.runtime;
  if (!runtime) return;
  const host = h("div", { class: "open-refresh" });
  ctx.notices.appendChild(host);
  runtime.onOpenRefresh((outcome) => {
    render(outcome);
    if (outcome.state === "done") ctx.changed("bindings");
  });

  function dismiss(el: HTMLElement): HTMLElement {
    return h("fluent-button", { type: "button", appearance: "transparent", size: "small", "aria-label": "Dismiss", onclick: () => el.remove() }, "✕");
  }

  function render(outcome: OpenRefreshOutcome): void {
    if (outcome.state === "none") return replace(host);
    const parts: HTMLElement[] = [];
    if (outcome.state === "busy") {
      const el = h("p", { class: "note", role: "status", "data-testid": "open-refresh-summary", "data-state": "busy" });
      replace(el, `Tables set to refresh when this workbook opens were not refreshed: another refresh was running (${outcome.holder.label}).`, dismiss(el));
      parts.push(el);
    } else {
      if (outcome.reports.length > 0) {
        const s = summarize(outcome.reports);
        const el = h("p", {
          class: `note${s.failed > 0 ? " warn" : ""}`,
          role: "status",
          "data-testid": "open-refresh-summary",
          "data-state": "done",
          "data-updated": String(s.updated),
          "data-unchanged": String(s.unchanged),
          "data-failed": String(s.failed),
        });
        const failedNote = s.failed > 0 ? " The Refresh tab shows why." : "";
        replace(el, `Refreshed when the workbook opened: ${s.headline}.${failedNote}`, dismiss(el));
        parts.push(el);
      }
      const note = missingConnectionNote(outcome.missing);
      if (note) {
        const el = h("p", {
          class: "note",
          role: "status",
          "data-testid": "open-refresh-note",
          "data-tables": String(outcome.missing.reduce((n, m) => n + m.tables.length, 0)),
        });
        replace(
          el,
          note,
          " ",
          h("fluent-button", { type: "button", appearance: "transparent", size: "small", "data-testid": "open-refresh-add-connection", onclick: () => ctx.addConnection() }, "Add a connection"),
          dismiss(el),
        );
        parts.push(el);
      }
    }
    replace(host, ...parts);
  }
}
