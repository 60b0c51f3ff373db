/**
 * Refreshing a bound Excel table in place: the Excel side of the refresh engine (`src/refresh`).
 *
 * Strategy (documented in README):
 * - Before the first write: table found, header names still the bound columns, the new size fits on
 *   the sheet and the cells it grows into are empty. Any failure here writes NOTHING: the sheet stays
 *   byte-identical and only the binding's failure record changes (done by the engine).
 * - The old data-column values, their number formats and the user columns' formulas are loaded, so
 *   they can be put back.
 * - Writing: info cell "refreshing — DATA INCOMPLETE"; grow the table with `resize` (references to
 *   the table and its columns keep working); per-column formats; values in blocks over the DATA
 *   columns only (user columns to the right are never written, except to extend a calculated column
 *   into new rows); shrink with `resize` and clear the rows it left; reapply sort and filter.
 * - A failure or cancel while writing restores the previous size, values, formats and user-column
 *   cells, and the info cell says "refresh failed … previous data restored". If restoring fails too,
 *   the info cell says the table may be INCOMPLETE (and the in-progress marker is what stays if even
 *   that cannot be written).
 */
import type { Table } from "../table/model";
import type { Binding } from "../refresh/binding";
import { planResize, type Rect, type TableGeometry } from "../refresh/plan";
import { refreshAll, refreshOne, type RefreshOptions, type RefreshReport, type RefreshTarget } from "../refresh/engine";
import type { RefreshSource } from "../refresh/source";
import { planColumns, TEXT_FORMAT } from "./cells";
import { a1 } from "./names";
import { INFO_PREFIX, infoComplete, infoFailed, infoInProgress, infoStale, isStaleInfo } from "./info";
import { appendRefreshLog } from "./refreshLog";
import type { BindingFailure } from "../refresh/binding";
import { findOccupiedCell, prepareCalculation, setEvery, type CalculationGuard } from "./sheet";
import { bytesPerRow, loadInBlocks, throwIfAborted, writeInBlocks, WriteError } from "./blocks";
import { queueColumnFormats, typedRows, errorText } from "./writer";
import { readBindings, saveBinding } from "./bindingStore";
import type { DeltaSummary, KeyChoice } from "../refresh/delta";
import { dropRowHashes, storeRowHashes, tryDeltaWrite, type PlannedCounts } from "./delta";

export interface RefreshWriteOptions {
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  now?: () => Date;
  /** The key rows are matched by for a delta (issue #15); null/absent: by position. */
  key?: KeyChoice | null;
  /** false: always a full rewrite (no delta is tried). */
  delta?: boolean;
}

export interface RefreshWriteResult {
  warnings: string[];
  /** What was written: a delta (counts, match) or a full rewrite (with why no delta). */
  delta: DeltaSummary;
  /** Cells changed by a delta (new row, column): what "Show changes" highlights. Empty after a full rewrite. */
  changedCells: Array<{ row: number; column: number }>;
}

function rangeOf(sheet: Excel.Worksheet, r: Rect): Excel.Range {
  return sheet.getRangeByIndexes(r.row, r.column, r.rowCount, r.columnCount);
}

/** The single formula every row of a user column holds (a calculated column), or null. */
function uniformFormula(column: unknown[]): string | null {
  const first = column[0];
  if (typeof first !== "string" || !first.startsWith("=")) return null;
  return column.every((f) => f === first) ? first : null;
}

/**
 * Writes a validated table over a bound Excel table (see the module comment for the strategy).
 * @throws WriteError: `table_missing`, `table_changed`, `too_many_rows`, `occupied` (nothing written);
 * `cancelled`, `payload_too_large`, `write_failed` (previous data restored, or the table marked).
 */
