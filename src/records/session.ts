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
import { heldAfterSend, sendWriteback, summarize, type ChangeOutcome } from "./send";
import { heldKey, isMarkFill, MARK_FILL, type CellFill, type HeldCell } from "./held";

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

/** A cell of a bound table, located by its row's record token and its column. */
export interface CellKey {
  projectToken: string;
  field: string;
}

/** What a cell holds: its formula or constant (as `Range.formulas` reads it) and its number format. */
export interface CellContent {
  formula: string | number | boolean;
  /** null when writing: the format most of the column's other body cells have. */
  numberFormat: string | null;
  /**
   * `formula` is a text to keep as text (a service's value), never a formula or a number: in a cell
   * not formatted `@` it is written with Excel's quote prefix when Excel would read it as something
   * else (`=CONCAT(…)` would run).
   */
  text?: true;
}

/** A cell's content and own fill, as read. */
export interface CellState extends CellKey {
  content: CellContent;
  /** null = a fill the add-in cannot restore exactly (pattern, gradient, several colours). */
  fill: CellFill | null;
}

/** Workbook side: implemented with Excel in `src/workbook/writeback.ts`. */
export interface WritebackWorkbook {
  /**
   * The bound table's current header and cells (values as Excel holds them); for `shownColumns`
   * also each cell's number format and display text.
   */
  readTable(tableName: string, options?: { shownColumns?: readonly string[] }): Promise<SheetTable>;
  /** The stored import record of a binding; null when none. Throws for an unreadable one. */
  readBaseline(bindingId: string): Promise<Baseline | null>;
  saveBaseline(baseline: Baseline): Promise<void>;
  /** Content and fill of these cells; cells that are no longer in the table are left out. */
  readCells(tableName: string, keys: readonly CellKey[]): Promise<CellState[]>;
  /** Writes content (when given) and then fill (when given) to these cells; missing cells are skipped. */
  writeCells(tableName: string, cells: readonly { key: CellKey; content?: CellContent; fill?: CellFill }[]): Promise<void>;
  /**
   * Issue #35: why the table cannot be written now (its sheet or the workbook's structure is
   * protected), with what to do; null when it can. Asked before anything is written or sent.
   */
  checkWritable?(tableName: string): Promise<string | null>;
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
  /** Edits kept in the sheet (and marked) after an earlier send, still unsent. */
  held: HeldCell[];
}

/** Raised when write-back cannot even be prepared (wrong kind of table, table gone, service unreachable). */
export class WritebackError extends Error {
  constructor(
    readonly code: "not_writable" | "table_unreadable" | "service_unavailable" | "protected",
    message: string,
  ) {
    super(message);
    this.name = "WritebackError";
  }
}

/** Issue #35: refuses (`protected`) before anything is written or sent when the table's sheet or the workbook's structure is protected. */
async function refuseIfProtected(workbook: WritebackWorkbook, tableName: string): Promise<void> {
  const refusal = workbook.checkWritable ? await workbook.checkWritable(tableName) : null;
  if (refusal) throw new WritebackError("protected", refusal);
}

/** The record kind of a binding, or null when the table is not a projects/proposals snapshot. */
export function writebackKind(binding: Pick<WritebackBinding, "source">): RecordKind | null {
  return binding.source.kind === "snapshot" ? recordKindOfSnapshot(binding.source.endpoint) : null;
}

/**
 * Reads the table as it is now and stores it as the binding's import record (with `held`, the
 * edits kept and marked after a send, when given).
 */
