/**
 * An evaluator of `$filter` / `$orderby` / `$select` / `$top` / `$skip` / `$count` written from the
 * text of OData 4.01 Part 2 (URL Conventions) §5.1.1–5.1.6 and the ABNF, on purpose WITHOUT any
 * code from src/query: its own tokenizer, its own precedence parser (the table of §5.1.1.16), and
 * exact rational arithmetic instead of the engine's scaled decimals. The random-query suite
 * (oracle.test.ts) and the ABNF corpus test compare the engine with it.
 *
 * Where Part 2 leaves a choice open, the oracle takes the decision documented in
 * src/query/README.md (stated there as the language, not as deviations):
 * - a cell of an Edm.Decimal column held as a JS number is the decimal its shortest text shows;
 * - decimal division keeps 34 significant digits, ties to even; integer `div` truncates; `mod` has
 *   the sign of the dividend; integers never overflow;
 * - `div` or `mod` by zero fails the query (§5.1.1.2.5–6: "the request fails"); `divby` zero gives
 *   INF, -INF or NaN by the sign of the left operand (§5.1.1.2.5), which go on as IEEE 754 special
 *   values do; NaN is equal to nothing (§5.1.1.1.1) and sorts after every number;
 * - operands are evaluated left to right and evaluation stops once the result is decided (`and` at
 *   false, `or` at true, arithmetic and functions at a null operand, gt/ge/lt/le at a null left
 *   operand); sub-expressions without a column are evaluated once, before any row;
 * - `substring` with a negative start counts from the end (§5.1.1.5.7, "if supported": supported);
 *   a negative length fails the query (a bad request);
 * - text compares by Unicode code point; length/indexof/substring count code points; trim removes
 *   Unicode White_Space; booleans order false < true; `null` sorts first ascending (§5.1.4).
 */
import type { CellValue, Column } from "../../../src/table/model";

