/**
 * The refresh engine: fetch conditionally, decide, then hand a fully validated table to the
 * workbook. It talks to the workbook through {@link RefreshTarget} (implemented with Excel in
 * `src/workbook/refresh.ts`, and with fakes in tests), so the engine itself stays pure.
 *
 * Guarantee: every failure before `target.write` leaves the sheet untouched (only the binding's
 * failure record changes); a failure inside `target.write` is the target's to restore or mark.
 */
import type { Table } from "../table/model";
import { applyQuery, createQuerySink, QueryError, type LocalQuery } from "../query";
import type { Binding, BindingFailure } from "./binding";
import { decide, failureFrom, withFailure, withSuccess, withUnchanged, type QueryApplier } from "./plan";
import type { RefreshSource, SourceResult } from "./source";
import { chooseKey, type DeltaSummary, type KeyChoice } from "./delta";
import { keyForQuery } from "./queryKey";

/** Progress of one refresh, for a status line. */
export interface RefreshProgress {
  bindingId: string;
  phase: "fetching" | "writing";
  rowsWritten?: number;
  totalRows?: number;
  /** Rows received so far while fetching (a refresh counts rows, not "0 rows received"). */
  rowsReceived?: number;
}

/** The workbook side of a refresh. */
export interface RefreshTarget {
  /** Every binding stored in the workbook; unreadable ones are listed with their error, never dropped silently. */
  listBindings(): Promise<{ bindings: Binding[]; broken: { key: string; code: string; message: string }[] }>;
  /**
   * Writes a validated table over the bound table. Must check everything it can (table present,
   * room to grow) before writing the first cell, and on a failure after that restore the previous
   * data or leave the table clearly marked, then rethrow.
   */
  write(
    binding: Binding,
    table: Table,
    options: {
      signal?: AbortSignal;
      onProgress?: (rowsWritten: number, totalRows: number) => void;
      key?: KeyChoice | null;
      /**
       * The binding to store with the data (issue #21): a target that can store it in the same step as
       * the data (so outcome, info line, binding and sheet always agree) does, and says `committed`.
       */
      commit?: (delta: DeltaSummary | undefined) => Binding;
    },
  ): Promise<{ warnings: string[]; delta?: DeltaSummary; committed?: boolean; binding?: Binding }>;
  /** Stores the (updated) binding in the workbook. */
  saveBinding(binding: Binding): Promise<void>;
  /**
   * Stores what a refresh that wrote no data learnt (its failure, or "unchanged" and its check time)
   * WITHOUT writing the binding whole (issue #26, hazard 6: a co-author's copy may hold a newer
   * binding than `read`, the one this refresh started from). Optional: targets without it store the
   * whole binding.
   */
  saveStatus?(read: Binding, updated: Binding): Promise<void>;
  /**
   * Marks the table as not refreshed (issue #15: the info line starts with the reason and time),
   * after a failure that left the previous data in place. Optional; errors become warnings.
   */
  markStale?(binding: Binding, failure: BindingFailure): Promise<void>;
  /** Removes a stale mark after a refresh that found the data unchanged (a write removes it anyway). */
  markFresh?(binding: Binding): Promise<void>;
  /** Appends one entry to the workbook's refresh log (issue #15). Optional; errors become warnings. */
  logRefresh?(entry: RefreshLogEntry): Promise<void>;
}

/** One line of the refresh log kept in the workbook: never data values, never a token. */
export interface RefreshLogEntry {
  at: string;
  bindingId: string;
  tableName: string;
  outcome: "unchanged" | "updated" | "failed";
  added: number;
  changed: number;
  removed: number;
  /** Delta or full rewrite (updated only). */
  strategy: "delta" | "full" | null;
  /** How rows were matched (updated only): by position, the counts are rows rewritten, not changes (issue #25). */
  matchedBy?: "key" | "position";
  ms: number;
  /** Cells written to Excel (0 when unchanged or failed). */
  cellsWritten: number;
  /** Bytes of the response body downloaded from the service (0 for a 304); null when the source cannot tell. */
  bytesReceived: number | null;
  /** Failure code (failed only); the message is on the binding. */
  code: string | null;
  /** Why a delta became a full rewrite in the same refresh (issue #21: Excel refused it), or null. */
  fallback?: string | null;
}

export interface RefreshOptions {
  signal?: AbortSignal;
  onProgress?: (p: RefreshProgress) => void;
  /** Applies the stored local query; default: the query engine's `applyQuery`. */
  applyQuery?: QueryApplier;
  /** Values that must never reach a stored message (the connection's token). */
  secrets?: readonly string[];
  now?: () => Date;
  /**
   * Refresh all only: once `expired()` is true no further table is started; the rest are reported as
   * failed with code `skipped` (e.g. the ribbon command's 5-minute window, `src/addin/deadline.ts`).
   */
  deadline?: { expired(): boolean };
}