export async function captureBaseline(workbook: WritebackWorkbook, binding: WritebackBinding, now = new Date(), held: HeldCell[] = []): Promise<Baseline> {
  const sheet = dataColumnsOnly(await workbook.readTable(binding.tableName), binding);
  const b = buildBaseline(sheet, { bindingId: binding.id, tableName: binding.tableName, etag: binding.validators.etag ?? null, tokenColumn: TOKEN_COLUMN, now });
  const stored = held.length ? { ...b, held } : b;
  await workbook.saveBaseline(stored);
  return stored;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Reads the stored record without throwing (null when there is none or it is unreadable). */
async function storedBaseline(workbook: WritebackWorkbook, bindingId: string): Promise<Baseline | null> {
  try {
    return await workbook.readBaseline(bindingId);
  } catch {
    return null;
  }
}

/**
 * Marks held cells: reads each cell's own fill (keeping the recorded one when the cell still wears
 * the mark), then writes `contents` (when given) and the mark. Returns the held cells with the fill
 * to restore; a cell whose own fill cannot be restored exactly is left unmarked. Cells no longer in
 * the table are dropped (their row is gone).
 */
export async function markHeld(workbook: WritebackWorkbook, tableName: string, held: readonly HeldCell[], contents?: ReadonlyMap<string, CellContent>): Promise<HeldCell[]> {
  if (held.length === 0) return [];
  const states = new Map((await workbook.readCells(tableName, held)).map((st) => [heldKey(st.projectToken, st.field), st]));
  const out: HeldCell[] = [];
  const writes: { key: CellKey; content?: CellContent; fill?: CellFill }[] = [];
  for (const h of held) {
    const st = states.get(heldKey(h.projectToken, h.field));
    if (!st) continue;
    const own = isMarkFill(st.fill) ? h.fill : st.fill;
    const content = contents?.get(heldKey(h.projectToken, h.field));
    out.push({ ...h, fill: own });
    if (content || own !== null) writes.push({ key: h, ...(content ? { content } : {}), ...(own !== null ? { fill: { pattern: "Solid" as const, color: MARK_FILL } } : {}) });
  }
  if (writes.length) await workbook.writeCells(tableName, writes);
  return out;
}

/** Lifts the marks of held cells: the recorded own fill goes back where the cell still wears the mark. */
export async function unmarkHeld(workbook: WritebackWorkbook, tableName: string, held: readonly HeldCell[]): Promise<void> {
  const marked = held.filter((h) => h.fill !== null);
  if (marked.length === 0) return;
  const wearing = new Set((await workbook.readCells(tableName, marked)).filter((st) => isMarkFill(st.fill)).map((st) => heldKey(st.projectToken, st.field)));
  const writes = marked.filter((h) => wearing.has(heldKey(h.projectToken, h.field))).map((h) => ({ key: h, fill: h.fill! }));
  if (writes.length) await workbook.writeCells(tableName, writes);
}

/** Step 1: compute the preview. Sends nothing; lifts the marks of held cells the user has reverted. */
export async function prepareWriteback(deps: WritebackDeps, binding: WritebackBinding, options: { signal?: AbortSignal } = {}): Promise<WritebackPreview> {
  const kind = writebackKind(binding);
  if (!kind || binding.source.kind !== "snapshot") {
    throw new WritebackError("not_writable", `Table ${binding.tableName} is not an imported projects or proposals snapshot; only those can be written back.`);
  }
  const endpoint = binding.source.endpoint as SnapshotEndpoint;
  const warnings: string[] = [];
  await refuseIfProtected(deps.workbook, binding.tableName);

  let stored: Baseline | null = null;
  let baseline: Baseline | null = null;
  try {
    stored = await deps.workbook.readBaseline(binding.id);
    baseline = stored;
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

  // Numeric columns are read with their formats and display texts: see `numericCellText`.
  const numericColumns = (fields ?? []).filter((f) => f.numeric === true).map((f) => f.name);
  let sheet: SheetTable;
  try {
    sheet = dataColumnsOnly(await deps.workbook.readTable(binding.tableName, numericColumns.length ? { shownColumns: numericColumns } : undefined), binding);
  } catch (e) {
    throw new WritebackError("table_unreadable", `Table ${binding.tableName} could not be read: ${message(e)}`);
  }

  let held = stored?.held ?? [];
  const diff = diffWriteback({ sheet, fields, baseline, service: indexServiceRows(serviceTable.columns, serviceTable.rows), held });
  if (diff.mode === "service" && diff.changes.length > 0) {
    warnings.push("Without an import record, a value someone else changed since your import cannot be told from your edit: check the old values before confirming.");
  }
  // Held cells that no longer differ were reverted by the user: lift their marks, stop listing them.
  const still = new Set(diff.changes.map((c) => heldKey(c.projectToken, c.field)));
  const reverted = held.filter((h) => !still.has(heldKey(h.projectToken, h.field)));
  if (stored && reverted.length) {
    try {
      await unmarkHeld(deps.workbook, binding.tableName, reverted);
      held = held.filter((h) => still.has(heldKey(h.projectToken, h.field)));
      await deps.workbook.saveBaseline(withHeld(stored, held));
    } catch (e) {
      warnings.push(`The marks of cells you reverted could not be removed (${message(e)}).`);
    }
  }
  await keepAsTyped(deps.workbook, binding.tableName, diff.changes);
  const recordsToUpdate = new Set(diff.changes.filter((c) => c.validation.status === "valid").map((c) => c.projectToken)).size;
  return { binding, kind, mode: diff.mode, changes: diff.changes, notes: diff.notes, warnings, recordsToUpdate, fields, held };
}

/**
 * A number cell refused for how Excel read the typing (`1,234.5` → 1234.5 in `#,##0.00`): once
 * Excel has switched the cell's format, typing `1234.5` over it leaves it exactly as it is, so a
 * correct retype could never be told from the refused input. The cell is given the text Excel shows
 * (`1,234.50`), as text (`@`): it looks the same, and what is typed next stays exactly as typed and
 * is judged as such (issue #25). Its change says so; if the cell cannot be written, it says what to do.
 */
async function keepAsTyped(workbook: WritebackWorkbook, tableName: string, changes: Change[]): Promise<void> {
  const refused = changes.filter((c): c is Change & { asShown: string; validation: { status: "invalid"; message: string } } => c.asShown !== undefined && c.validation.status === "invalid");
  if (refused.length === 0) return;
  let done = true;
  try {
    await workbook.writeCells(tableName, refused.map((c) => ({ key: { projectToken: c.projectToken, field: c.field }, content: { formula: c.asShown, numberFormat: "@" } })));
  } catch {
    done = false;
  }
  for (const c of refused) {
    c.validation = {
      status: "invalid",
      message: done
        ? `${c.validation.message} The cell now holds the text ${JSON.stringify(c.asShown)}, so what you type next is read exactly as typed.`
        : `${c.validation.message} First set the cell's number format to General: in a formatted cell Excel reads 1234.5 the same way.`,
    };
  }
}

function withHeld(b: Baseline, held: HeldCell[]): Baseline {
  const rest: Baseline = { ...b };
  delete rest.held;
  return held.length ? { ...rest, held } : rest;
}

/** Outcome of {@link prepareForEditing}. */
export type PrepareResult =
  /** Ready: the import record is current (taken now when there was none or it was stale). */
  | { ready: true; baseline: Baseline; recorded: boolean; warnings: string[] }
  /** The sheet already differs from what was imported: those changes are shown first, nothing was recorded. */
  | { ready: false; preview: WritebackPreview };

/**
 * Makes sure the table has a current import record, for tables imported before the import recorded
 * one, or refreshed by a path that did not. It changes no cell and no number format: numeric custom
 * fields stay numbers (sums keep working), and a typed `1,234.5` is still caught (see
 * `numericCellText`). Only when nothing differs yet: pending edits would otherwise be absorbed into
 * the new record.
 */
export async function prepareForEditing(deps: WritebackDeps, binding: WritebackBinding, options: { signal?: AbortSignal } = {}): Promise<PrepareResult> {
  const preview = await prepareWriteback(deps, binding, options);
  if (preview.changes.some((c) => c.validation.status !== "ignored")) return { ready: false, preview };
  const warnings = preview.warnings.filter((w) => !w.startsWith("The table was refreshed after") && !w.startsWith("The import record could not be read"));
  const current = preview.mode === "baseline" ? await storedBaseline(deps.workbook, binding.id) : null;
  if (current) return { ready: true, baseline: current, recorded: false, warnings };
  const baseline = await captureBaseline(deps.workbook, binding, deps.now?.() ?? new Date(), preview.held);
  return { ready: true, baseline, recorded: true, warnings };
}

export interface WritebackOutcome {
  outcomes: ChangeOutcome[];
  summary: ReturnType<typeof summarize>;
  refresh: WritebackRefresh | null;
  /** Edits not saved, kept in the sheet as typed, marked and listed. */
  held: HeldCell[];
  /** Set when the new import record could not be stored (write-back still worked). */
  baselineWarning?: string;
  /** Set when unsaved edits could not all be put back or marked. */
  heldWarning?: string;
}

/**
 * Step 2: send, then refresh. The refresh runs whenever at least one record was saved (so the sheet
 * shows what the service now holds, normalised); after an `updated` refresh the import record is
 * taken again from the rewritten table.
 *
 * Edits that were not saved are never lost to that refresh: their cells' content (formula or value
 * and number format) is read before it, put back after it, and marked; the new import record holds
 * the service's values, so those cells still show as edits next time (see `held.ts`).
 */
export async function confirmWriteback(
  deps: WritebackDeps,
  preview: WritebackPreview,
  options: { signal?: AbortSignal; onProgress?: (text: string) => void } = {},
): Promise<WritebackOutcome> {
  // Protection may have come since the preview: nothing is sent to a table that cannot be written after.
  await refuseIfProtected(deps.workbook, preview.binding.tableName);
  const outcomes = await sendWriteback(deps.client, preview.kind, preview.changes, {
    signal: options.signal,
    onRecord: (done, total) => options.onProgress?.(`Sent ${done} of ${total} record${total === 1 ? "" : "s"}…`),
  });
  const summary = summarize(outcomes);
  const tableName = preview.binding.tableName;
  const stored = await storedBaseline(deps.workbook, preview.binding.id);
  const previous = stored?.held ?? preview.held;
  const hold = heldAfterSend(outcomes, previous);
  const holdKeys = new Set(hold.map((h) => heldKey(h.projectToken, h.field)));
  let heldWarning: string | undefined;

  if (summary.saved === 0) {
    // Nothing was saved, so nothing is refreshed: the edits are still in their cells; mark them.
    let held: HeldCell[] = [];
    try {
      await unmarkHeld(deps.workbook, tableName, previous.filter((h) => !holdKeys.has(heldKey(h.projectToken, h.field))));
      if (stored) {
        held = await markHeld(deps.workbook, tableName, hold);
        await deps.workbook.saveBaseline(withHeld(stored, held));
      } else {
        held = hold.map((h) => ({ ...h, fill: null }));
        heldWarning = "The table has no import record, so the unsent cells are listed but not marked in the sheet.";
      }
    } catch (e) {
      heldWarning = `The unsent cells could not all be marked (${message(e)}); they still hold what you typed.`;
    }
    return { outcomes, summary, refresh: null, held, ...(heldWarning ? { heldWarning } : {}) };
  }

  // What the unsaved cells hold now, to put back after the refresh; marks come off first, so the
  // refresh never moves a mark onto another record's cell. If they cannot be read, the table is not
  // refreshed at all: a refresh would overwrite them.
  let contents = new Map<string, CellContent>();
  let readProblem: string | null = null;
  try {
    contents = new Map((await deps.workbook.readCells(tableName, hold)).map((st) => [heldKey(st.projectToken, st.field), st.content]));
    await unmarkHeld(deps.workbook, tableName, previous);
  } catch (e) {
    readProblem = message(e);
  }
  const unmarked = hold.map((h) => ({ ...h, fill: null }));

  let refresh: WritebackRefresh;
  const added = preview.notes.filter((n) => n.added).length;
  if (added > 0) {
    // A refresh rewrites the table with the service's rows: rows added by hand would be lost.
    refresh = {
      outcome: "failed",
      message: `not refreshed, because ${added === 1 ? "a row was" : `${added} rows were`} added by hand and a refresh would remove ${added === 1 ? "it" : "them"}; move ${added === 1 ? "it" : "them"} out of the table (or create the records with the form), then refresh`,
    };
  } else if (readProblem !== null && hold.length > 0) {
    refresh = { outcome: "failed", message: `not refreshed, because the unsent cells could not be read first (${readProblem}) and a refresh would overwrite them; refresh the table once you have dealt with them` };
  } else {
    options.onProgress?.("Refreshing the table from the service…");
    try {
      refresh = await deps.refresh(preview.binding, { signal: options.signal });
    } catch (e) {
      refresh = { outcome: "failed", message: message(e) };
    }
  }
  let baselineWarning: string | undefined;
  let held: HeldCell[] = unmarked;
  try {
    if (refresh.outcome === "updated") {
      const fresh = refresh.binding ?? preview.binding;
      // The record is taken from the service's values; the unsaved edits then go back on top of it.
      let baseline: Baseline | null = null;
      try {
        baseline = await captureBaseline(deps.workbook, fresh, deps.now?.() ?? new Date());
      } catch (e) {
        baselineWarning = `The new import record could not be stored (${message(e)}); the next write-back compares with the service's values.`;
      }
      held = await markHeld(deps.workbook, fresh.tableName, unmarked, contents);
      if (baseline) await deps.workbook.saveBaseline(withHeld(baseline, held));
    } else {
      // The table was not rewritten: the edits are still in their cells.
      held = await markHeld(deps.workbook, tableName, unmarked);
      if (stored) await deps.workbook.saveBaseline(withHeld(stored, held));
    }
  } catch (e) {
    // Say what they held, so nothing typed is lost without a trace.
    const typed = hold
      .map((h) => `${h.projectToken} · ${h.field}: ${JSON.stringify(contents.get(heldKey(h.projectToken, h.field))?.formula ?? "")}`)
      .join("; ");
    heldWarning = `The unsent cells could not all be put back or marked (${message(e)}). What they held: ${typed}.`;
  }
  return { outcomes, summary, refresh, held, ...(baselineWarning ? { baselineWarning } : {}), ...(heldWarning ? { heldWarning } : {}) };
}

/**
 * Discards held edits (all, or those given): each cell gets the service's value back in the
 * column's usual number format, its own fill back, and is no longer listed. Returns what is still held.
 */
export async function discardHeld(deps: Pick<WritebackDeps, "workbook">, binding: WritebackBinding, fields: readonly CustomFieldMeta[] | null, which?: readonly CellKey[]): Promise<HeldCell[]> {
  const stored = await deps.workbook.readBaseline(binding.id);
  const held = stored?.held ?? [];
  const pick = which ? new Set(which.map((k) => heldKey(k.projectToken, k.field))) : null;
  const drop = held.filter((h) => !pick || pick.has(heldKey(h.projectToken, h.field)));
  if (!stored || drop.length === 0) return held;
  const numeric = new Map((fields ?? []).map((f) => [f.name, f.numeric]));
  const states = new Map((await deps.workbook.readCells(binding.tableName, drop)).map((st) => [heldKey(st.projectToken, st.field), st]));
  const writes = drop
    .filter((h) => states.has(heldKey(h.projectToken, h.field)))
    .map((h) => {
      const st = states.get(heldKey(h.projectToken, h.field))!;
      const text = h.service ?? "";
      // A decimal as the service writes one (not " ", which Number() reads as 0, nor "0x10").
      const asNumber = numeric.get(h.field) === true && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) && Number.isFinite(Number(text));
      return {
        key: h,
        // The service's text stays text whatever the column's format (security review, 2026-11-30).
        content: asNumber ? { formula: Number(text), numberFormat: null } : { formula: text, numberFormat: null, text: true as const },
        ...(h.fill !== null && isMarkFill(st.fill) ? { fill: h.fill } : {}),
      };
    });
  if (writes.length) await deps.workbook.writeCells(binding.tableName, writes);
  const left = held.filter((h) => !drop.includes(h));
  await deps.workbook.saveBaseline(withHeld(stored, left));
  return left;
}
