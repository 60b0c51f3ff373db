/**
 * Type-checks an expression tree against a table's columns and turns it into closures, once per
 * query, so rows are evaluated without re-reading the tree.
 *
 * Runtime values: text and dates are strings (`YYYY-MM-DD` orders correctly as text); integers are
 * `number`, or `bigint` beyond 2^53; decimals are `number` (a stored cell or a literal that a double
 * holds exactly: it stands for the decimal it prints as) or an exact {@link Decimal} (results of
 * arithmetic, literals a double cannot hold); date-times are epoch milliseconds (so offsets compare
 * by instant); booleans are booleans (`false < true`); `null` is missing.
 */
import type { CellValue, Column } from "../table/model";
import type { BinaryOp, Expr } from "./ast";
import { ColumnResolver, editDistance } from "./columns";
import * as D from "./decimal";
import { Decimal } from "./decimal";
import { QueryError } from "./errors";
import { startPos } from "./parser";

/** Static type of an expression. `null` is the type of the `null` literal. */
export type VType = "text" | "integer" | "decimal" | "boolean" | "date" | "datetime" | "null";
export type RV = string | number | bigint | Decimal | boolean | null;
/** A non-null number of either numeric type. */
type Num = number | bigint | Decimal;
export type Row = readonly CellValue[];
export type Eval = (row: Row) => RV;

export interface Compiled {
  t: VType;
  f: Eval;
  /** Present when the value does not depend on the row (folded at compile time). */
  c?: { v: RV };
  /** Column index when this is a plain column read whose cells are used as they are. */
  col?: number;
  /** True when the value is never null (comparisons), so `and`/`or` can skip three-valued logic. */
  nn?: boolean;
}

/** Options of a compilation. */
export interface CompileOptions {
  /** Instant that `now()` returns (epoch ms); fixed per query so every row sees the same time. */
  now?: number;
}

const TYPE_NAME: Record<VType, string> = {
  text: "text",
  integer: "number",
  decimal: "number",
  boolean: "boolean",
  date: "date",
  datetime: "date-time",
  null: "null",
};

const isNum = (t: VType) => t === "integer" || t === "decimal";
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export { startPos };

function typeError(detail: string, pos: number, hint?: string): never {
  throw new QueryError({ code: "type_mismatch", detail, position: pos, hint });
}

function konst(t: VType, v: RV): Compiled {
  return { t, f: () => v, c: { v } };
}

/** Keeps bigints only where they are needed, so equal values have one representation. */
function normBig(v: bigint): number | bigint {
  return v <= SAFE && v >= -SAFE ? Number(v) : v;
}

/** Compiles `e` against `columns` (or against a resolver shared by several compilers). */
export class Compiler {
  readonly resolver: ColumnResolver;
  constructor(
    columns: readonly Column[] | ColumnResolver,
    private readonly opts: CompileOptions = {},
  ) {
    this.resolver = columns instanceof ColumnResolver ? columns : new ColumnResolver(columns);
  }

  get columns(): readonly Column[] {
    return this.resolver.columns;
  }

  /** A `$filter`: must be a condition; the result keeps the rows where it is `true`. */
  filter(e: Expr): (row: Row) => boolean {
    const c = this.compile(e);
    if (c.t !== "boolean" && c.t !== "null") {
      typeError(`the filter must be a true/false condition, but this expression is ${TYPE_NAME[c.t]}`, startPos(e));
    }
    if (c.c) {
      const keep = c.c.v === true;
      return () => keep;
    }
    const f = c.f;
    return (row) => f(row) === true;
  }

  compile(e: Expr): Compiled {
    switch (e.k) {
      case "lit":
        return konst(e.type, e.value instanceof Decimal ? plainDecimal(e.value) : e.value);
      case "col":
        return this.column(e);
      case "neg":
        return this.negate(e);
      case "not":
        return this.not(e);
      case "bin":
        return this.binary(e);
      case "in":
        return this.inList(e);
      case "call":
        return this.call(e);
    }
  }

  private column(e: Extract<Expr, { k: "col" }>): Compiled {
    const i = this.resolver.resolve({ name: e.name, quoted: e.quoted, pos: e.pos });
    const type = this.columns[i].type;
    switch (type) {
      case "integer":
        return {
          t: "integer",
          f: (row) => {
            const v = row[i] as number | string | null;
            return typeof v === "string" ? BigInt(v) : v;
          },
          col: i,
        };
      case "datetime":
        return {
          t: "datetime",
          f: (row) => {
            const v = row[i] as string | null;
            if (v === null) return null;
            const ms = Date.parse(v);
            return Number.isNaN(ms) ? null : ms;
          },
        };
      default:
        return { t: type, f: (row) => row[i], col: i };
    }
  }

