/**
 * `$apply` evaluation (OData Data Aggregation 4.0): transformations compiled once against a column
 * list into a push pipeline. Rows are pushed one at a time and only what a transformation needs is
 * kept: `filter` and `compute` keep nothing, `groupby`/`aggregate` keep one accumulator set per
 * group. So a table far larger than a worksheet can be summarised as it streams in.
 *
 * Decisions (the extension leaves them open, or the flat table needs them):
 * - Groups come out in order of first appearance. A `null` grouping value is a group of its own.
 * - `sum` of integers is an integer (exact, beyond 2^53 too); of decimals an exact decimal; `average`
 *   is a decimal (the exact quotient, carried far past a double's 17 digits, then rounded once); `$count` and `countdistinct` are
 *   integers. Decimal results become the table's number cells only at the very end.
 * - `sum`/`min`/`max`/`average` of no non-null values are `null`; counts of nothing are 0.
 *   `aggregate(...)` without groupby always yields one row, even over no rows.
 * - Inside `groupby((...), ...)` only `filter`/`compute` followed by one `aggregate` are accepted;
 *   a group whose rows the inner filter removes still appears (its aggregates over no rows).
 * - `min`/`max` apply to numbers, text, dates, date-times and booleans (false < true).
 */
import type { CellValue, Column, ColumnType } from "../table/model";
import { ColumnResolver } from "./columns";
import { Compiler, type Compiled, type Row, type RV } from "./compile";
import { DECIMAL, type DecimalOps, type DecimalValue } from "./decimalOps";
import { QueryError } from "./errors";
import { parseApply, type AggregateItem, type ApplyStep } from "./applyParser";

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
  /** Decimal arithmetic for sums and averages (default: {@link DECIMAL}). */
  decimal?: DecimalOps;
}

interface Stage {
  columns: Column[];
  wrap(next: RowSink): RowSink;
}

