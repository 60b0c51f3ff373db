/**
 * Everything heavy the task pane uses (service client, local query engine, workbook writer and
 * refresh engine), behind one small facade loaded with a dynamic `import()` after the pane has
 * drawn. These modules carry zod and the parsers, which would otherwise triple the initial bundle.
 *
 * Every Excel call goes through `src/workbook` inside `Excel.run`; the global `Excel` is office.js
 * in Excel and the emulator's namespace in the browser preview, read at call time (never captured
 * at load), so the preview can install it before the pane runs.
 */
import { PATHS } from "../contract/contract";
import type { Connection } from "../service/connection";
import { PpmClient } from "../service/client";
import type { ManifestInfo, ProbeResult } from "../service";
import { applyQuery, parseQuery, splitODataUrl, streamingPlan, validateQuery, type LocalQuery } from "../query";
import { describeSource, type Binding, type BindingSource } from "../refresh/binding";
import { sourceFromClient, type RefreshSource } from "../refresh/source";
import type { RefreshReport } from "../refresh/engine";
import type { ImportResult } from "../workbook/writer";
import { importSource } from "../workbook/importSource";
import { bindingVersion, readBindings, type StoredBindings } from "../workbook/bindingStore";
import { readRefreshLog as readLog } from "../workbook/refreshLog";
import type { RefreshLogEntry } from "../refresh/engine";
import { refreshAllTables, refreshTable } from "../workbook/refresh";
import { setRefreshOnOpen, type OpenFlagResult } from "../workbook/openFlags";
import { afterTableRefresh, beforeTableRefresh, recordImportBaseline } from "../workbook/writeback";
import { clearChanges as clearTableChanges, readChangeState, showChanges as showTableChanges, type ChangeHighlight } from "../workbook/changes";
import type { HeldCell } from "../records/held";
import { isEmptyQuery, type DatasetPaths, type QueryEngine } from "./queryBuilder";
import { rectsIntersect, type Rect } from "./selection";
import { runExcel } from "./excelRun";
import { settleSettings } from "../workbook/settle";
import { recoverInterruptedRefreshes, type RecoveredTable } from "../workbook/recovery";
import { a1 } from "../workbook/names";
import { WriteError } from "../workbook/blocks";
import { acquireTableLock, clearTableLock as clearLock, lockHolds, lockSettingKey, lockTiming, noteCoauthors, parseLock, readTableLock, type LockRecord, type TableLock } from "../workbook/lock";
import { failureFrom } from "../refresh/plan";
import { deleteView as removeStoredView, readViews as readStoredViews, saveView as storeView } from "./viewStore";
import { describeView, serializeViews, type SavedView, type ViewsDocument } from "../views/views";

/** Where an import goes. */
export type Destination = { kind: "newSheet" } | { kind: "selection" };

export interface ImportRequest {
  connection: Connection;
  companyId: string | null;
  source: BindingSource;
  query: LocalQuery | null;
  destination: Destination;
  signal: AbortSignal;
  /** Phase and counts for the progress bar. */
  onProgress(p: { phase: "fetching" | "writing"; rows: number; total?: number }): void;
  /** Credentials that must never reach the workbook. */
  secrets: readonly string[];
  /**
   * The export's row count from the manifest: more than a sheet holds is refused before downloading
   * unless the query summarises or filters (`streamingPlan` in `src/query` says so up front).
   */
  sourceRows?: number | null;
  /** The Excel table's name the user chose; default `ppm_<key>` (`_2`, `_3`… when taken). */
  tableName?: string;
}

export interface ImportOutcome {
  tableName: string;
  sheetName: string;
  address: string;
  rowCount: number;
  /** Rows the service sent before the local query. */
  fetchedRows: number;
  /** Things the user must know although the import succeeded (a write-back record that could not be kept). */
  warnings: string[];
}

export { runExcel } from "./excelRun";

/**
 * Excel work whose settings writes are made durable against co-authors (issue #35, `settle.ts`): the
 * result is handed back as soon as the work is done, and the same batch then waits out the
 * co-authoring window and writes again what a co-author's stale settings copy undid. Nothing waits
 * where the document cannot be co-authored or nothing was written.
 */
