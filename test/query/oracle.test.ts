/**
 * The engine against an independent oracle (test/query/oracle/oracle.ts, written from OData 4.01
 * Part 2, sharing no code with src/query) on seeded random queries: every operator, every function
 * the engine supports, nulls, decimals, Int64 beyond 2^53, emoji text, multi-key `$orderby`,
 * `$select`, `$top`, `$skip`, `$count`. Each query must give the same rows in the same order and
 * the same count, or fail in both for the same reason (division by zero, a zoned literal given to
 * year/month/day/hour/date/minute).
 */
import { applyQuery, FUNCTION_NAMES, QueryError, type LocalQuery } from "../../src/query";
import type { CellValue, Column } from "../../src/table/model";
import { makeTable } from "./fixture";
import { OracleError, oracleApply } from "./oracle/oracle";
import { mulberry32 } from "../../bench/random";

const QUERIES = 6000;
const SEED = 0x0da7a401;
const NOW = Date.parse("2025-06-01T12:34:56Z");

const rnd = mulberry32(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const chance = (p: number) => rnd() < p;
const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

const COLUMNS: Column[] = [
  { name: "id", type: "integer" },
  { name: "i", type: "integer" },
  { name: "big", type: "integer", sourceType: "Edm.Int64" },
  { name: "d", type: "decimal" },
  { name: "e", type: "decimal" },
  { name: "t", type: "text" },
  { name: "u", type: "text" },
  { name: "b", type: "boolean" },
  { name: "day", type: "date" },
  { name: "ts", type: "datetime" },
];

const INTS = [0, 1, -1, 2, 3, -3, 5, 7, 10, -10, 42];
const BIGS: CellValue[] = ["9007199254740993", "9007199254740992", "-9007199254740993", "9223372036854775807", "-9223372036854775808", "123456789012345678901", 9007199254740991, 0, -7];
const DECS = [0, 0.1, 0.2, 0.3, 24.71, 24.81, -24.71, 0.5, -0.5, 1.5, 2.5, -2.5, 100, 1e-7, 123456.789, 99.99, 0.01, 1e21, 3, -3];
const TEXTS = ["a", "A", "b", "Z", "é", "e\u0301", "😀", "a😀b", "😀😀x", "ｚ", "\uFFFD", "  pad  ", "\u3000x\u3000", "\u0085y", "\uFEFFz", "O'Brien", "Alpha", "alpha", "ALPHA", "abcabc", "x&y", "ß"];
const DATES = ["2024-02-29", "2025-01-31", "2025-02-01", "1999-12-31", "2025-06-01"];
const TIMES = ["2025-01-31T08:00:00Z", "2025-01-31T23:59:59.999Z", "2024-12-31T22:00:00Z", "2025-06-01T12:34:56Z", "2000-01-01T00:00:00Z"];

function makeRows(n: number): CellValue[][] {
  const rows: CellValue[][] = [];
  const maybe = <T>(v: T): T | null => (chance(0.15) ? null : v);
  for (let k = 0; k < n; k++) {
    rows.push([
      k + 1,
      maybe(pick(INTS)),
      maybe(pick(BIGS)),
      maybe(pick(DECS)),
      maybe(pick(DECS)),
      maybe(pick(TEXTS)),
      maybe(pick(TEXTS)),
      maybe(chance(0.5)),
      maybe(pick(DATES)),
      maybe(pick(TIMES)),
    ]);
  }
  return rows;
}

// ------------------------------------------------------------ expression generator (typed)

type Ty = "int" | "dec" | "text" | "bool" | "date" | "dt";
/** Generated tree; `prec` is the printed operator's level (Part 2's table; higher binds tighter). */
interface G {
  text: string;
  prec: number;
}
const PREC: Record<string, number> = { or: 1, and: 2, eq: 3, ne: 3, gt: 4, ge: 4, lt: 4, le: 4, add: 5, sub: 5, mul: 6, div: 6, divby: 6, mod: 6 };
const UNARY = 7;
const POSTFIX = 8;
const PRIMARY = 9;

const leaf = (text: string): G => ({ text, prec: PRIMARY });
const paren = (g: G): string => `(${g.text})`;
/** Minimal parentheses for the tree, plus some redundant ones. */
function operand(g: G, need: boolean): string {
  return need || (chance(0.12) && g.prec < PRIMARY) ? paren(g) : g.text;
}
function bin(op: string, a: G, b: G): G {
  const p = PREC[op];
  return { text: `${operand(a, a.prec < p)} ${chance(0.1) ? op.toUpperCase() : op} ${operand(b, b.prec <= p)}`, prec: p };
}
function unary(op: "-" | "not", a: G): G {
  return { text: op === "not" ? `not ${operand(a, a.prec < UNARY)}` : `-${operand(a, a.prec < UNARY || /^[-+\d]/.test(a.text))}`, prec: UNARY };
}
const call = (name: string, ...args: G[]): G => leaf(`${name}(${args.map((a) => a.text).join(", ")})`);
const str = (s: string) => leaf(`'${s.split("'").join("''")}'`);

const calls = new Set<string>();
const ops = new Set<string>();
const fn = (name: string, ...args: G[]) => {
  calls.add(name);
  return call(name, ...args);
};
const op = (name: string, a: G, b: G) => {
  ops.add(name);
  return bin(name, a, b);
};

function lit(t: Ty): G {
  switch (t) {
    case "int":
      return leaf(pick(["0", "1", "2", "3", "-3", "+5", "10", "42", "9007199254740993", "-9007199254740993", "9223372036854775807", "123456789012345678901"]));
    case "dec":
      return leaf(pick(["0.1", "0.2", "0.3", "24.81", "-24.71", "2.5", "-0.5", "1e-7", "1.5E1", "+0.01", "2.471e1", "99.99", "0.10000000000000000001", "123456.789", "1e21", "3.0",
        // quotients at the 34-digit boundary of decimal division
        "0.3333333333333333333333333333333333", "0.333333333333333333333333333333333", "0.6666666666666666666666666666666667", "-0.3333333333333333333333333333333333"]));
    case "text":
      return str(pick([...TEXTS, "", "😀", "ａ"]));
    case "bool":
      return leaf(pick(["true", "false"]));
    case "date":
      return leaf(pick(DATES));
    case "dt":
      return leaf(pick(["2025-01-31T10:00:00+02:00", "2025-01-31T08:00Z", "2025-06-01T12:34:56Z", "2024-12-31T23:00:00-01:00", "2025-01-31T23:59:59.999Z"]));
  }
}

function column(t: Ty): G {
  const names: Record<Ty, string[]> = { int: ["id", "i", "big"], dec: ["d", "e"], text: ["t", "u"], bool: ["b"], date: ["day"], dt: ["ts"] };
  return leaf(pick(names[t]));
}

function divisor(t: "int" | "dec", depth: number): G {
  // Mostly non-zero constants; sometimes an expression, which may be zero on a row (an error then).
  if (chance(0.75)) return t === "int" ? leaf(pick(["2", "3", "-4", "7"])) : leaf(pick(["0.3", "2.5", "-0.7", "3", "-3", "6"]));
  return num(t, depth - 1);
}

function num(t: "int" | "dec", depth: number): G {
  if (depth <= 0 || chance(0.3)) return chance(0.6) ? column(t) : lit(t);
  const r = rnd();
  if (t === "int") {
    if (r < 0.3) return op(pick(["add", "sub", "mul"]), num("int", depth - 1), num("int", depth - 1));
    if (r < 0.42) {
      const o = pick(["div", "mod"]);
      return op(o, num("int", depth - 1), divisor("int", depth));
    }
    if (r < 0.5) return unary("-", num("int", depth - 1));
    if (r < 0.6) return fn(pick(["length"]), text(depth - 1));
    if (r < 0.68) return fn("indexof", text(depth - 1), text(depth - 1));
    if (r < 0.78) return fn(pick(["year", "month", "day"]), chance(0.5) ? date(depth - 1) : dt(depth - 1));
    if (r < 0.86) return fn(pick(["hour", "minute", "second"]), dt(depth - 1));
    return fn(pick(["round", "floor", "ceiling"]), num("int", depth - 1));
  }
  if (r < 0.4) {
    const [a, b] = chance(0.5) ? [num("dec", depth - 1), num(pick(["int", "dec"]), depth - 1)] : [num("int", depth - 1), num("dec", depth - 1)];
    return op(pick(["add", "sub", "mul"]), a, b);
  }
  if (r < 0.55) return op(pick(["div", "mod"]), num("dec", depth - 1), divisor("dec", depth));
  if (r < 0.65) return op("divby", num(pick(["int", "dec"]), depth - 1), divisor(pick(["int", "dec"]), depth));
  if (r < 0.75) return unary("-", num("dec", depth - 1));
  return fn(pick(["round", "floor", "ceiling"]), num("dec", depth - 1));
}

function text(depth: number): G {
  if (depth <= 0 || chance(0.35)) return chance(0.6) ? column("text") : lit("text");
  const r = rnd();
  if (r < 0.25) return fn(pick(["tolower", "toupper", "trim"]), text(depth - 1));
  if (r < 0.45) return fn("concat", text(depth - 1), text(depth - 1));
  if (r < 0.7) return fn("substring", text(depth - 1), leaf(String(int(0, 5))));
  return fn("substring", text(depth - 1), leaf(String(int(0, 4))), leaf(String(int(0, 4))));
}

function date(depth: number): G {
  if (depth > 0 && chance(0.3)) return fn("date", chance(0.7) ? dt(depth - 1) : date(depth - 1));
  return chance(0.6) ? column("date") : lit("date");
}

function dt(depth: number): G {
  if (depth > 0 && chance(0.1)) return fn("now");
  return chance(0.6) ? column("dt") : lit("dt");
}

function any(t: Ty, depth: number): G {
  switch (t) {
    case "int":
    case "dec":
      return num(t, depth);
    case "text":
      return text(depth);
    case "bool":
      return bool(depth);
    case "date":
      return date(depth);
    case "dt":
      return dt(depth);
  }
}

const TYPES: Ty[] = ["int", "dec", "text", "bool", "date", "dt"];

function comparison(depth: number): G {
  const t = pick(TYPES);
  const o = pick(["eq", "ne", "gt", "ge", "lt", "le"]);
  const numeric = t === "int" || t === "dec";
  const a = any(t, depth - 1);
  // Numbers of the two kinds mix; null stands on either side sometimes.
  const b = chance(0.08) ? leaf("null") : any(numeric ? pick(["int", "dec"]) : t, depth - 1);
  return chance(0.5) || b.text === "null" ? op(o, a, b) : op(o, b, a);
}

function bool(depth: number): G {
  if (depth <= 0) return chance(0.5) ? column("bool") : comparison(1);
  const r = rnd();
  if (r < 0.3) return comparison(depth);
  if (r < 0.45) return op(pick(["and", "or"]), bool(depth - 1), bool(depth - 1));
  if (r < 0.53) return unary("not", bool(depth - 1));
  if (r < 0.63) {
    const t = pick(TYPES);
    const items: string[] = [];
    for (let k = int(0, 3); k > 0; k--) items.push(chance(0.15) ? "null" : lit(t).text);
    const arg = any(t, depth - 1);
    ops.add("in");
    return { text: `${operand(arg, arg.prec < POSTFIX)} in (${items.join(", ")})`, prec: POSTFIX };
  }
  if (r < 0.78) return fn(pick(["contains", "startswith", "endswith"]), text(depth - 1), text(depth - 1));
  if (r < 0.85) return chance(0.5) ? column("bool") : lit("bool");
  return comparison(depth);
}

function orderby(): string {
  const keys: string[] = [];
  for (let k = int(1, 3); k > 0; k--) {
    const t = pick(TYPES);
    const e = chance(0.4) ? column(t) : any(t, 2);
    keys.push(e.text + pick(["", " asc", " desc"]));
  }
  return keys.join(", ");
}

function randomQuery(): LocalQuery {
  const q: LocalQuery = {};
  if (chance(0.9)) q.filter = bool(int(1, 4)).text;
  if (chance(0.6)) q.orderby = orderby();
  if (chance(0.25)) q.select = COLUMNS.filter(() => chance(0.5)).map((c) => c.name).slice(0, 4);
  if (q.select?.length === 0) delete q.select;
  if (chance(0.25)) q.top = int(0, 10);
  if (chance(0.25)) q.skip = int(0, 10);
  if (chance(0.25)) q.count = true;
  return q;
}

type Outcome = { rows: CellValue[][]; count?: number } | { error: string };

function engine(rows: CellValue[][], q: LocalQuery): Outcome {
  try {
    const r = applyQuery(makeTable(COLUMNS, rows), q, { now: NOW });
    return r.count === undefined ? { rows: r.table.rows } : { rows: r.table.rows, count: r.count };
  } catch (e) {
    if (e instanceof QueryError) return { error: e.code === "type_mismatch" ? "type" : e.code };
    throw e;
  }
}

function oracle(rows: CellValue[][], q: LocalQuery): Outcome {
  try {
    return oracleApply(COLUMNS, rows, q, NOW);
  } catch (e) {
    if (e instanceof OracleError) return { error: e.kind };
    throw e;
  }
}

describe("engine vs oracle on directed queries", () => {
  const rows: CellValue[][] = [
    [1, 1, "9007199254740993", 24.71, 0.1, "a😀b", "ｚ", true, "2025-01-31", "2025-01-31T08:00:00Z"],
    [2, 3, "9007199254740992", 0.2, 0.1, "😀", "z", false, "2024-02-29", "2024-12-31T22:00:00Z"],
    [3, 0, null, null, 2.5, "\u0085x\uFEFF", null, null, null, null],
    [4, -3, "-9223372036854775808", -2.5, 3, "e\u0301", "é", true, "1999-12-31", "2025-06-01T12:34:56Z"],
  ];
  const DIRECTED = [
    "d add e eq 0.3",
    "1 divby 3 eq 0.3333333333333333333333333333333333",
    "2 divby 3 eq 0.6666666666666666666666666666666667",
    "d divby 3 mul 3 eq d",
    "big add 1 eq 9007199254740994",
    "big mul 2 gt 18014398509481985",
    "not b eq true",
    "b eq id gt 2",
    "b gt false",
    "length(t) eq 3",
    "indexof(t, 'b') eq 2",
    "substring(t, 1, 1) eq '😀'",
    "substring(t, -2) eq '😀b'",
    "substring(t, -9, 1) eq 'a'",
    "substring(t, 0, i) eq 'a'",
    "t gt u",
    "u lt 'ｚ'",
    "trim(t) eq 'x\uFEFF'",
    "round(d) eq -3",
    "i mod 2 eq -1",
    "e mod 0.3 eq 0.1",
    "id in ()",
    "-2.5 in (d, e)".replace("(d, e)", "(-2.5)"),
    "i ne 0 and id div i eq 1",
    "id div i eq 1",
  ];
  test("they are not vacuous: most keep rows, one fails on division by zero, one on a negative length", () => {
    const outcomes = DIRECTED.map((filter) => engine(rows, { filter }));
    expect(outcomes.filter((o) => "rows" in o && o.rows.length > 0).length).toBeGreaterThanOrEqual(20);
    expect(engine(rows, { filter: "d add 0.1 eq 24.81" })).toEqual({ rows: [rows[0]] });
    expect(outcomes.filter((o) => "error" in o)).toEqual([{ error: "invalid_argument" }, { error: "division_by_zero" }]);
  });
  test.each(DIRECTED)("%s", (filter) => {
    for (const orderby of [undefined, "d sub e desc, t", "b, big desc"]) {
      const q: LocalQuery = orderby === undefined ? { filter } : { filter, orderby };
      expect(engine(rows, q)).toEqual(oracle(rows, q));
    }
  });
});

describe("engine vs OData 4.01 oracle on seeded random queries", () => {
  test(`${QUERIES} random queries agree (seed ${SEED})`, () => {
    const tables = Array.from({ length: 20 }, () => makeRows(int(0, 40)));
    let compared = 0;
    const errors = new Map<string, number>();
    let disagree = 0;
    const mismatches: string[] = [];
    for (let n = 0; n < QUERIES; n++) {
      const rows = tables[n % tables.length];
      const q = randomQuery();
      const a = engine(rows, q);
      const b = oracle(rows, q);
      compared++;
      if ("error" in b) errors.set(b.error, (errors.get(b.error) ?? 0) + 1);
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        disagree++;
        if (mismatches.length < 5) mismatches.push(`${JSON.stringify(q)}\n  engine: ${JSON.stringify(a).slice(0, 300)}\n  oracle: ${JSON.stringify(b).slice(0, 300)}`);
      }
    }
    console.log(
      `oracle comparison: ${compared} queries compared, ${compared - disagree} agree (fail in both: ${[...errors].map(([k, n]) => `${n} ${k}`).join(", ") || "none"}); ` +
        `operators used: ${[...ops].sort().join(" ")}; functions used: ${[...calls].sort().join(" ")}`,
    );
    expect(mismatches).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(5000);
    // Coverage: every binary operator, `in`, every function the engine supports.
    for (const o of ["and", "or", "eq", "ne", "gt", "ge", "lt", "le", "add", "sub", "mul", "div", "divby", "mod", "in"]) expect(ops).toContain(o);
    for (const f of FUNCTION_NAMES) expect(calls).toContain(f);
    // Division by zero does happen, and both sides fail on it.
    expect(errors.get("division_by_zero")).toBeGreaterThan(0);
    expect(errors.get("invalid_argument")).toBeGreaterThan(0);
  });
});
