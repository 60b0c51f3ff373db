/**
 * What the PPM worksheet functions compute, as pure functions of a cached dataset (issue #28):
 * no Office, no DOM. `functions.ts` turns a {@link FunctionError} into Excel's
 * `CustomFunctions.Error` and everything else into the cell's value.
 */
import { applyQuery, parseQuery, QueryError, type LocalQuery } from "../query";
import type { CellValue, Column, Table } from "../table/model";
import { dateTimeToSerial, dateToSerial } from "../workbook/cells";
import type { DatasetEntry } from "./data";

/** Excel's error values a function returns, with the message Excel shows next to the cell. */
export type ExcelErrorValue = "#N/A" | "#VALUE!";

export class FunctionError extends Error {
  constructor(
    readonly code: ExcelErrorValue,
    message: string,
  ) {
    super(message);
    this.name = "FunctionError";
  }
}

/** What a cell can hold from a function. */
export type ExcelScalar = string | number | boolean;

/**
 * The largest result PPM.QUERY / PPM.VIEW spill (cells, header included). Larger results belong in
 * a table: an import is written in blocks, refreshed by delta and kept out of recalculation.
 */
export const MAX_SPILL_CELLS = 100_000;

/** The separator of the parts of a composite key in `PPM.VALUE`'s `key` argument. */
export const KEY_SEPARATOR = "|";

/** A model value as a cell shows it: dates as serial numbers, Int64 beyond 2^53 as exact text, empty as "". */
export function toExcel(column: Column, v: CellValue): ExcelScalar {
  if (v === null) return "";
  if (column.type === "date" && typeof v === "string") return dateToSerial(v) ?? v;
  if (column.type === "datetime" && typeof v === "string") return dateTimeToSerial(v) ?? v;
  return v;
}

/** The text of one key part as `PPM.VALUE` compares it (numbers in their shortest form). */
function partText(v: CellValue): string {
  if (v === null) return "";
  return typeof v === "string" ? v : String(v);
}

/**
 * The key the user wrote, as the parts to compare. A number typed in a cell arrives as a number
 * (`42` → "42"); a composite key is its parts in `$metadata` order joined by `|` (`"P-001|2026|3"`).
 */
export function keyParts(key: unknown, keyCount: number): string[] {
  if (typeof key === "number") {
    if (!Number.isFinite(key)) throw new FunctionError("#VALUE!", "The key is not a finite number.");
    return [String(key)];
  }
  if (typeof key === "boolean") return [key ? "true" : "false"];
  if (typeof key !== "string" || key === "") throw new FunctionError("#VALUE!", "The key is empty: give the row's key (for a composite key, its parts joined by |).");
  return keyCount > 1 ? key.split(KEY_SEPARATOR) : [key];
}

function columnAt(table: Table, name: string, dataset: string): number {
  let i = table.columns.findIndex((c) => c.name === name);
  if (i < 0) {
    const lower = name.toLowerCase();
    const matches = table.columns.map((c, j) => (c.name.toLowerCase() === lower ? j : -1)).filter((j) => j >= 0);
    if (matches.length === 1) i = matches[0];
  }
  if (i < 0) {
    const names = table.columns.map((c) => c.name);
    const shown = names.slice(0, 12).join(", ") + (names.length > 12 ? ", …" : "");
    throw new FunctionError("#VALUE!", `"${dataset}" has no column "${name}". Its columns: ${shown}.`);
  }
  return i;
}

/** key text (parts joined by a character no key part is compared with) → first row index. */
function indexOf(entry: DatasetEntry, keyCols: number[]): Map<string, number> {
  if (entry.index) return entry.index;
  const index = new Map<string, number>();
  const rows = entry.table.rows;
  for (let r = 0; r < rows.length; r++) {
    const k = keyCols.map((c) => partText(rows[r][c])).join("\u0000");
    if (!index.has(k)) index.set(k, r);
  }
  entry.index = index;
  return index;
}