  private negate(e: Extract<Expr, { k: "neg" }>): Compiled {
    const a = this.compile(e.arg);
    if (a.t === "null") return konst("null", null);
    if (!isNum(a.t)) typeError(`'-' needs a number, not ${TYPE_NAME[a.t]}`, e.pos);
    const f = a.f;
    return this.fold(a.t, [a], (row) => {
      const v = f(row) as Num | null;
      return v === null ? null : typeof v === "number" ? -v : typeof v === "bigint" ? normBig(-v) : D.neg(v);
    });
  }

  private not(e: Extract<Expr, { k: "not" }>): Compiled {
    const a = this.compile(e.arg);
    if (a.t !== "boolean" && a.t !== "null") {
      // Most often `not Status eq 'x'`: in OData `not` binds tighter than the comparison.
      typeError(`'not' needs a true/false condition, not ${TYPE_NAME[a.t]}`, e.pos, "'not' applies to the operand right after it; write not (a eq b) to negate a comparison");
    }
    const f = a.f;
    if (a.nn && !a.c) return { t: "boolean", f: (row) => !f(row), nn: true };
    return this.fold("boolean", [a], (row) => {
      const v = f(row);
      return v === null ? null : !v;
    });
  }

  /** Folds to a constant when every operand is constant. */
  private fold(t: VType, parts: Compiled[], f: Eval): Compiled {
    if (parts.every((p) => p.c)) return konst(t, f([]));
    return { t, f };
  }

  private binary(e: Extract<Expr, { k: "bin" }>): Compiled {
    const l = this.compile(e.left);
    const r = this.compile(e.right);
    switch (e.op) {
      case "and":
      case "or":
        return this.logical(e.op, l, r, e);
      case "eq":
      case "ne":
      case "gt":
      case "ge":
      case "lt":
      case "le":
        this.checkComparable(e.op, l, r, e);
        return this.comparison(e.op, l, r);
      default:
        return this.arithmetic(e.op, l, r, e);
    }
  }

  private logical(op: "and" | "or", l: Compiled, r: Compiled, e: Extract<Expr, { k: "bin" }>): Compiled {
    for (const [side, node] of [
      [l, e.left],
      [r, e.right],
    ] as const) {
      if (side.t !== "boolean" && side.t !== "null") {
        typeError(`'${op}' needs true/false conditions on both sides, but this is ${TYPE_NAME[side.t]}`, startPos(node));
      }
    }
    const a = l.f;
    const b = r.f;
    if (!l.c && !r.c && l.nn) {
      // Left side is plain true/false: `true and y` is y, `false or y` is y, null or not.
      const f: Eval =
        op === "and"
          ? r.nn
            ? (row) => (a(row) as boolean) && b(row)
            : (row) => (a(row) ? b(row) : false)
          : r.nn
            ? (row) => a(row) || b(row)
            : (row) => (a(row) ? true : b(row));
      return { t: "boolean", f, nn: r.nn === true };
    }
    // Three-valued logic: false wins over null in `and`, true wins over null in `or`.
    const f: Eval =
      op === "and"
        ? (row) => {
            const x = a(row);
            if (x === false) return false;
            const y = b(row);
            if (y === false) return false;
            return x === true && y === true ? true : null;
          }
        : (row) => {
            const x = a(row);
            if (x === true) return true;
            const y = b(row);
            if (y === true) return true;
            return x === false && y === false ? false : null;
          };
    return this.fold("boolean", [l, r], f);
  }

  private checkComparable(op: string, l: Compiled, r: Compiled, e: Extract<Expr, { k: "bin" }> | Extract<Expr, { k: "in" }>): void {
    const lt = l.t;
    const rt = r.t;
    if (lt === "null" || rt === "null") return;
    if (lt === rt || (isNum(lt) && isNum(rt))) return;
    let hint: string | undefined;
    if ((lt === "date" && rt === "datetime") || (lt === "datetime" && rt === "date")) {
      hint =
        "use date(...) on the date-time side to compare calendar days, or compare with a date-time literal such as 2025-01-31T00:00:00Z";
    } else if (lt === "text" && (rt === "date" || rt === "datetime" || isNum(rt))) {
      hint = "put quotes around the value to compare as text";
    } else if ((isNum(lt) || lt === "date" || lt === "datetime" || lt === "boolean") && rt === "text") {
      hint = `write the ${TYPE_NAME[lt]} value without quotes`;
    }
    typeError(`cannot compare ${TYPE_NAME[lt]} with ${TYPE_NAME[rt]} using '${op}'`, e.pos, hint);
  }

