/**
 * "Show changes" (issue #15): what a delta refresh changed, highlighted on request until the next
 * refresh or until the user clears it.
 *
 * Decisions (details and sources in `src/workbook/README.md`, "Show changes"):
 * - The highlight is CONDITIONAL FORMATTING (ExcelApi 1.6), never the cells' own fill: clearing it
 *   deletes exactly the two formats the add-in added, so every format the user set, own fills and own
 *   conditional formats included, is untouched by construction. Excel shows a conditional format's
 *   fill over the cell's own fill.
 * - Per bound table a very hidden sheet `ppm_chg_<8 hex of the binding id's hash>` holds, in column A,
 *   a compact record of the changed cells and added rows (`src/refresh/changeRecord.ts`: about two
 *   characters per changed cell, so a delta stays within 5 % of a full rewrite's bytes), written by
 *   every delta that changed or added rows. "Show changes" expands it once into a mask in columns B…
 *   (cell (i, j+1) ↔ body row i, data column j: 1 changed, 2 added) and adds two custom formats over
 *   the table's body whose rules read the mask: `='ppm_chg_…'!B1=1` (changed, yellow) and `…=2`
 *   (added, green), relative to the body's top-left cell.
 * - The next refresh that writes (before anything is written), and any failed refresh that marks
 *   the table stale, deletes the formats and then the sheet (in that order: a format naming a
 *   deleted sheet could no longer be found). A full rewrite writes no record: its changes are not
 *   known cell by cell.
 */
import type { Binding } from "../refresh/binding";
import {
  ADDED_FILL,
  CHANGED_FILL,
  MASK_ADDED,
  MASK_CHANGED,
  MAX_RECORD_CHARS,
  decodeChanges,
  encodeChanges,
  maskBands,
  parseRecordHeader,
  splitRecord,
  type ChangeRecordHeader,
  type ChangeSet,
} from "../refresh/changeRecord";
import { DEFAULT_TARGET_REQUEST_BYTES, jsonBytes, RANGE_WRITE_OVERHEAD_BYTES, writeInBatches, WriteError, type QueuedWrite } from "./blocks";
import { acquireTableLock } from "./lock";
import { slotSheetName } from "./slots";

export const CHANGE_SHEET_PREFIX = "ppm_chg_";
export { ADDED_FILL, CHANGED_FILL };

/** Whether a table's last changes can be shown, and whether they are. */
export interface ChangeHighlight {
  /** A record of the last delta's changed cells or added rows is kept: "Show changes" can act. */
  available: boolean;
  /** The add-in's highlight formats are on the table now. */
  shown: boolean;
}

/** The very hidden sheet of one binding's changes: FNV-1a (32 bit) of the id, 8 hex digits (16 characters, Excel allows 31). */
export function changeSheetName(bindingId: string): string {
  return slotSheetName(CHANGE_SHEET_PREFIX, bindingId);
}

/** The rule of one of the two formats, for the body's top-left cell (the mask starts in column B). */
export function highlightRule(sheetName: string, value: typeof MASK_CHANGED | typeof MASK_ADDED): string {
  return `='${sheetName}'!B1=${value}`;
}

/**
 * True for a rule that reads the change sheet: Excel may give the sheet name back without quotes
 * (they are needed only for names with spaces and the like), and the cell relative to the range the
 * format was reached through (office-js #5194), so only the sheet name is compared.
 */
export function isHighlightRule(formula: unknown, sheetName: string): boolean {
  if (typeof formula !== "string") return false;
  const f = formula.toLowerCase();
  const name = sheetName.toLowerCase();
  return f.includes(`'${name}'!`) || new RegExp(`(^|[^a-z0-9_.'])${name}!`).test(f);
}

/** Queues looking the change sheet up (`isNullObject`, `visibility` after the caller's next sync). */
export function queueChangeSheet(context: Excel.RequestContext, bindingId: string): Excel.Worksheet {
  const sheet = context.workbook.worksheets.getItemOrNullObject(changeSheetName(bindingId));
  sheet.load("visibility");
  return sheet;
}

/** A looked-up change sheet that is the add-in's own (a visible sheet of that name is someone else's). */
export function isOwnChangeSheet(sheet: Excel.Worksheet): boolean {
  return !sheet.isNullObject && sheet.visibility === "VeryHidden";
}

/** The add-in's highlight formats among those overlapping `range` (two syncs: types, then rules). */
async function highlightFormats(context: Excel.RequestContext, range: Excel.Range, sheetName: string): Promise<Excel.ConditionalFormat[]> {
  const formats = range.conditionalFormats;
  formats.load("items/type");
  await context.sync();
  const custom = formats.items.filter((f) => f.type === "Custom").map((f) => {
    const rule = f.custom.rule;
    rule.load("formula");
    return { f, rule };
  });
  if (custom.length === 0) return [];
  await context.sync();
  return custom.filter(({ rule }) => isHighlightRule(rule.formula, sheetName)).map(({ f }) => f);
}

