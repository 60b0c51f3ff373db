/**
 * `$apply` evaluation (OData Data Aggregation 4.0): transformations compiled once against a column
 * list into a push pipeline. Rows are pushed one at a time and only what a transformation needs is
 * kept: `filter` and `compute` keep nothing, `groupby`/`aggregate` keep one set of accumulators per
 * group. So a table far larger than a worksheet can be summarised as it streams in.
 *
 * Decisions (the extension leaves them open, or the flat table needs them):
 * - Groups come out in order of first appearance. A `null` grouping value is a group of its own.
 * - `sum` of integers is an integer (exact at any size: digit text beyond 2^53, like Int64 cells);
 *   of decimals the exact decimal sum, then the nearest double; `average` is the exact quotient
 *   rounded once to the nearest double (a decimal column); `$count` and `countdistinct` are
 *   integers. A decimal result beyond the double range (±1.8e308) is an `overflow` error naming its
 *   column: a cell cannot hold it, and an empty cell would be a wrong answer.
 * - `min`/`max` order like `$orderby`: text by code point, numbers exactly, `false` < `true`.
 * - `sum`/`min`/`max`/`average` of no non-null values are `null`; counts of nothing are 0.
 *   `aggregate(...)` without groupby always yields one row, even over no rows.
 * - Inside `groupby((...), ...)` only `filter`/`compute` followed by one `aggregate` are accepted;
 *   a group whose rows the inner filter removes still appears (its aggregates over no rows).
 *
 * Size: compiling is linear in the text (consecutive `filter`/`compute` steps share one column
 * resolver and run fused, one pass and at most one new array per row), and running never recurses
 * per step, so thousands of steps neither slow down quadratically nor exhaust the stack. A group
 * costs a few array slots per aggregate (column-wise state, see {@link AccColumn}), not objects.
 */
import type { CellValue, Column, ColumnType } from "../table/model";
import { ColumnResolver } from "./columns";
import { compareNumbers, compareText, Compiler, isSpecialNumber, type Compiled, type Row, type RV } from "./compile";
import * as D from "./decimal";
import { Decimal } from "./decimal";
import { QueryError } from "./errors";
import { parseApply, type AggregateItem, type ApplyStep, type ComputeItem } from "./applyParser";

/** Receives rows one at a time, then `end()` once. */
export interface RowSink {
  row(cells: CellValue[]): void;
  end(): void;
}

/** A compiled `$apply`: its result columns, and a pipeline feeding result rows to a sink. */
export interface CompiledApply {
  readonly columns: Column[];
  /** A sink that takes source rows; result rows go to `out` (all of them at `end()` when grouping). */
  open(out: RowSink): RowSink;
  /** Runs the pipeline over rows held in memory. */
  run(rows: readonly Row[]): CellValue[][];
}

export interface ApplyCompileOptions {
  now?: number;
}

/** One stage of the pipeline: a fused run of row-wise steps, or a grouping. */
type Stage = { kind: "row"; run: (r: Row) => Row | null } | { kind: "group"; plan: GroupPlan };

/** Compiles `$apply` text against `columns`. Throws {@link QueryError} (without `option`). */
export function compileApply(columns: readonly Column[], text: string, opts: ApplyCompileOptions = {}): CompiledApply {
  const steps = parseApply(text);
  let cols: Column[] = columns.map((c) => ({ ...c }));
  const stages: Stage[] = [];
  let run: RowRun | undefined;
  const closeRun = () => {
    if (!run) return;
    const f = run.runner();
    if (f) stages.push({ kind: "row", run: f });
    cols = run.columns();
    run = undefined;
  };
  for (const step of steps) {
    if (step.k === "filter" || step.k === "compute") {
      run ??= new RowRun(cols, opts);
      run.step(step);
      continue;
    }
    closeRun();
    const plan = step.k === "aggregate" ? groupPlan(cols, [], [step], true, opts) : groupPlan(cols, step.columns, step.steps, false, opts);
    stages.push({ kind: "group", plan });
    cols = plan.columns;
  }
  closeRun();
  const out = cols;
  const n = stages.length;
  const open = (sink: RowSink): RowSink => {
    const states: Array<GroupState | null> = stages.map((s) => (s.kind === "group" ? s.plan.open() : null));
    // A loop over the stages, not a chain of nested calls: the stack depth does not grow with them.
    const push = (r: Row, from: number): void => {
      let x: Row | null = r;
      for (let i = from; i < n; i++) {
        const s = stages[i];
        if (s.kind === "row") {
          x = s.run(x);
          if (x === null) return;
        } else {
          states[i]!.add(x);
          return;
        }
      }
      sink.row(x as CellValue[]);
    };
    return {
      row: (r) => push(r, 0),
      end() {
        for (let i = 0; i < n; i++) {
          const st = states[i];
          if (st) {
            st.flush((row) => push(row, i + 1));
            states[i] = null;
          }
        }
        sink.end();
      },
    };
  };
  return {
    columns: out.map((c) => ({ ...c })),
    open,
    run(rows) {
      const result: CellValue[][] = [];
      const sink = open({ row: (r) => void result.push(r), end: () => undefined });
      for (let i = 0; i < rows.length; i++) sink.row(rows[i] as CellValue[]);
      sink.end();
      return result;
    },
  };
}