/** Why the oracle refused a query. */
export class OracleError extends Error {
  constructor(
    readonly kind: "syntax" | "type" | "division_by_zero" | "invalid_argument",
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------- rationals

/** An exact rational n/d, d > 0, reduced. */
interface Q {
  n: bigint;
  d: bigint;
}
const absB = (x: bigint) => (x < 0n ? -x : x);
function gcd(a: bigint, b: bigint): bigint {
  a = absB(a);
  b = absB(b);
  while (b) [a, b] = [b, a % b];
  return a;
}
function q(n: bigint, d: bigint = 1n): Q {
  if (d === 0n) throw new Error("zero denominator");
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}
const qAdd = (a: Q, b: Q) => q(a.n * b.d + b.n * a.d, a.d * b.d);
const qSub = (a: Q, b: Q) => q(a.n * b.d - b.n * a.d, a.d * b.d);
const qMul = (a: Q, b: Q) => q(a.n * b.n, a.d * b.d);
const qCmp = (a: Q, b: Q) => {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
};
/** Truncation toward zero (BigInt division truncates). */
const qTrunc = (a: Q): bigint => a.n / a.d;
function qFloor(a: Q): bigint {
  const t = qTrunc(a);
  return a.n < 0n && t * a.d !== a.n ? t - 1n : t;
}
function qCeil(a: Q): bigint {
  const t = qTrunc(a);
  return a.n > 0n && t * a.d !== a.n ? t + 1n : t;
}
/** Nearest integer, halves away from zero (§5.1.1.9.3). */
function qRound(a: Q): bigint {
  const neg = a.n < 0n;
  const r = qFloor(qAdd(neg ? q(-a.n, a.d) : a, q(1n, 2n)));
  return neg ? -r : r;
}
/** `text` in OData's decimalValue form (sign, digits, fraction, exponent). */
function qParse(text: string): Q {
  const m = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) throw new OracleError("syntax", `bad number ${text}`);
  const frac = m[3] ?? "";
  let n = BigInt(m[2] + frac);
  if (m[1] === "-") n = -n;
  const e = Number(m[4] ?? "0") - frac.length;
  return e >= 0 ? q(n * 10n ** BigInt(e)) : q(n, 10n ** BigInt(-e));
}
const numberToQ = (x: number): Q => qParse(String(x).replace("e+", "e"));
/** Quotient rounded to 34 significant digits, ties to even (the engine's documented division). */
function qDivide(a: Q, b: Q): Q {
  if (b.n === 0n) throw new OracleError("division_by_zero", "division by zero");
  const exact = q(a.n * b.d, a.d * b.n);
  if (exact.n === 0n) return exact;
  // E with 10^(E-1) <= |x| < 10^E
  const m = q(absB(exact.n), exact.d);
  let e = absB(exact.n).toString().length - exact.d.toString().length;
  const pow = (k: number): Q => (k >= 0 ? q(10n ** BigInt(k)) : q(1n, 10n ** BigInt(-k)));
  while (qCmp(m, pow(e)) >= 0) e++;
  while (qCmp(m, pow(e - 1)) < 0) e--;
  const scale = 34 - e;
  const scaled = qMul(exact, pow(scale));
  let r = qFloor(scaled);
  const frac = qSub(scaled, q(r));
  const c = qCmp(frac, q(1n, 2n));
  if (c > 0 || (c === 0 && r % 2n !== 0n)) r += 1n;
  return qMul(q(r), pow(-scale));
}

// ---------------------------------------------------------------- values and types

type T = "int" | "dec" | "text" | "bool" | "date" | "dt" | "null";
/** A number carries its static kind: OData integer arithmetic truncates `div`. */
/** `{ sp }`: a special number from `divby` zero: 1 is INF, -1 is -INF, 0 is NaN. */
type V = null | boolean | string | { q: Q } | { sp: -1 | 0 | 1 } | { ms: number } | { date: string };
type Numeric = { q: Q } | { sp: -1 | 0 | 1 };
const isSpecial = (v: V): v is { sp: -1 | 0 | 1 } => v !== null && typeof v === "object" && "sp" in v;
const qSign = (a: Q): number => (a.n > 0n ? 1 : a.n < 0n ? -1 : 0);
/** A special value or a rational as a number for IEEE 754's rules on special values. */
const ieee = (v: Numeric): number => ("sp" in v ? (v.sp === 0 ? NaN : v.sp * Infinity) : qSign(v.q) === 0 ? 0 : Number(v.q.n) / Number(v.q.d));
/** The result of arithmetic with a special operand, back as a value (a finite result is one of the operands or 0). */
function fromIeee(x: number, a: Numeric, b: Numeric): Numeric {
  if (Number.isNaN(x)) return { sp: 0 };
  if (!Number.isFinite(x)) return { sp: x > 0 ? 1 : -1 };
  if (x === 0) return { q: q(0n) };
  // finite mod INF is the finite operand (IEEE 754); nothing else finite comes out
  return "q" in a ? a : b;
}

// ---------------------------------------------------------------- tokenizer

type Tok =
  | { k: "(" | ")" | "," | "-" | "eof" }
  | { k: "str"; v: string }
  | { k: "num"; text: string; int: boolean }
  | { k: "date"; v: string }
  | { k: "dt"; ms: number; off: number }
  | { k: "id"; v: string };

const DT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:\d{2})/;

function dtMs(m: RegExpExecArray): number {
  const [, y, mo, d, h, mi, s, f, off] = m;
  let ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, s ? +s : 0, f ? Math.floor(Number("0" + f) * 1000 + 1e-6) : 0);
  if (off !== "Z") ms -= (off.startsWith("-") ? -1 : 1) * (+off.slice(1, 3) * 60 + +off.slice(4, 6)) * 60000;
  return ms;
}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "(" || c === ")" || c === ",") {
      out.push({ k: c });
      i++;
      continue;
    }
    if (c === "'") {
      let j = i + 1;
      let v = "";
      for (;;) {
        if (j >= src.length) throw new OracleError("syntax", "unterminated string");
        if (src[j] === "'") {
          if (src[j + 1] === "'") {
            v += "'";
            j += 2;
            continue;
          }
          break;
        }
        v += src[j];
        j++;
      }
      out.push({ k: "str", v });
      i = j + 1;
      continue;
    }
    const rest = src.slice(i);
    const dt = DT.exec(rest);
    if (dt) {
      const off = dt[8] === "Z" ? 0 : (dt[8].startsWith("-") ? -1 : 1) * (+dt[8].slice(1, 3) * 60 + +dt[8].slice(4, 6));
      out.push({ k: "dt", ms: dtMs(dt), off });
      i += dt[0].length;
      continue;
    }
    const date = /^\d{4}-\d{2}-\d{2}(?![\dT])/.exec(rest);
    if (date) {
      out.push({ k: "date", v: date[0] });
      i += date[0].length;
      continue;
    }
    // ABNF: a sign directly before the digits is part of the number literal.
    const num = /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(rest);
    if (num && (/\d/.test(c) || /\d/.test(rest[1] ?? ""))) {
      // ABNF int64Value: at most 19 digits within Edm.Int64's range; anything longer is a decimalValue.
      const digits = num[1] === undefined && num[2] === undefined;
      const int = digits && BigInt(num[0]) >= -(2n ** 63n) && BigInt(num[0]) <= 2n ** 63n - 1n;
      out.push({ k: "num", text: num[0], int });
      i += num[0].length;
      continue;
    }
    if (c === "-") {
      out.push({ k: "-" });
      i++;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (id) {
      out.push({ k: "id", v: id[0] });
      i += id[0].length;
      continue;
    }
    throw new OracleError("syntax", `unexpected ${c}`);
  }
  out.push({ k: "eof" });
  return out;
}

