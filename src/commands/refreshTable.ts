/**
 * The ribbon's "Refresh this table" (issue 17): refreshes the bound table under the selection with
 * this device's connection, holding the runtime's refresh lock, and reports like "Refresh all"
 * (summary dialog, `event.completed()` once it is shown; the table's binding keeps its outcome).
 *
 * With the shared runtime the button is disabled while the selection is outside every bound table
 * (`RibbonState`), but the ribbon can lag or refuse an update, so the command checks again itself
 * and, when it finds the ribbon out of step, says so and sends the intended state again.
 */
import type { Binding } from "../refresh/binding";
import type { RefreshReport } from "../refresh/engine";
import type { Engine } from "../addin/engine";
import { busyText, type RefreshLock } from "../addin/refreshLock";
import type { RibbonState } from "../addin/ribbonState";
import { summarize, summaryText } from "../addin/refreshSummary";
import { redactSecrets } from "../service/errors";
import { reportSummary, type DialogUi } from "./refreshAll";

export const NOT_IN_TABLE = "The selection is not in a table imported by PPM for Excel. Select a cell of a PPM table (or its info line) and try again.";

export interface RefreshTableCommandDeps {
  engine: () => Promise<Pick<Engine, "bindingAtSelection">>;
  /** Refreshes one binding with this device's connection (a `no_connection` report when there is none). */
  refresh: (binding: Binding) => Promise<RefreshReport>;
  lock: () => RefreshLock;
  ribbon?: () => RibbonState | undefined;
  ui: () => DialogUi | undefined;
  pageUrl: () => string;
  secrets: () => readonly string[];
}

/** Builds the `refreshTable` function command; it calls `event.completed()` exactly once. */
export function createRefreshTableCommand(deps: RefreshTableCommandDeps): (event: { completed(options?: unknown): void }) => Promise<void> {
  return async (event) => {
    let text: string;
    let state: "ok" | "failed" = "ok";
    try {
      const engine = await deps.engine();
      const binding = await engine.bindingAtSelection();
      if (!binding) {
        state = "failed";
        text = NOT_IN_TABLE;
        void deps.ribbon?.()?.resend();
      } else {
        const ran = await deps.lock().run("ribbon", `Refreshing ${binding.tableName}`, () => deps.refresh(binding));
        if (!ran.ran) {
          state = "failed";
          text = busyText(ran.holder);
          void deps.ribbon?.()?.resend();
        } else {
          const summary = summarize([ran.value]);
          if (summary.failed > 0) state = "failed";
          text = summaryText(summary);
        }
      }
    } catch (e) {
      state = "failed";
      let msg = e instanceof Error ? e.message : String(e);
      // Every form of every stored secret (Base64, Base64url, percent-encoded, pieces), not only the plain text.
      msg = redactSecrets(msg, deps.secrets().filter((s) => s.length >= 4));
      text = `Refresh this table could not run: ${msg}`;
    }
    try {
      await reportSummary(deps.ui(), deps.pageUrl(), text, state);
    } finally {
      event.completed();
    }
  };
}