/** `PPM.VALUE`: one cell of the cached export, found by the dataset's key. */
export function lookupValue(entry: DatasetEntry, key: unknown, column: unknown): ExcelScalar {
  const { table, dataset } = entry;
  if (typeof column !== "string" || column.trim() === "") throw new FunctionError("#VALUE!", "Give the column to return, e.g. \"budget\".");
  if (entry.keys.length === 0) throw new FunctionError("#VALUE!", `"${dataset}" declares no key in $metadata, so a row cannot be found by key. Use PPM.QUERY with $filter instead.`);
  const keyCols = entry.keys.map((k) => columnAt(table, k, dataset));
  const col = columnAt(table, column, dataset);
  const parts = keyParts(key, keyCols.length);
  if (parts.length !== keyCols.length) {
    throw new FunctionError("#VALUE!", `The key of "${dataset}" has ${keyCols.length} parts (${entry.keys.join(KEY_SEPARATOR)}); got ${parts.length}. Join the parts with ${KEY_SEPARATOR}.`);
  }
  const r = indexOf(entry, keyCols).get(parts.join("\u0000"));
  if (r === undefined) {
    throw new FunctionError("#N/A", `No row of "${dataset}" has ${entry.keys.join(KEY_SEPARATOR)} = ${parts.join(KEY_SEPARATOR)}.`);
  }
  return toExcel(table.columns[col], table.rows[r][col]);
}

/** The local query of `PPM.QUERY`'s `options` (`$filter=…&$orderby=…`), or a clear `#VALUE!`. */
export function readOptions(options: unknown): LocalQuery {
  if (options === undefined || options === null || options === "") return {};
  if (typeof options !== "string") throw new FunctionError("#VALUE!", "The options must be text such as \"$filter=fiscal_year eq 2026&$top=10\".");
  try {
    return parseQuery(options);
  } catch (e) {
    throw asFunctionError(e);
  }
}

/** The query's error as `#VALUE!` with the engine's own message (it names the problem). */
export function asFunctionError(e: unknown): FunctionError {
  if (e instanceof FunctionError) return e;
  if (e instanceof QueryError) return new FunctionError("#VALUE!", `Bad query: ${e.message}`);
  return new FunctionError("#VALUE!", e instanceof Error ? e.message : String(e));
}

/** A table as a spilled array: the header row, then the rows (Excel values). */
export function spill(table: Table, what: string): ExcelScalar[][] {
  const cells = (table.rows.length + 1) * Math.max(1, table.columns.length);
  if (cells > MAX_SPILL_CELLS) {
    throw new FunctionError(
      "#VALUE!",
      `${what} has ${table.rows.length.toLocaleString("en-US")} rows × ${table.columns.length} columns (${cells.toLocaleString("en-US")} cells), more than the ${MAX_SPILL_CELLS.toLocaleString("en-US")} a formula returns. Import it as a table from the PPM pane instead (Datasets › Import), or narrow it with $filter, $select, $top or $apply.`,
    );
  }
  const out: ExcelScalar[][] = [table.columns.map((c) => c.name)];
  for (const row of table.rows) out.push(row.map((v, i) => toExcel(table.columns[i], v)));
  return out;
}

/** `PPM.QUERY`: the local query over the cached export, spilled with its header. */
export function runQuery(entry: DatasetEntry, query: LocalQuery, now?: Date): ExcelScalar[][] {
  let result: Table;
  try {
    result = applyQuery(entry.table, query, now ? { now } : {}).table;
  } catch (e) {
    throw asFunctionError(e);
  }
  return spill(result, `The result of the query on "${entry.dataset}"`);
}

/** `PPM.ASOF`'s text: when the data was generated, and whether it is stale. */
export function asOfText(generatedAt: string | null, staleReason: string | null): string {
  const when = generatedAt ? formatUtc(generatedAt) : "an unknown time";
  return staleReason ? `as of ${when} (stale: ${staleReason})` : `as of ${when}`;
}

/** `2026-11-25T18:00:00Z` → `2026-11-25 18:00 UTC` (Excel has no time zones: the text says which). */
export function formatUtc(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t).toISOString();
  return `${d.slice(0, 10)} ${d.slice(11, 16)} UTC`;
}
