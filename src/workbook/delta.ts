/**
 * Delta refresh in Excel (issue #15): write only the changed cells, insert the added rows and delete
 * the removed ones, instead of rewriting a whole table. `src/workbook/refresh.ts` calls
 * {@link tryDeltaWrite} after its checks and the rollback copy; when it answers `applied: false`
 * the full rewrite runs as before (and {@link storeRowHashes} records the new rows afterwards).
 *
 * Where the OLD rows come from (decision, figures in `src/workbook/README.md`): every write stores a
 * 7-character fingerprint per row (`src/refresh/rowHash.ts`) on a very hidden sheet (`ppm_rowhash`,
 * one column per binding, in export order; far over the document-settings budget, hence a sheet).
 * They decide, before anything is read from the table, whether a delta can pay at all: a new row
 * whose fingerprint no old row has must be written. When it can, the table's data columns are read
 * once and the delta is planned from the real cells, so cells the user typed over since the last
 * refresh are written back exactly as a full rewrite would. A refresh where most rows changed reads
 * nothing and rewrites in full (its bytes stay those of an import, issue #10 B13).
 *
 * A delta is not tried (full rewrite instead) when: the table or the new data is empty, a sort or
 * filter is active on the table (the sheet order is not the export order), the table has user
 * columns (their cells would move with the rows, unlike a full rewrite) or a totals row, another
 * table lies below it, the column formats differ, or the planner chooses a full rewrite (cost,
 * order, columns).
 */
import type { Table } from "../table/model";
import type { Binding } from "../refresh/binding";
import type { TableGeometry } from "../refresh/plan";
import {
  changeSpans,
  DEFAULT_COST_MODEL,
  DELTA_MAX_COST_RATIO,
  planDelta,
  type CellChange,
  type DeltaSummary,
  type InsertRun,
  type KeyChoice,
  type RowRun,
} from "../refresh/delta";
import { HashStoreError, packBase, packLogText, rowHashes, shouldCompact, unpack, type HashLogEntry } from "../refresh/rowHash";
import type { CellValue } from "../table/model";
import { planColumns, toValues } from "./cells";
import { loadInBlocks, DEFAULT_TARGET_REQUEST_BYTES } from "./blocks";

export const ROW_HASH_SHEET = "ppm_rowhash";
/** Row 0: binding id; row 1: `{"n": rows, "b": base cells, "l": log cells}`; rows 2…: base cells, then log cells. */
const FIRST_STORE_ROW = 2;

type Cell = string | number | boolean;

export interface DeltaInput {
  lo: Excel.Table;
  sheet: Excel.Worksheet;
  geometry: TableGeometry;
  binding: Binding;
  table: Table;
  /** 1 when the table shows a totals row. */
  totalsRows: number;
  /** The key to match rows by (from `$metadata` or the snapshot kind), or null: position. */
  key: KeyChoice | null;
  /** Filled in while writing, so the caller can undo the row moves after a failure ({@link undoDeltaRows}). */
  shift: DeltaShift;
  /** Queues the "refreshing — DATA INCOMPLETE" marker on the info cell. */
  markInProgress(): void;
  /** Queues the final info line. */
  markComplete(): void;
  targetRequestBytes?: number;
  maxCostRatio?: number;
}

/**
 * How far a delta has moved rows, for {@link undoDeltaRows}. Every row a delta inserts or deletes
 * inside the table also moves the cells under the table (in its columns); once all rows are in,
 * the net move is taken back below the table (`compensated`), so cells under the table end where a
 * full rewrite leaves them (its growth rows were checked empty before anything was written).
 */
export interface DeltaShift {
  /** The first change was queued (before it, nothing needs undoing). */
  started: boolean;
  /** The net move of the cells under the table has been taken back (its own sync succeeded). */
  compensated: boolean;
}

export type DeltaResult =
  | { applied: true; summary: DeltaSummary; changes: CellChange[]; addedRows: number[] }
  | { applied: false; reason: string; counts?: PlannedCounts };

/** Rows matched and counted by a plan that was not written as a delta (the summary still shows them). */
export interface PlannedCounts {
  matchedBy: "key" | "position";
  key: string[] | null;
  matchReason: string;
  added: number;
  changed: number;
  removed: number;
}

interface StoreSlot {
  sheet: Excel.Worksheet;
  column: number;
  /** Stored fingerprints after replaying the log; null when there are none (or they are unreadable). */
  hashes: string[] | null;
  baseCells: number;
  logCells: number;
  logText: string;
  logEntries: number;
  /** Cells of this column in use (to clear leftovers). */
  usedCells: number;
  /** The column formats the last write used (a user's own format on a cell is not a plan change). */
  formats: string[] | null;
  /** Requests spent finding and reading the slot. */
  syncs: number;
}