function runSettled<T>(work: (context: Excel.RequestContext) => Promise<T>): Promise<T> {
  let handBack!: (result: T) => void;
  const early = new Promise<T>((resolve) => (handBack = resolve));
  const whole = runExcel(async (context) => {
    const result = await work(context);
    handBack(result);
    await settleSettings(context);
    return result;
  });
  // A failure after the result was handed back (the batch's final sync) is the batch's own: nobody waits for it.
  whole.catch(() => undefined);
  return Promise.race([early, whole]);
}

/** True for Excel's "the selection is invalid for this operation" (several areas selected). */
function isInvalidSelection(e: unknown): boolean {
  return !!e && typeof e === "object" && (e as { code?: unknown }).code === "InvalidSelection";
}

/**
 * Sheet and top-left cell of the current selection. A whole column (`Sheet1!A:A`) or row (`3:3`)
 * anchors at its first cell (A1, A3): the indexes are read, not the address text. Several areas
 * (Ctrl+click) have no single anchor: `getSelectedRange` refuses them (docs: Workbook.getSelectedRange)
 * and the user is asked to select one cell.
 * @throws WriteError `selection_invalid` for a multi-area selection.
 */
export async function selectedCell(): Promise<{ sheetName: string; anchor: string }> {
  try {
    return await runSettled(async (context) => {
      const range = context.workbook.getSelectedRange();
      range.load(["rowIndex", "columnIndex", "worksheet/name"]);
      await context.sync();
      return { sheetName: range.worksheet.name, anchor: a1(range.rowIndex, range.columnIndex) };
    });
  } catch (e) {
    if (isInvalidSelection(e)) {
      throw new WriteError("selection_invalid", "The selection has several areas, so there is no one place to put the table. Select a single cell (the table's top-left corner) and import again, or import to a new sheet.");
    }
    throw e;
  }
}

/**
 * The binding whose table contains (part of) the selection, or null. Compares rectangles of the
 * selection and of each bound table on the same sheet, using only long-standing range properties.
 */
export async function bindingAtSelection(): Promise<Binding | null> {
  try {
    return await bindingAtSingleSelection();
  } catch (e) {
    if (isInvalidSelection(e)) return null; // several selected areas point at no one table
    throw e;
  }
}

function bindingAtSingleSelection(): Promise<Binding | null> {
  return runSettled(async (context) => {
    const { bindings } = await readBindings(context);
    const sel = context.workbook.getSelectedRange();
    sel.load(["rowIndex", "columnIndex", "rowCount", "columnCount", "worksheet/name"]);
    const tables = bindings.map((b) => {
      const t = context.workbook.tables.getItemOrNullObject(b.tableName);
      return { b, t };
    });
    await context.sync();
    const ranges = tables
      .filter(({ t }) => !t.isNullObject)
      .map(({ b, t }) => {
        const r = t.getRange();
        r.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
        const ws = t.worksheet;
        ws.load("name");
        return { b, r, ws };
      });
    await context.sync();
    const selRect: Rect = { row: sel.rowIndex, column: sel.columnIndex, rowCount: sel.rowCount, columnCount: sel.columnCount };
    for (const { b, r, ws } of ranges) {
      if (ws.name !== sel.worksheet.name) continue;
      // The info line the writer puts right above a table belongs to it too (it is where a new
      // sheet's selection lands after an import).
      const top = r.rowIndex > 0 ? r.rowIndex - 1 : r.rowIndex;
      if (rectsIntersect(selRect, { row: top, column: r.columnIndex, rowCount: r.rowCount + (r.rowIndex - top), columnCount: r.columnCount })) return b;
    }
    return null;
  });
}

/** Bindings stored in the workbook (unreadable ones listed in `broken`). */
export function listBindings(): Promise<StoredBindings> {
  return runSettled((context) => readBindings(context));
}

