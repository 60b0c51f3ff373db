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
import { hashKeyColumns, isRowHash, rowHashes } from "../refresh/rowHash";
import type { CellValue, Column } from "../table/model";
import { planColumns, toValues } from "./cells";
import { loadInBlocks, DEFAULT_TARGET_REQUEST_BYTES } from "./blocks";
import { findOccupiedCell } from "./sheet";

export const ROW_HASH_SHEET = "ppm_rowhash";
/** Row 0: binding id; row 1: `{"k": key columns | null, "n": rows}`; rows 2…: one fingerprint per row. */
const FIRST_HASH_ROW = 2;
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
  | { applied: false; reason: string };

interface HashColumn {
  sheet: Excel.Worksheet;
  column: number;
  keyColumns: string[] | null;
  rows: number;
  exists: boolean;
}

/** Finds (or picks a free column for) the binding's fingerprints; creates the sheet when `create`. */
async function hashColumn(context: Excel.RequestContext, bindingId: string, create: boolean): Promise<HashColumn | null> {
  let sheet = context.workbook.worksheets.getItemOrNullObject(ROW_HASH_SHEET);
  await context.sync();
  if (sheet.isNullObject) {
    if (!create) return null;
    sheet = context.workbook.worksheets.add(ROW_HASH_SHEET);
    sheet.visibility = "VeryHidden";
    return { sheet, column: 0, keyColumns: null, rows: 0, exists: false };
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
    if (!create) return null;
    const free = head[0].findIndex((v) => v === "");
    return { sheet, column: free < 0 ? width : free, keyColumns: null, rows: 0, exists: false };
  }
  try {
    const meta = JSON.parse(String(head[1][column])) as { k?: unknown; n?: unknown };
    const k = Array.isArray(meta.k) && meta.k.every((x) => typeof x === "string") ? (meta.k as string[]) : null;
    const n = typeof meta.n === "number" && Number.isInteger(meta.n) && meta.n >= 0 ? meta.n : -1;
    return { sheet, column, keyColumns: k, rows: n, exists: n >= 0 };
  } catch {
    return { sheet, column, keyColumns: null, rows: -1, exists: false };
  }
}

function hashHeader(bindingId: string, keyColumns: string[] | null, rows: number): string[][] {
  return [[bindingId], [JSON.stringify({ k: keyColumns, n: rows })]];
}

/**
 * Stores the fingerprints of a table's rows for a binding after a full write (own syncs, in
 * request-sized blocks): ≈ 17 bytes per row, 1/12 to 1/6 of the table's own bytes.
 */
export async function storeRowHashes(context: Excel.RequestContext, binding: Binding, table: Table, key: KeyChoice | null, targetRequestBytes = DEFAULT_TARGET_REQUEST_BYTES): Promise<void> {
  const plans = planColumns(table);
  const typed = toValues(table.rows, plans, 0, table.rows.length);
  const keyColumns = key ? hashKeyColumns(table.columns, key.candidates) : null;
  const hashes = rowHashes(table.columns, typed, keyColumns);
  const at = await hashColumn(context, binding.id, true);
  if (at) await writeHashColumn(context, at, binding.id, keyColumns, hashes, targetRequestBytes);
}

async function writeHashColumn(context: Excel.RequestContext, at: HashColumn, bindingId: string, keyColumns: string[] | null, hashes: string[], targetRequestBytes: number): Promise<void> {
  // Rows left over from a longer table; `rows` is -1 when the header was unreadable (clear a generous tail).
  const stale = at.rows < 0 ? 0 : at.rows;
  if (stale > hashes.length) at.sheet.getRangeByIndexes(FIRST_HASH_ROW + hashes.length, at.column, stale - hashes.length, 1).clear("Contents");
  at.sheet.getRangeByIndexes(0, at.column, 2, 1).values = hashHeader(bindingId, keyColumns, hashes.length);
  // 14 characters + quotes and a comma per row: ≈ 200,000 rows per 4 MB request.
  const perBlock = Math.max(1, Math.floor(targetRequestBytes / 20));
  for (let from = 0; from < hashes.length; from += perBlock) {
    const part = hashes.slice(from, from + perBlock).map((h) => [h]);
    at.sheet.getRangeByIndexes(FIRST_HASH_ROW + from, at.column, part.length, 1).values = part;
    await context.sync();
  }
  await context.sync();
}

