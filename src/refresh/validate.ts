/**
 * Whole-table validation, run BEFORE anything touches a sheet (import and refresh alike), so a bad
 * response can never leave a half-written table behind.
 */
import type { CellValue, Column, Table } from "../table/model";
import type { Binding } from "./binding";
import { isCanonicalDate, isCanonicalUtc } from "../service/values";

/** Excel's grid: 1,048,576 rows (header included) by 16,384 columns. */
export const EXCEL_MAX_ROWS = 1_048_576;
export const EXCEL_MAX_COLUMNS = 16_384;
/**
 * Most characters one cell holds ("Total number of characters that a cell can contain: 32,767",
 * Excel specifications and limits). A longer value can never be written, however it is sent, so
 * it is refused before anything is written and never reported as something a retry could fix.
 */
export const EXCEL_MAX_CELL_CHARS = 32_767;

export interface ValidationIssue {
  code: "row_shape" | "bad_value" | "cell_too_long" | "schema_mismatch" | "too_many_rows" | "too_many_columns" | "duplicate_column";
  message: string;
}

// Explicit offset is required: a datetime without one has no defined instant.
const DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const INT_STRING_RE = /^[+-]?\d+$/;
// Decimal strings as custom fields send them (dot), plus the comma form the spec accepts on input.
const DECIMAL_STRING_RE = /^[+-]?(\d+([.,]\d*)?|[.,]\d+)$/;

/**
 * The number the `count` ASCII digits at `at` spell, or −1 if one of them is not a digit. No
 * substring and no regular expression: validation and typing call it per cell (issue #24 item 2).
 */
export function digitsAt(s: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1; // also NaN past the end
    n = n * 10 + c;
  }
  return n;
}

/** True for a real calendar date `YYYY-MM-DD`. */
export function isCalendarDate(s: string): boolean {
  return s.length === 10 && isCalendarDateAt(s);
}

/** True when `s` starts with a real calendar date `YYYY-MM-DD` (no substring: this runs per cell). */
function isCalendarDateAt(s: string): boolean {
  if (s.length < 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  const y = digitsAt(s, 0, 4), mo = digitsAt(s, 5, 2), d = digitsAt(s, 8, 2);
  if (y < 0 || mo < 0 || d < 0) return false;
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const dim = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= dim;
}

/** 0 ≤ n < limit (`digitsAt` gives −1 for a non-digit). */
function inRange(n: number, limit: number): boolean {
  return n >= 0 && n < limit;
}

/** Why `value` is not acceptable for a column of this type, or null when it is. */
export function checkValue(type: Column["type"], value: CellValue): string | null {
  if (value === null) return null;
  switch (type) {
    case "text":
      return null; // anything can be shown as text
    case "integer":
      if (typeof value === "number") return Number.isSafeInteger(value) ? null : "not a safe integer";
      if (typeof value === "string") return INT_STRING_RE.test(value) || value === "" ? null : "not an integer";
      return "not an integer";
    case "decimal":
      if (typeof value === "number") return Number.isFinite(value) ? null : "not a finite number";
      if (typeof value === "string") return DECIMAL_STRING_RE.test(value) || value === "" ? null : "not a decimal number";
      return "not a number";
    case "boolean":
      if (typeof value === "boolean") return null;
      if (value === "true" || value === "false") return null;
      return "not a boolean";
    case "date":
      return typeof value === "string" && isCalendarDate(value) ? null : "not a YYYY-MM-DD date";
    case "datetime":
      // The canonical `YYYY-MM-DDTHH:MM:SSZ` of a real day and time is valid without a regular
      // expression or Date.parse (per-cell cost); anything else takes the general check.
      if (typeof value === "string" && value.length === 20 && value.charCodeAt(19) === 90 && value.charCodeAt(10) === 84 && value.charCodeAt(13) === 58 && value.charCodeAt(16) === 58
        && isCalendarDateAt(value) && inRange(digitsAt(value, 11, 2), 24) && inRange(digitsAt(value, 14, 2), 60) && inRange(digitsAt(value, 17, 2), 60)) return null;
      // Date.parse rolls an impossible day over (2026-02-30 is 2026-03-02 to V8): the calendar day is checked too.
      return typeof value === "string" && DATETIME_RE.test(value) && isCalendarDateAt(value) && !Number.isNaN(Date.parse(value))
        ? null
        : "not an ISO date-time with offset";
  }
}

/**
 * Validates every row and cell of a table. Returns at most `limit` issues (the first ones), empty
 * when the table can be written. Cost is one pass over the cells.
 */
export function validateTable(table: Table, limit = 5): ValidationIssue[] {
  const issues = validateColumns(table.columns, limit);
  if (table.rows.length + 1 > EXCEL_MAX_ROWS) {
    issues.push({
      code: "too_many_rows",
      message: `The table has ${table.rows.length.toLocaleString("en-US")} rows; an Excel sheet holds ${(EXCEL_MAX_ROWS - 1).toLocaleString("en-US")} plus the header row. Add a local filter ($filter or $top) to import fewer rows.`,
    });
  }
  if (issues.length) return issues.slice(0, limit);
  const check = rowValidator(table.columns);
  const rows = table.rows;
  for (let r = 0; r < rows.length; r++) {
    if (check(rows[r], r, issues, limit)) return issues;
  }
  return issues;
}

/** The column list's own issues: duplicate names (case-insensitive, as Excel's), none, too many. */
export function validateColumns(cols: readonly Column[], limit = 5): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const c of cols) {
    const k = c.name.toLowerCase(); // Excel table column names are case-insensitive
    if (seen.has(k)) issues.push({ code: "duplicate_column", message: `Column "${c.name}" occurs twice (Excel column names are case-insensitive).` });
    seen.add(k);
  }
  if (cols.length === 0) issues.push({ code: "row_shape", message: "The table has no columns." });
  if (cols.length > EXCEL_MAX_COLUMNS) {
    issues.push({ code: "too_many_columns", message: `The table has ${cols.length.toLocaleString("en-US")} columns; an Excel sheet holds ${EXCEL_MAX_COLUMNS.toLocaleString("en-US")}.` });
  }
  return issues.slice(0, limit);
}

