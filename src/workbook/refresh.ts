/**
 * Refreshing a bound Excel table in place: the Excel side of the refresh engine (`src/refresh`).
 *
 * Strategy (documented in README):
 * - The table's lock is taken in the workbook first (`lock.ts`): a second runtime refreshing the same
 *   table is told it is busy.
 * - Before the first write: table found, header names still the bound columns, the new size fits on
 *   the sheet, the cells it grows into are empty and it would not touch another table. Any failure here
 *   writes NOTHING to the sheet: it stays byte-identical and only the binding's failure record changes.
 * - The rollback copy stays INSIDE Excel: the data columns' old body is copied (values, then number
 *   formats; `Range.copyFrom`, ExcelApi 1.9) to the same address on a very hidden sheet. Nothing of the
 *   old data travels to the add-in and back, so a refresh moves about as many bytes as an import.
 *   Only small things are read: the totals row's formulas, the info cell, and the user columns'
 *   formulas (to extend calculated columns and to put back rows a shrink clears).
 * - Writing: info cell "refreshing — DATA INCOMPLETE"; grow the table with `resize` (references to
 *   the table and its columns keep working); per-column formats; values in blocks over the DATA
 *   columns only (user columns to the right are never written, except to extend a calculated column
 *   into new rows); shrink with `resize` and clear the rows it left; the totals row's formulas are
 *   written back under the new last row; sort and filter are re-applied one at a time.
 * - "Show changes" (issue #15, `changes.ts`): the last refresh's highlight and change record are
 *   removed after the checks, before anything is written; a delta that changed or added rows records
 *   its changes for the next "Show changes".
 * - A failure or cancel while writing restores the previous size, values, formats, totals row and
 *   user-column cells from the copy, and the info cell says "refresh failed … previous data
 *   restored". If restoring fails too, the info cell says the table may be INCOMPLETE (and the
 *   in-progress marker is what stays if even that cannot be written).
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
import { findOccupiedCell, findTouchingTable, prepareCalculation, setEvery, type CalculationGuard } from "./sheet";
import { isPayloadTooLarge, loadInBlocks, throwIfAborted, writeInBlocks, WriteError } from "./blocks";
import { queueColumnFormats, queueDateSystemProbe, typedRows, errorText } from "./writer";
import { readBindings, saveBinding } from "./bindingStore";
import { acquireTableLock } from "./lock";
import type { DeltaSummary, KeyChoice } from "../refresh/delta";
import { dropRowHashes, storeRowHashes, tryDeltaWrite, undoDeltaRows, type DeltaShift, type PlannedCounts } from "./delta";
import { changeSheetName, dropChanges, isOwnChangeSheet, queueChangeSheet, writeChangeRecord } from "./changes";

/** The very hidden sheet holding rollback copies while a refresh writes (cleared afterwards). */
export const ROLLBACK_SHEET = "ppm_rollback";

