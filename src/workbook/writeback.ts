/**
 * The Excel side of Records (issue 7), kept to one thin file: read a bound table's current cells,
 * store and read its import record (baseline) in workbook settings, find the record under the
 * selection, and write a small record sheet. All decisions live in `src/records` (pure); this only
 * moves values between Excel and those functions.
 *
 * Every function takes an `Excel.RequestContext` (a test passes the workbook emulator's).
 */
import { BASELINE_SETTING_PREFIX, baselineSettingKey, parseBaseline, serializeBaseline, type Baseline, type SheetTable } from "../records/baseline";
import { captureBaseline, type WritebackBinding, type WritebackWorkbook } from "../records/session";
import { TOKEN_COLUMN } from "../records/fields";
import { cellToText, type SheetValue } from "../records/values";
import { readBindings } from "./bindingStore";
import { WriteError } from "./blocks";
import type { Binding } from "../refresh/binding";

/** Converts Excel's `values` + `valueTypes` into sheet values (errors kept as errors, empties as null). */
export function toSheetValues(values: unknown[][], valueTypes: string[][] | undefined): SheetValue[][] {
  return values.map((row, r) =>
    row.map((v, c) => {
      const t = valueTypes?.[r]?.[c];
      if (t === "Error") return { error: String(v) };
      if (t === "Empty" || v === null || v === undefined || v === "") return null;
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
      return String(v);
    }),
  );
}

/**
 * Reads an Excel table's header and body as they are now (two loads, one `sync`).
 * @throws Error naming the table when it no longer exists.
 */
export async function readTableCells(context: Excel.RequestContext, tableName: string): Promise<SheetTable> {
  const table = context.workbook.tables.getItemOrNullObject(tableName);
  await context.sync();
  if (table.isNullObject) throw new Error(`The table ${tableName} no longer exists in this workbook.`);
  const header = table.getHeaderRowRange();
  header.load("values");
  const body = table.getDataBodyRange();
  body.load("values,valueTypes,rowIndex");
  await context.sync();
  return {
    columns: (header.values[0] ?? []).map((v) => String(v)),
    rows: toSheetValues(body.values, body.valueTypes as unknown as string[][]),
    firstSheetRow: body.rowIndex + 1,
  };
}

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

/** Reads the import record of a binding; null when there is none. @throws BaselineError when unreadable. */
export async function readBaseline(context: Excel.RequestContext, bindingId: string): Promise<Baseline | null> {
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
        await context.sync();
        text += part.values[0].map((v) => String(v)).join("");
      }
      return parseBaseline(text);
    }
  }
  // Workbooks saved before the records moved to the sheet kept them in settings.
  if (legacy.isNullObject) return null;
  return parseBaseline(legacy.value);
}

/**
 * Stores an import record on the baselines sheet (created very hidden on first use), in requests of
 * about 1 MB. A record over BASELINE_BUDGET_CHARS is refused before anything is written.
 * @throws WriteError `settings_full` when the record is too large.
 */
export async function saveBaseline(context: Excel.RequestContext, baseline: Baseline): Promise<void> {
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
    await context.sync();
  }
  sheet.getRangeByIndexes(row, 1, 1, 1).values = [[String(chunks.length)]];
  if (!legacy.isNullObject) legacy.delete(); // the record from before it moved to the sheet
  await context.sync();
}

/**
 * Switches table columns to text: number format `@` on the data body, and every current value
 * rewritten as the plain string it stands for (1500.5 → "1500.5", never "1.5E+03"), so later typing
 * is kept as typed. Error cells are left as they are. Missing columns are skipped.
 */
export async function setColumnsAsText(context: Excel.RequestContext, tableName: string, columns: readonly string[]): Promise<void> {
  const table = context.workbook.tables.getItem(tableName);
  const cols = columns.map((name) => table.columns.getItemOrNullObject(name));
  await context.sync();
  const bodies = cols.filter((c) => !c.isNullObject).map((c) => {
    const body = c.getDataBodyRange();
    body.load("values,valueTypes");
    return body;
  });
  await context.sync();
  for (const body of bodies) {
    const types = body.valueTypes as unknown as string[][];
    const values = body.values.map((row, r) => row.map((v, c) => {
      if (types[r]?.[c] === "Error") return v;
      const t = cellToText(v as SheetValue);
      return t.ok ? t.text : v;
    }));
    body.numberFormat = values.map((row) => row.map(() => "@"));
    body.values = values as (string | number | boolean)[][];
  }
  await context.sync();
}

/** Deletes the import records whose binding no longer exists (after a binding was removed). */
export async function pruneBaselines(context: Excel.RequestContext, liveBindingIds: readonly string[]): Promise<number> {
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
  for (const s of settings.items) {
    if (s.key.startsWith(BASELINE_SETTING_PREFIX) && !liveBindingIds.includes(s.key.slice(BASELINE_SETTING_PREFIX.length))) {
      s.delete();
      removed++;
    }
  }
  if (removed) await context.sync();
  return removed;
}

/**
 * The {@link WritebackWorkbook} port over Excel. `run` is the shell's batch runner (`Excel.run`), so
 * each step gets a fresh context and nothing is held across user interaction.
 */
export function excelWritebackWorkbook(run: <T>(work: (context: Excel.RequestContext) => Promise<T>) => Promise<T>): WritebackWorkbook {
  return {
    readTable: (tableName) => run((ctx) => readTableCells(ctx, tableName)),
    readBaseline: (bindingId) => run((ctx) => readBaseline(ctx, bindingId)),
    saveBaseline: (b) => run((ctx) => saveBaseline(ctx, b)),
    setColumnsAsText: (tableName, columns) => run((ctx) => setColumnsAsText(ctx, tableName, columns)),
  };
}

