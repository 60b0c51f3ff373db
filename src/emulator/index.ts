/**
 * Workbook emulator: an Excel host for Microsoft's own Excel client library (`@microsoft/office-js`).
 * The add-in's code, the tests, the browser preview and the bench talk to `Excel` exactly as in
 * Excel — the library builds the RichApi requests, does load/sync and raises PropertyNotLoaded — and
 * the emulated host (`host.ts`, one function from a request body to a response body) answers them
 * from an in-memory workbook (`model.ts`) that follows Excel's documented semantics strictly.
 *
 * Typical test:
 * ```ts
 * const wb = new Workbook({ currentYear: 2025 });
 * const Excel = createExcelNamespace(wb);          // Microsoft's `Excel`, its `run` bound to `wb`
 * await Excel.run(async (context) => { ... });
 * expect(inspect(wb, "Sheet1!A1:B2").values).toEqual(...);
 * ```
 */
import { MAX_COLUMNS, MAX_ROWS, Rect, cellAddress, formatAddress, formatRect, parseAddress } from "./address";
import {
  Cell,
  ConditionalFormatModel,
  FilterCriteria,
  SheetModel,
  SortField,
  TableModel,
  WorkbookModel,
  WorkbookOptions,
} from "./model";
import { WRAPPED, officeJs, realmSupports, sessionFor } from "./library";
import { CellStore } from "./cells";
import { CellValue, isCellError, toApiValue } from "./values";

export { EmulatedExcelError, ErrorCodes, isEmulatedError } from "./errors";
export type { ErrorCode } from "./errors";
export { WorkbookModel, PAYLOAD_LIMIT_BYTES, validateSheetName, validateTableName } from "./model";
export type { WorkbookOptions, WorkbookStats, TableModel, SheetModel, CalculationMode, FilterCriteria, SortField, ConditionalFormatModel } from "./model";
export { answerRequest, hostMilliseconds, hostProfile, keptReferenceCount, setHostProfile } from "./host";
export { API_SETS } from "./api-sets";
export type { HostAnswer, HostRequest } from "./host";
export { officeJs, observeRequests, sessionFor, setDefaultWorkbook, WORKBOOK_HEADER } from "./library";
export type { Exchange, OfficeJs } from "./library";
export { PROFILE_IDS, currentProfile, currentProfileId, isProfileId, missingSets, profile, profileSupports, setCurrentProfile } from "./profiles";
export type { PlatformProfile, ProfileId } from "./profiles";
export { MAX_ROWS, MAX_COLUMNS, parseAddress, formatRect, cellAddress } from "./address";
export { parseTypedInput, dateSerial } from "./typed-input";
export { formatCellText } from "./format";
export { LOCALES, localeSettings } from "./locales";
export type { LocaleId, LocaleProfile, LocaleSettings } from "./locales";

/** The emulated workbook (alias of {@link WorkbookModel}). */
export const Workbook = WorkbookModel;
export type Workbook = WorkbookModel;
/** Alias of {@link WorkbookModel}. */
export const EmulatedWorkbook = WorkbookModel;
export type EmulatedWorkbook = WorkbookModel;

type Batch<T> = (context: Excel.RequestContext) => Promise<T>;

/** `Excel.run` options the emulator understands besides the library's own (`delayForCellEdit`, …). */
type RunOptions = Excel.RunOptions & Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * Microsoft's `Excel.run` against an emulated workbook: the library's own run (batch, sync of what is
 * still queued, cleanup of tracked objects), with the session that routes its requests to `workbook`.
 * `run(wb, batch)`, `run(wb, options, batch)` and `run(wb, previousObjectOrContext, batch)` as in office.js.
 */
export function run<T>(workbook: WorkbookModel, batch: Batch<T>): Promise<T>;
export function run<T>(workbook: WorkbookModel, object: unknown, batch: Batch<T>): Promise<T>;
export function run<T>(workbook: WorkbookModel, a: unknown, b?: Batch<T>): Promise<T> {
  const { Excel: lib } = officeJs();
  const session = sessionFor(workbook);
  const call = (...args: unknown[]) => lib.run(...args) as Promise<T>;
  if (typeof a === "function") return call({ session }, a);
  // Options (a plain object): the session is added unless the caller chose one.
  if (isPlainObject(a)) return call({ ...(a as RunOptions), session: (a as RunOptions).session ?? session }, b);
  // Previous objects or a context: the batch continues in their context, which already has its session.
  return call(a, b);
}

