/**
 * Column references. One rule, applied in this order, first hit wins:
 * 1. `"Budget Contingency"` (double quotes, `""` for a quote inside) names a column exactly.
 * 2. An identifier equal to a column name names it (case-sensitive, as OData).
 * 3. XML-style escapes, as OData feeds and Power Query write them: `Budget_x0020_Contingency`.
 * 4. `_` standing for any one character that an identifier cannot hold (space, `-`, `.`, `/`, ...):
 *    `Budget_Contingency`, only when exactly one column matches; otherwise an `ambiguous_column` error.
 * Anything else is an `unknown_column` error naming the nearest column.
 */
import type { Column } from "../table/model";
import { QueryError } from "./errors";
import { RESERVED } from "./parser";

const IDENT = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*$/u;
const NON_IDENT_CHAR = /[^\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]/gu;
const XML_ESCAPE = /_x([0-9A-Fa-f]{4}|[0-9A-Fa-f]{8})_/g;
const LITERAL_WORDS = new Set(["true", "false", "null"]);

/** How a column is written in a query: bare when it is a plain identifier, else `"quoted"`. */
export function formatColumnRef(name: string): string {
  const lower = name.toLowerCase();
  // `INF` and `NaN` (case-sensitive, as the ABNF's nanInfinity) are literals too.
  if (IDENT.test(name) && !RESERVED.has(lower) && !LITERAL_WORDS.has(lower) && name !== "INF" && name !== "NaN") return name;
  return `"${name.split('"').join('""')}"`;
}

/** Decodes `_xHHHH_` escapes; returns undefined when there are none. */
function decodeXml(name: string): string | undefined {
  if (!name.includes("_x")) return undefined;
  let changed = false;
  const out = name.replace(XML_ESCAPE, (_m, hex: string) => {
    const cp = parseInt(hex, 16);
    if (cp > 0x10ffff) return _m;
    changed = true;
    return String.fromCodePoint(cp);
  });
  return changed ? out : undefined;
}

/** A reference as the parsers produce it. */
export interface ColumnRefInput {
  name: string;
  /** True for the `"quoted"` form: exact match only. */
  quoted: boolean;
  /** 1-based position for errors. */
  pos?: number;
}

/**
 * Resolves column references against one column list. The list can grow at its end
 * ({@link ColumnResolver.add}, for computed columns), so a chain of `compute` steps shares one
 * resolver instead of rebuilding it per step.
 */
export class ColumnResolver {
  private readonly exact = new Map<string, number>();
  private readonly underscored = new Map<string, number[]>();
  private readonly list: Column[] = [];

  constructor(columns: readonly Column[]) {
    for (const c of columns) this.add(c);
  }

  /** The columns, in index order (the ones given, then the ones added). */
  get columns(): readonly Column[] {
    return this.list;
  }

  /** Appends a column at the next index (earlier indices are unchanged) and returns its index. */
  add(c: Column): number {
    const i = this.list.length;
    this.list.push(c);
    if (!this.exact.has(c.name)) this.exact.set(c.name, i);
    const u = c.name.replace(NON_IDENT_CHAR, "_");
    const same = this.underscored.get(u);
    if (same) same.push(i);
    else this.underscored.set(u, [i]);
    return i;
  }

  /** Index of the referenced column; throws `unknown_column` / `ambiguous_column`. */
  resolve(ref: ColumnRefInput): number {
    const hit = this.exact.get(ref.name);
    if (hit !== undefined) return hit;
    if (!ref.quoted && IDENT.test(ref.name)) {
      const decoded = decodeXml(ref.name);
      if (decoded !== undefined) {
        const d = this.exact.get(decoded);
        if (d !== undefined) return d;
      }
      const list = this.underscored.get(ref.name);
      if (list && list.length === 1) return list[0];
      if (list && list.length > 1) {
        throw new QueryError({
          code: "ambiguous_column",
          detail: `column '${ref.name}' is ambiguous: it matches ${list
            .map((i) => formatColumnRef(this.columns[i].name))
            .join(", ")}; quote the one you mean`,
          position: ref.pos,
        });
      }
    }
    const near = this.nearest(decodeXml(ref.name) ?? ref.name);
    throw new QueryError({
      code: "unknown_column",
      detail: `unknown column '${ref.name}'`,
      position: ref.pos,
      suggestion: near === undefined ? undefined : formatColumnRef(near),
      hint: ref.quoted ? "double quotes name a column; text values use single quotes ('...')" : undefined,
    });
  }

  /**
   * Column name closest to `name` (case-insensitive edit distance, `_` treated like a space), when it
   * is close enough to be what was meant: at most max(2, a third of the name's length) edits away,
   * or the one starts the other. Otherwise none: `nosuch` suggests nothing rather than `budget`.
   */
  nearest(name: string): string | undefined {
    const target = name.toLowerCase().replace(/_/g, " ");
    let best: string | undefined;
    let bestD = Infinity;
    for (const c of this.columns) {
      const candidate = c.name.toLowerCase().replace(/_/g, " ");
      const d = editDistance(target, candidate);
      const close = d <= Math.max(2, Math.floor(target.length / 3)) || (Math.min(target.length, candidate.length) >= 3 && (candidate.startsWith(target) || target.startsWith(candidate)));
      if (close && d < bestD) {
        bestD = d;
        best = c.name;
      }
    }
    return best;
  }
}

/** Levenshtein distance (two-row dynamic programme). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}
