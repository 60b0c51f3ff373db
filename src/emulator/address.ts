/**
 * A1 addressing: parsing and formatting of cell and range addresses, with Excel's grid limits.
 * All indexes here are 0-based and rectangles are inclusive on both ends.
 */
import { invalidArgument } from "./errors";

/** Rows in an Excel worksheet (Excel 2007 and later). */
export const MAX_ROWS = 1_048_576;
/** Columns in an Excel worksheet (A..XFD). */
export const MAX_COLUMNS = 16_384;

/** An inclusive, 0-based rectangle of cells. */
export interface Rect {
  r0: number;
  c0: number;
  r1: number;
  c1: number;
}

export interface ParsedAddress {
  /** Sheet name when the address carried one (`Sheet1!A1`, `'My Sheet'!A1`). */
  sheet?: string;
  rect: Rect;
}

export function rectRows(r: Rect): number {
  return r.r1 - r.r0 + 1;
}
export function rectColumns(r: Rect): number {
  return r.c1 - r.c0 + 1;
}
export function rectsOverlap(a: Rect, b: Rect): boolean {
  return a.r0 <= b.r1 && b.r0 <= a.r1 && a.c0 <= b.c1 && b.c0 <= a.c1;
}
export function rectContains(outer: Rect, r: number, c: number): boolean {
  return r >= outer.r0 && r <= outer.r1 && c >= outer.c0 && c <= outer.c1;
}
export function rectEquals(a: Rect, b: Rect): boolean {
  return a.r0 === b.r0 && a.c0 === b.c0 && a.r1 === b.r1 && a.c1 === b.c1;
}
export function boundingRect(a: Rect, b: Rect): Rect {
  return { r0: Math.min(a.r0, b.r0), c0: Math.min(a.c0, b.c0), r1: Math.max(a.r1, b.r1), c1: Math.max(a.c1, b.c1) };
}
export function intersectRect(a: Rect, b: Rect): Rect | null {
  if (!rectsOverlap(a, b)) return null;
  return { r0: Math.max(a.r0, b.r0), c0: Math.max(a.c0, b.c0), r1: Math.min(a.r1, b.r1), c1: Math.min(a.c1, b.c1) };
}

/** Throws InvalidArgument unless the rectangle lies inside the worksheet grid. */
export function assertOnGrid(r: Rect, what = "range"): void {
  const ok =
    Number.isInteger(r.r0) && Number.isInteger(r.c0) && Number.isInteger(r.r1) && Number.isInteger(r.c1) &&
    r.r0 >= 0 && r.c0 >= 0 && r.r1 < MAX_ROWS && r.c1 < MAX_COLUMNS && r.r0 <= r.r1 && r.c0 <= r.c1;
  if (!ok) {
    throw invalidArgument(
      `The ${what} is outside the worksheet grid (${MAX_ROWS} rows x ${MAX_COLUMNS} columns) or empty.`,
    );
  }
}