/** The `Excel` global for one workbook: Microsoft's namespace, its `run` bound to the workbook. */
export type ExcelNamespace = typeof Excel & {
  run<T>(batch: Batch<T>): Promise<T>;
  run<T>(object: unknown, batch: Batch<T>): Promise<T>;
  /** The library's `OfficeExtension` (its `Error`, `ErrorCodes`). */
  readonly OfficeExtension: typeof OfficeExtension;
  /** The emulated workbook behind this namespace. */
  readonly workbook: WorkbookModel;
};

/**
 * Builds an `Excel` namespace bound to one emulated workbook: every member is Microsoft's (enums,
 * `RequestContext`, `ErrorCodes`, classes); only `run` adds the session that routes to `workbook`.
 * Install it as the global `Excel` to run add-in code that calls `Excel.run`.
 */
export function createExcelNamespace(workbook: WorkbookModel): ExcelNamespace {
  const { Excel: lib, OfficeExtension: ext } = officeJs();
  const ns = Object.create(lib) as Record<string, unknown>;
  Object.defineProperty(ns, "run", { value: (a: unknown, b?: Batch<unknown>) => run(workbook, a, b as Batch<unknown>), enumerable: true });
  Object.defineProperty(ns, "OfficeExtension", { value: ext, enumerable: true });
  Object.defineProperty(ns, "workbook", { value: workbook, enumerable: true });
  Object.defineProperty(ns, WRAPPED, { value: true });
  return ns as unknown as ExcelNamespace;
}

/**
 * A request context on `workbook` for tests that call adapter functions directly
 * (`writeTable(context, …)`): Microsoft's `Excel.RequestContext`, made as `Excel.run` makes the one it
 * hands its batch — its objects are tracked automatically (the library's `_autoCleanup`), so they stay
 * valid across syncs, and `delayForCellEdit` sets the same request flag. The test never ends the
 * batch, so its references are not released (as in a batch still running).
 */
export function createRequestContext(workbook: WorkbookModel, options: { delayForCellEdit?: boolean } = {}): Excel.RequestContext {
  const { Excel: lib } = officeJs();
  const context = new lib.RequestContext(sessionFor(workbook)) as Excel.RequestContext;
  const internals = context as unknown as { _autoCleanup: boolean; _requestFlagModifier?: number };
  internals._autoCleanup = true;
  if (options.delayForCellEdit && realmSupports("DelayForCellEdit")) internals._requestFlagModifier = (internals._requestFlagModifier ?? 0) | 64;
  return context;
}

/** Same as {@link createRequestContext} (kept for tests written before the host; the context is Microsoft's). */
export const createEmulatedContext = createRequestContext;

// ---------- direct inspection (no sync, for assertions) ----------

/** What a range holds right now, read straight from the model (no request, no sync). */
export interface RangeInspection {
  address: string;
  values: Array<Array<number | string | boolean>>;
  formulas: Array<Array<number | string | boolean>>;
  numberFormat: string[][];
  text: string[][];
  valueTypes: string[][];
}

/** Reads a range of the model for assertions. Without a sheet name the active sheet is used. */
export function inspect(workbook: WorkbookModel, address: string): RangeInspection {
  const { sheet, rect } = workbook.resolveAddress(address, workbook.activeSheet());
  return {
    address: formatAddress(sheet.name, rect),
    values: workbook.readValues(sheet, rect),
    formulas: workbook.readFormulas(sheet, rect),
    numberFormat: workbook.readNumberFormat(sheet, rect),
    text: workbook.readText(sheet, rect),
    valueTypes: workbook.readValueTypes(sheet, rect),
  };
}

/** Writes values into the model directly (test setup that is not under test), as typed input. */
export function seed(workbook: WorkbookModel, address: string, values: unknown[][]): void {
  const { sheet, rect } = workbook.resolveAddress(address, workbook.activeSheet());
  workbook.writeValues(sheet, rect, values);
}

// ---------- the file: save and load ----------