/** What the pane shows about co-authoring (issue #26, hazard 9). */
export interface Collaboration {
  /** `Workbook.getIsActiveCollabSession()` (ExcelApi 1.9): others are editing this workbook now. */
  active: boolean;
  /** Per binding id, the table's lock that holds now (as far as this copy of the settings tells). */
  holders: Record<string, { holder: string; since: string }>;
}

/** Whether co-authors are editing, and who holds which table (one sync). */
export function collaboration(): Promise<Collaboration> {
  return runSettled(async (context) => {
    const active = context.workbook.getIsActiveCollabSession();
    const settings = context.workbook.settings;
    settings.load("items/key,items/value");
    await context.sync();
    const { bindings } = await readBindings(context);
    const now = Date.now();
    const holders: Collaboration["holders"] = {};
    for (const b of bindings) {
      const raw = settings.items.find((x) => x.key === lockSettingKey(b.tableName));
      const lock = raw ? parseLock(raw.value) : null;
      if (lock && lockHolds(lock, now)) holders[b.id] = { holder: lock.holder, since: lock.acquiredAt };
    }
    // eslint-disable-next-line office-addins/load-object-before-read -- a ClientResult, read after the sync above
    const present = active.value === true;
    // Issue #35: the locks of this runtime wait the co-authoring bound for a while after co-authors were seen.
    if (present) noteCoauthors(now);
    return { active: present, holders };
  });
}

/**
 * Calls `listener` when the workbook's settings change (`SettingCollection.onSettingsChanged`,
 * ExcelApi 1.4, registered through the Common API's `settingsChanged`: Excel raises it only on the web
 * while co-authors edit, when a co-author's change arrives, and perhaps for this add-in's own writes —
 * listeners must tolerate bursts). Resolves to the function that stops listening; null where the
 * registration fails (the pane then reads again when it is shown and, while co-authors are present,
 * every 15 seconds, as it does anyway for hosts that never raise the event).
 */
export async function watchSettings(listener: () => void): Promise<(() => void) | null> {
  try {
    return await runSettled(async (context) => {
      const handle = context.workbook.settings.onSettingsChanged.add(() => {
        listener();
        return Promise.resolve();
      });
      await context.sync();
      // "The same RequestContext object that the handler was added in must be used when removing the
      // handler" (OfficeExtension.EventHandlerResult; "Work with Events using the Excel JavaScript API"):
      // the removal queued by `handle.remove()` goes to that context, so a fresh context's sync sent
      // nothing and the handler went on firing (test/coauthoring/events.test.ts).
      return () =>
        void Excel.run(handle.context, async (ctx) => {
          handle.remove();
          await ctx.sync();
        }).catch(() => undefined);
    });
  } catch {
    return null;
  }
}

/** The workbook's refresh log (issue #15), newest last. */
export function readRefreshLog(): Promise<RefreshLogEntry[]> {
  return runSettled((context) => readLog(context));
}

/** Per binding id: whether its last delta's changes can be shown, and whether they are (issue #15). */
export function changeHighlights(): Promise<Record<string, ChangeHighlight>> {
  return runSettled(async (context) => {
    const { bindings } = await readBindings(context);
    return Object.fromEntries(await readChangeState(context, bindings));
  });
}

async function storedBinding(context: Excel.RequestContext, bindingId: string): Promise<Binding> {
  const { bindings } = await readBindings(context);
  const b = bindings.find((x) => x.id === bindingId);
  if (!b) throw new WriteError("table_missing", "The table's link is no longer in this workbook.");
  return b;
}

/** "Show changes": highlights the changed cells and added rows of a table's last delta refresh. */
export function showChanges(bindingId: string): Promise<ChangeHighlight> {
  return runSettled(async (context) => showTableChanges(context, await storedBinding(context, bindingId), { holder: "the task pane" }));
}

/** "Clear highlight": removes exactly the add-in's highlight from a table. */
/**
 * Brings a bound table into view: activates its sheet and selects the whole table (header and
 * body), so what "Show changes" highlights is where the user looks (issue #25). A table that is no
 * longer there is left alone (false).
 */
