/**
 * Refreshing a bound Excel table in place: the Excel side of the refresh engine (`src/refresh`).
 *
 * Strategy (documented in README and `src/workbook/README.md`):
 * - The table's lock is taken in the workbook first (`lock.ts`: write, wait, read back); every request
 *   of the refresh also reads it, and each write block checks it first, so a refresh that lost its
 *   lock writes nothing more.
 * - Before the first write: table found, header names still the bound columns, the new size fits on
 *   the sheet, the cells it grows into are empty and it would not touch another table. Any failure here
 *   writes NOTHING to the sheet: it stays byte-identical and only the binding's failure record changes.
 * - ONE RULE for both strategies (issue #21, `src/refresh/positions.ts`): the new export is written
 *   over the same sheet rows in the export's order; no row is inserted or deleted, so references from
 *   outside keep their positions. The cells of the user's own columns move with their record (by key,
 *   else position), copied inside Excel from the rollback copy.
 * - The rollback copy stays INSIDE Excel: the table's whole old area (data and user columns, and the
 *   rows it will grow into) is copied with everything (values, formulas, formats; `Range.copyFrom`
 *   "All", ExcelApi 1.9) to the same address on a very hidden sheet. A failure restores exactly that,
 *   formulas included; it is cleared only after the refresh can no longer fail (after the commit).
 *   With co-authors (issue #26) no copy is made: each of them would download it twice. The old cells
 *   are kept in this runtime (`keepCopy`, `memory`), and a delta checks Excel's block checksums
 *   before its first write and before its commit against their changes (`changedSinceRead`,
 *   `verifyWritten`).
 * - A delta writes only the cells that differ from the new export at their position, in requests
 *   sized by bytes; a delta Excel refuses falls back to a full rewrite in the same refresh (after
 *   restoring the copy), and the summary says so and why.
 * - Every write path sets the columns' number formats before any value (`@` keeps `00317` and
 *   `=SUM(A1)` text), re-applies the user's sort and filter inside the rollback, and ends with one
 *   commit request: the final info line and the binding's success record together, so outcome, info
 *   line, binding and sheet always agree. Nothing is calculated but the add-in's own formulas
 *   (`Range.calculate` of its checksums and scratch cells; issue #34): the user's calculation mode
 *   decides for the user's formulas (`sheet.ts`).
 */
import type { Table, CellValue } from "../table/model";
import type { Binding } from "../refresh/binding";
import { bindingSettingKey, serializeBinding } from "../refresh/binding";
import { planResize, type Rect, type TableGeometry } from "../refresh/plan";
import { refreshAll, refreshOne, type RefreshOptions, type RefreshReport, type RefreshTarget } from "../refresh/engine";
import type { RefreshSource } from "../refresh/source";
import { planColumns, rewritableRows, TEXT_FORMAT } from "./cells";
import { a1 } from "./names";
import { INFO_PREFIX, infoComplete, infoFailed, infoInProgress, infoStale, isStaleInfo } from "./info";
import { appendRefreshLog } from "./refreshLog";
import type { BindingFailure } from "../refresh/binding";
import { areaOf, findOccupiedCell, findTouchingTable, prepareCalculation, probeRowBytes, queuePutBack, queueTypedProbe, queueUsedArea, reachesRows, rowsUnderProbe, setEvery, typedIn, type CalculationGuard, type TypedCells } from "./sheet";
import { captureFormats, restoreFormats, type FormatImage } from "./formatImage";
import { DEFAULT_TARGET_RESPONSE_BYTES, jsonBytes, loadInBlocks, loadPropertiesInBlocks, RANGE_COPY_OVERHEAD_BYTES, RANGE_WRITE_OVERHEAD_BYTES, throwIfAborted, writeInBatches, writeInBlocks, WriteError, type QueuedWrite } from "./blocks";
import { queueColumnFormats, queueDateSystemProbe, typedRows, errorText } from "./writer";
import { checkSettingsBudget, readBindings, saveBinding, saveBindingStatus } from "./bindingStore";
import { acquireTableLock, type TableLock } from "./lock";
import { DEFAULT_COST_MODEL, DELTA_MAX_COST_RATIO, matchRows, planDelta, type DeltaSummary, type KeyChoice } from "../refresh/delta";
import { deltaWrites, userCellMoves } from "../refresh/positions";
import { HASHES_PER_CELL, type HashLogEntry } from "../refresh/rowHash";
import { openRowHashes, readShortHashes, sampleRowHashes, SHORT_CHARS, storeDeltaHashes, storeRowHashes, type StoreSlot } from "./delta";
import { queueUntracked } from "./untracked";
import { gatherRows, predictChecksum, prepareChecks, queueChecksProbe, readChecks, recheck, type ChecksGeometry, type ChecksReading } from "./checksums";
import { alignByFingerprint } from "../refresh/align";
import { changeSheetName, dropChanges, isOwnChangeSheet, queueChangeSheet, writeChangeRecord } from "./changes";
import { dropMarkerIfPresent, markerKey, queueCopy, queueDropMarker, queueMarker, queueMarkerDone, recoverInterruptedRefreshes, rollbackSheetName } from "./recovery";
import { keepSetting, settleSettings } from "./settle";
import { protectedError, queueProtection } from "./protection";

/** Rows per write when cells are written from memory instead of copied inside Excel (co-authors). */
const MEMORY_ROWS_PER_WRITE = 2_000;

export interface RefreshWriteOptions {
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  targetResponseBytes?: number;
  now?: () => Date;
  /** Who refreshes, named to a second caller that finds the table locked ("the task pane", "Refresh all on the ribbon"). */
  holder?: string;
  /** The key rows are matched by (issue #15); null/absent: by position. */
  key?: KeyChoice | null;
  /** The owner id of a table lock the caller already holds (issue #26: refresh on open claims the table before fetching). */
  lockOwner?: string;
  /** false: always a full rewrite (no delta is tried). */
  delta?: boolean;
  /**
   * The binding to store with the data (issue #21, item 5): called with what was written; its JSON goes
   * into the same request as the final info line, so outcome, info line, binding and sheet agree.
   */
  commit?: (delta: DeltaSummary) => Binding;
  /** Credentials that must never reach the stored binding. */
  secrets?: readonly string[];
}