export interface RefreshReport {
  bindingId: string;
  tableName: string;
  outcome: "unchanged" | "updated" | "failed";
  /** Rows in the table after the refresh (unchanged on failure). */
  rowCount: number;
  failure?: BindingFailure;
  warnings: string[];
  binding: Binding;
  /** What an "updated" refresh wrote: delta or full rewrite, rows added/changed/removed (issue #15). */
  delta?: DeltaSummary;
  /**
   * The service had a new export, but this table's rows came out the same (a local query or summary
   * whose result did not change): reported "unchanged", not "updated" with 0 added, 0 changed, 0
   * removed (issue #37). The info line and the binding name the new generation.
   */
  newExport?: true;
}

/**
 * Failures after which nothing of the binding, its info line or the refresh log is written: another
 * runtime holds the table (its own binding and info line are on the way), or (issue #35) the sheet or
 * the workbook's structure is protected, which the add-in leaves exactly as the user protected it.
 */
const OTHERS_TABLE = new Set(["table_busy", "lock_lost", "protected"]);

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const e = new Error("Refresh cancelled.");
  e.name = "AbortError";
  return e;
}

/** A refresh that wrote no data stores its status only, where the target can (issue #26, hazard 6). */
function saveStatus(target: RefreshTarget, read: Binding, updated: Binding): Promise<void> {
  return target.saveStatus ? target.saveStatus(read, updated) : target.saveBinding(updated);
}

const defaultApplier: QueryApplier = (t: Table, query: LocalQuery) => applyQuery(t, query);

/**
 * Refreshes one bound table. Never throws for refresh failures: they are recorded on the binding and
 * returned in the report (a failure to store the record itself is added to `warnings`).
 */
export async function refreshOne(target: RefreshTarget, binding: Binding, source: RefreshSource, options: RefreshOptions = {}): Promise<RefreshReport> {
  const now = options.now ?? (() => new Date());
  const started = Date.now();
  const moved = { bytes: 0, counted: false };
  const r = await refreshOneInner(target, binding, source, options, now, (n) => {
    moved.bytes += n;
    moved.counted = true;
  });
  const failure = r.failure;
  try {
    // Not after a cancel (the user's choice) or while another runtime is writing the table (its own
    // info line is on the way).
    if (r.outcome === "failed" && failure && failure.code !== "cancelled" && !OTHERS_TABLE.has(failure.code)) await target.markStale?.(r.binding, failure);
    if (r.outcome === "unchanged" && binding.lastFailure) await target.markFresh?.(r.binding);
  } catch (e) {
    r.warnings.push(`The table's info line could not be updated: ${failureFrom(e, now(), options.secrets ?? []).message}`);
  }
  try {
    if (failure?.code !== "protected") await target.logRefresh?.({
      at: now().toISOString(), bindingId: r.bindingId, tableName: r.tableName, outcome: r.outcome,
      added: r.delta?.added ?? 0, changed: r.delta?.changed ?? 0, removed: r.delta?.removed ?? 0,
      strategy: r.delta?.strategy ?? null, ...(r.delta ? { matchedBy: r.delta.matchedBy } : {}), ms: Date.now() - started, cellsWritten: r.delta?.cellsWritten ?? 0,
      code: failure?.code ?? null,
      fallback: r.delta?.fallback ?? null,
      bytesReceived: moved.counted || r.outcome === "unchanged" ? moved.bytes : null,
    });
  } catch (e) {
    r.warnings.push(`The refresh log could not be updated: ${failureFrom(e, now(), options.secrets ?? []).message}`);
  }
  return r;
}

