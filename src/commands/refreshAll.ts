/**
 * The ribbon's "Refresh all": refreshes every bound table without the task pane, with the
 * connections (and tokens) this device stores, then reports the outcome.
 *
 * How the result is reported, and why: Excel has no notification API for function commands (the
 * `notificationMessages` API is Outlook's), so the summary is shown in a small Office dialog
 * (`displayDialogAsync`, DialogApi 1.1) that the user closes. The command's `event.completed()` is
 * called when that dialog closes, because completing earlier lets Excel tear down the function
 * runtime and the dialog with it. Where no dialog can be opened (dialog API missing, a pop-up
 * blocker in Excel on the web, or the browser preview), the summary goes through
 * `messageParent` when the host offers it (the preview shows it as a notification) and the
 * command completes at once. The last summary is also kept in storage, so the task pane's Refresh
 * tab can show it.
 */
import type { ConnectionStore, StorageLike } from "../addin/connectionStore";
import { LAST_RIBBON_REFRESH_KEY, resolveConnectionId, summarize, summaryText, type RefreshSummary } from "../addin/refreshSummary";
import type { Engine } from "../addin/engine";
import { redactSecrets } from "../service/errors";

/** Longest summary text put into the dialog's address (addresses have practical length limits). */
export const MAX_DIALOG_TEXT = 1500;

/** Refreshes every bound table with the device's connections and returns the summary. */
export async function refreshEveryTable(store: ConnectionStore, engine: Pick<Engine, "refreshAll">, signal?: AbortSignal): Promise<RefreshSummary> {
  const connections = store.list();
  const res = await engine.refreshAll(
    (b) => {
      const id = resolveConnectionId(b, connections);
      return id ? store.connection(id) : null;
    },
    { secrets: store.allSecrets(), signal },
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
 * Shows the summary and resolves when the user has seen it (dialog closed) or at once when no
 * dialog could be opened. Never rejects.
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
        const done = () => {
          try {
            dialog.close();
          } catch {
            /* already closed by the user */
          }
          resolve("dialog");
        };
        // The dialog's Close button sends a message; the window's own close button sends an event.
        dialog.addEventHandler("dialogMessageReceived", done);
        dialog.addEventHandler("dialogEventReceived", done);
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
}

/**
 * Builds the `refreshAll` function command. It always calls `event.completed()` exactly once,
 * whatever fails.
 */
export function createRefreshAllCommand(deps: RefreshAllCommandDeps): (event: { completed(options?: unknown): void }) => Promise<void> {
  return async (event) => {
    let text: string;
    let state: "ok" | "failed" = "ok";
    const working = await showWorking(deps.ui(), deps.pageUrl());
    try {
      const store = deps.store();
      const summary = await refreshEveryTable(store, await deps.engine());
      text = summaryText(summary);
      if (summary.failed > 0) state = "failed";
      try {
        const storage = deps.storage?.();
        const prefix = deps.partitionKey?.() ? `${deps.partitionKey!()}:` : "";
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
    try {
      if (working) {
        try {
          working.close();
        } catch {
          /* the user already closed it */
        }
        await new Promise((r) => setTimeout(r, DIALOG_REOPEN_DELAY_MS));
      }
      await reportSummary(deps.ui(), deps.pageUrl(), text, state);
    } finally {
      event.completed();
    }
  };
}