/**
 * Finds the binding's column on the fingerprint sheet (or a free one), creating the sheet when
 * `create`; reads the stored fingerprints unless `read` is false (a new base replaces them anyway).
 */
async function openStore(context: Excel.RequestContext, bindingId: string, create: boolean, read = true): Promise<StoreSlot | null> {
  let sheet = context.workbook.worksheets.getItemOrNullObject(ROW_HASH_SHEET);
  await context.sync();
  let syncs = 1;
  const slotAt = (column: number, usedCells: number): StoreSlot => ({ sheet, column, hashes: null, baseCells: 0, logCells: 0, logText: "", logEntries: 0, usedCells, formats: null, syncs });
  if (sheet.isNullObject) {
    if (!create) return null;
    sheet = context.workbook.worksheets.add(ROW_HASH_SHEET);
    sheet.visibility = "VeryHidden";
    return slotAt(0, 0);
  }
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load("columnCount,columnIndex,rowCount,rowIndex");
  await context.sync();
  syncs++;
  const width = used.isNullObject ? 0 : used.columnIndex + used.columnCount;
  // Cells a column may hold below its two head rows (an unreadable slot is cleared this far).
  const depth = used.isNullObject ? 0 : Math.max(0, used.rowIndex + used.rowCount - FIRST_STORE_ROW);
  let head: unknown[][] = [[], []];
  if (width > 0) {
    const r = sheet.getRangeByIndexes(0, 0, 2, width);
    r.load("values");
    await context.sync();
    syncs++;
    head = r.values;
  }
  const column = head[0].findIndex((v) => v === bindingId);
  if (column < 0) {
    const free = head[0].findIndex((v) => v === "");
    return create ? slotAt(free < 0 ? width : free, free < 0 ? 0 : depth) : null;
  }
  const empty = slotAt(column, depth);
  if (!read) return empty;
  let meta: { n?: unknown; b?: unknown; l?: unknown; f?: unknown };
  try {
    meta = JSON.parse(String(head[1][column])) as typeof meta;
  } catch {
    return empty;
  }
  const int = (x: unknown) => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : -1);
  const n = int(meta.n), b = int(meta.b), l = int(meta.l);
  if (n < 0 || b < 0 || l < 0) return empty;
  const cells = b + l;
  let values: unknown[][] = [];
  if (cells > 0) {
    values = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(FIRST_STORE_ROW + from, column, count, 1), cells, "values", 32_000);
    syncs++;
  }
  try {
    const u = unpack(values.slice(0, b).map((r) => r[0]), values.slice(b).map((r) => r[0]));
    if (u.hashes.length !== n) return empty;
    const formats = Array.isArray(meta.f) && meta.f.every((x) => typeof x === "string") ? (meta.f) : null;
    return { sheet, column, hashes: u.hashes, baseCells: b, logCells: l, logText: u.text, logEntries: u.log.length, usedCells: Math.max(cells, depth), formats, syncs };
  } catch (e) {
    if (e instanceof HashStoreError) return empty;
    throw e;
  }
}

/** Queues writing a whole new base (and an empty log) into the slot. */
function queueBase(slot: StoreSlot, bindingId: string, hashes: readonly string[], formats: readonly string[]): void {
  const base = packBase(hashes);
  const { sheet, column } = slot;
  sheet.getRangeByIndexes(0, column, 2, 1).values = [[bindingId], [JSON.stringify({ n: hashes.length, b: base.length, l: 0, f: formats })]];
  if (base.length) sheet.getRangeByIndexes(FIRST_STORE_ROW, column, base.length, 1).values = base.map((c) => [c]);
  if (slot.usedCells > base.length) sheet.getRangeByIndexes(FIRST_STORE_ROW + base.length, column, slot.usedCells - base.length, 1).clear("Contents");
}

/** Queues appending one log entry (only the last, partly filled log cell and new ones are written). */
function queueLogEntry(slot: StoreSlot, bindingId: string, rows: number, entry: HashLogEntry, formats: readonly string[]): void {
  const text = (slot.logText ? slot.logText + "\n" : "") + JSON.stringify(entry);
  const cells = packLogText(text);
  const from = Math.max(0, slot.logCells - 1);
  const { sheet, column } = slot;
  sheet.getRangeByIndexes(0, column, 2, 1).values = [[bindingId], [JSON.stringify({ n: rows, b: slot.baseCells, l: cells.length, f: formats })]];
  const part = cells.slice(from);
  if (part.length) sheet.getRangeByIndexes(FIRST_STORE_ROW + slot.baseCells + from, column, part.length, 1).values = part.map((c) => [c]);
}

