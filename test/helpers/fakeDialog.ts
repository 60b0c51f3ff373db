/**
 * A fake `Office.context.ui` for the ribbon commands' summary dialog, with the page's side of the
 * protocol (`src/commands/summaryMessages.ts`): once a dialog is open the fake page says it is
 * ready (as summary.html does in `Office.onReady`), and records what the command sends it.
 */
import type { DialogLike, DialogUi } from "../../src/commands/refreshAll";
import { CLOSE, parseSummaryMessage, READY, type SummaryMessage } from "../../src/commands/summaryMessages";

export interface FakeDialog {
  url: string;
  /** What the page received by `messageChild`, in order. */
  received: SummaryMessage[];
  /** True once the command (or the user's ✕) closed it. */
  closed: boolean;
  handlers: Map<string, Array<(arg: unknown) => void>>;
  /** The page's Close / Hide button. */
  clickClose(): void;
  /** The window's own ✕ (Office raises dialogEventReceived 12006). */
  userCloses(): void;
}

/**
 * `mode`: "dialog" opens dialogs (DialogApi 1.2); "fail" refuses every open (12007: another
 * dialog is open); "no-message-child" opens DialogApi 1.1 dialogs (no `messageChild`).
 * `openOnly` limits how many dialogs may open (later ones fail with 12007).
 */
export function fakeDialogUi(mode: "dialog" | "fail" | "no-message-child" = "dialog", opts: { openOnly?: number; pageReady?: boolean } = {}) {
  const dialogs: FakeDialog[] = [];
  const calls: string[] = [];
  const ui: DialogUi = {
    displayDialogAsync(url, _opts, cb) {
      calls.push(`open ${url}`);
      const open = dialogs.filter((d) => !d.closed).length;
      if (mode === "fail" || (opts.openOnly !== undefined && dialogs.length >= opts.openOnly) || open > 0) {
        setTimeout(() => cb({ status: "failed", error: { code: 12007 } }), 0);
        return;
      }
      const d: FakeDialog = {
        url,
        received: [],
        closed: false,
        handlers: new Map(),
        clickClose: () => fire("dialogMessageReceived", { message: CLOSE, origin: new URL(url).origin }),
        userCloses: () => {
          d.closed = true;
          fire("dialogEventReceived", { error: 12006 });
        },
      };
      const fire = (type: string, arg: unknown) => {
        for (const h of d.handlers.get(type) ?? []) h(arg);
      };
      const value: DialogLike = {
        close: () => {
          calls.push("close");
          d.closed = true;
        },
        addEventHandler: (type, h) => d.handlers.set(type, [...(d.handlers.get(type) ?? []), h]),
      };
      if (mode !== "no-message-child") {
        value.messageChild = (m: string) => {
          const parsed = parseSummaryMessage(m);
          if (!parsed) throw new Error(`not a summary message: ${m}`);
          calls.push(`message ${parsed.state}: ${parsed.text}`);
          d.received.push(parsed);
        };
      }
      dialogs.push(d);
      setTimeout(() => {
        cb({ status: "succeeded", value });
        // The page loads and tells its opener it is ready (summary.html, in Office.onReady).
        if (opts.pageReady !== false) setTimeout(() => fire("dialogMessageReceived", { message: READY, origin: new URL(url).origin }), 0);
      }, 0);
    },
  };
  /** The texts the last dialog showed, in order. */
  const shown = () => dialogs.flatMap((d) => d.received);
  return { ui, dialogs, calls, shown };
}

/** Lets queued timers (the fake Office's answers) run. */
export function settle(ms = 5): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits (on real timers) until `cond` holds; fails after `ms`. */
export async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting for the fake dialog");
    await settle(5);
  }
}