export interface RefreshWriteOptions {
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  now?: () => Date;
  /** Who refreshes, named to a second caller that finds the table locked ("the task pane", "Refresh all on the ribbon"). */
  holder?: string;
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
  /** Body rows added by a delta (new row indexes). */
  addedRows: number[];
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
 * @throws WriteError: `table_busy`, `table_missing`, `table_changed`, `too_many_rows`, `occupied`,
 * `adjacent_table` (nothing written); `cancelled`, `payload_too_large`, `write_failed` (previous data
 * restored, or the table marked).
 */
export async function writeRefresh(context: Excel.RequestContext, binding: Binding, table: Table, options: RefreshWriteOptions = {}): Promise<RefreshWriteResult> {
  const now = options.now ?? (() => new Date());
  throwIfAborted(options.signal, 0, table.rows.length);
  const lock = await acquireTableLock(context, binding.tableName, { holder: options.holder, now });
  try {
    return await writeLocked(context, binding, table, options, now);
  } finally {
    await lock.release();
  }
}

async function writeLocked(context: Excel.RequestContext, binding: Binding, table: Table, options: RefreshWriteOptions, now: () => Date): Promise<RefreshWriteResult> {
  const total = table.rows.length;

  // --- checks: nothing is written until all of them pass ---
  const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
  lo.load("showTotals");
  const calc = prepareCalculation(context);
  const dateSystem = queueDateSystemProbe(context);
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
  lo.autoFilter.load("enabled");
  lo.sort.load("fields");
  const rollback = context.workbook.worksheets.getItemOrNullObject(ROLLBACK_SHEET);
  rollback.load("visibility");
  // The last refresh's changes ("Show changes"): removed below, before anything is written.
  const changeSheet = queueChangeSheet(context, binding.id);
  await context.sync();
  if (!rollback.isNullObject && rollback.visibility !== "VeryHidden") {
    // Someone's own sheet of that name: never written over.
    throw new WriteError("write_failed", `This workbook has a visible sheet named "${ROLLBACK_SHEET}", which the add-in keeps very hidden for its rollback copies. Rename that sheet, then refresh again.`);
  }

  const dataColumns = binding.columns.length;
  const names = (header.values[0] ?? []).map((v) => String(v));
  if (names.length < dataColumns || binding.columns.some((c, i) => names[i] !== c.name)) {
    throw new WriteError(
      "table_changed",
      `The first ${dataColumns} columns of "${binding.tableName}" are no longer ${binding.columns.map((c) => c.name).join(", ")}. Undo the change to the column headers or re-import the data.`,
    );
  }
  // Table.getRange() includes a totals row the user switched on; the body is what lies between.
  const totalsRows = lo.showTotals ? 1 : 0;
  const geometry: TableGeometry = {
    headerRow: whole.rowIndex,
    firstColumn: whole.columnIndex,
    dataColumns,
    userColumns: whole.columnCount - dataColumns,
    bodyRows: whole.rowCount - 1 - totalsRows,
  };
  let plan;
  try {
    // The totals row needs one more sheet row below the body.
    planResize(geometry, total + totalsRows);
    plan = planResize(geometry, total);
  } catch (e) {
    throw new WriteError("too_many_rows", (e as Error).message);
  }
  // With a totals row the table ends one row lower; that row moves with the table's end.
  const grownInto: Rect | null = plan.growth ? { ...plan.growth, row: plan.growth.row + totalsRows } : null;
  if (grownInto) {
    const occupied = await findOccupiedCell(context, sheet, grownInto);
    if (occupied) {
      throw new WriteError(
        "occupied",
        `The refreshed table needs ${plan.bodyRows - geometry.bodyRows} more rows (${a1(grownInto.row, grownInto.column, grownInto.rowCount, grownInto.columnCount)} on "${sheet.name}"), but ${occupied} is not empty. Move the cells below the table and refresh again.`,
        { address: occupied },
      );
    }
    const touching = await findTouchingTable(context, sheet, { ...plan.table, rowCount: plan.table.rowCount + totalsRows }, binding.tableName);
    if (touching) {
      throw new WriteError(
        "adjacent_table",
        `The refreshed table "${binding.tableName}" would grow up to the table "${touching}" on "${sheet.name}", and Excel would merge the two. Move "${touching}" at least one empty row further down, then refresh again.`,
      );
    }
  }

  // --- the last refresh's highlight and change record go first: they describe data about to be
  // replaced (and the rollback copy of the formats below must not carry the highlight) ---
  // A visible sheet of that name is someone else's: never written or deleted.
  const foreignChangeSheet = !changeSheet.isNullObject && !isOwnChangeSheet(changeSheet);
  if (isOwnChangeSheet(changeSheet)) {
    try {
      await dropChanges(context, lo, binding.id, changeSheet);
    } catch (e) {
      throw new WriteError("write_failed", `The highlight of the last refresh's changes could not be removed: ${errorText(e)}`, { cause: e });
    }
  }

  // --- what a restore needs that the rollback copy does not hold (all small) ---
  const bodyRow = geometry.headerRow + 1;
  const width = dataColumns + geometry.userColumns;
  const oldBody: Rect = { row: bodyRow, column: geometry.firstColumn, rowCount: geometry.bodyRows, columnCount: dataColumns };
  const totalsRange = totalsRows ? sheet.getRangeByIndexes(bodyRow + geometry.bodyRows, geometry.firstColumn, 1, width) : null;
  totalsRange?.load(["formulas", "numberFormat"]);
  const userRect: Rect | null = geometry.userColumns > 0
    ? { row: bodyRow, column: geometry.firstColumn + dataColumns, rowCount: geometry.bodyRows, columnCount: geometry.userColumns }
    : null;
  const infoRange = geometry.headerRow > 0 ? sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1) : null;
  infoRange?.load("formulas");
  await context.sync();
  const userFormulas = userRect
    ? await loadInBlocks(
        context,
        (from, count) => sheet.getRangeByIndexes(bodyRow + from, userRect.column, count, userRect.columnCount),
        geometry.bodyRows,
        "formulas",
        64 * userRect.columnCount,
      )
    : [];
  const oldTotals = totalsRange ? { formulas: totalsRange.formulas[0] as unknown[], formats: totalsRange.numberFormat[0] as unknown[] } : null;
  throwIfAborted(options.signal, 0, total);