/**
 * Stores the fingerprints of a table's rows after a full write: 7 characters per row packed 4,000
 * to a cell (≈ 1.4 MB for 200,000 rows, about 6 % of the table's own request bytes).
 */
export async function storeRowHashes(context: Excel.RequestContext, binding: Pick<Binding, "id">, table: Table): Promise<number> {
  const plans = planColumns(table);
  const hashes = rowHashes(toValues(table.rows, plans, 0, table.rows.length));
  const slot = await openStore(context, binding.id, true, false);
  if (!slot) return 0;
  queueBase(slot, binding.id, hashes, plans.map((p) => p.numberFormat));
  await context.sync();
  return slot.syncs + 1;
}

/** Forgets a binding's fingerprints (after a failed delta: the next refresh reads the table once). */
export async function dropRowHashes(context: Excel.RequestContext, bindingId: string): Promise<void> {
  const slot = await openStore(context, bindingId, false);
  if (!slot) return;
  slot.sheet.getRangeByIndexes(0, slot.column, FIRST_STORE_ROW + Math.max(0, slot.usedCells), 1).clear("Contents");
  await context.sync();
}

/**
 * Plans and, when it is clearly cheaper than a full rewrite, writes a delta. Throws only for a
 * failure while writing (the caller marks the table); every other problem answers `applied: false`
 * with the reason and writes nothing.
 */