  private comparison(op: BinaryOp, l: Compiled, r: Compiled): Compiled {
    // Left to right: a null left operand decides gt/ge/lt/le (false) before the right one runs.
    if (l.c && l.c.v === null && op !== "eq" && op !== "ne") return { t: "boolean", f: () => false, nn: true };
    if (l.c && !r.c) {
      const flipped: Partial<Record<BinaryOp, BinaryOp>> = { gt: "lt", lt: "gt", ge: "le", le: "ge" };
      return this.comparison(flipped[op] ?? op, r, l);
    }
    if (r.c && !l.c) return { t: "boolean", f: compareWithConstant(op, l, r.c.v, r.t), nn: true };
    const a = l.f;
    const b = r.f;
    const cmp = comparator(l.t === "null" ? r.t : l.t);
    let f: Eval;
    switch (op) {
      case "eq":
        f = (row) => {
          const x = a(row);
          const y = b(row);
          return x === null || y === null ? x === y : cmp(x, y) === 0;
        };
        break;
      case "ne":
        f = (row) => {
          const x = a(row);
          const y = b(row);
          return x === null || y === null ? x !== y : cmp(x, y) !== 0;
        };
        break;
      default: {
        const test = RELATIONAL[op as Relational];
        f = (row) => {
          const x = a(row);
          if (x === null) return false;
          const y = b(row);
          return y !== null && test(cmp(x, y));
        };
      }
    }
    return { ...this.fold("boolean", [l, r], f), nn: true };
  }

  private arithmetic(op: BinaryOp, l: Compiled, r: Compiled, e: Extract<Expr, { k: "bin" }>): Compiled {
    for (const side of [l, r]) {
      if (side.t !== "null" && !isNum(side.t)) {
        typeError(`'${op}' needs numbers, but one side is ${TYPE_NAME[side.t]}`, e.pos, side.t === "date" || side.t === "datetime" ? "date arithmetic is not supported" : undefined);
      }
    }
    // Left to right, stopping once the result is decided: a null left operand decides (null); a
    // null right operand still lets the left one run (it may fail, e.g. divide by zero).
    if (l.t === "null") return konst("null", null);
    if (r.t === "null") {
      if (l.c) return konst("null", null);
      const left = l.f;
      return {
        t: "null",
        f: (row) => {
          left(row);
          return null;
        },
      };
    }
    const intResult = l.t === "integer" && r.t === "integer" && op !== "divby";
    const a = l.f;
    const b = r.f;
    const fn = arithmeticOp(op, intResult, e);
    return this.fold(intResult ? "integer" : "decimal", [l, r], (row) => {
      const x = a(row);
      if (x === null) return null;
      const y = b(row);
      return y === null ? null : fn(x as Num, y as Num);
    });
  }

  private inList(e: Extract<Expr, { k: "in" }>): Compiled {
    const a = this.compile(e.arg);
    const values: RV[] = [];
    for (const item of e.items) {
      const c = this.compile(item);
      if (!c.c) {
        throw new QueryError({ code: "syntax", detail: "the values in 'in (...)' must be literals", position: startPos(item) });
      }
      this.checkComparable("in", a, c, { ...e, pos: startPos(item) });
      values.push(c.c.v);
    }
    const hasNull = values.includes(null);
    const plain = values.filter((v): v is Exclude<RV, null> => v !== null);
    const f0 = a.f;
    const col = a.col;
    let f: Eval;
    const setSafe = a.t !== "decimal" || col !== undefined; // computed decimals are Decimal objects
    if (setSafe && plain.every((v) => typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "boolean")) {
      // A Set answers in O(1); big integers (digit strings / bigints) can never equal a safe number.
      const set = new Set<unknown>(plain);
      f =
        col !== undefined && a.t !== "integer"
          ? (row) => {
              const v = row[col];
              return v === null ? hasNull : set.has(v);
            }
          : (row) => {
              const v = f0(row);
              return v === null ? hasNull : set.has(v);
            };
    } else {
      const cmp = comparator(a.t);
      f = (row) => {
        const v = f0(row);
        if (v === null) return hasNull;
        for (const x of plain) if (cmp(v, x) === 0) return true;
        return false;
      };
    }
    return { ...this.fold("boolean", [a], f), nn: true };
  }

