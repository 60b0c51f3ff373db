/**
 * The Excel side of Records (issue 7), kept to one thin file: read a bound table's current cells,
 * store and read its import record (baseline, through `baselineStore.ts`), read and write the cells
 * of edits held after a send (content and fill), find the record under the selection, and write a
 * small record sheet. All decisions live in `src/records` (pure); this only
 * moves values between Excel and those functions.
 *
 * Every function takes an `Excel.RequestContext` (a test passes the workbook emulator's).
 */
import type { Baseline, SheetTable } from "../records/baseline";
import type { CellFill, HeldCell } from "../records/held";
import { captureBaseline, markHeld, unmarkHeld, type CellContent, type CellKey, type CellState, type WritebackBinding, type WritebackWorkbook } from "../records/session";
import { baselineStore } from "./baselineStore";
import { TOKEN_COLUMN } from "../records/fields";
import type { SheetValue } from "../records/values";
import { readBindings } from "./bindingStore";
import { loadPropertiesInBlocks } from "./blocks";
import { tableProtection } from "./protection";
import { rewritableCell, TEXT_FORMAT, textNeedsQuote } from "./cells";
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

/** Where a table's body is on its sheet (one `sync` after the table was found). */
async function bodyPlace(context: Excel.RequestContext, table: Excel.Table) {
  const header = table.getHeaderRowRange();
  header.load("values");
  const body = table.getDataBodyRange();
  body.load("rowIndex,columnIndex,rowCount,columnCount");
  const sheet = table.worksheet;
  await context.sync();
  return { header, body, sheet, columns: (header.values[0] ?? []).map((v) => String(v)) };
}

/**
 * Reads an Excel table's header and body as they are now, and for `shownColumns` also each cell's
 * number format and display text. The body goes in row blocks sized by the bytes each block measured
 * (issue #21, item 9: a 4,200 × 60 projects snapshot is 5.45 MB, over Excel on the web's 5 MB response
 * limit when read at once).
 * @throws Error naming the table when it no longer exists.
 */
export async function readTableCells(context: Excel.RequestContext, tableName: string, shownColumns: readonly string[] = [], targetResponseBytes?: number): Promise<SheetTable> {
  const table = context.workbook.tables.getItemOrNullObject(tableName);
  await context.sync();
  if (table.isNullObject) throw new Error(`The table ${tableName} no longer exists in this workbook.`);
  const { body, sheet: ws, columns } = await bodyPlace(context, table);
  const cells = await loadPropertiesInBlocks(context, (from, count) => ws.getRangeByIndexes(body.rowIndex + from, body.columnIndex, count, body.columnCount), body.rowCount, body.columnCount, ["values", "valueTypes"], { targetResponseBytes });
  const sheet: SheetTable = { columns, rows: toSheetValues(cells.values, cells.valueTypes as string[][]), firstSheetRow: body.rowIndex + 1 };
  const wanted = shownColumns.map((name) => ({ name, i: columns.indexOf(name) })).filter((c) => c.i >= 0);
  if (wanted.length && sheet.rows.length) {
    sheet.shown = {};
    for (const { name, i } of wanted) {
      const col = await loadPropertiesInBlocks(context, (from, count) => ws.getRangeByIndexes(body.rowIndex + from, body.columnIndex + i, count, 1), body.rowCount, 1, ["numberFormat", "text"], { targetResponseBytes });
      sheet.shown[name] = (col.text as string[][]).map((row, r) => ({ text: String(row[0] ?? ""), numberFormat: ((f: unknown) => (typeof f === "string" ? f : "General"))(col.numberFormat[r]?.[0]) }));
    }
  }
  return sheet;
}

/** Reads the import record of a binding; null when there is none. @throws BaselineError when unreadable. */
export function readBaseline(context: Excel.RequestContext, bindingId: string): Promise<Baseline | null> {
  return baselineStore.read(context, bindingId);
}

/** Stores an import record. */
export function saveBaseline(context: Excel.RequestContext, baseline: Baseline): Promise<void> {
  return baselineStore.save(context, baseline);
}

/** Deletes the import records whose binding no longer exists (after a binding was removed). */
export function pruneBaselines(context: Excel.RequestContext, liveBindingIds: readonly string[]): Promise<number> {
  return baselineStore.prune(context, liveBindingIds);
}

