/**
 * The one refresh lock of a JavaScript runtime. With the shared runtime (issue 17) the task pane,
 * the ribbon's commands and the refresh on open all run in one runtime and take this one lock, so
 * two refreshes never interleave their Excel batches over the same tables, and the ribbon can show
 * "Refresh all" disabled while a refresh runs.
 *
 * Scope: one runtime. Across runtimes (separate runtimes where SharedRuntime 1.1 is missing, or a
 * second window on the same workbook) the per-table lock kept in the workbook (issue 10, B9) is
 * what guards; this lock sits above it and never replaces it.
 */

/** Who holds the lock: the pane's Refresh tab, a ribbon command, or the refresh on open. */
export type LockOwner = "pane" | "ribbon" | "open";

export interface LockHolder {
  owner: LockOwner;
  /** What runs, for a "busy" message ("Refresh all", "Refreshing ppm_financials…"). */
  label: string;
  since: Date;
}

export class RefreshLock {
  private current: LockHolder | null = null;
  private readonly listeners = new Set<(holder: LockHolder | null) => void>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  get holder(): LockHolder | null {
    return this.current;
  }

  get busy(): boolean {
    return this.current !== null;
  }

  /**
   * Takes the lock, or returns null at once when someone holds it (callers say so; nobody queues
   * behind a refresh the user cannot see). The release function is idempotent.
   */
  tryAcquire(owner: LockOwner, label: string): (() => void) | null {
    if (this.current) return null;
    const mine: LockHolder = { owner, label, since: this.now() };
    this.current = mine;
    this.emit();
    return () => {
      if (this.current !== mine) return;
      this.current = null;
      this.emit();
    };
  }

  /** Runs `work` holding the lock; `busy` is returned without running it when the lock is taken. */
  async run<T>(owner: LockOwner, label: string, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false; holder: LockHolder }> {
    const release = this.tryAcquire(owner, label);
    if (!release) return { ran: false, holder: this.current! };
    try {
      return { ran: true, value: await work() };
    } finally {
      release();
    }
  }

  onChange(listener: (holder: LockHolder | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const l of [...this.listeners]) {
      try {
        l(this.current);
      } catch {
        /* a listener's failure must not leave the lock in a half-announced state */
      }
    }
  }
}

/** The sentence shown when a refresh is refused because another one runs. */
export function busyText(holder: LockHolder): string {
  const where = holder.owner === "pane" ? "in the task pane" : holder.owner === "ribbon" ? "from the ribbon" : "since the workbook opened";
  return `A refresh started ${where} is still running (${holder.label}). Try again when it has finished.`;
}