  private call(e: Extract<Expr, { k: "call" }>): Compiled {
    const spec = FUNCTIONS[e.name];
    if (!spec) {
      let best: string | undefined;
      let bestD = Infinity;
      for (const name of Object.keys(FUNCTIONS)) {
        const d = editDistance(e.name, name);
        if (d < bestD) {
          bestD = d;
          best = name;
        }
      }
      throw new QueryError({
        code: "unknown_function",
        detail: `unknown function '${e.text}'`,
        position: e.pos,
        suggestion: best !== undefined && bestD <= 3 ? `'${best}'` : undefined,
      });
    }
    const [min, max] = [spec.params.length - (spec.optional ?? 0), spec.params.length];
    if (e.args.length < min || e.args.length > max) {
      const want = min === max ? `${min}` : `${min} or ${max}`;
      throw new QueryError({
        code: "arity",
        detail: `${e.name}() takes ${want} argument${max === 1 ? "" : "s"}, not ${e.args.length}`,
        position: e.pos,
      });
    }
    const args = e.args.map((a) => this.compile(a));
    args.forEach((a, i) => {
      const want = spec.params[i];
      if (a.t === "null" || accepts(want, a.t)) return;
      typeError(`${e.name}() argument ${i + 1} must be ${PARAM_NAME[want]}, not ${TYPE_NAME[a.t]}`, startPos(e.args[i]));
    });
    const type = typeof spec.result === "function" ? spec.result(args.map((a) => a.t)) : spec.result;
    if (e.name === "now") return konst("datetime", this.opts.now ?? Date.now());
    checkZonedLiterals(e);
    // A constant negative length fails when the query is checked, not only at a row that reaches it.
    const length = e.name === "substring" ? args[2]?.c?.v : undefined;
    if (length !== undefined && length !== null && n(length) < 0) throw negativeLength(e, length);
    const impl = e.name === "substring" ? checkedSubstring(spec.impl, e) : spec.impl;
    const fs = args.map((a) => a.f);
    const types = args.map((a) => a.t);
    let f: Eval;
    if (fs.length === 1) {
      const f0 = fs[0];
      const t0 = types[0];
      f = (row) => {
        const v = f0(row);
        return v === null ? null : impl([v], [t0]);
      };
    } else {
      f = (row) => {
        const vs: RV[] = [];
        for (const g of fs) {
          const v = g(row);
          if (v === null) return null;
          vs.push(v);
        }
        return impl(vs, types);
      };
    }
    return this.fold(type, args, f);
  }
}

type Relational = "gt" | "ge" | "lt" | "le";
const RELATIONAL: Record<Relational, (c: number) => boolean> = {
  gt: (c) => c > 0,
  ge: (c) => c >= 0,
  lt: (c) => c < 0,
  le: (c) => c <= 0,
};
type Prim = string | number | bigint | boolean;
const NATIVE: Record<Relational, (x: Prim, y: Prim) => boolean> = {
  gt: (x, y) => x > y,
  ge: (x, y) => x >= y,
  lt: (x, y) => x < y,
  le: (x, y) => x <= y,
};

const TWO53 = 2 ** 53;

/** A decimal literal as a double when the double prints as exactly that decimal (the fast path). */
function plainDecimal(d: Decimal): number | Decimal {
  const x = D.toNumber(d);
  return Number.isFinite(x) && D.compare(D.fromNumber(x), d) === 0 ? x : d;
}

function toDecimal(v: Num): Decimal {
  return typeof v === "number" ? D.fromNumber(v) : typeof v === "bigint" ? D.fromInteger(v) : v;
}

/**
 * Exact order of two numbers of any representation. Two doubles compare natively: the decimals
 * they stand for (their shortest text) are in the same order. A bigint against a double below 2^53
 * also compares natively (exact); anything else goes through {@link Decimal}.
 */
