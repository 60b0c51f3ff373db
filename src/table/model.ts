/**
 * The tabular model: the one shape every source (JSON export, CSV, OData, snapshots) is turned into,
 * and the only shape the local query engine and the workbook writer accept.
 *
 * Value conventions (decided here, once):
 * - `text`: string. Empty strings are normalised to `null` (CSV cannot tell them apart, and Excel
 *   shows both as an empty cell), so the three export forms yield identical tables.
 * - `integer`: number when it is a safe integer; a decimal digit string when it is beyond 2^53
 *   (kept exact, never rounded).
 * - `decimal`: number. Decimal strings (custom fields) are parsed to numbers.
 * - `boolean`: boolean.
 * - `date`: `YYYY-MM-DD` string (a calendar date, no time zone, so it can never shift by a day).
 * - `datetime`: ISO 8601 string with an explicit offset, normalised to UTC (`...Z`).
 * - any type: `null` for missing.
 */

export type ColumnType = "text" | "integer" | "decimal" | "boolean" | "date" | "datetime";

export const COLUMN_TYPES: readonly ColumnType[] = ["text", "integer", "decimal", "boolean", "date", "datetime"];

export interface Column {
  /** Column name exactly as the service names it (custom fields: their display name). */
  name: string;
  type: ColumnType;
  /** The service's own type name (e.g. `Edm.Int64`), kept for display and diagnostics. */
  sourceType?: string;
  nullable?: boolean;
  /**
   * A custom field of a record snapshot (keyed by display name). The writer gives numeric ones the
   * General number format: the only one under which Excel leaves a trace when it reads typed input
   * as a formatted number (`1,234.5` switches the cell to `#,##0.00`), which write-back must see.
   */
  customField?: boolean;
}

export type CellValue = string | number | boolean | null;

/** Where a table came from, and the validators that let it be refreshed conditionally. */
export interface TableMeta {
  /** Dataset key, or snapshot endpoint name (e.g. `projectResources`). */
  key: string;
  kind: "dataset" | "snapshot";
  /** `json` | `csv` | `odata` for datasets; `json` for snapshots. */
  format: "json" | "csv" | "odata";
  schemaVersion: string | null;
  /** Generation time of the export (ISO string), when known. */
  generatedAt: string | null;
  etag: string | null;
  lastModified: string | null;
  /** When the client received it (ISO string). */
  fetchedAt: string;
}

export interface Table {
  columns: Column[];
  /** Row-major; each row has exactly `columns.length` cells, aligned with `columns`. */
  rows: CellValue[][];
  meta: TableMeta;
}

/** Index of a column by name, or -1. */
export function columnIndex(table: Pick<Table, "columns">, name: string): number {
  return table.columns.findIndex((c) => c.name === name);
}
