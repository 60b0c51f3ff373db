/**
 * Keyed delta planning (issue #15, point 1): given the rows a bound table last held and the rows a
 * refresh produced, decide what to write: only the changed cells, the inserted rows and the removed
 * rows, or a full rewrite when that is cheaper or when the rows cannot be matched in order.
 *
 * Pure: no Office, no DOM. The workbook adapter executes a plan; {@link applyPlan} executes it on
 * arrays, and the property tests prove `applyPlan(old, planDelta(old, next, key))` equals `next`
 * cell for cell. Design notes and the meaning of every field: `src/refresh/README.md`.
 */
import { RESOURCE_DEDUP_KEY } from "../contract/contract";
import type { CellValue, Column, Table } from "../table/model";
import type { BindingSource, DeltaSummary } from "./binding";

/** The part of a table the planner looks at. Rows are in export order (after the local query). */
export type TableRows = Pick<Table, "columns" | "rows">;

// ---------------------------------------------------------------------------------------------
// Which key identifies a row

/** The `$metadata` slice the key choice needs (`ServiceMetadata` from `src/service/csdl.ts` fits). */
export interface KeyMetadata {
  entitySets: ReadonlyArray<{ name: string; keys: readonly string[] }>;
}

/** Where a key comes from, and the column lists to try (best first). */
export interface KeyChoice {
  /**
   * Column lists to try, best first. The planner uses the first list whose columns are all in both
   * tables and whose values are unique in both; when none qualifies it matches by position.
   */
  candidates: string[][];
  origin: "metadata" | "snapshot" | "query" | "none";
  /** Why this key, in one sentence (shown in diagnostics, may be stored in the binding). */
  reason: string;
}

/**
 * Picks the key for a bound source.
 *
 * - Datasets: the `<Key>` of the dataset's entity set in `$metadata` (OData's own row identity).
 *   No metadata, no entity set or an empty key ⇒ no key (the planner then matches by position).
 * - `projects`/`proposals` snapshots: `project_token`, the spec's record identifier.
 * - Resource snapshots (single and combined): the spec's de-duplication tuple (`work_type`,
 *   `resource_id`, `npt_category_id`, `fiscal_year`, `period_number`). The spec also implies that
 *   `project_work` rows can share that tuple (one resource on two projects), so the tuple plus
 *   `project_token` is tried first; the tuple alone is the second choice. The planner checks
 *   uniqueness, so a deployment without `project_token` on resource rows still gets a keyed delta
 *   whenever the tuple happens to be unique, and a position match (with the reason) otherwise.
 * - Score snapshots: one row per record and criterion (spec), so `project_token` plus the
 *   criterion's id. The spec does not name that field; `scoring_criterion_id` is the reference
 *   service's name, so it is only a candidate: absent or not unique ⇒ position.
 */
export function chooseKey(source: BindingSource, metadata?: KeyMetadata | null): KeyChoice {
  if (source.kind === "dataset") {
    if (!metadata) return { candidates: [], origin: "none", reason: "the service's $metadata was not available, so no key is known" };
    const set = metadata.entitySets.find((s) => s.name === source.key);
    if (!set) return { candidates: [], origin: "none", reason: `$metadata has no entity set for dataset ${source.key}` };
    if (set.keys.length === 0) return { candidates: [], origin: "none", reason: `$metadata declares no key for dataset ${source.key}` };
    return { candidates: [[...set.keys]], origin: "metadata", reason: `the key $metadata declares for dataset ${source.key}` };
  }
  switch (source.endpoint) {
    case "projects":
    case "proposals":
      return { candidates: [["project_token"]], origin: "snapshot", reason: "project_token, the spec's identifier of a project or proposal record" };
    case "projectResources":
    case "proposalResources":
    case "combinedResources":
      return {
        candidates: [[...RESOURCE_DEDUP_KEY, "project_token"], [...RESOURCE_DEDUP_KEY]],
        origin: "snapshot",
        reason: "the spec's resource key tuple, with project_token first because project_work rows may share the tuple",
      };
    case "projectScores":
    case "proposalScores":
      return {
        candidates: [["project_token", "scoring_criterion_id"]],
        origin: "snapshot",
        reason: "one row per record and scoring criterion (spec); the criterion id field is not named by the spec",
      };
  }
}

