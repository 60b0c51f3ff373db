/**
 * Rows as they are written: model values typed into cells (`cells.ts`), dates in the workbook's own
 * date system, each row's fingerprint (`rowHash`) and the characters it adds to a block checksum
 * (`checksums.ts` rowChars), computed once per row from the block being written, never from a second
 * typed copy of the table (issue #24 items 2 and 4; issue #38: a streamed import types one block at a
 * time and keeps none of it).
 */
import type { CellValue, Table } from "../table/model";
import { rowHash } from "../refresh/rowHash";
import { rowChars } from "./checksums";
import { toCell, toValues, type ColumnPlan } from "./cells";

/** Days between serial 0 of the 1900 and of the 1904 date system (support.microsoft.com: 1,462 days). */
export const DATE1904_OFFSET = 1462;

/** One block of rows typed for the write. */
export interface TypedBlock {
  values: (string | number | boolean)[][];
  /** Each row's fingerprint (`rowHash` of the typed row). */
  hashes: string[];
  /** The most characters one of these rows adds to a block checksum's joined text. */
  longest: number;
}

/** The date and date-time columns, whose serials move in a workbook on the 1904 date system. */
export function dateColumnsOf(plans: readonly ColumnPlan[], date1904: boolean): number[] {
  return date1904 ? plans.flatMap((p, i) => (p.kind === "date" || p.kind === "datetime" ? [i] : [])) : [];
}

/**
 * Types rows [from, to) of `rows`. In a workbook on the 1904 date system every date and date-time
 * serial is 1,462 lower (else it would show 4 years and 1 day late); a date before 1904-01-01, which
 * that system cannot show, is written as its text. With `into`, its arrays are filled instead of new
 * ones made (`toValues`: a block buffer reused from one write to the next).
 */
export function typeBlock(rows: readonly CellValue[][], from: number, to: number, plans: readonly ColumnPlan[], dateColumns: readonly number[], into?: (string | number | boolean)[][]): TypedBlock {
  const values = toValues(rows, plans, from, to, into);
  const width = plans.length;
  const hashes = new Array<string>(values.length);
  let longest = 1;
  for (let r = 0; r < values.length; r++) {
    const out = values[r];
    for (const c of dateColumns) {
      const v = out[c];
      if (typeof v !== "number") continue;
      out[c] = v - DATE1904_OFFSET >= 0 ? v - DATE1904_OFFSET : String(rows[from + r][c]);
    }
    hashes[r] = rowHash(out);
    const chars = rowChars(out, width);
    if (chars > longest) longest = chars;
  }
  return { values, hashes, longest };
}

/**
 * Types one row IN PLACE (a streamed row nobody else holds: issue #38, one array per row instead of
 * two), as {@link typeBlock} types a block; returns its fingerprint. `kinds` and `dateColumns` are the
 * plans' (see {@link dateColumnsOf}).
 */
export function typeRowInPlace(row: CellValue[], kinds: readonly ColumnPlan["kind"][], dateColumns: readonly number[]): string {
  const out = row as unknown as (string | number | boolean)[];
  const n = kinds.length;
  for (let c = 0; c < n; c++) {
    const v = row[c];
    const k = kinds[c];
    if (v === null || v === "") out[c] = "";
    else if (k === "text" && typeof v === "string") continue;
    else if (k === "number" && typeof v === "number") continue;
    else if (dateColumns.length > 0 && dateColumns.includes(c)) {
      const serial = toCell(k, v);
      out[c] = typeof serial === "number" ? (serial - DATE1904_OFFSET >= 0 ? serial - DATE1904_OFFSET : String(v)) : serial;
    } else out[c] = toCell(k, v);
  }
  return rowHash(out);
}

/**
 * Source of typed values for a whole table's rows (the refresh's: it needs random access to blocks
 * and, for a delta, every row's fingerprint). See {@link typeBlock}.
 */
export function typedRows(table: Table, plans: readonly ColumnPlan[], date1904 = false, reuse = false): TypedRows {
  const dateColumns = dateColumnsOf(plans, date1904);
  const total = table.rows.length;
  const hashes = new Array<string | undefined>(total);
  let longest = 1;
  // `reuse`: each block is typed into the same arrays (a writer that is done with a block once its
  // request is sent: 200,000 row arrays fewer for the collector at an import).
  const buffer: (string | number | boolean)[][] | undefined = reuse ? [] : undefined;
  const get = (from: number, to: number): (string | number | boolean)[][] => {
    const block = typeBlock(table.rows, from, to, plans, dateColumns, buffer);
    for (let r = 0; r < block.hashes.length; r++) hashes[from + r] = block.hashes[r];
    if (block.longest > longest) longest = block.longest;
    return block.values;
  };
  const typeAll = () => {
    for (let r = 0; r < total; r++) {
      if (hashes[r] !== undefined) continue;
      let end = r;
      while (end < total && hashes[end] === undefined && end - r < 5_000) end++;
      get(r, end);
    }
  };
  return {
    total,
    get,
    hashes: () => {
      typeAll();
      return hashes as string[];
    },
    longestRowChars: () => {
      typeAll();
      return longest;
    },
  };
}

/** The table's rows as written, block by block; `hashes()` their fingerprints (see {@link typedRows}). */
export interface TypedRows {
  total: number;
  /**
   * Rows [from, to) as written. With `typedRows(…, reuse)` the block lives only until the next `get`
   * (the same arrays are filled again): a caller must be done with it (its request sent) first.
   */
  get(from: number, to: number): (string | number | boolean)[][];
  /**
   * The fingerprint of every row as written (`rowHash`), taken from the blocks `get` has already
   * typed for the write, so the fingerprints never need a second typed copy of the table (issue #24
   * items 2 and 4: that copy was 200,000 row arrays and a second typing pass at the end of an import);
   * rows no block has reached yet are typed here.
   */
  hashes(): string[];
  /** The characters the longest row adds to a block checksum's joined text (`checksums.ts` rowChars), likewise. */
  longestRowChars(): number;
}
