/**
 * Column types and cell values: from the service's type names and wire values to the tabular
 * model's conventions (see `src/table/model.ts`). One set of rules for JSON, CSV and OData, so the
 * same dataset yields the same table whichever form it was fetched in.
 */
import type { CellValue, ColumnType } from "../table/model";

/** Maps a service type name (EDM, with or without the `Edm.` prefix) to a column type; unknown → text. */
export function columnTypeFromEdm(typeName: string | undefined | null): ColumnType {
  const t = (typeName ?? "").trim().replace(/^Edm\./i, "").toLowerCase();
  switch (t) {
    case "int16":
    case "int32":
    case "int64":
    case "byte":
    case "sbyte":
      return "integer";
    case "decimal":
    case "double":
    case "single":
      return "decimal";
    case "boolean":
      return "boolean";
    case "date":
      return "date";
    case "datetimeoffset":
      return "datetime";
    default:
      return "text";
  }
}

/** A cell that could not be converted to its column's type. */
export class CellError extends Error {
  constructor(
    message: string,
    readonly received: string,
  ) {
    super(message);
  }
}

const INT_RE = /^[+-]?\d+$/;
const DEC_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function describe(v: unknown): string {
  const s = typeof v === "string" ? JSON.stringify(v) : String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * Converts a wire value (JSON value, or CSV cell string) into the model's value for `type`.
 * `null`, `undefined` and `""` become `null`. Throws {@link CellError} on a value that does not fit.
 */
export function toCell(value: unknown, type: ColumnType): CellValue {
  if (value === null || value === undefined || value === "") return null;
  switch (type) {
    case "text":
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return String(value);
      return JSON.stringify(value);
    case "integer":
      return toInteger(value);
    case "decimal":
      return toDecimal(value);
    case "boolean":
      return toBoolean(value);
    case "date":
      return toDate(value);
    case "datetime":
      return toDateTime(value);
  }
}

/** Exact powers of ten a double holds (10^0 … 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * `-?digits[.digits]` of at most 15 significant digits, read without a pattern or a copy (issue
 * #38: a CSV export's numbers); the same double `Number()` gives (the digits make an integer a
 * double holds exactly, divided once by an exact power of ten: Clinger's fast path). Null for
 * anything else (signs, spaces, exponents, more digits), which the general conversion reads.
 */
export function plainNumber(s: string): number | null {
  const n = s.length;
  let i = 0;
  const negative = n > 1 && s.charCodeAt(0) === 45;
  if (negative) i = 1;
  if (i >= n) return null;
  let m = 0;
  let digits = 0;
  let scale = 0;
  let dot = -1;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (dot >= 0 || i === n - 1) return null;
      dot = i;
      continue;
    }
    if (c < 48 || c > 57) return null;
    if (m !== 0 || c !== 48) {
      m = m * 10 + (c - 48);
      digits++;
    }
    if (dot >= 0) scale++;
  }
  if (dot === (negative ? 1 : 0) || digits > 15 || scale > 22) return null;
  const v = scale === 0 ? m : m / POW10[scale];
  return negative ? -v : v;
}

function toInteger(value: unknown): CellValue {
  if (typeof value === "string") {
    const fast = plainNumber(value);
    if (fast !== null && Number.isSafeInteger(fast) && value.indexOf(".") < 0) return fast === 0 ? 0 : fast;
  }
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new CellError(`expected an integer, got ${describe(value)}`, describe(value));
    if (Number.isSafeInteger(value)) return value;
    // Already rounded by JSON.parse; the best we can do is keep the digits we got.
    return BigInt(value).toString();
  }
  if (typeof value === "string") {
    const s = value.trim();
    if (!INT_RE.test(s)) throw new CellError(`expected an integer, got ${describe(value)}`, describe(value));
    const n = Number(s);
    if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
    // Beyond 2^53: keep the exact digits (canonical: no '+', no leading zeros).
    const neg = s.startsWith("-");
    const digits = s.replace(/^[+-]/, "").replace(/^0+(?=\d)/, "");
    return neg ? `-${digits}` : digits;
  }
  throw new CellError(`expected an integer, got ${describe(value)}`, describe(value));
}