// ---------------------------------------------------------------------------------------------
// Cost model

/**
 * Cost of writing to Excel, in "cell equivalents". On Excel on the web every write crosses the
 * network inside a batched JSON request: a cell value costs its serialized size (≈ 1 unit), every
 * separate range write adds an operation with an address and its own value array (≈ `rangeWrite`
 * cells of payload and server work), and every row insert or delete shifts the rows below it and
 * every reference to them (≈ `rowOperation` cells). A full rewrite writes every cell of the new
 * table in a few large blocks plus one resize.
 *
 * These weights are ESTIMATES; the workbook side measures the real break-even with the bench
 * (`npm run bench -- --json`, scenario `deltaRefresh`) and may pass its own via
 * {@link PlanOptions.costModel}.
 */
export interface CostModel {
  cell: number;
  rangeWrite: number;
  rowOperation: number;
}

export const DEFAULT_COST_MODEL: Readonly<CostModel> = { cell: 1, rangeWrite: 8, rowOperation: 16 };

/**
 * A delta is chosen when its estimated cost is at most this fraction of a full rewrite's. Below 1
 * on purpose: the estimate ignores the delta's extra reads and per-operation latency, and a full
 * rewrite's cost is well known, so the delta must win clearly. With the default model and 12
 * columns, a table where every row changed (≥ 1 cell + 1 range write = 9 units per row vs 12 for
 * the full rewrite, ratio ≥ 0.75) is always a full rewrite.
 */
export const DELTA_MAX_COST_RATIO = 0.5;

/** The estimate behind a plan's strategy. `fullCost` is never 0. */
export interface DeltaCost {
  /** Cells the delta writes: changed cells plus every cell of the inserted rows. */
  cellsWritten: number;
  /** Separate range writes of the delta: one per horizontal run of changed cells, one per inserted run. */
  rangeWrites: number;
  /** Row operations of the delta: one per removed run and one per inserted run. */
  rowOperations: number;
  /** Weighted cost of the delta (∞ when rows cannot be matched in order or the columns changed). */
  deltaCost: number;
  /** Cells a full rewrite writes (every cell of the new table). */
  fullRewriteCells: number;
  /** Weighted cost of a full rewrite (its cells + one resize). */
  fullCost: number;
  /** deltaCost / fullCost. */
  ratio: number;
}

// ---------------------------------------------------------------------------------------------
// The plan

/** A run of consecutive rows: `start` is a 0-based body-row index, `count` ≥ 1. */
export interface RowRun {
  start: number;
  count: number;
}

/** Rows to insert: `start` is the index in the NEW table; `rows` are the new table's rows (not copies). */
export interface InsertRun {
  start: number;
  rows: CellValue[][];
}

/** One changed cell. `row` is its index in the NEW table, `oldRow` its index in the old one. */
export interface CellChange {
  row: number;
  oldRow: number;
  column: number;
  value: CellValue;
}

export interface DeltaCounts {
  /** Rows in the new table that match no old row. */
  added: number;
  /** Matched rows with at least one different cell (every matched row when the columns changed). */
  changed: number;
  /** Old rows that match no new row. */
  removed: number;
  /** Matched rows with no different cell. */
  unchanged: number;
  /** Cells that differ in matched rows (0 when the columns changed). */
  changedCells: number;
}

export type FullRewriteCause = "columns" | "order" | "cost";

interface PlanBase {
  /** How old and new rows were matched. */
  matchedBy: "key" | "position";
  /** The key columns used (null for a position match). */
  key: string[] | null;
  /** Why rows were matched this way, in one sentence (for the binding and diagnostics). */
  matchReason: string;
  /** Without a key: rows matched by their unchanged content, and by position (issue #34). */
  byContent?: number;
  byPosition?: number;
  counts: DeltaCounts;
  cost: DeltaCost;
  oldRowCount: number;
  newRowCount: number;
  /** The new table's columns (the result's header and types). */
  columns: Column[];
}

