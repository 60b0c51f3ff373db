/**
 * Compact per-row fingerprints (issue #15): what the workbook keeps about the rows it last wrote, so
 * a refresh can plan a delta WITHOUT reading the old table back through the API (on Excel on the web
 * that read costs as many bytes as the table itself, issue #10 B13).
 *
 * One string per row, `h` + 5 characters of key hash (30 bits) + 8 characters of row hash (48 bits):
 * 14 characters. The leading letter keeps Excel from ever reading it as a number or formula.
 * - A key-hash collision can only make two different keys look alike: the planner then sees a
 *   duplicate (position match) or a "changed" row whose cells are compared for real. Never wrong.
 * - A row-hash collision (2^-48 per changed row) would leave one changed row unwritten. Accepted and
 *   documented (`src/refresh/README.md`).
 */
import type { CellValue, Column } from "../table/model";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.";

function encode(value: number, chars: number): string {
  let s = "";
  for (let i = 0; i < chars; i++) {
    s = ALPHABET[value % 64] + s;
    value = Math.floor(value / 64);
  }
  return s;
}

/** cyrb53-style 53-bit string hash (two 32-bit lanes; good avalanche, no allocation per character). */
function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** An injective text of cells (type-tagged, length-prefixed), as the delta planner's keys. */
function cellsText(row: readonly CellValue[], indexes: readonly number[] | null): string {
  let s = "";
  const n = indexes ? indexes.length : row.length;
  for (let j = 0; j < n; j++) {
    const v = row[indexes ? indexes[j] : j];
    if (v === null || v === undefined) s += "z";
    else if (typeof v === "string") s += "s" + v.length + ":" + v;
    else if (typeof v === "number") s += "n" + (Object.is(v, -0) ? "-0" : String(v)) + "|";
    else s += v ? "T" : "F";
  }
  return s;
}

export const ROW_HASH_LENGTH = 14;

/** The key columns hashed: the first candidate whose columns all exist (the planner checks uniqueness). */
export function hashKeyColumns(columns: readonly Column[], candidates: readonly (readonly string[])[]): string[] | null {
  for (const c of candidates) {
    if (c.length && c.every((n) => columns.some((col) => col.name === n))) return [...c];
  }
  return null;
}

/** Fingerprint of every row (see the module comment). `keyColumns` null ⇒ the key part is constant. */
export function rowHashes(columns: readonly Column[], rows: readonly (readonly CellValue[])[], keyColumns: readonly string[] | null): string[] {
  const keyIdx = keyColumns ? keyColumns.map((n) => columns.findIndex((c) => c.name === n)) : null;
  if (keyIdx && keyIdx.some((i) => i < 0)) throw new Error(`rowHashes: key column missing (${keyColumns!.join(", ")})`);
  const out = new Array<string>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const k = keyIdx ? hash53(cellsText(row, keyIdx), 7) % 1073741824 : 0;
    out[r] = "h" + encode(k, 5) + encode(hash53(cellsText(row, null)) % 281474976710656, 8);
  }
  return out;
}

/** True for a string {@link rowHashes} could have made (a stored column is untrusted input). */
export function isRowHash(v: unknown): v is string {
  return typeof v === "string" && v.length === ROW_HASH_LENGTH && v[0] === "h";
}
