/**
 * Summaries, exact and bounded (`$apply`), each checked against an oracle written here that shares
 * no code with src/query:
 * - text order: code points read with `codePointAt`, one character at a time;
 * - exact arithmetic: BigInt rationals; a double is right when no other double is nearer to the
 *   exact value (neighbours from the IEEE 754 bit pattern, distances compared exactly), ties even;
 * - the double range: |x| ≥ (2^54 − 1) × 2^970 rounds beyond the largest double (IEEE 754).
 * - the size of a query: the characters the tokenizer reads and the columns the resolvers register
 *   are counted (deterministic, no timing): they must grow in proportion to the query's length.
 */
import { applyQuery, compileQuery, QueryError } from "../../src/query";
import * as lexer from "../../src/query/lexer";
import { ColumnResolver } from "../../src/query/columns";
import { nearestDouble } from "../../src/query/decimal";
import { MAX_APPLY_NESTING } from "../../src/query/applyParser";
import type { CellValue, Column } from "../../src/table/model";
import { errorOf, makeTable } from "./fixture";
import { mulberry32 } from "../../bench/random";

// ------------------------------------------------------------------ oracle: code points

function codePointOrder(x: string, y: string): number {
  const a = Array.from(x);
  const b = Array.from(y);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = a[i].codePointAt(0)! - b[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

// ------------------------------------------------------------------ oracle: exact doubles

interface Ratio {
  n: bigint;
  d: bigint;
}

/** The exact value of a finite double, from its bits. */
function exactOfDouble(x: number): Ratio {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const sign = hi >>> 31 ? -1n : 1n;
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp === 0x7ff) throw new Error(`not finite: ${x}`);
  let e = exp - 1075;
  if (exp === 0) e = -1074;
  else mant |= 1n << 52n;
  return e >= 0 ? { n: sign * (mant << BigInt(e)), d: 1n } : { n: sign * mant, d: 1n << BigInt(-e) };
}

/** The next double up or down (by bit pattern: adjacent doubles have adjacent patterns). */
function neighbour(x: number, up: boolean): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x === 0 ? (up ? 0 : -0) : x);
  let bits = view.getBigUint64(0);
  const positive = !(bits >> 63n) || x === 0;
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  bits += positive === up ? 1n : -1n;
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

const absR = (a: Ratio): Ratio => ({ n: a.n < 0n ? -a.n : a.n, d: a.d });
const subR = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.d - b.n * a.d, d: a.d * b.d });
const cmpR = (a: Ratio, b: Ratio): number => {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
};
/** (2^54 − 1) × 2^970: from here on, IEEE 754 rounds to infinity. */
const OVERFLOW_AT: Ratio = { n: (2n ** 54n - 1n) * 2n ** 970n, d: 1n };

function evenSignificand(x: number): boolean {
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, x);
  return (v.getUint32(4) & 1) === 0;
}

/** Why `r` is not the double nearest to `q` (ties to even), or "" when it is. */
function nearestProblem(r: number, q: Ratio): string {
  if (!Number.isFinite(r)) return cmpR(absR(q), OVERFLOW_AT) >= 0 ? "" : `${r} for a value within the double range`;
  if (cmpR(absR(q), OVERFLOW_AT) >= 0) return `${r} for a value beyond the double range`;
  const dist = absR(subR(exactOfDouble(r), q));
  for (const up of [true, false]) {
    const o = neighbour(r, up);
    if (!Number.isFinite(o)) continue;
    const c = cmpR(absR(subR(exactOfDouble(o), q)), dist);
    if (c < 0) return `${o} is nearer than ${r}`;
    if (c === 0 && !evenSignificand(r) && evenSignificand(o)) return `tie between ${r} and ${o}: the even one wins`;
  }
  return "";
}

/** The exact decimal a number cell stands for (its shortest text), as a ratio. */
function ratioOfCell(x: number): Ratio {
  const [mant, exp = "0"] = String(x).toLowerCase().split("e");
  const [int, frac = ""] = mant.split(".");
  const m = BigInt(int + frac);
  const s = frac.length - Number(exp);
  return s >= 0 ? { n: m, d: 10n ** BigInt(s) } : { n: m * 10n ** BigInt(-s), d: 1n };
}
const addR = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });

// ------------------------------------------------------------------ helpers

const TEXT: Column[] = [
  { name: "G", type: "text" },
  { name: "project_name", type: "text" },
];
const DEC: Column[] = [
  { name: "G", type: "text" },
  { name: "D", type: "decimal" },
  { name: "E", type: "decimal" },
];
const sum = (rows: CellValue[][], query: string) => applyQuery(makeTable(DEC, rows), { apply: query }).table.rows;