/** Compiles `$apply` text against `columns`. Throws {@link QueryError} (without `option`). */
export function compileApply(columns: readonly Column[], text: string, opts: ApplyCompileOptions = {}): CompiledApply {
  const steps = parseApply(text);
  let cols: Column[] = columns.map((c) => ({ ...c }));
  const stages: Stage[] = [];
  for (const step of steps) {
    const s = compileStep(cols, step, opts);
    stages.push(s);
    cols = s.columns;
  }
  const out = cols;
  const open = (sink: RowSink): RowSink => {
    let next = sink;
    for (let i = stages.length - 1; i >= 0; i--) next = stages[i].wrap(next);
    return next;
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

function compileStep(cols: Column[], step: ApplyStep, opts: ApplyCompileOptions): Stage {
  switch (step.k) {
    case "filter": {
      const keep = new Compiler(cols, { now: opts.now }).filter(step.expr);
      return {
        columns: cols,
        wrap: (next) => ({
          row: (r) => {
            if (keep(r)) next.row(r);
          },
          end: () => next.end(),
        }),
      };
    }
    case "compute": {
      const f = computeFn(cols, step, opts);
      return {
        columns: f.columns,
        wrap: (next) => ({ row: (r) => next.row(f.map(r)), end: () => next.end() }),
      };
    }
    case "aggregate":
      return groupStage(cols, [], [step], step.pos, true, opts);
    case "groupby":
      return groupStage(cols, step.columns, step.steps, step.pos, false, opts);
  }
}

function computeFn(cols: Column[], step: Extract<ApplyStep, { k: "compute" }>, opts: ApplyCompileOptions): { columns: Column[]; map: (r: Row) => CellValue[] } {
  const compiler = new Compiler(cols, { now: opts.now });
  const taken = new Set(cols.map((c) => c.name));
  const added: Column[] = [];
  const fns: Array<(r: Row) => CellValue> = [];
  for (const item of step.items) {
    checkAlias(item.alias, item.aliasPos, taken);
    const c = compiler.compile(item.expr);
    const type: ColumnType = c.t === "null" ? "text" : c.t;
    added.push({ name: item.alias, type, nullable: true });
    const f = c.f;
    fns.push((r) => toCell(f(r), type));
  }
  const n = cols.length;
  const m = fns.length;
  return {
    columns: [...cols, ...added],
    map: (r) => {
      const out = new Array<CellValue>(n + m);
      for (let i = 0; i < n; i++) out[i] = r[i]!;
      for (let j = 0; j < m; j++) out[n + j] = fns[j](r);
      return out;
    },
  };
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
      return normInt(typeof v === "bigint" ? v : BigInt(String(v)));
    case "decimal":
      return typeof v === "number" ? v : Number(String(v));
    case "datetime":
      return typeof v === "number" ? isoFromMs(v) : String(v);
    case "boolean":
      return v === true;
    default:
      return String(v);
  }
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
function normInt(b: bigint): number | string {
  return b <= SAFE && b >= -SAFE ? Number(b) : b.toString();
}

function isoFromMs(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? iso.slice(0, 19) + "Z" : iso;
}

// ------------------------------------------------------------------ accumulators

interface Acc {
  /** `cell` is the source cell when the value is a plain column read (min/max keep it as is). */
  add(v: RV, cell?: CellValue): void;
  result(): CellValue;
}
type AccFactory = () => Acc;

const POW10: readonly number[] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** Fraction digits tried on the fast path (cells with more go to the decimal library). */
const MAX_FAST_DIGITS = 9;
const TWO52 = 2 ** 52;

/**
 * An exact sum. The fast path keeps a scaled integer: a number cell `x` is the decimal it prints as,
 * and when some `m / 10^k` (k ≤ 9, |m| < 2^52) is exactly the double `x`, that decimal IS `m × 10^-k`
 * (doubles that small are closer together than 10^-k, so no other k-digit decimal reads back as
 * `x`). The integer is a number while safe, then a bigint. Anything else (more digits, Decimal
 * objects) is added with {@link DecimalOps}. 0.1 + 0.2 is 3 × 10^-1: exactly 0.3.
 */
class ExactSum {
  private scale = 0;
  private n = 0;
  private big: bigint | null = null;
  private slow: DecimalValue | null = null;
  /** Count of non-null values added. */
  count = 0;
  constructor(private readonly dec: DecimalOps) {}

  add(v: RV): void {
    if (v === null) return;
    this.count++;
    if (typeof v === "bigint") return this.addScaled(0, 0, v);
    if (typeof v !== "number") return this.addSlow(v);
    if (Number.isSafeInteger(v)) return this.addScaled(v, 0, null);
    if (Number.isInteger(v) || !Number.isFinite(v)) return this.addSlow(v);
    for (let k = 1; k <= MAX_FAST_DIGITS; k++) {
      const p = POW10[k];
      const m = Math.round(v * p);
      if (m / p === v) {
        if (m < TWO52 && m > -TWO52) return this.addScaled(m, k, null);
        break;
      }
    }
    this.addSlow(v);
  }

  private addSlow(v: number | bigint | string | boolean | object): void {
    const d = this.dec.from(typeof v === "object" ? (v as { toString(): string }).toString() : v);
    this.slow = this.slow === null ? d : this.dec.add(this.slow, d);
  }

  /** Adds `m × 10^-k` (or the bigint `b`, scale 0). */
  private addScaled(m: number, k: number, b: bigint | null): void {
    if (k > this.scale) {
      const d = k - this.scale;
      if (this.big !== null) this.big *= 10n ** BigInt(d);
      else {
        const n2 = this.n * POW10[d];
        if (Number.isSafeInteger(n2)) this.n = n2;
        else this.big = BigInt(this.n) * 10n ** BigInt(d);
      }
      this.scale = k;
    }
    if (b === null && k < this.scale) {
      const m2 = m * POW10[this.scale - k];
      if (Number.isSafeInteger(m2)) m = m2;
      else b = BigInt(m) * 10n ** BigInt(this.scale - k);
    } else if (b !== null && this.scale > 0) {
      b *= 10n ** BigInt(this.scale);
    }
    if (b !== null || this.big !== null) {
      this.big = (this.big ?? BigInt(this.n)) + (b ?? BigInt(m));
      return;
    }
    const s = this.n + m;
    if (Number.isSafeInteger(s)) this.n = s;
    else this.big = BigInt(this.n) + BigInt(m);
  }

  /** The exact total, or null when nothing was added. */
  total(): DecimalValue | null {
    if (this.count === 0) return null;
    const int = this.big ?? this.n;
    const fast = this.dec.from(this.scale === 0 ? String(int) : `${int}e-${this.scale}`);
    return this.slow === null ? fast : this.dec.add(fast, this.slow);
  }

  /**
   * The average as the number nearest to the exact quotient (taken to 40 more fractional digits
   * than the sum has, exactly, in BigInt), or null. Only the rare sum with a part outside the fast
   * path divides with {@link DecimalOps}.
   */
  average(): CellValue {
    if (this.count === 0) return null;
    if (this.slow === null) {
      const q = (BigInt(this.big ?? this.n) * 10n ** 40n) / BigInt(this.count);
      return Number(`${q}e-${this.scale + 40}`);
    }
    return this.dec.toNumber(this.dec.div(this.total()!, this.dec.from(this.count)));
  }

  /** The total as an integer cell (only for sums of integers: scale 0, nothing on the slow path). */
  integerTotal(): CellValue {
    if (this.count === 0) return null;
    if (this.scale === 0 && this.slow === null) return this.big !== null ? normInt(this.big) : this.n;
    return normInt(BigInt(String(this.total())));
  }
}

const enum Kind {
  SumInteger,
  SumDecimal,
  Average,
  Min,
  Max,
  CountDistinct,
  Count,
}

/**
 * One accumulator class for every method, switching on its kind: the per-row call site then sees one
 * class (monomorphic, inlined) instead of five closure shapes, which measured several times faster
 * on a 5-aggregate summary.
 */
class Accumulator implements Acc {
  private readonly sum: ExactSum | null;
  private best: RV = null;
  private cell: CellValue = null;
  private readonly seen: Set<unknown> | null;
  private n = 0;
  constructor(
    private readonly kind: Kind,
    private readonly type: ColumnType,
    private readonly dec: DecimalOps,
  ) {
    this.sum = kind === Kind.SumInteger || kind === Kind.SumDecimal || kind === Kind.Average ? new ExactSum(dec) : null;
    this.seen = kind === Kind.CountDistinct ? new Set() : null;
  }

  add(v: RV, c?: CellValue): void {
    switch (this.kind) {
      case Kind.Count:
        this.n++;
        return;
      case Kind.SumInteger:
      case Kind.SumDecimal:
      case Kind.Average:
        this.sum!.add(v);
        return;
      case Kind.CountDistinct:
        // Exact decimal objects (if an expression yields them) count by the number they stand for,
        // so they meet plain number cells of the same value.
        if (v !== null) this.seen!.add(typeof v === "object" ? Number(String(v)) : v);
        return;
      default: {
        if (v === null) return;
        const key = typeof v === "object" ? Number(String(v)) : v;
        const best = this.best;
        // One column type per accumulator, so the two values are of one kind (or number/bigint).
        if (best === null || (this.kind === Kind.Max ? (key as number) > (best as number) : (key as number) < (best as number))) {
          this.best = key;
          this.cell = c !== undefined ? c : toCell(v, this.type);
        }
      }
    }
  }

  result(): CellValue {
    switch (this.kind) {
      case Kind.Count:
        return this.n;
      case Kind.SumInteger:
        return this.sum!.integerTotal();
      case Kind.SumDecimal: {
        const t = this.sum!.total();
        return t === null ? null : this.dec.toNumber(t);
      }
      case Kind.Average:
        return this.sum!.average();
      case Kind.CountDistinct:
        return this.seen!.size;
      default:
        return this.cell;
    }
  }
}

function accumulator(kind: Kind, type: ColumnType, dec: DecimalOps): AccFactory {
  return () => new Accumulator(kind, type, dec);
}

// ------------------------------------------------------------------ groupby / aggregate

interface ItemPlan {
  /** Value fed to the accumulator; undefined for `$count`. */
  get?: (r: Row) => RV;
  /** The cell to keep for min/max when the expression is a plain column (keeps its exact text). */
  cellCol?: number;
  /** A plain column of a type whose cells are their values (decimal, text, date, boolean). */
  direct?: number;
  make: AccFactory;
  column: Column;
}

function groupStage(
  cols: Column[],
  groupRefs: Extract<ApplyStep, { k: "groupby" }>["columns"],
  inner: ApplyStep[],
  pos: number,
  always: boolean,
  opts: ApplyCompileOptions,
): Stage {
  const dec = opts.decimal ?? DECIMAL;
  const resolver = new ColumnResolver(cols);
  const keys: number[] = [];
  for (const ref of groupRefs) {
    const i = resolver.resolve(ref);
    if (keys.includes(i)) {
      throw new QueryError({ code: "invalid_value", detail: `column '${cols[i].name}' is grouped by twice`, position: ref.pos });
    }
    keys.push(i);
  }
  // Inner row-wise steps, then at most one aggregate, which must be last.
  let innerCols = cols;
  const rowFns: Array<(r: Row) => Row | null> = [];
  let agg: Extract<ApplyStep, { k: "aggregate" }> | undefined;
  for (let s = 0; s < inner.length; s++) {
    const st = inner[s];
    if (agg) {
      throw new QueryError({ code: "syntax", detail: "nothing can follow aggregate(...) inside groupby", position: st.pos, expected: "')'" });
    }
    if (st.k === "filter") {
      const keep = new Compiler(innerCols, { now: opts.now }).filter(st.expr);
      rowFns.push((r) => (keep(r) ? r : null));
    } else if (st.k === "compute") {
      const f = computeFn(innerCols, st, opts);
      innerCols = f.columns;
      rowFns.push(f.map);
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
  // Data Aggregation 4.0: an alias must not collide with a property of the input set.
  const taken = new Set([...cols, ...innerCols].map((c) => c.name));
  const plans: ItemPlan[] = agg ? agg.items.map((item) => planItem(innerCols, item, taken, dec, opts)) : [];
  const keyCols = keys.map((i) => ({ ...cols[i] }));
  const outColumns = [...keyCols, ...plans.map((p) => p.column)];
  const datetimeKey = keys.map((i) => cols[i].type === "datetime");

  return {
    columns: outColumns,
    wrap(next) {
      interface Group {
        keys: CellValue[];
        accs: Acc[];
      }
      const groups: Group[] = [];
      const newGroup = (keyCells: CellValue[]): Group => {
        const g = { keys: keyCells, accs: plans.map((p) => p.make()) };
        groups.push(g);
        return g;
      };
      // Nested maps, one level per grouping column: no key strings to build per row.
      const root = new Map<unknown, unknown>();
      const nk = keys.length;
      // aggregate(...) alone: one group that exists even when no row arrives.
      const whole = always ? newGroup([]) : undefined;
      const np = plans.length;
      const feed = (g: Group, r: Row) => {
        let x: Row | null = r;
        for (let f = 0; f < rowFns.length && x !== null; f++) x = rowFns[f](x);
        if (x === null) return;
        for (let p = 0; p < np; p++) {
          const plan = plans[p];
          // A plain column whose cells are the values themselves is read directly (no call per row).
          const v = plan.direct !== undefined ? x[plan.direct]! : plan.get ? plan.get(x) : null;
          g.accs[p].add(v, plan.cellCol === undefined ? undefined : x[plan.cellCol]!);
        }
      };
      return {
        row(r) {
          if (whole) {
            feed(whole, r);
            return;
          }
          let level: Map<unknown, unknown> = root;
          for (let k = 0; k < nk - 1; k++) {
            const cell = r[keys[k]]!;
            const key = datetimeKey[k] && cell !== null ? Date.parse(cell as string) : cell;
            let sub = level.get(key) as Map<unknown, unknown> | undefined;
            if (!sub) {
              sub = new Map();
              level.set(key, sub);
            }
            level = sub;
          }
          const lastCell = r[keys[nk - 1]]!;
          const last = datetimeKey[nk - 1] && lastCell !== null ? Date.parse(lastCell as string) : lastCell;
          let g = level.get(last) as Group | undefined;
          if (!g) {
            const keyCells = new Array<CellValue>(nk);
            for (let k = 0; k < nk; k++) keyCells[k] = r[keys[k]]!;
            g = newGroup(keyCells);
            level.set(last, g);
          }
          feed(g, r);
        },
        end() {
          for (const g of groups) {
            const out = new Array<CellValue>(nk + np);
            for (let k = 0; k < nk; k++) out[k] = g.keys[k]!;
            for (let p = 0; p < np; p++) out[nk + p] = g.accs[p].result();
            next.row(out);
          }
          groups.length = 0;
          root.clear();
          next.end();
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

function planItem(cols: Column[], item: AggregateItem, taken: Set<string>, dec: DecimalOps, opts: ApplyCompileOptions): ItemPlan {
  checkAlias(item.alias, item.aliasPos, taken);
  if (item.k === "count") {
    return { make: accumulator(Kind.Count, "integer", dec), column: { name: item.alias, type: "integer", nullable: false } };
  }
  const c: Compiled = new Compiler(cols, { now: opts.now }).compile(item.expr);
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
  const plainCol = item.expr.k === "col" ? new ColumnResolver(cols).resolve(item.expr) : undefined;
  // Integer cells beyond 2^53 are digit strings and date-times compare as instants: those go through
  // the compiled reader; other plain columns are read as they are.
  const direct = plainCol !== undefined && t !== "integer" && t !== "datetime" ? plainCol : undefined;
  const base = plainCol !== undefined ? cols[plainCol] : undefined;
  switch (item.method) {
    case "sum":
      if (!numeric) fail("numbers");
      return { get: c.f, direct, make: accumulator(t === "integer" ? Kind.SumInteger : Kind.SumDecimal, t as ColumnType, dec), column: { name: item.alias, type: t as ColumnType, nullable: true } };
    case "average":
      if (!numeric) fail("numbers");
      return { get: c.f, direct, make: accumulator(Kind.Average, "decimal", dec), column: { name: item.alias, type: "decimal", nullable: true } };
    case "min":
    case "max": {
      const type = t as ColumnType;
      const column: Column = { name: item.alias, type, nullable: true };
      if (base?.sourceType) column.sourceType = base.sourceType;
      return { get: c.f, direct, cellCol: plainCol, make: accumulator(item.method === "max" ? Kind.Max : Kind.Min, type, dec), column };
    }
    case "countdistinct":
      return { get: c.f, direct, make: accumulator(Kind.CountDistinct, "integer", dec), column: { name: item.alias, type: "integer", nullable: false } };
  }
}
