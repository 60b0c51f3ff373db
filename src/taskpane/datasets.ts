/**
 * View model of the dataset list: what each manifest entry looks like on screen. Pure, so the
 * wording and the state rules are tested in Node; the DOM code only renders these objects.
 */

/** The manifest fields the list uses (the contract's dataset entry, plus the client's status when it gives one). */
export interface DatasetEntryLike {
  key: string;
  name?: string;
  schema_version: string | number;
  formats: string[];
  artifacts: {
    generated_at?: string | null;
    latest_successful_generated_at: string | null;
    row_count: number | null;
  };
  /** The service client's reading of `artifacts`, when it provides one. */
  status?: "ready" | "no_export" | "empty";
}

export type DatasetState = "ready" | "no_export" | "empty";

/** One row of the list, ready to render. */
export interface DatasetView {
  key: string;
  name: string;
  schemaVersion: string;
  state: DatasetState;
  /** Rows, or null when there is no usable export. */
  rowCount: number | null;
  rowsText: string;
  /** ISO time of the usable export, or null. */
  generatedAt: string | null;
  generatedRelative: string;
  generatedAbsolute: string;
  formats: string[];
  formatsText: string;
  /** The note next to the state (empty for ordinary ready datasets). */
  note: string;
  importable: boolean;
}

/**
 * The words for a dataset without a usable export, one for the pane, the CLI (`ppm datasets`:
 * "no export yet") and `ppm doctor` (issue #37: "Never generated" here, "no usable export" there).
 * "Never generated" could be false: a dataset may have been generated without success.
 */
export const NO_EXPORT = "no export yet";
export const NO_EXPORT_NOTE = "retry after the service's next generation (the add-in never starts one)";
export const EMPTY_NOTE = "0 rows";

/**
 * The spec's rule: null `latest_successful_generated_at` or null `row_count` means no usable export;
 * zero rows is a valid, importable export.
 */
export function datasetState(d: DatasetEntryLike): DatasetState {
  if (d.status) return d.status;
  const a = d.artifacts;
  if (!a || a.latest_successful_generated_at === null || a.latest_successful_generated_at === undefined || a.row_count === null || a.row_count === undefined) {
    return "no_export";
  }
  return a.row_count === 0 ? "empty" : "ready";
}

/**
 * The line after an import, worded the same for a dataset, a snapshot and a saved view (issue #37):
 * `Imported 120 rows of financials into financials (json) › ppm_financials.` — the sheet › table
 * form the Refresh tab uses too.
 */
export function importedText(r: { what: string; rowCount: number; sheetName: string; tableName: string; fetchedRows?: number; warnings?: readonly string[] }): string {
  const filtered = r.fetchedRows !== undefined && r.fetchedRows !== r.rowCount ? ` (${formatCount(r.fetchedRows)} received, local query applied)` : "";
  const warnings = r.warnings?.length ? ` ${r.warnings.join(" ")}` : "";
  return `Imported ${formatCount(r.rowCount)} row${r.rowCount === 1 ? "" : "s"} of ${r.what} into ${r.sheetName} › ${r.tableName}${filtered}.${warnings}`;
}

/** `1234` → `"1,234"`. Fixed locale so screenshots and tests do not depend on the machine. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** `"3 minutes ago"`, `"in 2 hours"` (clock skew), `"just now"`; "" for a missing or bad time. */
export function formatRelative(iso: string | null | undefined, now: Date): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const diff = Math.round((now.getTime() - t) / 1000);
  const abs = Math.abs(diff);
  if (abs < 45) return "just now";
  const units: Array<[number, string]> = [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [30, "day"],
    [12, "month"],
    [Infinity, "year"],
  ];
  let value = abs;
  let unit = "second";
  for (const [size, name] of units) {
    unit = name;
    if (value < size) break;
    value = value / size;
  }
  const n = Math.max(1, Math.round(value));
  const label = `${n} ${unit}${n === 1 ? "" : "s"}`;
  return diff >= 0 ? `${label} ago` : `in ${label}`;
}

/**
 * Absolute time, always in UTC and labelled so, e.g. `2026-01-15 06:00 UTC`: the same form as the
 * info line above every table (the documented date-time policy), so the pane and the sheet agree.
 */
export function formatAbsolute(iso: string | null | undefined): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  return new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** Builds the on-screen row of one dataset. */
export function datasetView(d: DatasetEntryLike, now: Date): DatasetView {
  const state = datasetState(d);
  const generatedAt = state === "no_export" ? null : (d.artifacts.latest_successful_generated_at ?? d.artifacts.generated_at ?? null);
  const rowCount = state === "no_export" ? null : (d.artifacts.row_count ?? null);
  const formats = Array.isArray(d.formats) ? d.formats.map(String) : [];
  return {
    key: d.key,
    name: d.name && d.name.trim() ? d.name : d.key,
    schemaVersion: String(d.schema_version),
    state,
    rowCount,
    rowsText: rowCount === null ? "—" : `${formatCount(rowCount)} row${rowCount === 1 ? "" : "s"}`,
    generatedAt,
    generatedRelative: generatedAt ? formatRelative(generatedAt, now) : NO_EXPORT,
    generatedAbsolute: formatAbsolute(generatedAt),
    formats,
    formatsText: formats.join(", "),
    note: state === "no_export" ? NO_EXPORT_NOTE : state === "empty" ? EMPTY_NOTE : "",
    importable: state !== "no_export",
  };
}

/** Case-insensitive substring match on key and name; blank search keeps everything. Order is kept. */
export function filterDatasets<T extends { key: string; name: string }>(list: readonly T[], search: string): T[] {
  const q = search.trim().toLowerCase();
  if (!q) return [...list];
  return list.filter((d) => d.key.toLowerCase().includes(q) || d.name.toLowerCase().includes(q));
}

/** Which export forms the import panel offers, from the manifest's `formats` (unknown names ignored). */
export function importFormats(formats: readonly string[]): Array<"json" | "csv" | "odata"> {
  const have = new Set(formats.map((f) => f.toLowerCase()));
  const out = (["json", "csv", "odata"] as const).filter((f) => have.has(f));
  // A manifest that names no known form still has the JSON export the spec documents for every dataset.
  return out.length ? out : ["json"];
}
