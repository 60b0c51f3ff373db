/**
 * How model values become Excel cells: per-column number formats and per-cell values.
 *
 * Pure (no Office calls) so the rules are unit-tested directly. Rules:
 * - text, identifier columns (`*_id`, `*_token`) and integer columns holding values of 16+ digits are
 *   TEXT: number format `@` is set on the whole column BEFORE values are written, so Excel stores
 *   `=SUM(A1)`, `+1`, `00123`, `1/2`, `1E5`, `TRUE` exactly as given (no formula, number or date
 *   parsing; this is also the formula-injection guard).
 * - integer → number, format `0`; decimal → number (decimal strings parsed), format `#,##0.00`;
 *   a numeric custom field of a record snapshot → number, format General, because only a General
 *   cell shows afterwards that Excel read typed input as a formatted number (write-back, see
 *   `src/records/README.md`).
 * - date `YYYY-MM-DD` → Excel serial computed from the Y-M-D parts with integer arithmetic (never
 *   through a local-time `Date`, so no day shift in any time zone), format `yyyy-mm-dd`.
 * - datetime → serial of the UTC instant (DATE-TIME POLICY: times are shown in UTC; the info block
 *   above the table says so), fractional seconds kept to the millisecond (truncated, never rounded
 *   up), format `yyyy-mm-dd hh:mm:ss`, or `yyyy-mm-dd hh:mm:ss.000` for a column where a value has
 *   milliseconds: Excel rounds a time to the format's precision, so `23:59:59.999` under `ss` would
 *   show as the next day's `00:00:00`.
 * - dates and date-times follow Excel's 1900 date system alike (see {@link dayToSerial}): from
 *   1900-01-01 they are serials, before that text.
 * - boolean → boolean; null and "" → empty cell (written as "", because Excel ignores `null`
 *   entries when setting values, which would leave stale data behind on refresh).
 */
import type { CellValue, Column, Table } from "../table/model";
import { digitsAt } from "../refresh/validate";

export const TEXT_FORMAT = "@";
export const INTEGER_FORMAT = "0";
export const DECIMAL_FORMAT = "#,##0.00";
export const DATE_FORMAT = "yyyy-mm-dd";
export const DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss";
/** For date-time columns with milliseconds (Excel shows at most three decimals of a second). */
export const DATETIME_MS_FORMAT = "yyyy-mm-dd hh:mm:ss.000";
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