// ------------------------------------------------------------------ filter / compute

type RowOp = { keep: (r: Row) => boolean; f?: undefined } | { keep?: undefined; f: (r: Row) => CellValue };

/**
 * Consecutive `filter`/`compute` steps, compiled against one growing column resolver (a computed
 * column is appended; earlier indices never move) and run as one function per row: filters read
 * the row as it is so far, computed values are appended to one copy of the row made at the first
 * `compute`. Compiling N steps costs O(N), running them O(N) per row.
 */
class RowRun {
  private readonly resolver: ColumnResolver;
  private readonly taken: Set<string>;
  private readonly ops: RowOp[] = [];
  constructor(
    cols: readonly Column[],
    private readonly opts: ApplyCompileOptions,
  ) {
    this.resolver = new ColumnResolver(cols);
    this.taken = new Set(cols.map((c) => c.name));
  }

  step(step: Extract<ApplyStep, { k: "filter" | "compute" }>): void {
    const compiler = new Compiler(this.resolver, { now: this.opts.now });
    if (step.k === "filter") {
      this.ops.push({ keep: compiler.filter(step.expr) });
      return;
    }
    // Every item of one compute sees the step's input columns, not each other's aliases.
    const added: Column[] = [];
    for (const item of step.items) {
      checkAlias(item.alias, item.aliasPos, this.taken);
      const c = compiler.compile(item.expr);
      const type: ColumnType = c.t === "null" ? "text" : c.t;
      added.push({ name: item.alias, type, nullable: true });
      const f = c.f;
      this.ops.push({
        f: (r) => {
          const v = f(r);
          if (isSpecialNumber(v)) throw specialValue(`the computed column '${item.alias}'`, item.exprText, item.pos);
          return checkedCell(v, type, () => computeOverflow(item));
        },
      });
    }
    for (const c of added) this.resolver.add(c);
  }

  /** Columns after the run. */
  columns(): Column[] {
    return this.resolver.columns.slice();
  }

  /** The per-row function: the row (or a longer copy), or null when a filter drops it. */
  runner(): ((r: Row) => Row | null) | undefined {
    const n = this.ops.length;
    if (n === 0) return undefined;
    const keeps = this.ops.map((o) => o.keep ?? null);
    const fs = this.ops.map((o) => o.f ?? null);
    return (r) => {
      let out: CellValue[] | null = null;
      for (let k = 0; k < n; k++) {
        const keep = keeps[k];
        if (keep !== null) {
          if (!keep(out ?? r)) return null;
        } else {
          // Source rows are never changed: the first computed value goes into a copy.
          out ??= (r as CellValue[]).slice();
          out.push(fs[k]!(out));
        }
      }
      return out ?? r;
    };
  }
}

function checkAlias(alias: string, pos: number, taken: Set<string>): void {
  if (taken.has(alias)) {
    throw new QueryError({
      code: "invalid_value",
      detail: `the name '${alias}' is already a column here; choose another name after 'as'`,
      position: pos,
    });
  }
  taken.add(alias);
}

/** Converts an expression value to a table cell of `type` (the model's conventions). */
export function toCell(v: RV, type: ColumnType): CellValue {
  if (v === null) return null;
  switch (type) {
    case "integer":
      if (typeof v === "number") return v;
      return normInt(typeof v === "bigint" ? v : v instanceof Decimal ? D.toBigInt(v) : BigInt(String(v)));
    case "decimal":
      return typeof v === "number" ? v : v instanceof Decimal ? D.toNumber(v) : Number(String(v));
    case "datetime":
      return typeof v === "number" ? isoFromMs(v) : String(v);
    case "boolean":
      return v === true;
    default:
      return String(v);
  }
}