describe("text min and max: code point order, as $orderby and $filter", () => {
  const names = ["\uFFFD", "\u{2000B} Tower", "Zürich", "ｚebra", "\uE000 private", "😀", "abc", "\u{10FFFF}", "a\u{1F600}", "a\uFFFF"];
  const rows: CellValue[][] = names.flatMap((n, i) => [[i % 2 ? "odd" : "even", n], [i % 2 ? "odd" : "even", null]]);

  it("max(project_name) is '𠀋 Tower' (U+2000B), not '\\uFFFD'", () => {
    const r = applyQuery(makeTable(TEXT, [["x", "\uFFFD"], ["x", "\u{2000B} Tower"], ["x", "Tower"]]), { apply: "aggregate(project_name with max as top, project_name with min as bottom)" });
    expect(r.table.rows).toEqual([["\u{2000B} Tower", "Tower"]]);
  });

  it("per group, min and max are the code point extremes and agree with $orderby", () => {
    const r = applyQuery(makeTable(TEXT, rows), { apply: "groupby((G),aggregate(project_name with max as hi, project_name with min as lo))" }).table.rows;
    for (const [g, hi, lo] of r) {
      const mine = names.filter((_, i) => (i % 2 ? "odd" : "even") === g).sort(codePointOrder);
      expect([g, hi, lo]).toEqual([g, mine[mine.length - 1], mine[0]]);
      const sorted = applyQuery(makeTable(TEXT, rows), { filter: `G eq '${g as string}' and project_name ne null`, orderby: "project_name desc", top: 1 }).table.rows;
      expect(sorted[0][1]).toBe(hi);
    }
  });

  it("expressions too (tolower(...) with max), and the streaming sink gives the same", () => {
    const q = { apply: "aggregate(tolower(project_name) with max as hi)" };
    const expected = [...names].map((n) => n.toLowerCase()).sort(codePointOrder).pop();
    expect(applyQuery(makeTable(TEXT, rows), q).table.rows).toEqual([[expected]]);
    const sink = compileQuery(TEXT, q).sink();
    sink.begin(TEXT);
    for (const row of rows) sink.row(row.slice());
    expect(sink.end().rows).toEqual([[expected]]);
  });
});

describe("sums and averages beyond the double range are errors that name the column", () => {
  const MAX = Number.MAX_VALUE;

  it("a sum whose exact value rounds beyond the largest double fails with overflow, naming alias and expression", () => {
    // The cell MAX stands for 1.7976931348623157e308; + 2e292 ≥ (2^54 − 1) × 2^970 (the oracle's exact threshold).
    expect(cmpR(addR(ratioOfCell(MAX), ratioOfCell(2e292)), OVERFLOW_AT)).toBeGreaterThanOrEqual(0);
    const e = errorOf(() => sum([["a", MAX, 1], ["a", 2e292, 2]], "groupby((G),aggregate(D with sum as total_d, E with sum as total_e))"));
    expect(e.code).toBe("overflow");
    expect(e.option).toBe("$apply");
    expect(e.position).toBe("groupby((G),aggregate(".length + 1);
    expect(e.message).toBe(
      "$apply: 'total_d' (D with sum) is about 1.80e+308, beyond the largest number a cell can hold (±1.7976931348623157e+308) at 23; sum a scaled value instead (e.g. D divby 1000000), or filter out the rows that make it this large",
    );
  });

  it("just below the threshold the sum is the largest double; negative sums overflow too", () => {
    expect(cmpR(addR(ratioOfCell(MAX), ratioOfCell(1e292)), OVERFLOW_AT)).toBeLessThan(0);
    expect(sum([["a", MAX, 1], ["a", 1e292, 2]], "aggregate(D with sum as S)")).toEqual([[MAX]]);
    expect(errorOf(() => sum([["a", -MAX, 1], ["a", -1e308, 2]], "aggregate(D with sum as S)")).message).toMatch(/^\$apply: 'S' \(D with sum\) is about -2\.80e\+308/);
  });

  it("sums are exact: an intermediate total beyond the range that comes back is no error", () => {
    expect(sum([["a", 1e308, 1], ["a", 1e308, 2], ["a", -1e308, 3]], "aggregate(D with sum as S, D with average as A)")).toEqual([[1e308, 3.333333333333333e307]]);
  });

  it("averages, min/max of expressions and computed columns beyond the range fail the same way", () => {
    const rows: CellValue[][] = [["a", 1e308, 1], ["a", 1.5e308, 2]];
    expect(errorOf(() => sum(rows, "aggregate(D mul 10 with average as A)")).message).toMatch(/^\$apply: 'A' \(D mul 10 with average\) is about 1\.25e\+309, beyond the largest number a cell can hold/);
    expect(errorOf(() => sum(rows, "aggregate(D mul 10 with max as M)")).message).toMatch(/^\$apply: 'M' \(D mul 10 with max\) is about 1\.50e\+309/);
    const c = errorOf(() => sum(rows, "compute(D mul 10 as X)"));
    expect([c.code, c.message]).toEqual(["overflow", "$apply: the computed column 'X' (D mul 10) is beyond the largest number a cell can hold (±1.7976931348623157e+308) in a row at 9; scale the expression down, or filter out the rows that make it this large"]);
    // Averages of the largest values stay within the range: no error.
    expect(sum(rows, "aggregate(D with average as A)")).toEqual([[1.25e308]]);
  });

  it("the streaming sink (CLI and task pane) fails the same way at the end", () => {
    const sink = compileQuery(DEC, { apply: "aggregate(D with sum as S)" }).sink();
    sink.begin(DEC);
    sink.row(["a", MAX, 1]);
    sink.row(["a", MAX, 1]);
    let err: unknown;
    try {
      sink.end();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueryError);
    expect((err as QueryError).code).toBe("overflow");
    expect((err as QueryError).message).toMatch(/^\$apply: 'S' \(D with sum\)/);
  });

  it("integer sums never overflow: Int64 totals beyond 2^63 stay exact digit text", () => {
    const cols: Column[] = [{ name: "I", type: "integer", sourceType: "Edm.Int64" }];
    const big = "9223372036854775807";
    const r = applyQuery(makeTable(cols, [[big], [big], [big]]), { apply: "aggregate(I with sum as S, I with average as A)" }).table.rows;
    expect(r[0][0]).toBe((3n * BigInt(big)).toString());
    expect(nearestProblem(r[0][1] as number, { n: BigInt(big), d: 1n })).toBe("");
  });
});

