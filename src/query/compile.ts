/**
 * Type-checks an expression tree against a table's columns and turns it into closures, once per
 * query, so rows are evaluated without re-reading the tree.
 *
 * Runtime values: text and dates are strings (`YYYY-MM-DD` orders correctly as text), numbers are
 * `number` or `bigint` (integers beyond 2^53 stay exact; JS compares the two kinds exactly),
 * date-times are epoch milliseconds (so offsets compare by instant), `null` is missing.
 */
import type { CellValue, Column } from "../table/model";
import type { BinaryOp, Expr } from "./ast";
import { ColumnResolver, editDistance } from "./columns";
import { QueryError } from "./errors";

/** Static type of an expression. `null` is the type of the `null` literal. */
export type VType = "text" | "integer" | "decimal" | "boolean" | "date" | "datetime" | "null";
export type RV = string | number | bigint | boolean | null;
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

/** Leftmost source position of an expression (binary nodes carry their operator's position). */
export function startPos(e: Expr): number {
  switch (e.k) {
    case "bin":
      return startPos(e.left);
    case "in":
      return startPos(e.arg);
    default:
      return e.pos;
  }
}

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

/** Compiles `e` against `columns`. */
export class Compiler {
  private readonly resolver: ColumnResolver;
  constructor(
    readonly columns: readonly Column[],
    private readonly opts: CompileOptions = {},
  ) {
    this.resolver = new ColumnResolver(columns);
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
        return konst(e.type, e.value);
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
      const v = f(row) as number | bigint | null;
      return v === null ? null : typeof v === "bigint" ? normBig(-v) : -v;
    });
  }

  private not(e: Extract<Expr, { k: "not" }>): Compiled {
    const a = this.compile(e.arg);
    if (a.t !== "boolean" && a.t !== "null") typeError(`'not' needs a true/false condition, not ${TYPE_NAME[a.t]}`, e.pos);
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
    if (lt === rt || (isNum(lt) && isNum(rt))) {
      if (lt === "boolean" && op !== "eq" && op !== "ne" && op !== "in") {
        typeError(`true/false values can only be compared with 'eq' or 'ne', not '${op}'`, e.pos);
      }
      return;
    }
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
    if (l.c && !r.c) {
      const flipped: Partial<Record<BinaryOp, BinaryOp>> = { gt: "lt", lt: "gt", ge: "le", le: "ge" };
      return this.comparison(flipped[op] ?? op, r, l);
    }
    if (r.c && !l.c) return { t: "boolean", f: compareWithConstant(op, l, r.c.v), nn: true };
    const a = l.f;
    const b = r.f;
    let f: Eval;
    switch (op) {
      case "eq":
        f = (row) => {
          const x = a(row);
          const y = b(row);
          return x === null || y === null ? x === y : x == y;
        };
        break;
      case "ne":
        f = (row) => {
          const x = a(row);
          const y = b(row);
          return x === null || y === null ? x !== y : x != y;
        };
        break;
      default: {
        const cmp = RELATIONAL[op as Relational];
        f = (row) => {
          const x = a(row);
          if (x === null) return false;
          const y = b(row);
          return y !== null && cmp(x, y);
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
    if (l.t === "null" || r.t === "null") return konst("null", null);
    const intResult = l.t === "integer" && r.t === "integer" && op !== "divby";
    const a = l.f;
    const b = r.f;
    const fn = arithmeticOp(op, intResult);
    return this.fold(intResult ? "integer" : "decimal", [l, r], (row) => {
      const x = a(row);
      if (x === null) return null;
      const y = b(row);
      return y === null ? null : fn(x as number | bigint, y as number | bigint);
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
    if (plain.every((v) => typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "boolean")) {
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
      f = (row) => {
        const v = f0(row);
        if (v === null) return hasNull;
        for (const x of plain) if (v == x) return true;
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
    const impl = spec.impl;
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
type Prim = string | number | bigint | boolean;
const RELATIONAL: Record<Relational, (x: Prim, y: Prim) => boolean> = {
  gt: (x, y) => x > y,
  ge: (x, y) => x >= y,
  lt: (x, y) => x < y,
  le: (x, y) => x <= y,
};

/**
 * The common case `Column op literal`, specialised so a row costs one read and one compare.
 * Direct cell reads are exact for integer columns too: JS compares a digit string with a bigint
 * exactly, and a digit string beyond 2^53 with a safe number correctly (it is further from zero).
 */
function compareWithConstant(op: BinaryOp, l: Compiled, c: RV): Eval {
  const unsafeNumber = typeof c === "number" && !Number.isSafeInteger(c) && Math.abs(c) >= 2 ** 53;
  const i = l.col;
  if (i !== undefined && !(l.t === "integer" && unsafeNumber)) {
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
    return () => false;
  }
  switch (op) {
    case "eq":
      return (row) => {
        const v = a(row);
        return v !== null && v == c;
      };
    case "ne":
      return (row) => {
        const v = a(row);
        return v === null || v != c;
      };
    default: {
      const cmp = RELATIONAL[op as Relational];
      return (row) => {
        const v = a(row);
        return v !== null && cmp(v, c);
      };
    }
  }
}

/** Brings a number/bigint pair to one kind: bigint when both are integers, else number. */
function unify(x: number | bigint, y: number | bigint): [number, number] | [bigint, bigint] {
  if (typeof x === "bigint" && typeof y === "bigint") return [x, y];
  if (typeof x === "bigint") return typeof y === "number" && !Number.isInteger(y) ? [Number(x), y] : [x, BigInt(y)];
  if (typeof y === "bigint") return Number.isInteger(x) ? [BigInt(x), y] : [x, Number(y)];
  return [x, y];
}

function arithmeticOp(op: BinaryOp, intResult: boolean): (x: number | bigint, y: number | bigint) => RV {
  const onBig = (x: bigint, y: bigint): RV => {
    switch (op) {
      case "add":
        return normBig(x + y);
      case "sub":
        return normBig(x - y);
      case "mul":
        return normBig(x * y);
      case "mod":
        return y === 0n ? null : normBig(x % y);
      case "div":
        return y === 0n ? null : normBig(x / y); // bigint division truncates, as OData's integer div
      default:
        return y === 0n ? null : Number(x) / Number(y);
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
        if (y === 0) return null;
        r = x % y;
        break;
      default:
        if (y === 0) return null;
        r = intResult ? Math.trunc(x / y) : x / y;
    }
    if (intResult && !Number.isSafeInteger(r) && Number.isFinite(r)) {
      // Overflowed past 2^53: redo exactly.
      return onBig(BigInt(x), BigInt(y));
    }
    return Number.isFinite(r) ? r : null;
  };
  return (x, y) => {
    if (typeof x === "number" && typeof y === "number") return onNum(x, y);
    const [p, q] = unify(x, y);
    return typeof p === "bigint" ? onBig(p, q as bigint) : onNum(p, q as number);
  };
}

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

const sameNumeric = (args: VType[]): VType => (args[0] === "integer" ? "integer" : "decimal");

/** Supported canonical functions (OData names; time parts are UTC). */
const FUNCTIONS: Record<string, FnSpec> = {
  contains: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).includes(s(b)) },
  startswith: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).startsWith(s(b)) },
  endswith: { params: ["text", "text"], result: "boolean", impl: ([a, b]) => s(a).endsWith(s(b)) },
  tolower: { params: ["text"], result: "text", impl: ([a]) => s(a).toLowerCase() },
  toupper: { params: ["text"], result: "text", impl: ([a]) => s(a).toUpperCase() },
  trim: { params: ["text"], result: "text", impl: ([a]) => s(a).trim() },
  length: { params: ["text"], result: "integer", impl: ([a]) => s(a).length },
  indexof: { params: ["text", "text"], result: "integer", impl: ([a, b]) => s(a).indexOf(s(b)) },
  substring: {
    params: ["text", "integer", "integer"],
    optional: 1,
    result: "text",
    impl: ([a, start, len]) => {
      const from = Math.max(0, n(start));
      return len === undefined ? s(a).slice(from) : s(a).slice(from, from + Math.max(0, n(len)));
    },
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
  round: {
    params: ["number"],
    result: sameNumeric,
    impl: ([v]) => (typeof v === "bigint" ? v : roundAwayFromZero(v as number)),
  },
  floor: { params: ["number"], result: sameNumeric, impl: ([v]) => (typeof v === "bigint" ? v : Math.floor(v as number)) },
  ceiling: { params: ["number"], result: sameNumeric, impl: ([v]) => (typeof v === "bigint" ? v : Math.ceil(v as number)) },
  now: { params: [], result: "datetime", impl: () => null },
};

/** Names of the supported functions (for documentation and completion lists). */
export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);
