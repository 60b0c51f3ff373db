/**
 * Delta refresh in Excel (issue #15): write only the changed cells, insert the added rows and delete
 * the removed ones, instead of rewriting a whole table. `src/workbook/refresh.ts` calls
 * {@link tryDeltaWrite} after its checks; when it answers `applied: false` the full rewrite runs as
 * before (and {@link queueRowHashes} records the new rows afterwards).
 *
 * Where the OLD rows come from (decision, figures in `src/workbook/README.md`): not from reading the
 * table back (on Excel on the web that moves as many bytes as the table, issue #10 B13), but from a
 * 14-character fingerprint per row (`src/refresh/rowHash.ts`) kept on a very hidden sheet
 * (`ppm_rowhash`, one column per binding, in export order): ≈ 3 MB of cells for 200,000 rows, far
 * over the document-settings budget, hence a sheet. Only the rows the fingerprints mark as changed
 * or removed are read back (to find the exact cells, and to check that the rows are still where the
 * last refresh left them), plus a small sample of unchanged rows for the same check. Without
 * fingerprints (a table imported before this existed, or after a failed delta) the table is read
 * once and the delta planned from its values.
 *
 * A delta is not tried (full rewrite instead) when: the table or the new data is empty, a sort or
 * filter is active on the table (the sheet order is not the export order), the table has user
 * columns (their cells would move with the rows, unlike a full rewrite), the column formats differ,
 * the planner chooses a full rewrite (cost, order, columns), or the check finds rows out of place.
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
  type TableRows,
} from "../refresh/delta";
import { HashStoreError, packBase, packLogText, rowHash, rowHashes, shouldCompact, unpack, type HashLogEntry } from "../refresh/rowHash";
import type { CellValue, Column } from "../table/model";
import { planColumns, toValues } from "./cells";
import { loadInBlocks, DEFAULT_TARGET_REQUEST_BYTES } from "./blocks";
import { findOccupiedCell } from "./sheet";

export const ROW_HASH_SHEET = "ppm_rowhash";
/** Row 0: binding id; row 1: `{"n": rows, "b": base cells, "l": log cells}`; rows 2…: base cells, then log cells. */
const FIRST_STORE_ROW = 2;
/** Unchanged rows read back to check the table is still in export order (a sort cleared later, an edit). */
export const SAMPLE_ROWS = 16;

type Cell = string | number | boolean;

export interface DeltaInput {
  lo: Excel.Table;
  sheet: Excel.Worksheet;
  geometry: TableGeometry;
  binding: Binding;
  table: Table;
  /** The key to match rows by (from `$metadata` or the snapshot kind), or null: position. */
  key: KeyChoice | null;
  /** Queues the "refreshing — DATA INCOMPLETE" marker on the info cell. */
  markInProgress(): void;
  /** Queues the final info line. */
  markComplete(): void;
  targetRequestBytes?: number;
  maxCostRatio?: number;
}

export type DeltaResult =
  | { applied: true; summary: DeltaSummary; changes: CellChange[] }
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
}

