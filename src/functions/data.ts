/**
 * The worksheet functions' data: one cached export per connection and dataset, shared by every
 * formula of the runtime (issue #28). Pure logic: no Office, no DOM; the service is reached through
 * the {@link DataSource} given (a `PpmClient` in the add-in, anything in tests).
 *
 * Decisions (README "Worksheet functions"):
 * - **One request per dataset and generation.** The first formula that names a dataset starts its
 *   download; every other formula of the same recalculation (500 `PPM.VALUE` cells, or a storm of
 *   recalculations) waits for that same promise. Once loaded, formulas read the cached table and send
 *   nothing.
 * - **Revalidation is conditional and explicit.** {@link FormulaData.revalidate} sends one
 *   conditional request (`If-None-Match` / `If-Modified-Since`) per cached dataset, at most one at a
 *   time per dataset; a 304 changes nothing, a new generation replaces the table and tells the
 *   subscribed formulas (streaming functions), which then show the new values. The add-in calls it
 *   after every refresh (ribbon, pane, refresh on open) and on a slow timer.
 * - **A failed revalidation keeps the previous table** and marks it stale (PPM.ASOF says so); a
 *   failed first load is not cached, so the next revalidation (or recalculation) tries again.
 * - **A dataset no formula uses any more is forgotten** at the next revalidation (memory, requests).
 * - Always the JSON export: it carries the column types.
 */
import type { Connection } from "../service/connection";
import { connectionScope } from "../service/connection";
import type { DatasetResult } from "../service/client";
import type { Validators } from "../service/validators";
import type { Table } from "../table/model";

/** What the cache needs from the service (a `PpmClient` has it). */
export interface DataSource {
  fetchDataset(key: string, opts: { format: "json"; conditional?: boolean; validators?: Validators; signal?: AbortSignal }): Promise<DatasetResult>;
  /** Key property names of each entity set (`$metadata`), by dataset key. */
  datasetKeys(key: string, opts?: { signal?: AbortSignal }): Promise<string[]>;
}

/** One dataset as the formulas see it. */
export interface DatasetEntry {
  readonly dataset: string;
  table: Table;
  /** Key columns from `$metadata` (empty when it declares none). */
  keys: string[];
  validators: Validators;
  /** When this runtime last heard from the service about it (a 200 or a 304). */
  checkedAt: string;
  /** Why the last revalidation failed (the table is then stale); null after a success. */
  staleReason: string | null;
  /** Bumped whenever `table` is replaced. */
  version: number;
  /** key text → row index, built on first lookup. */
  index: Map<string, number> | null;
}

export interface FormulaDataOptions {
  /** The service for a connection (one client per connection, created once). */
  source(conn: Connection): DataSource;
  now?: () => Date;
}

type Listener = (entry: DatasetEntry) => void;

interface Slot {
  conn: Connection;
  dataset: string;
  entry: DatasetEntry | null;
  loading: Promise<DatasetEntry> | null;
  revalidating: Promise<void> | null;
  listeners: Set<Listener>;
}

/** Counts, for tests and the pane: what the formulas cost. */
export interface FormulaDataStats {
  /** Unconditional downloads (first loads). */
  loads: number;
  /** Conditional requests sent by revalidation. */
  revalidations: number;
  /** Of those, answered "unchanged". */
  unchanged: number;
}

export class FormulaData {
  private readonly slots = new Map<string, Slot>();
  private readonly sources = new Map<string, DataSource>();
  readonly stats: FormulaDataStats = { loads: 0, revalidations: 0, unchanged: 0 };

  constructor(private readonly opts: FormulaDataOptions) {}

  private now(): Date {
    return this.opts.now ? this.opts.now() : new Date();
  }

  /** Cache identity: environment + token fingerprint + dataset (never the token itself). */
  private slotKey(conn: Connection, dataset: string): string {
    return `${connectionScope(conn)}|${dataset}`;
  }

  private source(conn: Connection): DataSource {
    const k = `${conn.id}|${connectionScope(conn)}`;
    let s = this.sources.get(k);
    if (!s) {
      s = this.opts.source(conn);
      this.sources.set(k, s);
    }
    return s;
  }

