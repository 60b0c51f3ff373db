/**
 * Pure refresh planning: what to do with a source's answer, how the table's rectangle changes, and
 * how the binding is updated. No I/O here; the workbook side executes the plan.
 */
import type { Table } from "../table/model";
import type { LocalQuery } from "../query";
import { redact, type Binding, type BindingFailure, type BindingValidators } from "./binding";
import type { SourceResult } from "./source";
import { checkColumnsMatch, validateTable, EXCEL_MAX_ROWS } from "./validate";

/** The decision after fetching: write nothing, write this table, or fail without touching the sheet. */
export type RefreshDecision =
  | { kind: "unchanged"; validators: BindingValidators }
  | { kind: "write"; table: Table; validators: BindingValidators }
  | { kind: "fail"; code: string; message: string };

/** A function applying a local query (injected so planning does not depend on the engine's state of completion). */
export type QueryApplier = (table: Table, query: LocalQuery) => { table: Table };

/**
 * True when new data is known to be the data already written: same generation time (datasets), or
 * same content fingerprint (snapshots, whose fingerprint the client puts in the etag).
 */
export function isSameData(binding: Pick<Binding, "source" | "validators">, validators: BindingValidators): boolean {
  const old = binding.validators;
  if (binding.source.kind === "snapshot") return !!old.etag && old.etag === validators.etag;
  return !!old.generatedAt && old.generatedAt === validators.generatedAt;
}

/**
 * Decides what a refresh does with a source result. The WHOLE new table (after the local query) is
 * validated here, before any cell is touched.
 */
export function decide(binding: Binding, result: SourceResult, applyQuery: QueryApplier): RefreshDecision {
  if (result.status === "unchanged") return { kind: "unchanged", validators: result.validators };
  if (isSameData(binding, result.validators)) return { kind: "unchanged", validators: result.validators };
  let table = result.table;
  if (binding.query && Object.keys(binding.query).length > 0) {
    try {
      table = applyQuery(table, binding.query).table;
    } catch (e) {
      return { kind: "fail", code: "query_failed", message: `The stored local query could not be applied: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  const mismatch = checkColumnsMatch(binding, table);
  if (mismatch) return { kind: "fail", code: mismatch.code, message: mismatch.message };
  const issues = validateTable(table, 3);
  if (issues.length) {
    return { kind: "fail", code: issues[0].code, message: `The new data was not written: ${issues.map((i) => i.message).join(" ")}` };
  }
  return { kind: "write", table, validators: result.validators };
}

/** A table's rectangle on its sheet (0-based sheet indexes), header row included. */
export interface TableGeometry {
  /** Sheet row index of the header row. */
  headerRow: number;
  /** Sheet column index of the first column. */
  firstColumn: number;
  /** Data columns (written by the add-in) followed by user columns (kept). */
  dataColumns: number;
  userColumns: number;
  /** Body rows as they are in the sheet (an empty Excel table still has one blank body row). */
  bodyRows: number;
}

/** A rectangle in 0-based sheet indexes. */
export interface Rect {
  row: number;
  column: number;
  rowCount: number;
  columnCount: number;
}

export interface ResizePlan {
  /** Body rows after the refresh (at least 1: Excel tables always have a body row). */
  bodyRows: number;
  /** The whole table after the refresh, header included. */
  table: Rect;
  /** Cells the table grows into (must be empty before anything is written), or null. */
  growth: Rect | null;
  /** Former table cells left outside the table after shrinking (cleared), or null. */
  vacated: Rect | null;
}

/**
 * Plans how a table's rectangle changes for `newRows` data rows.
 * @throws RangeError when the grown table would not fit on the sheet.
 */
export function planResize(g: TableGeometry, newRows: number): ResizePlan {
  const bodyRows = Math.max(1, newRows);
  const width = g.dataColumns + g.userColumns;
  if (g.headerRow + 1 + bodyRows > EXCEL_MAX_ROWS) {
    throw new RangeError(
      `The refreshed table needs ${bodyRows.toLocaleString("en-US")} rows below row ${g.headerRow + 1}, past the sheet's last row (${EXCEL_MAX_ROWS.toLocaleString("en-US")}). Add a local filter to import fewer rows.`,
    );
  }
  const table: Rect = { row: g.headerRow, column: g.firstColumn, rowCount: bodyRows + 1, columnCount: width };
  const growth = bodyRows > g.bodyRows
    ? { row: g.headerRow + 1 + g.bodyRows, column: g.firstColumn, rowCount: bodyRows - g.bodyRows, columnCount: width }
    : null;
  const vacated = bodyRows < g.bodyRows
    ? { row: g.headerRow + 1 + bodyRows, column: g.firstColumn, rowCount: g.bodyRows - bodyRows, columnCount: width }
    : null;
  return { bodyRows, table, growth, vacated };
}

/** Binding after new data was written. Clears any earlier failure. */
export function withSuccess(binding: Binding, table: Table, validators: BindingValidators, now: Date): Binding {
  return {
    ...binding,
    validators: { etag: validators.etag ?? null, lastModified: validators.lastModified ?? null, generatedAt: validators.generatedAt ?? table.meta.generatedAt ?? null },
    schemaVersion: table.meta.schemaVersion ?? binding.schemaVersion,
    lastRefreshAt: now.toISOString(),
    lastCheckedAt: now.toISOString(),
    rowCount: table.rows.length,
    lastFailure: null,
  };
}

/** Binding after the source said "unchanged": only the check time moves; the data is current, so a past failure is cleared. */
export function withUnchanged(binding: Binding, validators: BindingValidators, now: Date): Binding {
  return {
    ...binding,
    validators: { ...binding.validators, ...stripUndefined(validators) },
    lastCheckedAt: now.toISOString(),
    lastFailure: null,
  };
}

/** Binding after a failed refresh: everything else (validators, row count) still describes the data in the sheet. */
export function withFailure(binding: Binding, failure: BindingFailure): Binding {
  return { ...binding, lastFailure: failure };
}

function stripUndefined(v: BindingValidators): BindingValidators {
  const out: BindingValidators = {};
  for (const k of ["etag", "lastModified", "generatedAt"] as const) if (v[k] !== undefined) out[k] = v[k];
  return out;
}

/**
 * Turns anything thrown during a refresh into a stored failure record: a machine code (the error's
 * own `code` where it has one, `cancelled` for aborts) and a message with secrets redacted.
 */
export function failureFrom(err: unknown, now: Date, secrets: readonly string[] = []): BindingFailure {
  let code = "error";
  let message = "Unknown error.";
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; name?: unknown; message?: unknown };
    if (e.name === "AbortError" || e.code === "ABORT_ERR") code = "cancelled";
    else if (typeof e.code === "string" && e.code) code = e.code;
    if (typeof e.message === "string" && e.message) message = e.message;
    if (code === "cancelled" && !/cancel/i.test(message)) message = `Cancelled: ${message}`;
  } else if (typeof err === "string") {
    message = err;
  }
  return { at: now.toISOString(), code, message: redact(message, secrets).slice(0, 500) };
}