/** Stored form of one cell: [row, col, value?, formula?, numberFormat?]. */
type StoredCell = { r: number; c: number; v?: Cell["v"]; f?: string; nf?: string };

/** What the emulator writes when "saving the file". Everything that travels with a real workbook. */
export interface WorkbookFile {
  format: "emulated-excel-workbook";
  version: 1;
  seq: number;
  activeSheetId: string;
  /**
   * Not written: the calculation mode is the application's, "a runtime property … not persisted in the
   * workbook" (docs: Excel.Application.calculationMode). Files of older emulator versions carry it;
   * it is ignored when they are opened.
   */
  calculationMode?: string;
  sheets: Array<{
    id: string;
    name: string;
    cells: StoredCell[];
    hiddenRows: number[];
    visibility?: "Visible" | "Hidden" | "VeryHidden";
    names?: string[];
    fills?: Array<[string, string]>;
    /** Conditional formats, top priority first (they are part of the file in Excel too). */
    conditionalFormats?: ConditionalFormatModel[];
    /** Merged cells, PivotTables, array formulas (areas cells cannot be shifted through). */
    obstacles?: Array<{ rect: Rect; kind: "merged" | "pivot" | "array" }>;
  }>;
  /** The workbook's date system (absent: 1900). */
  date1904?: boolean;
  /** Each table as the model holds it, with its filter map stored as entry pairs. */
  tables: Array<Omit<TableModel, "filters"> & { filters: Array<[number, FilterCriteria]> }>;
  /** Settings exactly as stored: key and JSON text of the value. */
  settings: Array<[string, string]>;
  definedNames: string[];
  /** What defined names refer to (absent: names only), with the id of the sheet of a sheet-scoped one. */
  nameFormulas?: Array<{ name: string; formula: string; sheetId?: string }>;
}

/** A sheet's cells in row-major order, as the file stores them. */
function storedCells(s: SheetModel): StoredCell[] {
  const out: StoredCell[] = [];
  s.cells.forEach((r, c, cell) => {
    const stored: StoredCell = { r, c };
    if (cell.v !== undefined) stored.v = cell.v;
    if (cell.f !== undefined) stored.f = cell.f;
    if (cell.nf !== undefined) stored.nf = cell.nf;
    out.push(stored);
  });
  return out;
}

/** The workbook as a file object ("save"). */
export function toWorkbookFile(wb: WorkbookModel): WorkbookFile {
  return {
    format: "emulated-excel-workbook",
    version: 1,
    seq: wb.currentSeq(),
    activeSheetId: wb.activeSheetId,
    sheets: wb.sheets.map((s) => ({
      id: s.id,
      name: s.name,
      cells: storedCells(s),
      hiddenRows: [...s.hiddenRows].sort((a, b) => a - b),
      ...(s.visibility && s.visibility !== "Visible" ? { visibility: s.visibility } : {}),
      ...(s.names && s.names.length ? { names: [...s.names] } : {}),
      ...(s.fills?.size ? { fills: [...s.fills.entries()] } : {}),
      ...(s.conditionalFormats?.length ? { conditionalFormats: s.conditionalFormats.map((cf) => ({ ...cf, rect: { ...cf.rect } })) } : {}),
      ...(s.obstacles?.length ? { obstacles: s.obstacles.map((o) => ({ rect: { ...o.rect }, kind: o.kind })) } : {}),
    })),
    ...(wb.date1904 ? { date1904: true } : {}),
    tables: wb.tables.map((t) => ({
      id: t.id,
      name: t.name,
      sheetId: t.sheetId,
      rect: { ...t.rect },
      showTotals: t.showTotals,
      style: t.style,
      columns: t.columns.map((c) => ({ ...c })),
      nextColumnId: t.nextColumnId,
      sort: t.sort ? { fields: t.sort.fields.map((f) => ({ ...f })), matchCase: t.sort.matchCase } : null,
      filters: [...t.filters.entries()],
    })),
    settings: [...wb.settings.entries()],
    definedNames: [...wb.definedNames],
    ...(wb.nameFormulas.size ? { nameFormulas: [...wb.nameFormulas.values()].map((n) => ({ ...n })) } : {}),
  };
}

