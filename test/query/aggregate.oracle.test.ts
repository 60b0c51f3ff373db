/**
 * `$apply` against an oracle written from the text of OData Data Aggregation 4.0, not from the
 * engine: it shares no code with src/query. It evaluates a structured description of each query
 * literally as the extension defines the transformations:
 *
 * - filter: "the subset of the input set for which the Boolean expression evaluates to true";
 * - compute: every instance of the input set with the computed property added;
 * - groupby: the input set is split into subsets whose instances have equal values of the grouping
 *   properties (null equals null); each subset is transformed by the nested transformations and
 *   the result holds the grouping properties and the aggregated values; without nested
 *   transformations, the distinct combinations of the grouping values;
 * - aggregate: one instance; sum = sum of the non-null values, min/max = smallest/largest non-null
 *   value, average = sum of the non-null values divided by their count (each null when there is
 *   no non-null value), countdistinct = number of distinct non-null values, $count = number of
 *   instances of the input set;
 * - transformations separated by `/` apply in order; `$filter` etc. then apply to the result.
 *
 * Sums are exact (scaled BigInt written here); decimals are the numbers the table model holds.
 * Result rows are compared as multisets: the extension defines no order of groups.
 *
 * Where the extension leaves a choice, the oracle takes the one src/query/README.md states:
 * - text orders by Unicode code point (as `$orderby` and `$filter` do), compared here code point by
 *   code point (`codePointAt`), not by UTF-16 unit;
 * - a decimal sum or average is the exact value rounded once to the nearest double: the oracle
 *   writes the exact quotient out to 800 significant digits (and a sticky digit when it does not
 *   end there), more than any midpoint between two doubles has, and lets `Number` round that text;
 * - a decimal result at or beyond (2^54 − 1) × 2^970 in magnitude (where rounding reaches 2^1024)
 *   fails the query with `overflow`, naming the result column.
 */
import { applyQuery, compileQuery, parseQuery } from "../../src/query";
import type { CellValue, Column, Table } from "../../src/table/model";
import { errorOf, makeTable } from "./fixture";

// ------------------------------------------------------------------ seeded random

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------ data

const COLS: Column[] = [
  { name: "Region", type: "text" },
  { name: "Label", type: "text" },
  { name: "Tiny", type: "decimal" },
  { name: "Huge", type: "decimal" },
  { name: "Team", type: "text" },
  { name: "Year", type: "integer" },
  { name: "Big", type: "integer", sourceType: "Edm.Int64" },
  { name: "Amount", type: "decimal" },
  { name: "Rate", type: "decimal" },
  { name: "Day", type: "date" },
  { name: "At", type: "datetime" },
  { name: "Flag", type: "boolean" },
];

function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)];
}

function randomTable(seed: number, n: number): Table {
  const rnd = mulberry32(seed);
  const rows: CellValue[][] = [];
  for (let i = 0; i < n; i++) {
    rows.push([
      pick(rnd, ["North", "South", "East", "Wést", null]),
      // Code point order differs from UTF-16 order between U+E000–U+FFFF and characters above U+FFFF.
      pick(rnd, ["\u{2000B} Tower", "\uFFFD", "ｚebra", "😀 smile", "Zürich", "zz", "\uE000 private", "\u{10FFFF}", null]),
      pick(rnd, [1e-30, 2e-30, 3.3e-25, 7e-310, -1e-30, 0.1, null]),
      pick(rnd, [1e308, -1e308, 5e307, 1.7976931348623157e308, 1, null]),
      pick(rnd, ["a", "b", "c"]),
      pick(rnd, [2023, 2024, 2025, null]),
      pick(rnd, ["9007199254740993", "9007199254740995", "-9007199254740997", "123456789012345678901", 5, -3, 0, 9007199254740991, null]),
      pick(rnd, [0.1, 0.2, 0.3, 1234.56, -7.05, 19.99, 1e6, 0.01, null]),
      rnd() < 0.15 ? null : Math.round(rnd() * 100000) / 1000,
      pick(rnd, ["2024-01-31", "2024-02-29", "2025-12-31", "2023-06-15", null]),
      pick(rnd, ["2025-01-31T08:00:00Z", "2024-06-30T23:59:59Z", "2025-01-31T07:59:59.999Z", null]),
      pick(rnd, [true, false, null]),
    ]);
  }
  return { ...makeTable(COLS, rows) };
}

// ------------------------------------------------------------------ the oracle

