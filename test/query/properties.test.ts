/** fast-check properties of the engine: stable sort, paging = slicing, select order, exact comparisons. */
import fc from "fast-check";
import { applyQuery } from "../../src/query";
import type { CellValue, Column } from "../../src/table/model";
import { makeTable } from "./fixture";

// A fixed seed keeps runs reproducible; failures print the seed and path to replay.
fc.configureGlobal({ seed: 20250131 });

const COLS: Column[] = [
  { name: "id", type: "integer" },
  { name: "k", type: "integer" },
  { name: "t", type: "text" },
  { name: "d", type: "decimal" },
  { name: "b", type: "boolean" },
];

const rowsArb = fc
  .array(
    fc.tuple(
      fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
      fc.option(fc.constantFrom("a", "B", "b", "ab", "é"), { nil: null }),
      fc.option(fc.constantFrom(-1.5, 0, 2.25, 1e9), { nil: null }),
      fc.option(fc.boolean(), { nil: null }),
    ),
    { maxLength: 40 },
  )
  .map((rs) => rs.map((r, i) => [i, ...r] as CellValue[]));

type Key = { i: number; desc: boolean };
function cmp(a: CellValue[], b: CellValue[], keys: Key[]): number {
  for (const { i, desc } of keys) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const dir = desc ? -1 : 1;
    if (x === null) return -dir;
    if (y === null) return dir;
    return x < y ? -dir : dir;
  }
  return 0;
}

const ORDERS: Array<[string, Key[]]> = [
  ["k", [{ i: 1, desc: false }]],
  ["k desc", [{ i: 1, desc: true }]],
  ["t, k desc", [{ i: 2, desc: false }, { i: 1, desc: true }]],
  ["b desc, t", [{ i: 4, desc: true }, { i: 2, desc: false }]],
  ["d desc, b, k", [{ i: 3, desc: true }, { i: 4, desc: false }, { i: 1, desc: false }]],
];

