/**
 * The ribbon's "Refresh all": refreshes every bound table without the task pane, with the
 * connections (and tokens) this device stores, then reports the outcome.
 *
 * The window: Excel closes a function command's runtime 5 minutes after it started (docs: "Add-in
 * commands"), whatever still runs. So every path ends inside it (`src/addin/deadline.ts`): after the
 * soft mark no further table starts (the rest are reported as skipped), at the hard mark the table
 * being written is cancelled and restored, and `event.completed()` is called by a timer at the latest
 * just before the window ends, even if something hangs.
 *
 * How the result is reported: Excel has no notification API for function commands (the
 * `notificationMessages` API is Outlook's), so the summary is shown in a small Office dialog
 * (`displayDialogAsync`). The dialog's page takes its text only from the command, by `messageChild`
 * (DialogApi 1.2; `summaryMessages.ts`), never from its address (issue #22). The "Refreshing…"
 * dialog opened at the start becomes the summary in place, so no second dialog has to open (Office
 * allows one dialog per window, error 12007). `event.completed()` is called as soon as the summary
 * is shown, never waiting for the user to close it (a user away from the desk would otherwise hold
 * the runtime past its window).
 *
 * The summary is never lost: it is always stored on the device first (`LAST_RIBBON_REFRESH_KEY`,
 * success or not), and the task pane's Refresh tab shows it. Where no dialog can be shown (no
 * DialogApi 1.2, another dialog already open, a pop-up blocker in Excel on the web), that stored
 * copy is the report: `messageParent` is not used as a fallback, because outside a dialog it has
 * no receiver and the summary would vanish.
 */
import type { ConnectionStore, StorageLike } from "../addin/connectionStore";
import { LAST_RIBBON_REFRESH_KEY, resolveConnectionId, summarize, summaryText, type RefreshSummary } from "../addin/refreshSummary";
import { CLOSE, isReadyMessage, summaryMessage, type SummaryState } from "./summaryMessages";
import type { Engine } from "../addin/engine";
import { redactSecrets } from "../service/errors";
import { busyText, type RefreshLock } from "../addin/refreshLock";
import { COMPLETE_BY_MS, createDeadline, REFRESH_ALL_HARD_MS, REFRESH_ALL_SOFT_MS, systemClock, type Clock } from "../addin/deadline";

/** Refreshes every bound table with the device's connections and returns the summary. */
export async function refreshEveryTable(store: ConnectionStore, engine: Pick<Engine, "refreshAll">, signal?: AbortSignal, deadline?: { expired(): boolean }): Promise<RefreshSummary> {
  const connections = store.list();
  const res = await engine.refreshAll(
    (b) => {
      const id = resolveConnectionId(b, connections);
      return id ? store.connection(id) : null;
    },
    { secrets: store.allSecrets(), signal, deadline, holder: "Refresh all on the ribbon" },
  );
  return summarize(res.reports, res.broken, (b) => resolveConnectionId(b, connections));
}

/** The slice of `Office.Dialog` the report uses. */
export interface DialogLike {
  close(): void;
  addEventHandler(eventType: string, handler: (arg: unknown) => void): void;
  /** DialogApi 1.2: a message to the dialog's page. Without it the dialog cannot show the summary. */
  messageChild?(message: string): void;
}

/**
 * The slice of `Office.context.ui` the report uses, typed loosely (office.js's enums are plain
 * strings at run time: `"succeeded"`, `"dialogMessageReceived"`, `"dialogEventReceived"`).
 */
export interface DialogUi {
  displayDialogAsync(url: string, options: { height: number; width: number; displayInIframe?: boolean }, callback: (result: { status: unknown; value?: DialogLike; error?: { code?: number } }) => void): void;
}

/** The summary dialog's address: `summary.html` next to the command page, with nothing in the query. */
export function summaryDialogUrl(pageUrl: string): string {
  return new URL("summary.html", pageUrl).href;
}

/** An open summary dialog: `show` replaces what it says; `closed` once the user or Office closed it. */
export interface SummaryDialog {
  show(state: SummaryState, text: string): void;
  readonly closed: boolean;
  close(): void;
}

/**
 * Opens the summary dialog showing `state` and `text`, and resolves with it once Office has opened
 * it, or with null when it cannot be shown (no dialog API, no `messageChild`, another dialog open:
 * 12007, a blocked pop-up). Never rejects. The dialog answers the page's "ready" with the current
 * content, and closes itself when the page's button asks.
 */
export function openSummaryDialog(ui: DialogUi | undefined, pageUrl: string, state: SummaryState, text: string): Promise<SummaryDialog | null> {
  if (!ui?.displayDialogAsync) return Promise.resolve(null);
  return new Promise((resolve) => {
    try {
      ui.displayDialogAsync(summaryDialogUrl(pageUrl), { height: 30, width: 25, displayInIframe: true }, (result) => {
        const dialog = String(result.status) === "succeeded" ? result.value : undefined;
        if (!dialog) return resolve(null);
        if (typeof dialog.messageChild !== "function") {
          // DialogApi 1.1 only: the page could not be told what to say. The stored summary is the report.
          try {
            dialog.close();
          } catch {
            /* already closed */
          }
          return resolve(null);
        }
        let current = summaryMessage(state, text);
        let ready = false;
        let closed = false;
        const post = () => {
          if (!ready || closed) return;
          try {
            dialog.messageChild!(current);
          } catch {
            /* the dialog went away */
          }
        };
        const close = () => {
          if (closed) return;
          closed = true;
          try {
            dialog.close();
          } catch {
            /* already closed by the user */
          }
        };
        // The page's button sends a message; the window's own close button sends an event.
        dialog.addEventHandler("dialogMessageReceived", (arg) => {
          const message = (arg as { message?: unknown } | null)?.message;
          if (isReadyMessage(message)) {
            ready = true;
            post();
          } else if (message === CLOSE) close();
        });
        dialog.addEventHandler("dialogEventReceived", () => {
          closed = true;
        });
        resolve({
          show(nextState, nextText) {
            current = summaryMessage(nextState, nextText);
            post();
          },
          get closed() {
            return closed;
          },
          close,
        });
      });
    } catch {
      resolve(null);
    }
  });
}

