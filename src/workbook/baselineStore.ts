/**
 * Where write-back import records (baselines, `src/records/baseline.ts`) are kept in the workbook.
 *
 * Every read and write of a baseline goes through the one {@link baselineStore} below, so the storage
 * can move by replacing this object alone. Today: a very hidden worksheet (issue 10), with the
 * records of earlier versions (one document setting per binding, `ppm.records.baseline.<bindingId>`)
 * still read.
 */
import { BASELINE_SETTING_PREFIX, baselineSettingKey, parseBaseline, serializeBaseline, type Baseline } from "../records/baseline";
import { WriteError } from "./blocks";

/**
 * Where import records (baselines) live: a very hidden worksheet, not document settings. A record
 * grows with its table (up to BASELINE_MAX_CELLS hashes, ~400 KB), and settings fail near 1 MB
 * (office-js #621, #3957); a worksheet holds any number of them on every platform (custom XML parts
 * would too, but need the Common API's async callbacks). One row per binding: A = binding id,
 * B = number of chunks (0 while a save is under way), C… = the record's JSON in chunks, all as text.
 */
export const BASELINE_SHEET = "ppm_baselines";
/** Characters per chunk cell: under a cell's 32,767-character limit. */
export const BASELINE_CHUNK_CHARS = 30_000;
/** Chunk cells per request (30 × 30,000 characters: about 1 MB, far under the 5 MB request and response limits). */
const CHUNKS_PER_SYNC = 30;
/** Largest record stored (characters of JSON); larger ones are refused before anything is written. */
export const BASELINE_BUDGET_CHARS = 6_000_000;

/** The row of a binding's record on the baselines sheet (0-based), or null; plus the first free row. */
async function baselineRow(context: Excel.RequestContext, sheet: Excel.Worksheet, bindingId: string): Promise<{ row: number | null; free: number }> {
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load(["rowIndex", "rowCount"]);
  await context.sync();
  if (used.isNullObject) return { row: null, free: 0 };
  const ids = sheet.getRangeByIndexes(0, 0, used.rowIndex + used.rowCount, 1);
  ids.load("values");
  await context.sync();
  const values = ids.values.map((r) => String(r[0] ?? ""));
  const row = values.indexOf(bindingId);
  const empty = values.indexOf("");
  return { row: row >= 0 ? row : null, free: empty >= 0 ? empty : values.length };
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

/**
 * Baselines on a very hidden worksheet (issue 10, B12): document settings fail near 1 MB (office-js
 * #621, #3957) and a record grows with its table. Records saved in settings by earlier versions are
 * still read, and removed when the record is next saved or pruned.
 */
export const sheetBaselineStore: BaselineStore = {
  async read(context, bindingId) {
  const sheet = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
  const legacy = context.workbook.settings.getItemOrNullObject(baselineSettingKey(bindingId));
  legacy.load("value");
  await context.sync();
  if (!sheet.isNullObject) {
    const { row } = await baselineRow(context, sheet, bindingId);
    if (row !== null) {
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
  }
  // Workbooks saved before the records moved to the sheet kept them in settings.
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
  const existing = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
  const legacy = context.workbook.settings.getItemOrNullObject(baselineSettingKey(baseline.bindingId));
  legacy.load("key");
  await context.sync();
  let sheet: Excel.Worksheet;
  if (existing.isNullObject) {
    sheet = context.workbook.worksheets.add(BASELINE_SHEET);
    sheet.visibility = "VeryHidden";
  } else sheet = existing;
  const { row: found, free } = existing.isNullObject ? { row: null, free: 0 } : await baselineRow(context, sheet, baseline.bindingId);
  const row = found ?? free;
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += BASELINE_CHUNK_CHARS) chunks.push(json.slice(i, i + BASELINE_CHUNK_CHARS));
  // Text format first (a chunk may start with "=" or digits); count 0 marks the record incomplete.
  const whole = sheet.getRangeByIndexes(row, 0, 1, 2 + Math.max(1, chunks.length));
  sheet.getRangeByIndexes(row, 0, 1, 16_384).clear("All");
  (whole as unknown as { numberFormat: string }).numberFormat = "@";
  sheet.getRangeByIndexes(row, 0, 1, 2).values = [[baseline.bindingId, "0"]];
  await context.sync();
  for (let from = 0; from < chunks.length; from += CHUNKS_PER_SYNC) {
    const part = chunks.slice(from, from + CHUNKS_PER_SYNC);
    sheet.getRangeByIndexes(row, 2 + from, 1, part.length).values = [part];
    // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one ~1 MB request per 30 chunks keeps every request far under the 5 MB limit
    await context.sync();
  }
  sheet.getRangeByIndexes(row, 1, 1, 1).values = [[String(chunks.length)]];
  if (!legacy.isNullObject) legacy.delete(); // the record from before it moved to the sheet
  await context.sync();
},
  async prune(context, liveBindingIds) {
  const settings = context.workbook.settings;
  settings.load("items/key");
  const sheet = context.workbook.worksheets.getItemOrNullObject(BASELINE_SHEET);
  await context.sync();
  let removed = 0;
  if (!sheet.isNullObject) {
    const used = sheet.getUsedRangeOrNullObject(true);
    used.load(["rowIndex", "rowCount"]);
    await context.sync();
    if (!used.isNullObject) {
      const ids = sheet.getRangeByIndexes(0, 0, used.rowIndex + used.rowCount, 1);
      ids.load("values");
      await context.sync();
      ids.values.forEach((r, i) => {
        const id = String(r[0] ?? "");
        if (id !== "" && !liveBindingIds.includes(id)) {
          sheet.getRangeByIndexes(i, 0, 1, 16_384).clear("All");
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