export async function writeRefresh(context: Excel.RequestContext, binding: Binding, table: Table, options: RefreshWriteOptions = {}): Promise<RefreshWriteResult> {
  const now = options.now ?? (() => new Date());
  const total = table.rows.length;
  throwIfAborted(options.signal, 0, total);

  // --- checks: nothing is written until all of them pass ---
  const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
  const calc = prepareCalculation(context);
  await context.sync();
  if (lo.isNullObject) {
    throw new WriteError("table_missing", `The table "${binding.tableName}" is no longer in this workbook. Re-import the data to bind a new table.`);
  }
  const whole = lo.getRange();
  whole.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
  const header = lo.getHeaderRowRange();
  header.load("values");
  const sheet = lo.worksheet;
  sheet.load("name");
  await context.sync();

  const dataColumns = binding.columns.length;
  const names = (header.values[0] ?? []).map((v) => String(v));
  if (names.length < dataColumns || binding.columns.some((c, i) => names[i] !== c.name)) {
    throw new WriteError(
      "table_changed",
      `The first ${dataColumns} columns of "${binding.tableName}" are no longer ${binding.columns.map((c) => c.name).join(", ")}. Undo the change to the column headers or re-import the data.`,
    );
  }
  const geometry: TableGeometry = {
    headerRow: whole.rowIndex,
    firstColumn: whole.columnIndex,
    dataColumns,
    userColumns: whole.columnCount - dataColumns,
    bodyRows: whole.rowCount - 1,
  };
  let plan;
  try {
    plan = planResize(geometry, total);
  } catch (e) {
    throw new WriteError("too_many_rows", (e as Error).message);
  }
  if (plan.growth) {
    const occupied = await findOccupiedCell(context, sheet, plan.growth);
    if (occupied) {
      throw new WriteError(
        "occupied",
        `The refreshed table needs ${plan.bodyRows - geometry.bodyRows} more rows (${a1(plan.growth.row, plan.growth.column, plan.growth.rowCount, plan.growth.columnCount)} on "${sheet.name}"), but ${occupied} is not empty. Move the cells below the table and refresh again.`,
        { address: occupied },
      );
    }
  }

  // --- delta (src/workbook/delta.ts): only what changed, when that is clearly cheaper ---
  const infoCell = geometry.headerRow > 0 ? sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1) : null;
  infoCell?.load("formulas");
  await context.sync();
  const ownsInfoCell = infoCell !== null && typeof infoCell.formulas[0][0] === "string" && (infoCell.formulas[0][0] as string).startsWith(INFO_PREFIX);
  const completeInfo = () => infoComplete({
    source: binding.source,
    environment: binding.environment,
    generatedAt: table.meta.generatedAt,
    schemaVersion: table.meta.schemaVersion ?? binding.schemaVersion,
    refreshedAt: now().toISOString(),
    rowCount: total,
  });
  let noDelta = "delta refresh switched off";
  let planned: PlannedCounts | undefined;
  if (options.delta !== false) {
    try {
      const d = await tryDeltaWrite(context, {
        lo, sheet, geometry, binding, table, key: options.key ?? null, targetRequestBytes: options.targetRequestBytes,
        markInProgress: () => { if (ownsInfoCell) infoCell!.values = [[infoInProgress("refresh", binding.source)]]; },
        markComplete: () => { if (ownsInfoCell) infoCell!.values = [[completeInfo()]]; },
      });
      if (d.applied) {
        const warnings: string[] = [];
        await reapplySortAndFilter(context, lo, warnings);
        return { warnings, delta: d.summary, changedCells: d.changes.map((c) => ({ row: c.row, column: c.column })) };
      }
      noDelta = d.reason;
      planned = d.counts;
    } catch (err) {
      // A delta stopped half way cannot be undone here (issue #10's rollback copy covers it once merged):
      // the table is marked, and its fingerprints dropped so the next refresh plans from the cells.
      const failure = err instanceof WriteError ? err : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { cause: err });
      try {
        if (ownsInfoCell) infoCell!.values = [[infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, false)]];
        await context.sync();
        await dropRowHashes(context, binding.id);
      } catch {
        // The in-progress marker stays.
      }
      throw new WriteError(failure.code, `${failure.message} The table may be incomplete; refresh again.`, failure.details);
    }
  }

  // --- what is needed to put the old state back (read in blocks: responses have a 5 MB limit too) ---
  const bodyRow = geometry.headerRow + 1;
  const oldBody: Rect = { row: bodyRow, column: geometry.firstColumn, rowCount: geometry.bodyRows, columnCount: dataColumns };
  const oldFormats = rangeOf(sheet, { ...oldBody, rowCount: 1 });
  oldFormats.load("numberFormat");
  const userRect: Rect | null = geometry.userColumns > 0
    ? { row: bodyRow, column: geometry.firstColumn + dataColumns, rowCount: geometry.bodyRows, columnCount: geometry.userColumns }
    : null;
  const infoRange = geometry.headerRow > 0 ? sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1) : null;
  infoRange?.load("formulas");
  // Its own sync: if a block read below is refused as too large, its loads are lost with it.
  await context.sync();
  // Old rows are about as large as new ones; the estimate only sizes the first read block.
  const rowBytes = table.rows.length ? bytesPerRow(typedRows(table, planColumns(table)), 0) : 64 * dataColumns;
  const oldValues = await loadInBlocks(
    context,
    (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns),
    geometry.bodyRows,
    "values",
    rowBytes * 2,
  );
  const userFormulas = userRect
    ? await loadInBlocks(
        context,
        (from, count) => sheet.getRangeByIndexes(bodyRow + from, userRect.column, count, userRect.columnCount),
        geometry.bodyRows,
        "formulas",
        64 * userRect.columnCount,
      )
    : [];
  throwIfAborted(options.signal, 0, total);

  const infoFormula = infoRange ? infoRange.formulas[0][0] : null;
  const ownsInfo = typeof infoFormula === "string" && infoFormula.startsWith(INFO_PREFIX);
  const oldInfo = ownsInfo ? (infoFormula as string) : null;
  const setInfo = (text: string) => {
    if (ownsInfo && infoRange) sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1).values = [[text]];
  };
  const oldRect: Rect = { row: geometry.headerRow, column: geometry.firstColumn, rowCount: geometry.bodyRows + 1, columnCount: dataColumns + geometry.userColumns };

  // --- write ---
  const plans = planColumns(table);
  // Calculation is suspended from the first write request on, so a failure before it leaves no trace.
  let guard = null as CalculationGuard | null;
  let started = false as boolean;
  const warnings: string[] = [];
  let rowsWritten = 0;
  let resized = false;
  try {
    const newBodyRows = plan.bodyRows;
    const blank = total === 0 ? [new Array<string>(dataColumns).fill("")] : null;
    const source = blank ? { total: 1, get: () => blank } : typedRows(table, plans);
    await writeInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns), source, {
      signal: options.signal,
      targetRequestBytes: options.targetRequestBytes,
      beforeSync: () => guard?.perSync(),
      onProgress: (n) => {
        rowsWritten = blank ? 0 : n;
        options.onProgress?.(rowsWritten, total);
      },
      prelude: () => {
        started = true;
        guard ??= calc.start();
        setInfo(infoInProgress("refresh", binding.source));
        if (plan.growth) {
          lo.resize(rangeOf(sheet, plan.table));
          resized = true;
        }
        queueColumnFormats(sheet, bodyRow, geometry.firstColumn, newBodyRows, plans);
      },
    });
    throwIfAborted(options.signal, rowsWritten, total);

    if (plan.growth && userRect) {
      // Calculated columns extend to the new rows; other user cells in new rows stay empty.
      for (let c = 0; c < geometry.userColumns; c++) {
        const f = uniformFormula(userFormulas.map((row) => row[c]));
        if (f) setEvery(sheet.getRangeByIndexes(plan.growth.row, userRect.column + c, plan.growth.rowCount, 1), "formulas", f);
      }
    }
    if (plan.vacated) {
      lo.resize(rangeOf(sheet, plan.table));
      resized = true;
      rangeOf(sheet, plan.vacated).clear("Contents");
    }
    setInfo(infoComplete({
      source: binding.source,
      environment: binding.environment,
      generatedAt: table.meta.generatedAt,
      schemaVersion: table.meta.schemaVersion ?? binding.schemaVersion,
      refreshedAt: now().toISOString(),
      rowCount: total,
    }));
    guard?.restore();
    await context.sync();
  } catch (err) {
    const failure = err instanceof WriteError ? err : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { rowsWritten, cause: err });
    if (!started) throw failure; // nothing was queued for the workbook
    let restored = false;
    try {
      if (resized || plan.growth || plan.vacated) lo.resize(rangeOf(sheet, oldRect));
      // The rows grown into were empty (checked before writing); values and formats go again.
      if (plan.growth) rangeOf(sheet, plan.growth).clear("All");
      const formats = oldFormats.numberFormat[0] ?? [];
      formats.forEach((f, i) => {
        setEvery(sheet.getRangeByIndexes(bodyRow, geometry.firstColumn + i, geometry.bodyRows, 1), "numberFormat", String(f));
      });
      const old = oldValues;
      await writeInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns), { total: old.length, get: (a, b) => old.slice(a, b) }, {
        targetRequestBytes: options.targetRequestBytes,
        beforeSync: () => guard?.perSync(),
      });
      if (plan.vacated && userRect) {
        const from = plan.vacated.row - bodyRow;
        rangeOf(sheet, { row: plan.vacated.row, column: userRect.column, rowCount: plan.vacated.rowCount, columnCount: userRect.columnCount }).formulas = userFormulas.slice(from) as unknown as string[][];
      }
      if (oldInfo !== null) setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, true));
      guard?.restore();
      await context.sync();
      restored = true;
    } catch (restoreErr) {
      try {
        if (ownsInfo) {
          setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, false));
          const cell = sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1);
          cell.numberFormat = [[TEXT_FORMAT]];
        }
        guard?.restore();
        await context.sync();
      } catch {
        // The "DATA INCOMPLETE" marker stays; the failure below says so too.
      }
      throw new WriteError(failure.code, `${failure.message} The previous data could not be restored (${errorText(restoreErr)}); the table may be incomplete. Refresh again.`, { ...failure.details, cause: restoreErr });
    }
    if (restored) {
      throw new WriteError(failure.code, `${failure.message} The previous data was restored.`, failure.details);
    }
    throw failure;
  }

  try {
    await storeRowHashes(context, binding, table);
  } catch (e) {
    // Only the next refresh's cost depends on them: it reads the table once instead.
    warnings.push(`The data is refreshed, but its row fingerprints could not be stored: ${errorText(e)}`);
  }
  await reapplySortAndFilter(context, lo, warnings);
  return {
    warnings,
    delta: planned
      ? {
          strategy: "full", matchedBy: planned.matchedBy, key: planned.key, reason: `${planned.matchReason}; full rewrite: ${noDelta}`,
          added: planned.added, changed: planned.changed, removed: planned.removed, cellsWritten: total * dataColumns, exact: true,
        }
      : {
          // No plan (e.g. a sort on the table): only the row counts can be compared.
          strategy: "full", matchedBy: "position", key: null, reason: `full rewrite: ${noDelta}`,
          added: Math.max(0, total - binding.rowCount), changed: 0, removed: Math.max(0, binding.rowCount - total), cellsWritten: total * dataColumns, exact: false,
        },
    changedCells: [],
  };
}

