/**
 * The write-back flow, start to finish, against small ports (workbook, service, refresh) so it runs
 * the same in the task pane, in tests with the workbook emulator, and against fakes:
 *
 * 1. {@link prepareWriteback}: read the table's cells, its import record and the service's current
 *    snapshot; compute the changes (pure {@link diffWriteback}); nothing is sent.
 * 2. {@link confirmWriteback}: one PUT per record with valid changes; per-change results; then
 *    refresh the table from the service and record the new import baseline.
 */
import type { RecordKind, SnapshotEndpoint } from "../contract/contract";
import type { Table } from "../table/model";
import { baselineIsCurrent, buildBaseline, type Baseline, type SheetTable } from "./baseline";
import { recordKindOfSnapshot, type RecordsClient } from "./client";
import { diffWriteback, indexServiceRows, type Change, type RowNote } from "./diff";
import { customFieldColumns, TOKEN_COLUMN, type CustomFieldMeta } from "./fields";
import { sendWriteback, summarize, type ChangeOutcome } from "./send";

/** The part of a table binding (`src/refresh/binding.ts`) write-back needs. */
export interface WritebackBinding {
  id: string;
  tableName: string;
  sheetName?: string;
  source: { kind: "dataset"; key: string } | { kind: "snapshot"; endpoint: string };
  validators: { etag?: string | null };
  /** The data columns the add-in wrote; columns the user added to the table are left out of write-back. */
  columns?: readonly { name: string }[];
}

/** The sheet limited to the binding's data columns (user-added columns are never compared or sent). */
export function dataColumnsOnly(sheet: SheetTable, binding: Pick<WritebackBinding, "columns">): SheetTable {
  if (!binding.columns || binding.columns.length === 0) return sheet;
  const keep = new Set(binding.columns.map((c) => c.name));
  const idx = sheet.columns.map((c, i) => (keep.has(c) ? i : -1)).filter((i) => i >= 0);
  if (idx.length === sheet.columns.length) return sheet;
  return { ...sheet, columns: idx.map((i) => sheet.columns[i]), rows: sheet.rows.map((r) => idx.map((i) => r[i])) };
}

/** Workbook side: implemented with Excel in `src/workbook/writeback.ts`. */
export interface WritebackWorkbook {
  /** The bound table's current header and cells (values as Excel holds them). */
  readTable(tableName: string): Promise<SheetTable>;
  /** The stored import record of a binding; null when none. Throws for an unreadable one. */
  readBaseline(bindingId: string): Promise<Baseline | null>;
  saveBaseline(baseline: Baseline): Promise<void>;
  /**
   * Makes these columns of the table text (format `@`, current values rewritten as the plain
   * strings they stand for), so what the user types next is kept exactly as typed.
   */
  setColumnsAsText(tableName: string, columns: readonly string[]): Promise<void>;
}

/** Result of refreshing the table after sending (the refresh engine's report, reduced). */
export interface WritebackRefresh {
  outcome: "updated" | "unchanged" | "failed";
  message?: string;
  /** The binding after the refresh (its new validators key the new import record). */
  binding?: WritebackBinding;
}

export interface WritebackDeps {
  client: RecordsClient & { fetchSnapshot(endpoint: SnapshotEndpoint, options?: { signal?: AbortSignal }): Promise<Table> };
  workbook: WritebackWorkbook;
  /** Custom-field metadata (from the manifest). Throwing or null = unknown. */
  customFields(): Promise<CustomFieldMeta[] | null>;
  /** Refreshes the bound table from the service (the refresh engine). */
  refresh(binding: WritebackBinding, options: { signal?: AbortSignal }): Promise<WritebackRefresh>;
  now?: () => Date;
}

