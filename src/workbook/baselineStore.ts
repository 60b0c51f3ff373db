/**
 * Where write-back import records (baselines, `src/records/baseline.ts`) are kept in the workbook.
 *
 * Every read and write of a baseline goes through the one {@link baselineStore} below, so the storage
 * can move by replacing this object alone. Today: one very hidden worksheet per binding (issue 10;
 * per binding since issue #26), with the
 * records of earlier versions (one document setting per binding, `ppm.records.baseline.<bindingId>`)
 * still read.
 */
import { BASELINE_SETTING_PREFIX, baselineSettingKey, parseBaseline, serializeBaseline, type Baseline } from "../records/baseline";
import { WriteError } from "./blocks";
import { queueDeleteHiddenSheet, slotSheetName } from "./slots";

/**
 * Where import records (baselines) live: a very hidden worksheet, not document settings. A record
 * grows with its table (up to BASELINE_MAX_CELLS hashes, ~400 KB), and settings fail near 1 MB
 * (office-js #621, #3957); a worksheet holds any number of them on every platform (custom XML parts
 * would too, but need the Common API's async callbacks). Earlier versions: one row per binding: A = binding id,
 * B = number of chunks (0 while a save is under way), C… = the record's JSON in chunks, all as text.
 */
export const BASELINE_SHEET = "ppm_baselines";
/** Prefix of each binding's own record sheet (issue #26); `BASELINE_SHEET` is the shared sheet of earlier versions, still read. */
export const BASELINE_SHEET_PREFIX = "ppm_bl_";
/** Characters per chunk cell: under a cell's 32,767-character limit. */
export const BASELINE_CHUNK_CHARS = 30_000;
/** Chunk cells per request (30 × 30,000 characters: about 1 MB, far under the 5 MB request and response limits). */
const CHUNKS_PER_SYNC = 30;
/** Largest record stored (characters of JSON); larger ones are refused before anything is written. */
export const BASELINE_BUDGET_CHARS = 6_000_000;

/** The row of a binding's record on the shared baselines sheet of earlier versions (0-based), or null. */
async function baselineRow(context: Excel.RequestContext, sheet: Excel.Worksheet, bindingId: string): Promise<{ row: number | null }> {
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load(["rowIndex", "rowCount"]);
  await context.sync();
  if (used.isNullObject) return { row: null };
  const ids = sheet.getRangeByIndexes(0, 0, used.rowIndex + used.rowCount, 1);
  ids.load("values");
  await context.sync();
  const values = ids.values.map((r) => String(r[0] ?? ""));
  const row = values.indexOf(bindingId);
  return { row: row >= 0 ? row : null };
}


/** Queues deleting the settings-held records (earlier versions') of bindings not in `liveBindingIds`; returns how many. */
function deleteStaleSettings(settings: Excel.SettingCollection, liveBindingIds: readonly string[]): number {
  let removed = 0;
  for (const s of settings.items) {
    if (s.key.startsWith(BASELINE_SETTING_PREFIX) && !liveBindingIds.includes(s.key.slice(BASELINE_SETTING_PREFIX.length))) {
      s.delete();
      removed++;
    }
  }
  return removed;
}

export interface BaselineStore {
  /** The record of a binding; null when none. @throws BaselineError when stored but unreadable. */
  read(context: Excel.RequestContext, bindingId: string): Promise<Baseline | null>;
  /** Stores (replaces) the record of `baseline.bindingId`. */
  save(context: Excel.RequestContext, baseline: Baseline): Promise<void>;
  /** Deletes the records whose binding is not in `liveBindingIds`; returns how many. */
  prune(context: Excel.RequestContext, liveBindingIds: readonly string[]): Promise<number>;
}