/** Finds cells of a table by record token and column name (three `sync`s). */
async function locateCells(context: Excel.RequestContext, tableName: string) {
  const table = context.workbook.tables.getItemOrNullObject(tableName);
  await context.sync();
  if (table.isNullObject) throw new Error(`The table ${tableName} no longer exists in this workbook.`);
  const { body, sheet: ws, columns } = await bodyPlace(context, table);
  const ti = columns.indexOf(TOKEN_COLUMN);
  const rowOf = new Map<string, number>();
  if (ti >= 0) {
    const tokens = await loadPropertiesInBlocks(context, (from, count) => ws.getRangeByIndexes(body.rowIndex + from, body.columnIndex + ti, count, 1), body.rowCount, 1, ["values"]);
    const dup = new Set<string>();
    tokens.values.forEach((row, r) => {
      const t: unknown = row[0];
      if (typeof t !== "string" || t === "") return;
      if (rowOf.has(t)) dup.add(t);
      rowOf.set(t, r);
    });
    // A token on several rows names no one cell.
    for (const d of dup) rowOf.delete(d);
  }
  return {
    body,
    /** A column's number formats, read in blocks by bytes. */
    columnFormats: async (ci: number) => (await loadPropertiesInBlocks(context, (from, count) => ws.getRangeByIndexes(body.rowIndex + from, body.columnIndex + ci, count, 1), body.rowCount, 1, ["numberFormat"])).numberFormat,
    at(key: CellKey): { row: number; column: number } | null {
      const row = rowOf.get(key.projectToken);
      const column = columns.indexOf(key.field);
      return row === undefined || column < 0 || column === ti ? null : { row, column };
    },
  };
}

/**
 * The fill a cell has, as far as it can be put back exactly; null otherwise. No Fill reads as
 * "#FFFFFF" like white (office-js #6218) and is told apart by `tintAndShade` being null (#4900).
 */
export function ownFill(color: unknown, pattern: unknown, tintAndShade: unknown): CellFill | null {
  if ((tintAndShade === null || tintAndShade === undefined) && (pattern === null || pattern === undefined || pattern === "None")) return { pattern: "None" };
  if (tintAndShade === 0 && (pattern === "Solid" || pattern === null || pattern === undefined) && typeof color === "string" && /^#[0-9A-Fa-f]{6}$/.test(color)) {
    return { pattern: "Solid", color: color.toUpperCase() };
  }
  return null;
}

/** Content (formula/constant and number format) and own fill of cells located by token and field. */
export async function readCellStates(context: Excel.RequestContext, tableName: string, keys: readonly CellKey[]): Promise<CellState[]> {
  if (keys.length === 0) return [];
  const where = await locateCells(context, tableName);
  const reads = keys.flatMap((key) => {
    const at = where.at(key);
    if (!at) return [];
    const cell = where.body.getCell(at.row, at.column);
    cell.load("formulas,values,numberFormat");
    cell.format.fill.load("color,pattern,tintAndShade");
    return [{ key, cell }];
  });
  if (reads.length === 0) return [];
  await context.sync();
  return reads.map(({ key, cell }) => {
    const fill = cell.format.fill;
    const numberFormat = String((cell.numberFormat as unknown as unknown[][])[0][0]);
    return {
      projectToken: key.projectToken,
      field: key.field,
      // Written back after this very format: text stays text (a quote-prefixed `'00123` keeps its prefix; issue #34).
      content: { formula: rewritableCell(cell.formulas[0][0], cell.values[0][0], numberFormat) as string | number | boolean, numberFormat },
      fill: ownFill(fill.color, fill.pattern, fill.tintAndShade),
    };
  });
}

/**
 * Writes content (number format first, so text stays text, then the formula or constant) and fills
 * to cells located by token and field. A null number format means the one most of the column's other
 * body cells have. Cells no longer in the table are skipped.
 */
export async function writeCellStates(
  context: Excel.RequestContext,
  tableName: string,
  cells: readonly { key: CellKey; content?: CellContent; fill?: CellFill }[],
): Promise<void> {
  if (cells.length === 0) return;
  const where = await locateCells(context, tableName);
  const placed = cells.flatMap((c) => {
    const at = where.at(c.key);
    return at ? [{ ...c, at }] : [];
  });
  const needFormat = [...new Set(placed.filter((c) => c.content && c.content.numberFormat === null).map((c) => c.at.column))];
  const columnFormats = new Map<number, unknown[][]>();
  for (const ci of needFormat) columnFormats.set(ci, await where.columnFormats(ci));
  const skipRows = new Map<number, Set<number>>();
  for (const c of placed) {
    if (!skipRows.has(c.at.column)) skipRows.set(c.at.column, new Set());
    skipRows.get(c.at.column)!.add(c.at.row);
  }
  const usual = (ci: number): string => {
    const formats = columnFormats.get(ci) ?? [];
    const counts = new Map<string, number>();
    formats.forEach((row, r) => {
      if (skipRows.get(ci)?.has(r)) return;
      const f = String(row[0]);
      counts.set(f, (counts.get(f) ?? 0) + 1);
    });
    let best = "General";
    let n = 0;
    for (const [f, k] of counts) if (k > n) [best, n] = [f, k];
    return best;
  };
  for (const c of placed) {
    const cell = where.body.getCell(c.at.row, c.at.column);
    if (c.content) {
      const format = c.content.numberFormat ?? usual(c.at.column);
      const f = c.content.formula;
      cell.numberFormat = [[format]];
      cell.formulas = [[c.content.text && typeof f === "string" && format !== TEXT_FORMAT && textNeedsQuote(f) ? `'${f}` : f]];
    }
    if (c.fill?.pattern === "None") cell.format.fill.clear();
    else if (c.fill) cell.format.fill.color = c.fill.color;
  }
  await context.sync();
}