// ---------------------------------------------------------------- parser (Part 2 §5.1.1.16)

type Node =
  | { k: "lit"; t: T; v: V; off?: number }
  | { k: "col"; name: string }
  | { k: "un"; op: "-" | "not"; a: Node }
  | { k: "bin"; op: string; a: Node; b: Node }
  | { k: "in"; a: Node; items: Node[] }
  | { k: "fn"; name: string; args: Node[] };

/** Binary operators by precedence level, loosest first (Part 2's table read bottom-up). */
const LEVELS: string[][] = [["or"], ["and"], ["eq", "ne"], ["gt", "ge", "lt", "le"], ["add", "sub"], ["mul", "div", "divby", "mod"]];

class P {
  i = 0;
  constructor(readonly t: Tok[]) {}
  peekWord(): string | undefined {
    const x = this.t[this.i];
    return x.k === "id" ? x.v.toLowerCase() : undefined;
  }
  take(k: Tok["k"]): Tok {
    const x = this.t[this.i];
    if (x.k !== k) throw new OracleError("syntax", `expected ${k}`);
    this.i++;
    return x;
  }
  level(n: number): Node {
    if (n === LEVELS.length) return this.unary();
    let a = this.level(n + 1);
    for (let w = this.peekWord(); w !== undefined && LEVELS[n].includes(w); w = this.peekWord()) {
      this.i++;
      a = { k: "bin", op: w, a, b: this.level(n + 1) };
    }
    return a;
  }
  unary(): Node {
    const x = this.t[this.i];
    if (x.k === "-") {
      this.i++;
      return { k: "un", op: "-", a: this.unary() };
    }
    if (this.peekWord() === "not") {
      this.i++;
      return { k: "un", op: "not", a: this.unary() };
    }
    let a = this.primary();
    while (this.peekWord() === "in") {
      this.i++;
      this.take("(");
      const items: Node[] = [];
      if (this.t[this.i].k !== ")") {
        for (;;) {
          items.push(this.unary());
          if (this.t[this.i].k === ",") {
            this.i++;
            continue;
          }
          break;
        }
      }
      this.take(")");
      a = { k: "in", a, items };
    }
    return a;
  }
  primary(): Node {
    const x = this.t[this.i++];
    switch (x.k) {
      case "(": {
        const e = this.level(0);
        this.take(")");
        return e;
      }
      case "str":
        return { k: "lit", t: "text", v: x.v };
      case "num":
        return { k: "lit", t: x.int ? "int" : "dec", v: { q: qParse(x.text) } };
      case "date":
        return { k: "lit", t: "date", v: { date: x.v } };
      case "dt":
        return { k: "lit", t: "dt", v: { ms: x.ms }, off: x.off };
      case "id": {
        const w = x.v.toLowerCase();
        if (w === "true" || w === "false") return { k: "lit", t: "bool", v: w === "true" };
        if (w === "null") return { k: "lit", t: "null", v: null };
        if (this.t[this.i].k === "(") {
          this.i++;
          const args: Node[] = [];
          if (this.t[this.i].k !== ")") {
            for (;;) {
              args.push(this.level(0));
              if (this.t[this.i].k === ",") {
                this.i++;
                continue;
              }
              break;
            }
          }
          this.take(")");
          return { k: "fn", name: w, args };
        }
        return { k: "col", name: x.v };
      }
      default:
        throw new OracleError("syntax", `unexpected ${x.k}`);
    }
  }
}