/** Baselines in document settings (one `sync` per call). */
export const settingsBaselineStore: BaselineStore = {
  async read(context, bindingId) {
    const item = context.workbook.settings.getItemOrNullObject(baselineSettingKey(bindingId));
    item.load("value");
    await context.sync();
    if (item.isNullObject) return null;
    return parseBaseline(item.value);
  },
  async save(context, baseline) {
    context.workbook.settings.add(baselineSettingKey(baseline.bindingId), serializeBaseline(baseline));
    await context.sync();
  },
  async prune(context, liveBindingIds) {
    const settings = context.workbook.settings;
    settings.load("items/key");
    await context.sync();
    const removed = deleteStaleSettings(settings, liveBindingIds);
    if (removed) await context.sync();
    return removed;
  },
};

/** The sheet of one binding's record: `ppm_bl_` + 8 hex digits of its id's hash (issue #26, hazard 8). */
export function baselineSheetName(bindingId: string): string {
  return slotSheetName(BASELINE_SHEET_PREFIX, bindingId);
}

/** Reads a record's chunks from `row` of `sheet` (B = count, C… = chunks); null for a save that never finished. */
async function readChunks(context: Excel.RequestContext, sheet: Excel.Worksheet, row: number): Promise<Baseline | null> {
  const countCell = sheet.getRangeByIndexes(row, 1, 1, 1);
  countCell.load("values");
  await context.sync();
  const n = Number(countCell.values[0][0]);
  if (!Number.isInteger(n) || n <= 0) return null; // a save that never finished: no usable record
  let text = "";
  for (let from = 0; from < n; from += CHUNKS_PER_SYNC) {
    const part = sheet.getRangeByIndexes(row, 2 + from, 1, Math.min(CHUNKS_PER_SYNC, n - from));
    part.load("values");
    // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one ~1 MB request per 30 chunks keeps every response far under the 5 MB limit
    await context.sync();
    text += part.values[0].map((v) => String(v)).join("");
  }
  return parseBaseline(text);
}

/**
 * Baselines on very hidden worksheets (issue 10, B12): document settings fail near 1 MB (office-js
 * #621, #3957) and a record grows with its table. One sheet per binding (issue #26, hazard 8: two
 * co-authors saving records at once never claim the same "first free" row of a shared sheet), row 1:
 * A = binding id (checked when read: a hash collision shows no record rather than another's),
 * B = number of chunks (0 while a save is under way), C… = the JSON in chunks, all as text. Records of
 * earlier versions are still read: one row per binding on the shared `ppm_baselines` sheet, or one
 * document setting per binding; each is removed when the record is next saved or pruned.
 */