  const infoFormula: unknown = infoRange ? infoRange.formulas[0][0] : null;
  const ownsInfo = typeof infoFormula === "string" && infoFormula.startsWith(INFO_PREFIX);
  const oldInfo = ownsInfo ? infoFormula : null;
  const setInfo = (text: string) => {
    if (ownsInfo && infoRange) sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1).values = [[text]];
  };
  const oldRect: Rect = { row: geometry.headerRow, column: geometry.firstColumn, rowCount: geometry.bodyRows + 1 + totalsRows, columnCount: width };
  const newRect: Rect = { ...plan.table, rowCount: plan.table.rowCount + totalsRows };
  const writeTotals = (row: number, totals: { formulas: unknown[]; formats: unknown[] } | null) => {
    // Written back as they were, formats first (a formula written into a text-formatted cell would
    // stay text): structured references ([Amount]) cover the whole new column.
    if (!totals) return;
    const r = sheet.getRangeByIndexes(row, geometry.firstColumn, 1, width);
    r.numberFormat = [totals.formats];
    r.formulas = [totals.formulas];
  };

  // --- the rollback copy: its own sync, before the table is touched ---
  let backupSheet: Excel.Worksheet;
  if (rollback.isNullObject) {
    backupSheet = context.workbook.worksheets.add(ROLLBACK_SHEET);
    backupSheet.visibility = "VeryHidden";
  } else backupSheet = rollback;
  const backup = rangeOf(backupSheet, oldBody);
  const old = rangeOf(sheet, oldBody);
  backup.copyFrom(old, "Values");
  backup.copyFrom(old, "Formats");
  await context.sync();
  const clearBackup = () => rangeOf(backupSheet, oldBody).clear("All");
  const completeInfo = () =>
    infoComplete({
      source: binding.source,
      environment: binding.environment,
      generatedAt: table.meta.generatedAt,
      schemaVersion: table.meta.schemaVersion ?? binding.schemaVersion,
      refreshedAt: now().toISOString(),
      rowCount: total,
      query: binding.query,
    });

  // --- delta (src/workbook/delta.ts): only what changed, when that is clearly cheaper; inside the
  // same rollback as a full rewrite (a failure half way puts the old rows back from the copy) ---
  let noDelta = "delta refresh switched off";
  let planned: PlannedCounts | undefined;
  if (options.delta !== false) {
    const shift: DeltaShift = { started: false, compensated: false };
    try {
      const d = await tryDeltaWrite(context, {
        lo, sheet, geometry, binding, table, totalsRows, key: options.key ?? null, targetRequestBytes: options.targetRequestBytes, shift,
        markInProgress: () => setInfo(infoInProgress("refresh", binding.source)),
        markComplete: () => {
          setInfo(completeInfo());
          clearBackup();
        },
      });
      if (d.applied) {
        const warnings: string[] = [];
        await reapplySortAndFilter(context, lo, warnings);
        const changedCells = d.changes.map((c) => ({ row: c.row, column: c.column }));
        if (changedCells.length > 0 || d.addedRows.length > 0) {
          // What "Show changes" highlights; only the data's completeness matters past this point.
          if (foreignChangeSheet) warnings.push(`The data is refreshed, but its changes cannot be highlighted: this workbook has a visible sheet named "${changeSheetName(binding.id)}", which the add-in keeps very hidden for them.`);
          else {
            try {
              const kept = await writeChangeRecord(context, binding.id, { rows: total, columns: dataColumns, changed: changedCells, added: d.addedRows }, options.targetRequestBytes);
              if (!kept) warnings.push("The data is refreshed; so many cells changed that they are not kept for Show changes.");
            } catch (e) {
              warnings.push(`The data is refreshed, but its changes cannot be highlighted: ${errorText(e)}`);
            }
          }
        }
        return { warnings, delta: d.summary, changedCells, addedRows: d.addedRows };
      }
      noDelta = d.reason;
      planned = d.counts;
    } catch (err) {
      const failure =
        err instanceof WriteError
          ? err
          : isPayloadTooLarge(err)
            ? new WriteError("payload_too_large", "A change is larger than Excel accepts in one request.", { cause: err })
            : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { cause: err });
      if (!shift.started) {
        try {
          clearBackup();
          await context.sync();
        } catch {
          /* a stale copy on the hidden sheet is overwritten by the next refresh */
        }
        throw failure;
      }
      try {
        // The fingerprints may be half written: the next refresh plans from the cells instead.
        await dropRowHashes(context, binding.id);
      } catch {
        /* unreadable fingerprints are ignored by the next refresh too */
      }
      try {
        await undoDeltaRows(context, lo, sheet, geometry, shift);
        const target = rangeOf(sheet, oldBody);
        target.copyFrom(rangeOf(backupSheet, oldBody), "Values");
        target.copyFrom(rangeOf(backupSheet, oldBody), "Formats");
        if (oldInfo !== null) setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, true));
        clearBackup();
        await context.sync();
      } catch (restoreErr) {
        try {
          if (ownsInfo) setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, false));
          await context.sync();
        } catch {
          // The "DATA INCOMPLETE" marker stays; the failure below says so too.
        }
        throw new WriteError(failure.code, `${failure.message} The previous data could not be restored (${errorText(restoreErr)}); the table may be incomplete. Refresh again.`, { ...failure.details, cause: restoreErr });
      }
      throw new WriteError(failure.code, `${failure.message} The previous data was restored.`, failure.details);
    }
  }

  // --- write ---
  const plans = planColumns(table);
  let guard = null as CalculationGuard | null;
  let started = false as boolean;
  const warnings: string[] = [];
  let rowsWritten = 0;
  let resized = false;
  try {
    const newBodyRows = plan.bodyRows;
    const blank = total === 0 ? [new Array<string>(dataColumns).fill("")] : null;
    const source = blank ? { total: 1, get: () => blank } : typedRows(table, plans, dateSystem.is1904());
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
          lo.resize(rangeOf(sheet, newRect));
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
      lo.resize(rangeOf(sheet, newRect));
      resized = true;
      rangeOf(sheet, { ...plan.vacated, row: plan.vacated.row + totalsRows }).clear("Contents");
    }
    writeTotals(bodyRow + newBodyRows, oldTotals);
    setInfo(completeInfo());
    clearBackup();
    guard?.restore();
    guard?.perSync();
    await context.sync();
  } catch (err) {
    const failure = err instanceof WriteError ? err : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { rowsWritten, cause: err });
    if (!started) {
      try {
        clearBackup();
        await context.sync();
      } catch {
        /* a stale copy on the hidden sheet is overwritten by the next refresh */
      }
      throw failure; // nothing was queued for the table
    }
    let restored = false;
    try {
      if (resized || plan.growth || plan.vacated) lo.resize(rangeOf(sheet, oldRect));
      // The rows grown into were empty (checked before writing); they are emptied again.
      if (grownInto) rangeOf(sheet, grownInto).clear("All");
      const target = rangeOf(sheet, oldBody);
      target.copyFrom(rangeOf(backupSheet, oldBody), "Values");
      target.copyFrom(rangeOf(backupSheet, oldBody), "Formats");
      if (plan.vacated && userRect) {
        const from = plan.vacated.row - bodyRow;
        rangeOf(sheet, { row: plan.vacated.row, column: userRect.column, rowCount: plan.vacated.rowCount, columnCount: userRect.columnCount }).formulas = userFormulas.slice(from);
      }
      writeTotals(bodyRow + geometry.bodyRows, oldTotals);
      if (oldInfo !== null) setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, true));
      clearBackup();
      guard?.perSync();
      await context.sync();
      restored = true;
    } catch (restoreErr) {
      try {
        if (ownsInfo) {
          setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, false));
          const cell = sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1);
          cell.numberFormat = [[TEXT_FORMAT]];
        }
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
    addedRows: [],
  };
}