export function compareNumbers(x: Num, y: Num): number {
  // INF, -INF and NaN (only `divby` zero makes them): INF is greater than any number, -INF less,
  // each equal to itself; NaN is unordered (NaN here: equal to nothing, not less, not greater).
  if (isSpecialNumber(x) || isSpecialNumber(y)) {
    if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
    const rx = isSpecialNumber(x) ? Math.sign(x) : 0;
    const ry = isSpecialNumber(y) ? Math.sign(y) : 0;
    return rx < ry ? -1 : rx > ry ? 1 : 0;
  }
  if (typeof x === "number") {
    if (typeof y === "number") return x < y ? -1 : x > y ? 1 : 0;
    if (typeof y === "bigint" && Math.abs(x) < TWO53) return x < y ? -1 : x > y ? 1 : 0;
  } else if (typeof x === "bigint") {
    if (typeof y === "bigint") return x < y ? -1 : x > y ? 1 : 0;
    if (typeof y === "number" && Math.abs(y) < TWO53) return x < y ? -1 : x > y ? 1 : 0;
  }
  return D.compare(toDecimal(x), toDecimal(y));
}

/** Unicode code point order (OData strings are sequences of characters, not UTF-16 units). */
export function compareText(x: string, y: string): number {
  if (x === y) return 0;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const a = x.charCodeAt(i);
    const b = y.charCodeAt(i);
    if (a !== b) {
      // Only a surrogate (a code point above U+FFFF) against a unit from U+E000 up orders
      // differently by code unit than by code point.
      const sa = a >= 0xd800 && a <= 0xdfff;
      const sb = b >= 0xd800 && b <= 0xdfff;
      if (sa !== sb && (sa ? b >= 0xe000 : a >= 0xe000)) return sa ? 1 : -1;
      return a < b ? -1 : 1;
    }
  }
  return x.length < y.length ? -1 : 1;
}

const nativeCompare = (x: RV, y: RV): number => ((x as Prim) < (y as Prim) ? -1 : (x as Prim) > (y as Prim) ? 1 : 0);

/** Comparator for two non-null values of one static type (numbers of either numeric type). */
export function comparator(t: VType): (x: RV, y: RV) => number {
  if (isNum(t)) return (x, y) => compareNumbers(x as Num, y as Num);
  if (t === "text") return (x, y) => compareText(x as string, y as string);
  return nativeCompare;
}

/** True when native `<` on `c` and any string gives code point order (no unit from U+D800 up). */
const codeUnitSafe = (c: string) => !/[\ud800-\uffff]/.test(c);

/**
 * The common case `Column op literal`, specialised so a row costs one read and one compare.
 * Direct cell reads are exact for integer columns too: JS compares a digit string with a bigint
 * exactly, and a digit string beyond 2^53 with a safe number correctly (it is further from zero).
 * Decimal cells are doubles and compare natively with a literal that is a double of its own.
 */
function compareWithConstant(op: BinaryOp, l: Compiled, c: RV, ct: VType): Eval {
  const i = l.col;
  const native =
    c === null ||
    (l.t === "integer" && (typeof c === "bigint" || (typeof c === "number" && (Number.isSafeInteger(c) || Math.abs(c) < TWO53)))) ||
    (l.t === "decimal" && typeof c === "number") ||
    (l.t === "text" && (op === "eq" || op === "ne" || codeUnitSafe(c as string))) ||
    l.t === "date" ||
    l.t === "boolean";
  if (i !== undefined && native && (ct === l.t || ct === "null" || (isNum(ct) && isNum(l.t)))) {
    if (c === null) {
      if (op === "eq") return (row) => row[i] === null;
      if (op === "ne") return (row) => row[i] !== null;
      return () => false;
    }
    switch (op) {
      case "eq":
        return (row) => {
          const v = row[i];
          return v !== null && v == c;
        };
      case "ne":
        return (row) => {
          const v = row[i];
          return v === null || v != c;
        };
      case "gt":
        return (row) => {
          const v = row[i];
          return v !== null && v > c;
        };
      case "ge":
        return (row) => {
          const v = row[i];
          return v !== null && v >= c;
        };
      case "lt":
        return (row) => {
          const v = row[i];
          return v !== null && v < c;
        };
      default:
        return (row) => {
          const v = row[i];
          return v !== null && v <= c;
        };
    }
  }
  const a = l.f;
  if (c === null) {
    if (op === "eq") return (row) => a(row) === null;
    if (op === "ne") return (row) => a(row) !== null;
    // Always false, but the left operand still runs first (it may fail: division by zero).
    return (row) => {
      a(row);
      return false;
    };
  }
  const t = isNum(l.t) || isNum(ct) ? "decimal" : l.t;
  if (!isNum(t) && (t !== "text" || codeUnitSafe(c as string))) {
    // Strings without high units, dates, date-times (numbers), booleans: native order is exact.
    switch (op) {
      case "eq":
        return (row) => {
          const v = a(row);
          return v !== null && v === c;
        };
      case "ne":
        return (row) => {
          const v = a(row);
          return v === null || v !== c;
        };
      default: {
        const test = NATIVE[op as Relational];
        return (row) => {
          const v = a(row);
          return v !== null && test(v as Prim, c as Prim);
        };
      }
    }
  }
  const cmp = comparator(t);
  switch (op) {
    case "eq":
      return (row) => {
        const v = a(row);
        return v !== null && cmp(v, c) === 0;
      };
    case "ne":
      return (row) => {
        const v = a(row);
        return v === null || cmp(v, c) !== 0;
      };
    default: {
      const test = RELATIONAL[op as Relational];
      return (row) => {
        const v = a(row);
        return v !== null && test(cmp(v, c));
      };
    }
  }
}