async function reapplySortAndFilter(context: Excel.RequestContext, lo: Excel.Table, warnings: string[]): Promise<void> {
  try {
    lo.sort.reapply();
    lo.autoFilter.reapply();
    await context.sync();
  } catch (e) {
    warnings.push(`The data is refreshed, but the table's sort or filter could not be reapplied: ${errorText(e)}`);
  }
}

/** The Excel {@link RefreshTarget} for one request context. */
export function excelRefreshTarget(context: Excel.RequestContext, options: { secrets?: readonly string[]; targetRequestBytes?: number; now?: () => Date; delta?: boolean } = {}): RefreshTarget {
  return {
    listBindings: () => readBindings(context),
    saveBinding: (b) => saveBinding(context, b, options.secrets ?? []),
    write: (binding, table, o) => writeRefresh(context, binding, table, { ...o, targetRequestBytes: options.targetRequestBytes, now: options.now, delta: options.delta }),
    markStale: (binding, failure) => writeStaleMark(context, binding, failure),
    markFresh: (binding) => writeStaleMark(context, binding, null),
    logRefresh: (entry) => appendRefreshLog(context, entry),
  };
}

/**
 * Puts the stale mark at the start of a table's info line (`failure`), or removes it (null), keeping
 * the generation time and the last successful refresh from the binding. Leaves the line alone when
 * it is not the add-in's, or says the table may be INCOMPLETE (that warning must stay).
 */