type Method = "sum" | "min" | "max" | "average" | "countdistinct";
type OAgg = { kind: "count"; alias: string } | { kind: "method"; col: string; method: Method; alias: string };
type OStep =
  | { k: "filter"; col: string; op: "gt" | "eq" | "ne"; value: CellValue }
  | { k: "compute"; col: string; add: number; alias: string }
  | { k: "aggregate"; items: OAgg[] }
  | { k: "groupby"; cols: string[]; inner: OStep[] };

interface ORel {
  columns: Column[];
  rows: CellValue[][];
}

/** Exact decimal: value = m / 10^s. */
interface Dec {
  m: bigint;
  s: number;
}
function decOf(v: CellValue): Dec {
  if (typeof v === "string") return { m: BigInt(v), s: 0 };
  // The decimal a number prints as, exponent form included (1e-30, 1.7976931348623157e+308).
  const [mant, exp = "0"] = String(v).toLowerCase().split("e");
  const [int, frac = ""] = mant.split(".");
  const m = BigInt(int + frac);
  const s = frac.length - Number(exp);
  return s >= 0 ? { m, s } : { m: m * 10n ** BigInt(-s), s: 0 };
}
function decAdd(a: Dec, b: Dec): Dec {
  const s = Math.max(a.s, b.s);
  return { m: a.m * 10n ** BigInt(s - a.s) + b.m * 10n ** BigInt(s - b.s), s };
}
function decText(d: Dec): string {
  const neg = d.m < 0n;
  let digits = (neg ? -d.m : d.m).toString().padStart(d.s + 1, "0");
  if (d.s > 0) digits = digits.slice(0, digits.length - d.s) + "." + digits.slice(digits.length - d.s);
  return (neg ? "-" : "") + digits;
}
/** Raised by the oracle where the engine must fail with `overflow`. */
class OracleOverflow extends Error {}

/** (2^54 − 1) × 2^970: the least magnitude that rounds to 2^1024, i.e. beyond every double. */
const OVERFLOW_AT = (2n ** 54n - 1n) * 2n ** 970n;

/**
 * The double nearest to the exact quotient n / d (d > 0): the quotient's decimal digits to 800
 * significant digits, a sticky 1 when digits remain, then `Number` (correctly rounded by
 * ECMAScript). 800 digits are more than any midpoint between two doubles has (at most 767), so no
 * midpoint can fall between the text and the exact value. Overflow is decided on the exact value.
 */
function nearest(n: bigint, d: bigint, alias: string): number {
  if (n === 0n) return 0;
  const neg = n < 0n;
  const a = neg ? -n : n;
  if (a >= OVERFLOW_AT * d) throw new OracleOverflow(alias);
  // a / d ≥ 10^(la − ld − 1), so a × 10^k / d has at least 800 digits.
  const k = 801 - (a.toString().length - d.toString().length);
  const num = k >= 0 ? a * 10n ** BigInt(k) : a;
  const den = k >= 0 ? d : d * 10n ** BigInt(-k);
  const digits = num / den;
  const sticky = num % den === 0n ? "" : "1";
  return Number(`${neg ? "-" : ""}${digits}${sticky}e${-k - sticky.length}`);
}