export function goToTable(tableName: string): Promise<boolean> {
  return runSettled(async (context) => {
    const lo = context.workbook.tables.getItemOrNullObject(tableName);
    await context.sync();
    if (lo.isNullObject) return false;
    lo.worksheet.activate();
    lo.getRange().select();
    await context.sync();
    return true;
  });
}

export function clearChanges(bindingId: string): Promise<ChangeHighlight> {
  return runSettled(async (context) => clearTableChanges(context, await storedBinding(context, bindingId), { holder: "the task pane" }));
}

/** The workbook's saved views (issue #28). */
export function readViews(): Promise<ViewsDocument> {
  return runSettled((context) => readStoredViews(context));
}

/** Saves a view in the workbook (a view of the same name is replaced). */
export function saveView(view: SavedView, secrets: readonly string[]): Promise<ViewsDocument> {
  return runSettled((context) => storeView(context, view, secrets));
}

export function deleteView(name: string): Promise<ViewsDocument> {
  return runSettled((context) => removeStoredView(context, name));
}

/** The facade the UI holds once loaded. */
export class Engine {
  private readonly clients = new Map<string, { key: string; client: PpmClient }>();
  readonly paths: DatasetPaths = PATHS;
  readonly query: QueryEngine & { applyQuery: typeof applyQuery; validateQuery: typeof validateQuery; streamingPlan: typeof streamingPlan } = {
    parseQuery: (t) => parseQuery(t),
    splitODataUrl,
    applyQuery,
    validateQuery,
    streamingPlan,
  };
  readonly describeSource = describeSource;
  readonly listBindings = listBindings;
  readonly readRefreshLog = readRefreshLog;
  readonly collaboration = collaboration;
  /**
   * Issue #35: tells the workbook layer whether this document may be co-authored (then locks wait
   * the co-authoring bound and settings writes are settled even while Excel's lagging flag says
   * "alone"). The runtime asks it with the document's address.
   */
  readonly setDocumentSharing = (mayBeShared: () => boolean): void => {
    lockTiming.mayBeShared = mayBeShared;
  };
  readonly watchSettings = watchSettings;
  readonly changeHighlights = changeHighlights;
  readonly showChanges = showChanges;
  readonly clearChanges = clearChanges;
  readonly goToTable = goToTable;
  readonly bindingAtSelection = bindingAtSelection;
  readonly selectedCell = selectedCell;
  readonly readViews = readViews;
  readonly saveView = saveView;
  readonly deleteView = deleteView;
  /**
   * Issue #26: puts back (or marks) every table whose refresh died mid-write and removes what it left
   * (`src/workbook/recovery.ts`). Called once when the add-in starts; never throws.
   */
  readonly recoverInterrupted = (): Promise<RecoveredTable[]> => runSettled((context) => recoverInterruptedRefreshes(context)).catch(() => []);
  readonly serializeViews = serializeViews;
  readonly describeView = describeView;

  /** One client per connection, replaced when the connection's address or credentials change. */
  client(connection: Connection): PpmClient {
    const key = JSON.stringify([connection.baseUrl, connection.token, connection.apiAuth ?? "", connection.apiSecret ?? ""]);
    const cached = this.clients.get(connection.id);
    if (cached && cached.key === key) return cached.client;
    const client = new PpmClient(connection);
    this.clients.set(connection.id, { key, client });
    return client;
  }

  manifest(connection: Connection, signal?: AbortSignal): Promise<ManifestInfo> {
    return this.client(connection).manifest({ signal });
  }

  probe(connection: Connection, signal?: AbortSignal): Promise<ProbeResult> {
    return this.client(connection).probe({ signal });
  }