/** 0-based column index to letters: 0 → A, 25 → Z, 26 → AA, 16383 → XFD. */
export function columnLetters(c: number): string {
  let n = c + 1;
  let s = "";
  while (n > 0) {
    const rem = (n - 1) % 26;
    s = String.fromCharCode(65 + rem) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

/** Letters to 0-based column index; -1 when not letters. */
export function columnIndexOf(letters: string): number {
  if (!/^[A-Za-z]+$/.test(letters)) return -1;
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

export function cellAddress(r: number, c: number): string {
  return `${columnLetters(c)}${r + 1}`;
}

/** Formats a rectangle the way Excel reports `Range.address` (without sheet): `A1`, `A1:B2`, `A:C`, `2:5`. */
export function formatRect(r: Rect): string {
  const fullColumns = r.r0 === 0 && r.r1 === MAX_ROWS - 1;
  const fullRows = r.c0 === 0 && r.c1 === MAX_COLUMNS - 1;
  if (fullColumns && !fullRows) return `${columnLetters(r.c0)}:${columnLetters(r.c1)}`;
  if (fullRows && !fullColumns) return `${r.r0 + 1}:${r.r1 + 1}`;
  const a = cellAddress(r.r0, r.c0);
  if (r.r0 === r.r1 && r.c0 === r.c1) return a;
  return `${a}:${cellAddress(r.r1, r.c1)}`;
}

/** True when `name` reads as an A1 or R1C1 cell reference (such names need quoting / are not valid names). */
export function looksLikeCellReference(name: string): boolean {
  const a1 = /^([A-Za-z]{1,3})(\d+)$/.exec(name);
  if (a1) {
    const col = columnIndexOf(a1[1]);
    const row = Number(a1[2]);
    if (col < MAX_COLUMNS && row >= 1 && row <= MAX_ROWS) return true;
  }
  // R1C1 forms: R, C, R1, C1, RC, R1C1, RC1, R1C (case-insensitive).
  return /^[Rr]\d*([Cc]\d*)?$/.test(name) || /^[Cc]\d*$/.test(name);
}

/** Quotes a sheet name for use in an address when Excel would (`'My Sheet'!A1`). */
export function quoteSheetName(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name) && !looksLikeCellReference(name)) return name;
  return `'${name.replace(/'/g, "''")}'`;
}

export function formatAddress(sheetName: string, r: Rect): string {
  return `${quoteSheetName(sheetName)}!${formatRect(r)}`;
}

/** Parses one side of a range: `A1`, `$A$1`, `A`, `$A`, `1`, `$1`. */
function parsePart(part: string): { row?: number; col?: number } | null {
  const m = /^\$?([A-Za-z]{1,3})?\$?(\d+)?$/.exec(part);
  if (!m || (m[1] === undefined && m[2] === undefined)) return null;
  const out: { row?: number; col?: number } = {};
  if (m[1] !== undefined) out.col = columnIndexOf(m[1]);
  if (m[2] !== undefined) out.row = Number(m[2]) - 1;
  return out;
}

/**
 * Parses an A1 address with an optional sheet prefix. Throws InvalidArgument for anything Excel would
 * reject, including addresses beyond row 1,048,576 or column XFD.
 */
export function parseAddress(address: string): ParsedAddress {
  if (typeof address !== "string" || address.trim() === "") throw invalidArgument("The address is empty or not a string.");
  let rest = address.trim();
  let sheet: string | undefined;
  if (rest.startsWith("'")) {
    // Quoted sheet name: '' inside stands for one apostrophe.
    let i = 1;
    let name = "";
    for (;;) {
      if (i >= rest.length) throw invalidArgument(`The address '${address}' has an unterminated sheet name.`);
      const ch = rest[i];
      if (ch === "'") {
        if (rest[i + 1] === "'") {
          name += "'";
          i += 2;
          continue;
        }
        break;
      }
      name += ch;
      i++;
    }
    if (rest[i + 1] !== "!") throw invalidArgument(`The address '${address}' is not valid.`);
    sheet = name;
    rest = rest.slice(i + 2);
  } else {
    const bang = rest.lastIndexOf("!");
    if (bang >= 0) {
      sheet = rest.slice(0, bang);
      rest = rest.slice(bang + 1);
      if (sheet === "") throw invalidArgument(`The address '${address}' is not valid.`);
    }
  }
  const parts = rest.split(":");
  if (parts.length > 2) throw invalidArgument(`The address '${address}' is not valid.`);
  const a = parsePart(parts[0]);
  const b = parts.length === 2 ? parsePart(parts[1]) : a;
  if (!a || !b) throw invalidArgument(`The address '${address}' is not valid.`);
  let rect: Rect;
  const aCell = a.row !== undefined && a.col !== undefined;
  const bCell = b.row !== undefined && b.col !== undefined;
  if (aCell && bCell) {
    rect = { r0: a.row!, c0: a.col!, r1: b.row!, c1: b.col! };
  } else if (parts.length === 2 && a.row === undefined && b.row === undefined && a.col !== undefined && b.col !== undefined) {
    rect = { r0: 0, c0: a.col, r1: MAX_ROWS - 1, c1: b.col };
  } else if (parts.length === 2 && a.col === undefined && b.col === undefined && a.row !== undefined && b.row !== undefined) {
    rect = { r0: a.row, c0: 0, r1: b.row, c1: MAX_COLUMNS - 1 };
  } else {
    throw invalidArgument(`The address '${address}' is not valid.`);
  }
  const norm: Rect = {
    r0: Math.min(rect.r0, rect.r1),
    r1: Math.max(rect.r0, rect.r1),
    c0: Math.min(rect.c0, rect.c1),
    c1: Math.max(rect.c0, rect.c1),
  };
  assertOnGrid(norm, `address '${address}'`);
  return sheet === undefined ? { rect: norm } : { sheet, rect: norm };
}