  private slot(conn: Connection, dataset: string): Slot {
    const k = this.slotKey(conn, dataset);
    let s = this.slots.get(k);
    if (!s) {
      s = { conn, dataset, entry: null, loading: null, revalidating: null, listeners: new Set() };
      this.slots.set(k, s);
    }
    s.conn = conn; // the latest credentials (a token updated in the pane)
    return s;
  }

  /** The cached dataset, loading it once for all the formulas that ask at the same time. */
  get(conn: Connection, dataset: string): Promise<DatasetEntry> {
    const s = this.slot(conn, dataset);
    if (s.entry) return Promise.resolve(s.entry);
    s.loading ??= this.download(s, dataset).finally(() => {
      s.loading = null;
    });
    return s.loading;
  }

  /** The entry when it is already loaded (no request), else null. */
  peek(conn: Connection, dataset: string): DatasetEntry | null {
    return this.slots.get(this.slotKey(conn, dataset))?.entry ?? null;
  }

  private async download(s: Slot, dataset: string): Promise<DatasetEntry> {
    const src = this.source(s.conn);
    this.stats.loads++;
    const [result, keys] = await Promise.all([src.fetchDataset(dataset, { format: "json", conditional: false }), src.datasetKeys(dataset)]);
    if (result.status !== "updated") throw new Error(`The service answered "unchanged" to the first request for "${dataset}".`);
    const entry: DatasetEntry = {
      dataset,
      table: result.table,
      keys,
      validators: result.validators,
      checkedAt: this.now().toISOString(),
      staleReason: null,
      version: 1,
      index: null,
    };
    s.entry = entry;
    return entry;
  }

  /** Calls `listener` whenever this dataset's table is replaced (not for the first load). */
  subscribe(conn: Connection, dataset: string, listener: Listener): () => void {
    const s = this.slot(conn, dataset);
    s.listeners.add(listener);
    return () => s.listeners.delete(listener);
  }

  /** Subscribed formulas of every dataset (for tests and the pane). */
  subscriberCount(): number {
    let n = 0;
    for (const s of this.slots.values()) n += s.listeners.size;
    return n;
  }

  /**
   * One conditional request per loaded dataset (those being revalidated already are not asked
   * again). Updated tables go to their subscribers. Never throws: a failure marks the entry stale.
   */
  async revalidate(): Promise<void> {
    const runs: Promise<void>[] = [];
    for (const [key, s] of [...this.slots]) {
      if (s.listeners.size === 0 && !s.loading && !s.revalidating) {
        // No formula uses it any more (deleted or changed): forget it rather than keep it fresh.
        this.slots.delete(key);
        continue;
      }
      if (!s.entry) {
        // A first load that failed (network, 503): formulas still wait for it; try it once more.
        if (s.listeners.size > 0 && !s.loading) runs.push(this.retry(s));
        continue;
      }
      s.revalidating ??= this.revalidateOne(s).finally(() => {
        s.revalidating = null;
      });
      runs.push(s.revalidating);
    }
    await Promise.all(runs);
  }

  private async retry(s: Slot): Promise<void> {
    try {
      const entry = await this.get(s.conn, s.dataset);
      for (const l of [...s.listeners]) l(entry);
    } catch {
      // Still failing: the formulas keep showing the error they have.
    }
  }

  private async revalidateOne(s: Slot): Promise<void> {
    const entry = s.entry;
    if (!entry) return;
    this.stats.revalidations++;
    let result: DatasetResult;
    try {
      result = await this.source(s.conn).fetchDataset(entry.dataset, { format: "json", conditional: true, validators: entry.validators });
    } catch (e) {
      entry.staleReason = e instanceof Error ? e.message : String(e);
      for (const l of [...s.listeners]) l(entry);
      return;
    }
    const wasStale = entry.staleReason !== null;
    entry.checkedAt = this.now().toISOString();
    entry.staleReason = null;
    entry.validators = result.validators;
    if (result.status === "unchanged") {
      this.stats.unchanged++;
      if (wasStale) for (const l of [...s.listeners]) l(entry);
      return;
    }
    entry.table = result.table;
    entry.index = null;
    entry.version++;
    for (const l of [...s.listeners]) l(entry);
  }

  /** Forgets everything (a connection removed, tests). */
  clear(): void {
    this.slots.clear();
    this.sources.clear();
  }
}
