/**
 * Local query engine benchmark: filter + sort of 200,000 rows × 12 columns through applyQuery,
 * against a hand-written loop doing the same work (same predicate with OData null rules, same
 * stable sort with nulls first, fresh output rows). Prints both medians and the ratio; the target
 * for plain filters and sorts is ≤ 2×.
 *
 * Beside them, decimal-arithmetic filters (`Budget sub Actual gt 25000.25`): the engine computes
 * exact Edm.Decimal values (src/query/decimal.ts); the hand-written loop is what a developer would
 * write for money with two decimals, integer cents in doubles. Same rows are checked first; the
 * ratio is printed separately (exact arithmetic costs more than a double subtraction, by design).
 *
 * Then the size of a query: compiling `$apply` texts of 1,500, 6,000 and 24,000 steps or items
 * (chained `filter(true)`, `groupby` with that many aggregates, `aggregate` with that many items,
 * chained `compute`), printing the time per 1,000 characters and the ratio between sizes (linear:
 * 4× the steps, about 4× the time; the quadratic parser it replaced took 12-60×). And the memory of
 * a grouping on a unique column: heap bytes per group kept (run with `node --expose-gc` for exact
 * figures; without it the figure includes garbage not yet collected).
 * Run: npm run bench:query
 */
import { applyQuery, compileQuery, createQuerySink, type LocalQuery } from "../src/query";
import type { CellValue, Column, Table } from "../src/table/model";
import { mulberry32 } from "./random";

const ROWS = 200_000;
const RUNS = 7;

const columns: Column[] = [
  { name: "Id", type: "integer" },
  { name: "Name", type: "text" },
  { name: "Status", type: "text" },
  { name: "Region", type: "text" },
  { name: "Budget", type: "decimal" },
  { name: "Actual", type: "decimal" },
  { name: "Score", type: "integer" },
  { name: "Start", type: "date" },
  { name: "Updated", type: "datetime" },
  { name: "Active", type: "boolean" },
  { name: "Owner", type: "text" },
  { name: "Cost Center Code", type: "text" },
];