async function refreshOneInner(target: RefreshTarget, binding: Binding, source: RefreshSource, options: RefreshOptions, now: () => Date, onBytes: (n: number) => void): Promise<RefreshReport> {
  const secrets = options.secrets ?? [];
  const warnings: string[] = [];
  const report = (b: Binding, outcome: RefreshReport["outcome"], failure?: BindingFailure): RefreshReport => ({
    bindingId: b.id, tableName: b.tableName, outcome, rowCount: b.rowCount, failure, warnings, binding: b,
  });
  let writing = false;
  const fail = async (err: unknown): Promise<RefreshReport> => {
    const failure = failureFrom(err, now(), secrets);
    const updated = withFailure(binding, failure);
    // Another runtime is refreshing (or took over) this table: its binding is the one to keep, so
    // this failure is reported, never stored over it (issue #21: no runtime erases another's settings).
    if (OTHERS_TABLE.has(failure.code)) return report(updated, "failed", failure);
    try {
      // A failure while writing (this refresh held the table's lock, and the write put the data it
      // found back) stores the binding whole, as before: the write may have committed the new one
      // with the data before failing. Before that (fetch, checks, 304) only the status is stored.
      if (writing) await target.saveBinding(updated);
      else await saveStatus(target, binding, updated);
    } catch (e) {
      warnings.push(`The failure could not be recorded in the workbook: ${failureFrom(e, now(), secrets).message}`);
    }
    return report(updated, "failed", failure);
  };

  try {
    if (options.signal?.aborted) throw abortError(options.signal);
    options.onProgress?.({ bindingId: binding.id, phase: "fetching" });
    // A summary ($apply) is recomputed as the rows stream in, so its raw export is never held whole;
    // a 304 still costs nothing. Other queries run on the complete table, as before.
    const sink = binding.query?.apply !== undefined ? createQuerySink(binding.query) : undefined;
    let result: SourceResult;
    try {
      result = await source.fetch(binding.source, {
        validators: binding.validators,
        signal: options.signal,
        sink,
        onBytes,
        onProgress: options.onProgress ? (r) => options.onProgress?.({ bindingId: binding.id, phase: "fetching", rowsReceived: r.rows }) : undefined,
      });
    } catch (e) {
      if (e instanceof QueryError) return await fail(Object.assign(new Error(`The stored local query could not be applied: ${e.message}`), { code: "query_failed" }));
      throw e;
    }
    // A source that ignored the sink returned the raw table: the query is applied to it as usual.
    const applier: QueryApplier = sink?.finished ? (t) => ({ table: t }) : (options.applyQuery ?? defaultApplier);
    const decision = decide(binding, result, applier);
    if (decision.kind === "fail") return await fail(Object.assign(new Error(decision.message), { code: decision.code }));
    if (decision.kind === "unchanged") {
      const updated = withUnchanged(binding, decision.validators, now());
      await saveStatus(target, binding, updated);
      return report(updated, "unchanged");
    }
    if (options.signal?.aborted) throw abortError(options.signal);
    const total = decision.table.rows.length;
    options.onProgress?.({ bindingId: binding.id, phase: "writing", rowsWritten: 0, totalRows: total });
    const success = (delta: DeltaSummary | undefined): Binding => ({ ...withSuccess(binding, decision.table, decision.validators, now()), lastDelta: delta ?? null });
    writing = true;
    const written = await target.write(binding, decision.table, {
      // A summary's rows are its groups: matched by the group-by columns, not the dataset's key (issue #25).
      key: keyForQuery(result.status === "updated" && result.key !== undefined ? result.key : chooseKey(binding.source, null), binding.query, decision.table.columns),
      signal: options.signal,
      onProgress: (rowsWritten, totalRows) => options.onProgress?.({ bindingId: binding.id, phase: "writing", rowsWritten, totalRows }),
      commit: success,
    });
    warnings.push(...written.warnings);
    let updated: Binding;
    if (written.committed && written.binding) updated = written.binding;
    else {
      updated = success(written.delta);
      await target.saveBinding(updated);
    }
    // Counted rows (matched by key or position), none added, changed or removed, and no cell written
    // (a cell typed over since is put back, and counts as written): the table's rows are what they were.
    const d = written.delta;
    const same = d !== undefined && d.exact !== false && d.added === 0 && d.changed === 0 && d.removed === 0 && d.cellsWritten === 0 && !d.rowsMoved;
    return same ? { ...report(updated, "unchanged"), delta: d, newExport: true } : { ...report(updated, "updated"), delta: d };
  } catch (err) {
    return fail(err);
  }
}

/**
 * Refreshes every bound table in the workbook, one after another (they share one Excel context and
 * often one connection). `resolveSource` maps a binding to a source holding the user's own
 * credentials for it, or null when the user has no connection for it (recorded as a failure).
 * A cancelled signal stops the run; tables not reached are reported as failed with `cancelled`
 * without touching their binding.
 */
export async function refreshAll(
  target: RefreshTarget,
  resolveSource: (binding: Binding) => RefreshSource | null,
  options: RefreshOptions = {},
): Promise<{ reports: RefreshReport[]; broken: { key: string; code: string; message: string }[] }> {
  const { bindings, broken } = await target.listBindings();
  const reports: RefreshReport[] = [];
  const now = options.now ?? (() => new Date());
  for (const b of bindings) {
    if (options.deadline?.expired()) {
      reports.push({ bindingId: b.id, tableName: b.tableName, outcome: "failed", rowCount: b.rowCount, failure: { at: now().toISOString(), code: "skipped", message: "Not refreshed: the time for this run was used up before this table's turn. Refresh it again (large tables from the task pane)." }, warnings: [], binding: b });
      continue;
    }
    if (options.signal?.aborted) {
      reports.push({ bindingId: b.id, tableName: b.tableName, outcome: "failed", rowCount: b.rowCount, failure: { at: now().toISOString(), code: "cancelled", message: "Cancelled before this table was refreshed." }, warnings: [], binding: b });
      continue;
    }
    const source = resolveSource(b);
    if (!source) {
      const err = Object.assign(new Error(`No connection "${b.connectionId}" for ${b.environment}; add a connection with your own token for this company to refresh this table.`), { code: "no_connection" });
      const failure = failureFrom(err, now(), options.secrets);
      const updated = withFailure(b, failure);
      const warnings: string[] = [];
      try {
        await saveStatus(target, b, updated);
      } catch (e) {
        warnings.push(`The failure could not be recorded in the workbook: ${failureFrom(e, now(), options.secrets).message}`);
      }
      reports.push({ bindingId: b.id, tableName: b.tableName, outcome: "failed", rowCount: b.rowCount, failure, warnings, binding: updated });
      continue;
    }
    reports.push(await refreshOne(target, b, source, options));
  }
  return { reports, broken };
}
