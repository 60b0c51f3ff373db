/**
 * How model values become Excel cells: per-column number formats and per-cell values.
 *
 * Pure (no Office calls) so the rules are unit-tested directly. Rules:
 * - text, identifier columns (`*_id`, `*_token`) and integer columns holding values beyond 2^53 are
 *   TEXT: number format `@` is set on the whole column BEFORE values are written, so Excel stores
 *   `=SUM(A1)`, `+1`, `00123`, `1/2`, `1E5`, `TRUE` exactly as given (no formula, number or date
 *   parsing; this is also the formula-injection guard).
 * - integer → number, format `0`; decimal → number (decimal strings parsed), format `#,##0.00`.
 * - date `YYYY-MM-DD` → Excel serial computed from the Y-M-D parts with integer arithmetic (never
 *   through a local-time `Date`, so no day shift in any time zone), format `yyyy-mm-dd`.
 * - datetime → serial of the UTC instant (DATE-TIME POLICY: times are shown in UTC; the info block
 *   above the table says so), format `yyyy-mm-dd hh:mm:ss`.
 * - boolean → boolean; null and "" → empty cell (written as "", because Excel ignores `null`
 *   entries when setting values, which would leave stale data behind on refresh).
 */
import type { CellValue, Column, Table } from "../table/model";

export const TEXT_FORMAT = "@";
export const INTEGER_FORMAT = "0";
export const DECIMAL_FORMAT = "#,##0.00";
export const DATE_FORMAT = "yyyy-mm-dd";
export const DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss";
export const GENERAL_FORMAT = "General";

/** How one column is written. */
export interface ColumnPlan {
  name: string;
  /** Number format set once for the whole column (header excluded). */
  numberFormat: string;
  /** How cells are converted. */
  kind: "text" | "number" | "boolean" | "date" | "datetime";
}

const IDENTIFIER_RE = /(_id|_token)$/i;

/** True for identifier columns, which are always written as exact text. */
export function isIdentifierColumn(name: string): boolean {
  return IDENTIFIER_RE.test(name);
}

/** Plans every column of a table. Looks at integer values to find ones beyond 2^53 (kept as text). */
export function planColumns(table: Pick<Table, "columns" | "rows">): ColumnPlan[] {
  return table.columns.map((col, ci) => {
    if (col.type === "text" || isIdentifierColumn(col.name)) return { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" };
    switch (col.type) {
      case "integer": {
        const unsafe = table.rows.some((r) => typeof r[ci] === "string" && r[ci] !== "" && !Number.isSafeInteger(Number(r[ci])));
        return unsafe ? { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" } : { name: col.name, numberFormat: INTEGER_FORMAT, kind: "number" };
      }
      case "decimal":
        return { name: col.name, numberFormat: DECIMAL_FORMAT, kind: "number" };
      case "boolean":
        return { name: col.name, numberFormat: GENERAL_FORMAT, kind: "boolean" };
      case "date":
        return { name: col.name, numberFormat: DATE_FORMAT, kind: "date" };
      case "datetime":
        return { name: col.name, numberFormat: DATETIME_FORMAT, kind: "datetime" };
    }
    return { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" };
  });
}

/** Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian), integer arithmetic only. */
export function daysFromCivil(y: number, m: number, d: number): number {
  // Howard Hinnant's days_from_civil: exact for all years, no Date object, no time zone.
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Serial of 1970-01-01 in Excel's 1900 date system. */
const EPOCH_SERIAL = 25569;
/** First date with a correct days-since-1899-12-30 serial (Excel counts a fictitious 1900-02-29). */
const MARCH_1_1900 = daysFromCivil(1900, 3, 1);
const JAN_1_1900 = daysFromCivil(1900, 1, 1);

/**
 * Excel serial number of a `YYYY-MM-DD` date, or null for dates Excel cannot show (before 1900-01-01),
 * which are then written as text.
 */
export function dateToSerial(iso: string): number | null {
  const y = +iso.slice(0, 4), m = +iso.slice(5, 7), d = +iso.slice(8, 10);
  const days = daysFromCivil(y, m, d);
  if (days < JAN_1_1900) return null;
  // Jan 1 - Feb 28 1900 sit before Excel's phantom leap day, one less than the plain count.
  return days >= MARCH_1_1900 ? days + EPOCH_SERIAL : days + EPOCH_SERIAL - 1;
}

/** Excel serial of an ISO date-time's UTC instant (the documented policy), or null when not representable. */
export function dateTimeToSerial(iso: string): number | null {
  const ms = Date.parse(iso); // explicit offset/Z is required by validation, so parsing is zone-free
  if (Number.isNaN(ms)) return null;
  const serial = ms / 86_400_000 + EPOCH_SERIAL;
  if (serial < 61) return null; // before 1900-03-01: keep as text rather than show a wrong day
  // Round to the millisecond so the serial does not carry binary noise into the cell.
  return Math.round(serial * 86_400_000) / 86_400_000;
}

/** Converts one model value to the value written into a cell of a column with this plan. */
export function toCell(kind: ColumnPlan["kind"], v: CellValue): string | number | boolean {
  if (v === null || v === "") return "";
  switch (kind) {
    case "text":
      return typeof v === "string" ? v : String(v);
    case "number":
      return typeof v === "number" ? v : Number(String(v).replace(",", "."));
    case "boolean":
      return typeof v === "boolean" ? v : v === "true";
    case "date": {
      const s = dateToSerial(String(v));
      return s === null ? String(v) : s;
    }
    case "datetime": {
      const s = dateTimeToSerial(String(v));
      return s === null ? String(v) : s;
    }
  }
}

/** Converts a block of rows [from, to) to a 2-D values array. */
export function toValues(rows: readonly CellValue[][], plans: readonly ColumnPlan[], from: number, to: number): (string | number | boolean)[][] {
  const kinds = plans.map((p) => p.kind);
  const n = kinds.length;
  const out = new Array<(string | number | boolean)[]>(to - from);
  for (let r = from; r < to; r++) {
    const src = rows[r];
    const row = new Array<string | number | boolean>(n);
    for (let c = 0; c < n; c++) {
      const v = src[c];
      const k = kinds[c];
      // Inline the two commonest cases; everything else goes through toCell.
      if (v === null || v === "") row[c] = "";
      else if (k === "text" && typeof v === "string") row[c] = v;
      else if (k === "number" && typeof v === "number") row[c] = v;
      else row[c] = toCell(k, v);
    }
    out[r - from] = row;
  }
  return out;
}

/**
 * Estimated size in bytes of a values row in an Office request (JSON text, UTF-8). Errs high:
 * non-ASCII strings count three bytes per char and every string pays for a few escapes.
 */
export function estimateRowBytes(row: readonly (string | number | boolean)[]): number {
  let bytes = 2 + row.length; // brackets and commas
  for (const v of row) {
    if (typeof v === "string") {
      bytes += /[^\x20-\x7e]|["\\]/.test(v) ? v.length * 6 + 2 : v.length + 2;
    } else if (typeof v === "number") bytes += 24;
    else bytes += 5;
  }
  return bytes;
}

/** The header row of the table: column names, written as text. */
export function headerValues(columns: readonly Column[]): string[][] {
  return [columns.map((c) => c.name)];
}
