/**
 * The Refresh tab's view of co-authors (issue #26, hazard 9), without the DOM: the line that names
 * who holds a table, and the rule for reading the workbook again when its settings change.
 *
 * The pane listens to `Excel.SettingCollection.onSettingsChanged` (`engine.watchSettings`): on Excel
 * on the web with co-authors it fires when a co-author's lock, binding or flag reaches this copy — and
 * possibly for the add-in's own writes too (Microsoft does not say; the emulator takes that stricter
 * reading). A refresh writes several settings (lock, marker, binding, log), so events come in bursts;
 * {@link latestOnly} turns a burst into at most one reading in flight plus one after it, so the view
 * ends on the workbook's latest state without a reading per event.
 */
import { formatRelative } from "./datasets";

/** "Being refreshed by Ben's task pane since 2 minutes ago" (the Refresh tab's per-table line). */
export function holderText(lock: { holder: string; since: string }, now: Date): string {
  return `Being refreshed by ${lock.holder} since ${formatRelative(lock.since, now)}`;
}

/**
 * Wraps `run` so that calls while it runs are merged into ONE further run after it (the later state
 * is what matters). Each call resolves when a run that started after the call has finished.
 */
export function latestOnly(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = (async () => {
      try {
        await run();
      } catch {
        /* the caller's run reports its own errors; the next event reads again */
      }
    })();
    running = p.then(() => {
      running = null;
    });
    return running;
  };
  return () => {
    if (!running) return start();
    if (!queued) {
      queued = running.then(() => {
        queued = null;
        return start();
      });
    }
    return queued;
  };
}