describe("properties", () => {
  test("$orderby is a stable sort: a permutation, ordered by the keys, ties in input order", () => {
    fc.assert(
      fc.property(rowsArb, fc.constantFrom(...ORDERS), (rows, [orderby, keys]) => {
        const out = applyQuery(makeTable(COLS, rows), { orderby }).table.rows;
        expect(out.map((r) => r[0]).sort((a, b) => (a as number) - (b as number))).toEqual(rows.map((r) => r[0]));
        for (let j = 1; j < out.length; j++) {
          const c = cmp(out[j - 1], out[j], keys);
          expect(c).toBeLessThanOrEqual(0);
          if (c === 0) expect(out[j - 1][0] as number).toBeLessThan(out[j][0] as number);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("$skip + $top equals slicing (with and without $orderby)", () => {
    fc.assert(
      fc.property(
        rowsArb,
        fc.option(fc.nat({ max: 45 }), { nil: undefined }),
        fc.option(fc.nat({ max: 45 }), { nil: undefined }),
        fc.option(fc.constantFrom(...ORDERS.map((o) => o[0])), { nil: undefined }),
        (rows, skip, top, orderby) => {
          const t = makeTable(COLS, rows);
          const full = applyQuery(t, orderby === undefined ? {} : { orderby }).table.rows;
          const paged = applyQuery(t, { orderby, skip, top }).table.rows;
          const from = skip ?? 0;
          expect(paged).toEqual(full.slice(from, top === undefined ? undefined : from + top));
          if (orderby === undefined) expect(full).toEqual(rows);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("$select keeps columns in the requested order, with their values", () => {
    fc.assert(
      fc.property(rowsArb, fc.shuffledSubarray(COLS.map((c) => c.name), { minLength: 1 }), (rows, select) => {
        const r = applyQuery(makeTable(COLS, rows), { select });
        expect(r.table.columns.map((c) => c.name)).toEqual(select);
        const idx = select.map((n) => COLS.findIndex((c) => c.name === n));
        expect(r.table.rows).toEqual(rows.map((row) => idx.map((i) => row[i])));
      }),
      { numRuns: 150 },
    );
  });

  test("comparisons: null only matches eq/ne null; not() is the exact complement of a comparison", () => {
    const ops = { eq: (a: number, b: number) => a === b, ne: (a: number, b: number) => a !== b, gt: (a: number, b: number) => a > b, ge: (a: number, b: number) => a >= b, lt: (a: number, b: number) => a < b, le: (a: number, b: number) => a <= b };
    fc.assert(
      fc.property(rowsArb, fc.integer({ min: -1, max: 4 }), fc.constantFrom(...(Object.keys(ops) as Array<keyof typeof ops>)), (rows, c, op) => {
        const t = makeTable(COLS, rows);
        const kept = applyQuery(t, { filter: `k ${op} ${c}` }).table.rows.map((r) => r[0]);
        const expected = rows.filter((r) => (r[1] === null ? op === "ne" : ops[op](r[1] as number, c))).map((r) => r[0]);
        expect(kept).toEqual(expected);
        const negated = applyQuery(t, { filter: `not (k ${op} ${c})` }).table.rows.map((r) => r[0]);
        expect(negated).toEqual(rows.map((r) => r[0]).filter((id) => !kept.includes(id)));
        const isNull = applyQuery(t, { filter: "k eq null" }).table.rows.map((r) => r[0]);
        expect(isNull).toEqual(rows.filter((r) => r[1] === null).map((r) => r[0]));
      }),
      { numRuns: 200 },
    );
  });

  test("Int64 values beyond 2^53 compare exactly (digit strings against BigInt truth)", () => {
    const big = fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n });
    const near = fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }).chain((v) => fc.constantFrom(v, -v));
    const value = fc.oneof(big, near);
    const asCell = (v: bigint): CellValue => (v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());
    fc.assert(
      fc.property(fc.array(value, { maxLength: 20 }), value, fc.constantFrom("eq", "ne", "gt", "ge", "lt", "le"), (vals, c, op) => {
        const rows = vals.map((v, i) => [i, asCell(v)]);
        const t = makeTable([{ name: "id", type: "integer" }, { name: "n", type: "integer" }], rows);
        const kept = applyQuery(t, { filter: `n ${op} ${c}` }).table.rows.map((r) => r[0]);
        const truth = { eq: (a: bigint) => a === c, ne: (a: bigint) => a !== c, gt: (a: bigint) => a > c, ge: (a: bigint) => a >= c, lt: (a: bigint) => a < c, le: (a: bigint) => a <= c }[op];
        expect(kept).toEqual(vals.map((v, i) => [v, i] as const).filter(([v]) => truth(v)).map(([, i]) => i));
        const sorted = applyQuery(t, { orderby: "n" }).table.rows.map((r) => BigInt(r[1] as string | number));
        expect(sorted).toEqual([...vals].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      }),
      { numRuns: 200 },
    );
  });

  test("a date-time literal with any offset matches the same instant stored in UTC", () => {
    const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, "0");
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1971, 0, 1) / 1000, max: Date.UTC(2099, 0, 1) / 1000 }),
        fc.integer({ min: -14 * 4, max: 14 * 4 }),
        (secs, quarterHours) => {
          const ms = secs * 1000;
          const off = quarterHours * 15;
          const local = new Date(ms + off * 60_000);
          const lit =
            `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T` +
            `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
            `${off < 0 ? "-" : "+"}${pad(Math.trunc(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
          const rows = [
            [0, new Date(ms - 1000).toISOString()],
            [1, new Date(ms).toISOString()],
            [2, new Date(ms + 1000).toISOString()],
          ];
          const t = makeTable([{ name: "id", type: "integer" }, { name: "at", type: "datetime" }], rows);
          expect(applyQuery(t, { filter: `at eq ${lit}` }).table.rows.map((r) => r[0])).toEqual([1]);
          expect(applyQuery(t, { filter: `at gt ${lit}` }).table.rows.map((r) => r[0])).toEqual([2]);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("$filter keeps a subsequence of the input in input order", () => {
    fc.assert(
      fc.property(rowsArb, fc.constantFrom("k gt 1", "t ne 'a'", "b or d lt 0", "contains(t, 'b')", "k in (0, 2, null)"), (rows, filter) => {
        const out = applyQuery(makeTable(COLS, rows), { filter }).table.rows.map((r) => r[0] as number);
        for (let j = 1; j < out.length; j++) expect(out[j - 1]).toBeLessThan(out[j]);
      }),
      { numRuns: 100 },
    );
  });
});