/** `division by zero in 'Budget div Qty' at 8`, the error OData requires (Part 2 §5.1.1.2.4–6). */
function divisionByZero(e: Extract<Expr, { k: "bin" }>): QueryError {
  const what = e.op === "mod" ? "modulo by zero" : "division by zero";
  return new QueryError({
    code: "division_by_zero",
    detail: `${what} in '${e.text ?? e.op}'`,
    position: e.pos,
    hint: "exclude zero divisors first, e.g. 'Qty ne 0 and Budget div Qty gt 5' ('and' does not evaluate its right side when the left is false)",
  });
}

function arithmeticOp(op: BinaryOp, intResult: boolean, e: Extract<Expr, { k: "bin" }>): (x: Num, y: Num) => RV {
  if (!intResult) {
    const g = DECIMAL_OPS[op]!;
    return (x, y) => {
      // A special value (from `divby` zero) goes on by IEEE 754 arithmetic: INF add 1 is INF.
      if (isSpecialNumber(x) || isSpecialNumber(y)) return specialArithmetic(op, asDouble(x), asDouble(y), e);
      try {
        return g(toDecimal(x), toDecimal(y));
      } catch (err) {
        if (err instanceof D.DecimalError && err.code === "division_by_zero") {
          // Part 2 §5.1.1.2.5: `divby` "does not fail for divby zero, returning -INF, INF, or NaN
          // depending on the sign of the left operand"; `div` and `mod` by zero fail.
          if (op === "divby") {
            const sign = D.compare(toDecimal(x), ZERO);
            return sign > 0 ? Infinity : sign < 0 ? -Infinity : NaN;
          }
          throw divisionByZero(e);
        }
        throw err;
      }
    };
  }
  const onBig = (x: bigint, y: bigint): RV => {
    switch (op) {
      case "add":
        return normBig(x + y);
      case "sub":
        return normBig(x - y);
      case "mul":
        return normBig(x * y);
      case "mod":
        if (y === 0n) throw divisionByZero(e);
        return normBig(x % y);
      default:
        if (y === 0n) throw divisionByZero(e);
        return normBig(x / y); // bigint division truncates, as OData's integer div
    }
  };
  const onNum = (x: number, y: number): RV => {
    let r: number;
    switch (op) {
      case "add":
        r = x + y;
        break;
      case "sub":
        r = x - y;
        break;
      case "mul":
        r = x * y;
        break;
      case "mod":
        if (y === 0) throw divisionByZero(e);
        r = x % y;
        break;
      default:
        if (y === 0) throw divisionByZero(e);
        // x minus its remainder is an exact multiple of y, so this quotient is exact (x / y may round).
        r = (x - (x % y)) / y;
    }
    // Past 2^53 a double may have rounded: redo exactly. `-0` (e.g. -4 mod 2) is plain 0.
    return Number.isSafeInteger(r) ? r + 0 : onBig(BigInt(x), BigInt(y));
  };
  return (x, y) => {
    if (typeof x === "number" && typeof y === "number") return onNum(x, y);
    return onBig(BigInt(x as number | bigint), BigInt(y as number | bigint));
  };
}

const ZERO = D.fromInteger(0n);

/** INF, -INF or NaN: the special values only `divby` zero (or their literals) make. */
export function isSpecialNumber(v: unknown): v is number {
  return typeof v === "number" && !Number.isFinite(v);
}

function asDouble(v: Num): number {
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : D.toNumber(v);
}