/** Queues deleting the highlight formats on a table; returns how many there were. */
async function queueRemoveHighlight(context: Excel.RequestContext, lo: Excel.Table, sheetName: string): Promise<number> {
  const ours = await highlightFormats(context, lo.getRange(), sheetName);
  for (const f of ours) f.delete();
  return ours.length;
}

/**
 * Removes a table's highlight and deletes its change sheet (formats first). `sheet` must be the
 * add-in's own (see {@link isOwnChangeSheet}). A very hidden sheet cannot be deleted (docs:
 * Worksheet.delete), so it is made hidden in the same request first.
 */
export async function dropChanges(context: Excel.RequestContext, lo: Excel.Table, bindingId: string, sheet: Excel.Worksheet): Promise<void> {
  await queueRemoveHighlight(context, lo, changeSheetName(bindingId));
  sheet.visibility = "Hidden";
  sheet.delete();
  await context.sync();
}

/**
 * Keeps the record of a delta's changes on a new change sheet (the caller removed any old one and
 * knows no other sheet has the name). Returns false, writing nothing, when the record would be over
 * {@link MAX_RECORD_CHARS} (about a million changed cells: too many to be worth highlighting).
 */
export async function writeChangeRecord(context: Excel.RequestContext, bindingId: string, set: ChangeSet, targetRequestBytes = DEFAULT_TARGET_REQUEST_BYTES): Promise<boolean> {
  const body = encodeChanges(set);
  if (body.length > MAX_RECORD_CHARS) return false;
  const parts = splitRecord(body);
  const header: ChangeRecordHeader = { v: 1, id: bindingId, rows: set.rows, cols: set.columns, parts: parts.length, mask: false };
  const headerText = JSON.stringify(header);
  // The sheet and its header go with the first batch: a batch Excel refuses applied nothing and is
  // queued again whole (`writeInBatches`), sheet included. Each part costs its JSON and one range's framing.
  let sheet = null as unknown as Excel.Worksheet;
  const writes: QueuedWrite[] = [
    {
      bytes: jsonBytes(headerText) + 3 * RANGE_WRITE_OVERHEAD_BYTES,
      queue: () => {
        sheet = context.workbook.worksheets.add(changeSheetName(bindingId));
        sheet.visibility = "VeryHidden";
        sheet.getRangeByIndexes(0, 0, 1, 1).values = [[headerText]];
      },
    },
    ...parts.map((part, i) => ({ bytes: jsonBytes(part) + RANGE_WRITE_OVERHEAD_BYTES, queue: () => void (sheet.getRangeByIndexes(1 + i, 0, 1, 1).values = [[part]]) })),
  ];
  await writeInBatches(context, writes, { targetRequestBytes });
  return true;
}

/**
 * Which bound tables have changes to show and which show them now: one request for the sheets, then
 * for tables with a change sheet, their formats (two more).
 */
export async function readChangeState(context: Excel.RequestContext, bindings: readonly Pick<Binding, "id" | "tableName">[]): Promise<Map<string, ChangeHighlight>> {
  const out = new Map<string, ChangeHighlight>();
  const sheets = context.workbook.worksheets;
  sheets.load("items/name,items/visibility");
  await context.sync();
  const own = new Set(sheets.items.filter((s) => s.visibility === "VeryHidden" && s.name.startsWith(CHANGE_SHEET_PREFIX)).map((s) => s.name.toLowerCase()));
  const candidates = bindings.filter((b) => own.has(changeSheetName(b.id).toLowerCase())).map((b) => {
    const lo = context.workbook.tables.getItemOrNullObject(b.tableName);
    return { b, lo };
  });
  for (const b of bindings) out.set(b.id, { available: false, shown: false });
  if (candidates.length === 0) return out;
  await context.sync();
  const live = candidates.filter(({ lo }) => !lo.isNullObject).map(({ b, lo }) => {
    const formats = lo.getRange().conditionalFormats;
    formats.load("items/type");
    return { b, formats };
  });
  if (live.length === 0) return out;
  await context.sync();
  const rules = live.map(({ b, formats }) => ({
    b,
    rules: formats.items.filter((f) => f.type === "Custom").map((f) => {
      const rule = f.custom.rule;
      rule.load("formula");
      return rule;
    }),
  }));
  if (rules.some((r) => r.rules.length > 0)) await context.sync();
  for (const { b, rules: rs } of rules) out.set(b.id, { available: true, shown: rs.some((r) => isHighlightRule(r.formula, changeSheetName(b.id))) });
  return out;
}

export interface ChangeActionOptions {
  /** Who acts, named to a runtime that finds the table locked. */
  holder?: string;
  now?: () => Date;
  targetRequestBytes?: number;
}

const noChanges = (binding: Pick<Binding, "tableName">, why: string) =>
  new WriteError("no_changes", `The changes of the last refresh of "${binding.tableName}" cannot be shown: ${why}`);