function parse(src: string): Node {
  const p = new P(tokenize(src));
  const e = p.level(0);
  p.take("eof");
  return e;
}

function parseOrder(src: string): Array<{ e: Node; desc: boolean }> {
  const p = new P(tokenize(src));
  const out: Array<{ e: Node; desc: boolean }> = [];
  for (;;) {
    const e = p.level(0);
    const w = p.peekWord();
    let desc = false;
    if (w === "asc" || w === "desc") {
      p.i++;
      desc = w === "desc";
    }
    out.push({ e, desc });
    if (p.t[p.i].k === ",") {
      p.i++;
      continue;
    }
    p.take("eof");
    return out;
  }
}

// ---------------------------------------------------------------- static types

const COLTYPE: Record<Column["type"], T> = { integer: "int", decimal: "dec", text: "text", boolean: "bool", date: "date", datetime: "dt" };
const isNumT = (t: T) => t === "int" || t === "dec";

const FN_RESULT: Record<string, (a: T[]) => T> = {
  contains: () => "bool",
  startswith: () => "bool",
  endswith: () => "bool",
  tolower: () => "text",
  toupper: () => "text",
  trim: () => "text",
  concat: () => "text",
  substring: () => "text",
  length: () => "int",
  indexof: () => "int",
  year: () => "int",
  month: () => "int",
  day: () => "int",
  hour: () => "int",
  minute: () => "int",
  second: () => "int",
  date: () => "date",
  round: (a) => (a[0] === "int" ? "int" : "dec"),
  floor: (a) => (a[0] === "int" ? "int" : "dec"),
  ceiling: (a) => (a[0] === "int" ? "int" : "dec"),
  now: () => "dt",
};

function typeOf(e: Node, cols: Map<string, T>): T {
  switch (e.k) {
    case "lit":
      return e.t;
    case "col": {
      const t = cols.get(e.name);
      if (!t) throw new OracleError("type", `no column ${e.name}`);
      return t;
    }
    case "un":
      return e.op === "not" ? "bool" : typeOf(e.a, cols);
    case "in":
      return "bool";
    case "fn": {
      const f = FN_RESULT[e.name];
      if (!f) throw new OracleError("type", `no function ${e.name}`);

      return f(e.args.map((a) => typeOf(a, cols)));
    }
    case "bin": {
      const a = typeOf(e.a, cols);
      const b = typeOf(e.b, cols);
      if (["and", "or", "eq", "ne", "gt", "ge", "lt", "le"].includes(e.op)) {
        const ok = a === "null" || b === "null" || a === b || (isNumT(a) && isNumT(b));
        if (!ok || (["and", "or"].includes(e.op) && ((a !== "bool" && a !== "null") || (b !== "bool" && b !== "null")))) {
          throw new OracleError("type", `${a} ${e.op} ${b}`);
        }
        return "bool";
      }
      if ((a !== "null" && !isNumT(a)) || (b !== "null" && !isNumT(b))) throw new OracleError("type", `${a} ${e.op} ${b}`);
      if (a === "null" || b === "null") return "null";
      return a === "int" && b === "int" && e.op !== "divby" ? "int" : "dec";
    }
  }
}

// ---------------------------------------------------------------- evaluation