/** Finds the binding's column on the fingerprint sheet (or a free one), creating the sheet when `create`. */
async function openStore(context: Excel.RequestContext, bindingId: string, create: boolean): Promise<StoreSlot | null> {
  let sheet = context.workbook.worksheets.getItemOrNullObject(ROW_HASH_SHEET);
  await context.sync();
  if (sheet.isNullObject) {
    if (!create) return null;
    sheet = context.workbook.worksheets.add(ROW_HASH_SHEET);
    sheet.visibility = "VeryHidden";
    return { sheet, column: 0, hashes: null, baseCells: 0, logCells: 0, logText: "", logEntries: 0, usedCells: 0, formats: null };
  }
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load("columnCount,columnIndex");
  await context.sync();
  const width = used.isNullObject ? 0 : used.columnIndex + used.columnCount;
  let head: unknown[][] = [[], []];
  if (width > 0) {
    const r = sheet.getRangeByIndexes(0, 0, 2, width);
    r.load("values");
    await context.sync();
    head = r.values;
  }
  const column = head[0].findIndex((v) => v === bindingId);
  if (column < 0) {
    const free = head[0].findIndex((v) => v === "");
    return create ? { sheet, column: free < 0 ? width : free, hashes: null, baseCells: 0, logCells: 0, logText: "", logEntries: 0, usedCells: 0, formats: null } : null;
  }
  const empty: StoreSlot = { sheet, column, hashes: null, baseCells: 0, logCells: 0, logText: "", logEntries: 0, usedCells: 0, formats: null };
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
  }
  try {
    const u = unpack(values.slice(0, b).map((r) => r[0]), values.slice(b).map((r) => r[0]));
    if (u.hashes.length !== n) return { ...empty, usedCells: cells };
    const formats = Array.isArray(meta.f) && meta.f.every((x) => typeof x === "string") ? (meta.f as string[]) : null;
    return { sheet, column, hashes: u.hashes, baseCells: b, logCells: l, logText: u.text, logEntries: u.log.length, usedCells: cells, formats };
  } catch (e) {
    if (e instanceof HashStoreError) return { ...empty, usedCells: cells };
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
export async function storeRowHashes(context: Excel.RequestContext, binding: Binding, table: Table): Promise<void> {
  const plans = planColumns(table);
  const hashes = rowHashes(toValues(table.rows, plans, 0, table.rows.length));
  const slot = await openStore(context, binding.id, true);
  if (!slot) return;
  queueBase(slot, binding.id, hashes, plans.map((p) => p.numberFormat));
  await context.sync();
}

/** Forgets a binding's fingerprints (after a failed delta: the next refresh reads the table once). */
export async function dropRowHashes(context: Excel.RequestContext, bindingId: string): Promise<void> {
  const slot = await openStore(context, bindingId, false);
  if (!slot) return;
  slot.sheet.getRangeByIndexes(0, slot.column, FIRST_STORE_ROW + Math.max(0, slot.usedCells), 1).clear("Contents");
  await context.sync();
}

const same = (a: unknown, b: unknown) => a === b || ((a === null || a === undefined || a === "") && (b === null || b === undefined || b === ""));

function rowsOf(runs: ReadonlyArray<{ start: number; count: number }>): number[] {
  const out: number[] = [];
  for (const r of runs) for (let i = 0; i < r.count; i++) out.push(r.start + i);
  return out;
}

function runsOfSorted(indexes: readonly number[]): RowRun[] {
  const runs: RowRun[] = [];
  for (const x of indexes) {
    const last = runs[runs.length - 1];
    if (last && last.start + last.count === x) last.count++;
    else runs.push({ start: x, count: 1 });
  }
  return runs;
}

/** Reads the given old body rows (0-based) of the data columns, one range per run, in request-sized batches. */
async function readRows(context: Excel.RequestContext, sheet: Excel.Worksheet, geometry: TableGeometry, rows: readonly number[]): Promise<Map<number, unknown[]>> {
  const out = new Map<number, unknown[]>();
  const runs = runsOfSorted([...new Set(rows)].sort((a, b) => a - b));
  const bodyRow = geometry.headerRow + 1;
  const batch = 500;
  for (let i = 0; i < runs.length; i += batch) {
    const ranges = runs.slice(i, i + batch).map((run) => {
      const r = sheet.getRangeByIndexes(bodyRow + run.start, geometry.firstColumn, run.count, geometry.dataColumns);
      r.load("values");
      return { run, r };
    });
    await context.sync();
    for (const { run, r } of ranges) r.values.forEach((v, j) => out.set(run.start + j, v));
  }
  return out;
}

const HASH_COLUMN = "\u0000fingerprint";

/** Key column lists of the choice whose columns are all in the table (the planner checks uniqueness). */
function usableCandidates(columns: readonly Column[], key: KeyChoice | null): string[][] {
  if (!key) return [];
  return key.candidates.filter((c) => c.length > 0 && c.every((n) => columns.some((col) => col.name === n)));
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
  if (formats.some((f, i) => previousFormats![i] !== f)) return { applied: false, reason: "the column formats changed" };

  const typed = toValues(table.rows, plans, 0, newRows);
  const newHashes = rowHashes(typed);
  const cols = geometry.dataColumns;
  const maxRatio = d.maxCostRatio ?? DELTA_MAX_COST_RATIO;
  const m = DEFAULT_COST_MODEL;

  let removed: RowRun[];
  let inserted: InsertRun[];
  let changes: CellChange[];
  let matchedBy: "key" | "position";
  let matchReason: string;
  let usedKey: string[] | null;
  let changedRows: number;
  let fromFingerprints = false;
  let planned: PlannedCounts | undefined;

  if (slot && slot.hashes && slot.hashes.length === oldRows) {
    const oldHashes = slot.hashes;
    // The key columns come from the table itself (a few bytes per row); the rest from the fingerprints.
    const candidates = usableCandidates(table.columns, d.key);
    const keyNames = [...new Set(candidates.flat())];
    const keyIdx = keyNames.map((n) => table.columns.findIndex((c) => c.name === n));
    const keyValues: unknown[][] = [];
    for (const i of keyIdx) {
      const col = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn + i, count, 1), oldRows, "values", 24);
      keyValues.push(col.map((r) => r[0]));
    }
    const planCols: Column[] = [...keyIdx.map((i) => table.columns[i]), { name: HASH_COLUMN, type: "text" }];
    const norm = (v: unknown): CellValue => (v === "" || v === undefined ? null : (v as CellValue));
    const oldT: TableRows = { columns: planCols, rows: oldHashes.map((h, r) => [...keyValues.map((c) => norm(c[r])), h]) };
    const newT: TableRows = { columns: planCols, rows: newHashes.map((h, r) => [...keyIdx.map((i) => norm(typed[r][i])), h]) };
    const hp = planDelta(oldT, newT, d.key ? { ...d.key, candidates } : null, { maxCostRatio: Infinity });
    const hpCounts: PlannedCounts = { matchedBy: hp.matchedBy, key: hp.key, matchReason: hp.matchReason.replace(`; ${HASH_COLUMN}`, ""), added: hp.counts.added, changed: hp.counts.changed, removed: hp.counts.removed };
    planned = hpCounts;
    if (hp.strategy === "full") return { applied: false, reason: hp.fullReason, counts: hpCounts };
    const changedPairs = new Map<number, number>();
    for (const c of hp.changes) changedPairs.set(c.row, c.oldRow);
    // Before reading rows back: even one cell per changed row may already cost too much.
    const ins = hp.inserted.reduce((n, r) => n + r.rows.length, 0);
    const least = changedPairs.size * (m.cell + m.rangeWrite) + ins * cols * m.cell + hp.inserted.length * (m.rangeWrite + m.rowOperation) + hp.removed.length * m.rowOperation;
    const leastRatio = least / (newRows * cols * m.cell + m.rowOperation);
    if (leastRatio > maxRatio) return { applied: false, reason: `a delta would cost at least ${leastRatio.toFixed(2)}× a full rewrite (limit ${maxRatio})`, counts: hpCounts };
    // Changed rows are read back (for the exact cells) and checked against their fingerprints. Matched
    // by key, a table that was sorted (or edited) since shows up as changed or reordered rows anyway;
    // matched by position, a few unchanged rows spread over the table are checked too.
    const sample: number[] = [];
    if (hp.matchedBy === "position") for (let i = 0; i < SAMPLE_ROWS; i++) sample.push(Math.floor(((i + 0.5) * oldRows) / SAMPLE_ROWS));
    const old = await readRows(context, await namedSheet(context, sheet), geometry, [...changedPairs.values(), ...sample]);
    for (const [r, values] of old) {
      if (rowHash(values) !== oldHashes[r]) {
        return { applied: false, reason: `row ${r + 1} of the table is not the row the last refresh wrote there (sorted, moved or edited since)` };
      }
    }
    changes = [];
    for (const [row, oldRow] of [...changedPairs].sort((a, b) => a[0] - b[0])) {
      const before = old.get(oldRow)!;
      const after = typed[row];
      for (let c = 0; c < cols; c++) if (!same(before[c], after[c])) changes.push({ row, oldRow, column: c, value: after[c] });
    }
    removed = hp.removed;
    inserted = hp.inserted.map((run) => ({ start: run.start, rows: typed.slice(run.start, run.start + run.rows.length) }));
    matchedBy = hp.matchedBy;
    usedKey = hp.key;
    matchReason = hp.matchReason.replace(`; ${HASH_COLUMN}`, "");
    changedRows = new Set(changes.map((c) => c.row)).size;
    fromFingerprints = true;
  } else {
    // No usable fingerprints (imported before they existed, or dropped after a failure): read the table once.
    const values = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, cols), oldRows, "values", 16 * cols);
    const norm = (rows: readonly unknown[][]): CellValue[][] => rows.map((r) => r.map((v) => (v === "" || v === undefined ? null : (v as CellValue))));
    const p = planDelta({ columns: table.columns, rows: norm(values) }, { columns: table.columns, rows: norm(typed) }, d.key, { maxCostRatio: Infinity });
    planned = { matchedBy: p.matchedBy, key: p.key, matchReason: p.matchReason, added: p.counts.added, changed: p.counts.changed, removed: p.counts.removed };
    if (p.strategy === "full") return { applied: false, reason: p.fullReason, counts: planned };
    removed = p.removed;
    inserted = p.inserted.map((run) => ({ start: run.start, rows: typed.slice(run.start, run.start + run.rows.length) }));
    changes = p.changes.map((c) => ({ ...c, value: typed[c.row][c.column] }));
    matchedBy = p.matchedBy;
    usedKey = p.key;
    matchReason = p.matchReason;
    changedRows = p.counts.changed;
  }

  // --- cost: the planner's model with the real cells ---
  const spans = changeSpans(changes);
  const insertedRows = inserted.reduce((n, r) => n + r.rows.length, 0);
  const removedRows = removed.reduce((n, r) => n + r.count, 0);
  const cellsWritten = changes.length + insertedRows * cols;
  const deltaCost = cellsWritten * m.cell + (spans.length + inserted.length) * m.rangeWrite + (removed.length + inserted.length) * m.rowOperation;
  const fullCost = newRows * cols * m.cell + m.rowOperation;
  if (deltaCost / fullCost > maxRatio) return { applied: false, reason: `a delta would cost ${(deltaCost / fullCost).toFixed(2)}× a full rewrite (limit ${maxRatio})`, counts: planned };
  if (removedRows >= oldRows) return { applied: false, reason: "every old row is removed", counts: planned };

  // Rows appended below the last kept row grow the table into the cells under it: they must be empty.
  const afterRemoval = oldRows - removedRows;
  let appendFrom = newRows;
  {
    let body = afterRemoval;
    for (const run of inserted) {
      if (run.start >= body) appendFrom = Math.min(appendFrom, run.start);
      body += run.rows.length;
    }
  }
  const appended = newRows - appendFrom;
  if (appended > 0) {
    // Deleting and inserting rows shifts the cells under the table with it, so the rows an append
    // grows into are, before anything moves, the first `appended` rows under the table.
    const occupied = await findOccupiedCell(context, sheet, { row: bodyRow + oldRows, column: geometry.firstColumn, rowCount: appended, columnCount: cols });
    if (occupied) return { applied: false, reason: `the cells under the table are not empty (${occupied})`, counts: planned };
  }

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
    if (run.start < body) rect.insert("Down");
    else d.lo.resize(ws.getRangeByIndexes(geometry.headerRow, geometry.firstColumn, 1 + run.start + n, width));
    body += n;
    rect.numberFormat = run.rows.map(() => formats);
    rect.values = run.rows as Cell[][];
    await flush(n * cols * 24 + 400);
  }
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
    summary: { strategy: "delta", matchedBy, key: usedKey, reason: matchReason, added: insertedRows, changed: changedRows, removed: removedRows, cellsWritten },
  };
}

/** The sheet addressed by name: the shortest object path for the many small range operations of a delta. */
async function namedSheet(context: Excel.RequestContext, sheet: Excel.Worksheet): Promise<Excel.Worksheet> {
  sheet.load("name");
  await context.sync();
  return context.workbook.worksheets.getItem(sheet.name);
}
