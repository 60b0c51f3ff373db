/**
 * A deadline for work that runs inside a window the host closes: Excel ends an add-in command's
 * function runtime 5 minutes after the command started (docs: "Add-in commands", function commands),
 * taking any unfinished work with it. Two marks inside the window:
 * - `expired()` (soft): start nothing new after it; what is left is skipped and reported.
 * - `signal` (hard): aborts the work in progress (a refresh then restores the table it was writing), so
 *   the result is reported and `event.completed()` called before Excel closes the runtime.
 *
 * Kept small and DOM-free: issue #17 (shared runtime) reuses it.
 */

/** Excel's window for a function command (docs: add-in commands). */
export const FUNCTION_COMMAND_WINDOW_MS = 5 * 60_000;
/** After this, Refresh all starts no further table (leaves time for the last table and its restore). */
export const REFRESH_ALL_SOFT_MS = 3 * 60_000 + 30_000;
/** After this, the table being written is cancelled and restored. */
export const REFRESH_ALL_HARD_MS = 4 * 60_000 + 15_000;
/** `event.completed()` is called by then whatever still runs (the summary is stored for the task pane). */
export const COMPLETE_BY_MS = 4 * 60_000 + 45_000;

export interface Deadline {
  /** True once the soft mark has passed. */
  expired(): boolean;
  /** Milliseconds until the soft mark (negative after it). */
  remainingMs(): number;
  /** Aborted at the hard mark. */
  readonly signal: AbortSignal;
  /** Stops the timer (call when the work is done). */
  dispose(): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A deadline starting now: soft mark after `softMs`, hard abort after `hardMs`. */
export function createDeadline(softMs = REFRESH_ALL_SOFT_MS, hardMs = REFRESH_ALL_HARD_MS, clock: Clock = systemClock): Deadline {
  const start = clock.now();
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(new Error("The time window for this command ended.")), hardMs);
  return {
    expired: () => clock.now() - start >= softMs,
    remainingMs: () => softMs - (clock.now() - start),
    signal: controller.signal,
    dispose: () => clock.clearTimeout(timer),
  };
}