describe("averages and sums of decimals are the exact value rounded once", () => {
  it("the average of 1e-30, 2e-30 and 2e-30 is the double nearest to 5e-30 / 3", () => {
    const r = sum([["a", 1e-30, 1], ["a", 2e-30, 1], ["a", 2e-30, 1]], "aggregate(D with average as A)")[0][0] as number;
    expect(nearestProblem(r, { n: 5n, d: 3n * 10n ** 30n })).toBe("");
    expect(r).toBe(1.6666666666666666e-30);
  });

  it("on random sets of decimals from subnormal to near the largest, sums and averages are nearest doubles", () => {
    const rnd = mulberry32(24);
    let checked = 0;
    for (let t = 0; t < 400; t++) {
      const exp = Math.floor(rnd() * 640) - 330;
      const rows: CellValue[][] = [];
      const count = 1 + Math.floor(rnd() * 6);
      for (let i = 0; i < count; i++) {
        const digits = 1 + Math.floor(rnd() * 17);
        const m = Math.floor(rnd() * 10 ** digits) * (rnd() < 0.2 ? -1 : 1);
        const x = Number(`${m}e${exp + Math.floor(rnd() * 4)}`);
        if (Number.isFinite(x)) rows.push(["a", x, i]);
      }
      if (rows.length === 0) continue;
      let exact: Ratio = { n: 0n, d: 1n };
      for (const r of rows) exact = addR(exact, ratioOfCell(r[1] as number));
      const context = `set ${t}: ${rows.map((r) => String(r[1])).join(", ")}`;
      let got: CellValue[][];
      try {
        got = sum(rows, "aggregate(D with sum as S, D with average as A)");
      } catch (e) {
        // Only a sum beyond the range may fail.
        expect({ context, code: (e as QueryError).code, beyond: cmpR(absR(exact), OVERFLOW_AT) >= 0 }).toEqual({ context, code: "overflow", beyond: true });
        continue;
      }
      expect({ context, problem: nearestProblem(got[0][0] as number, exact) }).toEqual({ context, problem: "" });
      expect({ context, problem: nearestProblem(got[0][1] as number, { n: exact.n, d: exact.d * BigInt(rows.length) }) }).toEqual({ context, problem: "" });
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("nearestDouble rounds any ratio once (random, subnormal, huge and tie cases)", () => {
    const rnd = mulberry32(7);
    const big = (bits: number) => {
      let x = 0n;
      for (let i = 0; i < bits; i += 16) x = (x << 16n) | BigInt(Math.floor(rnd() * 65536));
      return x;
    };
    const cases: Ratio[] = [
      { n: 3n, d: 1n << 1075n }, // a tie between the two smallest subnormals: the even one
      { n: 1n, d: 1n << 1076n }, // below half the smallest subnormal: 0
      { n: (1n << 53n) + 1n, d: 1n }, // a tie above 2^53: even
      { n: (2n ** 54n - 1n) * 2n ** 970n - 1n, d: 1n }, // just below the overflow threshold: the largest double
      { n: -7n, d: 2n },
    ];
    for (let i = 0; i < 500; i++) cases.push({ n: big(16 + Math.floor(rnd() * 1200)) * (rnd() < 0.5 ? -1n : 1n), d: big(16 + Math.floor(rnd() * 1200)) + 1n });
    for (const c of cases) expect({ c: `${c.n}/${c.d}`.slice(0, 60), problem: nearestProblem(nearestDouble(c.n, c.d), c) }).toEqual({ c: `${c.n}/${c.d}`.slice(0, 60), problem: "" });
    expect(nearestDouble(1n, 1n << 1076n)).toBe(0);
    expect(nearestDouble((2n ** 54n - 1n) * 2n ** 970n, 1n)).toBe(Infinity);
  });

  it("countdistinct and max of exact decimal expressions: values that round to one double stay distinct", () => {
    // 1 + 1e-20 and 1 + 2e-20 are different decimals; both round to the double 1.
    const rows: CellValue[][] = [["a", 1, 1e-20], ["a", 1, 2e-20], ["a", 1, 2e-20]];
    expect(sum(rows, "aggregate(D add E with countdistinct as K, D add E with max as M, D with countdistinct as K1)")).toEqual([[2, 1, 1]]);
  });
});

describe("the size of a query: parsing and planning grow linearly", () => {
  const COLS: Column[] = [
    { name: "a", type: "integer" },
    { name: "b", type: "decimal" },
    { name: "c", type: "text" },
  ];
  const SHAPES: Record<string, (n: number) => string> = {
    "chained filter(true)": (n) => Array.from({ length: n }, () => "filter(true)").join("/"),
    "groupby with n aggregates": (n) => `groupby((a),aggregate(${Array.from({ length: n }, (_, i) => `b with sum as s${i}`).join(",")}))`,
    "aggregate with n items": (n) => `aggregate(${Array.from({ length: n }, (_, i) => `b with max as m${i}`).join(",")})`,
    "chained compute": (n) => Array.from({ length: n }, (_, i) => `compute(a add ${i} as c${i})`).join("/"),
    "groupby with n keys": (n) => `compute(${Array.from({ length: n }, (_, i) => `a as k${i}`).join(",")})/groupby((${Array.from({ length: n }, (_, i) => `k${i}`).join(",")}))`,
  };

  /** Characters the tokenizer reads and columns the resolvers register while compiling. */
  function work(text: string): { chars: number; columns: number } {
    const tok = jest.spyOn(lexer, "tokenize");
    const add = jest.spyOn(ColumnResolver.prototype, "add");
    try {
      compileQuery(COLS, { apply: text });
      return { chars: tok.mock.calls.reduce((s, c) => s + c[0].length, 0), columns: add.mock.calls.length };
    } finally {
      tok.mockRestore();
      add.mockRestore();
    }
  }

  it.each(Object.keys(SHAPES))("%s: 4× the steps cost at most 4.5× the work", (shape) => {
    const small = work(SHAPES[shape](1500));
    const large = work(SHAPES[shape](6000));
    const textRatio = SHAPES[shape](6000).length / SHAPES[shape](1500).length;
    // Quadratic work would grow 16×: the padded re-tokenizing and per-step resolvers did.
    expect(large.chars / small.chars).toBeLessThan(textRatio * 1.1);
    expect(large.columns / Math.max(1, small.columns)).toBeLessThan(4.5);
  });

  it("24,000 chained steps compile and run without exhausting the stack", () => {
    const table = makeTable(COLS, [[1, 2.5, "x"], [2, 3.5, "y"]]);
    expect(applyQuery(table, { apply: SHAPES["chained filter(true)"](24_000) }).table.rows).toEqual([[1, 2.5, "x"], [2, 3.5, "y"]]);
    const groups = Array.from({ length: 24_000 }, () => "groupby((a,b))").join("/");
    expect(applyQuery(table, { apply: groups }).table.rows).toEqual([[1, 2.5], [2, 3.5]]);
    const computed = applyQuery(table, { apply: SHAPES["chained compute"](3000) }).table;
    expect(computed.columns.length).toBe(3 + 3000);
    expect(computed.rows[1].slice(3, 6)).toEqual([2, 3, 4]);
    expect(computed.rows[1][3 + 2999]).toBe(2 + 2999);
  });

  it(`nesting deeper than ${MAX_APPLY_NESTING} levels is a clear error, not a stack overflow`, () => {
    const deep = "groupby((a),".repeat(MAX_APPLY_NESTING + 1) + "aggregate($count as n)" + ")".repeat(MAX_APPLY_NESTING + 1);
    const e = errorOf(() => compileQuery(COLS, { apply: deep }));
    expect(e.message).toContain(`transformations are nested too deeply (more than ${MAX_APPLY_NESTING} levels)`);
    const parens = errorOf(() => compileQuery(COLS, { apply: `filter(${"(".repeat(50_000)}true${")".repeat(50_000)})` }));
    expect(parens.message).toContain("nested too deeply (more than 100 levels)");
  });
});