/**
 * Write only what changed. Apply in this order:
 * 1. delete the `removed` runs (old indexes), last run first, so earlier indexes stay valid;
 * 2. insert the `inserted` runs in ascending order (new indexes): after step 1 and the runs before
 *    it, everything above `start` is already in its final place;
 * 3. write each change at (`row`, `column`): `row` is the final (new) index. A writer that prefers
 *    to write cells before moving rows uses `oldRow` instead.
 * Kept rows keep their relative order (that is checked, see `cause: "order"`), so the result is the
 * new table in the export's order.
 */
export interface DeltaWritePlan extends PlanBase {
  strategy: "delta";
  removed: RowRun[];
  inserted: InsertRun[];
  /** Sorted by row, then column. */
  changes: CellChange[];
}

/** Rewrite the whole table with `columns` and `rows` (the new table's own arrays, not copies). */
export interface FullWritePlan extends PlanBase {
  strategy: "full";
  cause: FullRewriteCause;
  /** Why a full rewrite, in one sentence. */
  fullReason: string;
  rows: CellValue[][];
}

export type DeltaPlan = DeltaWritePlan | FullWritePlan;

export interface PlanOptions {
  costModel?: Partial<CostModel>;
  /** Overrides {@link DELTA_MAX_COST_RATIO}; 0 forces a full rewrite unless nothing changed, Infinity a delta whenever one is possible. */
  maxCostRatio?: number;
}

// The stored form lives with the binding (binding.ts), which must not import this module.
export { DeltaSummarySchema, type DeltaSummary } from "./binding";