export interface RefreshWriteResult {
  warnings: string[];
  /** What was written: a delta (counts, match) or a full rewrite (with why no delta). */
  delta: DeltaSummary;
  /** Cells changed by a delta (new row, column): what "Show changes" highlights. Empty after a full rewrite. */
  changedCells: Array<{ row: number; column: number }>;
  /** Body rows added by a delta (new row indexes). */
  addedRows: number[];
  /** The binding `commit` returned was stored with the data. */
  committed: boolean;
  /** The binding as stored (when committed). */
  binding?: Binding;
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

/** Errors a delta does not fall back from: the user's cancel, a lost lock (a full rewrite would fail the same). */
function fallsBack(e: unknown): boolean {
  return !(e instanceof WriteError && (e.code === "cancelled" || e.code === "lock_lost" || e.code === "settings_full" || e.code === "changed_during_refresh" || e.code === "occupied")) && !(e instanceof Error && e.name === "AbortError");
}

/**
 * Writes a validated table over a bound Excel table (see the module comment for the strategy).
 * @throws WriteError: `table_busy`, `table_missing`, `table_changed`, `too_many_rows`, `occupied`,
 * `adjacent_table`, `protected` (nothing written); `cancelled`, `payload_too_large`, `settings_full`, `write_failed`
 * (previous data restored, or the table marked); `lock_lost` (another refresh owns the table now).
 */
export async function writeRefresh(context: Excel.RequestContext, binding: Binding, table: Table, options: RefreshWriteOptions = {}): Promise<RefreshWriteResult> {
  const now = options.now ?? (() => new Date());
  throwIfAborted(options.signal, 0, table.rows.length);
  const lock = await acquireTableLock(context, binding.tableName, { holder: options.holder, now, owner: options.lockOwner });
  try {
    let recovered = false;
    let restarted = false;
    for (;;) {
      try {
        return await writeLocked(lock.context, lock, binding, table, options, now, recovered);
      } catch (e) {
        if (e instanceof TableRecovered && !recovered) recovered = true;
        else if (e instanceof RemoteChange && !restarted) restarted = true;
        else if (e instanceof RemoteChange) {
          throw new WriteError("changed_during_refresh", `A colleague kept changing "${binding.tableName}" while this refresh prepared its changes (twice in a row), so nothing was written. Refresh again.`);
        } else throw e;
      }
    }
  } finally {
    await lock.release();
  }
}

/** Thrown once recovery put a dead refresh's table back: the refresh starts over from the restored table. */
class TableRecovered extends Error {}

/**
 * Thrown before the first write when a co-author changed the table after this refresh read it
 * (issue #26, hazard 4): the refresh starts over from the table as it is now (once).
 */
class RemoteChange extends Error {}

async function writeLocked(context: Excel.RequestContext, lock: TableLock, binding: Binding, table: Table, options: RefreshWriteOptions, now: () => Date, recovered = false): Promise<RefreshWriteResult> {
  const total = table.rows.length;
  /**
   * Where the rollback lives (issue #26). Alone in the document: a copy of the table's area on a very
   * hidden sheet, restored formulas and formats included, and after a crash at the next start. With
   * co-authors (Excel said so when the lock was taken) every cell a refresh changes reaches each of
   * them, so a table-sized copy would cost them about three times the change (copy, write, clear):
   * the old cells are kept in this runtime instead (see `restore`), and a runtime that dies leaves
   * the table marked INCOMPLETE for the next start (`recovery.ts`), never a copy.
   */
  const keepCopy = !lock.collab;
  /**
   * Runs `f`, whose requests write (helpers that send several), with every request beginning with the
   * lock's fence (lock.ts, "Fencing": once the lock changed hands Excel refuses each of them whole,
   * however late it arrives). Single write requests begin with `lock.ensureFenced()` instead.
   */
  const fenced = async <T>(f: () => Promise<T>): Promise<T> => {
    await lock.ensure();
    lock.fenceEachRequest(true);
    try {
      return await f();
    } finally {
      lock.fenceEachRequest(false);
    }
  };

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
  // The binding's own rollback sheet (issue #26): kept once made, so a refresh adds no sheet (a
  // structural change that conflicts with any co-author's concurrent one) after the first.
  const rollbackName = rollbackSheetName(binding.id);
  const rollback = context.workbook.worksheets.getItemOrNullObject(rollbackName);
  rollback.load("visibility");
  // The last refresh's changes ("Show changes"): removed below, before anything is written.
  const changeSheet = queueChangeSheet(context, binding.id);
  // Issue #35: the sheet's and the workbook's protection, read with these (no request of its own).
  const protection = queueProtection(context, [sheet]);
  await context.sync();
  const locked = protection();
  if (locked.sheets[0] || locked.structure) {
    throw protectedError("refresh", { sheet: sheet.name, table: binding.tableName, sheetProtected: locked.sheets[0], structureProtected: locked.structure });
  }
  let adoptRollback = false;
  if (!rollback.isNullObject && rollback.visibility !== "VeryHidden") {
    // An empty one is this table's, from a runtime that died between adding it and hiding it.
    const used = rollback.getUsedRangeOrNullObject(true);
    await context.sync();
    adoptRollback = used.isNullObject;
  }
  if (keepCopy && !rollback.isNullObject && rollback.visibility !== "VeryHidden" && !adoptRollback) {
    // Someone's own sheet of that name: never written over.
    throw new WriteError("write_failed", `This workbook has a visible sheet named "${rollbackName}", which the add-in keeps very hidden for this table's rollback copy. Rename that sheet, then refresh again.`);
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
    const occupied = await findOccupiedCell(context, sheet, grownInto, options.targetResponseBytes);
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
      await fenced(() => dropChanges(context, lo, binding.id, changeSheet));
    } catch (e) {
      if (e instanceof WriteError && e.code === "lock_lost") throw e;
      throw new WriteError("write_failed", `The highlight of the last refresh's changes could not be removed: ${errorText(e)}`, { cause: e });
    }
  }

