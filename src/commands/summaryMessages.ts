/**
 * The messages between a ribbon command and its summary dialog (`summary.html`), shared by both
 * sides. Pure: no DOM, no Office.
 *
 * The dialog shows only what its opener sends it (issue #22 item 5): its address carries no text,
 * so a link to `summary.html?…` on the add-in's trusted origin cannot be made to show anything.
 *
 * 1. The command opens `summary.html` (nothing in the query) with `displayDialogAsync`.
 * 2. The page, once Office is ready, listens for `DialogParentMessageReceived` (DialogApi 1.2) and
 *    tells its opener it is ready (`messageParent`, {@link READY}).
 * 3. The command answers with `dialog.messageChild` ({@link SummaryMessage}), then again whenever
 *    the content changes (the "working" dialog becomes the summary in place).
 * 4. The page's Close (or Hide) button sends {@link CLOSE}; the command closes the dialog.
 *
 * Outside an Office dialog nobody answers step 2, so the page stays empty.
 */

/** What the dialog says: "working" while the command runs, then the outcome. */
export type SummaryState = "ok" | "failed" | "working";

/** The one message a command sends its dialog. */
export interface SummaryMessage {
  kind: "ppm-summary";
  state: SummaryState;
  text: string;
}

/** Sent by the dialog page once it can receive the summary. */
export const READY = JSON.stringify({ kind: "ppm-summary-ready" });

/** Sent by the dialog page's Close / Hide button (the same text as before issue #22). */
export const CLOSE = "close";

/** Longest text a summary message carries (more is cut with "…"; the task pane has the rest). */
export const MAX_SUMMARY_TEXT = 4000;

export function summaryMessage(state: SummaryState, text: string): string {
  const clipped = text.length > MAX_SUMMARY_TEXT ? `${text.slice(0, MAX_SUMMARY_TEXT - 1)}…` : text;
  const m: SummaryMessage = { kind: "ppm-summary", state, text: clipped };
  return JSON.stringify(m);
}

/** Reads a message the page received; null for anything that is not a well-formed summary. */
export function parseSummaryMessage(raw: unknown): SummaryMessage | null {
  if (typeof raw !== "string" || raw.length > MAX_SUMMARY_TEXT * 8) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  if (o.kind !== "ppm-summary" || typeof o.text !== "string") return null;
  if (o.state !== "ok" && o.state !== "failed" && o.state !== "working") return null;
  return { kind: "ppm-summary", state: o.state, text: o.text };
}

/** True for the page's "ready" message. */
export function isReadyMessage(raw: unknown): boolean {
  if (typeof raw !== "string") return false;
  try {
    const v = JSON.parse(raw) as unknown;
    return !!v && typeof v === "object" && (v as Record<string, unknown>).kind === "ppm-summary-ready";
  } catch {
    return false;
  }
}

/** The dialog's heading for a state. */
export function summaryTitle(state: SummaryState): string {
  return state === "failed" ? "Refresh all: some tables failed" : state === "working" ? "Refresh all: working…" : "Refresh all: done";
}