/** Plans every column of a table. Looks at integer values to find ones of 16 or more significant digits (kept as text: Excel keeps 15). */
export function planColumns(table: Pick<Table, "columns" | "rows">): ColumnPlan[] {
  return table.columns.map((col, ci) => {
    if (col.type === "text" || isIdentifierColumn(col.name)) return { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" };
    switch (col.type) {
      case "integer": {
        // Excel keeps 15 significant digits: any integer of 16 or more is exact text, not only those beyond 2^53.
        const unsafe = table.rows.some((r) => needsTextDigits(r[ci]));
        return unsafe ? { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" } : { name: col.name, numberFormat: INTEGER_FORMAT, kind: "number" };
      }
      case "decimal":
        return { name: col.name, numberFormat: col.customField ? GENERAL_FORMAT : DECIMAL_FORMAT, kind: "number" };
      case "boolean":
        return { name: col.name, numberFormat: GENERAL_FORMAT, kind: "boolean" };
      case "date":
        return { name: col.name, numberFormat: DATE_FORMAT, kind: "date" };
      case "datetime": {
        const ms = table.rows.some((r) => typeof r[ci] === "string" && hasMilliseconds(r[ci]));
        return { name: col.name, numberFormat: ms ? DATETIME_MS_FORMAT : DATETIME_FORMAT, kind: "datetime" };
      }
    }
    return { name: col.name, numberFormat: TEXT_FORMAT, kind: "text" };
  });
}

/**
 * True for an integer value of 16 or more significant digits, which Excel keeps only as text (it
 * keeps 15): a column holding one is written as text. A number under 10^15 has at most 15 digits,
 * so only larger ones (and digit strings) are counted.
 */
export function needsTextDigits(v: CellValue): boolean {
  return v !== null && v !== "" && (typeof v !== "number" || Math.abs(v) >= 1e15) && significantDigits(v) >= 16;
}

/** Significant digits of an integer value (number or digit string), ignoring sign and leading zeros. */
function significantDigits(v: unknown): number {
  const digits = (typeof v === "number" ? BigInt(Math.trunc(v)).toString() : String(v)).replace(/^[+-]/, "").replace(/^0+/, "");
  return digits.length;
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
const MS_PER_DAY = 86_400_000;

/**
 * Excel serial of the day `days` after 1970-01-01, or null before 1900-01-01 (Excel's 1900 date
 * system starts at serial 1 = 1900-01-01 and cannot show earlier days).
 *
 * The 1900 leap-year rule: Excel's 1900 date system counts a 1900-02-29 that never existed (serial
 * 60, kept from Lotus 1-2-3). So from 1900-03-01 (serial 61) on, the serial is the plain count of
 * days since 1899-12-30; 1900-01-01 to 1900-02-28 are one less (serials 1 to 59); serial 60 is
 * never written. Dates and date-times use this one rule, so both become serials from 1900-01-01.
 */
export function dayToSerial(days: number): number | null {
  if (days < JAN_1_1900) return null;
  return days >= MARCH_1_1900 ? days + EPOCH_SERIAL : days + EPOCH_SERIAL - 1;
}

/**
 * Excel serial number of a `YYYY-MM-DD` date, or null for dates Excel cannot show (before 1900-01-01),
 * which are then written as text.
 */
export function dateToSerial(iso: string): number | null {
  const y = digitsAt(iso, 0, 4), m = digitsAt(iso, 5, 2), d = digitsAt(iso, 8, 2);
  if (y < 0 || m < 0 || d < 0) return dayToSerial(daysFromCivil(+iso.slice(0, 4), +iso.slice(5, 7), +iso.slice(8, 10)));
  return dayToSerial(daysFromCivil(y, m, d));
}

/** The model's canonical UTC date-time (`normalizeDateTime`), with any number of fraction digits. */
const CANONICAL_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z$/;

/** Whether a date-time has a non-zero millisecond part (sub-millisecond digits are not shown). */
export function hasMilliseconds(iso: string): boolean {
  // The canonical form without a fraction (`YYYY-MM-DDTHH:MM:SSZ`, the commonest) has none.
  if (iso.length === 20 && iso.charCodeAt(19) === 90 /* Z */) return false;
  const m = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(iso);
  return !!m && /[1-9]/.test(m[1].slice(0, 3));
}

/**
 * Excel serial of an ISO date-time's UTC instant (the documented policy), or null when Excel cannot
 * show it (before 1900-01-01; {@link dayToSerial}). The time of day is kept to the millisecond,
 * truncated, so that a format showing milliseconds never rounds it up (into the next day at
 * `23:59:59.999`); the day part is an integer and the time a fraction below 1.
 */
export function dateTimeToSerial(iso: string): number | null {
  let day: number;
  let ms: number;
  // Fast path for the commonest canonical form, `YYYY-MM-DDTHH:MM:SSZ` (same result as the pattern below).
  if (iso.length === 20 && iso.charCodeAt(19) === 90 && iso.charCodeAt(10) === 84 && iso.charCodeAt(4) === 45 && iso.charCodeAt(7) === 45 && iso.charCodeAt(13) === 58 && iso.charCodeAt(16) === 58) {
    const y = digitsAt(iso, 0, 4), mo = digitsAt(iso, 5, 2), d = digitsAt(iso, 8, 2), h = digitsAt(iso, 11, 2), mi = digitsAt(iso, 14, 2), sec = digitsAt(iso, 17, 2);
    if (y >= 0 && mo >= 0 && d >= 0 && h >= 0 && mi >= 0 && sec >= 0) {
      day = daysFromCivil(y, mo, d);
      ms = ((h * 60 + mi) * 60 + sec) * 1000;
      if (ms >= MS_PER_DAY) {
        day += 1;
        ms -= MS_PER_DAY;
      }
      const serial = dayToSerial(day);
      return serial === null ? null : serial + ms / MS_PER_DAY;
    }
  }
  const m = CANONICAL_UTC.exec(iso);
  if (m) {
    day = daysFromCivil(+m[1], +m[2], +m[3]);
    ms = ((+m[4] * 60 + +m[5]) * 60 + +m[6]) * 1000 + (m[7] ? +`${m[7]}00`.slice(0, 3) : 0);
    // A leap second (:60) that was not normalised away: the next day's first moment.
    if (ms >= MS_PER_DAY) {
      day += 1;
      ms -= MS_PER_DAY;
    }
  } else {
    // Other ISO forms with an explicit offset (validation requires one), so parsing is zone-free.
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return null;
    day = Math.floor(t / MS_PER_DAY);
    ms = t - day * MS_PER_DAY;
  }
  const serial = dayToSerial(day);
  return serial === null ? null : serial + ms / MS_PER_DAY;
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

/**
 * Converts a block of rows [from, to) to a 2-D values array. With `into`, its arrays are filled
 * instead of new ones made (a block buffer reused from one write to the next; see `typedRows`).
 */
export function toValues(rows: readonly CellValue[][], plans: readonly ColumnPlan[], from: number, to: number, into?: (string | number | boolean)[][]): (string | number | boolean)[][] {
  const kinds = plans.map((p) => p.kind);
  const n = kinds.length;
  const out = into ?? new Array<(string | number | boolean)[]>(to - from);
  if (into) into.length = to - from;
  for (let r = from; r < to; r++) {
    const src = rows[r];
    const row = (into && into[r - from]) || new Array<string | number | boolean>(n);
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

/**
 * Text that Excel would not store as this very text when it is written through `Range.values` or
 * `Range.formulas` into a cell that is not text-formatted (`@`): typed input (a formula `=…`, `+…`,
 * `-…`, `@…`; a quote prefix `'…`; an error `#…`; a number, date, time, fraction or percentage, all of
 * which need a digit; a logical value). The API parses such strings locale-neutrally (docs,
 * Excel.Range.values: locale-shaped strings are stored as text), so TRUE and FALSE are the only words.
 * Conservative: a text it flags that Excel would have kept anyway only gains a quote prefix.
 */
export function textNeedsQuote(text: string): boolean {
  const t = text.trim();
  // Full-width ＝＋－＠ too: whether Excel's input reads them as a formula's start (an East Asian IME
  // habit) is not documented, so the strictest reading quotes them; a quote only keeps a text a text.
  return /^[=+\-@'#\uFF1D\uFF0B\uFF0D\uFF20]/.test(t) || /[0-9]/.test(t) || /^(true|false)$/i.test(t);
}

/**
 * What to write through `Range.formulas`, right after the cell's number format `format`, so that a
 * cell read back as `formulas` (`formula`) and `values` (`value`, undefined when not read) holds again
 * exactly what it held (issue #34, item 4). The formulas getter drops a quote prefix (office-js #6687):
 * a quote-prefixed `'00123`, `'1/2` or `'=x` reads back as `00123`, `1/2`, `=x` and would be written
 * back as the number 123, a date, or a live formula. So:
 * - a string starting with `=` is a formula, unless its value is that very string (a text `=x`, which
 *   no formula shows but one referring to a cell holding its own text);
 * - a text (a string that is not a formula) in a cell that is not text-formatted goes back with
 *   Excel's quote prefix when Excel would otherwise read it as something else ({@link textNeedsQuote});
 *   in a `@` cell it goes back as it is (every string stays text there);
 * - numbers, logical values and empty cells as they are.
 */
export function rewritableCell(formula: unknown, value: unknown, format: unknown): unknown {
  if (typeof formula !== "string" || formula === "") return formula;
  const isFormula = formula.startsWith("=") && value !== formula;
  if (isFormula || format === TEXT_FORMAT) return formula;
  return textNeedsQuote(formula) ? `'${formula}` : formula;
}

/** {@link rewritableCell} over rows: `values` and `formats` at the same positions (`values` null when not read). */
export function rewritableRows(formulas: readonly (readonly unknown[])[], values: readonly (readonly unknown[])[] | null, formats: (row: number, column: number) => unknown): unknown[][] {
  return formulas.map((row, r) => row.map((f, c) => rewritableCell(f, values ? values[r]?.[c] : undefined, formats(r, c))));
}
