/**
 * CSV encoding per the spec: UTF-8 without BOM, comma separators, RFC 4180 quoting, CRLF after
 * every record (including the last), empty cell for a missing value.
 */
import type { RawCell } from "./data";

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** One cell. Values are written as they are; guarding against formula injection is the reader's job. */
export function csvCell(v: RawCell): string {
  if (v === null) return "";
  if (typeof v === "string") {
    if (v === "") return '""';
    return NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  }
  return String(v);
}

/** One record, terminated by CRLF. */
export function csvLine(cells: readonly RawCell[]): string {
  let out = "";
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) out += ",";
    out += csvCell(cells[i]);
  }
  return out + "\r\n";
}