/** What the preview shows. */
export interface WritebackPreview {
  binding: WritebackBinding;
  kind: RecordKind;
  mode: "baseline" | "service";
  changes: Change[];
  notes: RowNote[];
  /** Things the user must know before confirming (e.g. no import record: concurrent changes undetectable). */
  warnings: string[];
  /** Number of records a confirm would update. */
  recordsToUpdate: number;
  /** The table's custom fields (null = unknown). */
  fields: CustomFieldMeta[] | null;
}

/** Raised when write-back cannot even be prepared (wrong kind of table, table gone, service unreachable). */
export class WritebackError extends Error {
  constructor(
    readonly code: "not_writable" | "table_unreadable" | "service_unavailable",
    message: string,
  ) {
    super(message);
    this.name = "WritebackError";
  }
}

/** The record kind of a binding, or null when the table is not a projects/proposals snapshot. */
export function writebackKind(binding: Pick<WritebackBinding, "source">): RecordKind | null {
  return binding.source.kind === "snapshot" ? recordKindOfSnapshot(binding.source.endpoint) : null;
}

/** Reads the table as it is now and stores it as the binding's import record. */
export async function captureBaseline(workbook: WritebackWorkbook, binding: WritebackBinding, now = new Date()): Promise<Baseline> {
  const sheet = dataColumnsOnly(await workbook.readTable(binding.tableName), binding);
  const b = buildBaseline(sheet, { bindingId: binding.id, tableName: binding.tableName, etag: binding.validators.etag ?? null, tokenColumn: TOKEN_COLUMN, now });
  await workbook.saveBaseline(b);
  return b;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Step 1: compute the preview. Sends nothing. */
export async function prepareWriteback(deps: WritebackDeps, binding: WritebackBinding, options: { signal?: AbortSignal } = {}): Promise<WritebackPreview> {
  const kind = writebackKind(binding);
  if (!kind || binding.source.kind !== "snapshot") {
    throw new WritebackError("not_writable", `Table ${binding.tableName} is not an imported projects or proposals snapshot; only those can be written back.`);
  }
  const endpoint = binding.source.endpoint as SnapshotEndpoint;
  const warnings: string[] = [];

  let sheet: SheetTable;
  try {
    sheet = dataColumnsOnly(await deps.workbook.readTable(binding.tableName), binding);
  } catch (e) {
    throw new WritebackError("table_unreadable", `Table ${binding.tableName} could not be read: ${message(e)}`);
  }

  let baseline: Baseline | null = null;
  try {
    baseline = await deps.workbook.readBaseline(binding.id);
    if (baseline && !baselineIsCurrent(baseline, binding)) {
      warnings.push("The table was refreshed after its import record was made, so edits are compared with the service's current values instead.");
      baseline = null;
    } else if (baseline?.tooLarge) {
      warnings.push(`The table is too large for an import record (${baseline.rowCount} rows), so edits are compared with the service's current values instead.`);
    }
  } catch (e) {
    warnings.push(`The import record could not be read (${message(e)}); edits are compared with the service's current values instead.`);
    baseline = null;
  }

  let serviceTable: Table;
  try {
    serviceTable = await deps.client.fetchSnapshot(endpoint, { signal: options.signal });
  } catch (e) {
    throw new WritebackError("service_unavailable", `The service's current ${endpoint} could not be read, so changes cannot be checked: ${message(e)}`);
  }

  let fields: CustomFieldMeta[] | null = null;
  try {
    const meta = await deps.customFields();
    fields = meta ? customFieldColumns(serviceTable.columns, meta) : null;
  } catch (e) {
    warnings.push(`The list of custom fields could not be read (${message(e)}); every edited column is offered and the service decides.`);
  }
  if (fields === null && !warnings.some((w) => w.startsWith("The list of custom fields"))) {
    warnings.push("The list of custom fields is not available; every edited column is offered and the service decides.");
  }

  const diff = diffWriteback({ sheet, fields, baseline, service: indexServiceRows(serviceTable.columns, serviceTable.rows) });
  if (diff.mode === "service" && diff.changes.length > 0) {
    warnings.push("Without an import record, a value someone else changed since your import cannot be told from your edit: check the old values before confirming.");
  }
  const recordsToUpdate = new Set(diff.changes.filter((c) => c.validation.status === "valid").map((c) => c.projectToken)).size;
  return { binding, kind, mode: diff.mode, changes: diff.changes, notes: diff.notes, warnings, recordsToUpdate, fields };
}

/** Outcome of {@link prepareForEditing}. */
export type PrepareResult =
  /** Ready: numeric custom-field columns are text now and the import record was taken. */
  | { ready: true; textColumns: string[]; baseline: Baseline; warnings: string[] }
  /** The sheet already differs from what was imported: those changes are shown first, nothing was converted. */
  | { ready: false; preview: WritebackPreview };

/**
 * Gets a table ready for editing custom fields in the sheet. Excel turns typed input in number
 * cells into numbers (`1,234.5` silently becomes 1234.5; ` 12` becomes 12), which would hide exactly
 * the input the spec rejects; so the numeric custom-field columns are switched to text first, and
 * the import record is taken right after, from the converted cells.
 *
 * Only when nothing differs yet: pending edits would otherwise be absorbed into the new record.
 * The next refresh writes numbers again (ending the editing session); run this again to edit more.
 */
export async function prepareForEditing(deps: WritebackDeps, binding: WritebackBinding, options: { signal?: AbortSignal } = {}): Promise<PrepareResult> {
  const preview = await prepareWriteback(deps, binding, options);
  if (preview.changes.some((c) => c.validation.status !== "ignored")) return { ready: false, preview };
  const sheet = dataColumnsOnly(await deps.workbook.readTable(binding.tableName), binding);
  const textColumns = (preview.fields ?? []).filter((f) => f.numeric !== false && sheet.columns.includes(f.name)).map((f) => f.name);
  if (textColumns.length) await deps.workbook.setColumnsAsText(binding.tableName, textColumns);
  const baseline = await captureBaseline(deps.workbook, binding, deps.now?.() ?? new Date());
  const warnings = preview.warnings.filter((w) => !w.startsWith("The table was refreshed after") && !w.startsWith("The import record could not be read"));
  return { ready: true, textColumns, baseline, warnings };
}

export interface WritebackOutcome {
  outcomes: ChangeOutcome[];
  summary: ReturnType<typeof summarize>;
  refresh: WritebackRefresh | null;
  /** Set when the new import record could not be stored (write-back still worked). */
  baselineWarning?: string;
}

/**
 * Step 2: send, then refresh. The refresh runs whenever at least one record was saved (so the sheet
 * shows what the service now holds, normalised); after an `updated` refresh the import record is
 * taken again from the rewritten table.
 */
export async function confirmWriteback(
  deps: WritebackDeps,
  preview: WritebackPreview,
  options: { signal?: AbortSignal; onProgress?: (text: string) => void } = {},
): Promise<WritebackOutcome> {
  const outcomes = await sendWriteback(deps.client, preview.kind, preview.changes, {
    signal: options.signal,
    onRecord: (done, total) => options.onProgress?.(`Sent ${done} of ${total} record${total === 1 ? "" : "s"}…`),
  });
  const summary = summarize(outcomes);
  if (summary.saved === 0) return { outcomes, summary, refresh: null };
  options.onProgress?.("Refreshing the table from the service…");
  let refresh: WritebackRefresh;
  try {
    refresh = await deps.refresh(preview.binding, { signal: options.signal });
  } catch (e) {
    refresh = { outcome: "failed", message: message(e) };
  }
  let baselineWarning: string | undefined;
  if (refresh.outcome === "updated") {
    try {
      await captureBaseline(deps.workbook, refresh.binding ?? preview.binding, deps.now?.() ?? new Date());
    } catch (e) {
      baselineWarning = `The new import record could not be stored (${message(e)}); the next write-back compares with the service's values.`;
    }
  }
  return { outcomes, summary, refresh, ...(baselineWarning ? { baselineWarning } : {}) };
}