  // --- small reads: the totals row, the info cell, the user columns' formulas (calculated columns) ---
  const bodyRow = geometry.headerRow + 1;
  const width = dataColumns + geometry.userColumns;
  const oldRect: Rect = { row: geometry.headerRow, column: geometry.firstColumn, rowCount: geometry.bodyRows + 1 + totalsRows, columnCount: width };
  const newRect: Rect = { ...plan.table, rowCount: plan.table.rowCount + totalsRows };
  const totalsRange = totalsRows ? sheet.getRangeByIndexes(bodyRow + geometry.bodyRows, geometry.firstColumn, 1, width) : null;
  totalsRange?.load(["formulas", "values", "numberFormat"]);
  const infoRange = geometry.headerRow > 0 ? sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1) : null;
  infoRange?.load("formulas");
  await context.sync();
  const userColumn = geometry.firstColumn + dataColumns;
  /**
   * The user's own cells. Alone, their formulas (the calculated columns; the cells themselves move by
   * `copyFrom` from the rollback copy, exactly). With co-authors, where they are written from here,
   * their values and number formats too: a cell goes to its record's new row with its format, and a
   * text that the formulas getter gives without its quote prefix (office-js #6687) goes back as text
   * (`rewritableCell`, issue #34).
   */
  const userAt = (from: number, count: number) => sheet.getRangeByIndexes(bodyRow + from, userColumn, count, geometry.userColumns);
  const userCells = geometry.userColumns > 0 && !keepCopy
    ? await loadPropertiesInBlocks(context, userAt, geometry.bodyRows, geometry.userColumns, ["formulas", "values", "numberFormat"], { targetResponseBytes: options.targetResponseBytes }).then((p) => ({ formulas: p.formulas, values: p.values, formats: p.numberFormat }))
    : null;
  const userFormulas = userCells?.formulas ?? (geometry.userColumns > 0 ? await loadInBlocks(context, userAt, geometry.bodyRows, "formulas", 64 * geometry.userColumns, options.targetResponseBytes, { columns: geometry.userColumns }) : []);
  const calculated = Array.from({ length: geometry.userColumns }, (_, c) => uniformFormula(userFormulas.map((row) => row[c])));
  const oldTotals = totalsRange ? { formulas: totalsRange.formulas[0] as unknown[], values: totalsRange.values[0] as unknown[], formats: totalsRange.numberFormat[0] as unknown[] } : null;
  throwIfAborted(options.signal, 0, total);

  const infoFormula: unknown = infoRange ? infoRange.formulas[0][0] : null;
  const ownsInfo = typeof infoFormula === "string" && infoFormula.startsWith(INFO_PREFIX);
  if (!recovered && (!ownsInfo || (infoFormula).includes("DATA INCOMPLETE"))) {
    // A refresh of this table may have died mid-write (issue #26, `recovery.ts`): its marker is read
    // (only then: an intact info line says no write is under way) and the table put back first.
    const marker = context.workbook.settings.getItemOrNullObject(markerKey(binding.id));
    marker.load("value");
    await context.sync();
    if (!marker.isNullObject) {
      const done = await fenced(() => recoverInterruptedRefreshes(context, { binding, lockOwner: lock.owner, now }));
      if (done.some((r) => r.outcome === "restored" || r.outcome === "marked")) throw new TableRecovered();
    }
  }
  const setInfo = (text: string) => {
    if (ownsInfo && infoRange) sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1).values = [[text]];
  };
  const writeTotals = (row: number) => {
    // Written back as they were, formats first (a formula written into a text-formatted cell would
    // stay text): structured references ([Amount]) cover the whole new column.
    if (!oldTotals) return;
    const r = sheet.getRangeByIndexes(row, geometry.firstColumn, 1, width);
    r.numberFormat = [oldTotals.formats];
    r.formulas = rewritableRows([oldTotals.formulas], [oldTotals.values], (_, c) => oldTotals.formats[c]) as string[][];
  };
  /**
   * With co-authors: writes putting the user's cells of old rows `from … from+count-1` at body rows
   * `at …`, each block its number formats first, then its formulas and values as they were (text stays
   * text: `rewritableCell`).
   */
  const userCellWrites = (cells: NonNullable<typeof userCells>, from: number, count: number, at: number): QueuedWrite[] => {
    const out: QueuedWrite[] = [];
    for (let r = 0; r < count; r += MEMORY_ROWS_PER_WRITE) {
      const n = Math.min(MEMORY_ROWS_PER_WRITE, count - r);
      const formats = cells.formats.slice(from + r, from + r + n);
      const part = rewritableRows(cells.formulas.slice(from + r, from + r + n), cells.values.slice(from + r, from + r + n), (i, c) => formats[i][c]);
      const to = at + r;
      out.push({
        bytes: jsonBytes(part) + jsonBytes(formats) + 2 * RANGE_WRITE_OVERHEAD_BYTES,
        queue: () => {
          const range = sheet.getRangeByIndexes(bodyRow + to, userColumn, n, geometry.userColumns);
          range.numberFormat = formats as string[][];
          range.formulas = part as string[][];
        },
      });
    }
    return out;
  };

  // --- the rollback copy: its own request, before the table is touched. Everything of the table's
  // area (old body and totals row, and the rows it will grow into), with formulas and formats ---
  // In the same request, the refresh marker (issue #26, `recovery.ts`): if this runtime dies before
  // the commit, the next start (in any client) restores the table from this copy.
  await lock.ensureFenced();
  let backupSheet: Excel.Worksheet | null = null;
  if (keepCopy && rollback.isNullObject) {
    backupSheet = context.workbook.worksheets.add(rollbackName);
    backupSheet.visibility = "VeryHidden";
  } else if (keepCopy) {
    backupSheet = rollback;
    if (adoptRollback) backupSheet.visibility = "VeryHidden";
  }
  const region: Rect = { row: bodyRow, column: geometry.firstColumn, rowCount: Math.max(geometry.bodyRows, plan.bodyRows) + totalsRows, columnCount: width };
  if (backupSheet) queueCopy(backupSheet, sheet, region);
  const markerJson = queueMarker(context, { bindingId: binding.id, owner: lock.owner, startedAt: now().toISOString(), rollback: backupSheet ? rollbackName : null, table: oldRect, region });
  await context.sync();
  /** The marker as this refresh last wrote it (its committed form once the commit ran). */
  let markerJsonNow = markerJson;
  /** Issue #35: a deleted marker a co-author's stale settings copy could put back is settled with the batch. */
  const keepMarkerDropped = () => keepSetting(context, { key: markerKey(binding.id), deleted: true, mode: "cas", previous: { value: markerJsonNow } }, lock.collab);
  /** Queues clearing the copy (its marker goes in a request of its own, {@link dropMarker}). */
  const clearBackup = () => {
    if (backupSheet) rangeOf(backupSheet, region).clear("All");
  };
  /** Removes the marker after a restore; left behind, the next start finds the copy gone and only says so. */
  const dropMarker = async () => {
    try {
      // The delete leads with the fence (issue #34); only a marker still there is deleted (issue #35).
      if (await dropMarkerIfPresent(context, binding.id, () => lock.fence())) keepMarkerDropped();
    } catch {
      /* see above */
    }
  };

  // --- what to write: a delta when it is clearly cheaper, else everything ---
  const plans = planColumns(table);
  const formats = plans.map((p) => p.numberFormat);
  const source = typedRows(table, plans, dateSystem.is1904());
  const oldCount = binding.rowCount === 0 ? 0 : geometry.bodyRows;
  const sorted = (lo.sort.fields ?? []).length > 0;
  const model = DEFAULT_COST_MODEL;
  const fullCost = total * dataColumns * model.cell + model.rowOperation;
  let noDelta: string | null = options.delta === false ? "delta refresh switched off" : null;
  if (!noDelta && (oldCount === 0 || total === 0)) noDelta = "the old or the new table is empty";
  if (!noDelta && sorted) noDelta = "a sort is applied to the table, so its rows are not in the export's order";
  let slot: StoreSlot | null = null;
  /** For every old row, the new row its fingerprint is aligned with (-1: none). */
  let aligned: Int32Array | null = null;
  let typed: (string | number | boolean)[][] | null = null;
  let newHashes: string[] | null = null;
  if (!noDelta && (!options.key || options.key.candidates.length === 0) && oldCount === total && total >= 2 * HASHES_PER_CELL) {
    // Without a key rows are compared by position: two stored cells of fingerprints (the first and
    // the middle, 8,000 rows) tell whether most rows moved (rotated or re-sorted rows) before the
    // whole store is read (issue #24: a full rewrite ≤ 1.05× the import). A cost decision only.
    const sample = await sampleRowHashes(context, binding.id, (cells) => [0, Math.floor(cells / 2)]);
    if (sample && sample.rows === oldCount) {
      typed = source.get(0, total);
      newHashes = source.hashes();
      let seen = 0, differ = 0;
      for (const part of sample.sample) {
        part.hashes.forEach((h, k) => {
          seen++;
          if (newHashes![part.first + k] !== h) differ++;
        });
      }
      const estimate = seen > 0 ? ((differ / seen) * total * (model.cell + model.rangeWrite)) / fullCost : 0;
      if (seen > 0 && estimate > 1.2 * DELTA_MAX_COST_RATIO) noDelta = `${differ.toLocaleString("en-US")} of ${seen.toLocaleString("en-US")} rows sampled by position differ: a delta would cost about ${estimate.toFixed(2)}× a full rewrite (limit ${DELTA_MAX_COST_RATIO})`;
    }
  }
  // Excel's block checksums (issue #24): with them, the fingerprints are read in short form only.
  const checksGeometry: ChecksGeometry = { sheet: sheet.name, top: bodyRow, left: geometry.firstColumn, width: dataColumns, rows: oldCount };
  let checks: ChecksReading | null = null;
  if (!noDelta) {
    checks = await readChecks(context, binding.id, checksGeometry, options.targetResponseBytes);
    // Scratch formulas are written (and cleared) on the checksum sheet: those requests are fenced.
    if (checks) slot = await readShortHashes(context, binding.id, checks.sheet, options.targetResponseBytes, () => lock.ensureFenced());
    slot ??= await openRowHashes(context, binding.id);
    let previous = slot?.formats ?? null;
    if (!previous) {
      const first = sheet.getRangeByIndexes(bodyRow, geometry.firstColumn, 1, dataColumns);
      first.load("numberFormat");
      await context.sync();
      previous = first.numberFormat[0].map(String);
    }
    if (formats.some((f, i) => previous[i] !== f)) noDelta = "the column formats changed";
    // With co-authors a delta is verified against their changes by Excel's block checksums (see
    // `changedSinceRead`, `verifyWritten`); a host without them (no dynamic arrays) rewrites in full.
    if (!noDelta && lock.collab && !checks) noDelta = "co-authoring is active and Excel's block checksums, which verify a delta against colleagues' changes, are not available";
  }
  if (!noDelta) {
    typed ??= source.get(0, total);
    newHashes ??= source.hashes();
    if (slot?.short && slot.short.length === geometry.bodyRows) {
      // Short fingerprints, aligned in order: a new row no old row is aligned with must be written.
      aligned = alignByFingerprint(slot.short, newHashes.map((h) => h.slice(0, SHORT_CHARS)), 2);
      let matched = 0;
      for (const j of aligned) if (j >= 0) matched++;
      const unmatched = total - matched;
      const floor = (unmatched * (model.cell + model.rangeWrite)) / fullCost;
      if (floor > DELTA_MAX_COST_RATIO) noDelta = `${unmatched.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} rows are new, changed or moved: a delta would cost at least ${floor.toFixed(2)}× a full rewrite (limit ${DELTA_MAX_COST_RATIO})`;
    } else if (slot?.hashes && slot.hashes.length === geometry.bodyRows) {
      // The stored fingerprints decide before anything is read: a new row whose fingerprint no old
      // row has must be written (changed or new), one cell and one request part at least.
      // Without a key, rows are matched by position (row n stays row n): a row whose fingerprint
      // differs from the one stored at its position must be written even if the same row sits
      // elsewhere (rotated rows: every row). With a key, a row found anywhere may be moved inside Excel.
      const byPosition = !options.key || options.key.candidates.length === 0;
      let unmatched = 0;
      if (byPosition) {
        const old = slot.hashes;
        newHashes.forEach((h, i) => {
          if (i >= old.length || old[i] !== h) unmatched++;
        });
      } else {
        const left = new Map<string, number>();
        for (const h of slot.hashes) left.set(h, (left.get(h) ?? 0) + 1);
        for (const h of newHashes) {
          const k = left.get(h) ?? 0;
          if (k > 0) left.set(h, k - 1);
          else unmatched++;
        }
      }
      const floor = (unmatched * (model.cell + model.rangeWrite)) / fullCost;
      if (floor > DELTA_MAX_COST_RATIO) noDelta = `${unmatched.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} rows are new or changed: a delta would cost at least ${floor.toFixed(2)}× a full rewrite (limit ${DELTA_MAX_COST_RATIO})`;
    }
  }

  // The old rows: every data cell when a delta may pay (read once, as formulas: a formula typed over
  // a data cell must be rewritten), else only the key columns when the user's cells must follow.
  const key = options.key ?? null;
  const readRows = (first: number, columns: number) =>
    loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn + first, count, columns), oldCount, "formulas", 16 * columns, options.targetResponseBytes, { columns, beforeBlock: () => lock.ensure() });
  const norm = (rows: readonly unknown[][]): CellValue[][] => rows.map((r) => r.map((v) => (v === "" || v === undefined ? null : (v as CellValue))));
  let oldData: unknown[][] | null = null;
  /** Old rows at these (ascending) indexes, as formulas: one range per run of neighbours, a few thousand ranges per request. */
  const readRowRuns = async (indexes: readonly number[]): Promise<unknown[][]> => {
    // Runs of neighbouring rows [first, count], grouped into requests.
    const perRequest = Math.max(1, Math.floor((options.targetResponseBytes ?? 4_000_000) / (64 * dataColumns)));
    const requests: Array<Array<[number, number]>> = [];
    let rows = perRequest;
    for (let k = 0; k < indexes.length; ) {
      let e = k + 1;
      while (e < indexes.length && indexes[e] === indexes[e - 1] + 1 && e - k < perRequest) e++;
      if (rows + (e - k) > perRequest || requests[requests.length - 1].length >= 2_000) {
        requests.push([]);
        rows = 0;
      }
      requests[requests.length - 1].push([indexes[k], e - k]);
      rows += e - k;
      k = e;
    }
    const readRequest = async (runs: Array<[number, number]>): Promise<unknown[][]> => {
      await lock.ensure();
      const ranges = runs.map(([first, count]) => sheet.getRangeByIndexes(bodyRow + first, geometry.firstColumn, count, dataColumns).load("formulas"));
      await context.sync();
      return ranges.flatMap((r) => r.formulas as unknown[][]);
    };
    const out: unknown[][] = [];
    for (const runs of requests) out.push(...(await readRequest(runs)));
    return out;
  };
  /**
   * The old rows (issue #24, item 3). Each old row's fingerprint proposes the new row it holds
   * (aligned in order, `align.ts`); the rows no new row matches (changed or removed records) are
   * gathered by Excel into one block and read as values. A proposal is accepted only where Excel's
   * checksum of the block, calculated now, equals the checksum predicted from what the block would
   * then hold (`predictChecksum`): a value the user typed over, a cleared cell, a formula, a moved or
   * resized block, or a wrong proposal all make them differ, and that block is read as formulas.
   * Without usable checksums the whole table is read, as before.
   */
  const readOldRows = async (): Promise<unknown[][]> => {
    const oldH = slot?.hashes ?? slot?.short ?? null;
    if (!checks || !oldH || oldH.length !== oldCount || !newHashes || !typed) return readRows(0, dataColumns);
    const len = slot?.hashes ? oldH[0]?.length ?? SHORT_CHARS : SHORT_CHARS;
    aligned ??= alignByFingerprint(oldH, newHashes.map((h) => h.slice(0, len)), slot?.hashes ? 256 : 2);
    const al = aligned;
    const r = checks.rowsPerBlock;
    const blocks = checks.current.length;
    const rows = new Array<unknown[] | undefined>(oldCount);
    const gather: number[] = [];
    for (let b = 0; b < blocks; b++) {
      if (checks.current[b] === null) continue; // an error: read below
      for (let i = b * r; i < Math.min(oldCount, (b + 1) * r); i++) {
        if (al[i] >= 0) rows[i] = typed[al[i]];
        else gather.push(i);
      }
    }
    if (gather.length > 0) {
      await lock.ensure();
      // With co-authors, Excel's gathering formulas (written, then cleared) would reach each of them:
      // the rows are read where they are instead (more requests here, nothing for them).
      const got = keepCopy
        ? await gatherRows(context, checks, checksGeometry, gather, options.targetRequestBytes, options.targetResponseBytes, () => lock.ensureFenced())
        : await readRowRuns(gather);
      gather.forEach((i, k) => (rows[i] = got[k]));
    }
    const read = new Array<boolean>(blocks).fill(false);
    for (let b = 0; b < blocks; b++) {
      const from = b * r, to = Math.min(oldCount, from + r);
      const current = checks.current[b];
      read[b] = current === null || predictChecksum(checksGeometry, from, rows.slice(from, to) as unknown[][]) !== current;
    }
    for (let b = 0; b < blocks; ) {
      if (!read[b]) { b++; continue; }
      let e = b;
      while (e < blocks && read[e]) e++;
      const from = b * r, count = Math.min(oldCount, e * r) - from;
      const part = await loadInBlocks(context, (f, c) => sheet.getRangeByIndexes(bodyRow + from + f, geometry.firstColumn, c, dataColumns), count, "formulas", 16 * dataColumns, options.targetResponseBytes, { columns: dataColumns, beforeBlock: () => lock.ensure() });
      part.forEach((row, i) => (rows[from + i] = row));
      b = e;
    }
    return rows as unknown[][];
  };
  let match: ReturnType<typeof matchRows> | null = null;
  let planned: {
    matchedBy: "key" | "position"; key: string[] | null; matchReason: string; added: number; changed: number; removed: number;
    changes: Array<{ row: number; column: number }>; addedRows: number[];
    /** The fingerprints' change as a log entry (null: the order changed, a new base is stored). */
    log: HashLogEntry | null;
  } | null = null;
  if (!noDelta) {
    oldData = await readOldRows();
    const p = planDelta({ columns: table.columns, rows: norm(oldData) }, { columns: table.columns, rows: norm(typed!) }, key, { maxCostRatio: Infinity });
    match = matchRows({ columns: table.columns, rows: norm(oldData) }, { columns: table.columns, rows: norm(typed!) }, key);
    planned = {
      matchedBy: p.matchedBy, key: p.key, matchReason: p.matchReason, added: p.counts.added, changed: p.counts.changed, removed: p.counts.removed,
      changes: p.strategy === "delta" ? p.changes.map((c) => ({ row: c.row, column: c.column })) : [],
      addedRows: p.strategy === "delta" ? p.inserted.flatMap((r) => r.rows.map((_, i) => r.start + i)) : [],
      log: p.strategy === "delta"
        ? {
            d: p.removed.map((r) => [r.start, r.count]),
            i: p.inserted.map((r) => [r.start, newHashes!.slice(r.start, r.start + r.rows.length).join("")]),
            c: [...new Set(p.changes.map((c) => c.row))].map((r) => [r, newHashes![r]]),
          }
        : null,
    };
  } else if (geometry.userColumns > 0 && oldCount > 0 && total > 0 && key && key.candidates.length > 0) {
    // Only the key columns, to move the user's cells with their records.
    const wanted = [...new Set(key.candidates.flat())].map((n) => table.columns.findIndex((c) => c.name === n)).filter((i) => i >= 0);
    const oldRows: CellValue[][] = Array.from({ length: oldCount }, () => new Array<CellValue>(dataColumns).fill(null));
    const newAll = source.get(0, total);
    for (const ci of wanted) {
      const col = await readRows(ci, 1);
      col.forEach((r, i) => (oldRows[i][ci] = r[0] === "" ? null : (r[0] as CellValue)));
    }
    const newKeys: CellValue[][] = newAll.map((r) => r.map((v, ci) => (wanted.includes(ci) ? (v === "" ? null : v) : null)));
    match = matchRows({ columns: table.columns, rows: oldRows }, { columns: table.columns, rows: newKeys }, key);
  }
  if (!planned && geometry.userColumns > 0 && oldCount > 0 && total > 0 && (!match || match.matchedBy === "position")) {
    // No key (or none unique): the user's cells follow a row whose whole content is unchanged (issue
    // #34, item 5: a sorted keyless table), the others stay by position. That needs every old data cell.
    const oldRows = norm(await readRows(0, dataColumns));
    match = matchRows({ columns: table.columns, rows: oldRows }, { columns: table.columns, rows: norm(source.get(0, total)) }, key);
  }
  const newToOld: Int32Array = match ? match.newToOld : Int32Array.from({ length: total }, (_, i) => (i < oldCount ? i : -1));

  let spans: ReturnType<typeof deltaWrites> | null = null;
  if (!noDelta && oldData && typed) {
    spans = deltaWrites(oldData, typed, newToOld, dataColumns);
    const deltaCost = spans.cells * model.cell + (spans.spans.length + spans.copies.length) * model.rangeWrite;
    if (deltaCost / fullCost > DELTA_MAX_COST_RATIO) noDelta = `a delta would cost ${(deltaCost / fullCost).toFixed(2)}× a full rewrite (limit ${DELTA_MAX_COST_RATIO})`;
  }
  throwIfAborted(options.signal, 0, total);

  // --- with co-authors, the rollback is the old cells kept here (see `keepCopy`): every data cell
  // of the old body as formulas (a delta already has them: read, or proved by Excel's checksums) and
  // each data column's number format; the user's columns were read above ---
  /**
   * `values`: the values of the data columns holding a text that starts with `=` (a formula, or a
   * text such as a service's `=CONCAT(…)` kept in a text cell), by column: `formulas` alone cannot
   * tell the two apart (office-js #6687), and a text written back as a formula would run.
   */
  let memory: { rows: unknown[][]; formats: string[]; values: Map<number, unknown[]> } | null = null;
  let growthFormats: FormatImage | null = null;
  /**
   * The part of `grownInto` the first write request's probe reads back (`checkGrowth`): all of it,
   * unless the sheet holds something at or below its top row (beside it, or further down), when the
   * probe may read back every cell of those rows (the strictest reading of `getUsedRange`, see
   * `probeRowBytes`): then only the rows whose cells fit a response's budget. The rows below them
   * were found empty by the check above, a few requests earlier, and are not read again.
   */
  let growthProbed: Rect | null = grownInto;
  if (!backupSheet) {
    const bodyRows = geometry.bodyRows;
    let rows = oldData && oldData.length === bodyRows ? oldData : null;
    if (!rows) {
      await lock.ensure();
      rows = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns), bodyRows, "formulas", 16 * dataColumns, options.targetResponseBytes, { columns: dataColumns, beforeBlock: () => lock.ensure() });
    }
    const first = sheet.getRangeByIndexes(bodyRow, geometry.firstColumn, 1, dataColumns);
    first.load("numberFormat");
    const used = grownInto ? queueUsedArea(sheet) : null;
    await context.sync();
    memory = { rows: rows.map((r) => r.map((v) => (v === null || v === undefined ? "" : v))), formats: first.numberFormat[0].map(String), values: new Map() };
    // Security review (2026-11-30): the columns where a kept "formula" may be a text are read again,
    // formulas and values in the same requests (a co-author's edit between two reads would pair a
    // text's formula with another value), only those (most tables have none), so the restore below
    // writes such a text back as text.
    const kept = memory.rows;
    for (let c = 0; c < dataColumns; c++) {
      if (!kept.some((r) => typeof r[c] === "string" && (r[c] as string).startsWith("="))) continue;
      await lock.ensure();
      const pair = await loadPropertiesInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn + c, count, 1), bodyRows, 1, ["formulas", "values"], { targetResponseBytes: options.targetResponseBytes, beforeBlock: () => lock.ensure() });
      pair.formulas.forEach((r, i) => (kept[i][c] = r[0] === null || r[0] === undefined ? "" : r[0]));
      memory.values.set(c, pair.values.map((r) => r[0]));
    }
    // The rows the table grows into are empty (checked above) but may be formatted: their formats are
    // kept too, so a failure puts them back and not the data columns' (`formatImage.ts`). Without a
    // co-author, the rollback copy holds them (its region includes the growth).
    if (grownInto) {
      await lock.ensure();
      growthFormats = (await captureFormats(context, sheet, grownInto, { targetResponseBytes: options.targetResponseBytes, where: `${a1(grownInto.row, grownInto.column, grownInto.rowCount, grownInto.columnCount)} on "${sheet.name}", the rows the table grows into,`, what: "refresh" })).image;
      if (used && reachesRows(areaOf(used), grownInto.row, grownInto)) {
        // At probe time (before the prelude's formats) the rows hold the formats just read.
        const fits = rowsUnderProbe(options.targetResponseBytes ?? DEFAULT_TARGET_RESPONSE_BYTES, probeRowBytes(growthFormats.runs.map((runs) => runs.map(([, f]) => f))));
        if (fits < grownInto.rowCount) growthProbed = { ...grownInto, rowCount: fits };
      }
    }
  }

  // --- writing, inside the rollback ---
  const ws = context.workbook.worksheets.getItem(sheet.name);
  const moves = userCellMoves(newToOld);
  const fresh = total === 0 && oldCount > 0 ? [{ start: 0, count: 1 }] : moves.fresh;
  let guard = null as CalculationGuard | null;
  const summaryFor = (strategy: "delta" | "full", fellBack: string | null): DeltaSummary => {
    // Without a key: how many rows were matched by content and how many by position (issue #34).
    const ways = match?.byContent !== undefined ? { byContent: match.byContent, byPosition: match.byPosition ?? 0 } : {};
    return { ...summaryOf(strategy, fellBack), ...ways };
  };
  const summaryOf = (strategy: "delta" | "full", fellBack: string | null): DeltaSummary => {
    if (strategy === "delta" && planned && spans) {
      const rowsMoved = spans.copies.reduce((n, cp) => n + cp.count, 0);
      return { strategy: "delta", matchedBy: planned.matchedBy, key: planned.key, reason: planned.matchReason, added: planned.added, changed: planned.changed, removed: planned.removed, cellsWritten: spans.cells, ...(rowsMoved > 0 ? { rowsMoved } : {}) };
    }
    const why = fellBack ?? noDelta ?? "a full rewrite was chosen";
    const extra = fellBack ? { fallback: fellBack } : {};
    return planned
      ? { strategy: "full", matchedBy: planned.matchedBy, key: planned.key, reason: `${planned.matchReason}; full rewrite: ${why}`, added: planned.added, changed: planned.changed, removed: planned.removed, cellsWritten: total * dataColumns, exact: true, ...extra }
      : {
          strategy: "full", matchedBy: match?.matchedBy ?? "position", key: match?.key ?? null, reason: `full rewrite: ${why}`,
          added: Math.max(0, total - binding.rowCount), changed: 0, removed: Math.max(0, binding.rowCount - total), cellsWritten: total * dataColumns, exact: false, ...extra,
        };
  };

  /** Where the current attempt is: only a refusal while writing the data makes a delta fall back. */
  let phase: "write" | "finish" = "write";
  /**
   * With co-authors, the rows the table grows into are read again in the first write request, before
   * anything in it (issue #26, hazard 5): a colleague may have typed there since the check above.
   * What they typed is put back by the restore (`growthFound`). Only the part of those rows that holds
   * values is read (`getUsedRangeOrNullObject(true)` of them: a null object when they are empty, as
   * the check above found them): reading all of them put every cell's formula, value and format of the
   * grown rows in one response, over Excel on the web's 5 MB once a table grew by ~30,000 rows × 12,
   * and such a refresh failed every time.
   */
  let growthProbe: Excel.Range | null = null;
  let growthFound: TypedCells | null = null;
  const checkGrowth = (probe: Excel.Range | null): void => {
    if (!probe) return;
    growthFound = typedIn(probe);
    if (!growthFound) return;
    throw new WriteError("occupied", `A colleague typed into the rows "${binding.tableName}" grows into (${a1(grownInto!.row, grownInto!.column, grownInto!.rowCount, grownInto!.columnCount)} on "${sheet.name}") while it refreshed, so the refresh was undone and what they typed is kept. Move those cells below the table, then refresh again.`);
  };
  /** One complete write; on success the binding is committed with the data. */
  const attempt = async (strategy: "delta" | "full", fellBack: string | null): Promise<{ summary: DeltaSummary; stored: Binding | null }> => {
    phase = "write";
    growthProbe = null;
    const prelude = () => {
      if (!backupSheet && grownInto) {
        growthProbe = queueTypedProbe(sheet, growthProbed ?? grownInto);
      }
      guard ??= calc.start();
      setInfo(infoInProgress("refresh", binding.source));
      if (plan.growth) lo.resize(rangeOf(sheet, newRect));
      // Every data cell gets its column's format before any value is written (issue #21, item 2).
      queueColumnFormats(sheet, bodyRow, geometry.firstColumn, plan.bodyRows, plans);
    };
    if (strategy === "delta") {
      const writes: QueuedWrite[] = [{ bytes: RANGE_WRITE_OVERHEAD_BYTES * (3 + dataColumns), queue: prelude }];
      // Records that moved to another row: their cells copied inside Excel (values only: the
      // columns' formats are already set), before the changed cells are written over them.
      for (const cp of spans!.copies) {
        const from = backupSheet;
        if (from) {
          writes.push({
            bytes: RANGE_COPY_OVERHEAD_BYTES,
            // Untracked (issue #24): never used after its request, so without the library's keep-reference.
            queue: () => queueUntracked(context, () => ws.getRangeByIndexes(bodyRow + cp.to, geometry.firstColumn, cp.count, dataColumns).copyFrom(from.getRangeByIndexes(bodyRow + cp.from, geometry.firstColumn, cp.count, dataColumns), "Values")),
          });
          continue;
        }
        // No copy to move them from (co-authors): the moved records' new rows are written as values.
        for (let r = 0; r < cp.count; r += MEMORY_ROWS_PER_WRITE) {
          const at = cp.to + r, part = typed!.slice(at, at + Math.min(MEMORY_ROWS_PER_WRITE, cp.count - r));
          writes.push({
            bytes: jsonBytes(part) + RANGE_WRITE_OVERHEAD_BYTES,
            queue: () => queueUntracked(context, () => {
              ws.getRangeByIndexes(bodyRow + at, geometry.firstColumn, part.length, dataColumns).values = part;
            }),
          });
        }
      }
      for (const sp of spans!.spans) {
        writes.push({
          bytes: jsonBytes(sp.values) + RANGE_WRITE_OVERHEAD_BYTES,
          queue: () => queueUntracked(context, () => {
            ws.getRangeByIndexes(bodyRow + sp.row, geometry.firstColumn + sp.column, 1, sp.values.length).values = [sp.values as (string | number | boolean)[]];
          }),
        });
      }
      await writeInBatches(context, writes, { targetRequestBytes: options.targetRequestBytes, signal: options.signal, beforeBlock: () => lock.ensureFenced() });
    } else {
      const blank = total === 0 ? [new Array<string>(dataColumns).fill("")] : null;
      await writeInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns), blank ? { total: 1, get: () => blank } : source, {
        signal: options.signal,
        targetRequestBytes: options.targetRequestBytes,
        beforeBlock: () => lock.ensureFenced(),
        onProgress: (n) => options.onProgress?.(blank ? 0 : n, total),
        prelude,
      });
    }
    throwIfAborted(options.signal, total, total);
    checkGrowth(growthProbe);

    // The user's own cells follow their records, copied from the rollback copy (inside Excel);
    // new records get the calculated columns' formulas, or nothing.
    const userWrites: QueuedWrite[] = [];
    if (geometry.userColumns > 0) {
      for (const cp of moves.copies) {
        const from = backupSheet;
        if (from) {
          userWrites.push({
            bytes: RANGE_COPY_OVERHEAD_BYTES,
            queue: () => ws.getRangeByIndexes(bodyRow + cp.to, userColumn, cp.count, geometry.userColumns).copyFrom(from.getRangeByIndexes(bodyRow + cp.from, userColumn, cp.count, geometry.userColumns), "All"),
          });
          continue;
        }
        // Co-authors: the cells as read, with their number formats (text stays text).
        if (userCells) userWrites.push(...userCellWrites(userCells, cp.from, cp.count, cp.to));
      }
      for (const run of fresh) {
        userWrites.push({
          bytes: RANGE_WRITE_OVERHEAD_BYTES * (1 + geometry.userColumns) + geometry.userColumns * 200,
          queue: () => {
            const oldPart = Math.min(run.count, Math.max(0, oldCount - run.start));
            if (oldPart > 0) ws.getRangeByIndexes(bodyRow + run.start, userColumn, oldPart, geometry.userColumns).clear("Contents");
            if (total === 0) return;
            calculated.forEach((f, c) => {
              if (f) setEvery(ws.getRangeByIndexes(bodyRow + run.start, userColumn + c, run.count, 1), "formulas", f);
            });
          },
        });
      }
    }
    // Shrink, then the totals row back under the new last row; the settings are read for the commit.
    const settings = context.workbook.settings;
    userWrites.push({
      bytes: RANGE_WRITE_OVERHEAD_BYTES * 4 + width * 80,
      queue: () => {
        if (plan.vacated) {
          lo.resize(rangeOf(sheet, newRect));
          rangeOf(sheet, { ...plan.vacated, row: plan.vacated.row + totalsRows }).clear("Contents");
        }
        writeTotals(bodyRow + plan.bodyRows);
        settings.load("items/key,items/value");
      },
    });
    await writeInBatches(context, userWrites, { targetRequestBytes: options.targetRequestBytes, signal: options.signal, beforeBlock: () => lock.ensureFenced() });

    phase = "finish";
    // The user's sort and filter, one at a time (Excel for Mac throws re-applying a removed filter,
    // office-js #3086, so only an enabled one is); inside the rollback: a failure restores.
    if (sorted) {
      await lock.ensureFenced();
      lo.sort.reapply();
      await context.sync();
    }
    if (lo.autoFilter.enabled) {
      await lock.ensureFenced();
      lo.autoFilter.reapply();
      await context.sync();
    }

    // With co-authors: Excel's block checksums must show exactly the rows written, at their places.
    if (strategy === "delta") await verifyWritten();

    // The commit: the final info line and the binding in one request (no calculation is asked for: sheet.ts).
    const summary = summaryFor(strategy, fellBack);
    let stored: Binding | null = null;
    await lock.ensureFenced();
    if (options.commit) {
      stored = options.commit(summary);
      const json = serializeBinding(stored, options.secrets ?? []);
      checkSettingsBudget(settings.items, bindingSettingKey(stored.id), json);
      setInfo(completeInfo());
      context.workbook.settings.add(bindingSettingKey(stored.id), json);
    } else {
      setInfo(completeInfo());
    }
    // The marker goes with the commit: from here on the new data is the table's, never restored over.
    // Turned into its committed form, not deleted (issue #35: a co-author's whole-collection write can
    // have erased it, and deleting a setting that is gone fails the request after the rest of it was
    // applied); the refresh's last request deletes it.
    markerJsonNow = queueMarkerDone(context, binding.id, lock.owner);
    await context.sync();
    if (stored) {
      // Issue #35: the binding is settled with the batch (a co-author's stale copy can put the old one back).
      const was = settings.items.find((s) => s.key === bindingSettingKey(stored.id));
      keepSetting(context, { key: bindingSettingKey(stored.id), value: serializeBinding(stored, options.secrets ?? []), mode: "cas", previous: was ? { value: was.value } : null }, lock.collab);
    }
    return { summary, stored };
  };

  /**
   * Whether a co-author's change reached this copy since the table was read (issue #26, hazard 4):
   * the table's address, or any block checksum, calculated now, differs from the reading. An insert,
   * delete or sort moves rows (the checksums weigh each cell by its position); an edit changes text.
   */
  const changedSinceRead = async (c: ChecksReading): Promise<boolean> => {
    const { blocks, table: at } = await recheck(context, c, lo, options.targetResponseBytes);
    const moved = at.rowIndex !== whole.rowIndex || at.columnIndex !== whole.columnIndex || at.rowCount !== whole.rowCount || at.columnCount !== whole.columnCount;
    return moved || blocks.some((v, b) => v !== c.current[b]);
  };
  /**
   * With co-authors, before a delta commits: the table must stand where it was written, and every
   * block of rows Excel checksums must hold exactly the new rows (predicted as in `readOldRows`). A
   * co-author's insert, delete, sort or edit that reached this copy during the writes fails the
   * refresh, which restores the old rows whole (never a value beside another record's key).
   */
  const verifyWritten = async (): Promise<void> => {
    if (!lock.collab || !checks || !typed) return;
    const c = checks;
    const { blocks: again, table: at } = await recheck(context, c, lo, options.targetResponseBytes);
    let differs = at.rowIndex !== newRect.row || at.columnIndex !== newRect.column || at.rowCount !== newRect.rowCount || at.columnCount !== newRect.columnCount;
    const r = c.rowsPerBlock;
    for (let b = 0; b < again.length && !differs; b++) {
      const from = b * r, to = Math.min(checksGeometry.rows, from + r);
      // Rows past the new end hold the totals row or cleared cells: not predicted here.
      if (to > total) break;
      const want = predictChecksum(checksGeometry, from, typed.slice(from, to));
      if (want !== null && again[b] !== want) differs = true;
    }
    if (differs) {
      throw new WriteError("changed_during_refresh", `A colleague changed "${binding.tableName}" while this refresh wrote it (a row inserted, deleted or sorted, or a cell edited): refresh again.`);
    }
  };

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

  /**
   * Puts the old table back: its size and every cell of its area from the rollback copy, or (with
   * co-authors) the old cells kept in {@link memory}: each data column's format, then the data and
   * the user's columns as formulas, whole rows (a row never mixes two records), the totals row, and
   * the rows it grew into emptied again.
   */
  const restore = async (): Promise<void> => {
    await lock.ensureFenced();
    if (backupSheet) {
      lo.resize(rangeOf(sheet, oldRect));
      queueCopy(sheet, backupSheet, region);
      if (lo.autoFilter.enabled) lo.autoFilter.reapply();
      await context.sync();
      return;
    }
    const kept = memory!;
    const bodyRows = geometry.bodyRows;
    // Text stays text: a text a user typed (quote-prefixed) into a data cell goes back as text.
    // A kept `=…` that was a text (its value is that very text) goes back as text, never as a formula.
    const keptValues = (a: number, b: number): unknown[][] | null =>
      kept.values.size === 0 ? null : Array.from({ length: b - a }, (_, i) => Array.from({ length: dataColumns }, (_, c) => kept.values.get(c)?.[a + i]));
    const keptRows = { total: kept.rows.length, get: (a: number, b: number) => rewritableRows(kept.rows.slice(a, b), keptValues(a, Math.min(b, kept.rows.length)), (_, c) => kept.formats[c]) };
    await writeInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, dataColumns), keptRows, {
      property: "formulas",
      targetRequestBytes: options.targetRequestBytes,
      beforeBlock: () => lock.ensureFenced(),
      prelude: () => {
        lo.resize(rangeOf(sheet, oldRect));
        if (bodyRows > 0) kept.formats.forEach((f, c) => setEvery(sheet.getRangeByIndexes(bodyRow, geometry.firstColumn + c, bodyRows, 1), "numberFormat", f));
      },
    });
    // The user's cells back at their rows, with their formats (the writes moved them with their records).
    if (userCells) await writeInBatches(context, userCellWrites(userCells, 0, userCells.formulas.length, 0), { targetRequestBytes: options.targetRequestBytes, beforeBlock: () => lock.ensureFenced() });
    await lock.ensureFenced();
    const below = region.rowCount - bodyRows - totalsRows;
    if (below > 0) rangeOf(sheet, { row: bodyRow + bodyRows + totalsRows, column: geometry.firstColumn, rowCount: below, columnCount: width }).clear("Contents");
    // Their formats as they were before (sent with the clearing); what a colleague typed goes over them.
    if (growthFormats) await restoreFormats(context, sheet, growthFormats);
    // What a colleague typed there during the refresh (seen by the first write request) goes back.
    if (growthFound) queuePutBack(sheet, growthFound);
    writeTotals(bodyRow + bodyRows);
    if (lo.autoFilter.enabled) lo.autoFilter.reapply();
    await context.sync();
  };

  const fail = async (err: unknown): Promise<never> => {
    const failure =
      err instanceof WriteError ? err : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { cause: err });
    if (failure.code === "lock_lost" || lock.lost) {
      // A newer refresh owns the table: nothing is restored over it.
      throw failure.code === "lock_lost" ? failure : new WriteError("lock_lost", failure.message, failure.details);
    }
    try {
      await restore();
      lock.fence();
      setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, true));
      clearBackup();
      await context.sync();
      await dropMarker();
    } catch (restoreErr) {
      if (restoreErr instanceof WriteError && restoreErr.code === "lock_lost") throw restoreErr;
      try {
        lock.fence();
        if (ownsInfo) {
          setInfo(infoFailed("refresh", binding.source, now().toISOString(), failure.code, failure.message, false));
          sheet.getRangeByIndexes(geometry.headerRow - 1, geometry.firstColumn, 1, 1).numberFormat = [[TEXT_FORMAT]];
        }
        await context.sync();
      } catch {
        // The "DATA INCOMPLETE" marker stays; the failure below says so too.
      }
      throw new WriteError(failure.code, `${failure.message} The previous data could not be restored (${errorText(restoreErr)}); the table may be incomplete. Refresh again.`, { ...failure.details, cause: restoreErr });
    }
    throw new WriteError(failure.code, `${failure.message} The previous data was restored.`, failure.details);
  };

  let outcome: { summary: DeltaSummary; stored: Binding | null };
  let strategy: "delta" | "full" = noDelta ? "full" : "delta";
  if (strategy === "delta" && lock.collab && checks && (await changedSinceRead(checks))) {
    // A co-author changed the table after it was read (issue #26, hazard 4): nothing is written yet,
    // so the refresh starts over from the table as it is now; this one leaves no marker behind.
    // The delete leads with the fence (issue #34); only a marker still there is deleted (issue #35).
    if (await dropMarkerIfPresent(context, binding.id, () => lock.fence())) keepMarkerDropped();
    throw new RemoteChange();
  }
  try {
    try {
      outcome = await attempt(strategy, null);
    } catch (e) {
      if (strategy !== "delta" || phase !== "write" || !fallsBack(e)) throw e;
      // A delta Excel refused (issue #21, item 8): the same refresh rewrites in full, from the old table.
      const code = e && typeof e === "object" && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : "error";
      const why = `the delta was refused by Excel (${code})`;
      await restore();
      strategy = "full";
      outcome = await attempt("full", why);
    }
  } catch (e) {
    return fail(e);
  }
  options.onProgress?.(total, total);

  // --- after the commit nothing can fail the refresh: fingerprints, the change record, the copy ---
  // Each of these requests begins with the lock's fence too: a late one must not land over a refresh
  // that took the table over since (above all the clearing of the rollback copy, which would empty
  // that refresh's copy).
  lock.fenceEachRequest(true);
  const warnings: string[] = [];
  try {
    // The fingerprints of the rows as written: the delta's, or those taken while the blocks were typed.
    const hashes = newHashes ?? source.hashes();
    // With Excel's block checksums of the rows as written (issue #24): after a full rewrite they go in
    // the fingerprints' requests, their sheet looked up in the store's first one, as an import does.
    const checks = { geometry: { sheet: sheet.name, top: bodyRow, left: geometry.firstColumn, width: dataColumns, rows: total }, longestRowChars: source.longestRowChars() };
    if (strategy === "delta" && spans) {
      // After a delta: the checksums' writes are prepared (their sheet looked up and read) first and
      // sent in the fingerprints' request.
      const prepared = await prepareChecks(context, binding.id, checks.geometry, { longestRowChars: checks.longestRowChars }, queueChecksProbe(context, binding.id), false);
      await storeDeltaHashes(context, binding.id, slot, hashes, planned?.log ?? null, formats, options.targetRequestBytes, prepared.writes);
    } else await storeRowHashes(context, binding, hashes, formats, options.targetRequestBytes, checks);
  } catch (e) {
    // Only the next refresh's cost depends on them: it reads the table once instead.
    warnings.push(`The data is refreshed, but its row fingerprints could not be stored: ${errorText(e)}`);
  }
  const changedCells = strategy === "delta" && planned ? planned.changes : [];
  const addedRows = strategy === "delta" && planned ? planned.addedRows : [];
  if (changedCells.length > 0 || addedRows.length > 0) {
    // What "Show changes" highlights; only the data's completeness matters past this point.
    if (foreignChangeSheet) warnings.push(`The data is refreshed, but its changes cannot be highlighted: this workbook has a visible sheet named "${changeSheetName(binding.id)}", which the add-in keeps very hidden for them.`);
    else {
      try {
        const kept = await writeChangeRecord(context, binding.id, { rows: total, columns: dataColumns, changed: changedCells, added: addedRows }, options.targetRequestBytes);
        if (!kept) warnings.push("The data is refreshed; so many cells changed that they are not kept for Show changes.");
      } catch (e) {
        warnings.push(`The data is refreshed, but its changes cannot be highlighted: ${errorText(e)}`);
      }
    }
  }
  // The fence already queued leads this last request; none after it.
  lock.fenceEachRequest(false);
  try {
    // The committed marker goes first: if a co-author's write erased it meanwhile, the request fails
    // before clearing the copy, which no live marker names (the next start clears it).
    queueDropMarker(context, binding.id);
    clearBackup();
    await context.sync();
    keepMarkerDropped();
  } catch {
    /* a copy no marker names is never restored from: the next refresh overwrites it */
  }
  return { warnings, delta: outcome.summary, changedCells, addedRows, committed: outcome.stored !== null, binding: outcome.stored ?? undefined };
}

