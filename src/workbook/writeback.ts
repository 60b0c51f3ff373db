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
import type { Binding } from "../refresh/binding";

/** Converts Excel's `values` + `valueTypes` into sheet values (errors kept as errors, empties as null). */
export function toSheetValues(values: unknown[][], valueTypes: string[][] | undefined): SheetValue[][] {
  return values.map((row, r) =>
    row.map((v, c) => {
      const t = valueTypes?.[r]?.[c];
      if (t === "Error") return { error: String(v) };
      if (t === "Empty" || v === null || v === undefined || v === "") return null;
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
      // Not a value type the range API returns today (entity values would be objects): keep it readable.
      return typeof v === "bigint" ? String(v) : (JSON.stringify(v) ?? "");
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
    rows: toSheetValues(body.values, body.valueTypes),
    firstSheetRow: body.rowIndex + 1,
  };
}

/** Reads the import record of a binding; null when there is none. @throws BaselineError when unreadable. */
export async function readBaseline(context: Excel.RequestContext, bindingId: string): Promise<Baseline | null> {
  const item = context.workbook.settings.getItemOrNullObject(baselineSettingKey(bindingId));
  item.load("value");
  await context.sync();
  if (item.isNullObject) return null;
  return parseBaseline(item.value);
}

/** Stores an import record (one `sync`). */
export async function saveBaseline(context: Excel.RequestContext, baseline: Baseline): Promise<void> {
  context.workbook.settings.add(baselineSettingKey(baseline.bindingId), serializeBaseline(baseline));
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
    const values = (body.values as unknown[][]).map((row, r) => row.map((v, c): unknown => {
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
  await context.sync();
  let removed = 0;
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
  const candidates = await writableBindings(context);
  const selection = context.workbook.getSelectedRange();
  selection.load("rowIndex, worksheet/name");
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
    const token: unknown = body.values[inter.rowIndex - body.rowIndex]?.[ti];
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