function makeTable(): Table {
  const rnd = mulberry32(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const maybe = <T>(v: T): T | null => (rnd() < 0.05 ? null : v);
  const statuses = ["Open", "Closed", "On Hold", "Proposed"];
  const regions = ["EMEA", "APAC", "AMER", "LATAM"];
  const syll = ["ka", "lo", "mi", "ne", "ru", "ta", "zo", "be"];
  const rows: CellValue[][] = [];
  const base = Date.UTC(2023, 0, 1);
  for (let i = 0; i < ROWS; i++) {
    const day = Math.floor(rnd() * 1000);
    rows.push([
      i + 1,
      maybe(pick(syll) + pick(syll) + pick(syll)),
      maybe(pick(statuses)),
      maybe(pick(regions)),
      maybe(Math.round(rnd() * 100_000_00) / 100),
      maybe(Math.round(rnd() * 100_000_00) / 100),
      maybe(Math.floor(rnd() * 100)),
      maybe(new Date(base + day * 86_400_000).toISOString().slice(0, 10)),
      maybe(new Date(base + Math.floor(rnd() * 1000 * 86_400) * 1000).toISOString()),
      maybe(rnd() < 0.5),
      maybe("owner" + Math.floor(rnd() * 500)),
      maybe("CC-" + Math.floor(rnd() * 50)),
    ]);
  }
  return {
    columns,
    rows,
    meta: { key: "bench", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: null, etag: null, lastModified: null, fetchedAt: new Date(0).toISOString() },
  };
}

interface Scenario {
  name: string;
  query: LocalQuery;
  hand: (rows: CellValue[][]) => CellValue[][];
  /** Decimal-arithmetic scenario: reported beside the plain ones, not held to their target. */
  arithmetic?: boolean;
}

const cents = (v: CellValue): number | null => (v === null ? null : Math.round((v as number) * 100));

/** Stable sort with OData null order (null first ascending, last descending), as applyQuery does. */
function cmpNullFirst(x: CellValue, y: CellValue, dir: number): number {
  if (x === y) return 0;
  if (x === null) return -dir;
  if (y === null) return dir;
  return x < y ? -dir : x > y ? dir : 0;
}

const UPDATED_AFTER = Date.parse("2024-06-01T00:00:00+02:00");

const scenarios: Scenario[] = [
  {
    name: "numeric + text filter, sort by decimal desc then id",
    query: { filter: "Status eq 'Open' and Budget gt 50000 and Active", orderby: "Budget desc, Id" },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) {
        const b = r[4] as number | null;
        if (r[2] === "Open" && b !== null && b > 50000 && r[9] === true) out.push(r);
      }
      out.sort((a, b) => cmpNullFirst(a[4], b[4], -1) || cmpNullFirst(a[0], b[0], 1));
      return out.map((r) => r.slice());
    },
  },
  {
    name: "function + date-time filter, sort by text",
    query: {
      filter: "contains(Name, 'ka') and Updated ge 2024-06-01T00:00:00+02:00 and Region in ('EMEA', 'APAC')",
      orderby: "Name",
    },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) {
        const name = r[1] as string | null;
        const upd = r[8] as string | null;
        const region = r[3];
        if (name !== null && name.includes("ka") && upd !== null && Date.parse(upd) >= UPDATED_AFTER && (region === "EMEA" || region === "APAC")) {
          out.push(r);
        }
      }
      out.sort((a, b) => cmpNullFirst(a[1], b[1], 1));
      return out.map((r) => r.slice());
    },
  },
  {
    name: "wide OR filter, sort by date desc, top 1000, select 4 columns",
    query: {
      filter: "Score ge 90 or Start lt 2023-03-01 or \"Cost Center Code\" eq 'CC-7'",
      orderby: "Start desc",
      top: 1000,
      select: ["Id", "Name", "Start", "Score"],
    },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) {
        const s = r[6] as number | null;
        const d = r[7] as string | null;
        if ((s !== null && s >= 90) || (d !== null && d < "2023-03-01") || r[11] === "CC-7") out.push(r);
      }
      out.sort((a, b) => cmpNullFirst(a[7], b[7], -1));
      return out.slice(0, 1000).map((r) => [r[0]!, r[1]!, r[7]!, r[6]!]);
    },
  },
  {
    name: "half the rows kept, two-key sort (text, decimal desc)",
    query: { filter: "Active ne false", orderby: "Owner, Budget desc" },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) if (r[9] === null || r[9] !== false) out.push(r);
      out.sort((a, b) => cmpNullFirst(a[10], b[10], 1) || cmpNullFirst(a[4], b[4], -1));
      return out.map((r) => r.slice());
    },
  },
  {
    name: "decimal arithmetic filter (sub, mul), sort by decimal desc then id",
    arithmetic: true,
    query: { filter: "Budget sub Actual gt 25000.25 and Budget mul 1.1 lt 90000", orderby: "Budget desc, Id" },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) {
        const b = cents(r[4]);
        const a = cents(r[5]);
        // B - A > 25000.25  ⇔  b - a > 2500025;  B × 1.1 < 90000  ⇔  b × 11 < 90000000 (cents)
        if (b !== null && a !== null && b - a > 2500025 && b * 11 < 90_000_000) out.push(r);
      }
      out.sort((a, b) => cmpNullFirst(a[4], b[4], -1) || cmpNullFirst(a[0], b[0], 1));
      return out.map((r) => r.slice());
    },
  },
  {
    name: "decimal arithmetic in $orderby (Budget sub Actual desc), filter on status",
    arithmetic: true,
    query: { filter: "Status eq 'Open'", orderby: "Budget sub Actual desc, Id" },
    hand: (rows) => {
      const out: CellValue[][] = [];
      for (const r of rows) if (r[2] === "Open") out.push(r);
      const key = (r: CellValue[]) => {
        const b = cents(r[4]);
        const a = cents(r[5]);
        return b === null || a === null ? null : b - a;
      };
      const keys = new Map(out.map((r) => [r, key(r)] as const));
      out.sort((a, b) => cmpNullFirst(keys.get(a)!, keys.get(b)!, -1) || cmpNullFirst(a[0], b[0], 1));
      return out.map((r) => r.slice());
    },
  },
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(f: () => unknown): number {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function main(): void {
  const table = makeTable();
  console.log(`local query benchmark: ${ROWS.toLocaleString("en")} rows × ${columns.length} columns, median of ${RUNS} runs`);
  const ratios: number[] = [];
  const arithmetic: number[] = [];
  for (const s of scenarios) {
    // Same answer first: a fast wrong engine would be worthless.
    const engineRows = applyQuery(table, s.query).table.rows;
    const handRows = s.hand(table.rows);
    if (JSON.stringify(engineRows) !== JSON.stringify(handRows)) {
      throw new Error(`${s.name}: engine and hand-written loop disagree (${engineRows.length} vs ${handRows.length} rows)`);
    }
    const e: number[] = [];
    const h: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      // Alternate to spread GC and JIT noise over both; the first two rounds are warm-up.
      const te = time(() => applyQuery(table, s.query));
      const th = time(() => s.hand(table.rows));
      if (i >= 2) {
        e.push(te);
        h.push(th);
      }
    }
    const me = median(e);
    const mh = median(h);
    (s.arithmetic ? arithmetic : ratios).push(me / mh);
    console.log(
      `  ${s.name}\n    rows out ${engineRows.length.toLocaleString("en")}; engine ${me.toFixed(1)} ms; hand-written ${mh.toFixed(1)} ms; ratio ${(me / mh).toFixed(2)}×`,
    );
  }
  console.log(`worst ratio, plain filters and sorts: ${Math.max(...ratios).toFixed(2)}× (target ≤ 2×)`);
  console.log(`worst ratio, exact decimal arithmetic vs integer cents by hand: ${Math.max(...arithmetic).toFixed(2)}×`);
  querySize();
  groupMemory(table);
}