/** Forgets a binding's fingerprints (after a failed delta: the next refresh reads the table once). */
export async function dropRowHashes(context: Excel.RequestContext, bindingId: string): Promise<void> {
  const at = await hashColumn(context, bindingId, false);
  if (!at) return;
  at.sheet.getRangeByIndexes(0, at.column, FIRST_HASH_ROW + Math.max(0, at.rows), 1).clear("Contents");
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

const HASH_COLUMNS: Column[] = [{ name: "k", type: "text" }, { name: "h", type: "text" }];

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
  const firstFormats = sheet.getRangeByIndexes(bodyRow, geometry.firstColumn, 1, geometry.dataColumns);
  firstFormats.load("numberFormat");
  await context.sync();
  if (d.lo.sort.fields.length > 0) return { applied: false, reason: "a sort is applied to the table, so its rows are not in the export's order" };
  if (d.lo.autoFilter.isDataFiltered) return { applied: false, reason: "a filter hides rows of the table" };
  const plans = planColumns(table);
  const formats = plans.map((p) => p.numberFormat);
  if (formats.some((f, i) => String(firstFormats.numberFormat[0][i]) !== f)) return { applied: false, reason: "the column formats changed" };

  const typed = toValues(table.rows, plans, 0, newRows);
  const keyColumns = d.key ? hashKeyColumns(table.columns, d.key.candidates) : null;
  const newHashes = rowHashes(table.columns, typed, keyColumns);
  const stored = await hashColumn(context, binding.id, false);
  const cols = geometry.dataColumns;

  let removed: RowRun[];
  let inserted: InsertRun[];
  let changes: CellChange[];
  let matchedBy: "key" | "position";
  let matchReason: string;
  let usedKey: string[] | null;
  let changedRows: number;
  let hashesValid = false;

  if (stored && stored.exists && stored.rows === oldRows && JSON.stringify(stored.keyColumns) === JSON.stringify(keyColumns)) {
    const hashes = await loadInBlocks(context, (from, count) => stored.sheet.getRangeByIndexes(FIRST_HASH_ROW + from, stored.column, count, 1), oldRows, "values", 20);
    const oldHashes = hashes.map((r) => r[0]);
    if (!oldHashes.every(isRowHash)) return { applied: false, reason: "the stored row fingerprints are damaged" };
    const split = (h: string): CellValue[] => [h.slice(1, 6), h.slice(6)];
    const hp = planDelta(
      { columns: HASH_COLUMNS, rows: (oldHashes as string[]).map(split) },
      { columns: HASH_COLUMNS, rows: newHashes.map(split) },
      keyColumns ? { candidates: [["k"]], origin: d.key?.origin ?? "none", reason: d.key?.reason ?? "" } : null,
      { maxCostRatio: Infinity },
    );
    if (hp.strategy === "full") return { applied: false, reason: hp.fullReason };
    const changedPairs = new Map<number, number>();
    for (const c of hp.changes) changedPairs.set(c.row, c.oldRow);
    // Check rows that will be read anyway, plus a few unchanged ones spread over the table.
    const sample: number[] = [];
    const kept = new Set<number>();
    for (let i = 0; i < SAMPLE_ROWS; i++) sample.push(Math.floor(((i + 0.5) * oldRows) / SAMPLE_ROWS));
    const toRead = [...changedPairs.values(), ...rowsOf(hp.removed), ...sample];
    for (const s of sample) kept.add(s);
    const old = await readRows(context, sheet, geometry, toRead);
    const readRowsList = [...old.keys()];
    const rehashed = rowHashes(table.columns, readRowsList.map((r) => old.get(r) as Cell[]), keyColumns);
    for (let i = 0; i < readRowsList.length; i++) {
      if (rehashed[i] !== oldHashes[readRowsList[i]]) {
        return { applied: false, reason: `row ${readRowsList[i] + 1} of the table is not the row the last refresh wrote there (sorted, moved or edited since)` };
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
    usedKey = hp.matchedBy === "key" ? keyColumns : null;
    matchReason = hp.matchedBy === "key" ? `matched by key (${(keyColumns ?? []).join(", ")}): ${d.key?.reason ?? ""}` : hp.matchReason.replace(/\(k\)/g, `(${(keyColumns ?? []).join(", ")})`);
    changedRows = new Set(changes.map((c) => c.row)).size;
    hashesValid = true;
  } else {
    // No usable fingerprints: read the table once and plan from its values.
    const values = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(bodyRow + from, geometry.firstColumn, count, cols), oldRows, "values", 16 * cols);
    const norm = (rows: readonly unknown[][]): CellValue[][] => rows.map((r) => r.map((v) => (v === "" || v === undefined ? null : (v as CellValue))));
    const oldT: TableRows = { columns: table.columns, rows: norm(values) };
    const newT: TableRows = { columns: table.columns, rows: norm(typed) };
    const p = planDelta(oldT, newT, d.key, { maxCostRatio: Infinity });
    if (p.strategy === "full") return { applied: false, reason: p.fullReason };
    removed = p.removed;
    inserted = p.inserted.map((run) => ({ start: run.start, rows: typed.slice(run.start, run.start + run.rows.length) }));
    changes = p.changes.map((c) => ({ ...c, value: typed[c.row][c.column] }));
    matchedBy = p.matchedBy;
    usedKey = p.key;
    matchReason = p.matchReason;
    changedRows = p.counts.changed;
  }

  // --- cost: the same model as the planner, with the real cells ---
  const spans = changeSpans(changes);
  const insertedRows = inserted.reduce((n, r) => n + r.rows.length, 0);
  const removedRows = removed.reduce((n, r) => n + r.count, 0);
  const m = DEFAULT_COST_MODEL;
  const cellsWritten = changes.length + insertedRows * cols;
  const deltaCost = cellsWritten * m.cell + (spans.length + inserted.length) * m.rangeWrite + (removed.length + inserted.length) * m.rowOperation;
  const fullCost = newRows * cols * m.cell + m.rowOperation;
  const maxRatio = d.maxCostRatio ?? DELTA_MAX_COST_RATIO;
  if (deltaCost / fullCost > maxRatio) return { applied: false, reason: `a delta would cost ${(deltaCost / fullCost).toFixed(2)}× a full rewrite (limit ${maxRatio})` };
  if (removedRows >= oldRows) return { applied: false, reason: "every old row is removed" };

  // Rows appended below the last kept row grow the table into the cells under it: they must be empty.
  const afterRemoval = oldRows - removedRows;
  let appendFrom = newRows; // first new index that lies past the rows already in the table
  {
    let body = afterRemoval;
    for (const run of inserted) {
      if (run.start >= body) { appendFrom = Math.min(appendFrom, run.start); }
      body += run.rows.length;
    }
  }
  const appended = newRows - appendFrom;
  if (appended > 0) {
    // Deleting and inserting rows shifts the cells under the table with it, so the rows an append
    // grows into are, before anything moves, the first `appended` rows under the table.
    const occupied = await findOccupiedCell(context, sheet, { row: bodyRow + oldRows, column: geometry.firstColumn, rowCount: appended, columnCount: cols });
    if (occupied) return { applied: false, reason: `the cells under the table are not empty (${occupied})` };
  }

  // --- write: removed rows bottom-up, inserted rows top-down, then the changed cells ---
  const found = await hashColumn(context, binding.id, true);
  // Mirrored row operations keep valid fingerprints in step; otherwise they are written whole at the end.
  const hashAt = found && hashesValid ? found : null;
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
    sheet.getRangeByIndexes(bodyRow + run.start, geometry.firstColumn, run.count, width).delete("Up");
    hashAt?.sheet.getRangeByIndexes(FIRST_HASH_ROW + run.start, hashAt.column, run.count, 1).delete("Up");
    await flush(200);
  }
  let body = afterRemoval;
  for (const run of inserted) {
    const n = run.rows.length;
    const rect = sheet.getRangeByIndexes(bodyRow + run.start, geometry.firstColumn, n, width);
    if (run.start < body) rect.insert("Down");
    else d.lo.resize(sheet.getRangeByIndexes(geometry.headerRow, geometry.firstColumn, 1 + run.start + n, width));
    body += n;
    rect.numberFormat = run.rows.map(() => formats);
    rect.values = run.rows as Cell[][];
    if (hashAt) {
      const h = hashAt.sheet.getRangeByIndexes(FIRST_HASH_ROW + run.start, hashAt.column, n, 1);
      h.insert("Down");
      h.values = newHashes.slice(run.start, run.start + n).map((x) => [x]);
    }
    await flush(n * cols * 16 + 200);
  }
  for (const s of spans) {
    sheet.getRangeByIndexes(bodyRow + s.row, geometry.firstColumn + s.column, 1, s.values.length).values = [s.values as Cell[]];
    await flush(s.values.length * 16 + 120);
  }
  if (hashAt) {
    const changedNew = [...new Set(changes.map((c) => c.row))];
    for (const r of changedNew) hashAt.sheet.getRangeByIndexes(FIRST_HASH_ROW + r, hashAt.column, 1, 1).values = [[newHashes[r]]];
    hashAt.sheet.getRangeByIndexes(0, hashAt.column, 2, 1).values = hashHeader(binding.id, keyColumns, newRows);
  } else if (found) {
    // Planned from the table's values: the fingerprints are written whole, after the table's own writes.
    await context.sync();
    await writeHashColumn(context, found, binding.id, keyColumns, newHashes, target);
  }
  d.markComplete();
  await context.sync();
  return {
    applied: true,
    changes,
    summary: {
      strategy: "delta",
      matchedBy,
      key: usedKey,
      reason: matchReason,
      added: insertedRows,
      changed: changedRows,
      removed: removedRows,
      cellsWritten,
    },
  };
}