function intCell(b: bigint): CellValue {
  return b >= -BigInt(Number.MAX_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b.toString();
}

/** Orders two non-null cells of one column type. */
function cmp(type: Column["type"], x: CellValue, y: CellValue): number {
  switch (type) {
    case "integer": {
      const a = BigInt(x as number | string);
      const b = BigInt(y as number | string);
      return a < b ? -1 : a > b ? 1 : 0;
    }
    case "decimal":
      return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
    case "text":
      return codePointCmp(x as string, y as string);
    case "datetime":
      return Date.parse(x as string) - Date.parse(y as string);
    case "boolean":
      return Number(x) - Number(y);
    default:
      return x! < y! ? -1 : x! > y! ? 1 : 0;
  }
}

/** Unicode code point order, one code point at a time. */
function codePointCmp(x: string, y: string): number {
  const a = Array.from(x);
  const b = Array.from(y);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = a[i].codePointAt(0)! - b[i].codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}

function sameValue(type: Column["type"], x: CellValue, y: CellValue): boolean {
  if (x === null || y === null) return x === y;
  return cmp(type, x, y) === 0;
}

function col(rel: ORel, name: string): number {
  const i = rel.columns.findIndex((c) => c.name === name);
  if (i < 0) throw new Error(`oracle: no column ${name}`);
  return i;
}

function aggregateSet(rel: ORel, items: OAgg[]): { columns: Column[]; row: CellValue[] } {
  const columns: Column[] = [];
  const row: CellValue[] = [];
  for (const it of items) {
    if (it.kind === "count") {
      columns.push({ name: it.alias, type: "integer" });
      row.push(rel.rows.length);
      continue;
    }
    const i = col(rel, it.col);
    const type = rel.columns[i].type;
    const values = rel.rows.map((r) => r[i]!).filter((v) => v !== null);
    switch (it.method) {
      case "sum": {
        columns.push({ name: it.alias, type });
        if (values.length === 0) row.push(null);
        else if (type === "integer") row.push(intCell(values.reduce<bigint>((s, v) => s + BigInt(v), 0n)));
        else {
          const sum = values.map(decOf).reduce(decAdd);
          row.push(nearest(sum.m, 10n ** BigInt(sum.s), it.alias));
        }
        break;
      }
      case "average": {
        columns.push({ name: it.alias, type: "decimal" });
        if (values.length === 0) {
          row.push(null);
          break;
        }
        const sum = values.map(decOf).reduce(decAdd);
        // The exact quotient sum / count, rounded once.
        row.push(nearest(sum.m, BigInt(values.length) * 10n ** BigInt(sum.s), it.alias));
        break;
      }
      case "min":
      case "max": {
        columns.push({ name: it.alias, type });
        let best: CellValue = null;
        for (const v of values) {
          if (best === null) best = v;
          else {
            const c = cmp(type, v, best);
            if (it.method === "min" ? c < 0 : c > 0) best = v;
          }
        }
        row.push(best);
        break;
      }
      case "countdistinct": {
        columns.push({ name: it.alias, type: "integer" });
        const distinct: CellValue[] = [];
        for (const v of values) if (!distinct.some((d) => sameValue(type, d, v))) distinct.push(v);
        row.push(distinct.length);
        break;
      }
    }
  }
  return { columns, row };
}

function oracleStep(rel: ORel, step: OStep): ORel {
  switch (step.k) {
    case "filter": {
      const i = col(rel, step.col);
      const type = rel.columns[i].type;
      const keep = (v: CellValue): boolean => {
        // OData: comparisons with null are false except eq/ne null.
        if (step.value === null) return step.op === "eq" ? v === null : step.op === "ne" ? v !== null : false;
        if (v === null) return step.op === "ne";
        const c = cmp(type, v, step.value);
        return step.op === "gt" ? c > 0 : step.op === "eq" ? c === 0 : c !== 0;
      };
      return { columns: rel.columns, rows: rel.rows.filter((r) => keep(r[i])) };
    }
    case "compute": {
      const i = col(rel, step.col);
      const type = rel.columns[i].type;
      return {
        columns: [...rel.columns, { name: step.alias, type }],
        rows: rel.rows.map((r) => {
          const v = r[i]!;
          if (v === null) return [...r, null];
          const out = type === "integer" ? intCell(BigInt(v) + BigInt(step.add)) : Number(decText(decAdd(decOf(v), decOf(step.add))));
          return [...r, out];
        }),
      };
    }
    case "aggregate": {
      const a = aggregateSet(rel, step.items);
      return { columns: a.columns, rows: [a.row] };
    }
    case "groupby": {
      const idx = step.cols.map((c) => col(rel, c));
      const keyCols = idx.map((i) => rel.columns[i]);
      const subsets: { key: CellValue[]; rows: CellValue[][] }[] = [];
      for (const r of rel.rows) {
        const key = idx.map((i) => r[i]!);
        const hit = subsets.find((s) => s.key.every((k, j) => sameValue(keyCols[j].type, k, key[j])));
        if (hit) hit.rows.push(r);
        else subsets.push({ key, rows: [r] });
      }
      if (step.inner.length === 0) return { columns: keyCols, rows: subsets.map((s) => s.key) };
      const transform = (rows: CellValue[][]): ORel => {
        let sub: ORel = { columns: rel.columns, rows };
        for (const st of step.inner) sub = oracleStep(sub, st);
        return sub;
      };
      // The result's properties do not depend on whether there are any groups.
      const columns = [...keyCols, ...transform([]).columns];
      return { columns, rows: subsets.map((s) => [...s.key, ...transform(s.rows).rows[0]]) };
    }
  }
}

function oracle(table: Table, steps: OStep[]): ORel {
  let rel: ORel = { columns: table.columns, rows: table.rows };
  for (const s of steps) rel = oracleStep(rel, s);
  return rel;
}

// ------------------------------------------------------------------ query text

function lit(v: CellValue, type: Column["type"]): string {
  if (v === null) return "null";
  if (type === "text") return `'${String(v).replace(/'/g, "''")}'`;
  return String(v);
}

function stepText(s: OStep, columns: Column[]): string {
  switch (s.k) {
    case "filter":
      return `filter(${s.col} ${s.op} ${lit(s.value, columns.find((c) => c.name === s.col)!.type)})`;
    case "compute":
      return `compute(${s.col} add ${s.add} as ${s.alias})`;
    case "aggregate":
      return `aggregate(${s.items.map((i) => (i.kind === "count" ? `$count as ${i.alias}` : `${i.col} with ${i.method} as ${i.alias}`)).join(", ")})`;
    case "groupby":
      return `groupby((${s.cols.join(",")})${s.inner.length ? "," + s.inner.map((x) => stepText(x, columns)).join("/") : ""})`;
  }
}

// ------------------------------------------------------------------ random queries

const METHODS_FOR: Record<Column["type"], Method[]> = {
  text: ["min", "max", "countdistinct"],
  integer: ["sum", "min", "max", "average", "countdistinct"],
  decimal: ["sum", "min", "max", "average", "countdistinct"],
  date: ["min", "max", "countdistinct"],
  datetime: ["min", "max", "countdistinct"],
  boolean: ["countdistinct"],
};

function randomItems(rnd: () => number, columns: Column[]): OAgg[] {
  const n = 1 + Math.floor(rnd() * 3);
  const items: OAgg[] = [];
  for (let k = 0; k < n; k++) {
    if (rnd() < 0.2) items.push({ kind: "count", alias: `N${k}` });
    else {
      const c = pick(rnd, columns);
      items.push({ kind: "method", col: c.name, method: pick(rnd, METHODS_FOR[c.type]), alias: `A${k}` });
    }
  }
  return items;
}

function randomFilter(rnd: () => number, table: Table): OStep {
  const c = pick(rnd, COLS.filter((x) => x.type !== "boolean" && x.type !== "datetime"));
  const i = COLS.indexOf(c);
  const value = rnd() < 0.15 ? null : table.rows[Math.floor(rnd() * table.rows.length)][i]!;
  return { k: "filter", col: c.name, op: pick(rnd, ["gt", "eq", "ne"] as const), value };
}

function randomQuery(rnd: () => number, table: Table): OStep[] {
  const steps: OStep[] = [];
  let columns = COLS.slice();
  if (rnd() < 0.35) steps.push(randomFilter(rnd, table));
  if (rnd() < 0.3) {
    // Integer columns: exact in the engine today (decimal arithmetic becomes exact with issue #12).
    const c = pick(rnd, columns.filter((x) => x.type === "integer"));
    steps.push({ k: "compute", col: c.name, add: pick(rnd, [1, -2, 9007199254740000]), alias: "Plus" });
    columns = [...columns, { name: "Plus", type: c.type }];
  }
  const shape = rnd();
  if (shape < 0.2) {
    steps.push({ k: "aggregate", items: randomItems(rnd, columns) });
  } else {
    const nGroup = 1 + Math.floor(rnd() * 3);
    const groupCols: string[] = [];
    while (groupCols.length < nGroup) {
      const c = pick(rnd, columns).name;
      if (!groupCols.includes(c)) groupCols.push(c);
    }
    const inner: OStep[] = [];
    if (shape < 0.85) {
      if (rnd() < 0.2) inner.push(randomFilter(rnd, table));
      inner.push({ k: "aggregate", items: randomItems(rnd, columns) });
    }
    steps.push({ k: "groupby", cols: groupCols, inner });
    if (rnd() < 0.15 && inner.length > 0) {
      // A second level: aggregate the groups' results.
      const agg = inner[inner.length - 1] as Extract<OStep, { k: "aggregate" }>;
      const first = agg.items[0];
      const numeric = first.kind === "count" || ((first.method === "sum" || first.method === "countdistinct" || first.method === "average") && true);
      steps.push({
        k: "aggregate",
        items: numeric ? [{ kind: "method", col: first.alias, method: pick(rnd, ["sum", "max", "average"] as const), alias: "Top" }, { kind: "count", alias: "Groups" }] : [{ kind: "count", alias: "Groups" }],
      });
    }
  }
  return steps;
}

function canonical(rows: CellValue[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

describe("$apply against the oracle written from the Data Aggregation text", () => {
  const QUERIES = 500;
  it(`agrees on ${QUERIES} seeded random group-bys and aggregates (nulls, decimals, Int64 beyond 2^53, dates)`, () => {
    const rnd = mulberry32(16);
    let groupsSeen = 0;
    let overflows = 0;
    for (let q = 0; q < QUERIES; q++) {
      const table = randomTable(1000 + q, 40 + Math.floor(rnd() * 200));
      const steps = randomQuery(rnd, table);
      const text = steps.map((s) => stepText(s, COLS)).join("/");
      const context = `query ${q}: ${text}`;
      let expected: ORel;
      try {
        expected = oracle(table, steps);
      } catch (e) {
        if (!(e instanceof OracleOverflow)) throw e;
        // The engine must refuse too, naming the result column (the first one the oracle met may
        // differ from the engine's when several overflow, so any overflowing alias is accepted).
        const err = errorOf(() => applyQuery(table, parseQuery(`$apply=${encodeURIComponent(text)}`)));
        expect({ context, code: err.code, option: err.option }).toEqual({ context, code: "overflow", option: "$apply" });
        expect(err.message).toMatch(/^\$apply: '\w+' \(.+ with (sum|average)\) is about -?\d\.\d\de\+\d+, beyond the largest number a cell can hold/);
        overflows++;
        continue;
      }
      let got: Table;
      try {
        got = applyQuery(table, parseQuery(`$apply=${encodeURIComponent(text)}`)).table;
      } catch (e) {
        throw new Error(`query ${q}: ${text}: ${(e as Error).message}`);
      }
      expect({ context, columns: got.columns.map((c) => [c.name, c.type]) }).toEqual({ context, columns: expected.columns.map((c) => [c.name, c.type]) });
      expect({ context, rows: canonical(got.rows) }).toEqual({ context, rows: canonical(expected.rows) });
      // The streaming sink gives the same rows as the in-memory run.
      const sink = compileQuery(table.columns, { apply: text }).sink();
      sink.begin(table.columns);
      for (const r of table.rows) sink.row(r.slice());
      expect({ context, rows: sink.end().rows }).toEqual({ context, rows: got.rows });
      groupsSeen += got.rows.length;
    }
    expect(groupsSeen).toBeGreaterThan(QUERIES);
    // Both outcomes were exercised: summaries that fit, and sums beyond the double range.
    expect(overflows).toBeGreaterThan(5);
    expect(overflows).toBeLessThan(QUERIES / 3);
  });
});

// ------------------------------------------------------------------ the extension's own examples

/**
 * The example data of the extension (Sales with Customers, Products and Time), flattened: navigation
 * paths such as `Customer/Country` become columns `Customer_Country`.
 */
const SALES_COLUMNS: Column[] = [
  { name: "ID", type: "integer" },
  { name: "Customer", type: "text" },
  { name: "Customer_Name", type: "text" },
  { name: "Customer_Country", type: "text" },
  { name: "Time", type: "date" },
  { name: "Product", type: "text" },
  { name: "Product_Name", type: "text" },
  { name: "Product_Color", type: "text" },
  { name: "Product_Category", type: "text" },
  { name: "Currency", type: "text" },
  { name: "Amount", type: "decimal" },
];
// prettier-ignore
const SALES: CellValue[][] = [
  [1, "C1", "Joe", "Netherlands", "2012-01-03", "P3", "Sugar",  "White", "Food",     "USD", 1],
  [2, "C1", "Joe", "Netherlands", "2012-01-01", "P1", "Coffee", "Brown", "Food",     "USD", 2],
  [3, "C1", "Joe", "Netherlands", "2012-01-01", "P2", "Paper",  "White", "Non-Food", "USD", 4],
  [4, "C2", "Sue", "Netherlands", "2012-01-02", "P2", "Paper",  "White", "Non-Food", "USD", 8],
  [5, "C2", "Sue", "Netherlands", "2012-01-03", "P3", "Sugar",  "White", "Food",     "USD", 4],
  [6, "C3", "Sue", "USA",         "2012-01-02", "P1", "Coffee", "Brown", "Food",     "EUR", 2],
  [7, "C3", "Sue", "USA",         "2012-01-02", "P2", "Paper",  "White", "Non-Food", "EUR", 1],
  [8, "C3", "Sue", "USA",         "2012-01-03", "P3", "Sugar",  "White", "Food",     "EUR", 2],
];
const sales = () => makeTable(SALES_COLUMNS, SALES);

describe("$apply: the extension's examples on a flat Sales table", () => {
  const cases: Array<[string, string[], CellValue[][]]> = [
    ["$apply=aggregate(Amount with sum as Total)", ["Total"], [[24]]],
    ["$apply=aggregate(Amount with min as MinAmount)", ["MinAmount"], [[1]]],
    ["$apply=aggregate(Amount with max as MaxAmount)", ["MaxAmount"], [[8]]],
    ["$apply=aggregate(Amount with average as AverageAmount)", ["AverageAmount"], [[3]]],
    ["$apply=aggregate(Product with countdistinct as DistinctProducts)", ["DistinctProducts"], [[3]]],
    ["$apply=aggregate($count as SalesCount)", ["SalesCount"], [[8]]],
    ["$apply=groupby((Customer_Country),aggregate(Amount with sum as Total))", ["Customer_Country", "Total"], [["Netherlands", 19], ["USA", 5]]],
    // Two customers are named Sue: grouping by the name merges them.
    ["$apply=groupby((Customer_Name),aggregate(Amount with sum as Total))", ["Customer_Name", "Total"], [["Joe", 7], ["Sue", 17]]],
    ["$apply=groupby((Product_Color))", ["Product_Color"], [["White"], ["Brown"]]],
    ["$apply=groupby((Customer_Country,Product_Name),aggregate(Amount with sum as Total))", ["Customer_Country", "Product_Name", "Total"],
      [["Netherlands", "Sugar", 5], ["Netherlands", "Coffee", 2], ["Netherlands", "Paper", 12], ["USA", "Coffee", 2], ["USA", "Paper", 1], ["USA", "Sugar", 2]]],
    ["$apply=groupby((Currency),aggregate(Amount with sum as Total))", ["Currency", "Total"], [["USD", 19], ["EUR", 5]]],
    // The average of daily totals: group by day first, then aggregate the groups.
    ["$apply=groupby((Time),aggregate(Amount with sum as Total))/aggregate(Total with average as DailyAverage)", ["DailyAverage"], [[8]]],
    ["$apply=filter(Amount gt 3)/groupby((Product_Name),aggregate(Amount with sum as Total))", ["Product_Name", "Total"], [["Paper", 12], ["Sugar", 4]]],
    ["$apply=groupby((Customer_Country),aggregate(Amount with sum as Total, $count as Sales))&$filter=Total gt 10", ["Customer_Country", "Total", "Sales"], [["Netherlands", 19, 5]]],
    ["$apply=groupby((Product_Category),aggregate(Amount with sum as Total))&$orderby=Total desc&$top=1", ["Product_Category", "Total"], [["Non-Food", 13]]],
    ["$apply=compute(Amount mul 2 as Double)/aggregate(Double with sum as Total)", ["Total"], [[48]]],
    ["$apply=groupby((Customer),aggregate(Time with max as Last))&$select=Last&$orderby=Customer", ["Last"], [["2012-01-03"], ["2012-01-03"], ["2012-01-03"]]],
  ];
  it.each(cases)("%s", (query, names, rows) => {
    const r = applyQuery(sales(), parseQuery(query));
    expect(r.table.columns.map((c) => c.name)).toEqual(names);
    expect(r.table.rows).toEqual(rows);
  });

  it("agrees with the oracle on every example", () => {
    const got = applyQuery(sales(), parseQuery("$apply=groupby((Customer_Country,Currency),aggregate(Amount with sum as T, Amount with average as Av, Product with countdistinct as P, $count as N))"));
    const expected = oracle(sales(), [
      {
        k: "groupby",
        cols: ["Customer_Country", "Currency"],
        inner: [{ k: "aggregate", items: [
          { kind: "method", col: "Amount", method: "sum", alias: "T" },
          { kind: "method", col: "Amount", method: "average", alias: "Av" },
          { kind: "method", col: "Product", method: "countdistinct", alias: "P" },
          { kind: "count", alias: "N" },
        ] }],
      },
    ]);
    expect(canonical(got.table.rows)).toEqual(canonical(expected.rows));
  });
});