/**
 * A check of one row (0-based index `r`) against the columns, for rows that arrive one at a time
 * (issue #38: a streamed import validates each row as it comes). Appends the row's issues to
 * `issues` and returns true once `limit` issues are there.
 */
export function rowValidator(cols: readonly Column[]): (row: readonly CellValue[], r: number, issues: ValidationIssue[], limit: number) => boolean {
  const n = cols.length;
  const types = cols.map((c) => c.type);
  return (row, r, issues, limit) => {
    if (!Array.isArray(row) || row.length !== n) {
      issues.push({ code: "row_shape", message: `Row ${r + 1} has ${Array.isArray(row) ? row.length : "no"} cells; expected ${n}.` });
      return issues.length >= limit;
    }
    const cells: readonly CellValue[] = row;
    for (let c = 0; c < n; c++) {
      const v = cells[c];
      // Fast path for the common cases keeps validation cheap on 200k-row tables.
      if (v === null) continue;
      if (typeof v === "string" && v.length > EXCEL_MAX_CELL_CHARS) {
        issues.push({
          code: "cell_too_long",
          message: `Row ${r + 1}, column "${cols[c].name}" holds ${v.length.toLocaleString("en-US")} characters; an Excel cell holds at most ${EXCEL_MAX_CELL_CHARS.toLocaleString("en-US")}.`,
        });
        if (issues.length >= limit) return true;
        continue;
      }
      const t = types[c];
      if (t === "text" || (t === "decimal" && typeof v === "number" && Number.isFinite(v)) || (t === "boolean" && typeof v === "boolean") || (t === "integer" && Number.isSafeInteger(v))) continue;
      // The model's canonical dates and date-times (nearly every cell), checked without a copy.
      if ((t === "date" && typeof v === "string" && isCanonicalDate(v)) || (t === "datetime" && typeof v === "string" && isCanonicalUtc(v))) continue;
      const why = checkValue(t, v);
      if (why) {
        issues.push({ code: "bad_value", message: `Row ${r + 1}, column "${cols[c].name}" (${t}): ${why}.` });
        if (issues.length >= limit) return true;
      }
    }
    return false;
  };
}

/**
 * Checks that a refreshed table has exactly the columns (names, order, types) the binding was
 * written with. Columns are matched strictly because user columns sit to the right of the data and
 * formulas reference data columns by name: a moved or retyped column would silently break them.
 */
export function checkColumnsMatch(binding: Pick<Binding, "columns">, table: Pick<Table, "columns">): ValidationIssue | null {
  const want = binding.columns;
  const got = table.columns;
  const fmt = (cs: readonly { name: string; type: string }[]) => cs.map((c) => `${c.name}:${c.type}`).join(", ");
  if (want.length !== got.length || want.some((w, i) => w.name !== got[i].name || w.type !== got[i].type)) {
    const missing = want.filter((w) => !got.some((g) => g.name === w.name)).map((w) => w.name);
    const added = got.filter((g) => !want.some((w) => w.name === g.name)).map((g) => g.name);
    const detail = missing.length || added.length
      ? `missing: ${missing.join(", ") || "none"}; new: ${added.join(", ") || "none"}`
      : `expected [${fmt(want)}], got [${fmt(got)}]`;
    return {
      code: "schema_mismatch",
      message: `The source's columns no longer match the table (${detail}). Nothing was changed; re-import the table to take the new columns.`,
    };
  }
  return null;
}