/** The plan in a form a binding can store. `reason` is the match reason, plus the full-rewrite reason. */
export function deltaSummary(plan: DeltaPlan): DeltaSummary {
  return {
    strategy: plan.strategy,
    matchedBy: plan.matchedBy,
    key: plan.key,
    reason: plan.strategy === "full" ? `${plan.matchReason}; full rewrite: ${plan.fullReason}` : plan.matchReason,
    added: plan.counts.added,
    changed: plan.counts.changed,
    removed: plan.counts.removed,
    cellsWritten: plan.strategy === "full" ? plan.cost.fullRewriteCells : plan.cost.cellsWritten,
    ...(plan.byContent !== undefined ? { byContent: plan.byContent, byPosition: plan.byPosition ?? 0 } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Matching

type KeyValue = CellValue;

/**
 * Key of a row as one Map key. One column: the cell itself (Map keys compare by SameValueZero, so
 * `1` and `"1"` stay different). Several: an injective string (strings length-prefixed, numbers
 * terminated), faster than JSON.stringify at 200,000 rows.
 */
function keyReader(indexes: readonly number[]): (row: readonly CellValue[]) => KeyValue {
  if (indexes.length === 1) {
    const i = indexes[0];
    return (row) => row[i];
  }
  return (row) => {
    let s = "";
    for (const i of indexes) {
      const v = row[i];
      if (v === null) s += "z";
      else if (typeof v === "string") s += "s" + v.length + ":" + v;
      else if (typeof v === "number") s += "n" + String(v) + "|";
      else s += v ? "T" : "F";
    }
    return s;
  };
}

function shownKey(v: KeyValue): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + "…" : s;
}

/** Result of matching: for every new row the old row it continues, or -1 (inserted). */
interface Match {
  newToOld: Int32Array;
  matchedBy: "key" | "position";
  key: string[] | null;
  reason: string;
  /** Without a key (issue #34): rows matched by their whole content, unchanged and unique in both tables. */
  byContent?: number;
  /** Without a key: the other rows, matched by position (row n with row n, when neither is matched by content). */
  byPosition?: number;
}

function indexesOf(columns: readonly Column[], names: readonly string[]): number[] | null {
  const out: number[] = [];
  for (const n of names) {
    const i = columns.findIndex((c) => c.name === n);
    if (i < 0) return null;
    out.push(i);
  }
  return out;
}

function tryKey(old: TableRows, next: TableRows, names: string[]): { newToOld: Int32Array } | { problem: string } {
  const oi = indexesOf(old.columns, names);
  const ni = indexesOf(next.columns, names);
  if (!oi || !ni) {
    const missing = names.filter((n) => !old.columns.some((c) => c.name === n) || !next.columns.some((c) => c.name === n));
    return { problem: `key column${missing.length > 1 ? "s" : ""} ${missing.join(", ")} not in the table` };
  }
  const readOld = keyReader(oi);
  const readNew = keyReader(ni);
  const byKey = new Map<KeyValue, number>();
  for (let r = 0; r < old.rows.length; r++) {
    const k = readOld(old.rows[r]);
    // One hash lookup per row: a repeated key leaves the size unchanged (the first row is found again only for the message).
    const size = byKey.size;
    byKey.set(k, r);
    if (byKey.size === size) {
      let first = 0;
      // SameValueZero, as the Map compares keys.
      while (first < r && readOld(old.rows[first]) !== k) first++;
      return { problem: `key (${names.join(", ")}) is not unique in the previous data (row ${r + 1} repeats row ${first + 1})` };
    }
  }
  const newToOld = new Int32Array(next.rows.length);
  const taken = new Uint8Array(old.rows.length);
  // Only keys absent from the old data need their own set; a repeat of an old key shows up in `taken`.
  const fresh = new Set<KeyValue>();
  for (let r = 0; r < next.rows.length; r++) {
    const k = readNew(next.rows[r]);
    const o = byKey.get(k);
    if (o === undefined) {
      if (fresh.has(k)) return { problem: `key (${names.join(", ")}) is not unique in the new data (${shownKey(k)} repeats)` };
      fresh.add(k);
      newToOld[r] = -1;
    } else {
      if (taken[o]) return { problem: `key (${names.join(", ")}) is not unique in the new data (row ${r + 1} repeats an earlier row)` };
      taken[o] = 1;
      newToOld[r] = o;
    }
  }
  return { newToOld };
}

function isKeyChoice(key: KeyChoice | readonly string[]): key is KeyChoice {
  return !Array.isArray(key);
}

function match(old: TableRows, next: TableRows, key: KeyChoice | readonly string[] | null | undefined): Match {
  const choice: KeyChoice =
    key == null ? { candidates: [], origin: "none", reason: "no key was given" }
    : isKeyChoice(key) ? key
    : { candidates: [[...key]], origin: "none", reason: "the given key" };
  const problems: string[] = [];
  for (const names of choice.candidates) {
    if (names.length === 0) continue;
    const r = tryKey(old, next, names);
    if ("newToOld" in r) {
      return { newToOld: r.newToOld, matchedBy: "key", key: [...names], reason: `matched by key (${names.join(", ")}): ${choice.reason}` };
    }
    problems.push(r.problem);
  }
  const why = problems.length === 0 ? choice.reason : problems.join("; ");
  if (!sameColumns(old.columns, next.columns)) {
    const newToOld = new Int32Array(next.rows.length);
    for (let r = 0; r < newToOld.length; r++) newToOld[r] = r < old.rows.length ? r : -1;
    return { newToOld, matchedBy: "position", key: null, reason: `matched by position: ${why}` };
  }
  const m = matchByContent(old, next);
  const rows = (n: number) => `${n.toLocaleString("en-US")} row${n === 1 ? "" : "s"}`;
  return { ...m, matchedBy: "position", key: null, reason: `matched by content (${rows(m.byContent)} unchanged) and by position (${rows(m.byPosition)}): ${why}` };
}

/**
 * Without a key (issue #34, item 5): a row whose whole content is unchanged is the same record wherever
 * it stands (a user's sort, rows added or removed above it); the other rows are matched by position,
 * row n with row n when neither is matched by content, as before. Rows alike in every cell cannot be
 * told apart, and need not be: they are paired in order (the first such old row with the first such
 * new row, and so on), so each of their user cells stays beside a row showing exactly its record's
 * content; a copy more in either table is left for position. Decided against the "unique"
 * reading: matching duplicates by position would put their notes beside whatever record the export
 * puts on that row, which is the defect itself.
 */
export function matchByContent(old: TableRows, next: TableRows): { newToOld: Int32Array; byContent: number; byPosition: number } {
  const all = next.columns.map((_, i) => i);
  const read = keyReader(all.length === 1 ? [0, 0] : all);
  // The old rows of each content, in order: the first in `head`, each one's successor in `following`.
  const head = new Map<KeyValue, number>();
  const following = new Int32Array(old.rows.length);
  for (let i = old.rows.length - 1; i >= 0; i--) {
    const k = read(old.rows[i]);
    following[i] = head.get(k) ?? -1;
    head.set(k, i);
  }
  const newToOld = new Int32Array(next.rows.length).fill(-1);
  const oldTaken = new Uint8Array(old.rows.length);
  let byContent = 0, byPosition = 0;
  for (let r = 0; r < next.rows.length; r++) {
    const k = read(next.rows[r]);
    const o = head.get(k);
    if (o === undefined || o < 0) continue;
    head.set(k, following[o]);
    newToOld[r] = o;
    oldTaken[o] = 1;
    byContent++;
  }
  for (let r = 0; r < next.rows.length && r < old.rows.length; r++) {
    if (newToOld[r] >= 0 || oldTaken[r]) continue;
    newToOld[r] = r;
    byPosition++;
  }
  return { newToOld, byContent, byPosition };
}

/**
 * How the rows of `next` continue those of `old`: for every new row the old row with the same key
 * (the first candidate whose columns are in both tables and unique in both), or by position when no
 * key qualifies; -1 for a new record. What a refresh moves the user's own cells by (issue #21).
 */
export function matchRows(old: TableRows, next: TableRows, key: KeyChoice | readonly string[] | null | undefined): Match {
  return match(old, next, key);
}

function sameColumns(a: readonly Column[], b: readonly Column[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].name !== b[i].name || a[i].type !== b[i].type) return false;
  return true;
}

function describeColumnChange(a: readonly Column[], b: readonly Column[]): string {
  const before = new Map(a.map((c) => [c.name, c.type]));
  const after = new Map(b.map((c) => [c.name, c.type]));
  const added = b.filter((c) => !before.has(c.name)).map((c) => c.name);
  const removed = a.filter((c) => !after.has(c.name)).map((c) => c.name);
  const retyped = b.filter((c) => before.has(c.name) && before.get(c.name) !== c.type).map((c) => `${c.name} ${before.get(c.name)}→${c.type}`);
  const parts: string[] = [];
  if (added.length) parts.push(`added ${added.join(", ")}`);
  if (removed.length) parts.push(`removed ${removed.join(", ")}`);
  if (retyped.length) parts.push(`retyped ${retyped.join(", ")}`);
  if (parts.length === 0) parts.push("reordered");
  return `the columns changed (${parts.join("; ")})`;
}

function runsOf(sortedIndexes: ArrayLike<number>, length: number): RowRun[] {
  const runs: RowRun[] = [];
  for (let i = 0; i < length; i++) {
    const x = sortedIndexes[i];
    const last = runs[runs.length - 1];
    if (last && last.start + last.count === x) last.count++;
    else runs.push({ start: x, count: 1 });
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Planning

/**
 * Plans a refresh of `old` (the rows the table holds, in export order) to `next` (the new rows, in
 * export order). `key` is a {@link KeyChoice} from {@link chooseKey}, a plain list of key columns,
 * or null for a position match. Linear in the number of cells (two passes, no per-cell objects
 * unless the delta is chosen).
 */
export function planDelta(old: TableRows, next: TableRows, key: KeyChoice | readonly string[] | null | undefined, options: PlanOptions = {}): DeltaPlan {
  const model: CostModel = { ...DEFAULT_COST_MODEL, ...options.costModel };
  const maxRatio = options.maxCostRatio ?? DELTA_MAX_COST_RATIO;
  const width = next.columns.length;
  const oldN = old.rows.length;
  const newN = next.rows.length;
  const m = match(old, next, key);
  const { newToOld } = m;
  const columnsSame = sameColumns(old.columns, next.columns);

  // Pass 1: counts, order check and the cost, without allocating per cell.
  const changedRow = new Uint8Array(newN);
  let added = 0;
  let changed = 0;
  let changedCells = 0;
  let spans = 0;
  let inOrder = true;
  let lastOld = -1;
  let firstDisorder = -1;
  const insertedIdx: number[] = [];
  for (let r = 0; r < newN; r++) {
    const o = newToOld[r];
    if (o < 0) {
      added++;
      insertedIdx.push(r);
      continue;
    }
    if (o < lastOld && inOrder) {
      inOrder = false;
      firstDisorder = r;
    }
    lastOld = o;
    if (!columnsSame) {
      changed++;
      changedRow[r] = 1;
      continue;
    }
    const a = old.rows[o];
    const b = next.rows[r];
    let cells = 0;
    let inSpan = false;
    for (let c = 0; c < width; c++) {
      if (Object.is(a[c], b[c])) inSpan = false;
      else {
        cells++;
        if (!inSpan) spans++;
        inSpan = true;
      }
    }
    if (cells > 0) {
      changed++;
      changedRow[r] = 1;
      changedCells += cells;
    }
  }
  const matched = newN - added;
  const removedCount = oldN - matched;
  const counts: DeltaCounts = { added, changed, removed: removedCount, unchanged: matched - changed, changedCells: columnsSame ? changedCells : 0 };

  const inserted = runsOf(insertedIdx, insertedIdx.length);
  let removed: RowRun[] = [];
  if (removedCount > 0) {
    const kept = new Uint8Array(oldN);
    for (let r = 0; r < newN; r++) if (newToOld[r] >= 0) kept[newToOld[r]] = 1;
    const gone: number[] = [];
    for (let o = 0; o < oldN; o++) if (!kept[o]) gone.push(o);
    removed = runsOf(gone, gone.length);
  }

  const fullRewriteCells = newN * width;
  const fullCost = fullRewriteCells * model.cell + model.rowOperation;
  const cellsWritten = changedCells + added * width;
  const rangeWrites = spans + inserted.length;
  const rowOperations = inserted.length + removed.length;
  const possible = columnsSame && inOrder;
  const deltaCost = possible ? cellsWritten * model.cell + rangeWrites * model.rangeWrite + rowOperations * model.rowOperation : Infinity;
  const cost: DeltaCost = { cellsWritten, rangeWrites, rowOperations, deltaCost, fullRewriteCells, fullCost, ratio: deltaCost / fullCost };
  const base: PlanBase = {
    matchedBy: m.matchedBy, key: m.key, matchReason: m.reason, counts, cost, oldRowCount: oldN, newRowCount: newN, columns: next.columns,
    ...(m.byContent !== undefined ? { byContent: m.byContent, byPosition: m.byPosition ?? 0 } : {}),
  };

  const full = (cause: FullRewriteCause, fullReason: string): FullWritePlan => ({
    ...base,
    strategy: "full",
    cause,
    fullReason,
    rows: next.rows,
  });
  if (!columnsSame) return full("columns", describeColumnChange(old.columns, next.columns));
  if (!inOrder) {
    return full("order", `the order changed beyond inserts and removals (new row ${firstDisorder + 1} comes before rows it followed)`);
  }
  // Nothing to do is always a delta (even with maxCostRatio 0): there is nothing to write.
  if (deltaCost > 0 && cost.ratio > maxRatio) {
    return full("cost", `a delta would cost ${(cost.ratio * 100).toFixed(1)}% of a full rewrite (limit ${(maxRatio * 100).toFixed(0)}%)`);
  }

  // Pass 2: materialise the changes of the changed rows only.
  const changes: CellChange[] = [];
  for (let r = 0; r < newN; r++) {
    if (!changedRow[r]) continue;
    const o = newToOld[r];
    const a = old.rows[o];
    const b = next.rows[r];
    for (let c = 0; c < width; c++) if (!Object.is(a[c], b[c])) changes.push({ row: r, oldRow: o, column: c, value: b[c] });
  }
  return {
    ...base,
    strategy: "delta",
    removed,
    inserted: inserted.map((run) => ({ start: run.start, rows: next.rows.slice(run.start, run.start + run.count) })),
    changes,
  };
}

/** Horizontal runs of changed cells (one range write each): `values` are consecutive columns from `column`. */
export interface ChangeSpan {
  row: number;
  oldRow: number;
  column: number;
  values: CellValue[];
}

/** Groups a delta's changes into one span per row and run of adjacent columns (what `rangeWrites` counts). */
export function changeSpans(changes: readonly CellChange[]): ChangeSpan[] {
  const out: ChangeSpan[] = [];
  for (const ch of changes) {
    const last = out[out.length - 1];
    if (last && last.row === ch.row && last.column + last.values.length === ch.column) last.values.push(ch.value);
    else out.push({ row: ch.row, oldRow: ch.oldRow, column: ch.column, values: [ch.value] });
  }
  return out;
}

/**
 * Executes a plan on arrays, in the documented order, the way the workbook adapter executes it on
 * a sheet. Returns new arrays; `old` is not modified. Used by the tests to prove the invariant
 * `applyPlan(old, planDelta(old, next, key))` equals `next`.
 *
 * @throws RangeError when the plan does not fit the table (wrong old table or a corrupted plan).
 */
export function applyPlan(old: TableRows, plan: DeltaPlan): TableRows {
  if (plan.strategy === "full") return { columns: plan.columns.map((c) => ({ ...c })), rows: plan.rows.map((r) => [...r]) };
  if (old.rows.length !== plan.oldRowCount) throw new RangeError(`the plan is for ${plan.oldRowCount} rows, the table has ${old.rows.length}`);
  // Same result as deleting the runs bottom-up and then inserting top-down (the documented order),
  // built by merging so that large runs never go through a spread argument list.
  const keep = new Uint8Array(old.rows.length).fill(1);
  let prevEnd = 0;
  for (const run of plan.removed) {
    if (run.count < 1 || run.start < prevEnd || run.start + run.count > old.rows.length) throw new RangeError(`removed run ${run.start}+${run.count} is out of order or outside the table`);
    keep.fill(0, run.start, run.start + run.count);
    prevEnd = run.start + run.count;
  }
  const kept: CellValue[][] = [];
  for (let o = 0; o < old.rows.length; o++) if (keep[o]) kept.push([...old.rows[o]]);
  const rows: CellValue[][] = [];
  let k = 0;
  for (const run of plan.inserted) {
    if (run.start < rows.length) throw new RangeError(`inserted run at ${run.start} is out of order`);
    while (rows.length < run.start) {
      if (k >= kept.length) throw new RangeError(`inserted run at ${run.start} is past the table's end`);
      rows.push(kept[k++]);
    }
    for (const r of run.rows) rows.push([...r]);
  }
  while (k < kept.length) rows.push(kept[k++]);
  if (rows.length !== plan.newRowCount) throw new RangeError(`the plan left ${rows.length} rows, expected ${plan.newRowCount}`);
  for (const ch of plan.changes) {
    const row = rows[ch.row];
    if (!row || ch.column >= row.length) throw new RangeError(`change at row ${ch.row}, column ${ch.column} is outside the table`);
    row[ch.column] = ch.value;
  }
  return { columns: plan.columns.map((c) => ({ ...c })), rows };
}