/** The saved file as text; tests search it to prove what is (and is not) stored in a workbook. */
export function serializeWorkbook(wb: WorkbookModel): string {
  return JSON.stringify(toWorkbookFile(wb));
}

function fail(msg: string): never {
  throw new Error(`Not an emulated workbook file: ${msg}`);
}
function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function isRect(v: unknown): v is Rect {
  return isObj(v) && ["r0", "c0", "r1", "c1"].every((k) => Number.isInteger(v[k]));
}
function isStoredValue(v: unknown): boolean {
  return typeof v === "number" || typeof v === "string" || typeof v === "boolean" || (isObj(v) && typeof v.error === "string");
}

/** Opens a saved file (text or object). Throws a clear error for anything that is not one. */
export function loadWorkbook(file: string | WorkbookFile, options: Omit<WorkbookOptions, "firstSheetName"> = {}): WorkbookModel {
  let data: unknown = file;
  if (typeof file === "string") {
    try {
      data = JSON.parse(file);
    } catch {
      fail("the text is not JSON.");
    }
  }
  if (!isObj(data) || data.format !== "emulated-excel-workbook") fail("missing format marker.");
  if (data.version !== 1) fail(`unsupported version ${String(data.version)}.`);
  if (!Array.isArray(data.sheets) || data.sheets.length === 0) fail("it has no sheets.");
  const wb = new WorkbookModel({ ...options, firstSheetName: null, date1904: (isObj(data) && data.date1904 === true) || options.date1904 });
  for (const s of data.sheets as unknown[]) {
    if (!isObj(s) || typeof s.id !== "string" || typeof s.name !== "string" || !Array.isArray(s.cells)) fail("a sheet entry is malformed.");
    const sheet: SheetModel = { id: s.id, name: s.name, cells: new CellStore(), hiddenRows: new Set<number>(), autofitCount: 0 };
    for (const c of s.cells as unknown[]) {
      if (!isObj(c) || !Number.isInteger(c.r) || !Number.isInteger(c.c)) fail(`a cell on '${s.name}' is malformed.`);
      const r = c.r as number, col = c.c as number;
      if (r < 0 || r >= MAX_ROWS || col < 0 || col >= MAX_COLUMNS) fail(`a cell on '${s.name}' is off the grid.`);
      const cell: Cell = {};
      if (c.v !== undefined) {
        if (!isStoredValue(c.v)) fail(`cell ${cellAddress(r, col)} on '${s.name}' has an invalid value.`);
        cell.v = c.v as Cell["v"];
      }
      if (c.f !== undefined) {
        if (typeof c.f !== "string") fail(`cell ${cellAddress(r, col)} has an invalid formula.`);
        cell.f = c.f;
      }
      if (c.nf !== undefined) {
        if (typeof c.nf !== "string") fail(`cell ${cellAddress(r, col)} has an invalid number format.`);
        cell.nf = c.nf;
      }
      sheet.cells.put(r, col, cell);
    }
    if (Array.isArray(s.hiddenRows)) for (const r of s.hiddenRows) if (Number.isInteger(r)) sheet.hiddenRows.add(r as number);
    if (s.visibility === "Hidden" || s.visibility === "VeryHidden") sheet.visibility = s.visibility;
    if (Array.isArray(s.names)) sheet.names = s.names.filter((n): n is string => typeof n === "string");
    if (Array.isArray(s.obstacles)) {
      for (const o of s.obstacles as unknown[]) {
        if (!isObj(o) || !isRect(o.rect) || (o.kind !== "merged" && o.kind !== "pivot" && o.kind !== "array")) fail("an obstacle is malformed.");
        (sheet.obstacles ??= []).push({ rect: { ...o.rect }, kind: o.kind });
      }
    }
    if (Array.isArray(s.fills)) {
      for (const f of s.fills as unknown[]) {
        if (!Array.isArray(f) || typeof f[0] !== "string" || !/^\d+,\d+$/.test(f[0]) || typeof f[1] !== "string" || !/^#[0-9A-F]{6}$/.test(f[1])) fail(`a fill on '${s.name}' is malformed.`);
        (sheet.fills ??= new Map()).set(f[0], f[1]);
      }
    }
    if (Array.isArray(s.conditionalFormats)) {
      for (const cf of s.conditionalFormats as unknown[]) {
        const ok =
          isObj(cf) && typeof cf.id === "string" && cf.type === "Custom" && isRect(cf.rect) &&
          (cf.formula === null || (typeof cf.formula === "string" && cf.formula.startsWith("="))) &&
          (cf.fill === null || (typeof cf.fill === "string" && /^#[0-9A-F]{6}$/.test(cf.fill))) && typeof cf.stopIfTrue === "boolean";
        if (!ok) fail(`a conditional format on '${s.name}' is malformed.`);
        const c = cf as unknown as ConditionalFormatModel;
        (sheet.conditionalFormats ??= []).push({ id: c.id, type: "Custom", rect: { ...c.rect }, formula: c.formula, fill: c.fill, stopIfTrue: c.stopIfTrue });
      }
    }
    if (wb.sheetByName(sheet.name)) fail(`duplicate sheet name '${sheet.name}'.`);
    wb.sheets.push(sheet);
  }
  for (const t of (Array.isArray(data.tables) ? data.tables : []) as unknown[]) {
    if (!isObj(t) || typeof t.id !== "string" || typeof t.name !== "string" || typeof t.sheetId !== "string" || !isRect(t.rect) || !Array.isArray(t.columns)) {
      fail("a table entry is malformed.");
    }
    if (!wb.sheetById(t.sheetId)) fail(`table '${t.name}' refers to a missing sheet.`);
    wb.tables.push({
      id: t.id,
      name: t.name,
      sheetId: t.sheetId,
      rect: t.rect,
      showTotals: t.showTotals === true,
      style: typeof t.style === "string" ? t.style : "TableStyleMedium2",
      columns: (t.columns as unknown[]).map((c) => {
        if (!isObj(c) || typeof c.id !== "number" || typeof c.name !== "string") fail(`a column of table '${String(t.name)}' is malformed.`);
        return { id: c.id, name: c.name };
      }),
      nextColumnId: typeof t.nextColumnId === "number" ? t.nextColumnId : (t.columns as unknown[]).length + 1,
      sort: (t.sort ?? null) as { fields: SortField[]; matchCase: boolean } | null,
      filters: new Map(Array.isArray(t.filters) ? (t.filters as Array<[number, FilterCriteria]>) : []),
      ...(t.autoFilterEnabled === false ? { autoFilterEnabled: false } : {}),
    });
  }
  if (Array.isArray(data.settings)) {
    for (const e of data.settings as unknown[]) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || typeof e[1] !== "string") fail("a setting entry is malformed.");
      try {
        JSON.parse(e[1]);
      } catch {
        fail(`setting '${e[0]}' does not hold JSON.`);
      }
      wb.settings.set(e[0], e[1]);
    }
  }
  if (Array.isArray(data.definedNames)) for (const n of data.definedNames) if (typeof n === "string") wb.definedNames.push(n);
  if (Array.isArray(data.nameFormulas)) {
    for (const n of data.nameFormulas as unknown[]) {
      if (!isObj(n) || typeof n.name !== "string" || typeof n.formula !== "string") fail("a name's formula is malformed.");
      const sheetId = typeof n.sheetId === "string" && wb.sheetById(n.sheetId) ? n.sheetId : undefined;
      wb.nameFormulas.set(`${sheetId ?? ""}|${n.name.toLowerCase()}`, { name: n.name, formula: n.formula, ...(sheetId ? { sheetId } : {}) });
    }
  }
  const active = typeof data.activeSheetId === "string" && wb.sheetById(data.activeSheetId) ? data.activeSheetId : wb.sheets[0].id;
  wb.activeSheetId = active;
  wb.bumpSeq(typeof data.seq === "number" ? data.seq : 0);
  return wb;
}

// ---------- read model for the preview grid ----------

export type SnapshotValueType = "number" | "text" | "boolean" | "empty" | "formula" | "error";

export interface CellSnapshot {
  row: number;
  col: number;
  address: string;
  /** Evaluated value as `Range.values` reports it (errors as `#NAME?` etc., empty as ""). */
  value: number | string | boolean;
  valueType: SnapshotValueType;
  numberFormat: string;
  formula: string | null;
  /** Display text (`Range.text`). */
  text: string;
  /** Solid fill colour (`Range.format.fill.color`), or null for No Fill. */
  fill: string | null;
  /** The fill conditional formatting gives the cell (drawn over `fill`), or null. */
  conditionalFill: string | null;
}

export interface TableSnapshot {
  name: string;
  id: string;
  address: string;
  headerAddress: string;
  bodyAddress: string;
  totalsAddress: string | null;
  columns: string[];
  showTotals: boolean;
  sort: { fields: SortField[]; matchCase: boolean } | null;
  filters: Array<{ column: number; criteria: FilterCriteria }>;
}

export interface SheetSnapshot {
  name: string;
  id: string;
  active: boolean;
  usedRange: { address: string; rowIndex: number; columnIndex: number; rowCount: number; columnCount: number } | null;
  /** Stored cells in row-major order (cells with only a number format included). */
  cells: CellSnapshot[];
  tables: TableSnapshot[];
  hiddenRows: number[];
  /** Conditional formats, top priority first: range, rule (relative to the range's top-left cell) and fill. */
  conditionalFormats: Array<{ id: string; address: string; formula: string | null; fill: string | null }>;
}

export interface WorkbookSnapshot {
  activeSheet: string;
  selection: { sheet: string; address: string } | null;
  sheets: SheetSnapshot[];
  settingKeys: string[];
}

function snapshotType(cell: Cell, v: CellValue): SnapshotValueType {
  if (cell.f !== undefined) return "formula";
  if (v === null) return "empty";
  if (isCellError(v)) return "error";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "boolean";
  return "text";
}

/** A plain-data view of the whole workbook for rendering (the preview grid) and for assertions. */
export function snapshot(wb: WorkbookModel): WorkbookSnapshot {
  const sel = wb.selection ? wb.sheetById(wb.selection.sheetId) : undefined;
  return {
    activeSheet: wb.activeSheet().name,
    selection: sel && wb.selection ? { sheet: sel.name, address: formatRect(wb.selection.rect) } : null,
    settingKeys: [...wb.settings.keys()],
    sheets: wb.sheets.map((s) => {
      const used = wb.usedRect(s);
      const stored: Array<[number, number, Cell]> = [];
      s.cells.forEach((r, c, cell) => stored.push([r, c, cell]));
      const cells = stored.map(([row, col, cell]) => {
          const v = wb.valueAt(s, row, col);
          return {
            row,
            col,
            address: cellAddress(row, col),
            value: toApiValue(v),
            valueType: snapshotType(cell, v),
            numberFormat: wb.numberFormatAt(s, row, col),
            formula: cell.f ?? null,
            text: wb.textAt(s, row, col),
            fill: wb.fillAt(s, row, col) ?? null,
            conditionalFill: wb.conditionalFillAt(s, row, col),
          };
        });
      return {
        name: s.name,
        id: s.id,
        active: s.id === wb.activeSheetId,
        usedRange: used
          ? { address: formatRect(used), rowIndex: used.r0, columnIndex: used.c0, rowCount: used.r1 - used.r0 + 1, columnCount: used.c1 - used.c0 + 1 }
          : null,
        cells,
        tables: wb.tablesOnSheet(s).map((t) => {
          const totals = wb.totalsRect(t);
          return {
            name: t.name,
            id: t.id,
            address: formatRect(t.rect),
            headerAddress: formatRect(wb.headerRect(t)),
            bodyAddress: formatRect(wb.bodyRect(t)),
            totalsAddress: totals ? formatRect(totals) : null,
            columns: t.columns.map((c) => c.name),
            showTotals: t.showTotals,
            sort: t.sort ? { fields: t.sort.fields.map((f) => ({ ...f })), matchCase: t.sort.matchCase } : null,
            filters: [...t.filters.entries()].map(([column, criteria]) => ({ column, criteria })),
          };
        }),
        hiddenRows: [...s.hiddenRows].sort((a, b) => a - b),
        conditionalFormats: (s.conditionalFormats ?? []).map((cf) => ({ id: cf.id, address: formatRect(cf.rect), formula: cf.formula, fill: cf.fill })),
      };
    }),
  };
}

/** Re-exported so callers can parse addresses the way the emulator does. */
export { parseAddress as parseA1Address };