function toDecimal(value: unknown): CellValue {
  if (typeof value === "string") {
    const fast = plainNumber(value);
    if (fast !== null) return fast === 0 ? 0 : fast;
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new CellError(`expected a decimal number, got ${describe(value)}`, describe(value));
    return value === 0 ? 0 : value;
  }
  if (typeof value === "string") {
    const s = value.trim();
    if (!DEC_RE.test(s)) throw new CellError(`expected a decimal number, got ${describe(value)}`, describe(value));
    const n = Number(s);
    return n === 0 ? 0 : n;
  }
  throw new CellError(`expected a decimal number, got ${describe(value)}`, describe(value));
}

function toBoolean(value: unknown): CellValue {
  if (typeof value === "boolean") return value;
  if (value === "true") return true;
  if (value === "false") return false;
  if (typeof value === "string") {
    const s = value.trim().toLowerCase();
    if (s === "true" || s === "1") return true;
    if (s === "false" || s === "0") return false;
  }
  if (value === 1) return true;
  if (value === 0) return false;
  throw new CellError(`expected true or false, got ${describe(value)}`, describe(value));
}

const CANONICAL_UTC_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Two ASCII digits at `i` as a number (callers have matched the digits with a pattern). */
function twoDigits(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;
}

/**
 * Checks the date (and, when present, time) fields of a canonical `YYYY-MM-DD[THH:MM:SS...]` string.
 * Read digit by digit: this runs for every date cell of a CSV export, and slicing out six substrings
 * per cell showed in profiles.
 */
function validCalendar(s: string): boolean {
  const y = twoDigits(s, 0) * 100 + twoDigits(s, 2);
  const mo = twoDigits(s, 5);
  const d = twoDigits(s, 8);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return false;
  if (s.length > 10) {
    if (twoDigits(s, 11) > 23 || twoDigits(s, 14) > 59 || twoDigits(s, 17) > 59) return false;
  }
  return true;
}

/** True for the ASCII digits at `s[from … to)`. */
function digitsIn(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * `YYYY-MM-DD` of a day that exists: a date cell exactly as the model keeps it, checked by character
 * codes (no pattern, no copy). Nearly every date an export sends is in this form (issue #38).
 */
export function isCanonicalDate(s: string): boolean {
  return s.length === 10 && s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && digitsIn(s, 0, 4) && digitsIn(s, 5, 7) && digitsIn(s, 8, 10) && validCalendar(s);
}

/** `YYYY-MM-DDTHH:MM:SSZ` of a moment that exists: the model's canonical date-time, as most exports send it. */
export function isCanonicalUtc(s: string): boolean {
  return s.length === 20 && s.charCodeAt(19) === 90 && s.charCodeAt(10) === 84 && s.charCodeAt(13) === 58 && s.charCodeAt(16) === 58
    && s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && digitsIn(s, 0, 4) && digitsIn(s, 5, 7) && digitsIn(s, 8, 10)
    && digitsIn(s, 11, 13) && digitsIn(s, 14, 16) && digitsIn(s, 17, 19) && validCalendar(s);
}

function toDate(value: unknown): CellValue {
  if (typeof value !== "string") throw new CellError(`expected a date (YYYY-MM-DD), got ${describe(value)}`, describe(value));
  if (isCanonicalDate(value)) return value;
  const s = value.trim();
  // Already `YYYY-MM-DD` (nearly every cell): it is its own canonical form.
  if (s.length === 10 && DATE_RE.test(s)) {
    if (!validCalendar(s)) throw new CellError(`expected a valid calendar date, got ${describe(value)}`, describe(value));
    return s;
  }
  const m = DATE_RE.exec(s) ?? (DATETIME_RE.test(s) ? DATE_RE.exec(s.slice(0, 10)) : null);
  if (!m) throw new CellError(`expected a date (YYYY-MM-DD), got ${describe(value)}`, describe(value));
  if (!validCalendar(`${m[1]}-${m[2]}-${m[3]}`)) {
    throw new CellError(`expected a valid calendar date, got ${describe(value)}`, describe(value));
  }
  return `${m[1]}-${m[2]}-${m[3]}`;
}

/**
 * Normalises an ISO 8601 date-time to UTC `YYYY-MM-DDTHH:MM:SS[.fraction]Z`. The fraction is kept
 * digit for digit (an offset never changes it), so sub-millisecond precision is not lost.
 * A value without an offset is taken as UTC.
 */
export function normalizeDateTime(value: string): string {
  if (isCanonicalUtc(value)) return value;
  const s = value.trim();
  // Fast path (most exports): already canonical UTC; only the calendar needs checking.
  if (CANONICAL_UTC_RE.test(s) && validCalendar(s)) return s;
  const m = DATETIME_RE.exec(s);
  if (!m) throw new CellError(`expected a date-time (ISO 8601), got ${describe(value)}`, describe(value));
  const [, y, mo, d, h, mi, sec = "00", frac = "", zone = "Z"] = m;
  let offsetMin = 0;
  if (zone.toUpperCase() !== "Z") {
    const z = zone.replace(":", "");
    const sign = z.startsWith("-") ? -1 : 1;
    offsetMin = sign * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5)));
  }
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec)) - offsetMin * 60_000;
  const dt = new Date(ms);
  // A leap second (:60) is accepted and rolls over, as Date.UTC does.
  if (Number.isNaN(ms) || !validCalendar(`${y}-${mo}-${d}`) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 60) {
    throw new CellError(`expected a valid date-time, got ${describe(value)}`, describe(value));
  }
  const iso = dt.toISOString().slice(0, 19);
  return `${iso}${frac}Z`;
}