/**
 * Highlights the changed cells (yellow) and added rows (green) of a table's last delta refresh. Takes
 * the table's lock (a refresh of the same table never interleaves). The first time after a refresh
 * it writes the mask from the record.
 * @throws WriteError `table_missing`, `table_busy`, `no_changes` (nothing recorded, or the table was
 * sorted, or rows were added or removed by hand since: the highlight would mark the wrong cells).
 */
export async function showChanges(context: Excel.RequestContext, binding: Binding, options: ChangeActionOptions = {}): Promise<ChangeHighlight> {
  const lock = await acquireTableLock(context, binding.tableName, { holder: options.holder ?? "the task pane", now: options.now });
  try {
    const name = changeSheetName(binding.id);
    const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
    lo.load("showTotals");
    const sheet = queueChangeSheet(context, binding.id);
    await context.sync();
    if (lo.isNullObject) throw new WriteError("table_missing", `The table "${binding.tableName}" is no longer in this workbook.`);
    if (!isOwnChangeSheet(sheet)) throw noChanges(binding, "no changed cells are recorded (the last refresh found nothing new, rewrote the table in full, only removed rows, or failed).");
    const whole = lo.getRange();
    whole.load("rowIndex,columnIndex,rowCount,columnCount");
    lo.sort.load("fields");
    const head = sheet.getRangeByIndexes(0, 0, 1, 1);
    head.load("values");
    await context.sync();
    let header: ChangeRecordHeader;
    try {
      header = parseRecordHeader(head.values[0][0]);
    } catch {
      throw noChanges(binding, "the record of the changes is not readable. The next refresh records them again.");
    }
    const bodyRows = whole.rowCount - 1 - (lo.showTotals ? 1 : 0);
    if (header.parts < 1 || header.cols < 1) throw noChanges(binding, "the record of the changes is not readable. The next refresh records them again.");
    if (header.id !== binding.id || header.cols > whole.columnCount) throw noChanges(binding, "the record belongs to another table.");
    if (lo.sort.fields.length > 0 || header.rows !== bodyRows) {
      throw noChanges(binding, "the table was sorted, or rows were added or removed, since the refresh, so the highlight would mark the wrong cells. The next refresh records the changes again.");
    }
    if (!header.mask) {
      const parts = sheet.getRangeByIndexes(1, 0, header.parts, 1);
      parts.load("values");
      await context.sync();
      let set: ChangeSet;
      try {
        set = decodeChanges(parts.values.map((r) => String(r[0])).join(""), header.rows, header.cols);
      } catch {
        throw noChanges(binding, "the record of the changes is not readable. The next refresh records them again.");
      }
      // Each band costs its values' JSON and the library's framing of one range write: at a whole
      // sheet a 1 % delta's mask is ~11,000 one-cell bands, and a guess of 150 bytes a band (real:
      // ~450) once sent a 5.65 MB request. `writeInBatches` measures and splits what Excel refuses.
      const writes: QueuedWrite[] = maskBands(set).map((band) => ({
        bytes: jsonBytes(band.values) + RANGE_WRITE_OVERHEAD_BYTES,
        queue: () => void (sheet.getRangeByIndexes(band.row, 1 + band.column, band.rowCount, band.columnCount).values = band.values),
      }));
      await writeInBatches(context, writes, { targetRequestBytes: options.targetRequestBytes });
      sheet.getRangeByIndexes(0, 0, 1, 1).values = [[JSON.stringify({ ...header, mask: true })]];
    }
    await queueRemoveHighlight(context, lo, name);
    const body = lo.worksheet.getRangeByIndexes(whole.rowIndex + 1, whole.columnIndex, bodyRows, header.cols);
    // Added last = top priority; the two never apply to the same cell (a mask cell is 1 or 2).
    for (const [value, fill] of [[MASK_CHANGED, CHANGED_FILL], [MASK_ADDED, ADDED_FILL]] as const) {
      const f = body.conditionalFormats.add("Custom");
      f.custom.rule.formula = highlightRule(name, value);
      f.custom.format.fill.color = fill;
    }
    await context.sync();
    return { available: true, shown: true };
  } finally {
    await lock.release();
  }
}

/** Removes the highlight (exactly the add-in's two formats); the record stays, so it can be shown again. */
export async function clearChanges(context: Excel.RequestContext, binding: Binding, options: ChangeActionOptions = {}): Promise<ChangeHighlight> {
  const lock = await acquireTableLock(context, binding.tableName, { holder: options.holder ?? "the task pane", now: options.now });
  try {
    const lo = context.workbook.tables.getItemOrNullObject(binding.tableName);
    const sheet = queueChangeSheet(context, binding.id);
    await context.sync();
    if (lo.isNullObject) throw new WriteError("table_missing", `The table "${binding.tableName}" is no longer in this workbook.`);
    if (await queueRemoveHighlight(context, lo, changeSheetName(binding.id))) await context.sync();
    return { available: isOwnChangeSheet(sheet), shown: false };
  } finally {
    await lock.release();
  }
}