/**
 * Sort and filter re-applied one at a time: Excel for Mac throws InvalidOperation re-applying a
 * filter the user removed (office-js #3086); either failing is a note on a refresh whose data is complete.
 */
async function reapplySortAndFilter(context: Excel.RequestContext, lo: Excel.Table, warnings: string[]): Promise<void> {
  lo.sort.load("fields");
  lo.autoFilter.load("enabled");
  await context.sync();
  if ((lo.sort.fields ?? []).length > 0) {
    try {
      lo.sort.reapply();
      await context.sync();
    } catch (e) {
      warnings.push(`The data is refreshed, but the table's sort could not be re-applied: ${errorText(e)}`);
    }
  }
  if (lo.autoFilter.enabled) {
    try {
      lo.autoFilter.reapply();
      await context.sync();
    } catch (e) {
      warnings.push(`The data is refreshed, but the table's filter could not be re-applied: ${errorText(e)}`);
    }
  }
}

/** The Excel {@link RefreshTarget} for one request context. */
export function excelRefreshTarget(
  context: Excel.RequestContext,
  options: { secrets?: readonly string[]; targetRequestBytes?: number; now?: () => Date; holder?: string; delta?: boolean } = {},
): RefreshTarget {
  return {
    listBindings: () => readBindings(context),
    saveBinding: (b) => saveBinding(context, b, options.secrets ?? []),
    write: (binding, table, o) => writeRefresh(context, binding, table, { ...o, targetRequestBytes: options.targetRequestBytes, now: options.now, holder: options.holder, delta: options.delta }),
    markStale: (binding, failure) => writeStaleMark(context, binding, failure),
    markFresh: (binding) => writeStaleMark(context, binding, null),
    logRefresh: (entry) => appendRefreshLog(context, entry),
  };
}