const cps = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0)!);
function textCmp(a: string, b: string): number {
  const x = cps(a);
  const y = cps(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}
/** Unicode White_Space (PropList.txt). */
const WHITE = new Set([0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);

/** Order of two non-null values of comparable types. */
function cmpValues(x: V, y: V): number {
  if (typeof x === "string") return textCmp(x, y as string);
  if (typeof x === "boolean") return x === y ? 0 : x ? 1 : -1;
  if (x !== null && typeof x === "object") {
    if ("q" in x || "sp" in x) {
      const yv = y as Numeric;
      if ("q" in x && "q" in yv) return qCmp(x.q, yv.q);
      // §5.1.1.1.3/5: INF is greater than any number, any number greater than -INF; NaN is unordered.
      const rx = "sp" in x ? x.sp : 0;
      const ry = "sp" in yv ? yv.sp : 0;
      if (("sp" in x && x.sp === 0) || ("sp" in yv && yv.sp === 0)) return NaN;
      return rx < ry ? -1 : rx > ry ? 1 : 0;
    }
    if ("ms" in x) return Math.sign(x.ms - (y as { ms: number }).ms);
    const a = x.date;
    const b = (y as { date: string }).date;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  throw new Error("null has no order");
}

interface Ctx {
  cols: Map<string, T>;
  index: Map<string, number>;
  columns: Column[];
  now: number;
}

function cellValue(c: CellValue, t: T): V {
  if (c === null) return null;
  switch (t) {
    case "int":
      return { q: q(BigInt(c)) };
    case "dec":
      return { q: numberToQ(c as number) };
    case "date":
      return { date: c as string };
    case "dt": {
      const m = DT.exec(c as string);
      if (!m) throw new Error(`bad date-time cell ${String(c)}`);
      return { ms: dtMs(m) };
    }
    default:
      return c as V;
  }
}

const numOf = (v: V): Q => (v as { q: Q }).q;

function evalNode(e: Node, row: readonly CellValue[], ctx: Ctx): V {
  switch (e.k) {
    case "lit":
      return e.v;
    case "col": {
      const i = ctx.index.get(e.name)!;
      return cellValue(row[i], ctx.cols.get(e.name)!);
    }
    case "un": {
      const v = evalNode(e.a, row, ctx);
      if (v === null) return null;
      if (e.op === "not") return !v;
      if (isSpecial(v)) return { sp: (v.sp === 0 ? 0 : -v.sp) as -1 | 0 | 1 };
      return { q: qMul(numOf(v), q(-1n)) };
    }
    case "in": {
      const v = evalNode(e.a, row, ctx);
      const items = e.items.map((it) => evalNode(it, row, ctx));
      // `a in (x, y)` is `a eq x or a eq y` (§5.1.1.1.10), with eq's null rule.
      return items.some((it) => (v === null || it === null ? v === it : cmpValues(v, it) === 0));
    }
    case "fn":
      return evalFn(e, row, ctx);
    case "bin":
      return evalBin(e, row, ctx);
  }
}

function evalBin(e: Extract<Node, { k: "bin" }>, row: readonly CellValue[], ctx: Ctx): V {
  const x = evalNode(e.a, row, ctx);
  switch (e.op) {
    case "and": {
      if (x === false) return false;
      const y = evalNode(e.b, row, ctx);
      if (y === false) return false;
      return x === true && y === true ? true : null;
    }
    case "or": {
      if (x === true) return true;
      const y = evalNode(e.b, row, ctx);
      if (y === true) return true;
      return x === false && y === false ? false : null;
    }
    case "eq":
    case "ne": {
      const y = evalNode(e.b, row, ctx);
      const same = x === null || y === null ? x === y : cmpValues(x, y) === 0;
      return e.op === "eq" ? same : !same;
    }
    case "gt":
    case "ge":
    case "lt":
    case "le": {
      if (x === null) return false;
      const y = evalNode(e.b, row, ctx);
      if (y === null) return false;
      const c = cmpValues(x, y);
      return e.op === "gt" ? c > 0 : e.op === "ge" ? c >= 0 : e.op === "lt" ? c < 0 : c <= 0;
    }
  }
  if (x === null) return null;
  const y = evalNode(e.b, row, ctx);
  if (y === null) return null;
  if (isSpecial(x) || isSpecial(y)) {
    const xa = x as Numeric, yb = y as Numeric;
    const r = ieee(yb);
    if (e.op === "mod" && r === 0) throw new OracleError("division_by_zero", "mod by zero");
    const l = ieee(xa);
    const v = e.op === "add" ? l + r : e.op === "sub" ? l - r : e.op === "mul" ? l * r : e.op === "mod" ? l % r : l / r;
    return fromIeee(v, xa, yb);
  }
  const a = numOf(x);
  const b = numOf(y);
  const integer = typeOf(e, ctx.cols) === "int";
  switch (e.op) {
    case "add":
      return { q: qAdd(a, b) };
    case "sub":
      return { q: qSub(a, b) };
    case "mul":
      return { q: qMul(a, b) };
    case "div":
      if (b.n === 0n) throw new OracleError("division_by_zero", "div by zero");
      return { q: integer ? q(qTrunc(q(a.n * b.d, a.d * b.n))) : qDivide(a, b) };
    case "divby":
      // §5.1.1.2.5: divby "does not fail for divby zero, returning -INF, INF, or NaN".
      if (b.n === 0n) return { sp: qSign(a) as -1 | 0 | 1 };
      return { q: qDivide(a, b) };
    case "mod": {
      if (b.n === 0n) throw new OracleError("division_by_zero", "mod by zero");
      // a - b * trunc(a / b): the sign of the dividend.
      return { q: qSub(a, qMul(b, q(qTrunc(q(a.n * b.d, a.d * b.n))))) };
    }
  }
  throw new OracleError("syntax", `operator ${e.op}`);
}

function evalFn(e: Extract<Node, { k: "fn" }>, row: readonly CellValue[], ctx: Ctx): V {
  if (e.name === "now") return { ms: ctx.now };
  const vs: V[] = [];
  for (const a of e.args) {
    const v = evalNode(a, row, ctx);
    if (v === null) return null;
    vs.push(v);
  }
  const s = (i: number) => vs[i] as string;
  const n = (i: number) => Number(numOf(vs[i]).n / numOf(vs[i]).d);
  const int = (x: number | bigint): V => ({ q: q(BigInt(x)) });
  const utc = (i: number): Date => new Date((vs[i] as { ms: number }).ms);
  const datePart = (i: number, part: 0 | 1 | 2): V => {
    const v = vs[i]!;
    if (typeof v === "object" && v !== null && "date" in v) return int(Number(v.date.split("-")[part]));
    const d = utc(i);
    return int(part === 0 ? d.getUTCFullYear() : part === 1 ? d.getUTCMonth() + 1 : d.getUTCDate());
  };
  switch (e.name) {
    case "contains":
      return s(0).includes(s(1));
    case "startswith":
      return s(0).startsWith(s(1));
    case "endswith":
      return s(0).endsWith(s(1));
    case "tolower":
      return s(0).toLowerCase();
    case "toupper":
      return s(0).toUpperCase();
    case "trim": {
      const c = Array.from(s(0));
      let a = 0;
      let b = c.length;
      while (a < b && WHITE.has(c[a].codePointAt(0)!)) a++;
      while (b > a && WHITE.has(c[b - 1].codePointAt(0)!)) b--;
      return c.slice(a, b).join("");
    }
    case "concat":
      return s(0) + s(1);
    case "length":
      return int(Array.from(s(0)).length);
    case "indexof": {
      const hay = Array.from(s(0));
      const needle = Array.from(s(1));
      for (let i = 0; i + needle.length <= hay.length; i++) {
        if (needle.every((c, j) => hay[i + j] === c)) return int(i);
      }
      return int(-1);
    }
    case "substring": {
      // §5.1.1.5.7: zero-based; a negative start counts from the end; a negative length is a bad request.
      const c = Array.from(s(0));
      const start = n(1) >= 0 ? n(1) : Math.max(0, c.length + n(1));
      if (vs.length > 2 && n(2) < 0) throw new OracleError("invalid_argument", "negative substring length");
      return vs.length > 2 ? c.slice(start, start + n(2)).join("") : c.slice(start).join("");
    }
    case "year":
      return datePart(0, 0);
    case "month":
      return datePart(0, 1);
    case "day":
      return datePart(0, 2);
    case "hour":
      return int(utc(0).getUTCHours());
    case "minute":
      return int(utc(0).getUTCMinutes());
    case "second":
      return int(utc(0).getUTCSeconds());
    case "date": {
      const v = vs[0]!;
      if (typeof v === "object" && v !== null && "date" in v) return v;
      return { date: utc(0).toISOString().slice(0, 10) };
    }
    case "round":
    case "floor":
    case "ceiling":
      if (isSpecial(vs[0])) return vs[0];
  }
  switch (e.name) {
    case "round":
      return { q: q(qRound(numOf(vs[0]))) };
    case "floor":
      return { q: q(qFloor(numOf(vs[0]))) };
    case "ceiling":
      return { q: q(qCeil(numOf(vs[0]))) };
  }
  throw new OracleError("type", `function ${e.name}`);
}

/**
 * Part 1 §11.4: a service that keeps date-times normalised (UTC) "MUST fail evaluation of the query
 * functions year, month, day, hour, and time for literal values that are not stated in the time zone
 * of the normalized values"; date is year, month and day; minute differs only for an offset that is
 * not whole hours. Checked over the whole expression before anything is evaluated.
 */
function checkZoned(e: Node): void {
  switch (e.k) {
    case "un":
      return checkZoned(e.a);
    case "in":
      return [e.a, ...e.items].forEach(checkZoned);
    case "bin":
      checkZoned(e.a);
      return checkZoned(e.b);
    case "fn":
      for (const a of e.args) {
        checkZoned(a);
        if (a.k !== "lit" || !a.off) continue;
        if (["year", "month", "day", "hour", "date"].includes(e.name) || (e.name === "minute" && a.off % 60 !== 0)) throw new OracleError("invalid_argument", `${e.name} of a literal not in UTC`);
      }
  }
}

/** Sub-expressions without a column are evaluated once up front: their errors fail the query. */
function checkConstants(e: Node, ctx: Ctx): boolean {
  let constant: boolean;
  switch (e.k) {
    case "lit":
      return true;
    case "col":
      return false;
    case "un":
      constant = checkConstants(e.a, ctx);
      break;
    case "in":
      constant = [e.a, ...e.items].map((x) => checkConstants(x, ctx)).every(Boolean);
      break;
    case "fn":
      constant = e.args.map((x) => checkConstants(x, ctx)).every(Boolean);
      break;
    case "bin":
      constant = [checkConstants(e.a, ctx), checkConstants(e.b, ctx)].every(Boolean);
      break;
  }
  if (constant) evalNode(e, [], ctx);
  return constant;
}

/** A query as LocalQuery holds it. */
export interface OracleQuery {
  filter?: string;
  orderby?: string;
  select?: string[];
  top?: number;
  skip?: number;
  count?: boolean;
}

/** Evaluates `query` on the table. Throws {@link OracleError} when OData would reject it. */
export function oracleApply(columns: Column[], rows: CellValue[][], query: OracleQuery, now: number): { rows: CellValue[][]; count?: number } {
  const ctx: Ctx = {
    cols: new Map(columns.map((c) => [c.name, COLTYPE[c.type]])),
    index: new Map(columns.map((c, i) => [c.name, i])),
    columns,
    now,
  };
  let kept = rows;
  if (query.filter !== undefined) {
    const e = parse(query.filter);
    const t = typeOf(e, ctx.cols);
    if (t !== "bool" && t !== "null") throw new OracleError("type", "filter is not boolean");
    checkZoned(e);
    checkConstants(e, ctx);
    kept = rows.filter((r) => evalNode(e, r, ctx) === true);
  }
  const count = kept.length;
  if (query.orderby !== undefined) {
    const keys = parseOrder(query.orderby);
    for (const k of keys) {
      typeOf(k.e, ctx.cols);
      checkZoned(k.e);
      checkConstants(k.e, ctx);
    }
    const vals = kept.map((r) => keys.map((k) => evalNode(k.e, r, ctx)));
    const idx = kept.map((_, i) => i);
    idx.sort((a, b) => {
      for (let k = 0; k < keys.length; k++) {
        const x = vals[a][k]!;
        const y = vals[b][k]!;
        // §5.1.4: null values come before non-null values in ascending order.
        let c = x === null ? (y === null ? 0 : -1) : y === null ? 1 : cmpValues(x, y);
        // NaN is unordered; sorted after every number (the engine's documented choice).
        if (Number.isNaN(c)) c = isSpecial(x) && x.sp === 0 ? (isSpecial(y) && y.sp === 0 ? 0 : 1) : -1;
        if (c !== 0) return keys[k].desc ? -c : c;
      }
      return a - b;
    });
    kept = idx.map((i) => kept[i]);
  }
  const skip = query.skip ?? 0;
  kept = kept.slice(skip, query.top === undefined ? undefined : skip + query.top);
  const all = query.select === undefined || (query.select.length === 1 && query.select[0] === "*");
  const pick = all ? columns.map((_, i) => i) : query.select!.map((n) => ctx.index.get(n)!);
  const out: { rows: CellValue[][]; count?: number } = { rows: kept.map((r) => pick.map((i) => r[i]!)) };
  if (query.count) out.count = count;
  return out;
}