  /**
   * Fetch → local query → write as a new Excel table with its binding (`src/workbook`'s
   * `importSource`, so import and refresh build bindings the same way). With a local query nothing
   * is written before the whole table has arrived and the query has been applied; without one the
   * rows are written in blocks as they arrive (issue #38), and a failure part way undoes them.
   */
  async importSource(req: ImportRequest): Promise<ImportOutcome> {
    req.onProgress({ phase: "fetching", rows: 0 });
    const base = this.source(req.connection);
    let fetchedRows = 0;
    // The same source refresh uses, plus the download progress and the size before the query.
    const from: RefreshSource = {
      async fetch(source, request) {
        let received = 0;
        const r = await base.fetch(source, {
          ...request,
          onProgress: (p) => {
            received = p.rows ?? 0;
            req.onProgress({ phase: "fetching", rows: received });
          },
        });
        // Streamed through a summary, the table holds the result; the progress saw every row.
        if (r.status === "updated") fetchedRows = request.sink ? received : r.table.rows.length;
        return r;
      },
    };
    const query = req.query && !isEmptyQuery(req.query) ? req.query : null;
    const target = req.destination.kind === "selection" ? await selectedCell() : null;
    const warnings: string[] = [];
    const result: ImportResult = await runSettled(async (context) => {
      const imported = await importSource(context, from, {
        source: req.source,
        connection: req.connection,
        companyId: req.companyId,
        query,
        sourceRows: req.sourceRows,
        ...(req.tableName ? { tableName: req.tableName } : {}),
        target: target ? { sheetName: target.sheetName, anchor: target.anchor } : undefined,
        signal: req.signal,
        secrets: req.secrets,
        onProgress: (rows, total) => req.onProgress({ phase: "writing", rows, total }),
      });
      // Write-back's import record comes from the import itself, so editing needs no extra step. A
      // record that cannot be stored loses no data, but the user is told (issue #21, item 9): write-back
      // then compares with the service and cannot tell concurrent changes from the user's.
      try {
        await recordImportBaseline(context, imported.binding);
      } catch (e) {
        warnings.push(`The write-back record of ${imported.tableName} could not be kept (${e instanceof Error ? e.message : String(e)}); write-back will compare your edits with the service's current values instead, so it cannot tell them from changes made in the service since this import.`);
      }
      return imported;
    });
    return { tableName: result.tableName, sheetName: result.sheetName, address: result.address, rowCount: result.rowCount, fetchedRows, warnings };
  }

  /** A refresh source holding this connection's credentials. */
  source(connection: Connection): RefreshSource {
    return sourceFromClient(this.client(connection));
  }

  /**
   * Refreshes one table. Never throws (issue #21, item 17): an Excel error outside the refresh itself
   * (reading the bindings, the write-back marks) becomes a failed report, so a caller refreshing
   * several tables goes on with the next one.
   * @param opts.holder who refreshes, named to another runtime that finds the table locked (issue #21, item 13).
   */
  async refreshOne(
    bindingId: string,
    connection: Connection,
    opts: {
      signal?: AbortSignal;
      secrets: readonly string[];
      holder?: string;
      /** The binding as the caller knows it, for the report when the refresh cannot even start. */
      binding?: Binding;
      onProgress?: (rows: number, total?: number, phase?: "fetching" | "writing") => void;
      /**
       * Refresh on open (issue #26, hazard 7): claim the table's lock BEFORE asking the service, and
       * skip the table when a co-author refreshed or checked it since `binding` was read. Two
       * co-authors opening the workbook together then fetch and write each flagged table at most once:
       * the other is refused (`table_busy`) before it sends anything.
       */
      claim?: boolean;
    },
  ): Promise<RefreshReport> {
    try {
      return await runSettled(async (context) => {
        let claim: TableLock | null = null;
        if (opts.claim && opts.binding) {
          claim = await acquireTableLock(context, opts.binding.tableName, { holder: opts.holder ?? "the task pane" });
          const current = (await readBindings(context)).bindings.find((b) => b.id === bindingId);
          if (current && (bindingVersion(current) !== bindingVersion(opts.binding) || current.lastCheckedAt !== opts.binding.lastCheckedAt)) {
            await claim.release();
            return { bindingId, tableName: current.tableName, outcome: "unchanged", rowCount: current.rowCount, warnings: ["Refreshed by a co-author while this workbook opened: not fetched again."], binding: current } satisfies RefreshReport;
          }
        }
        try {
          const held = await beforeTableRefresh(context, bindingId);
          const report = await refreshTable(context, bindingId, this.source(connection), {
            signal: opts.signal,
            secrets: opts.secrets,
            holder: opts.holder ?? "the task pane",
            lockOwner: claim?.owner,
            // Settled by runSettled after the report is handed back (issue #35).
            settle: false,
            onProgress: (p) => opts.onProgress?.(p.phase === "fetching" ? (p.rowsReceived ?? 0) : (p.rowsWritten ?? 0), p.totalRows, p.phase),
          });
          const warning = await afterTableRefresh(context, report.binding, report.outcome, held);
          return warning ? { ...report, warnings: [...report.warnings, warning] } : report;
        } finally {
          await claim?.release();
        }
      });
    } catch (e) {
      return failedReport(bindingId, opts.binding ?? null, e, opts.secrets);
    }
  }