export async function tryDeltaWrite(context: Excel.RequestContext, d: DeltaInput): Promise<DeltaResult> {
  const { sheet, geometry, table, binding } = d;
  const oldRows = geometry.bodyRows;
  const newRows = table.rows.length;
  if (binding.rowCount === 0 || newRows === 0) return { applied: false, reason: "the old or the new table is empty" };
  if (geometry.userColumns > 0) return { applied: false, reason: "the table has columns of its own to the right, whose cells would move with the rows" };
  // Unknown in Excel how a row inserted just above a totals row joins the body: the stricter choice.
  if (d.totalsRows > 0) return { applied: false, reason: "the table shows a totals row" };
  // Rows inserted or deleted move every cell under the table in its columns, and Excel refuses to
  // move part of another table ("attempting to shift cells in the table").
  const below = await tableBelow(context, sheet, d.lo, geometry);
  if (below) return { applied: false, reason: `the table "${below}" lies below this one in the same columns` };
  d.lo.sort.load("fields");
  d.lo.autoFilter.load("isDataFiltered");
  const bodyRow = geometry.headerRow + 1;
  await context.sync();
  if (d.lo.sort.fields.length > 0) return { applied: false, reason: "a sort is applied to the table, so its rows are not in the export's order" };
  if (d.lo.autoFilter.isDataFiltered) return { applied: false, reason: "a filter hides rows of the table" };
  const plans = planColumns(table);
  const formats = plans.map((p) => p.numberFormat);
  const slot = await openStore(context, binding.id, true);
  // The formats the last write used: stored with the fingerprints, else those of the first row.
  let previousFormats = slot?.formats ?? null;
  if (!previousFormats) {
    const first = sheet.getRangeByIndexes(bodyRow, geometry.firstColumn, 1, geometry.dataColumns);
    first.load("numberFormat");
    await context.sync();
    previousFormats = first.numberFormat[0].map(String);
  }
  if (formats.some((f, i) => previousFormats[i] !== f)) return { applied: false, reason: "the column formats changed" };

  const typed = toValues(table.rows, plans, 0, newRows);
  const newHashes = rowHashes(typed);
  const cols = geometry.dataColumns;
  const maxRatio = d.maxCostRatio ?? DELTA_MAX_COST_RATIO;
  const m = DEFAULT_COST_MODEL;

  // The fingerprints of the last write, when they are there, decide cheaply whether a delta can pay
  // at all, before anything is read from the table. Only then is the table read, once, and the delta
  // planned from its real cells: not trusting the fingerprints for the rows they call unchanged is
  // what makes the result equal a full rewrite even where the user typed over data cells since.
  const fromFingerprints = !!slot?.hashes && slot.hashes.length === oldRows;
  if (fromFingerprints) {
    // A new row whose fingerprint no old row has must be written (changed or added) whatever the
    // match: one cell and one range write at least.
    const left = new Map<string, number>();
    for (const h of slot.hashes!) left.set(h, (left.get(h) ?? 0) + 1);
    let unmatched = 0;
    for (const h of newHashes) {
      const k = left.get(h) ?? 0;
      if (k > 0) left.set(h, k - 1);
      else unmatched++;
    }
    const floor = (unmatched * (m.cell + m.rangeWrite)) / (newRows * cols * m.cell + m.rowOperation);
    if (floor > maxRatio) {
      return { applied: false, reason: `${unmatched.toLocaleString("en-US")} of ${newRows.toLocaleString("en-US")} rows are new or changed: a delta would cost at least ${floor.toFixed(2)}× a full rewrite (limit ${maxRatio})` };
    }
  }
  const values = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, cols), oldRows, "values", 16 * cols);
  const norm = (rows: readonly unknown[][]): CellValue[][] => rows.map((r) => r.map((v) => (v === "" || v === undefined ? null : (v as CellValue))));
  const p = planDelta({ columns: table.columns, rows: norm(values) }, { columns: table.columns, rows: norm(typed) }, d.key, { maxCostRatio: Infinity });
  const planned: PlannedCounts = { matchedBy: p.matchedBy, key: p.key, matchReason: p.matchReason, added: p.counts.added, changed: p.counts.changed, removed: p.counts.removed };
  if (p.strategy === "full") return { applied: false, reason: p.fullReason, counts: planned };
  const removed: RowRun[] = p.removed;
  const inserted: InsertRun[] = p.inserted.map((run) => ({ start: run.start, rows: typed.slice(run.start, run.start + run.rows.length) }));
  const changes: CellChange[] = p.changes.map((c) => ({ ...c, value: typed[c.row][c.column] }));
  const matchedBy = p.matchedBy;
  const usedKey = p.key;
  const matchReason = p.matchReason;
  const changedRows = p.counts.changed;

  // --- cost: the planner's model with the real cells ---
  const spans = changeSpans(changes);
  const insertedRows = inserted.reduce((n, r) => n + r.rows.length, 0);
  const removedRows = removed.reduce((n, r) => n + r.count, 0);
  const cellsWritten = changes.length + insertedRows * cols;
  const deltaCost = cellsWritten * m.cell + (spans.length + inserted.length) * m.rangeWrite + (removed.length + inserted.length) * m.rowOperation;
  const fullCost = newRows * cols * m.cell + m.rowOperation;
  if (deltaCost / fullCost > maxRatio) return { applied: false, reason: `a delta would cost ${(deltaCost / fullCost).toFixed(2)}× a full rewrite (limit ${maxRatio})`, counts: planned };
  if (removedRows >= oldRows) return { applied: false, reason: "every old row is removed", counts: planned };

  // Cells under the table: the caller checked before anything was written that the rows a growth
  // takes are empty (as for a full rewrite); the net move is taken back below (DeltaShift).
  const afterRemoval = oldRows - removedRows;

  // --- write: removed rows bottom-up, inserted rows top-down, then the changed cells ---
  // Ranges hang off the sheet by name: the shortest object path per operation (bytes on the web).
  const ws = await namedSheet(context, sheet);
  const target = d.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES;
  let pending = 0;
  const flush = async (bytes: number) => {
    pending += bytes;
    if (pending >= target) {
      pending = 0;
      await context.sync();
    }
  };
  d.shift.started = true;
  d.markInProgress();
  const width = geometry.dataColumns + geometry.userColumns;
  for (let i = removed.length - 1; i >= 0; i--) {
    const run = removed[i];
    ws.getRangeByIndexes(bodyRow + run.start, geometry.firstColumn, run.count, width).delete("Up");
    await flush(300);
  }
  let body = afterRemoval;
  for (const run of inserted) {
    const n = run.rows.length;
    const rect = ws.getRangeByIndexes(bodyRow + run.start, geometry.firstColumn, n, width);
    rect.insert("Down");
    // Inserted inside the body the rows join the table; appended just below it they join by the
    // resize, before any value is written there (values next to a table make it grow, B2).
    if (run.start >= body) d.lo.resize(ws.getRangeByIndexes(geometry.headerRow, geometry.firstColumn, 1 + run.start + n, width));
    body += n;
    rect.numberFormat = run.rows.map(() => formats);
    rect.values = run.rows as Cell[][];
    await flush(n * cols * 24 + 400);
  }
  // The net move of the cells under the table, taken back in a request of its own (see DeltaShift).
  await context.sync();
  pending = 0;
  const net = insertedRows - removedRows;
  if (net > 0) ws.getRangeByIndexes(bodyRow + newRows, geometry.firstColumn, net, width).delete("Up");
  else if (net < 0) ws.getRangeByIndexes(bodyRow + newRows, geometry.firstColumn, -net, width).insert("Down");
  if (net !== 0) await context.sync();
  d.shift.compensated = true;
  for (const sp of spans) {
    ws.getRangeByIndexes(bodyRow + sp.row, geometry.firstColumn + sp.column, 1, sp.values.length).values = [sp.values as Cell[]];
    await flush(sp.values.length * 16 + 200);
  }
  if (slot) {
    const entry: HashLogEntry = {
      d: removed.map((r) => [r.start, r.count]),
      i: inserted.map((r) => [r.start, newHashes.slice(r.start, r.start + r.rows.length).join("")]),
      c: [...new Set(changes.map((c) => c.row))].map((r) => [r, newHashes[r]]),
    };
    if (!fromFingerprints || shouldCompact(newRows, slot.logText.length + JSON.stringify(entry).length, slot.logEntries + 1)) queueBase(slot, binding.id, newHashes, formats);
    else queueLogEntry(slot, binding.id, newRows, entry, formats);
  }
  d.markComplete();
  await context.sync();
  return {
    applied: true,
    changes,
    addedRows: inserted.flatMap((r) => r.rows.map((_, i) => r.start + i)),
    summary: { strategy: "delta", matchedBy, key: usedKey, reason: matchReason, added: insertedRows, changed: changedRows, removed: removedRows, cellsWritten },
  };
}

