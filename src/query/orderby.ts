/**
 * `$orderby`: keys are computed once per row, then row indices are sorted. Ties fall back to the
 * original row order, so the sort is stable whatever the engine's sort does. `null` is the smallest
 * value (OData): first when ascending, last when descending.
 */
import type { OrderItem } from "./ast";
import type { Compiler, Eval, Row, RV } from "./compile";

export interface SortKey {
  get: Eval;
  desc: boolean;
}

/** Compiles sort items; any expression type can be a key (booleans sort false before true). */
export function compileOrderBy(items: readonly OrderItem[], compiler: Compiler): SortKey[] {
  return items.map((it) => ({ get: compiler.compile(it.expr).f, desc: it.desc }));
}

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
  const idx = new Array<number>(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  if (cols.length === 1) {
    const v = cols[0];
    const dir = dirs[0];
    idx.sort((a, b) => {
      const x = v[a]!;
      const y = v[b]!;
      if (x !== y) {
        if (x === null) return -dir;
        if (y === null) return dir;
        if (x < y) return -dir;
        if (x > y) return dir;
      }
      return a - b;
    });
  } else {
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
        if (x < y) return -dir;
        if (x > y) return dir;
      }
      return a - b;
    });
  }
  const out = new Array<R>(n);
  for (let i = 0; i < n; i++) out[i] = rows[idx[i]]!;
  return out;
}
