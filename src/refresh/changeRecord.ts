/**
 * What a delta refresh changed, in the compact form the workbook keeps for "Show changes" (issue #15),
 * and the mask "Show changes" writes from it. Pure: no Office, no DOM.
 *
 * Why a compact record first and the mask only on request (decision, figures in
 * `src/workbook/README.md`): the cells a highlight needs (one mask cell per changed cell, written as
 * one range per run of rows) cost about as many request bytes as the delta itself when the changes
 * are scattered, and issue #15 holds a delta to 5 % of a full rewrite's bytes. The record costs about
 * two characters per changed cell: row gaps as base-32 numbers, one list per column.
 *
 * Body format (JSON): `{"a":"<added rows>","c":[[column,"<rows>"],…]}` where each list is the rows in
 * increasing order, each written as its gap to the previous one (minus one) in base 32: digits before
 * the last from {@link MORE}, the last from {@link LAST}; no character JSON would escape.
 */

export { ADDED_FILL, CHANGED_FILL } from "./highlight";

/** Mask value of a changed cell. */
export const MASK_CHANGED = 1;
/** Mask value of a cell of an added row. */
export const MASK_ADDED = 2;

/** Longest record kept (characters); beyond it the changes are too many to be worth highlighting. */
export const MAX_RECORD_CHARS = 2_000_000;
/** Characters per cell the record is split into (Excel's cell limit is 32,767). */
export const RECORD_PART_CHARS = 30_000;

/** Changed cells and added rows of one table after a delta (0-based body rows, data columns). */
export interface ChangeSet {
  rows: number;
  columns: number;
  changed: ReadonlyArray<{ row: number; column: number }>;
  added: readonly number[];
}

/** The first cell of a record: which binding and table shape it belongs to, how many parts follow. */
export interface ChangeRecordHeader {
  v: 1;
  id: string;
  rows: number;
  cols: number;
  parts: number;
  /** The mask has been written from the record ("Show changes" was used since the refresh). */
  mask: boolean;
}

export class ChangeRecordError extends Error {
  readonly code = "change_record";
  constructor(message: string) {
    super(message);
    this.name = "ChangeRecordError";
  }
}

const LAST = "0123456789abcdefghijklmnopqrstuv";
const MORE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&*";
const MAX_SHEET_ROWS = 1_048_576;
const MAX_SHEET_COLUMNS = 16_384;

function encodeRows(rows: readonly number[]): string {
  let out = "";
  let prev = -1;
  for (const r of rows) {
    let n = r - prev - 1;
    prev = r;
    let digits = LAST[n % 32];
    n = Math.floor(n / 32);
    while (n > 0) {
      digits = MORE[n % 32] + digits;
      n = Math.floor(n / 32);
    }
    out += digits;
  }
  return out;
}

function decodeRows(text: string, limit: number): number[] {
  const out: number[] = [];
  let prev = -1;
  let n = 0;
  let open = false;
  for (const ch of text) {
    const more = MORE.indexOf(ch);
    if (more >= 0) {
      n = n * 32 + more;
      open = true;
      continue;
    }
    const last = LAST.indexOf(ch);
    if (last < 0) throw new ChangeRecordError(`The change record holds an unexpected character "${ch}".`);
    prev = prev + 1 + n * 32 + last;
    if (prev >= limit) throw new ChangeRecordError(`The change record names row ${prev + 1} of a table of ${limit} rows.`);
    out.push(prev);
    n = 0;
    open = false;
  }
  if (open) throw new ChangeRecordError("The change record ends in the middle of a number.");
  return out;
}

const sortedUnique = (xs: Iterable<number>): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** The record body for a change set (cells of added rows are not listed as changed). */
export function encodeChanges(set: ChangeSet): string {
  const added = sortedUnique(set.added);
  const isAdded = new Set(added);
  const byColumn = new Map<number, number[]>();
  for (const { row, column } of set.changed) {
    if (isAdded.has(row)) continue;
    let list = byColumn.get(column);
    if (!list) byColumn.set(column, (list = []));
    list.push(row);
  }
  const c = [...byColumn.keys()].sort((a, b) => a - b).map((col) => [col, encodeRows(sortedUnique(byColumn.get(col)!))]);
  return JSON.stringify({ a: encodeRows(added), c });
}

/** Reads a record body back for a table of `rows` × `columns`. @throws ChangeRecordError */
export function decodeChanges(body: string, rows: number, columns: number): ChangeSet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ChangeRecordError("The change record is not readable.");
  }
  const o = parsed as { a?: unknown; c?: unknown };
  if (!o || typeof o !== "object" || typeof o.a !== "string" || !Array.isArray(o.c)) throw new ChangeRecordError("The change record is not readable.");
  const changed: Array<{ row: number; column: number }> = [];
  for (const entry of o.c as unknown[]) {
    if (!Array.isArray(entry) || !Number.isInteger(entry[0]) || typeof entry[1] !== "string") throw new ChangeRecordError("The change record is not readable.");
    const column = entry[0] as number;
    if (column < 0 || column >= columns) throw new ChangeRecordError(`The change record names column ${column + 1} of a table of ${columns} columns.`);
    for (const row of decodeRows(entry[1], rows)) changed.push({ row, column });
  }
  return { rows, columns, changed, added: decodeRows(o.a, rows) };
}