/** Arithmetic where an operand is INF, -INF or NaN: IEEE 754's; a modulo by zero still fails. */
function specialArithmetic(op: BinaryOp, x: number, y: number, e: Extract<Expr, { k: "bin" }>): number {
  switch (op) {
    case "add":
      return x + y;
    case "sub":
      return x - y;
    case "mul":
      return x * y;
    case "mod":
      if (y === 0) throw divisionByZero(e);
      return x % y;
    default:
      return x / y;
  }
}

const DECIMAL_OPS: Partial<Record<BinaryOp, (x: Decimal, y: Decimal) => Decimal>> = {
  add: D.add,
  sub: D.sub,
  mul: D.mul,
  div: D.div,
  divby: D.div,
  mod: D.mod,
};

type Param = "text" | "number" | "integer" | "temporal" | "datetime";
const PARAM_NAME: Record<Param, string> = {
  text: "text",
  number: "a number",
  integer: "a whole number",
  temporal: "a date or date-time",
  datetime: "a date-time",
};

function accepts(p: Param, t: VType): boolean {
  switch (p) {
    case "text":
      return t === "text";
    case "number":
      return isNum(t);
    case "integer":
      return t === "integer";
    case "temporal":
      return t === "date" || t === "datetime";
    case "datetime":
      return t === "datetime";
  }
}

interface FnSpec {
  params: Param[];
  /** How many trailing params may be omitted. */
  optional?: number;
  result: VType | ((args: VType[]) => VType);
  /** Called with non-null values only (any null argument makes the result null). */
  impl: (args: RV[], types: VType[]) => RV;
}

const s = (v: RV) => v as string;
const n = (v: RV) => Number(v);

function datePart(v: RV, t: VType, part: "y" | "m" | "d"): number {
  if (t === "date") {
    const str = v as string;
    return part === "y" ? +str.slice(0, 4) : part === "m" ? +str.slice(5, 7) : +str.slice(8, 10);
  }
  const d = new Date(v as number);
  return part === "y" ? d.getUTCFullYear() : part === "m" ? d.getUTCMonth() + 1 : d.getUTCDate();
}