export async function writeStaleMark(context: Excel.RequestContext, binding: Binding, failure: BindingFailure | null): Promise<void> {
  const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
  await context.sync();
  if (lo.isNullObject) return;
  const whole = lo.getRange();
  whole.load("rowIndex,columnIndex");
  await context.sync();
  if (whole.rowIndex === 0) return;
  const cell = lo.worksheet.getRangeByIndexes(whole.rowIndex - 1, whole.columnIndex, 1, 1);
  cell.load("values");
  await context.sync();
  const text = cell.values[0][0];
  if (typeof text !== "string" || !text.startsWith(INFO_PREFIX) || text.includes("INCOMPLETE")) return;
  if (!failure && !isStaleInfo(text)) return;
  const facts = {
    source: binding.source,
    environment: binding.environment,
    generatedAt: binding.validators.generatedAt ?? null,
    schemaVersion: binding.schemaVersion,
    refreshedAt: binding.lastRefreshAt ?? "",
    rowCount: binding.rowCount,
  };
  cell.values = [[failure ? infoStale(`${failure.message} (${failure.code})`, failure.at, facts) : infoComplete(facts)]];
  await context.sync();
}

export interface TableRefreshOptions extends RefreshOptions {
  targetRequestBytes?: number;
  /** false: never a delta (benchmarks compare against a full rewrite). */
  delta?: boolean;
}

/**
 * Refreshes one bound table by binding id.
 * @throws WriteError `table_missing` when no binding has that id (nothing is recorded then).
 */
export async function refreshTable(context: Excel.RequestContext, bindingId: string, source: RefreshSource, options: TableRefreshOptions = {}): Promise<RefreshReport> {
  const target = excelRefreshTarget(context, options);
  const { bindings } = await target.listBindings();
  const binding = bindings.find((b) => b.id === bindingId);
  if (!binding) throw new WriteError("table_missing", `No table binding "${bindingId}" in this workbook.`);
  return refreshOne(target, binding, source, options);
}

/** Refreshes every bound table in the workbook (see `refreshAll` in `src/refresh/engine.ts`). */
export async function refreshAllTables(
  context: Excel.RequestContext,
  resolveSource: (binding: Binding) => RefreshSource | null,
  options: TableRefreshOptions = {},
): ReturnType<typeof refreshAll> {
  return refreshAll(excelRefreshTarget(context, options), resolveSource, options);
}
