/**
 * `$orderby`: keys are computed once per row, then row indices are sorted. Ties fall back to the
 * original row order, so the sort is stable whatever the engine's sort does. `null` is the smallest
 * value (OData): first when ascending, last when descending.
 */
import type { OrderItem } from "./ast";
import { comparator, type Compiler, type Eval, type Row, type RV } from "./compile";

export interface SortKey {
  get: Eval;
  desc: boolean;
  /**
   * Exact comparator of two non-null keys, or undefined when native `<` is exact: plain cells of
   * one kind (safe numbers and digit strings never mix: integer cells read as number/bigint),
   * dates, date-times, booleans (false < true).
   */
  cmp?: (x: RV, y: RV) => number;
  /** For text keys: native order is code point order unless both strings hold units from U+D800. */
  text?: boolean;
}

/** Compiles sort items; any expression type can be a key (booleans sort false before true). */
export function compileOrderBy(items: readonly OrderItem[], compiler: Compiler): SortKey[] {
  return items.map((it) => {
    const c = compiler.compile(it.expr);
    const key: SortKey = { get: c.f, desc: it.desc };
    if (c.t === "text") key.text = true;
    // Computed decimals are Decimal objects; a decimal column is plain doubles (native order exact).
    else if (c.t === "decimal" && c.col === undefined) key.cmp = comparator("decimal");
    return key;
  });
}

const HIGH_UNIT = /[\ud800-\uffff]/;

/** Returns a new array with `rows` in key order (stable). `rows` is not modified. */
export function sortRows<R extends Row>(rows: readonly R[], keys: readonly SortKey[]): R[] {
  const n = rows.length;
  if (keys.length === 0 || n < 2) return rows.slice();
  const cols: RV[][] = keys.map((k) => {
    const out = new Array<RV>(n);
    const get = k.get;
    for (let i = 0; i < n; i++) out[i] = get(rows[i]);
    return out;
  });
  const dirs = keys.map((k) => (k.desc ? -1 : 1));
  // Per key, an exact comparator for the rare values native `<` gets wrong, and which rows need it.
  const exact = keys.map((k) => k.cmp ?? (k.text ? comparator("text") : undefined));
  const high = keys.map((k, j) => (k.text ? cols[j].map((v) => v !== null && HIGH_UNIT.test(v as string)) : undefined));
  const idx = new Array<number>(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  const m = cols.length;
  idx.sort((a, b) => {
    for (let k = 0; k < m; k++) {
      const v = cols[k];
      const x = v[a]!;
      const y = v[b]!;
      if (x === y) continue;
      const dir = dirs[k];
      if (x === null) return -dir;
      if (y === null) return dir;
      const h = high[k];
      const cmp = exact[k];
      if (cmp !== undefined && (h === undefined || (h[a] && h[b]))) {
        const c = cmp(x, y);
        if (c === 0) continue;
        // NaN (a `divby` zero of zero) is unordered: sorted after every number, as the largest.
        if (Number.isNaN(c)) {
          const xn = Number.isNaN(x), yn = Number.isNaN(y);
          if (xn && yn) continue;
          return (xn ? 1 : -1) * dir;
        }
        return c * dir;
      }
      if (x < y) return -dir;
      if (x > y) return dir;
    }
    return a - b;
  });
  const out = new Array<R>(n);
  for (let i = 0; i < n; i++) out[i] = rows[idx[i]]!;
  return out;
}
