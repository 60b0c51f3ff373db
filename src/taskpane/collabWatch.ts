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

/** What the pane shows about co-authoring (`engine.collaboration()`, one sync). */
export interface Collaboration {
  active: boolean;
  holders: Record<string, { holder: string; since: string }>;
}

/** The engine's side of it (`src/addin/engine.ts`: `collaboration`, `watchSettings`). */
export interface CollabEngine {
  collaboration(): Promise<Collaboration>;
  watchSettings(listener: () => void): Promise<(() => void) | null>;
}

/** While co-authors are present, the list is read again this often (desktop Excel raises no settings event). */
export const COLLAB_POLL_MS = 15_000;

/**
 * The Refresh tab's watch over co-authors: `watch()` registers the settings listener once; `read()`
 * reads who is editing and who holds which table, and keeps the poll running exactly while
 * co-authoring is active. Every reading the workbook asks for (event or poll) goes through
 * {@link latestOnly} and is skipped while the tab is hidden (it reads again when shown).
 */
export function collabWatch(opts: {
  engine: () => Promise<CollabEngine>;
  /** Reads the whole list again (the pane's `loadTables`, which calls `read()`). */
  reload: () => Promise<void>;
  hidden: () => boolean;
  pollMs?: number;
  timers?: { setInterval(fn: () => void, ms: number): unknown; clearInterval(handle: unknown): void };
}) {
  const timers = opts.timers ?? { setInterval: (fn: () => void, ms: number): unknown => setInterval(fn, ms), clearInterval: (h: unknown) => clearInterval(h as ReturnType<typeof setInterval>) };
  const reload = latestOnly(opts.reload);
  const asked = (): void => void (opts.hidden() ? undefined : reload());
  let poll: unknown = null;
  let watching = false;
  return {
    /** Registers the settings listener (once; a failed registration leaves the poll to do it). */
    async watch(): Promise<void> {
      if (watching) return;
      watching = true;
      try {
        await (await opts.engine()).watchSettings(asked);
      } catch {
        /* no event: the list is read when shown, and polled while co-authoring */
      }
    },
    /** Who edits and who holds which table; starts or stops the poll to match. Never throws. */
    async read(): Promise<Collaboration> {
      let collab: Collaboration;
      try {
        collab = await (await opts.engine()).collaboration();
      } catch {
        collab = { active: false, holders: {} };
      }
      if (collab.active && poll === null) poll = timers.setInterval(asked, opts.pollMs ?? COLLAB_POLL_MS);
      if (!collab.active && poll !== null) {
        timers.clearInterval(poll);
        poll = null;
      }
      return collab;
    },
    /** Whether the poll runs (tests). */
    get polling(): boolean {
      return poll !== null;
    },
  };
}