/** The Excel {@link RefreshTarget} for one request context. */
export function excelRefreshTarget(
  context: Excel.RequestContext,
  options: { secrets?: readonly string[]; targetRequestBytes?: number; targetResponseBytes?: number; now?: () => Date; holder?: string; delta?: boolean; lockOwner?: string } = {},
): RefreshTarget {
  return {
    listBindings: () => readBindings(context),
    saveBinding: (b) => saveBinding(context, b, options.secrets ?? []),
    saveStatus: (read, updated) => saveBindingStatus(context, read, updated, options.secrets ?? []),
    write: (binding, table, o) =>
      writeRefresh(context, binding, table, { ...o, targetRequestBytes: options.targetRequestBytes, targetResponseBytes: options.targetResponseBytes, now: options.now, holder: options.holder, delta: options.delta, secrets: options.secrets, lockOwner: options.lockOwner }),
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
  /** Response bytes each read block aims at (default 4 MB). */
  targetResponseBytes?: number;
  /** Who refreshes, named to a second runtime that finds the table locked. */
  holder?: string;
  /** false: never a delta (benchmarks compare against a full rewrite). */
  delta?: boolean;
  /** The owner id of the table's lock when the caller already holds it (see {@link RefreshWriteOptions.lockOwner}). */
  lockOwner?: string;
  /**
   * Issue #35: wait out the co-authoring window and repair the settings writes a co-author's stale copy
   * undid (`settle.ts`) before returning (default true; the add-in's engine settles after handing the
   * report back instead). Nothing to settle outside a document that may be co-authored.
   */
  settle?: boolean;
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
  const report = await refreshOne(target, binding, source, options);
  if (options.settle !== false) await settleSettings(context);
  return report;
}

/** Refreshes every bound table in the workbook (see `refreshAll` in `src/refresh/engine.ts`). */
export async function refreshAllTables(
  context: Excel.RequestContext,
  resolveSource: (binding: Binding) => RefreshSource | null,
  options: TableRefreshOptions = {},
): ReturnType<typeof refreshAll> {
  const reports = await refreshAll(excelRefreshTarget(context, options), resolveSource, options);
  if (options.settle !== false) await settleSettings(context);
  return reports;
}
