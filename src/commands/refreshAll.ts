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
 * (`displayDialogAsync`, DialogApi 1.1). `event.completed()` is called as soon as the dialog is
 * shown, never waiting for the user to close it (a user away from the desk would otherwise hold the
 * runtime past its window). Where no dialog can be opened (dialog API missing, a pop-up blocker in
 * Excel on the web, or the browser preview), the summary goes through `messageParent` when the host
 * offers it (the preview shows it as a notification). The last summary is also kept in storage, so
 * the task pane's Refresh tab shows it even if the runtime was closed with the dialog.
 */
import type { ConnectionStore, StorageLike } from "../addin/connectionStore";
import { LAST_RIBBON_REFRESH_KEY, resolveConnectionId, summarize, summaryText, type RefreshSummary } from "../addin/refreshSummary";
import type { Engine } from "../addin/engine";
import { redactSecrets } from "../service/errors";
import { busyText, type RefreshLock } from "../addin/refreshLock";
import { COMPLETE_BY_MS, createDeadline, REFRESH_ALL_HARD_MS, REFRESH_ALL_SOFT_MS, systemClock, type Clock } from "../addin/deadline";

/** Longest summary text put into the dialog's address (addresses have practical length limits). */
export const MAX_DIALOG_TEXT = 1500;

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
}

/**
 * The slice of `Office.context.ui` the report uses, typed loosely (office.js's enums are plain
 * strings at run time: `"succeeded"`, `"dialogMessageReceived"`, `"dialogEventReceived"`).
 */
export interface DialogUi {
  displayDialogAsync(url: string, options: { height: number; width: number; displayInIframe?: boolean }, callback: (result: { status: unknown; value?: DialogLike }) => void): void;
  messageParent?(message: string): void;
}

/** The summary dialog's address: `summary.html` next to the command page, the text in the query. */
export function summaryDialogUrl(pageUrl: string, text: string, state: "ok" | "failed" | "working"): string {
  const url = new URL("summary.html", pageUrl);
  const clipped = text.length > MAX_DIALOG_TEXT ? `${text.slice(0, MAX_DIALOG_TEXT - 1)}…` : text;
  url.searchParams.set("state", state);
  url.searchParams.set("text", clipped);
  return url.href;
}

/**
 * Shows the summary and resolves as soon as it is shown (dialog opened; the dialog closes itself when
 * the user closes it), or at once when no dialog could be opened. Never waits for the user. Never
 * rejects.
 */
export function reportSummary(ui: DialogUi | undefined, pageUrl: string, text: string, state: "ok" | "failed"): Promise<"dialog" | "message" | "none"> {
  const fallback = (): "message" | "none" => {
    try {
      if (ui?.messageParent) {
        ui.messageParent(text);
        return "message";
      }
    } catch {
      /* no channel left; the summary is still stored for the task pane */
    }
    return "none";
  };
  if (!ui?.displayDialogAsync) return Promise.resolve(fallback());
  return new Promise((resolve) => {
    try {
      ui.displayDialogAsync(summaryDialogUrl(pageUrl, text, state), { height: 30, width: 25, displayInIframe: true }, (result) => {
        if (String(result.status) !== "succeeded" || !result.value) {
          resolve(fallback());
          return;
        }
        const dialog = result.value;
        const close = () => {
          try {
            dialog.close();
          } catch {
            /* already closed by the user */
          }
        };
        // The dialog's Close button sends a message; the window's own close button sends an event.
        dialog.addEventHandler("dialogMessageReceived", close);
        dialog.addEventHandler("dialogEventReceived", close);
        resolve("dialog");
      });
    } catch {
      resolve(fallback());
    }
  });
}

/**
 * Opens the "Refreshing…" dialog while the command runs (a function command has no other way to
 * show that it is working). Resolves with the dialog, or null when none could be opened; never rejects.
 */
export function showWorking(ui: DialogUi | undefined, pageUrl: string): Promise<DialogLike | null> {
  if (!ui?.displayDialogAsync) return Promise.resolve(null);
  return new Promise((resolve) => {
    try {
      ui.displayDialogAsync(summaryDialogUrl(pageUrl, "Refreshing every PPM table in this workbook…", "working"), { height: 30, width: 25, displayInIframe: true }, (result) => {
        const dialog = String(result.status) === "succeeded" && result.value ? result.value : null;
        // "Hide" in the dialog closes it; the refresh goes on and the summary opens when it ends.
        dialog?.addEventHandler("dialogMessageReceived", () => {
          try {
            dialog.close();
          } catch {
            /* already closed */
          }
        });
        resolve(dialog);
      });
    } catch {
      resolve(null);
    }
  });
}

/** Office allows one dialog at a time and needs a moment after `close()` before the next opens. */
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
    const working = await showWorking(deps.ui(), deps.pageUrl());
    try {
      const store = deps.store();
      const engine = await deps.engine();
      const work = () => refreshEveryTable(store, engine, deadline?.signal, deadline ?? undefined);
      const ran = deps.lock ? await deps.lock().run("ribbon", "Refresh all", work) : { ran: true as const, value: await work() };
      if (!ran.ran) throw new Error(busyText(ran.holder));
      const summary = ran.value;
      text = summaryText(summary);
      if (summary.failed > 0) state = "failed";
      try {
        const storage = deps.storage?.();
        const prefix = deps.partitionKey?.() ? `${deps.partitionKey()}:` : "";
        storage?.setItem(prefix + LAST_RIBBON_REFRESH_KEY, JSON.stringify({ at: (deps.now?.() ?? new Date()).toISOString(), text, updated: summary.updated, unchanged: summary.unchanged, failed: summary.failed }));
      } catch {
        /* storage full or blocked: the dialog still shows the result */
      }
    } catch (e) {
      state = "failed";
      const msg = e instanceof Error ? e.message : String(e);
      // Defensive: the engine redacts, but this text leaves the add-in's control (dialog address).
      let safe = msg;
      try {
        safe = redactSecrets(msg, deps.store().allSecrets().filter((s) => s.length >= 4));
      } catch {
        /* store unreadable: keep the message as is */
      }
      text = `Refresh all could not run: ${safe}`;
    }
    deadline?.dispose();
    try {
      if (working) {
        try {
          working.close();
        } catch {
          /* the user already closed it */
        }
        if (!completed) await new Promise((r) => setTimeout(r, DIALOG_REOPEN_DELAY_MS));
      }
      if (!completed) await reportSummary(deps.ui(), deps.pageUrl(), text, state);
    } finally {
      clock.clearTimeout(backstop);
      complete();
    }
  };
}