/** {@link toCell}, failing with `overflow()` for a number no cell can hold (beyond ±1.8e308). */
function checkedCell(v: RV, type: ColumnType, overflow: () => QueryError): CellValue {
  const cell = toCell(v, type);
  if (typeof cell === "number" && !Number.isFinite(cell)) throw overflow();
  return cell;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
function normInt(b: bigint): number | string {
  return b <= SAFE && b >= -SAFE ? Number(b) : b.toString();
}

function isoFromMs(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? iso.slice(0, 19) + "Z" : iso;
}

/** `1.80e+308`: an exact value `m × 10^e` to three significant digits, rounded half up. */
function magnitude(m: bigint, e: number): string {
  let digits = (m < 0n ? -m : m).toString();
  let exp = digits.length - 1 + e;
  if (digits.length > 3) {
    let head = BigInt(digits.slice(0, 3)) + (digits[3] >= "5" ? 1n : 0n);
    if (head === 1000n) {
      head = 100n;
      exp++;
    }
    digits = head.toString();
  }
  digits = digits.padEnd(3, "0");
  return `${m < 0n ? "-" : ""}${digits[0]}.${digits.slice(1)}e${exp < 0 ? "-" : "+"}${Math.abs(exp)}`;
}

const RANGE = "beyond the largest number a cell can hold (±1.7976931348623157e+308)";

function computeOverflow(item: ComputeItem): QueryError {
  return new QueryError({
    code: "overflow",
    detail: `the computed column '${item.alias}' (${item.exprText}) is ${RANGE} in a row`,
    position: item.pos,
    hint: "scale the expression down, or filter out the rows that make it this large",
  });
}

/** INF, -INF or NaN (a `divby` zero) reaching a result: no cell holds one, so the query fails clearly. */
function specialValue(what: string, exprText: string, pos: number | undefined): QueryError {
  return new QueryError({
    code: "overflow",
    detail: `${what} (${exprText}) is INF, -INF or NaN in a row (a divby zero), which no cell can hold`,
    position: pos,
    hint: "exclude zero divisors first, e.g. filter(Qty ne 0)/compute(Budget divby Qty as x)",
  });
}

// ------------------------------------------------------------------ accumulators

const enum Kind {
  SumInteger,
  SumDecimal,
  Average,
  Min,
  Max,
  CountDistinct,
  Count,
}

/** How min/max compare two non-null values of one type. */
const enum Order {
  /** Strings by code point (`compareText`). */
  Text,
  /** Numbers of any representation (number, bigint, exact Decimal), exactly. */
  Number,
  /** Dates (ISO text without high characters), date-times (epoch ms), booleans: native `<`. */
  Native,
}

const POW10: readonly number[] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** Fraction digits tried on the fast path (cells with more go to the exact BigInt state). */
const MAX_FAST_DIGITS = 9;
const TWO52 = 2 ** 52;
const TWO53 = 2 ** 53;
/** `scale` of a group whose sum left the fast path (its exact state is in `exact`). */
const EXACT = -1;

/** An exact decimal `m × 10^e`, mutated in place while a sum grows. */
interface ExactSum {
  m: bigint;
  e: number;
}

/** The exact `m × 10^e` of a non-null numeric value. */
function exactOf(v: RV): ExactSum {
  if (typeof v === "bigint") return { m: v, e: 0 };
  if (v instanceof Decimal) return { m: v.m, e: v.e };
  const d = D.fromNumber(typeof v === "number" ? v : Number(v));
  return { m: d.m, e: d.e };
}

/** Who an accumulator's result is for, so an error names the column. */
interface Label {
  alias: string;
  method: string;
  exprText: string;
  pos: number;
}

/**
 * One aggregate's state for every group of a grouping, column-wise: group `g` is slot `g` of a few
 * arrays of numbers (no object per group), so the memory of a summary is a few words per group and
 * aggregate. One class for every method, switching on its kind: the per-row call site sees one
 * class (monomorphic, inlined).
 *
 * Sums keep a scaled integer while they can: a number cell `x` is the decimal it prints as, and when
 * some `m / 10^k` (k ≤ 9, |m| < 2^52) is exactly the double `x`, that decimal IS `m × 10^-k`
 * (doubles that small are closer together than 10^-k, so no other k-digit decimal reads back as
 * `x`). `n[g]` is that integer (safe), `scale[g]` its k; anything else (more digits, a sum past
 * 2^53, bigints, exact Decimals) moves the group to an exact BigInt `m × 10^e` in `exact`.
 */
class AccColumn {
  /** Count; the scaled fast-path sum (NaN while a sum has no value yet). */
  private readonly n: number[] = [];
  /** Sums: decimal digits of `n[g]`, or {@link EXACT}. */
  private readonly scale: number[] = [];
  /** Averages: non-null values added. */
  private readonly cnt: number[] = [];
  /** Sums that left the fast path. */
  private readonly exact = new Map<number, ExactSum>();
  /**
   * min/max: the best value so far (comparable form), and its source cell when the two differ (a
   * plain integer or date-time column: its cell keeps the exact text the service sent).
   */
  private readonly best: RV[] = [];
  private readonly cell: CellValue[] = [];
  private readonly seen: Array<Set<unknown>> = [];
  private readonly order: Order;

  constructor(
    private readonly kind: Kind,
    private readonly type: ColumnType,
    private readonly label: Label,
    private readonly keepsCell: boolean,
  ) {
    this.order = type === "text" ? Order.Text : type === "integer" || type === "decimal" ? Order.Number : Order.Native;
  }

  /** Adds the slot of a new group (ids are 0, 1, 2, ... in order). */
  init(): void {
    switch (this.kind) {
      case Kind.Count:
        this.n.push(0);
        return;
      case Kind.SumInteger:
      case Kind.SumDecimal:
        this.n.push(NaN);
        this.scale.push(0);
        return;
      case Kind.Average:
        this.n.push(0);
        this.scale.push(0);
        this.cnt.push(0);
        return;
      case Kind.CountDistinct:
        this.seen.push(new Set());
        return;
      default:
        this.best.push(null);
        if (this.keepsCell) this.cell.push(null);
    }
  }

  add(g: number, v: RV, c: CellValue | undefined): void {
    if (isSpecialNumber(v) && this.kind !== Kind.Count && this.kind !== Kind.CountDistinct) throw specialValue(`'${this.label.alias}'`, `${this.label.exprText} with ${this.label.method}`, this.label.pos);
    switch (this.kind) {
      case Kind.Count:
        this.n[g]++;
        return;
      case Kind.SumInteger:
      case Kind.SumDecimal:
        if (v !== null) this.addSum(g, v);
        return;
      case Kind.Average:
        if (v === null) return;
        this.cnt[g]++;
        this.addSum(g, v);
        return;
      case Kind.CountDistinct:
        if (v !== null) this.seen[g].add(distinctKey(v));
        return;
      default: {
        if (v === null) return;
        const best = this.best[g];
        if (best === null || (this.kind === Kind.Max ? this.compare(v, best) > 0 : this.compare(v, best) < 0)) {
          this.best[g] = v;
          if (this.keepsCell) this.cell[g] = c!;
        }
      }
    }
  }

  private compare(x: RV, y: RV): number {
    switch (this.order) {
      case Order.Text:
        return compareText(x as string, y as string);
      case Order.Number:
        if (typeof x === "number" && typeof y === "number") return x < y ? -1 : x > y ? 1 : 0;
        return compareNumbers(x as number | bigint | Decimal, y as number | bigint | Decimal);
      default:
        return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
    }
  }

  private addSum(g: number, v: Exclude<RV, null>): void {
    const scale = this.scale[g];
    if (scale !== EXACT && typeof v === "number") {
      let m = v;
      let k = 0;
      if (!Number.isSafeInteger(v)) {
        k = -1;
        if (Number.isFinite(v) && !Number.isInteger(v)) {
          for (let j = 1; j <= MAX_FAST_DIGITS; j++) {
            const p = POW10[j];
            const mj = Math.round(v * p);
            if (mj / p === v) {
              if (mj < TWO52 && mj > -TWO52) {
                m = mj;
                k = j;
              }
              break;
            }
          }
        }
      }
      if (k >= 0) {
        let n = this.n[g];
        if (n !== n) n = 0; // NaN: the first value of a sum
        if (k > scale) n *= POW10[k - scale];
        else if (k < scale) m *= POW10[scale - k];
        const s = n + m;
        // Every product and the sum are exact while they stay below 2^53.
        if (Math.abs(n) < TWO53 && Math.abs(m) < TWO53 && Number.isSafeInteger(s)) {
          this.n[g] = s;
          if (k > scale) this.scale[g] = k;
          return;
        }
      }
    }
    let ex = this.exact.get(g);
    if (ex === undefined) {
      const n = this.n[g];
      ex = { m: BigInt(n !== n ? 0 : n), e: -this.scale[g] };
      this.exact.set(g, ex);
      this.scale[g] = EXACT;
    }
    const x = exactOf(v);
    if (x.e < ex.e) {
      ex.m *= 10n ** BigInt(ex.e - x.e);
      ex.e = x.e;
    }
    ex.m += x.e > ex.e ? x.m * 10n ** BigInt(x.e - ex.e) : x.m;
  }

  /** The exact sum of group `g` as `m × 10^e`. */
  private exactSum(g: number): ExactSum {
    return this.scale[g] === EXACT ? this.exact.get(g)! : { m: BigInt(this.n[g]), e: -this.scale[g] };
  }

  result(g: number): CellValue {
    switch (this.kind) {
      case Kind.Count:
        return this.n[g];
      case Kind.SumInteger: {
        if (this.empty(g)) return null;
        if (this.scale[g] === 0) return this.n[g];
        const s = this.exactSum(g);
        return normInt(s.e >= 0 ? s.m * 10n ** BigInt(s.e) : s.m / 10n ** BigInt(-s.e));
      }
      case Kind.SumDecimal: {
        if (this.empty(g)) return null;
        const scale = this.scale[g];
        // Both operands are exact doubles, so the quotient is the double nearest to the exact sum.
        if (scale !== EXACT) return this.n[g] / POW10[scale] + 0;
        const s = this.exactSum(g);
        return this.finite(s.e >= 0 ? D.nearestDouble(s.m * 10n ** BigInt(s.e), 1n) : D.nearestDouble(s.m, 10n ** BigInt(-s.e)), s, 1n);
      }
      case Kind.Average: {
        const count = this.cnt[g];
        if (count === 0) return null;
        const scale = this.scale[g];
        if (scale !== EXACT && count * POW10[scale] <= TWO53) return this.n[g] / (count * POW10[scale]) + 0;
        const s = this.exactSum(g);
        const c = BigInt(count);
        return this.finite(s.e >= 0 ? D.nearestDouble(s.m * 10n ** BigInt(s.e), c) : D.nearestDouble(s.m, c * 10n ** BigInt(-s.e)), s, c);
      }
      case Kind.CountDistinct:
        return this.seen[g].size;
      default: {
        if (this.keepsCell) return this.cell[g];
        const best = this.best[g];
        const cell = toCell(best, this.type);
        if (typeof cell === "number" && !Number.isFinite(cell)) {
          const x = exactOf(best);
          return this.finite(cell, x, 1n);
        }
        return cell;
      }
    }
  }

  /** A sum over no non-null value (its result is null). */
  private empty(g: number): boolean {
    return this.scale[g] !== EXACT && Number.isNaN(this.n[g]);
  }

  /** `x`, or an `overflow` error naming the result column when it is beyond the double range. */
  private finite(x: number, exact: ExactSum, divisor: bigint): number {
    if (Number.isFinite(x)) return x;
    const l = this.label;
    const about = divisor === 1n ? magnitude(exact.m, exact.e) : magnitude(exact.m / divisor, exact.e);
    throw new QueryError({
      code: "overflow",
      detail: `'${l.alias}' (${l.exprText} with ${l.method}) is about ${about}, ${RANGE}`,
      position: l.pos,
      hint: `${l.method} a scaled value instead (e.g. ${l.exprText} divby 1000000), or filter out the rows that make it this large`,
    });
  }

  /** Frees the state (after the results were read). */
  clear(): void {
    this.n.length = 0;
    this.scale.length = 0;
    this.cnt.length = 0;
    this.exact.clear();
    this.best.length = 0;
    this.cell.length = 0;
    this.seen.length = 0;
  }
}

/**
 * The key `countdistinct` counts: the value itself, except an exact Decimal, which counts as the
 * number it equals when a double holds it exactly (so it meets number cells of the same value),
 * and by its canonical text otherwise (two decimals that round to one double stay distinct).
 */
function distinctKey(v: Exclude<RV, null>): unknown {
  if (!(v instanceof Decimal)) return v;
  const x = D.toNumber(v);
  return Number.isFinite(x) && D.compare(D.fromNumber(x), v) === 0 ? x : `decimal:${D.toString(v)}`;
}

// ------------------------------------------------------------------ groupby / aggregate

interface ItemPlan {
  /** Value fed to the accumulator; undefined for `$count`. */
  get?: (r: Row) => RV;
  /**
   * min/max of a plain column whose values are not its cells (integers, date-times): the column of
   * the cell to keep, so the result is the cell exactly as the service sent it.
   */
  cellCol?: number;
  /** A plain column of a type whose cells are their values (decimal, text, date, boolean). */
  direct?: number;
  kind: Kind;
  type: ColumnType;
  label: Label;
  column: Column;
}

/** A compiled grouping: its result columns, and fresh state for one run. */
interface GroupPlan {
  columns: Column[];
  open(): GroupState;
}

interface GroupState {
  add(r: Row): void;
  /** Emits one row per group, in order of first appearance, then frees the groups. */
  flush(emit: (row: CellValue[]) => void): void;
}

function groupPlan(
  cols: Column[],
  groupRefs: Extract<ApplyStep, { k: "groupby" }>["columns"],
  inner: ApplyStep[],
  always: boolean,
  opts: ApplyCompileOptions,
): GroupPlan {
  const resolver = new ColumnResolver(cols);
  const keys: number[] = [];
  const grouped = new Set<number>();
  for (const ref of groupRefs) {
    const i = resolver.resolve(ref);
    if (grouped.has(i)) {
      throw new QueryError({ code: "invalid_value", detail: `column '${cols[i].name}' is grouped by twice`, position: ref.pos });
    }
    grouped.add(i);
    keys.push(i);
  }
  // Inner row-wise steps, then at most one aggregate, which must be last.
  let run: RowRun | undefined;
  let agg: Extract<ApplyStep, { k: "aggregate" }> | undefined;
  for (const st of inner) {
    if (agg) {
      throw new QueryError({ code: "syntax", detail: "nothing can follow aggregate(...) inside groupby", position: st.pos, expected: "')'" });
    }
    if (st.k === "filter" || st.k === "compute") {
      run ??= new RowRun(cols, opts);
      run.step(st);
    } else if (st.k === "aggregate") {
      agg = st;
    } else {
      throw new QueryError({
        code: "syntax",
        detail: "groupby inside groupby is not supported; chain them with '/' instead",
        position: st.pos,
        expected: "aggregate, filter or compute",
      });
    }
  }
  if (inner.length > 0 && !agg) {
    throw new QueryError({
      code: "syntax",
      detail: "the transformations inside groupby must end with aggregate(...)",
      position: inner[inner.length - 1].pos,
      expected: "aggregate(...)",
    });
  }
  const innerCols = run ? run.columns() : cols;
  const rowFn = run?.runner() ?? null;
  // Data Aggregation 4.0: an alias must not collide with a property of the input set.
  const taken = new Set(innerCols.map((c) => c.name));
  const itemCompiler = new Compiler(innerCols, { now: opts.now });
  const plans: ItemPlan[] = agg ? agg.items.map((item) => planItem(itemCompiler, item, taken)) : [];
  const keyCols = keys.map((i) => ({ ...cols[i] }));
  const outColumns = [...keyCols, ...plans.map((p) => p.column)];
  const datetimeKey = keys.map((i) => cols[i].type === "datetime");
  const nk = keys.length;
  const np = plans.length;

  return {
    columns: outColumns,
    open(): GroupState {
      const accs = plans.map((p) => new AccColumn(p.kind, p.type, p.label, p.cellCol !== undefined));
      /** The grouping cells of group g are keyCells[g * nk ... g * nk + nk - 1]. */
      const keyCells: CellValue[] = [];
      let groups = 0;
      const newGroup = (r: Row): number => {
        for (let k = 0; k < nk; k++) keyCells.push(r[keys[k]]);
        for (let p = 0; p < np; p++) accs[p].init();
        return groups++;
      };
      // Nested maps, one level per grouping column, the last one mapping to the group's id: no key
      // strings to build per row.
      const root = new Map<unknown, unknown>();
      const keyOf = (r: Row, k: number): unknown => {
        const cell = r[keys[k]]!;
        return datetimeKey[k] && cell !== null ? Date.parse(cell as string) : cell;
      };
      // aggregate(...) alone: one group that exists even when no row arrives.
      if (always) newGroup([]);
      return {
        add(r) {
          let g: number;
          if (always) g = 0;
          else {
            let level: Map<unknown, unknown> = root;
            for (let k = 0; k < nk - 1; k++) {
              const key = keyOf(r, k);
              let sub = level.get(key) as Map<unknown, unknown> | undefined;
              if (!sub) {
                sub = new Map();
                level.set(key, sub);
              }
              level = sub;
            }
            const last = keyOf(r, nk - 1);
            const hit = level.get(last) as number | undefined;
            if (hit === undefined) {
              g = newGroup(r);
              level.set(last, g);
            } else g = hit;
          }
          const x = rowFn === null ? r : rowFn(r);
          if (x === null) return;
          for (let p = 0; p < np; p++) {
            const plan = plans[p];
            // A plain column whose cells are the values themselves is read directly (no call per row).
            const v = plan.direct !== undefined ? x[plan.direct]! : plan.get ? plan.get(x) : null;
            accs[p].add(g, v, plan.cellCol === undefined ? undefined : x[plan.cellCol]!);
          }
        },
        flush(emit) {
          root.clear();
          for (let g = 0; g < groups; g++) {
            const out = new Array<CellValue>(nk + np);
            for (let k = 0; k < nk; k++) out[k] = keyCells[g * nk + k]!;
            for (let p = 0; p < np; p++) out[nk + p] = accs[p].result(g);
            emit(out);
          }
          keyCells.length = 0;
          groups = 0;
          for (const a of accs) a.clear();
        },
      };
    },
  };
}

const TYPE_WORD: Record<string, string> = {
  text: "text",
  integer: "a number",
  decimal: "a number",
  boolean: "true/false",
  date: "a date",
  datetime: "a date-time",
  null: "null",
};

function planItem(compiler: Compiler, item: AggregateItem, taken: Set<string>): ItemPlan {
  checkAlias(item.alias, item.aliasPos, taken);
  if (item.k === "count") {
    return {
      kind: Kind.Count,
      type: "integer",
      label: { alias: item.alias, method: "$count", exprText: "$count", pos: item.pos },
      column: { name: item.alias, type: "integer", nullable: false },
    };
  }
  const c: Compiled = compiler.compile(item.expr);
  const t = c.t;
  const numeric = t === "integer" || t === "decimal";
  const fail = (want: string): never => {
    throw new QueryError({
      code: "type_mismatch",
      detail: `${item.method} needs ${want}, but '${item.exprText}' is ${TYPE_WORD[t]}`,
      position: item.pos,
    });
  };
  if (t === "null") fail("a column or expression with a type");
  const plainCol = item.expr.k === "col" ? compiler.resolver.resolve(item.expr) : undefined;
  // Integer cells beyond 2^53 are digit strings and date-times compare as instants: those go through
  // the compiled reader; other plain columns are read as they are.
  const direct = plainCol !== undefined && t !== "integer" && t !== "datetime" ? plainCol : undefined;
  const base = plainCol !== undefined ? compiler.columns[plainCol] : undefined;
  const label: Label = { alias: item.alias, method: item.method, exprText: item.exprText, pos: item.pos };
  const type = t as ColumnType;
  switch (item.method) {
    case "sum":
      if (!numeric) fail("numbers");
      return { get: c.f, direct, kind: type === "integer" ? Kind.SumInteger : Kind.SumDecimal, type, label, column: { name: item.alias, type, nullable: true } };
    case "average":
      if (!numeric) fail("numbers");
      return { get: c.f, direct, kind: Kind.Average, type: "decimal", label, column: { name: item.alias, type: "decimal", nullable: true } };
    case "min":
    case "max": {
      const column: Column = { name: item.alias, type, nullable: true };
      if (base?.sourceType) column.sourceType = base.sourceType;
      const cellCol = direct === undefined ? plainCol : undefined;
      return { get: c.f, direct, cellCol, kind: item.method === "max" ? Kind.Max : Kind.Min, type, label, column };
    }
    case "countdistinct":
      return { get: c.f, direct, kind: Kind.CountDistinct, type, label, column: { name: item.alias, type: "integer", nullable: false } };
  }
}