export const sheetBaselineStore: BaselineStore = {
  async read(context, bindingId) {
    const own = context.workbook.worksheets.getItemOrNullObject(baselineSheetName(bindingId));
    const shared = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
    const legacy = context.workbook.settings.getItemOrNullObject(baselineSettingKey(bindingId));
    legacy.load("value");
    own.load("visibility");
    await context.sync();
    if (!own.isNullObject && own.visibility === "VeryHidden") {
      const head = own.getRange("A1");
      head.load("values");
      await context.sync();
      if (head.values[0][0] === bindingId) return readChunks(context, own, 0);
    }
    if (!shared.isNullObject) {
      // The shared sheet of earlier versions.
      const { row } = await baselineRow(context, shared, bindingId);
      if (row !== null) return readChunks(context, shared, row);
    }
    // Workbooks saved before the records moved to a sheet kept them in settings.
    if (legacy.isNullObject) return null;
    return parseBaseline(legacy.value);
  },
  async save(context, baseline) {
    const json = serializeBaseline(baseline);
    if (json.length > BASELINE_BUDGET_CHARS) {
      throw new WriteError(
        "settings_full",
        `The write-back record of table ${baseline.tableName} would hold ${json.length.toLocaleString("en-US")} characters, over the ${BASELINE_BUDGET_CHARS.toLocaleString("en-US")} the add-in stores per table. Nothing was written; filter the table to fewer rows or columns to write back from it.`,
      );
    }
    const name = baselineSheetName(baseline.bindingId);
    const existing = context.workbook.worksheets.getItemOrNullObject(name);
    existing.load("visibility");
    const shared = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
    const legacy = context.workbook.settings.getItemOrNullObject(baselineSettingKey(baseline.bindingId));
    legacy.load("key");
    await context.sync();
    let sheet: Excel.Worksheet;
    if (existing.isNullObject) {
      sheet = context.workbook.worksheets.add(name);
      sheet.visibility = "VeryHidden";
    } else {
      if (existing.visibility !== "VeryHidden") {
        throw new WriteError("write_failed", `This workbook has a visible sheet named "${name}", which the add-in keeps very hidden for the write-back record of table ${baseline.tableName}. Rename that sheet, then try again.`);
      }
      const head = existing.getRange("A1");
      head.load("values");
      await context.sync();
      const id: unknown = head.values[0][0];
      if (id !== "" && id !== baseline.bindingId) {
        throw new WriteError("write_failed", `The write-back record of table ${baseline.tableName} cannot be kept: its sheet "${name}" holds another table's record (binding ${String(id)}).`);
      }
      sheet = existing;
    }
    const chunks: string[] = [];
    for (let i = 0; i < json.length; i += BASELINE_CHUNK_CHARS) chunks.push(json.slice(i, i + BASELINE_CHUNK_CHARS));
    // Text format first (a chunk may start with "=" or digits); count 0 marks the record incomplete.
    const whole = sheet.getRangeByIndexes(0, 0, 1, 2 + Math.max(1, chunks.length));
    sheet.getRangeByIndexes(0, 0, 1, 16_384).clear("All");
    (whole as unknown as { numberFormat: string }).numberFormat = "@";
    sheet.getRangeByIndexes(0, 0, 1, 2).values = [[baseline.bindingId, "0"]];
    await context.sync();
    for (let from = 0; from < chunks.length; from += CHUNKS_PER_SYNC) {
      const part = chunks.slice(from, from + CHUNKS_PER_SYNC);
      sheet.getRangeByIndexes(0, 2 + from, 1, part.length).values = [part];
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one ~1 MB request per 30 chunks keeps every request far under the 5 MB limit
      await context.sync();
    }
    sheet.getRangeByIndexes(0, 1, 1, 1).values = [[String(chunks.length)]];
    if (!legacy.isNullObject) legacy.delete(); // the record from before it moved to a sheet
    await context.sync();
    if (!shared.isNullObject) {
      // The record's row on the shared sheet of earlier versions goes (only that binding's row).
      const { row } = await baselineRow(context, shared, baseline.bindingId);
      if (row !== null) {
        shared.getRangeByIndexes(row, 0, 1, 16_384).clear("All");
        await context.sync();
      }
    }
  },
  async prune(context, liveBindingIds) {
    const settings = context.workbook.settings;
    settings.load("items/key");
    const sheets = context.workbook.worksheets;
    sheets.load("items/name,items/visibility");
    const shared = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
    await context.sync();
    let removed = 0;
    const own = sheets.items.filter((s) => s.name.startsWith(BASELINE_SHEET_PREFIX) && s.visibility === "VeryHidden").map((s) => ({ sheet: s, head: s.getRange("A1") }));
    if (own.length > 0) {
      for (const o of own) o.head.load("values");
      await context.sync();
      for (const o of own) {
        const id = String(o.head.values[0][0] ?? "");
        if (!liveBindingIds.includes(id)) {
          queueDeleteHiddenSheet(o.sheet);
          removed++;
        }
      }
    }
    if (!shared.isNullObject) {
      const used = shared.getUsedRangeOrNullObject(true);
      used.load(["rowIndex", "rowCount"]);
      await context.sync();
      if (!used.isNullObject) {
        const ids = shared.getRangeByIndexes(0, 0, used.rowIndex + used.rowCount, 1);
        ids.load("values");
        await context.sync();
        ids.values.forEach((r, i) => {
          const id = String(r[0] ?? "");
          if (id !== "" && !liveBindingIds.includes(id)) {
            shared.getRangeByIndexes(i, 0, 1, 16_384).clear("All");
            removed++;
          }
        });
      }
    }
    removed += deleteStaleSettings(settings, liveBindingIds);
    if (removed) await context.sync();
    return removed;
  },
};

/** The store write-back uses. */
export const baselineStore: BaselineStore = sheetBaselineStore;