  /** The lock on a bound table, when one is stored (issue #21, item 12: the pane offers to clear a stale one). */
  tableLock(bindingId: string): Promise<(LockRecord & { holds: boolean; until: string }) | null> {
    return runSettled(async (context) => readTableLock(context, (await storedBinding(context, bindingId)).tableName));
  }

  /**
   * Clears a bound table's lock after the user confirmed nothing is refreshing it; only the lock the
   * user was shown (`owner`). A refresh still running under it stops before its next write.
   */
  clearTableLock(bindingId: string, owner: string): Promise<boolean> {
    return runSettled(async (context) => clearLock(context, (await storedBinding(context, bindingId)).tableName, owner));
  }

  /** Sets or clears a table's "Refresh when this workbook opens" (stored in its binding). */
  setRefreshOnOpen(bindingId: string, on: boolean, secrets: readonly string[]): Promise<OpenFlagResult> {
    return runSettled((context) => setRefreshOnOpen(context, bindingId, on, secrets));
  }

  refreshAll(
    resolve: (b: Binding) => Connection | null,
    opts: {
      signal?: AbortSignal;
      secrets: readonly string[];
      onProgress?: (table: string, rows: number, total?: number, phase?: "fetching" | "writing") => void;
      /** No further table starts once it has expired (the ribbon's window). */
      deadline?: { expired(): boolean };
      /** Who refreshes, for the lock message another runtime gets. */
      holder?: string;
    },
  ): Promise<{ reports: RefreshReport[]; broken: StoredBindings["broken"] }> {
    return runSettled(async (context) => {
      const names = new Map<string, string>();
      const { bindings } = await readBindings(context);
      const held = new Map<string, HeldCell[]>();
      for (const b of bindings) held.set(b.id, await beforeTableRefresh(context, b.id));
      const out = await refreshAllTables(
        context,
        (b) => {
          names.set(b.id, b.tableName);
          const c = resolve(b);
          return c ? this.source(c) : null;
        },
        {
          signal: opts.signal,
          secrets: opts.secrets,
          deadline: opts.deadline,
          holder: opts.holder ?? "the task pane",
          settle: false,
          onProgress: (p) => opts.onProgress?.(names.get(p.bindingId) ?? p.bindingId, p.phase === "fetching" ? (p.rowsReceived ?? 0) : (p.rowsWritten ?? 0), p.totalRows, p.phase),
        },
      );
      const reports: RefreshReport[] = [];
      for (const r of out.reports) {
        const warning = await afterTableRefresh(context, r.binding, r.outcome, held.get(r.bindingId) ?? []);
        reports.push(warning ? { ...r, warnings: [...r.warnings, warning] } : r);
      }
      return { ...out, reports };
    });
  }
}

/** A failed report for an error thrown around a refresh (the binding could not even be read). */
function failedReport(bindingId: string, binding: Binding | null, e: unknown, secrets: readonly string[]): RefreshReport {
  const failure = failureFrom(e, new Date(), secrets);
  const b = binding ?? ({ id: bindingId, tableName: bindingId, connectionId: "", environment: "", companyId: null } as unknown as Binding);
  return { bindingId, tableName: b.tableName, outcome: "failed", rowCount: b.rowCount ?? 0, failure, warnings: [], binding: b };
}

/** Entry of the lazy chunk. */
export function createEngine(): Engine {
  return new Engine();
}