/** Cuts a record into cell-sized parts. */
export function splitRecord(text: string, size = RECORD_PART_CHARS): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length ? parts : [""];
}

/** Parses the header cell. @throws ChangeRecordError */
export function parseRecordHeader(raw: unknown): ChangeRecordHeader {
  let v: unknown;
  try {
    v = typeof raw === "string" ? JSON.parse(raw) : null;
  } catch {
    v = null;
  }
  const h = v as Partial<ChangeRecordHeader> | null;
  const count = (x: unknown, max: number) => typeof x === "number" && Number.isInteger(x) && x >= 0 && x <= max;
  if (!h || h.v !== 1 || typeof h.id !== "string" || !count(h.rows, MAX_SHEET_ROWS) || !count(h.cols, MAX_SHEET_COLUMNS) || !count(h.parts, 1 + MAX_RECORD_CHARS / RECORD_PART_CHARS) || typeof h.mask !== "boolean") {
    throw new ChangeRecordError("The change record's header is not readable.");
  }
  return { v: 1, id: h.id, rows: h.rows!, cols: h.cols!, parts: h.parts!, mask: h.mask };
}

/** One rectangle of the mask, written as one range: 0 unchanged, {@link MASK_CHANGED}, {@link MASK_ADDED}. */
export interface MaskBand {
  row: number;
  column: number;
  rowCount: number;
  columnCount: number;
  values: number[][];
}

export interface BandCosts {
  /** What one range write costs beyond its cells (its address and the operation; bytes). */
  range: number;
  /** What one cell costs (a digit and a separator; bytes). */
  cell: number;
  /** Cells per range at most (keeps one write far below Excel's 5 MB request limit). */
  maxCells: number;
}

export const DEFAULT_BAND_COSTS: BandCosts = { range: 150, cell: 2, maxCells: 100_000 };

/**
 * The mask as few, cheap rectangles: rows with changes are taken in order, and a row joins the band
 * above it when one range over both (gap rows and columns filled with 0) costs no more than two.
 * So scattered changes are one small range each, and dense ones one range per block of rows.
 */
export function maskBands(set: ChangeSet, costs: BandCosts = DEFAULT_BAND_COSTS): MaskBand[] {
  const added = new Set(set.added);
  const spans = new Map<number, { lo: number; hi: number; cols: number[] }>();
  for (const r of added) spans.set(r, { lo: 0, hi: set.columns - 1, cols: [] });
  for (const { row, column } of set.changed) {
    if (added.has(row)) continue;
    const s = spans.get(row);
    if (!s) spans.set(row, { lo: column, hi: column, cols: [column] });
    else {
      s.lo = Math.min(s.lo, column);
      s.hi = Math.max(s.hi, column);
      s.cols.push(column);
    }
  }
  const rows = [...spans.keys()].sort((a, b) => a - b);
  const cost = (rowCount: number, columnCount: number) => costs.range + costs.cell * rowCount * columnCount;
  const bands: Array<{ r0: number; r1: number; c0: number; c1: number; rows: number[] }> = [];
  for (const r of rows) {
    const s = spans.get(r)!;
    const b = bands[bands.length - 1];
    if (b) {
      const c0 = Math.min(b.c0, s.lo), c1 = Math.max(b.c1, s.hi);
      const cells = (r - b.r0 + 1) * (c1 - c0 + 1);
      if (cells <= costs.maxCells && cost(r - b.r0 + 1, c1 - c0 + 1) <= cost(b.r1 - b.r0 + 1, b.c1 - b.c0 + 1) + cost(1, s.hi - s.lo + 1)) {
        Object.assign(b, { r1: r, c0, c1 });
        b.rows.push(r);
        continue;
      }
    }
    bands.push({ r0: r, r1: r, c0: s.lo, c1: s.hi, rows: [r] });
  }
  return bands.map((b) => {
    const values = Array.from({ length: b.r1 - b.r0 + 1 }, () => new Array<number>(b.c1 - b.c0 + 1).fill(0));
    for (const r of b.rows) {
      const line = values[r - b.r0];
      if (added.has(r)) line.fill(MASK_ADDED);
      else for (const c of spans.get(r)!.cols) line[c - b.c0] = MASK_CHANGED;
    }
    return { row: b.r0, column: b.c0, rowCount: b.r1 - b.r0 + 1, columnCount: b.c1 - b.c0 + 1, values };
  });
}