/** Bound tables that can be written back: imported projects/proposals snapshots. */
export async function writableBindings(context: Excel.RequestContext): Promise<Binding[]> {
  const { bindings } = await readBindings(context);
  return bindings.filter((b) => b.source.kind === "snapshot" && (b.source.endpoint === "projects" || b.source.endpoint === "proposals"));
}

/** The stored binding with this id, or null. */
export async function findBinding(context: Excel.RequestContext, bindingId: string): Promise<Binding | null> {
  const { bindings } = await readBindings(context);
  return bindings.find((b) => b.id === bindingId) ?? null;
}

/**
 * Records the import baseline of a freshly imported or refreshed projects/proposals snapshot table.
 * For the importer and refresh paths to call right after writing (see `src/records/README.md`);
 * a no-op for other tables.
 */
export async function recordImportBaseline(context: Excel.RequestContext, binding: WritebackBinding): Promise<Baseline | null> {
  if (binding.source.kind !== "snapshot" || (binding.source.endpoint !== "projects" && binding.source.endpoint !== "proposals")) return null;
  const port: WritebackWorkbook = {
    readTable: (name) => readTableCells(context, name),
    readBaseline: (id) => readBaseline(context, id),
    saveBaseline: (b) => saveBaseline(context, b),
    setColumnsAsText: (name, cols) => setColumnsAsText(context, name, cols),
  };
  return captureBaseline(port, binding);
}

/** What the selection points at: the record token of the selected row of a writable bound table. */
export interface SelectedRecord {
  projectToken: string;
  kind: "project" | "proposal";
  tableName: string;
}

/**
 * The `project_token` of the row under the selection, when the selection is inside an imported
 * projects/proposals snapshot table; otherwise null (with the reason, for the UI to show).
 */
export async function selectedRecord(context: Excel.RequestContext): Promise<{ record: SelectedRecord | null; reason?: string }> {
  try {
    return await selectedRecordOf(context);
  } catch (e) {
    // Several selected areas (getSelectedRange refuses them): no one row to open.
    if (e && typeof e === "object" && (e as { code?: unknown }).code === "InvalidSelection") {
      return { record: null, reason: "Select a single row of an imported projects or proposals snapshot table (the selection has several areas)." };
    }
    throw e;
  }
}

async function selectedRecordOf(context: Excel.RequestContext): Promise<{ record: SelectedRecord | null; reason?: string }> {
  const candidates = await writableBindings(context);
  const selection = context.workbook.getSelectedRange();
  selection.load("rowIndex");
  selection.worksheet.load("name");
  const checks = candidates.map((b) => {
    const table = context.workbook.tables.getItemOrNullObject(b.tableName);
    table.worksheet.load("name");
    return { b, table };
  });
  await context.sync();
  // Ranges on different sheets cannot be intersected (Excel throws), so compare sheets first.
  const live = checks.filter((c) => !c.table.isNullObject && c.table.worksheet.name === selection.worksheet.name);
  const hits = live.map(({ b, table }) => {
    const body = table.getDataBodyRange();
    const inter = body.getIntersectionOrNullObject(selection);
    const header = table.getHeaderRowRange();
    header.load("values");
    body.load("rowIndex,values");
    inter.load("rowIndex");
    return { b, body, inter, header };
  });
  if (hits.length === 0) return { record: null, reason: "Select a row of an imported projects or proposals snapshot table first." };
  await context.sync();
  for (const { b, body, inter, header } of hits) {
    if (inter.isNullObject) continue;
    const ti = (header.values[0] ?? []).map(String).indexOf(TOKEN_COLUMN);
    if (ti < 0) return { record: null, reason: `Table ${b.tableName} has no ${TOKEN_COLUMN} column.` };
    const token = body.values[inter.rowIndex - body.rowIndex]?.[ti];
    if (typeof token !== "string" || token === "") return { record: null, reason: `The selected row of ${b.tableName} has no ${TOKEN_COLUMN}.` };
    const endpoint = b.source.kind === "snapshot" ? b.source.endpoint : "";
    return { record: { projectToken: token, kind: endpoint === "proposals" ? "proposal" : "project", tableName: b.tableName } };
  }
  return { record: null, reason: "Select a row of an imported projects or proposals snapshot table first." };
}

/**
 * Writes a small read-only record view to a new worksheet (all cells as text, so values such as
 * `00420` or `=x` stay exactly as the service sent them). Returns the sheet's name.
 */
export async function writeRecordSheet(context: Excel.RequestContext, baseName: string, rows: string[][]): Promise<string> {
  const sheets = context.workbook.worksheets;
  sheets.load("items/name");
  await context.sync();
  const taken = new Set(sheets.items.map((s) => s.name.toLowerCase()));
  const clean = baseName.replace(/[\\/?*[\]:]/g, "_").replace(/^'+|'+$/g, "").slice(0, 28) || "Record";
  let name = clean;
  for (let i = 2; taken.has(name.toLowerCase()); i++) name = `${clean.slice(0, 28 - String(i).length)} ${i}`.slice(0, 31);
  const sheet = sheets.add(name);
  const width = Math.max(1, ...rows.map((r) => r.length));
  const values = rows.map((r) => [...r, ...Array<string>(width - r.length).fill("")]);
  const range = sheet.getRangeByIndexes(0, 0, values.length, width);
  range.numberFormat = values.map((r) => r.map(() => "@"));
  range.values = values;
  sheet.activate();
  await context.sync();
  return name;
}