/**
 * Puts the stale mark at the start of a table's info line (`failure`), or removes it (null), keeping
 * the generation time and the last successful refresh from the binding. Leaves the line alone when
 * it is not the add-in's, or says the table may be INCOMPLETE (that warning must stay). With a
 * failure, the last changes' highlight and record go too ("Show changes" ends with the next refresh).
 */
export async function writeStaleMark(context: Excel.RequestContext, binding: Binding, failure: BindingFailure | null): Promise<void> {
  const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
  const changeSheet = failure ? queueChangeSheet(context, binding.id) : null;
  await context.sync();
  if (lo.isNullObject) return;
  // A failed refresh ends the last changes' highlight too (issue #15: shown until the next refresh).
  if (changeSheet && isOwnChangeSheet(changeSheet)) await dropChanges(context, lo, binding.id, changeSheet);
  const whole = lo.getRange();
  whole.load("rowIndex,columnIndex");
  await context.sync();
  if (whole.rowIndex === 0) return;
  const cell = lo.worksheet.getRangeByIndexes(whole.rowIndex - 1, whole.columnIndex, 1, 1);
  cell.load("values");
  await context.sync();
  const text: unknown = cell.values[0][0];
  if (typeof text !== "string" || !text.startsWith(INFO_PREFIX) || text.includes("INCOMPLETE")) return;
  if (!failure && !isStaleInfo(text)) return;
  const facts = {
    source: binding.source,
    environment: binding.environment,
    generatedAt: binding.validators.generatedAt ?? null,
    schemaVersion: binding.schemaVersion,
    refreshedAt: binding.lastRefreshAt ?? "",
    rowCount: binding.rowCount,
    query: binding.query,
  };
  cell.values = [[failure ? infoStale(`${failure.message} (${failure.code})`, failure.at, facts) : infoComplete(facts)]];
  await context.sync();
}

export interface TableRefreshOptions extends RefreshOptions {
  targetRequestBytes?: number;
  /** Who refreshes, named to a second runtime that finds the table locked. */
  holder?: string;
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