const SIZE_SHAPES: Record<string, (n: number) => string> = {
  "chained filter(true)": (n) => Array.from({ length: n }, () => "filter(true)").join("/"),
  "groupby, n aggregates": (n) => `groupby((Status),aggregate(${Array.from({ length: n }, (_, i) => `Budget with sum as s${i}`).join(",")}))`,
  "aggregate, n items": (n) => `aggregate(${Array.from({ length: n }, (_, i) => `Budget with max as m${i}`).join(",")})`,
  "chained compute": (n) => Array.from({ length: n }, (_, i) => `compute(Score add ${i} as c${i})`).join("/"),
};

/** Compile time of long `$apply` texts (best of 3), per 1,000 characters and as ratios between sizes. */
function querySize(): void {
  const sizes = [1500, 6000, 24000];
  console.log(`query size: compile $apply (parse + type-check + plan), best of 3; ratio = time ÷ time at ${sizes[0].toLocaleString("en")}`);
  let worst = 0;
  for (const [name, make] of Object.entries(SIZE_SHAPES)) {
    const times = sizes.map((n) => {
      const text = make(n);
      let best = Infinity;
      for (let i = 0; i < 3; i++) best = Math.min(best, time(() => compileQuery(columns, { apply: text })));
      return { n, ms: best, chars: text.length };
    });
    const parts = times.map((t) => `${t.n.toLocaleString("en")}: ${t.ms.toFixed(0)} ms (${((t.ms / t.chars) * 1000).toFixed(2)} ms per 1k chars, ×${(t.ms / times[0].ms).toFixed(1)})`);
    // Growth per 4× of text, from 6,000 to 24,000 (the smallest size is the most JIT-sensitive).
    const growth = times[2].ms / times[1].ms / (times[2].chars / times[1].chars);
    worst = Math.max(worst, growth);
    console.log(`  ${name}\n    ${parts.join("; ")}`);
  }
  console.log(`worst growth from 6,000 to 24,000 steps, per unit of text: ${worst.toFixed(2)}× (linear: about 1×; quadratic: about 4×)`);
}

/** Heap per group of a grouping on a unique column (every row its own group), with 4 aggregates. */
function groupMemory(table: Table): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  const query = { apply: "groupby((Id),aggregate(Budget with sum as total,Actual with average as avg,Name with max as name,$count as n))" };
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const sink = createQuerySink(query);
  sink.begin(columns);
  for (const r of table.rows) sink.row(r);
  gc?.();
  const kept = process.memoryUsage().heapUsed - before;
  const groups = sink.end().rows.length;
  console.log(
    `group memory: ${groups.toLocaleString("en")} groups (one per row) × 4 aggregates kept ${(kept / 1e6).toFixed(1)} MB, ${(kept / groups).toFixed(0)} bytes per group${gc ? "" : " (run with node --expose-gc for exact figures)"}`,
  );
}

main();