/**
 * Shows the summary in a dialog and resolves as soon as it is shown ("dialog"; the dialog closes
 * itself when the user closes it), or at once with "stored" when no dialog could be shown (the
 * caller has stored the summary for the task pane). Never waits for the user, never rejects.
 */
export async function reportSummary(ui: DialogUi | undefined, pageUrl: string, text: string, state: "ok" | "failed"): Promise<"dialog" | "stored"> {
  return (await openSummaryDialog(ui, pageUrl, state, text)) ? "dialog" : "stored";
}

/** Office needs a moment after a dialog is closed before the next one opens. */
const DIALOG_REOPEN_DELAY_MS = 300;

export interface RefreshAllCommandDeps {
  store: () => ConnectionStore;
  engine: () => Promise<Pick<Engine, "refreshAll">>;
  ui: () => DialogUi | undefined;
  pageUrl: () => string;
  /** Where the last summary is kept for the task pane. */
  storage?: () => StorageLike | undefined;
  partitionKey?: () => string | undefined;
  now?: () => Date;
  /** The runtime's refresh lock (issue 17): shared with the pane in the shared runtime. */
  lock?: () => RefreshLock;
  /** True in Office's shared runtime, which has no 5-minute function-command window (issue 17): no deadline then. */
  sharedRuntime?: () => boolean;
  /** Timers of the 5-minute window (tests pass a fake clock). */
  clock?: Clock;
}

/**
 * Builds the `refreshAll` function command. It always calls `event.completed()` exactly once,
 * whatever fails.
 */
export function createRefreshAllCommand(deps: RefreshAllCommandDeps): (event: { completed(options?: unknown): void }) => Promise<void> {
  return async (event) => {
    const clock = deps.clock ?? systemClock;
    let completed = false;
    const complete = () => {
      if (completed) return;
      completed = true;
      try {
        event.completed();
      } catch {
        /* the host already ended the command */
      }
    };
    // Whatever hangs (Excel busy, a slow service), Excel gets its completion inside the window.
    const backstop = clock.setTimeout(complete, COMPLETE_BY_MS);
    // The shared runtime has no 5-minute window, so no table is skipped or cut short there.
    const deadline = deps.sharedRuntime?.() ? null : createDeadline(REFRESH_ALL_SOFT_MS, REFRESH_ALL_HARD_MS, clock);
    let text: string;
    let state: "ok" | "failed" = "ok";
    let counts: { updated: number; unchanged: number; failed: number } | null = null;
    const dialog = await openSummaryDialog(deps.ui(), deps.pageUrl(), "working", "Refreshing every PPM table in this workbook…");
    try {
      const store = deps.store();
      const engine = await deps.engine();
      const work = () => refreshEveryTable(store, engine, deadline?.signal, deadline ?? undefined);
      const ran = deps.lock ? await deps.lock().run("ribbon", "Refresh all", work) : { ran: true as const, value: await work() };
      if (!ran.ran) throw new Error(busyText(ran.holder));
      const summary = ran.value;
      text = summaryText(summary);
      if (summary.failed > 0) state = "failed";
      counts = { updated: summary.updated, unchanged: summary.unchanged, failed: summary.failed };
    } catch (e) {
      state = "failed";
      const msg = e instanceof Error ? e.message : String(e);
      // Defensive: the engine redacts, but this text leaves the add-in's control (dialog, storage).
      let safe = msg;
      try {
        safe = redactSecrets(msg, deps.store().allSecrets().filter((s) => s.length >= 4));
      } catch {
        /* store unreadable: keep the message as is */
      }
      text = `Refresh all could not run: ${safe}`;
    }
    deadline?.dispose();
    // Stored first, whatever happens next: the task pane's Refresh tab shows it.
    try {
      const storage = deps.storage?.();
      const prefix = deps.partitionKey?.() ? `${deps.partitionKey()}:` : "";
      storage?.setItem(prefix + LAST_RIBBON_REFRESH_KEY, JSON.stringify({ at: (deps.now?.() ?? new Date()).toISOString(), text, state, ...(counts ?? {}) }));
    } catch {
      /* storage full or blocked: the dialog still shows the result */
    }
    try {
      if (!completed) {
        if (dialog && !dialog.closed) {
          // The "Refreshing…" dialog becomes the summary in place: no second dialog (12007).
          dialog.show(state, text);
        } else {
          // The user hid the working dialog (or none could open): open the summary now.
          if (dialog) await new Promise((r) => setTimeout(r, DIALOG_REOPEN_DELAY_MS));
          if (!completed) await openSummaryDialog(deps.ui(), deps.pageUrl(), state, text);
        }
      }
    } finally {
      clock.clearTimeout(backstop);
      complete();
    }
  };
}