function toDateTime(value: unknown): CellValue {
  if (typeof value !== "string") throw new CellError(`expected a date-time (ISO 8601), got ${describe(value)}`, describe(value));
  return normalizeDateTime(value);
}

/**
 * Infers a column type from JSON values, for fields nobody documents (snapshot list fields such as
 * `start_date`, extra dataset fields). Nulls and empty strings are no value (both become empty
 * cells). Then, over EVERY value of the column:
 *
 * - all numbers → integer (all safe integers) or decimal; all booleans → boolean;
 * - all strings that are calendar dates written exactly `YYYY-MM-DD` (a valid day: no 2026-02-30)
 *   → date (issue #25: a real Excel date, as dataset dates are);
 * - all strings that are ISO 8601 date-times with an explicit offset (`Z` or `±hh:mm`; without one
 *   the moment would be a guess) → datetime;
 * - anything else, or any mix → text.
 *
 * A single value that is not a date keeps the whole column text: text that merely looks like a
 * date in some rows is never turned into dates. A column with no value at all is text.
 */
export function inferColumnType(values: Iterable<unknown>): ColumnType {
  let sawNumber = false;
  let allInt = true;
  let sawBool = false;
  let sawDate = false;
  let sawDateTime = false;
  let sawOther = false;
  for (const v of values) {
    if (v === null || v === undefined || v === "") continue;
    if (typeof v === "number" && Number.isFinite(v)) {
      sawNumber = true;
      if (!Number.isSafeInteger(v)) allInt = false;
    } else if (typeof v === "boolean") sawBool = true;
    else if (typeof v === "string" && isStrictDate(v)) sawDate = true;
    else if (typeof v === "string" && isStrictDateTime(v)) sawDateTime = true;
    else sawOther = true;
    if (sawOther) return "text";
  }
  const kinds = Number(sawNumber) + Number(sawBool) + Number(sawDate) + Number(sawDateTime);
  if (kinds !== 1) return "text";
  if (sawNumber) return allInt ? "integer" : "decimal";
  if (sawBool) return "boolean";
  return sawDate ? "date" : "datetime";
}

/** `YYYY-MM-DD` exactly (no spaces, no time), a day that exists. */
function isStrictDate(s: string): boolean {
  return s.length === 10 && DATE_RE.test(s) && validCalendar(s);
}

/** An ISO 8601 date-time with a `T`, seconds optional, and an explicit offset; a valid moment. */
function isStrictDateTime(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/.test(s)) return false;
  try {
    normalizeDateTime(s);
    return true;
  } catch {
    return false;
  }
}