/** The {@link WritebackWorkbook} port over one request context. */
function portOver(context: Excel.RequestContext): WritebackWorkbook {
  return {
    readTable: (name, options) => readTableCells(context, name, options?.shownColumns),
    readBaseline: (id) => readBaseline(context, id),
    saveBaseline: (b) => saveBaseline(context, b),
    readCells: (name, keys) => readCellStates(context, name, keys),
    writeCells: (name, cells) => writeCellStates(context, name, cells),
    checkWritable: async (name) => (await tableProtection(context, name, "write-back"))?.message ?? null,
  };
}

/**
 * The {@link WritebackWorkbook} port over Excel. `run` is the shell's batch runner (`Excel.run`), so
 * each step gets a fresh context and nothing is held across user interaction.
 */
export function excelWritebackWorkbook(run: <T>(work: (context: Excel.RequestContext) => Promise<T>) => Promise<T>): WritebackWorkbook {
  return {
    readTable: (tableName, options) => run((ctx) => portOver(ctx).readTable(tableName, options)),
    readBaseline: (bindingId) => run((ctx) => readBaseline(ctx, bindingId)),
    saveBaseline: (b) => run((ctx) => saveBaseline(ctx, b)),
    readCells: (tableName, keys) => run((ctx) => readCellStates(ctx, tableName, keys)),
    writeCells: (tableName, cells) => run((ctx) => writeCellStates(ctx, tableName, cells)),
    checkWritable: (tableName) => run(async (ctx) => (await tableProtection(ctx, tableName, "write-back"))?.message ?? null),
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
 * Records the import baseline of a freshly imported or refreshed projects/proposals snapshot table;
 * the engine calls it right after an import and after a refresh that rewrote the table (see
 * `src/records/README.md`). A no-op for other tables.
 */
export async function recordImportBaseline(context: Excel.RequestContext, binding: WritebackBinding): Promise<Baseline | null> {
  if (!isWritable(binding)) return null;
  return captureBaseline(portOver(context), binding);
}

function isWritable(binding: Pick<WritebackBinding, "source">): boolean {
  return binding.source.kind === "snapshot" && (binding.source.endpoint === "projects" || binding.source.endpoint === "proposals");
}

/**
 * Before a refresh that is not write-back's own (Refresh tab, ribbon): lifts the marks of the edits
 * held after a send, so no mark can end up on another record's cell. Returns the held cells (empty
 * when none), for {@link afterTableRefresh}. Never throws: a record it cannot read holds nothing.
 */
export async function beforeTableRefresh(context: Excel.RequestContext, bindingId: string): Promise<HeldCell[]> {
  try {
    const binding = await findBinding(context, bindingId);
    if (!binding || !isWritable(binding)) return [];
    const held = (await readBaseline(context, bindingId))?.held ?? [];
    if (held.length) await unmarkHeld(portOver(context), binding.tableName, held);
    return held;
  } catch {
    return [];
  }
}

/**
 * After such a refresh: an `updated` table gets a new import record (the refresh replaced held
 * edits with the service's values, which is what a refresh is for); otherwise the held edits are
 * still in their cells and are marked again. Returns a warning when the record could not be stored.
 */
export async function afterTableRefresh(context: Excel.RequestContext, binding: Binding, outcome: "updated" | "unchanged" | "failed", held: readonly HeldCell[]): Promise<string | null> {
  if (!isWritable(binding)) return null;
  try {
    if (outcome === "updated") {
      await recordImportBaseline(context, binding);
    } else if (held.length) {
      const port = portOver(context);
      const stored = await readBaseline(context, binding.id);
      const marked = await markHeld(port, binding.tableName, held.map((h) => ({ ...h, fill: null })));
      if (stored) await saveBaseline(context, { ...stored, held: marked });
    }
    return null;
  } catch (e) {
    return `The write-back import record of ${binding.tableName} could not be updated (${e instanceof Error ? e.message : String(e)}); write-back compares with the service's values until it is.`;
  }
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
    body.load("rowIndex");
    inter.load("rowIndex");
    return { b, body, inter, header };
  });
  if (hits.length === 0) return { record: null, reason: "Select a row of an imported projects or proposals snapshot table first." };
  await context.sync();
  const hit = hits.find((x) => !x.inter.isNullObject);
  if (hit) {
    const { b, body, inter, header } = hit;
    const ti = (header.values[0] ?? []).map(String).indexOf(TOKEN_COLUMN);
    if (ti < 0) return { record: null, reason: `Table ${b.tableName} has no ${TOKEN_COLUMN} column.` };
    // Only the token of the selected row is read (issue #21, item 9: never the whole body).
    const cell = body.getCell(inter.rowIndex - body.rowIndex, ti);
    cell.load("values");
    await context.sync();
    const token: unknown = cell.values[0]?.[0];
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