function roundAwayFromZero(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Rounding functions on every numeric representation (Decimal values round exactly). */
function rounding(onNumber: (x: number) => number, onDecimal: (d: Decimal) => Decimal): (args: RV[]) => RV {
  return ([v]) => (typeof v === "bigint" ? v : typeof v === "number" ? onNumber(v) + 0 : onDecimal(v as Decimal));
}

const SURROGATE = /[\ud800-\udfff]/;

/** Number of characters (code points); a string without surrogates has one per unit. */
function codePointLength(x: string): number {
  if (!SURROGATE.test(x)) return x.length;
  let n = 0;
  for (let i = 0; i < x.length; i++) {
    const c = x.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= x.length) n++;
    else {
      const d = x.charCodeAt(i + 1);
      n++;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** UTF-16 offset of the `cp`-th code point of `x` (its length when `cp` is past the end). */
function unitOffset(x: string, cp: number): number {
  let i = 0;
  for (let k = 0; k < cp && i < x.length; k++) {
    const c = x.charCodeAt(i);
    const d = x.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  }
  return i;
}

function codePointIndexOf(x: string, y: string): number {
  const i = x.indexOf(y);
  return i <= 0 ? i : codePointLength(x.slice(0, i));
}

/**
 * Part 2 §5.1.1.5.7: the start is zero-based; "a negative start index N, if supported, returns a
 * string starting N characters before the end" (supported; before the first character is from it);
 * a negative length is a bad request ({@link compile} checks it before calling this).
 */
function codePointSubstring(x: string, start: number, length: number | undefined): string {
  const from = start >= 0 ? start : Math.max(0, codePointLength(x) + start);
  if (!SURROGATE.test(x)) return length === undefined ? x.slice(from) : x.slice(from, from + length);
  const a = unitOffset(x, from);
  if (length === undefined) return x.slice(a);
  return x.slice(a, a + unitOffset(x.slice(a), length));
}

// Unicode White_Space (what OData's trim removes); JS's trim() differs (U+FEFF in, U+0085 out).
const TRIM = /^\p{White_Space}+|\p{White_Space}+$/gu;

const sameNumeric = (args: VType[]): VType => (args[0] === "integer" ? "integer" : "decimal");

/**
 * Functions whose result depends on the time zone, and whether a whole-hour offset changes it. The
 * add-in keeps date-times in UTC (a literal's offset is applied once, when it is read), so for a
 * literal stated in another zone it would answer in UTC, not in the literal's zone. OData Part 1
 * §11.4 ("DateTimeOffset values"): a service that normalises "MUST fail evaluation of the query
 * functions year, month, day, hour, and time for literal values that are not stated in the time zone
 * of the normalized values". `date` is `year`/`month`/`day` together; `minute` differs only for an
 * offset that is not whole hours (+05:30).
 */
const ZONED_FUNCTIONS: Record<string, "any" | "minutes"> = { year: "any", month: "any", day: "any", hour: "any", date: "any", minute: "minutes" };

function checkZonedLiterals(e: Extract<Expr, { k: "call" }>): void {
  const rule = ZONED_FUNCTIONS[e.name];
  if (rule === undefined) return;
  for (const a of e.args) {
    if (a.k !== "lit" || a.type !== "datetime") continue;
    const m = /(?:([+-])|\s)(\d{2}):(\d{2})$/.exec(a.text);
    const offset = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
    if (offset === 0 || (rule === "minutes" && offset % 60 === 0)) continue;
    throw new QueryError({
      code: "invalid_argument",
      detail: `${e.text}() of '${a.text}' would answer in UTC, not in the literal's own time zone`,
      position: a.pos,
      hint: `OData requires such a call to fail; write the literal in UTC: ${new Date(a.value as number).toISOString().replace(".000Z", "Z")}`,
    });
  }
}

/** `substring`'s negative length, which Part 2 §5.1.1.5.7 calls a bad request. */
function negativeLength(e: Extract<Expr, { k: "call" }>, length: RV): QueryError {
  return new QueryError({
    code: "invalid_argument",
    detail: `${e.text}()'s length is negative (${String(length)})`,
    position: e.pos,
    hint: "OData calls a negative length a bad request; a negative start counts from the end instead",
  });
}

/** `substring` failing for a negative length ({@link negativeLength}). */
function checkedSubstring(impl: FnSpec["impl"], e: Extract<Expr, { k: "call" }>): FnSpec["impl"] {
  return (args, types) => {
    if (args.length > 2 && n(args[2]) < 0) throw negativeLength(e, args[2]);
    return impl(args, types);
  };
}

/** Supported canonical functions (OData names; time parts are UTC). */
const FUNCTIONS: Record<string, FnSpec> = {
  contains: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).includes(s(b)) },
  startswith: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).startsWith(s(b)) },
  endswith: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).endsWith(s(b)) },
  tolower: { params: ["text"], result: "text", impl: ([a]) => s(a).toLowerCase() },
  toupper: { params: ["text"], result: "text", impl: ([a]) => s(a).toUpperCase() },
  trim: { params: ["text"], result: "text", impl: ([a]) => s(a).replace(TRIM, "") },
  length: { params: ["text"], result: "integer", impl: ([a]) => codePointLength(s(a)) },
  indexof: { params: ["text", "text"], result: "integer", impl: ([a, b]) => codePointIndexOf(s(a), s(b)) },
  substring: {
    params: ["text", "integer", "integer"],
    optional: 1,
    result: "text",
    impl: ([a, start, len]) => codePointSubstring(s(a), n(start), len === undefined ? undefined : n(len)),
  },
  concat: { params: ["text", "text"], result: "text", impl: ([a, b]) => s(a) + s(b) },
  year: { params: ["temporal"], result: "integer", impl: ([v], [t]) => datePart(v, t, "y") },
  month: { params: ["temporal"], result: "integer", impl: ([v], [t]) => datePart(v, t, "m") },
  day: { params: ["temporal"], result: "integer", impl: ([v], [t]) => datePart(v, t, "d") },
  hour: { params: ["datetime"], result: "integer", impl: ([v]) => new Date(v as number).getUTCHours() },
  minute: { params: ["datetime"], result: "integer", impl: ([v]) => new Date(v as number).getUTCMinutes() },
  second: { params: ["datetime"], result: "integer", impl: ([v]) => new Date(v as number).getUTCSeconds() },
  date: {
    params: ["temporal"],
    result: "date",
    impl: ([v], [t]) => (t === "date" ? v! : new Date(v as number).toISOString().slice(0, 10)),
  },
  round: { params: ["number"], result: sameNumeric, impl: rounding(roundAwayFromZero, D.round) },
  floor: { params: ["number"], result: sameNumeric, impl: rounding(Math.floor, D.floor) },
  ceiling: { params: ["number"], result: sameNumeric, impl: rounding(Math.ceil, D.ceiling) },
  now: { params: [], result: "datetime", impl: () => null },
};

/** Names of the supported functions (for documentation and completion lists). */
export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);