/** The sheet addressed by name: the shortest object path for the many small range operations of a delta. */
async function namedSheet(context: Excel.RequestContext, sheet: Excel.Worksheet): Promise<Excel.Worksheet> {
  sheet.load("name");
  await context.sync();
  return context.workbook.worksheets.getItem(sheet.name);
}

/** The first other table on the sheet that lies below this one and overlaps its columns, or null. */
async function tableBelow(context: Excel.RequestContext, sheet: Excel.Worksheet, lo: Excel.Table, geometry: TableGeometry): Promise<string | null> {
  lo.load("name");
  const tables = sheet.tables;
  tables.load("items/name");
  await context.sync();
  const others = tables.items.filter((t) => t.name !== lo.name).map((t) => {
    const r = t.getRange();
    r.load("rowIndex,columnIndex,columnCount");
    return { name: t.name, r };
  });
  if (others.length === 0) return null;
  await context.sync();
  const c0 = geometry.firstColumn;
  const c1 = geometry.firstColumn + geometry.dataColumns + geometry.userColumns - 1;
  const hit = others.find(({ r }) => r.rowIndex > geometry.headerRow && r.columnIndex <= c1 && r.columnIndex + r.columnCount - 1 >= c0);
  return hit ? hit.name : null;
}

/**
 * After a delta failed half way: gives the table its old number of body rows back (rows deleted or
 * inserted at its end) and moves the cells under it back where they were, so the caller can copy
 * the old rows back from the rollback copy to the same address. Tables with a totals row or columns
 * of their own never get a delta, so the body is the whole table below the header.
 */
export async function undoDeltaRows(context: Excel.RequestContext, lo: Excel.Table, sheet: Excel.Worksheet, geometry: TableGeometry, shift: DeltaShift): Promise<void> {
  const whole = lo.getRange();
  whole.load("rowCount");
  await context.sync();
  const current = whole.rowCount - 1;
  const old = geometry.bodyRows;
  const bodyRow = geometry.headerRow + 1;
  const width = geometry.dataColumns + geometry.userColumns;
  // How far the cells under the table have moved so far.
  let displaced = shift.compensated ? 0 : current - old;
  if (current > old) {
    sheet.getRangeByIndexes(bodyRow + old, geometry.firstColumn, current - old, width).delete("Up");
    displaced -= current - old;
  } else if (current < old) {
    // Inserted at the last body row, the rows join the table.
    sheet.getRangeByIndexes(bodyRow + current - 1, geometry.firstColumn, old - current, width).insert("Down");
    displaced += old - current;
  }
  if (displaced > 0) sheet.getRangeByIndexes(bodyRow + old, geometry.firstColumn, displaced, width).delete("Up");
  else if (displaced < 0) sheet.getRangeByIndexes(bodyRow + old, geometry.firstColumn, -displaced, width).insert("Down");
  await context.sync();
}
