/**
 * What the pane shows of the refresh on open (issue 17): one quiet line with the outcome, and one
 * quiet note when this device has no connection (or no token) for the flagged tables. Never an
 * alert or a dialog: the workbook opened fine, the data in it is the last refresh's, and each failed
 * table carries its failure in its binding (listed in the Refresh tab).
 *
 * Consent (issue #22): a workbook whose flags were not set on this device waits for the user's
 * answer here, in the pane, before anything is sent (a question with two buttons, not a dialog).
 */
import { h, replace } from "./dom";
import type { PaneContext } from "./context";
import { missingConnectionNote, openConsentText, type OpenRefreshOutcome } from "../addin/startup";
import { summarize } from "../addin/refreshSummary";
import { questionCard } from "./question";

export function mountOpenRefreshNotes(ctx: PaneContext): void {
  const found = ctx.runtime;
  if (!found) return;
  const runtime = found;
  const host = h("div", { class: "open-refresh" });
  ctx.notices.appendChild(host);
  runtime.onOpenRefresh((outcome) => {
    render(outcome);
    if (outcome.state === "done") ctx.changed("bindings");
  });

  function dismiss(el: HTMLElement): HTMLElement {
    return h("fluent-button", { type: "button", appearance: "transparent", size: "small", "aria-label": "Dismiss", onclick: () => el.remove() }, "✕");
  }

  /** The user answered "Refresh on this device" here: the refresh that follows ran now, not when the workbook opened. */
  let allowedHere = false;

  function render(outcome: OpenRefreshOutcome): void {
    if (outcome.state === "none") return replace(host);
    const parts: HTMLElement[] = [];
    if (outcome.state === "busy") {
      const el = h("p", { class: "note", role: "status", "data-testid": "open-refresh-summary", "data-state": "busy", "data-transient": "true" });
      replace(el, `Tables set to refresh when this workbook opens were not refreshed: another refresh was running (${outcome.holder.label}).`, dismiss(el));
      parts.push(el);
    } else {
      if (outcome.state === "consent") {
        const answer = (allow: boolean) => {
          allowedHere = allow;
          for (const b of el.querySelectorAll<HTMLElement & { disabled: boolean }>("fluent-button")) b.disabled = true;
          void runtime.answerOpenConsent(allow);
        };
        const el = questionCard({
          testid: "open-refresh-consent",
          title: "Refresh when this workbook opens?",
          text: openConsentText(outcome.tables),
          textTestid: "open-refresh-consent-text",
          yes: { label: "Refresh on this device", testid: "open-refresh-consent-allow", onClick: () => answer(true) },
          no: { label: "Not on this device", testid: "open-refresh-consent-deny", onClick: () => answer(false) },
          data: { tables: String(outcome.tables.length) },
        });
        parts.push(el);
      } else if (outcome.state === "declined") {
        const el = h("p", { class: "note", role: "status", "data-testid": "open-refresh-declined" });
        replace(
          el,
          `This workbook's tables are not refreshed when it opens on this device (your choice). Refresh them from the Refresh tab, or `,
          h("fluent-button", { type: "button", appearance: "transparent", size: "small", "data-testid": "open-refresh-consent-allow", onclick: () => ((allowedHere = true), void runtime.answerOpenConsent(true)) }, "refresh on open here"),
          dismiss(el),
        );
        parts.push(el);
      }
      if (outcome.state === "done" && outcome.reports.length > 0) {
        const s = summarize(outcome.reports);
        const el = h("p", {
          class: `note${s.failed > 0 ? " warn" : ""}`,
          role: "status",
          "data-testid": "open-refresh-summary",
          "data-state": "done",
          // Gone when the user moves to another section (issue #25: no message lingers).
          "data-transient": "true",
          "data-updated": String(s.updated),
          "data-unchanged": String(s.unchanged),
          "data-failed": String(s.failed),
        });
        const failedNote = s.failed > 0 ? " The Refresh tab shows why." : "";
        // After the user's yes the tables were refreshed then, not when the workbook opened (issue #37).
        replace(el, `${allowedHere ? "Refreshed on this device, as you allowed" : "Refreshed when the workbook opened"}: ${s.headline}.${failedNote}`, dismiss(el));
        allowedHere = false;
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
        const noToken = outcome.missing.find((m) => m.reason === "no_token" && m.connectionId);
        const action =
          outcome.missing.some((m) => m.reason !== "no_token") || !noToken?.connectionId
            ? h("fluent-button", { type: "button", appearance: "transparent", size: "small", "data-testid": "open-refresh-add-connection", onclick: () => ctx.addConnection() }, "Add a connection")
            : h("fluent-button", { type: "button", appearance: "transparent", size: "small", "data-testid": "open-refresh-update-token", onclick: () => ctx.updateToken(noToken.connectionId!) }, "Update token");
        replace(el, note, " ", action, dismiss(el));
        parts.push(el);
      }
    }
    replace(host, ...parts);
  }
}
