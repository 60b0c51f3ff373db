/**
 * The workbook state behind the emulated host: sheets of cells (dense rows, see `cells.ts`), tables,
 * settings, names. Everything here is applied synchronously; the host (`host.ts`) calls into it while
 * it answers the requests Microsoft's client library sends on `context.sync()`. Validation happens
 * before mutation so a failing call changes nothing.
 */
import {
  MAX_COLUMNS,
  MAX_ROWS,
  Rect,
  assertOnGrid,
  intersectRect,
  formatAddress,
  looksLikeCellReference,
  parseAddress,
  rectColumns,
  rectContains,
  rectRows,
  rectsOverlap,
} from "./address";
import {
  EmulatedExcelError,
  ErrorCodes,
  accessDenied,
  invalidArgument,
  invalidOperation,
  itemAlreadyExists,
  itemNotFound,
} from "./errors";
import { formatCellText } from "./format";
import { adjustFormulaForShift, evaluateFormula, rewriteReferences, shiftRect, translateFormula, type CellShift } from "./formula";
import { MAX_CELL_TEXT, parseTypedInput } from "./typed-input";
import { CellValue, isCellError, toApiValue, valueTypeOf } from "./values";
import { Cell, CellStore, FormatFill, RowCells, StoredValue } from "./cells";
import type { ConditionalFormatModel, FilterCriteria, ObstacleKind, SheetModel, SheetProtectionOptions, SortField, TableColumnModel, TableModel } from "./shapes";
import { currentProfileId, profile, type ProfileId } from "./profiles";
import { localeSettings, type LocaleId, type LocaleSettings } from "./locales";
import { CustomFunctionHost } from "./custom-functions";
import { cellAddress } from "./address";

export type { Cell } from "./cells";

export const GENERAL = "General";
export const TEXT_FORMAT = "@";

export type { ConditionalFormatModel, FilterCriteria, ObstacleKind, SheetModel, SheetProtectionOptions, SheetVisibility, SortField, TableColumnModel, TableModel } from "./shapes";

/**
 * Issue #35: what a protected sheet answers a change (Excel's own words for a locked cell: "The cell
 * or chart you're trying to change is on a protected sheet. To make a change, unprotect the sheet.
 * You might be requested to enter a password."), with `AccessDenied` ("You cannot perform the
 * requested operation", docs: Excel error codes; Microsoft Graph answers a write to a locked cell so,
 * microsoft-graph-docs #4546).
 */
export const PROTECTED_SHEET_MESSAGE = "The cell or chart you're trying to change is on a protected sheet. To make a change, unprotect the sheet. You might be requested to enter a password.";
/** Issue #35: what a protected workbook structure answers adding, deleting, renaming, moving, hiding or showing a sheet. */
export const PROTECTED_STRUCTURE_MESSAGE = "The workbook's structure is protected: sheets cannot be added, deleted, renamed, moved, hidden or shown. Unprotect the workbook (Review › Protect Workbook) to make this change.";

/** A protected sheet's options when `protect()` names none or only some (docs: every `allow…` false). */
export function protectionOptions(given: unknown): SheetProtectionOptions {
  const o = (given && typeof given === "object" ? given : {}) as Record<string, unknown>;
  const flag = (k: string) => o[k] === true;
  const mode = o.selectionMode;
  return {
    allowAutoFilter: flag("allowAutoFilter"),
    allowDeleteColumns: flag("allowDeleteColumns"),
    allowDeleteRows: flag("allowDeleteRows"),
    allowEditObjects: flag("allowEditObjects"),
    allowEditScenarios: flag("allowEditScenarios"),
    allowFormatCells: flag("allowFormatCells"),
    allowFormatColumns: flag("allowFormatColumns"),
    allowFormatRows: flag("allowFormatRows"),
    allowInsertColumns: flag("allowInsertColumns"),
    allowInsertHyperlinks: flag("allowInsertHyperlinks"),
    allowInsertRows: flag("allowInsertRows"),
    allowPivotTables: flag("allowPivotTables"),
    allowSort: flag("allowSort"),
    selectionMode: mode === "Unlocked" || mode === "None" ? mode : "Normal",
  };
}

/** A password as the model keeps it (never the text): FNV-1a, enough to tell a wrong one. */
export function passwordHash(password: unknown): string | null {
  if (typeof password !== "string" || password === "") return null;
  let h = 0x811c9dc5;
  for (let i = 0; i < password.length; i++) h = Math.imul(h ^ password.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/**
 * What Excel answers when cells would be shifted through something it cannot move part of. Excel's
 * own messages (support.microsoft.com: "We can't do that to a merged cell"; "We can't make this change
 * for the selected cells because it will affect a PivotTable"; "You can't change part of an array",
 * "Guidelines and examples of array formulas"); the API reports them as `InvalidOperation`. Excel
 * moves a merged area or PivotTable that lies wholly in the shifted columns; where its rules are not
 * documented the emulator takes the stricter one and refuses any shift touching one.
 */
export const OBSTACLE_MESSAGES: Record<ObstacleKind, string> = {
  merged: "We can't do that to a merged cell.",
  pivot: "We can't make this change for the selected cells because it will affect a PivotTable.",
  array: "You can't change part of an array.",
};

export type CalculationMode = "Automatic" | "AutomaticExceptTables" | "Manual";

/** Counters for tests and benchmarks. */
export interface WorkbookStats {
  /** `sync()` calls that reached the workbook (including rejected ones). */
  syncCount: number;
  /** Request size in bytes of each sync, in order. */
  requestBytesPerSync: number[];
  /** Response size in bytes of each sync, in order. */
  responseBytesPerSync: number[];
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** Syncs rejected for exceeding a payload limit. */
  rejectedSyncs: number;
  /** Cells written through `values`, `formulas` or `numberFormat` (one per cell per write): what the add-in sends. */
  cellsWritten: number;
  /** Cells pasted by `Range.copyFrom` (inside Excel: only the two addresses cross the network). */
  cellsCopied: number;
  /**
   * Array entries that reached Excel as null although the caller did not pass null (undefined, NaN,
   * ±Infinity): Excel leaves those cells unchanged, which is almost always a bug in the caller.
   */
  lossyValuesWritten: number;
  /** Queued operations applied. */
  operationsApplied: number;
  /** `table.rows.add` calls applied (the writer should not add rows one by one). */
  rowsAddCalls: number;
  autofitCalls: number;
  suspendCalculationCalls: number;
  suspendScreenUpdatingCalls: number;
  /** `application.calculationMode` writes: the mode is application-wide and outlives the add-in. */
  calculationModeSets: number;
  /** `Range.copyFrom` calls applied. */
  copyFromCalls: number;
  /** `application.calculate(...)` calls applied (issue #21: after writes under suspended calculation). */
  calculateCalls?: number;
  /**
   * Every calculation asked for, in order (issue #34: the host records what was calculated):
   * `application <type>` (every open workbook), `worksheet <name>` (`Worksheet.calculate`), or
   * `range <address>` (`Range.calculate`).
   */
  calculations?: string[];
  /** Formula cells evaluated by eager calculation (`WorkbookOptions.eagerCalculation`). */
  formulaEvaluations?: number;
}

export function emptyStats(): WorkbookStats {
  return {
    syncCount: 0,
    requestBytesPerSync: [],
    responseBytesPerSync: [],
    maxRequestBytes: 0,
    maxResponseBytes: 0,
    rejectedSyncs: 0,
    cellsWritten: 0,
    cellsCopied: 0,
    lossyValuesWritten: 0,
    operationsApplied: 0,
    rowsAddCalls: 0,
    autofitCalls: 0,
    suspendCalculationCalls: 0,
    suspendScreenUpdatingCalls: 0,
    calculationModeSets: 0,
    copyFromCalls: 0,
    calculateCalls: 0,
    calculations: [],
  };
}

/** `Excel.ClearApplyTo` values. */
export type ClearApplyTo = "All" | "Formats" | "Contents" | "Hyperlinks" | "RemoveHyperlinks";

export interface WorkbookOptions {
  /** Year used for typed dates without a year (`1/2`). Defaults to the current UTC year. */
  currentYear?: number;
  /** Name of the first sheet; defaults to `Sheet1`. Pass `null` for a workbook without sheets (file load). */
  firstSheetName?: string | null;
  /** Request and response limit per sync; defaults to the profile's (5 MB on the web, none on the desktop). */
  payloadLimitBytes?: number;
  /**
   * Excel's AutoCorrect option "Fill formulas in tables to create calculated columns" (on by default,
   * and applied to API writes too): a formula written into a table column whose other body cells are
   * empty fills the whole column.
   */
  autoFillCalculatedColumns?: boolean;
  /**
   * The workbook uses the 1904 date system (Excel for Mac's old default): serial 0 is 1904-01-01, so a
   * 1900-system serial shows 4 years and 1 day late (support.microsoft.com, "Differences between the
   * 1900 and the 1904 date system in Excel").
   */
  date1904?: boolean;
  /**
   * The platform profile whose host this workbook is (`profiles.ts`); defaults to the realm's profile
   * (`web` unless the run chose another). `"web"` enforces the 5 MB payload limits; `"mac"` also
   * throws `InvalidOperation` from `autoFilter.reapply()` / `reapplyFilters()` on a table whose filter
   * was removed (office-js #3086); `"windows"` and `"windows-2021"` only the documented behaviour.
   */
  platform?: ProfileId;
  /**
   * Error code of a request over the payload limit. Excel on the web often answers an oversized request
   * with `GeneralException` ("An internal error has occurred", HTTP 500) instead of
   * `RequestPayloadSizeLimitExceeded` (office-js #1012, #1314, office-js-docs-reference #354).
   */
  oversizeRequestError?: "RequestPayloadSizeLimitExceeded" | "GeneralException";
  /**
   * Total size of document settings (key + JSON value, UTF-16 characters) above which a sync that adds
   * a setting fails with `InvalidArgument`. Settings are documented to hold 2 MB, failures are reported
   * near 1 MB (office-js #621, #3957); the stricter 1 MB is the default.
   */
  settingsLimitChars?: number;
  /**
   * Calculate like Excel's Automatic mode does after a batch, at once instead of when a formula is
   * read: after every batch that changed cells (unless API calculation was suspended for it), every
   * formula is evaluated and counted in `stats.formulaEvaluations`. For measuring what suspending
   * calculation saves (`bench/calculation.ts`, issue #21); off by default (reads stay lazy).
   */
  eagerCalculation?: boolean;
  /**
   * The culture of the Excel that has the workbook open (`locales.ts`, issue #34): number and logical
   * text inside formulas, and the separators and culture the Application reports. Like the calculation
   * mode, the application's and not saved with the file. Default en-US.
   */
  locale?: LocaleId;
  /** Excel's own separators ("Use system separators" off); default: the culture's. */
  decimalSeparator?: string;
  thousandsSeparator?: string;
}

/** Days between the 1900 and the 1904 date systems' serial 0 (documented: 1,462 days). */
export const DATE1904_OFFSET = 1462;

export const PAYLOAD_LIMIT_BYTES = 5 * 1024 * 1024;

/** Excel's limit on cells in one range read ("five million cells for get operations"); applied to cell-by-cell writes too. */
export const MAX_CELLS_PER_OPERATION = 5_000_000;

/**
 * What a value becomes on its way to Excel: requests are JSON, so a Date arrives as its ISO string and
 * undefined, NaN and ±Infinity arrive as null (which means "leave the cell unchanged").
 */
export function toWireValue(v: unknown): unknown {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toJSON();
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return null;
  if (typeof v === "number" && !Number.isFinite(v)) return null;
  return v;
}

function checkCellCount(rect: Rect, what: string): void {
  const cells = rectRows(rect) * rectColumns(rect);
  if (cells > MAX_CELLS_PER_OPERATION) {
    throw new EmulatedExcelError(
      ErrorCodes.rangeExceedsLimit,
      `${what}: the range has ${cells} cells; Excel handles at most ${MAX_CELLS_PER_OPERATION} per operation.`,
    );
  }
}

let instanceCounter = 0;

/** Thrown (and caught) when formula evaluation nests deeper than the stack comfortably allows. */
const TOO_DEEP = new Error("formula chain too deep");
const MAX_EVAL_DEPTH = 400;

function guid(seq: number, kind: number): string {
  return `{${seq.toString(16).toUpperCase().padStart(8, "0")}-${kind.toString(16).padStart(4, "0")}-4000-8000-000000000000}`;
}

const INVALID_SHEET_CHARS = /[:\\/?*[\]]/;

/** Sheet name rules of Excel: 1..31 chars, none of : \ / ? * [ ], not starting/ending with ', not "History". */
export function validateSheetName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0 || name.trim().length === 0) {
    throw invalidArgument("A worksheet name cannot be empty.");
  }
  if (name.length > 31) throw invalidArgument(`The worksheet name '${name}' is longer than 31 characters.`);
  if (INVALID_SHEET_CHARS.test(name)) throw invalidArgument(`The worksheet name '${name}' contains one of : \\ / ? * [ ].`);
  if (name.startsWith("'") || name.endsWith("'")) throw invalidArgument(`The worksheet name '${name}' cannot start or end with an apostrophe.`);
  if (name.toLowerCase() === "history") throw invalidArgument("'History' is a reserved worksheet name.");
  return name;
}

/**
 * Table (and defined) name rules of Excel: starts with a letter, underscore or backslash; then only
 * letters, digits, underscores and periods; at most 255 characters; not a cell reference (A1 or R1C1).
 */
export function validateTableName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0) throw invalidArgument("A table name cannot be empty.");
  if (name.length > 255) throw invalidArgument(`The table name is longer than 255 characters.`);
  if (!/^[\p{L}_\\][\p{L}\p{N}_.]*$/u.test(name)) {
    throw invalidArgument(
      `The table name '${name}' is not valid: it must start with a letter, underscore or backslash and contain only letters, digits, underscores and periods (no spaces).`,
    );
  }
  if (looksLikeCellReference(name)) throw invalidArgument(`The table name '${name}' is not valid because it is a cell reference.`);
  return name;
}

/** The in-memory workbook. Create one per test; wrap it with `createRequestContext` / `createExcelNamespace`. */
export class WorkbookModel {
  readonly sheets: SheetModel[] = [];
  readonly tables: TableModel[] = [];
  /** Settings as stored in the file: key → JSON text. */
  readonly settings = new Map<string, string>();
  /**
   * Issue #35: workbook structure protection (`Workbook.protection`, ExcelApi 1.7): null when not
   * protected; else a hash of its password, if one was given.
   */
  structureProtection: { passwordHash: string | null } | null = null;
  /** Workbook-level defined names (only their names matter: they share the namespace with tables). */
  readonly definedNames: string[] = [];
  /**
   * What defined names refer to (`workbook.names.add(name, reference)`, `NamedItem.formula`), keyed by
   * scope and lower-case name (`"|budget"` workbook-scoped, `"<sheetId>|budget"` sheet-scoped). Names
   * without an entry are names only (the older `addDefinedName(name)` set-up).
   */
  readonly nameFormulas = new Map<string, { name: string; formula: string; sheetId?: string }>();
  /**
   * Sheets whose formulas keep the results they had because a sync changed cells under
   * `suspendApiCalculationUntilNextSync()` (every sheet of the workbook then: any formula may depend on
   * the change), until a calculation is asked for: `application.calculate` (all of them),
   * `Worksheet.calculate` (that sheet); `Range.calculate` recalculates its cells and leaves the sheet
   * pending. Docs (Application.suspendApiCalculationUntilNextSync): "Once set, it is the developer's
   * responsibility to re-calc the workbook, to ensure that any dependencies are propagated". Whether a
   * later automatic recalculation picks those cells up is not documented: the stricter reading (it
   * does not) is emulated.
   */
  readonly pendingSheets = new Set<string>();
  /** True while any sheet waits for a calculation asked for (see {@link pendingSheets}). */
  get apiCalculationPending(): boolean {
    return this.pendingSheets.size > 0;
  }
  /**
   * Test hook (issue #21): the host (`host.ts`) calls it before it applies each action of a request
   * (`load`, `set <property>`, a method) and before each method object path it resolves
   * (`settings.add`, `range.insert`, `getRangeByIndexes`), with the object's readable name
   * (`describeHostObject`: `settings`, `settings[key]`, `Sheet1!A1:H10`, `tables[Name].rows`), the
   * operation, its arguments and the action's index in the request. An `EmulatedExcelError` it returns
   * fails the request there as Excel fails an action (earlier actions stay applied; failing the first
   * applies nothing); any other error loses the request after the earlier actions were applied (the
   * bridge answers it as failed).
   */
  faultInjector: ((op: { path: string; op: string; args: unknown[]; index: number }) => Error | null) | null = null;
  activeSheetId = "";
  selection: { sheetId: string; rect: Rect } | null = null;
  /** Further areas of a multi-area selection (`select("A1:B2,D4")`); `getSelectedRange()` refuses those. */
  extraSelectionAreas: Rect[] = [];
  calculationMode: CalculationMode = "Automatic";
  /** Bumped when formulas must be recalculated; cached results of older generations are stale. */
  calcGeneration = 1;
  /** True while a sync runs after `suspendApiCalculationUntilNextSync()`. */
  calculationSuspended = false;
  readonly currentYear: number;
  readonly payloadLimitBytes: number;
  readonly autoFillCalculatedColumns: boolean;
  stats: WorkbookStats = emptyStats();
  readonly date1904: boolean;
  readonly platform: ProfileId;
  /** Distinguishes workbooks in one realm (the bridge routes requests by it; references are named after it). */
  readonly instanceId: string = `wb${(++instanceCounter).toString(36)}`;
  readonly oversizeRequestError: "RequestPayloadSizeLimitExceeded" | "GeneralException";
  readonly settingsLimitChars: number;
  readonly eagerCalculation: boolean;
  /** The culture and separators of the Excel the workbook is open in (`locales.ts`); the application's, not the file's. */
  locale: LocaleSettings;
  /**
   * Set when this copy's runtime died (co-authoring reload, `coauthoring.ts`): the host refuses every
   * later request with this reason (the bridge answers it as failed, 5001).
   */
  retiredReason: string | null = null;
  /**
   * The co-authoring session this copy belongs to (`coauthoring.ts`): whether other clients are open
   * (`Workbook.getIsActiveCollabSession`), and its hook before each request (the reload injector).
   */
  coauthoring: { active(): boolean; beforeRequest(): void } | null = null;
  /** True while the user is typing in a cell (`enterCellEditMode()`); see `answerRequest` in `host.ts`. */
  cellEditMode = false;
  private cellEditWaiters: Array<() => void> = [];
  private seq = 0;
  private listeners: Array<(wb: WorkbookModel) => void> = [];

  constructor(options: WorkbookOptions = {}) {
    this.currentYear = options.currentYear ?? new Date().getUTCFullYear();
    this.platform = options.platform ?? currentProfileId();
    this.payloadLimitBytes = options.payloadLimitBytes ?? profile(this.platform).payloadLimitBytes ?? Number.POSITIVE_INFINITY;
    this.autoFillCalculatedColumns = options.autoFillCalculatedColumns ?? true;
    this.date1904 = options.date1904 ?? false;
    this.oversizeRequestError = options.oversizeRequestError ?? "RequestPayloadSizeLimitExceeded";
    this.settingsLimitChars = options.settingsLimitChars ?? 1024 * 1024;
    this.eagerCalculation = options.eagerCalculation ?? false;
    this.locale = localeSettings(options.locale ?? "en-US", { decimalSeparator: options.decimalSeparator, thousandsSeparator: options.thousandsSeparator });
    const first = options.firstSheetName === undefined ? "Sheet1" : options.firstSheetName;
    if (first !== null) {
      const s = this.addSheet(first);
      this.activeSheetId = s.id;
    }
  }

  /** The id counter (saved with the file so reloaded workbooks never reuse ids). */
  currentSeq(): number {
    return this.seq;
  }
  nextSeq(): number {
    return ++this.seq;
  }
  /** Restores the id counter after loading a file so new ids never collide with stored ones. */
  bumpSeq(atLeast: number): void {
    this.seq = Math.max(this.seq, atLeast);
  }

  // ---------- cell-edit mode ----------

  /** Test helper: the user starts typing in a cell (batches without `delayForCellEdit` fail). */
  enterCellEditMode(): void {
    this.cellEditMode = true;
  }
  /** Test helper: the user presses Enter; delayed batches run. */
  exitCellEditMode(): void {
    this.cellEditMode = false;
    const waiters = this.cellEditWaiters;
    this.cellEditWaiters = [];
    for (const w of waiters) w();
  }
  /** Resolves when the user leaves cell-edit mode. */
  cellEditExited(): Promise<void> {
    if (!this.cellEditMode) return Promise.resolve();
    return new Promise((resolve) => this.cellEditWaiters.push(resolve));
  }

  // ---------- change notification ----------

  /** Registers a listener fired after each sync that applied at least one change. Returns an unsubscribe function. */
  private settingsHandlers: Array<(source: "local" | "remote") => void> = [];
  onChange(cb: (wb: WorkbookModel) => void): () => void {
    this.listeners.push(cb);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== cb);
    };
  }
  notifyChanged(): void {
    for (const l of [...this.listeners]) l(this);
  }

  /**
   * The document's settings-changed event (issue #26): the handlers the Common API's
   * `Office.context.document.settings.addHandlerAsync(Office.EventType.SettingsChanged, …)` registered
   * for this copy — the channel Microsoft's library registers `Excel.SettingCollection.onSettingsChanged`
   * through (its event id 1). Who raises it, and when, is the co-authoring host's decision
   * (`coauthoring.ts`; README "Co-authoring: two clients of one workbook"); a single workbook never does.
   */
  onSettingsChanged(cb: (source: "local" | "remote") => void): () => void {
    this.settingsHandlers.push(cb);
    return () => {
      this.settingsHandlers = this.settingsHandlers.filter((l) => l !== cb);
    };
  }
  /** Raises the settings-changed event: each handler a microtask later (asynchronous, as Excel's events; not on the timers). */
  raiseSettingsChanged(source: "local" | "remote"): void {
    if (this.retiredReason !== null) return;
    for (const l of [...this.settingsHandlers]) void Promise.resolve().then(() => l(source));
  }

  // ---------- sheets ----------

  sheetById(id: string): SheetModel | undefined {
    return this.sheets.find((s) => s.id === id);
  }
  sheetByName(name: string): SheetModel | undefined {
    const lower = name.toLowerCase();
    return this.sheets.find((s) => s.name.toLowerCase() === lower);
  }
  requireSheet(name: string): SheetModel {
    const s = this.sheetByName(name);
    if (!s) throw itemNotFound(`The worksheet '${name}' does not exist.`);
    return s;
  }
  requireSheetId(id: string): SheetModel {
    const s = this.sheetById(id);
    if (!s) throw itemNotFound("The worksheet has been deleted.");
    return s;
  }
  activeSheet(): SheetModel {
    const s = this.sheetById(this.activeSheetId) ?? this.sheets[0];
    if (!s) throw invalidOperation("The workbook has no worksheets.");
    return s;
  }

  /**
   * Issue #35: refuses a change to a protected sheet (docs: Excel.WorksheetProtection, ExcelApi 1.2;
   * support.microsoft.com "Protect a worksheet": every cell is locked unless unlocked before, and a
   * protected sheet lets users change only what its options allow). The emulator keeps no per-cell
   * "locked" state, so every cell counts as locked (the stricter reading): values, formulas, number
   * formats, clearing, inserting or deleting cells, copying into the sheet, tables (add, resize, rows,
   * columns, totals, sort, names) are refused; formatting (fills, conditional formats, number formats)
   * only with `allowFormatCells`, column widths with `allowFormatColumns`, filtering with
   * `allowAutoFilter`. Reads are never refused.
   */
  checkSheetEditable(sheet: SheetModel, kind: "cells" | "format" | "formatColumns" | "filter" = "cells"): void {
    const p = sheet.protection;
    if (!p) return;
    if (kind === "format" && p.options.allowFormatCells) return;
    if (kind === "formatColumns" && p.options.allowFormatColumns) return;
    if (kind === "filter" && p.options.allowAutoFilter) return;
    throw accessDenied(PROTECTED_SHEET_MESSAGE);
  }

  /**
   * Issue #35: refuses adding, deleting, renaming, moving, hiding or showing a sheet while the
   * workbook's structure is protected (support.microsoft.com "Protect a workbook": "Protecting the
   * workbook structure prevents other users from viewing hidden worksheets, adding, moving, deleting,
   * or hiding worksheets, and renaming worksheets"; docs Excel.WorkbookProtection).
   */
  checkStructureEditable(): void {
    if (this.structureProtection) throw accessDenied(PROTECTED_STRUCTURE_MESSAGE);
  }

  private sheetOfTable(t: TableModel): SheetModel {
    return this.requireSheetId(t.sheetId);
  }

  private checkConditionalFormatEditable(cf: ConditionalFormatModel): void {
    const sheet = this.sheets.find((x) => (x.conditionalFormats ?? []).includes(cf));
    if (sheet) this.checkSheetEditable(sheet, "format");
  }

  addSheet(name?: string | null): SheetModel {
    this.checkStructureEditable();
    let finalName: string;
    if (name === undefined || name === null || name === "") {
      let n = this.sheets.length + 1;
      while (this.sheetByName(`Sheet${n}`)) n++;
      finalName = `Sheet${n}`;
    } else {
      finalName = validateSheetName(name);
      if (this.sheetByName(finalName)) throw itemAlreadyExists(`A worksheet named '${finalName}' already exists.`);
    }
    const sheet: SheetModel = { id: guid(this.nextSeq(), 1), name: finalName, cells: new CellStore(), hiddenRows: new Set(), autofitCount: 0 };
    this.sheets.push(sheet);
    if (!this.activeSheetId) this.activeSheetId = sheet.id;
    return sheet;
  }

  renameSheet(sheet: SheetModel, name: unknown): void {
    const n = validateSheetName(name);
    if (n !== sheet.name) this.checkStructureEditable();
    const other = this.sheetByName(n);
    if (other && other !== sheet) throw itemAlreadyExists(`A worksheet named '${n}' already exists.`);
    sheet.name = n;
  }

  deleteSheet(sheet: SheetModel): void {
    this.checkStructureEditable();
    if (this.sheets.length <= 1) throw invalidOperation("A workbook must contain at least one visible worksheet.");
    // Docs, Worksheet.delete(): "if the worksheet's visibility is set to "VeryHidden", the delete
    // operation will fail with an InvalidOperation exception. You should first change its visibility".
    if (sheet.visibility === "VeryHidden") throw invalidOperation(`The worksheet '${sheet.name}' is very hidden: make it hidden or visible before deleting it.`);
    // Conditional formats elsewhere that refer to this sheet lose the reference (their formula text
    // says #REF!). How Excel rewrites them is not documented; this is the stricter reading: a format
    // can no longer be found by the sheet name once the sheet is gone.
    const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const named = new RegExp(`(?:'${esc(sheet.name.replace(/'/g, "''"))}'|\\b${esc(sheet.name)})!\\$?[A-Za-z]{1,3}\\$?\\d+(?::\\$?[A-Za-z]{1,3}\\$?\\d+)?`, "gi");
    for (const other of this.sheets) {
      if (other === sheet) continue;
      for (const cf of other.conditionalFormats ?? []) if (cf.formula !== null) cf.formula = cf.formula.replace(named, "#REF!");
    }
    for (const t of this.tables.filter((t) => t.sheetId === sheet.id)) this.removeTable(t);
    this.sheets.splice(this.sheets.indexOf(sheet), 1);
    if (this.activeSheetId === sheet.id) this.activeSheetId = this.sheets[0].id;
    if (this.selection?.sheetId === sheet.id) this.selection = null;
    this.invalidateCalculation();
  }

  activateSheet(sheet: SheetModel): void {
    this.activeSheetId = sheet.id;
    this.selection = { sheetId: sheet.id, rect: { r0: 0, c0: 0, r1: 0, c1: 0 } };
    this.extraSelectionAreas = [];
  }

  /** The selection (defaults to A1 of the active sheet). */
  selectedRange(): { sheet: SheetModel; rect: Rect } {
    const sel = this.selection;
    const s = sel ? this.sheetById(sel.sheetId) : undefined;
    if (sel && s) return { sheet: s, rect: sel.rect };
    return { sheet: this.activeSheet(), rect: { r0: 0, c0: 0, r1: 0, c1: 0 } };
  }

  /** Test helper: select a range as a user would (e.g. `select("Sheet1!B3:C4")`). */
  select(address: string): void {
    const [first, ...more] = address.split(",");
    const p = parseAddress(first);
    const s = p.sheet === undefined ? this.activeSheet() : this.requireSheet(p.sheet);
    this.activeSheetId = s.id;
    this.selection = { sheetId: s.id, rect: p.rect };
    this.extraSelectionAreas = more.map((a) => parseAddress(a.includes("!") ? a : `'${s.name.replace(/'/g, "''")}'!${a}`).rect);
  }

  /** Resolves an address (with or without sheet) against a default sheet. */
  resolveAddress(address: string, defaultSheet: SheetModel): { sheet: SheetModel; rect: Rect } {
    const p = parseAddress(address);
    const sheet = p.sheet === undefined ? defaultSheet : this.requireSheet(p.sheet);
    return { sheet, rect: p.rect };
  }

  // ---------- cells ----------

  /** A copy of one stored cell (undefined when it holds nothing); changing the copy changes nothing. */
  getCell(sheet: SheetModel, r: number, c: number): Cell | undefined {
    return sheet.cells.get(r, c);
  }

  /** Replaces a cell's contents with a formula (its value and cached result go). */
  private putFormula(row: RowCells, c: number, f: string): void {
    row.setValue(c, undefined);
    row.setFormula(c, f);
    row.uncache(c);
  }

  /** Replaces a cell's contents with a constant (its formula and cached result go). */
  private putConstant(row: RowCells, c: number, v: StoredValue | undefined): void {
    row.setFormula(c, undefined);
    row.uncache(c);
    row.setValue(c, v);
  }

  numberFormatAt(sheet: SheetModel, r: number, c: number): string {
    return sheet.cells.format(r, c) ?? GENERAL;
  }

  // ---------- custom functions (issue #28; see custom-functions.ts) ----------

  /**
   * The add-in's custom functions: registered from its functions.json and `CustomFunctions.associate`;
   * a result arriving recalculates (formulas are lazy, so the cells showing it read it next).
   */
  readonly customFunctions = new CustomFunctionHost(() => {
    this.calcGeneration++;
    this.notifyChanged();
  });
  /** Anchors of spilled arrays: cell key → the array (its top-left is the anchor's own value). */
  private readonly spills = new Map<string, { sheetId: string; r: number; c: number; values: CellValue[][] }>();
  /** The matrix the last custom function call returned, for the cell being calculated. */
  private arrayResult: { key: string; values: CellValue[][] } | null = null;

  /** Called by the formula evaluator for `NAMESPACE.NAME(...)`; undefined when no such function is registered. */
  callCustomFunction(name: string, args: CellValue[], at: { sheet: SheetModel; row: number; col: number }): CellValue | undefined {
    if (!this.customFunctions.knows(name)) return undefined;
    const key = `${at.sheet.id}!${at.row},${at.col}`;
    const v = this.customFunctions.call(key, `${at.sheet.name}!${cellAddress(at.row, at.col)}`, name, args);
    if (!Array.isArray(v)) return v;
    this.arrayResult = { key, values: v };
    return v[0][0];
  }

  /**
   * A formula's matrix result spills from its cell (dynamic arrays): `#SPILL!` when a cell of the
   * spill range holds anything, lies in a table, or is off the sheet ("Return multiple results from
   * your custom function"; Excel's "#SPILL! error" page).
   */
  private applySpill(sheet: SheetModel, r: number, c: number, values: CellValue[][] | null, v: CellValue): CellValue {
    const key = `${sheet.id}!${r},${c}`;
    this.spills.delete(key);
    if (!values || (values.length === 1 && values[0].length === 1)) return v;
    const rect = { r0: r, c0: c, r1: r + values.length - 1, c1: c + values[0].length - 1 };
    if (rect.r1 >= MAX_ROWS || rect.c1 >= MAX_COLUMNS) return { error: "#SPILL!", message: "The spill range extends beyond the edge of the worksheet." };
    for (let rr = rect.r0; rr <= rect.r1; rr++) {
      for (let cc = rect.c0; cc <= rect.c1; cc++) {
        if (rr === r && cc === c) continue;
        if (sheet.cells.value(rr, cc) !== undefined || sheet.cells.formula(rr, cc) !== undefined) {
          return { error: "#SPILL!", message: `The spill range isn't blank (${cellAddress(rr, cc)} holds something).` };
        }
      }
    }
    if (this.tables.some((t) => t.sheetId === sheet.id && t.rect.r0 <= rect.r1 && rect.r0 <= t.rect.r1 && t.rect.c0 <= rect.c1 && rect.c0 <= t.rect.c1)) {
      return { error: "#SPILL!", message: "Spill ranges cannot be in a table." };
    }
    this.spills.set(key, { sheetId: sheet.id, r, c, values });
    return v;
  }

  /** The value a spilled array shows in an empty cell, or null. */
  private spilledValue(sheet: SheetModel, r: number, c: number): CellValue {
    if (this.spills.size === 0) return null;
    for (const [key, s] of [...this.spills]) {
      if (s.sheetId !== sheet.id || r < s.r || c < s.c || r >= s.r + s.values.length || c >= s.c + s.values[0].length) continue;
      if (sheet.cells.formula(s.r, s.c) === undefined) {
        this.spills.delete(key); // the anchor's formula is gone
        continue;
      }
      this.evaluateCell(sheet, s.r, s.c); // brings the anchor (and so its spill) up to date
      const now = this.spills.get(key);
      if (!now || r >= now.r + now.values.length || c >= now.c + now.values[0].length) continue;
      return now.values[r - now.r][c - now.c];
    }
    return null;
  }

  /** Rectangles of the arrays spilled on a sheet (the preview draws them; Excel's used range includes them). */
  spillRects(sheet: SheetModel): Rect[] {
    return [...this.spills.values()].filter((s) => s.sheetId === sheet.id && sheet.cells.formula(s.r, s.c) !== undefined).map((s) => ({ r0: s.r, c0: s.c, r1: s.r + s.values.length - 1, c1: s.c + s.values[0].length - 1 }));
  }

  /** Evaluated value of a cell (formulas are calculated lazily per calculation generation). */
  valueAt(sheet: SheetModel, r: number, c: number): CellValue {
    if (this.evalDepth > 0 || this.warming) return this.evaluateCell(sheet, r, c);
    try {
      return this.evaluateCell(sheet, r, c);
    } catch (e) {
      if (e !== TOO_DEEP) throw e;
    }
    // A long chain (e.g. running totals down 100k rows) would overflow the stack when read from the
    // end; calculating every formula top to bottom first keeps each evaluation shallow.
    this.warming = true;
    try {
      for (const s of this.sheets) {
        s.cells.forEachRow((r, row) => {
          if (row.f === null) return;
          for (let c = 0; c < row.f.length; c++) {
            if (row.f[c] === undefined) continue;
            try {
              this.evaluateCell(s, r, c);
            } catch (e) {
              if (e !== TOO_DEEP) throw e;
            }
          }
        });
      }
      return this.evaluateCell(sheet, r, c);
    } catch (e) {
      if (e === TOO_DEEP) return { error: "#NUM!" };
      throw e;
    } finally {
      this.warming = false;
    }
  }

  private evalDepth = 0;
  private warming = false;

  private evaluateCell(sheet: SheetModel, r: number, c: number): CellValue {
    const row = sheet.cells.row(r);
    if (row === undefined) return this.spilledValue(sheet, r, c);
    const f = row.f === null ? undefined : row.f[c];
    if (f === undefined) return row.v[c] ?? this.spilledValue(sheet, r, c);
    const cg = row.cg === null ? undefined : row.cg[c];
    const cv = row.cv === null ? undefined : row.cv[c];
    const forced = this.forcing !== null && this.forcing.has(sheet, r, c);
    if (!forced && (cg === this.calcGeneration || (cg !== undefined && !this.recalculates(sheet)))) return cv ?? null;
    if (this.evalDepth >= MAX_EVAL_DEPTH) throw TOO_DEEP;
    // Mark before evaluating so a circular reference reads the stale value instead of recursing forever.
    row.setCached(c, cv ?? 0, this.calcGeneration);
    this.evalDepth++;
    try {
      this.arrayResult = null;
      let v = evaluateFormula(f, { wb: this, sheet, row: r, col: c });
      const key = `${sheet.id}!${r},${c}`;
      const arr = this.arrayResult !== null && (this.arrayResult as { key: string }).key === key ? (this.arrayResult as { values: CellValue[][] }).values : null;
      this.arrayResult = null;
      if (arr || this.spills.size > 0) v = this.applySpill(sheet, r, c, arr, v);
      row.setCached(c, v, this.calcGeneration);
      return v;
    } catch (e) {
      row.setCached(c, cv, cg);
      throw e;
    } finally {
      this.evalDepth--;
    }
  }

  /** False when a formula on `sheet` keeps its last result: manual mode, or API calculation pending there. */
  private recalculates(sheet: SheetModel): boolean {
    return this.calculationMode !== "Manual" && !this.pendingSheets.has(sheet.id);
  }

  /**
   * Called after changes: in automatic mode formulas become stale (recalculated when read); in manual
   * mode, and on sheets waiting for a calculation, they keep their results (the generation still moves
   * on, so a later calculation of that sheet sees them stale). A change made while API calculation is
   * suspended leaves every formula with the result it had (see {@link pendingSheets}): their results
   * are fixed first (`beginBatch`).
   */
  invalidateCalculation(): void {
    if (this.calculationSuspended && this.calculationMode !== "Manual") {
      for (const s of this.sheets) this.pendingSheets.add(s.id);
    }
    this.calcGeneration++;
  }

  /**
   * Gives every formula a current result (what Excel shows before the change that follows): before a
   * suspended batch, and when the mode turns to manual (automatic mode had every formula current).
   */
  freezeResults(): void {
    if (this.calculationMode === "Manual") return;
    this.forEachFormula((s, r, c) => {
      if (this.recalculates(s)) void this.valueAt(s, r, c);
    });
  }

  /**
   * The cells a `Worksheet.calculate` / `Range.calculate` recalculates now, each once (before a cell of
   * the set that reads another of the set, that one), whatever the mode; null when none is running.
   */
  private forcing: { has(sheet: SheetModel, r: number, c: number): boolean } | null = null;

  /**
   * Recalculates the formulas of `rect` on `sheet` (the whole sheet when null) now: `Range.calculate`
   * ("Calculates a range of cells on a worksheet", ExcelApi 1.6) and `Worksheet.calculate(markAllDirty)`
   * ("Calculates all cells on a worksheet", ExcelApi 1.6). In manual mode too: that is what they are
   * for. A formula elsewhere that they read keeps the result it has (Excel calculates the cells asked
   * for, not their precedents on other sheets; VBA `Range.Calculate`: "Calculates … a specified range of
   * cells"). A worksheet calculated is no longer waiting for a suspended calculation; a range leaves its
   * sheet waiting (its other formulas keep their results). Recorded in `stats.calculations`.
   */
  calculateCells(sheet: SheetModel, rect: Rect | null, what: string): void {
    (this.stats.calculations ??= []).push(what);
    if (rect === null) this.pendingSheets.delete(sheet.id);
    const done = new Set<string>();
    const inScope = (s: SheetModel, r: number, c: number) => s === sheet && (rect === null || (r >= rect.r0 && r <= rect.r1 && c >= rect.c0 && c <= rect.c1));
    const outer = this.forcing;
    this.forcing = {
      has: (s, r, c) => {
        if (outer?.has(s, r, c)) return true;
        if (!inScope(s, r, c)) return false;
        const key = `${r},${c}`;
        if (done.has(key)) return false;
        done.add(key);
        return true;
      },
    };
    try {
      const area = rect ?? { r0: 0, c0: 0, r1: MAX_ROWS - 1, c1: MAX_COLUMNS - 1 };
      sheet.cells.forEachRow((r, row) => {
        if (row.f === null || r < area.r0 || r > area.r1) return;
        for (let c = area.c0; c <= Math.min(area.c1, row.f.length - 1); c++) {
          if (row.f[c] === undefined || done.has(`${r},${c}`)) continue;
          // A result already current in automatic mode is what a calculation gives (skipped: the same value).
          const cg = row.cg === null ? undefined : row.cg[c];
          if (cg === this.calcGeneration && this.recalculates(sheet)) continue;
          void this.valueAt(sheet, r, c);
        }
      });
    } finally {
      this.forcing = outer;
    }
  }

  /** Visits every formula cell of the workbook. */
  private forEachFormula(fn: (sheet: SheetModel, r: number, c: number, formula: string) => void): void {
    for (const s of this.sheets) {
      s.cells.forEachRow((r, row) => {
        if (row.f === null) return;
        for (let c = 0; c < row.f.length; c++) {
          const f = row.f[c];
          if (f !== undefined) fn(s, r, c, f);
        }
      });
    }
  }

  /**
   * Called by the request context before it applies a batch. Excel calculates after a batch, so a
   * `suspendApiCalculationUntilNextSync()` anywhere in it holds for every change of the batch: the
   * formulas' results are fixed before the first change is applied.
   */
  beginBatch(ops: ReadonlyArray<{ path: string; op: string }>): void {
    this.dirtySheets = new Set();
    if (!ops.some((o) => o.op === "suspendApiCalculationUntilNextSync")) return;
    this.freezeResults();
    this.calculationSuspended = true;
  }

  /** `application.calculate()`: recalculates everything regardless of mode (every open workbook, in Excel). */
  calculateAll(what = "application"): void {
    this.pendingSheets.clear();
    this.stats.calculateCalls = (this.stats.calculateCalls ?? 0) + 1;
    (this.stats.calculations ??= []).push(what);
    this.calcGeneration++;
    for (const s of this.sheets) s.cells.invalidateAll();
    if (this.eagerCalculation) this.evaluateEveryFormula();
  }

  /**
   * Called by the request context after it applied a batch: with `eagerCalculation`, a batch that
   * changed cells is followed by a calculation of every formula, as Excel's Automatic mode calculates
   * after a batch (not after one whose calculation was suspended).
   */
  endBatch(mutated: boolean): void {
    const dirty = this.dirtySheets;
    this.dirtySheets = new Set();
    if (this.eagerCalculation && mutated && !this.calculationSuspended && this.calculationMode !== "Manual") this.evaluateEveryFormula(dirty);
  }

  /** Sheets whose cells changed in the batch being applied (what Excel marks dirty, by sheet). */
  private dirtySheets = new Set<string>();
  /** The sheets a formula reads from (by its text and sheet), cached. */
  private precedents = new Map<string, Set<string>>();

  /**
   * Evaluates the formulas that read from one of `dirty` (every formula when not given): Excel
   * recalculates the dependents of changed cells; the emulator approximates "depends on" by sheet
   * (sheet-qualified references, the formula's own sheet for bare ones, a table's sheet for its
   * structured references, a defined name's sheets).
   */
  private evaluateEveryFormula(dirty?: Set<string>): void {
    let n = 0;
    this.forEachFormula((s, r, c, f) => {
      if (dirty && ![...this.precedentSheets(f, s)].some((id) => dirty.has(id))) return;
      this.valueAt(s, r, c);
      n++;
    });
    this.stats.formulaEvaluations = (this.stats.formulaEvaluations ?? 0) + n;
  }

  private precedentSheets(formula: string, host: SheetModel, depth = 0): Set<string> {
    const key = `${host.id}|${formula}`;
    const known = this.precedents.get(key);
    if (known) return known;
    const out = new Set<string>();
    rewriteReferences(formula, (sheet, rect) => {
      const s = sheet === undefined ? host : this.sheetByName(sheet);
      if (s) out.add(s.id);
      return rect;
    });
    for (const m of formula.matchAll(/([A-Za-z_\\][A-Za-z0-9_.]*)\[/g)) {
      const t = this.tableByName(m[1]);
      if (t) out.add(t.sheetId);
    }
    if (/(^|[^A-Za-z0-9_.\]])\[/.test(formula)) out.add(host.id);
    if (depth < 4) {
      for (const m of formula.matchAll(/[A-Za-z_\\][A-Za-z0-9_.]*/g)) {
        const nf = this.nameFormula(m[0], host);
        if (nf) for (const id of this.precedentSheets(nf, host, depth + 1)) out.add(id);
      }
    }
    this.precedents.set(key, out);
    return out;
  }

  private checkText(s: string): void {
    if (s.length > MAX_CELL_TEXT) throw invalidArgument(`A cell can hold at most ${MAX_CELL_TEXT} characters; got ${s.length}.`);
  }

  /**
   * Normalises a value for one cell, rejecting what Excel rejects. `null` means "leave unchanged".
   * Returns a function that stores the value so validation of the whole array happens first.
   */
  private validateInput(v: unknown, what: string): void {
    if (v === null || typeof v === "number" || typeof v === "boolean") return;
    if (typeof v === "string") return this.checkText(v);
    throw invalidArgument(`${what}: values must be numbers, strings, booleans or null; got ${Array.isArray(v) ? "an array" : typeof v}.`);
  }

  /**
   * Expands a 2-D input to the range size. A non-array value or a 1x1 array is applied to every cell;
   * otherwise the array must have exactly the range's dimensions (else InvalidArgument).
   */
  shapeInput(input: unknown, rect: Rect, prop: string): (r: number, c: number) => unknown {
    checkCellCount(rect, `Range.${prop}`);
    const rows = rectRows(rect);
    const cols = rectColumns(rect);
    if (!Array.isArray(input)) {
      if (input === null || input === undefined) throw invalidArgument(`Range.${prop} cannot be set to ${String(input)}.`);
      const only = toWireValue(input);
      return () => only;
    }
    if (input.length === 1 && Array.isArray(input[0]) && input[0].length === 1) {
      const only = toWireValue(input[0][0]);
      return () => only;
    }
    if (input.length !== rows || !input.every((row) => Array.isArray(row) && row.length === cols)) {
      const got = `${input.length}x${Array.isArray(input[0]) ? input[0].length : "?"}`;
      throw invalidArgument(
        `The number of rows or columns in the input array doesn't match the size or dimensions of the range (${prop}: range is ${rows}x${cols}, input is ${got}).`,
      );
    }
    return (r, c) => toWireValue((input[r] as unknown[])[c]);
  }

  /** Counts entries of a 2-D input that turn into null on the wire without being null. */
  private countLossy(input: unknown, rect: Rect): void {
    if (!Array.isArray(input)) return;
    let n = 0;
    for (const row of input) {
      if (!Array.isArray(row)) continue;
      for (const v of row) if (v !== null && toWireValue(v) === null) n++;
    }
    // A 1x1 array fills the whole range, so its one lossy entry leaves every cell unchanged.
    if (input.length === 1 && Array.isArray(input[0]) && input[0].length === 1 && n === 1) n = rectRows(rect) * rectColumns(rect);
    this.stats.lossyValuesWritten += n;
  }

  /** `Range.values = ...` */
  writeValues(sheet: SheetModel, rect: Rect, input: unknown): void {
    this.writeContents(sheet, rect, input, "values");
  }

  /** `Range.formulas = ...`: strings starting with `=` become formulas, anything else is typed input. */
  writeFormulas(sheet: SheetModel, rect: Rect, input: unknown): void {
    this.writeContents(sheet, rect, input, "formulas");
  }

  private writeContents(sheet: SheetModel, rect: Rect, input: unknown, prop: "values" | "formulas"): void {
    this.checkSheetEditable(sheet);
    assertOnGrid(rect);
    const at = this.shapeInput(input, rect, prop);
    const rows = rectRows(rect);
    const cols = rectColumns(rect);
    // A full-size 2-D array (every large write) is read directly: the same checks as through `at`,
    // without a closure call and wire conversion per cell per pass.
    const oneValue = Array.isArray(input) && input.length === 1 && Array.isArray(input[0]) && input[0].length === 1;
    const grid = Array.isArray(input) && !oneValue ? (input as unknown[][]) : null;
    if (grid) {
      for (let r = 0; r < rows; r++) {
        const src = grid[r];
        for (let c = 0; c < cols; c++) {
          const v = src[c];
          if (typeof v === "string") this.checkText(v);
          else if (typeof v !== "number" && typeof v !== "boolean" && v !== null) this.validateInput(toWireValue(v), `Range.${prop}[${r}][${c}]`);
        }
      }
    } else {
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) this.validateInput(at(r, c), `Range.${prop}[${r}][${c}]`);
    }
    this.countLossy(input, rect);
    for (let r = 0; r < rows; r++) {
      const row = sheet.cells.rowForWrite(rect.r0 + r);
      row.reserve(rect.c1 + 1);
      const src = grid ? grid[r] : null;
      for (let c = 0; c < cols; c++) {
        let v = src ? src[c] : at(r, c);
        if (src && typeof v !== "string" && typeof v !== "boolean" && !(typeof v === "number" && Number.isFinite(v))) v = toWireValue(v);
        if (v === null) continue;
        this.storeContent(row, rect.c0 + c, v as number | string | boolean);
      }
    }
    this.stats.cellsWritten += rows * cols;
    if (this.autoFillCalculatedColumns) this.autoFillFormulas(sheet, rect);
    this.afterWrite(sheet, rect);
  }

  /**
   * AutoCorrect's calculated columns: when the written cells of a table column all hold one formula
   * (relative to their rows) and the column's other body cells are empty, the formula fills them.
   */
  private autoFillFormulas(sheet: SheetModel, rect: Rect): void {
    for (const t of this.tables) {
      if (t.sheetId !== sheet.id) continue;
      const body = this.bodyRect(t);
      const hit = intersectRect(body, rect);
      if (!hit || (hit.r0 === body.r0 && hit.r1 === body.r1)) continue;
      for (let c = hit.c0; c <= hit.c1; c++) {
        let shared: string | null = null;
        for (let r = hit.r0; r <= hit.r1; r++) {
          const f = sheet.cells.formula(r, c);
          const rel = f === undefined ? null : translateFormula(f, body.r0 - r, 0);
          if (rel === null || (shared !== null && rel !== shared)) {
            shared = null;
            break;
          }
          shared = rel;
        }
        if (shared === null) continue;
        let othersEmpty = true;
        for (let r = body.r0; r <= body.r1 && othersEmpty; r++) {
          if (r >= hit.r0 && r <= hit.r1) continue;
          if (sheet.cells.value(r, c) !== undefined || sheet.cells.formula(r, c) !== undefined) othersEmpty = false;
        }
        if (!othersEmpty) continue;
        for (let r = body.r0; r <= body.r1; r++) {
          if (r >= hit.r0 && r <= hit.r1) continue;
          // The other cells are empty, so setting the formula replaces nothing else.
          this.putFormula(sheet.cells.rowForWrite(r), c, translateFormula(shared, r - body.r0, 0));
        }
      }
    }
  }

  /** Stores one typed value the way Excel does, honouring a text (`@`) number format. */
  setCellContent(sheet: SheetModel, r: number, c: number, v: number | string | boolean): void {
    this.storeContent(sheet.cells.rowForWrite(r), c, v);
  }

  private storeContent(row: RowCells, c: number, v: number | string | boolean): void {
    if (typeof v !== "string") {
      // Excel has no negative zero, and keeps 15 significant digits (docs: "Excel specifications and
      // limits", number precision): an integer of 16+ digits loses its tail, as typed input does.
      this.putConstant(row, c, v === 0 ? 0 : typeof v === "number" ? toFifteenDigits(v) : v);
      return;
    }
    const nf = row.nf === null ? undefined : row.nf[c];
    if (nf === TEXT_FORMAT) {
      this.putConstant(row, c, v === "" ? undefined : v);
      return;
    }
    const parsed = parseTypedInput(v, this.currentYear);
    switch (parsed.kind) {
      case "empty":
        this.putConstant(row, c, undefined);
        return;
      case "string":
        this.putConstant(row, c, parsed.value);
        return;
      case "boolean":
        this.putConstant(row, c, parsed.value);
        return;
      case "error":
        this.putConstant(row, c, { error: parsed.value });
        return;
      case "formula":
        this.putFormula(row, c, parsed.formula);
        return;
      case "number": {
        // Typed dates are serials of the workbook's own date system; a date before 1904-01-01 in a
        // 1904 workbook has no serial and stays text, as one before 1900 does in the 1900 system.
        const isDate = parsed.format !== undefined && /[dy]/.test(parsed.format);
        if (this.date1904 && isDate && parsed.value - DATE1904_OFFSET < 0) {
          this.putConstant(row, c, v);
          return;
        }
        this.putConstant(row, c, this.date1904 && isDate ? parsed.value - DATE1904_OFFSET : parsed.value);
        // Excel picks a format for recognised input (dates, percents, ...) only while the cell is General.
        if (parsed.format !== undefined && (nf === undefined || nf === GENERAL)) row.setFormat(c, parsed.format);
        return;
      }
    }
  }

  /** `Range.numberFormat = ...`: `null` keeps a cell's format, `""` resets it to General. */
  writeNumberFormat(sheet: SheetModel, rect: Rect, input: unknown): void {
    this.checkSheetEditable(sheet, "format");
    assertOnGrid(rect);
    const at = this.shapeInput(input, rect, "numberFormat");
    const rows = rectRows(rect);
    const cols = rectColumns(rect);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = at(r, c);
        if (v !== null && typeof v !== "string") {
          throw invalidArgument(`Range.numberFormat[${r}][${c}] must be a string or null; got ${typeof v}.`);
        }
      }
    }
    // One format for the whole range (the documented single-value form): rows share format arrays.
    const single = !Array.isArray(input) || (input.length === 1 && Array.isArray(input[0]) && input[0].length === 1);
    const only = single ? (at(0, 0) as string | null) : null;
    const fill = only !== null ? new FormatFill(rect.c0, rect.c1, only === "" || only === GENERAL ? undefined : only) : null;
    for (let r = 0; r < rows && !(single && only === null); r++) {
      const row = sheet.cells.rowForWrite(rect.r0 + r);
      if (fill) {
        fill.apply(row);
        continue;
      }
      for (let c = 0; c < cols; c++) {
        const v = at(r, c) as string | null;
        if (v === null) continue;
        row.setFormat(rect.c0 + c, v === "" || v === GENERAL ? undefined : v);
      }
    }
    this.stats.cellsWritten += rows * cols;
    this.afterWrite(sheet, rect);
  }

  /** `Range.clear(applyTo)`. */
  clear(sheet: SheetModel, rect: Rect, applyTo: ClearApplyTo = "All"): void {
    this.checkSheetEditable(sheet, applyTo === "Formats" ? "format" : "cells");
    assertOnGrid(rect);
    const contents = applyTo === "All" || applyTo === "Contents";
    const formats = applyTo === "All" || applyTo === "Formats";
    if (!contents && !formats) return;
    sheet.cells.forEachRow((_, row) => {
      const end = Math.min(rect.c1 + 1, row.width());
      for (let c = rect.c0; c < end; c++) {
        if (contents) this.putConstant(row, c, undefined);
        if (formats) row.setFormat(c, undefined);
      }
    }, rect.r0, rect.r1);
    if (formats) this.clearFill(sheet, rect);
    this.afterWrite(sheet, rect);
  }

  // ---------- conditional formats (Range.conditionalFormats, ExcelApi 1.6) ----------
  // https://learn.microsoft.com/en-us/javascript/api/excel/excel.conditionalformatcollection: the
  // collection holds "all the conditional formats that overlap the range"; `add(type)` puts the new
  // one "at the first/top priority". Only `Custom` (a formula rule) is emulated; other types are
  // refused (stricter). https://learn.microsoft.com/en-us/javascript/api/excel/excel.conditionalformatrule:
  // `formula` is the rule's formula; office-js #5194 (by design): it is read and written relative to
  // the top-left cell of the range the format was fetched through. Excel shows a conditional
  // format's fill over the cell's own fill, which stays as it is (the add-in relies on that).

  /** The sheet's conditional formats that overlap `rect`, top priority first. */
  conditionalFormatsOver(sheet: SheetModel, rect: Rect): ConditionalFormatModel[] {
    return (sheet.conditionalFormats ?? []).filter((cf) => rectsOverlap(cf.rect, rect));
  }

  requireConditionalFormat(sheet: SheetModel, id: string): ConditionalFormatModel {
    const cf = (sheet.conditionalFormats ?? []).find((x) => x.id === id);
    if (!cf) throw itemNotFound("The conditional format has been deleted.");
    return cf;
  }

  /** `range.conditionalFormats.add(type)`: a new format over `rect`, at the top priority. */
  addConditionalFormat(sheet: SheetModel, rect: Rect, type: unknown): ConditionalFormatModel {
    this.checkSheetEditable(sheet, "format");
    assertOnGrid(rect);
    if (type !== "Custom") throw invalidArgument(`conditionalFormats.add: only the "Custom" type is emulated (got ${JSON.stringify(type)}).`);
    const cf: ConditionalFormatModel = { id: guid(this.nextSeq(), 3), type: "Custom", rect: { ...rect }, formula: null, fill: null, stopIfTrue: false };
    (sheet.conditionalFormats ??= []).unshift(cf);
    return cf;
  }

  deleteConditionalFormat(sheet: SheetModel, id: string): void {
    this.checkSheetEditable(sheet, "format");
    const cf = this.requireConditionalFormat(sheet, id);
    sheet.conditionalFormats!.splice(sheet.conditionalFormats!.indexOf(cf), 1);
  }

  /** `custom.rule.formula` as seen from a range whose top-left cell is `anchor`. */
  readConditionalFormula(cf: ConditionalFormatModel, anchor: { r: number; c: number }): string | null {
    return cf.formula === null ? null : translateFormula(cf.formula, anchor.r - cf.rect.r0, anchor.c - cf.rect.c0);
  }

  /** `custom.rule.formula = f`, `f` written for the cell `anchor` (the top-left of the range it was fetched through). */
  writeConditionalFormula(cf: ConditionalFormatModel, formula: unknown, anchor: { r: number; c: number }): void {
    this.checkConditionalFormatEditable(cf);
    // Stricter than Excel, which may accept a bare value: a rule is a formula here.
    if (typeof formula !== "string" || !formula.startsWith("=") || formula.length < 2) throw invalidArgument(`ConditionalFormatRule.formula must be a formula starting with "="; got ${JSON.stringify(formula)}.`);
    cf.formula = translateFormula(formula, cf.rect.r0 - anchor.r, cf.rect.c0 - anchor.c);
  }

  /** `custom.format.fill.color = "#RRGGBB"` (named colours refused, as for cell fills). */
  writeConditionalFill(cf: ConditionalFormatModel, color: unknown): void {
    this.checkConditionalFormatEditable(cf);
    if (typeof color !== "string" || !/^#[0-9A-Fa-f]{6}$/.test(color)) {
      throw invalidArgument(`ConditionalRangeFill.color must be "#RRGGBB" in the emulator; got ${JSON.stringify(color)}.`);
    }
    cf.fill = color.toUpperCase();
  }

  /**
   * The fill conditional formatting gives a cell, or null: the formats covering it are tried top
   * priority first, each rule evaluated for this cell (its relative references moved by the cell's
   * offset from the range's top-left); a rule that is TRUE or a non-zero number applies (an error or
   * text does not). The first applying format with a fill wins; one that applies with "stop if true"
   * ends the search. The preview grid draws this over the cell's own fill, as Excel shows it.
   */
  conditionalFillAt(sheet: SheetModel, r: number, c: number): string | null {
    for (const cf of sheet.conditionalFormats ?? []) {
      if (cf.formula === null || !rectContains(cf.rect, r, c)) continue;
      let v: CellValue;
      try {
        v = evaluateFormula(translateFormula(cf.formula, r - cf.rect.r0, c - cf.rect.c0), { wb: this, sheet, row: r, col: c });
      } catch (e) {
        if (e === TOO_DEEP) continue;
        throw e;
      }
      const applies = v === true || (typeof v === "number" && v !== 0);
      if (!applies) continue;
      if (cf.fill) return cf.fill;
      if (cf.stopIfTrue) return null;
    }
    return null;
  }

  // ---------- fills (Range.format.fill) ----------
  // https://learn.microsoft.com/en-us/javascript/api/excel/excel.rangefill: `color` is "#RRGGBB" or
  // an HTML colour name; null properties mean "not uniform over the range". No Fill reads as color
  // "#FFFFFF" like white does (office-js #6218); `tintAndShade` is null for No Fill and a number for
  // a fill, which is how an add-in tells them apart (office-js #4900). Named colours are refused here
  // (stricter): the add-in writes "#RRGGBB" only.

  /** The fill of one cell: its colour, or undefined for No Fill. */
  fillAt(sheet: SheetModel, row: number, col: number): string | undefined {
    return sheet.fills?.get(`${row},${col}`);
  }

  /** `Range.format.fill.color/pattern/tintAndShade` of a range (null when not uniform). */
  readFill(sheet: SheetModel, rect: Rect): { color: string | null; pattern: string | null; tintAndShade: number | null } {
    assertOnGrid(rect);
    let first: string | undefined | null = null;
    let seen = false;
    for (let r = rect.r0; r <= rect.r1; r++) {
      for (let c = rect.c0; c <= rect.c1; c++) {
        const f = this.fillAt(sheet, r, c);
        if (!seen) {
          first = f;
          seen = true;
        } else if (f !== first) {
          return { color: null, pattern: null, tintAndShade: null };
        }
      }
    }
    return first === undefined || first === null ? { color: "#FFFFFF", pattern: "None", tintAndShade: null } : { color: first, pattern: "Solid", tintAndShade: 0 };
  }

  /** `Range.format.fill.color = "#RRGGBB"`: a solid fill on every cell of the range. */
  writeFillColor(sheet: SheetModel, rect: Rect, color: unknown): void {
    this.checkSheetEditable(sheet, "format");
    assertOnGrid(rect);
    if (typeof color !== "string" || !/^#[0-9A-Fa-f]{6}$/.test(color)) {
      throw invalidArgument(`RangeFill.color must be "#RRGGBB" in the emulator; got ${JSON.stringify(color)}.`);
    }
    if ((rect.r1 - rect.r0 + 1) * (rect.c1 - rect.c0 + 1) > 1_000_000) throw invalidArgument("RangeFill.color: the emulator fills at most 1,000,000 cells at once.");
    sheet.fills ??= new Map();
    for (let r = rect.r0; r <= rect.r1; r++) for (let c = rect.c0; c <= rect.c1; c++) sheet.fills.set(`${r},${c}`, color.toUpperCase());
  }

  /** `Range.format.fill.clear()` (and `Range.clear("Formats")`): No Fill. */
  clearFill(sheet: SheetModel, rect: Rect): void {
    this.checkSheetEditable(sheet, "format");
    if (!sheet.fills) return;
    for (const key of [...sheet.fills.keys()]) {
      const [r, c] = key.split(",").map(Number);
      if (r >= rect.r0 && r <= rect.r1 && c >= rect.c0 && c <= rect.c1) sheet.fills.delete(key);
    }
  }

  /** True when the cell holds a formula (the evaluator's ISFORMULA). */
  hasFormula(sheet: SheetModel, r: number, c: number): boolean {
    return sheet.cells.formula(r, c) !== undefined;
  }

  /** Visits stored cells inside a rectangle in row-major order (the cell passed is a copy). */
  forEachStoredCell(sheet: SheetModel, rect: Rect, fn: (r: number, c: number, cell: Cell) => void): void {
    sheet.cells.forEach(fn, rect);
  }

  /** Keeps table headers valid after a write and marks formulas stale. */
  private afterWrite(sheet: SheetModel, rect: Rect): void {
    this.dirtySheets.add(sheet.id);
    for (const t of this.tables) {
      if (t.sheetId !== sheet.id) continue;
      const header: Rect = { r0: t.rect.r0, c0: t.rect.c0, r1: t.rect.r0, c1: t.rect.c1 };
      if (rectsOverlap(header, rect)) this.normalizeHeaders(t);
    }
    this.invalidateCalculation();
  }

  /**
   * Table AutoExpansion: values written into the row right below a table (in its columns) or the column
   * right of it (in its rows) become part of the table, as when typing there (docs: "Excel performance"
   * / AutoCorrect "Include new rows and columns in table"; office-js #3191 shows API writes below a
   * table landing partly inside it). Called for API writes only (`Range.values`/`formulas`), never for
   * test set-up (`seed`). A table with a totals row does not grow downwards; growth into another table
   * does not happen.
   */
  autoExpandTables(sheet: SheetModel, rect: Rect): void {
    const nonEmpty = (r: number, c: number) => sheet.cells.value(r, c) !== undefined || sheet.cells.formula(r, c) !== undefined;
    for (const t of this.tables) {
      if (t.sheetId !== sheet.id) continue;
      let grown: Rect | null = null;
      if (!t.showTotals && rect.r0 === t.rect.r1 + 1 && rect.c0 <= t.rect.c1 && rect.c1 >= t.rect.c0) {
        let hit = false;
        for (let c = Math.max(rect.c0, t.rect.c0); c <= Math.min(rect.c1, t.rect.c1) && !hit; c++) hit = nonEmpty(rect.r0, c);
        if (hit) grown = { ...t.rect, r1: rect.r1 };
      } else if (rect.c0 === t.rect.c1 + 1 && rect.r0 <= t.rect.r1 && rect.r1 >= t.rect.r0) {
        let hit = false;
        for (let r = Math.max(rect.r0, t.rect.r0); r <= Math.min(rect.r1, t.rect.r1) && !hit; r++) hit = nonEmpty(r, rect.c0);
        if (hit) grown = { ...t.rect, c1: rect.c1 };
      }
      if (!grown) continue;
      if (this.tables.some((o) => o !== t && o.sheetId === sheet.id && rectsOverlap(o.rect, grown))) continue;
      // Calculated columns extend into rows the table grows by, as they do when typing below a table.
      const calculated = grown.r1 > t.rect.r1 ? t.columns.map((_, i) => this.calculatedFormula(t, i)) : [];
      const oldBody = this.bodyRect(t);
      for (let c = t.rect.c1 + 1; c <= grown.c1; c++) t.columns.push({ id: t.nextColumnId++, name: "" });
      t.rect = grown;
      if (calculated.length) {
        // Only the empty cells of a calculated column take its formula; written cells keep what was written.
        calculated.forEach((f, i) => {
          if (f === null) return;
          const c = t.rect.c0 + i;
          for (let r = oldBody.r1 + 1; r <= grown.r1; r++) {
            if (sheet.cells.value(r, c) === undefined && sheet.cells.formula(r, c) === undefined) this.putFormula(sheet.cells.rowForWrite(r), c, translateFormula(f, r - oldBody.r0, 0));
          }
        });
      }
      this.normalizeHeaders(t);
    }
  }

  /**
   * `Range.copyFrom(source, copyType)` (ExcelApi 1.9) with the destination's top-left cell as anchor and
   * the source's size. `Values` pastes evaluated values as constants (text is never parsed, so `=x`
   * stays text); `Formulas` pastes formulas (relative references moved by the offset) and constants;
   * `Formats` pastes number formats and fills (Excel's "Formats" paste is all formatting: docs
   * Excel.RangeCopyType "formats"); `All` both. Blank source cells clear the destination cell.
   */
  copyRange(src: SheetModel, from: Rect, dst: SheetModel, at: { r: number; c: number }, copyType: "All" | "Formulas" | "Values" | "Formats"): Rect {
    this.checkSheetEditable(dst, copyType === "Formats" ? "format" : "cells");
    const rows = rectRows(from), cols = rectColumns(from);
    const to: Rect = { r0: at.r, c0: at.c, r1: at.r + rows - 1, c1: at.c + cols - 1 };
    assertOnGrid(to, "copyFrom destination");
    checkCellCount(from, "Range.copyFrom");
    const contents = copyType !== "Formats";
    const formats = copyType === "All" || copyType === "Formats";
    const dr = to.r0 - from.r0, dc = to.c0 - from.c0;
    // Read everything first: source and destination may be the same sheet.
    const cells: Array<{ v?: StoredValue; f?: string; nf?: string }> = [];
    for (let r = from.r0; r <= from.r1; r++) {
      for (let c = from.c0; c <= from.c1; c++) {
        const f = src.cells.formula(r, c);
        let v: StoredValue | undefined;
        if (copyType === "Values") {
          const val = this.valueAt(src, r, c);
          v = val === null ? undefined : (val);
        } else v = f === undefined ? src.cells.value(r, c) : undefined;
        cells.push({ v, f: copyType === "Values" || f === undefined ? undefined : translateFormula(f, dr, dc), nf: src.cells.format(r, c) });
      }
    }
    let i = 0;
    for (let r = to.r0; r <= to.r1; r++) {
      const row = dst.cells.rowForWrite(r);
      row.reserve(to.c1 + 1);
      for (let c = to.c0; c <= to.c1; c++, i++) {
        const cell = cells[i];
        if (contents) {
          if (cell.f !== undefined) this.putFormula(row, c, cell.f);
          else this.putConstant(row, c, cell.v);
        }
        if (formats) row.setFormat(c, cell.nf);
      }
    }
    if (formats) {
      const fills: Array<[number, number, string]> = [];
      for (const [key, color] of src.fills ?? []) {
        const [r, c] = key.split(",").map(Number);
        if (r >= from.r0 && r <= from.r1 && c >= from.c0 && c <= from.c1) fills.push([r + dr, c + dc, color]);
      }
      this.clearFill(dst, to);
      if (fills.length) dst.fills ??= new Map();
      for (const [r, c, color] of fills) dst.fills!.set(`${r},${c}`, color);
    }
    this.stats.cellsCopied += rows * cols;
    this.stats.copyFromCalls++;
    this.afterWrite(dst, to);
    return to;
  }

  // ---------- reading ----------

  /** `Range.values`. */
  readValues(sheet: SheetModel, rect: Rect): Array<Array<number | string | boolean>> {
    return this.readGrid(sheet, rect, (r, c) => toApiValue(this.valueAt(sheet, r, c)));
  }
  /** `Range.formulas`: the formula where there is one, else the constant value. */
  readFormulas(sheet: SheetModel, rect: Rect): Array<Array<number | string | boolean>> {
    return this.readGrid(sheet, rect, (r, c) => {
      const f = sheet.cells.formula(r, c);
      if (f !== undefined) return f;
      return toApiValue(sheet.cells.value(r, c) ?? null);
    });
  }
  readNumberFormat(sheet: SheetModel, rect: Rect): string[][] {
    return this.readGrid(sheet, rect, (r, c) => this.numberFormatAt(sheet, r, c));
  }
  readText(sheet: SheetModel, rect: Rect): string[][] {
    return this.readGrid(sheet, rect, (r, c) => this.textAt(sheet, r, c));
  }
  readValueTypes(sheet: SheetModel, rect: Rect): string[][] {
    return this.readGrid(sheet, rect, (r, c) => valueTypeOf(this.valueAt(sheet, r, c)));
  }
  textAt(sheet: SheetModel, r: number, c: number): string {
    const v = this.valueAt(sheet, r, c);
    if (isCellError(v)) return v.error;
    return formatCellText(v, this.numberFormatAt(sheet, r, c), this.date1904);
  }

  /**
   * A cell property of a range, row by row. Above five million cells Excel's get limit applies, and
   * `Range.values` (and the other cell properties) may come back `null` instead of failing
   * (office-js #4783, #6781; learn.microsoft.com "Excel JavaScript API performance optimization",
   * payload size limit: "Range.values returns null instead"): the emulator always answers `null`,
   * the case a reader must handle.
   */
  private readGrid<T>(sheet: SheetModel, rect: Rect, fn: (r: number, c: number) => T): T[][] {
    if (rectRows(rect) * rectColumns(rect) > MAX_CELLS_PER_OPERATION) return null as unknown as T[][];
    const out: T[][] = [];
    for (let r = rect.r0; r <= rect.r1; r++) {
      const row = new Array<T>(rectColumns(rect));
      for (let c = rect.c0; c <= rect.c1; c++) row[c - rect.c0] = fn(r, c);
      out.push(row);
    }
    return out;
  }

  /**
   * `usedRect(sheet, valuesOnly)` ∩ `rect`, the same answer, without visiting every row when the used
   * rows end above `rect` or start below it (a write block's probe below the rows written so far:
   * the emulator's own cost, not Excel's, which the bench counts as host time). Spills and, unless
   * `valuesOnly`, tables count as in `usedRect`.
   */
  usedRectMeeting(sheet: SheetModel, rect: Rect, valuesOnly = false): Rect | null {
    const cells = sheet.cells;
    const usedRow = (r: number): boolean => {
      const row = cells.row(r);
      if (row === undefined) return false;
      const width = row.width();
      for (let c = 0; c < width; c++) if (row.used(c, valuesOnly)) return true;
      return false;
    };
    const extra = [...this.spillRects(sheet), ...(valuesOnly ? [] : this.tables.filter((t) => t.sheetId === sheet.id).map((t) => t.rect))];
    let last = -1;
    for (let r = cells.rowLimit() - 1; r >= 0; r--) {
      if (usedRow(r)) {
        last = r;
        break;
      }
    }
    for (const x of extra) last = Math.max(last, x.r1);
    if (last < rect.r0) return null;
    let first = -1;
    for (let r = 0; r <= last; r++) {
      if (usedRow(r)) {
        first = r;
        break;
      }
    }
    for (const x of extra) first = first < 0 ? x.r0 : Math.min(first, x.r0);
    if (first < 0 || first > rect.r1) return null;
    const used = this.usedRect(sheet, valuesOnly);
    return used ? intersectRect(used, rect) : null;
  }

  /** Bounding rectangle of used cells; `valuesOnly` ignores formatting-only cells and table outlines. */
  usedRect(sheet: SheetModel, valuesOnly = false): Rect | null {
    let r0 = Infinity, c0 = Infinity, r1 = -1, c1 = -1;
    sheet.cells.forEachRow((r, row) => {
      // Only the row's first and last used columns can move the bounds.
      const width = row.width();
      let first = -1;
      for (let c = 0; c < width; c++) if (row.used(c, valuesOnly)) { first = c; break; }
      if (first < 0) return;
      let last = first;
      for (let c = width - 1; c > first; c--) if (row.used(c, valuesOnly)) { last = c; break; }
      if (r < r0) r0 = r;
      if (r > r1) r1 = r;
      if (first < c0) c0 = first;
      if (last > c1) c1 = last;
    });
    for (const x of this.spillRects(sheet)) {
      r0 = Math.min(r0, x.r0); c0 = Math.min(c0, x.c0);
      r1 = Math.max(r1, x.r1); c1 = Math.max(c1, x.c1);
    }
    if (!valuesOnly) {
      for (const t of this.tables) {
        if (t.sheetId !== sheet.id) continue;
        r0 = Math.min(r0, t.rect.r0); c0 = Math.min(c0, t.rect.c0);
        r1 = Math.max(r1, t.rect.r1); c1 = Math.max(c1, t.rect.c1);
      }
    }
    if (r1 < 0) return null;
    return { r0, c0, r1, c1 };
  }

  // ---------- tables ----------

  tableById(id: string): TableModel | undefined {
    return this.tables.find((t) => t.id === id);
  }
  tableByName(name: string): TableModel | undefined {
    const lower = name.toLowerCase();
    return this.tables.find((t) => t.name.toLowerCase() === lower);
  }
  requireTableId(id: string): TableModel {
    const t = this.tableById(id);
    if (!t) throw itemNotFound("The table has been deleted.");
    return t;
  }

  /**
   * A table's name must be free among tables and defined names of every scope (B5: one namespace with
   * defined names, workbook- and sheet-scoped). A defined name (`scope`: its sheet, or null for the
   * workbook) must be free among tables and the names of its own scope only: Excel keeps a name per
   * scope, so a workbook-level `Rate` and `Sheet1!Rate` coexist and the sheet's own one wins on its
   * sheet (support.microsoft.com KB Q104501, "XL: Making All Identical Names in a Workbook Local":
   * "a defined name can be either global or local … Local names take precedence over global names").
   */
  private checkNameFree(name: string, self?: TableModel, scope?: SheetModel | null): void {
    const lower = name.toLowerCase();
    const clash = this.tables.find((t) => t !== self && t.name.toLowerCase() === lower);
    const same = (names: readonly string[] | undefined) => (names ?? []).some((n) => n.toLowerCase() === lower);
    const named = scope === undefined ? this.sheets.some((s) => same(s.names)) || same(this.definedNames) : scope === null ? same(this.definedNames) : same(scope.names);
    if (clash || named) {
      throw itemAlreadyExists(
        scope === undefined || clash
          ? `The name '${name}' is already used by a table or defined name in this workbook.`
          : `The name '${name}' already exists ${scope === null ? "in this workbook" : `on the sheet '${scope.name}'`}.`,
      );
    }
  }

  /**
   * Add a defined name, workbook-level or scoped to a sheet (the host's `names.add`, and a test
   * helper). A name is unique within its scope and among tables ({@link checkNameFree}).
   */
  addDefinedName(name: string, sheetName?: string, formula?: string): void {
    validateTableName(name);
    this.checkNameFree(name, undefined, sheetName === undefined ? null : this.requireSheet(sheetName));
    if (formula !== undefined && (typeof formula !== "string" || !formula.startsWith("=") || formula.length < 2)) {
      throw invalidArgument(`A name refers to a formula starting with "="; got ${JSON.stringify(formula)}.`);
    }
    const sheet = sheetName === undefined ? undefined : this.requireSheet(sheetName);
    if (!sheet) this.definedNames.push(name);
    else (sheet.names ??= []).push(name);
    if (formula !== undefined) this.nameFormulas.set(`${sheet?.id ?? ""}|${name.toLowerCase()}`, { name, formula, ...(sheet ? { sheetId: sheet.id } : {}) });
  }

  /**
   * What a defined name refers to for a formula on `sheet` (`NamedItem.formula`, ExcelApi 1.4): the
   * sheet's own scoped name first, then the workbook's; undefined for no such name.
   */
  nameFormula(name: string, sheet: SheetModel | null): string | undefined {
    const lower = name.toLowerCase();
    return (sheet ? this.nameFormulas.get(`${sheet.id}|${lower}`) : undefined)?.formula ?? this.nameFormulas.get(`|${lower}`)?.formula;
  }

  private checkNoTableOverlap(sheet: SheetModel, rect: Rect, self?: TableModel): void {
    for (const t of this.tables) {
      if (t === self || t.sheetId !== sheet.id) continue;
      if (rectsOverlap(t.rect, rect)) {
        throw invalidOperation(`The range overlaps the table '${t.name}'. Tables cannot overlap other tables.`);
      }
    }
  }

  headerText(v: CellValue, sheet: SheetModel, r: number, c: number): string {
    if (v === null) return "";
    if (typeof v === "string") return v;
    if (isCellError(v)) return v.error;
    return formatCellText(v, this.numberFormatAt(sheet, r, c), this.date1904);
  }

  /**
   * Excel keeps header cells as unique, non-empty text: an empty header becomes `ColumnN` (N = its
   * position), a duplicate (case-insensitive) gets the lowest free suffix from 2 (`Name`, `Name2`).
   */
  normalizeHeaders(t: TableModel): void {
    const sheet = this.requireSheetId(t.sheetId);
    const used = new Set<string>();
    const r = t.rect.r0;
    t.columns.forEach((col, i) => {
      const c = t.rect.c0 + i;
      let name = this.headerText(this.valueAt(sheet, r, c), sheet, r, c);
      if (name === "") {
        let n = i + 1;
        while (used.has(`column${n}`)) n++;
        name = `Column${n}`;
      } else if (used.has(name.toLowerCase())) {
        let n = 2;
        while (used.has(`${name}${n}`.toLowerCase())) n++;
        name = `${name}${n}`;
      }
      used.add(name.toLowerCase());
      col.name = name;
      this.putConstant(sheet.cells.rowForWrite(r), c, name);
    });
  }

  /** `tables.add(address, hasHeaders)`. */
  addTable(sheet: SheetModel, rect: Rect, hasHeaders: boolean): TableModel {
    this.checkSheetEditable(sheet);
    assertOnGrid(rect);
    if (typeof hasHeaders !== "boolean") throw invalidArgument("tables.add: hasHeaders must be a boolean.");
    let tableRect = { ...rect };
    if (!hasHeaders) {
      // Excel inserts a header row above the data, shifting the data down one row within these columns.
      if (tableRect.r1 + 1 >= MAX_ROWS) throw invalidArgument("There is no room below the range to insert a header row.");
      tableRect = { ...rect, r1: rect.r1 + 1 };
    } else if (rectRows(rect) === 1) {
      // A table always has at least one data row.
      if (rect.r1 + 1 >= MAX_ROWS) throw invalidArgument("There is no room for the table's data row.");
      tableRect = { ...rect, r1: rect.r1 + 1 };
    }
    this.checkNoTableOverlap(sheet, tableRect);
    if (!hasHeaders) this.shiftDown(sheet, rect);
    let n = 1;
    while (this.tableByName(`Table${n}`) || this.definedNames.some((d) => d.toLowerCase() === `table${n}`)) n++;
    const cols = rectColumns(tableRect);
    const t: TableModel = {
      id: guid(this.nextSeq(), 2),
      name: `Table${n}`,
      sheetId: sheet.id,
      rect: tableRect,
      showTotals: false,
      style: "TableStyleMedium2",
      columns: Array.from({ length: cols }, (_, i) => ({ id: i + 1, name: "" })),
      nextColumnId: cols + 1,
      sort: null,
      filters: new Map(),
    };
    this.tables.push(t);
    this.normalizeHeaders(t);
    this.invalidateCalculation();
    return t;
  }

  /** Moves the cells of `rect`'s columns from `rect.r0` downwards one row (for an inserted header row). */
  private shiftDown(sheet: SheetModel, rect: Rect): void {
    this.moveCells(sheet, { r0: rect.r0, c0: rect.c0, r1: MAX_ROWS - 1, c1: rect.c1 }, 1, 0);
  }

  /**
   * Moves every stored cell of `area` by (dr, dc), translating relative references in formulas. Fails
   * before changing anything when a cell would leave the grid.
   */
  private moveCells(sheet: SheetModel, area: Rect, dr: number, dc: number, translate = true): void {
    const moved: Array<[number, number, Cell]> = [];
    sheet.cells.forEach((r, c, cell) => moved.push([r, c, cell]), area);
    if (moved.some(([r, c]) => r + dr >= MAX_ROWS || c + dc >= MAX_COLUMNS)) throw invalidArgument("Cells would be shifted off the worksheet.");
    for (const [r, c] of moved) sheet.cells.take(r, c);
    for (const [r, c, cell] of moved) {
      if (cell.f !== undefined && translate) cell.f = translateFormula(cell.f, dr, dc);
      sheet.cells.put(r + dr, c + dc, cell);
    }
  }

  /**
   * After cells of one sheet were inserted or deleted: every reference to the moved cells follows them,
   * wherever it is — formulas on every sheet (the moved cells' own included), conditional formats
   * (their ranges and rules) and defined names — and a reference to deleted cells becomes `#REF!`.
   * That is Excel's behaviour for inserted and deleted cells (a formula such as `=SUM(F5:F24)` grows to
   * `=SUM(F5:F25)` when a row is inserted inside its range; support.microsoft.com "Move or copy cells,
   * rows, and columns" / "Insert or delete cells, rows, and columns").
   */
  private adjustReferences(shift: CellShift): void {
    for (const s of this.sheets) {
      s.cells.forEachRow((_, row) => {
        if (row.f === null) return;
        for (let c = 0; c < row.f.length; c++) {
          const f = row.f[c];
          if (f === undefined) continue;
          const g = adjustFormulaForShift(f, s.name, shift);
          if (g !== f) {
            row.setFormula(c, g);
            row.uncache(c);
          }
        }
      });
      if (s.conditionalFormats?.length) {
        const kept: ConditionalFormatModel[] = [];
        for (const cf of s.conditionalFormats) {
          const rect = s.name.toLowerCase() === shift.sheetName.toLowerCase() ? shiftRect(cf.rect, shift) : cf.rect;
          if (rect === null) continue; // every cell it applied to was deleted
          if (cf.formula !== null) cf.formula = adjustFormulaForShift(cf.formula, s.name, shift);
          cf.rect = { ...rect };
          kept.push(cf);
        }
        s.conditionalFormats = kept;
      }
    }
    for (const [key, nf] of this.nameFormulas) {
      const scope = nf.sheetId === undefined ? null : (this.sheetById(nf.sheetId)?.name ?? null);
      // A workbook-scoped name's references name their sheet; a sheet-scoped name's bare ones mean its sheet.
      this.nameFormulas.set(key, { ...nf, formula: adjustFormulaForShift(nf.formula, scope, shift) });
    }
  }

  /**
   * `Range.insert("Down")` / `Range.delete("Up")` (ExcelApi 1.1,
   * https://learn.microsoft.com/en-us/javascript/api/excel/excel.range#excel-excel-range-insert-member(1),
   * https://learn.microsoft.com/en-us/office/dev/add-ins/excel/excel-add-ins-ranges-insert): the cells
   * of the range's columns below it move down (insert) or up (delete); inserted cells are empty and
   * General (whether Excel copies the format of the row above is not documented for the API: the
   * stricter choice, nothing, makes a writer set formats itself). Tables: a range spanning exactly a
   * table's columns and inside its body grows or shrinks it (as inserting table rows in the UI); a
   * table wholly below moves with the cells; any other overlap is refused as Excel refuses shifting
   * part of a table. At least one body row stays (stricter than Excel, which would delete the table's
   * rows down to an empty one). Only the Down/Up directions are emulated.
   */
  shiftCells(sheet: SheetModel, rect: Rect, direction: unknown, kind: "insert" | "delete"): void {
    this.checkSheetEditable(sheet);
    this.dirtySheets.add(sheet.id);
    const expected = kind === "insert" ? "Down" : "Up";
    if (direction !== expected) throw invalidArgument(`Range.${kind}: only shift '${expected}' is emulated (got '${String(direction)}').`);
    assertOnGrid(rect);
    const n = rectRows(rect);
    const dr = kind === "insert" ? n : -n;
    const below: Rect = { r0: kind === "insert" ? rect.r0 : rect.r1 + 1, c0: rect.c0, r1: MAX_ROWS - 1, c1: rect.c1 };
    const affected: Array<{ t: TableModel; grow: boolean }> = [];
    for (const t of this.tables) {
      if (t.sheetId !== sheet.id || t.rect.c1 < rect.c0 || t.rect.c0 > rect.c1 || t.rect.r1 < rect.r0) continue;
      const body = this.bodyRect(t);
      const exact = t.rect.c0 === rect.c0 && t.rect.c1 === rect.c1;
      if (rect.r0 > t.rect.r0 && rect.r0 <= body.r1 && exact && (kind === "insert" || rect.r1 <= body.r1)) {
        if (kind === "delete" && rectRows(body) - n < 1) throw invalidOperation(`Range.delete: deleting every body row of the table '${t.name}' is not emulated; resize the table instead.`);
        affected.push({ t, grow: true });
      } else if (rect.r1 < t.rect.r0 && t.rect.c0 >= rect.c0 && t.rect.c1 <= rect.c1) {
        affected.push({ t, grow: false });
      } else {
        throw invalidOperation(`This operation is not allowed. The operation is attempting to shift cells in the table '${t.name}' on your worksheet.`);
      }
    }
    // Merged cells, PivotTables and array formulas in the cells that would move: refused (see `addObstacle`).
    for (const o of sheet.obstacles ?? []) {
      if (o.rect.r1 >= rect.r0 && o.rect.c0 <= rect.c1 && o.rect.c1 >= rect.c0) throw invalidOperation(OBSTACLE_MESSAGES[o.kind]);
    }
    if (kind === "insert") {
      const last = sheet.cells; // cells pushed off the grid are refused before anything changes
      let lowest = -1;
      last.forEachRow((r, row) => { for (let c = rect.c0; c <= rect.c1; c++) if (row.has(c)) { lowest = Math.max(lowest, r); break; } }, Math.max(rect.r0, MAX_ROWS - n));
      if (lowest >= 0) throw invalidArgument("Cells would be shifted off the worksheet.");
    } else {
      this.clear(sheet, rect, "All");
    }
    if (!sheet.cells.trySpliceRows(below.r0, dr, rect.c0, rect.c1)) this.moveCells(sheet, below, dr, 0, false);
    this.adjustReferences({ sheetName: sheet.name, kind, at: rect.r0, count: n, c0: rect.c0, c1: rect.c1 });
    // Fills move with their cells (formatting is part of the cell); the deleted cells' go with them.
    if (sheet.fills?.size) {
      const moved = new Map<string, string>();
      for (const [key, color] of sheet.fills) {
        const [r, c] = key.split(",").map(Number);
        if (c < rect.c0 || c > rect.c1 || r < rect.r0) moved.set(key, color);
        else if (r >= below.r0 && r + dr < MAX_ROWS) moved.set(`${r + dr},${c}`, color);
      }
      sheet.fills = moved;
    }
    for (const { t, grow } of affected) t.rect = grow ? { ...t.rect, r1: t.rect.r1 + dr } : { ...t.rect, r0: t.rect.r0 + dr, r1: t.rect.r1 + dr };
    const hidden = [...sheet.hiddenRows];
    sheet.hiddenRows.clear();
    for (const r of hidden) {
      if (r < below.r0) { if (kind === "insert" || r < rect.r0) sheet.hiddenRows.add(r); }
      else sheet.hiddenRows.add(r + dr);
    }
    this.invalidateCalculation();
  }

  /**
   * Test set-up (issue #21): marks an area Excel cannot shift cells through — a PivotTable (`"pivot"`)
   * or a legacy array formula (`"array"`, its formula kept in the top-left cell) — or merged cells
   * (`"merged"`, as `Range.merge()` makes them). `Range.insert` / `Range.delete` moving any of its
   * cells is refused with Excel's message ({@link OBSTACLE_MESSAGES}).
   */
  addObstacle(sheetName: string, address: string, kind: ObstacleKind, formula?: string): void {
    const { sheet, rect } = this.resolveAddress(address, this.requireSheet(sheetName));
    this.mergeOrMark(sheet, rect, kind);
    if (kind === "array" && formula !== undefined) this.writeFormulas(sheet, { r0: rect.r0, c0: rect.c0, r1: rect.r0, c1: rect.c0 }, formula);
  }

  /** `Range.merge(across)` (ExcelApi 1.2): one merged area, or one per row when `across`. */
  mergeCells(sheet: SheetModel, rect: Rect, across = false): void {
    this.checkSheetEditable(sheet, "format");
    assertOnGrid(rect);
    if (across) for (let r = rect.r0; r <= rect.r1; r++) this.mergeOrMark(sheet, { ...rect, r0: r, r1: r }, "merged");
    else this.mergeOrMark(sheet, rect, "merged");
  }

  /** `Range.unmerge()`: the merged areas overlapping the range are split again. */
  unmergeCells(sheet: SheetModel, rect: Rect): void {
    this.checkSheetEditable(sheet, "format");
    sheet.obstacles = (sheet.obstacles ?? []).filter((o) => o.kind !== "merged" || !rectsOverlap(o.rect, rect));
  }

  private mergeOrMark(sheet: SheetModel, rect: Rect, kind: ObstacleKind): void {
    if ((sheet.obstacles ?? []).some((o) => rectsOverlap(o.rect, rect))) throw invalidOperation(OBSTACLE_MESSAGES[kind]);
    (sheet.obstacles ??= []).push({ rect: { ...rect }, kind });
  }

  renameTable(t: TableModel, name: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    const n = validateTableName(name);
    this.checkNameFree(n, t);
    t.name = n;
  }

  headerRect(t: TableModel): Rect {
    return { r0: t.rect.r0, c0: t.rect.c0, r1: t.rect.r0, c1: t.rect.c1 };
  }
  /** Body rows; a table always has at least one. */
  bodyRect(t: TableModel): Rect {
    return { r0: t.rect.r0 + 1, c0: t.rect.c0, r1: t.rect.r1 - (t.showTotals ? 1 : 0), c1: t.rect.c1 };
  }
  totalsRect(t: TableModel): Rect | null {
    return t.showTotals ? { r0: t.rect.r1, c0: t.rect.c0, r1: t.rect.r1, c1: t.rect.c1 } : null;
  }
  bodyRowCount(t: TableModel): number {
    return rectRows(this.bodyRect(t));
  }

  /**
   * The formula shared by every body cell of a column (compared relative to each cell's row), i.e.
   * an Excel calculated column; null when the column is not calculated.
   */
  calculatedFormula(t: TableModel, colIndex: number): string | null {
    const sheet = this.requireSheetId(t.sheetId);
    const body = this.bodyRect(t);
    const c = t.rect.c0 + colIndex;
    let shared: string | null = null;
    for (let r = body.r0; r <= body.r1; r++) {
      const f = sheet.cells.formula(r, c);
      if (f === undefined) return null;
      const rel = translateFormula(f, body.r0 - r, 0);
      if (shared === null) shared = rel;
      else if (shared !== rel) return null;
    }
    return shared;
  }

  /**
   * `table.resize(range)` (ExcelApi 1.13): the header row must stay on the same row, the new range must
   * overlap the old one and no other table; cells are not moved. Calculated columns fill new body rows.
   */
  resizeTable(t: TableModel, sheet: SheetModel, rect: Rect): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    this.dirtySheets.add(sheet.id);
    assertOnGrid(rect);
    if (sheet.id !== t.sheetId) throw invalidArgument("table.resize: the new range must be on the table's worksheet.");
    if (rect.r0 !== t.rect.r0) throw invalidArgument("table.resize: the header row must remain in the same row.");
    if (!rectsOverlap(rect, t.rect)) throw invalidArgument("table.resize: the new range must overlap the current table range.");
    const minRows = 2 + (t.showTotals ? 1 : 0);
    if (rectRows(rect) < minRows) throw invalidArgument("table.resize: the new range must include at least one data row.");
    this.checkNoTableOverlap(sheet, rect, t);
    const oldBody = this.bodyRect(t);
    const calculated = t.columns.map((_, i) => (i < rectColumns(rect) && t.rect.c0 === rect.c0 ? this.calculatedFormula(t, i) : null));
    const oldTotals = this.totalsRect(t);
    // The totals row stays the table's last row and keeps its functions; where Excel puts it after a
    // resize is not documented, so it moves to the new last row with its formulas (the add-in rewrites
    // them anyway).
    const totalsCells: Array<{ f?: string; v?: StoredValue }> = [];
    if (oldTotals) {
      for (let c = oldTotals.c0; c <= oldTotals.c1; c++) {
        const f = sheet.cells.formula(oldTotals.r0, c);
        totalsCells.push(f !== undefined ? { f } : { v: sheet.cells.value(oldTotals.r0, c) });
      }
      this.clear(sheet, oldTotals, "Contents");
    }
    // Columns: keep ids of columns that remain at the same sheet column, new ones get fresh ids.
    const newCols: TableColumnModel[] = [];
    for (let c = rect.c0; c <= rect.c1; c++) {
      const old = c >= t.rect.c0 && c <= t.rect.c1 ? t.columns[c - t.rect.c0] : undefined;
      newCols.push(old ?? { id: t.nextColumnId++, name: "" });
    }
    const oldRectR1 = oldBody.r1;
    t.columns = newCols;
    t.rect = { ...rect };
    const newBody = this.bodyRect(t);
    if (newBody.r1 > oldRectR1) this.fillCalculatedColumns(t, sheet, calculated, oldBody.r0, oldRectR1 + 1, newBody.r1);
    if (t.showTotals) {
      const row = sheet.cells.rowForWrite(t.rect.r1);
      totalsCells.forEach((cell, i) => {
        const c = t.rect.c0 + i;
        if (c > t.rect.c1) return;
        if (cell.f !== undefined) this.putFormula(row, c, cell.f);
        else this.putConstant(row, c, cell.v);
      });
    }
    this.normalizeHeaders(t);
    for (const r of [...sheet.hiddenRows]) if (r > newBody.r1 && r <= oldRectR1) sheet.hiddenRows.delete(r);
    this.invalidateCalculation();
  }

  private fillCalculatedColumns(
    t: TableModel,
    sheet: SheetModel,
    calculated: Array<string | null>,
    firstBodyRow: number,
    fromRow: number,
    toRow: number,
  ): void {
    calculated.forEach((f, i) => {
      if (f === null) return;
      const c = t.rect.c0 + i;
      for (let r = fromRow; r <= toRow; r++) this.putFormula(sheet.cells.rowForWrite(r), c, translateFormula(f, r - firstBodyRow, 0));
    });
  }

  /** `table.rows.add(index, values)`: inserts body rows (cells in the table's columns shift down). */
  addTableRows(t: TableModel, index: number | null | undefined, values: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    const sheet = this.requireSheetId(t.sheetId);
    const body = this.bodyRect(t);
    const cols = rectColumns(t.rect);
    const bodyRows = this.bodyRowCount(t);
    let count = 1;
    if (values !== undefined && values !== null) {
      if (!Array.isArray(values) || values.length === 0 || !values.every((r) => Array.isArray(r) && r.length === cols)) {
        throw invalidArgument(`table.rows.add: values must be a 2-D array with ${cols} columns per row.`);
      }
      count = values.length;
      values = (values as unknown[][]).map((row) => row.map(toWireValue));
      for (const row of values as unknown[][]) row.forEach((v, c) => this.validateInput(v, `rows.add values[..][${c}]`));
    }
    const at = index === null || index === undefined ? bodyRows : index;
    if (!Number.isInteger(at) || at < 0 || at > bodyRows) throw invalidArgument(`table.rows.add: index ${String(index)} is out of range.`);
    const insertRow = body.r0 + at;
    const grown: Rect = { ...t.rect, r1: t.rect.r1 + count };
    assertOnGrid(grown, "grown table");
    // Cells below the insertion point in the table's columns move down, as Excel inserts table rows.
    const below: Rect = { r0: insertRow, c0: t.rect.c0, r1: MAX_ROWS - 1, c1: t.rect.c1 };
    for (const other of this.tables) {
      if (other !== t && other.sheetId === sheet.id && rectsOverlap(other.rect, below)) {
        throw invalidOperation(`Inserting rows would move part of the table '${other.name}'.`);
      }
    }
    const calculated = t.columns.map((_, i) => this.calculatedFormula(t, i));
    this.moveCells(sheet, below, count, 0);
    t.rect = grown;
    this.fillCalculatedColumns(t, sheet, calculated, body.r0, insertRow, insertRow + count - 1);
    if (Array.isArray(values)) {
      (values as unknown[][]).forEach((row, i) =>
        row.forEach((v, c) => {
          if (v !== null) this.setCellContent(sheet, insertRow + i, t.rect.c0 + c, v as string | number | boolean);
        }),
      );
      this.stats.cellsWritten += count * cols;
    }
    this.stats.rowsAddCalls++;
    this.invalidateCalculation();
  }

  /** `table.columns.add(index, values, name)`. */
  addTableColumn(t: TableModel, index: number | null | undefined, values: unknown, name: unknown): TableColumnModel {
    this.checkSheetEditable(this.sheetOfTable(t));
    const sheet = this.requireSheetId(t.sheetId);
    const cols = t.columns.length;
    const at = index === null || index === undefined ? cols : index;
    if (!Number.isInteger(at) || at < 0 || at > cols) throw invalidArgument(`table.columns.add: index ${String(index)} is out of range.`);
    const rows = rectRows(t.rect);
    if (values !== undefined && values !== null) {
      if (!Array.isArray(values) || values.length !== rows || !values.every((r) => Array.isArray(r) && r.length === 1)) {
        throw invalidArgument(`table.columns.add: values must be a ${rows}x1 array (header row included).`);
      }
      values = (values as unknown[][]).map((row) => [toWireValue(row[0])]);
      for (const row of values as unknown[][]) this.validateInput(row[0], "columns.add values");
    }
    if (name !== undefined && name !== null && typeof name !== "string") throw invalidArgument("table.columns.add: name must be a string.");
    const insertCol = t.rect.c0 + at;
    if (t.rect.c1 + 1 >= MAX_COLUMNS) throw invalidArgument("The table cannot grow beyond the last column.");
    // Cells of the table's rows at and right of the insertion column move right by one.
    const right: Rect = { r0: t.rect.r0, c0: insertCol, r1: t.rect.r1, c1: MAX_COLUMNS - 1 };
    for (const other of this.tables) {
      if (other !== t && other.sheetId === sheet.id && rectsOverlap(other.rect, right)) {
        throw invalidOperation(`Inserting a column would move part of the table '${other.name}'.`);
      }
    }
    this.moveCells(sheet, right, 0, 1);
    const col: TableColumnModel = { id: t.nextColumnId++, name: "" };
    t.columns.splice(at, 0, col);
    t.rect = { ...t.rect, c1: t.rect.c1 + 1 };
    // Excel names a new column "ColumnN" unless a name or header value is given.
    for (const [oldIdx, sf] of [...t.filters]) if (oldIdx >= at) { t.filters.delete(oldIdx); t.filters.set(oldIdx + 1, sf); }
    if (Array.isArray(values)) {
      (values as unknown[][]).forEach((row, i) => {
        if (row[0] !== null) this.setCellContent(sheet, t.rect.r0 + i, insertCol, row[0] as string | number | boolean);
      });
      this.stats.cellsWritten += rows;
    }
    if (typeof name === "string" && name !== "") this.setCellContent(sheet, t.rect.r0, insertCol, `'${name}`);
    this.normalizeHeaders(t);
    this.invalidateCalculation();
    return col;
  }

  renameTableColumn(t: TableModel, colId: number, name: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    if (typeof name !== "string" || name === "") throw invalidArgument("A table column name cannot be empty.");
    const i = t.columns.findIndex((c) => c.id === colId);
    if (i < 0) throw itemNotFound("The table column has been deleted.");
    const clash = t.columns.find((c, j) => j !== i && c.name.toLowerCase() === name.toLowerCase());
    if (clash) throw itemAlreadyExists(`The table already has a column named '${clash.name}'.`);
    const sheet = this.requireSheetId(t.sheetId);
    this.setCellContent(sheet, t.rect.r0, t.rect.c0 + i, `'${name}`);
    this.normalizeHeaders(t);
    this.invalidateCalculation();
  }

  setShowTotals(t: TableModel, show: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    if (typeof show !== "boolean") throw invalidArgument("table.showTotals must be a boolean.");
    if (show === t.showTotals) return;
    const sheet = this.requireSheetId(t.sheetId);
    if (show) {
      const grown: Rect = { ...t.rect, r1: t.rect.r1 + 1 };
      assertOnGrid(grown, "table with totals row");
      this.checkNoTableOverlap(sheet, grown, t);
      t.rect = grown;
      t.showTotals = true;
      this.writeTotalsRow(t);
    } else {
      const totals = this.totalsRect(t)!;
      this.clear(sheet, totals, "Contents");
      t.showTotals = false;
      t.rect = { ...t.rect, r1: t.rect.r1 - 1 };
    }
    this.invalidateCalculation();
  }

  /**
   * Excel's default totals row: "Total" in the first column and a SUBTOTAL over the whole last column
   * (sum `109` when it holds numbers, else count `103`), written as a structured reference, so it
   * covers every body row however the table is resized (docs: "Total the data in an Excel table").
   */
  private writeTotalsRow(t: TableModel): void {
    const sheet = this.requireSheetId(t.sheetId);
    const r = t.rect.r1;
    const body = this.bodyRect(t);
    const row = sheet.cells.rowForWrite(r);
    for (let c = t.rect.c0; c <= t.rect.c1; c++) this.putConstant(row, c, c === t.rect.c0 ? "Total" : undefined);
    const last = t.rect.c1;
    if (last === t.rect.c0) return;
    let numeric = false;
    for (let rr = body.r0; rr <= body.r1 && !numeric; rr++) numeric = typeof sheet.cells.value(rr, last) === "number";
    const name = t.columns[t.columns.length - 1]?.name ?? "";
    this.putFormula(sheet.cells.rowForWrite(r), last, `=SUBTOTAL(${numeric ? 109 : 103},[${name}])`);
  }

  private removeTable(t: TableModel): void {
    const i = this.tables.indexOf(t);
    if (i >= 0) this.tables.splice(i, 1);
    const sheet = this.sheetById(t.sheetId);
    if (sheet) for (let r = t.rect.r0; r <= t.rect.r1; r++) sheet.hiddenRows.delete(r);
  }

  /** `table.delete()`: removes the table and its cells' contents and formats. */
  deleteTable(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    const sheet = this.requireSheetId(t.sheetId);
    this.removeTable(t);
    this.clear(sheet, t.rect, "All");
  }

  /** `table.convertToRange()`: removes the table, keeps the cells. */
  convertTableToRange(t: TableModel): { sheet: SheetModel; rect: Rect } {
    this.checkSheetEditable(this.sheetOfTable(t));
    const sheet = this.requireSheetId(t.sheetId);
    this.removeTable(t);
    this.invalidateCalculation();
    return { sheet, rect: { ...t.rect } };
  }

  /** `table.sort.apply(fields, matchCase)`: stores the sort state and sorts the body rows. */
  applySort(t: TableModel, fields: unknown, matchCase: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    if (!Array.isArray(fields) || fields.length === 0) throw invalidArgument("table.sort.apply: fields must be a non-empty array.");
    const parsed: SortField[] = fields.map((f: unknown) => {
      const o = f as { key?: unknown; ascending?: unknown };
      if (typeof o !== "object" || o === null || !Number.isInteger(o.key) || (o.key as number) < 0 || (o.key as number) >= t.columns.length) {
        throw invalidArgument("table.sort.apply: each field needs a key that is a column index of the table.");
      }
      return { key: o.key as number, ascending: o.ascending === undefined ? true : Boolean(o.ascending) };
    });
    t.sort = { fields: parsed, matchCase: matchCase === true };
    this.reapplySort(t);
  }

  /** `table.sort.reapply()`: sorts the body rows again by the stored state (no-op without one). */
  reapplySort(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    if (!t.sort) return;
    this.dirtySheets.add(t.sheetId);
    const sheet = this.requireSheetId(t.sheetId);
    const body = this.bodyRect(t);
    const { fields, matchCase } = t.sort;
    const rows: Array<{ from: number; keys: CellValue[] }> = [];
    for (let r = body.r0; r <= body.r1; r++) {
      rows.push({ from: r, keys: fields.map((f) => this.valueAt(sheet, r, t.rect.c0 + f.key)) });
    }
    const rank = (v: CellValue): number =>
      typeof v === "number" ? 0 : typeof v === "string" ? 1 : typeof v === "boolean" ? 2 : isCellError(v) ? 3 : 4;
    rows.sort((a, b) => {
      for (let i = 0; i < fields.length; i++) {
        const x = a.keys[i], y = b.keys[i];
        // Blanks sort last in both directions, as in Excel.
        if (x === null || y === null) {
          if (x === y) continue;
          return x === null ? 1 : -1;
        }
        let d = rank(x) - rank(y);
        if (d === 0) {
          if (typeof x === "number" && typeof y === "number") d = x - y;
          else if (typeof x === "string" && typeof y === "string") {
            const xs = matchCase ? x : x.toLowerCase();
            const ys = matchCase ? y : y.toLowerCase();
            d = xs < ys ? -1 : xs > ys ? 1 : 0;
          } else if (typeof x === "boolean" && typeof y === "boolean") d = Number(x) - Number(y);
        }
        if (d !== 0) return fields[i].ascending ? d : -d;
      }
      return 0;
    });
    // Rows of the body taken out (by their old row number), then put back in sorted order.
    const taken = new Map<number, Array<Cell | undefined>>();
    for (let r = body.r0; r <= body.r1; r++) {
      const cells: Array<Cell | undefined> = [];
      for (let c = t.rect.c0; c <= t.rect.c1; c++) cells.push(sheet.cells.take(r, c));
      taken.set(r, cells);
    }
    rows.forEach((row, i) => {
      const to = body.r0 + i;
      taken.get(row.from)!.forEach((cell, j) => {
        if (!cell) return;
        if (cell.f !== undefined) cell.f = translateFormula(cell.f, to - row.from, 0);
        cell.cg = undefined;
        sheet.cells.put(to, t.rect.c0 + j, cell);
      });
    });
    this.invalidateCalculation();
  }

  clearSort(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    t.sort = null;
  }

  /** `table.autoFilter.apply(range, columnIndex, criteria)`. */
  applyFilter(t: TableModel, columnIndex: unknown, criteria: unknown): void {
    this.checkSheetEditable(this.sheetOfTable(t), "filter");
    if (!Number.isInteger(columnIndex) || (columnIndex as number) < 0 || (columnIndex as number) >= t.columns.length) {
      throw invalidArgument("autoFilter.apply: columnIndex must be a column index of the table.");
    }
    const c = criteria as FilterCriteria;
    if (typeof c !== "object" || c === null || typeof c.filterOn !== "string") {
      throw invalidArgument("autoFilter.apply: criteria must be an Excel.FilterCriteria object with filterOn.");
    }
    t.filters.set(columnIndex as number, JSON.parse(JSON.stringify(c)) as FilterCriteria);
    this.reapplyFilter(t);
  }

  clearFilters(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t), "filter");
    t.filters.clear();
    this.reapplyFilter(t);
  }

  /** `table.autoFilter.remove()`: the filter buttons go, with every criterion; hidden rows show again. */
  removeAutoFilter(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t), "filter");
    t.filters.clear();
    this.reapplyFilter(t);
    t.autoFilterEnabled = false;
  }

  /**
   * `autoFilter.reapply()` / `table.reapplyFilters()` as the add-in calls it. Excel on the web does nothing
   * on a table whose filter was removed; Excel for Mac throws `InvalidOperation` (office-js #3086).
   */
  apiReapplyFilter(t: TableModel): void {
    this.checkSheetEditable(this.sheetOfTable(t), "filter");
    if (t.autoFilterEnabled === false && this.platform === "mac") {
      throw invalidOperation("The operation is not valid: the table has no AutoFilter (it was removed).");
    }
    this.reapplyFilter(t);
  }

  /** Hides body rows that fail any stored criterion; shows the others. */
  reapplyFilter(t: TableModel): void {
    const sheet = this.requireSheetId(t.sheetId);
    const body = this.bodyRect(t);
    for (let r = body.r0; r <= body.r1; r++) {
      let visible = true;
      for (const [ci, crit] of t.filters) {
        if (!this.matchesCriteria(sheet, r, t.rect.c0 + ci, crit)) {
          visible = false;
          break;
        }
      }
      if (visible) sheet.hiddenRows.delete(r);
      else sheet.hiddenRows.add(r);
    }
  }

  private matchesCriteria(sheet: SheetModel, r: number, c: number, crit: FilterCriteria): boolean {
    const text = this.textAt(sheet, r, c);
    if (crit.filterOn === "Values") return (crit.values ?? []).includes(text);
    if (crit.filterOn === "Custom") {
      const one = (expr: string | undefined): boolean => {
        if (expr === undefined) return true;
        const m = /^(<>|>=|<=|=|>|<)?(.*)$/.exec(expr)!;
        const op = m[1] ?? "=";
        const rhs = m[2];
        const v = this.valueAt(sheet, r, c);
        const num = Number(rhs);
        const cmp =
          typeof v === "number" && rhs !== "" && !Number.isNaN(num)
            ? v - num
            : text.toLowerCase().localeCompare(rhs.toLowerCase());
        switch (op) {
          case "=": return cmp === 0;
          case "<>": return cmp !== 0;
          case ">": return cmp > 0;
          case "<": return cmp < 0;
          case ">=": return cmp >= 0;
          default: return cmp <= 0;
        }
      };
      const a = one(crit.criterion1);
      if (crit.criterion2 === undefined) return a;
      return crit.operator === "Or" ? a || one(crit.criterion2) : a && one(crit.criterion2);
    }
    // Other filter kinds (colour, icon, top items, dynamic) are not evaluated: rows stay visible.
    return true;
  }

  tablesOnSheet(sheet: SheetModel): TableModel[] {
    return this.tables.filter((t) => t.sheetId === sheet.id);
  }

  // ---------- settings ----------

  setSetting(k: unknown, value: unknown): void {
    if (typeof k !== "string" || k === "") throw invalidArgument("A setting key must be a non-empty string.");
    if (value === undefined || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
      throw invalidArgument(`The value of setting '${k}' must be JSON-serialisable.`);
    }
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch {
      throw invalidArgument(`The value of setting '${k}' must be JSON-serialisable.`);
    }
    let total = k.length + json.length;
    for (const [key, v] of this.settings) if (key !== k) total += key.length + v.length;
    if (total > this.settingsLimitChars) {
      // What Excel answers (office-js #3957): the generic invalid-argument message, nothing saved.
      throw invalidArgument(`The argument is invalid or missing or has an incorrect format. (Settings would hold ${total} characters; the limit is about ${this.settingsLimitChars}.)`);
    }
    this.settings.set(k, json);
  }
  getSetting(k: string): unknown {
    const json = this.settings.get(k);
    if (json === undefined) throw itemNotFound(`The setting '${k}' does not exist.`);
    return JSON.parse(json) as unknown;
  }
  deleteSetting(k: string): void {
    if (!this.settings.delete(k)) throw itemNotFound(`The setting '${k}' does not exist.`);
  }

  // ---------- addresses ----------

  addressOf(sheet: SheetModel, rect: Rect): string {
    return formatAddress(sheet.name, rect);
  }

  // ---------- issue #23: behaviours the RichApi host adds (kept apart from the code above) ----------

  /**
   * `Range.insert(shift)` / `Range.delete(shift)`: `Down`/`Up` move the cells of the range's columns
   * (see `shiftCells`); `Right`/`Left` move the cells of the range's rows right of it (docs:
   * Excel.InsertShiftDirection "down | right", Excel.DeleteShiftDirection "up | left"; Range.insert,
   * "shifts the other cells to make space"). Any other direction is InvalidArgument.
   */
  insertOrDeleteCells(sheet: SheetModel, rect: Rect, shift: unknown, kind: "insert" | "delete"): void {
    this.checkSheetEditable(sheet);
    const vertical = kind === "insert" ? "Down" : "Up";
    const sideways = kind === "insert" ? "Right" : "Left";
    if (shift === vertical) return this.shiftCells(sheet, rect, shift, kind);
    if (shift !== sideways) throw invalidArgument(`Range.${kind}: shift must be '${vertical}' or '${sideways}'; got '${String(shift)}'.`);
    this.shiftCellsSideways(sheet, rect, kind);
  }

  /**
   * Cells of `rect`'s rows right of it move right (insert) or left (delete) by its width; formulas
   * among them are translated, fills move with them. A table wholly right of the range within its rows
   * moves too; any other table in the way is refused as Excel refuses shifting part of a table
   * ("This operation is not allowed. The operation is attempting to shift cells in a table"). Cells
   * pushed off the grid are refused before anything changes.
   */
  private shiftCellsSideways(sheet: SheetModel, rect: Rect, kind: "insert" | "delete"): void {
    assertOnGrid(rect);
    const n = rectColumns(rect);
    const dc = kind === "insert" ? n : -n;
    const band: Rect = { r0: rect.r0, c0: kind === "insert" ? rect.c0 : rect.c1 + 1, r1: rect.r1, c1: MAX_COLUMNS - 1 };
    const moving: TableModel[] = [];
    for (const t of this.tables) {
      if (t.sheetId !== sheet.id || !rectsOverlap(t.rect, { ...band, c0: rect.c0 })) continue;
      if (t.rect.c0 > rect.c1 && t.rect.r0 >= rect.r0 && t.rect.r1 <= rect.r1) moving.push(t);
      else throw invalidOperation(`This operation is not allowed. The operation is attempting to shift cells in the table '${t.name}' on your worksheet.`);
    }
    if (kind === "insert") {
      let off = false;
      sheet.cells.forEachRow((_, row) => { for (let c = Math.max(rect.c0, MAX_COLUMNS - n); c < row.width(); c++) if (row.has(c)) off = true; }, rect.r0, rect.r1);
      if (off) throw invalidArgument("Cells would be shifted off the worksheet.");
    } else {
      this.clear(sheet, rect, "All");
    }
    this.moveCells(sheet, band, 0, dc);
    if (sheet.fills?.size) {
      const moved = new Map<string, string>();
      for (const [key, color] of sheet.fills) {
        const [r, c] = key.split(",").map(Number);
        if (r < rect.r0 || r > rect.r1 || c < rect.c0) moved.set(key, color);
        else if (c >= band.c0 && c + dc < MAX_COLUMNS) moved.set(`${r},${c + dc}`, color);
      }
      sheet.fills = moved;
    }
    for (const t of moving) t.rect = { ...t.rect, c0: t.rect.c0 + dc, c1: t.rect.c1 + dc };
    this.invalidateCalculation();
  }

  /**
   * `Range.copyFrom` into `dest`: like the copy in Excel's UI, a destination that is an exact multiple
   * of the source in rows and columns (and larger) gets the source replicated, a 2x2 source into a 2x6
   * destination giving 3 copies (docs: Range.copyFrom, "if the destination range is an exact multiple
   * greater than the source range in either rows or columns, then the source content is replicated
   * multiple times"); otherwise one copy at the destination's top-left cell, at the source's size.
   */
  copyRangeTiled(src: SheetModel, from: Rect, dst: SheetModel, dest: Rect, copyType: "All" | "Formulas" | "Values" | "Formats"): void {
    this.checkSheetEditable(dst, copyType === "Formats" ? "format" : "cells");
    const rows = rectRows(from), cols = rectColumns(from);
    const dRows = rectRows(dest), dCols = rectColumns(dest);
    const tileRows = dRows % rows === 0 ? dRows / rows : 1;
    const tileCols = dCols % cols === 0 ? dCols / cols : 1;
    const first = this.copyRange(src, from, dst, { r: dest.r0, c: dest.c0 }, copyType);
    if (tileRows * tileCols === 1) return;
    checkCellCount({ r0: dest.r0, c0: dest.c0, r1: dest.r0 + tileRows * rows - 1, c1: dest.c0 + tileCols * cols - 1 }, "Range.copyFrom");
    // Later tiles copy the first one: the source may overlap the destination and be overwritten already.
    const tileType = copyType === "Values" ? "All" : copyType;
    for (let i = 0; i < tileRows; i++) {
      for (let j = 0; j < tileCols; j++) {
        if (i === 0 && j === 0) continue;
        this.copyRange(dst, first, dst, { r: dest.r0 + i * rows, c: dest.c0 + j * cols }, tileType);
        this.stats.copyFromCalls--;
        this.stats.cellsCopied -= rows * cols;
      }
    }
    this.stats.cellsCopied += (tileRows * tileCols - 1) * rows * cols;
  }

  /**
   * `ConditionalFormat.priority = p` for a format reached through the collection of `scope`: it moves
   * to index `p` of that collection, the others shifting to keep a contiguous order; a negative
   * priority counts from the back and one beyond the bounds is clamped (docs: ConditionalFormat.priority).
   */
  setConditionalFormatPriority(sheet: SheetModel, cfId: string, priority: number, scope: Rect): void {
    this.checkSheetEditable(sheet, "format");
    const cf = this.requireConditionalFormat(sheet, cfId);
    const list = sheet.conditionalFormats!;
    const over = this.conditionalFormatsOver(sheet, scope).filter((x) => x !== cf);
    let p = priority < 0 ? over.length + 1 + priority : priority;
    p = Math.max(0, Math.min(over.length, p));
    list.splice(list.indexOf(cf), 1);
    if (p >= over.length) {
      const last = over[over.length - 1];
      list.splice(last === undefined ? list.length : list.indexOf(last) + 1, 0, cf);
    } else list.splice(list.indexOf(over[p]), 0, cf);
  }

  /**
   * `table.rows.deleteRowsAt(index, count)` and `TableRow.delete()`: the rows go and the cells of the
   * table's columns below move up. Docs (TableRowCollection.deleteRowsAt): "This method will throw the
   * InsertDeleteConflict error if the table on which the method is called has a filter applied."
   */
  deleteTableRows(t: TableModel, index: number, count: number): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    if (t.filters.size > 0) {
      throw new EmulatedExcelError(ErrorCodes.insertDeleteConflict, "The insert or delete operation attempted resulted in a conflict: the table has a filter applied.");
    }
    const n = this.bodyRowCount(t);
    if (!Number.isInteger(index) || !Number.isInteger(count) || index < 0 || count < 1 || index + count > n) {
      throw invalidArgument(`deleteRowsAt: rows ${index}..${index + count - 1} are not all in the table (it has ${n} rows).`);
    }
    const body = this.bodyRect(t);
    this.shiftCells(this.requireSheetId(t.sheetId), { r0: body.r0 + index, c0: t.rect.c0, r1: body.r0 + index + count - 1, c1: t.rect.c1 }, "Up", "delete");
  }

  /**
   * `table.rows.add(index, values, alwaysInsert)`. With `alwaysInsert` false (ExcelApi 1.15) rows
   * added at the end take empty rows right below the table, which grows over them without shifting
   * anything; rows below that hold data are shifted down as with `true` (VBA ListRows.Add, whose
   * AlwaysInsert this mirrors: "If False, if the row below the table is empty, the table will expand
   * to occupy that row without shifting cells below it, but if the row below the table contains data,
   * those cells will be shifted down").
   */
  addTableRows2(t: TableModel, index: number | null | undefined, values: unknown, alwaysInsert: boolean): void {
    this.checkSheetEditable(this.sheetOfTable(t));
    const atEnd = index === null || index === undefined || index === this.bodyRowCount(t);
    if (alwaysInsert || !atEnd || t.showTotals) return this.addTableRows(t, index, values);
    const count = Array.isArray(values) && values.length > 0 ? values.length : 1;
    const sheet = this.requireSheetId(t.sheetId);
    const below: Rect = { r0: t.rect.r1 + 1, c0: t.rect.c0, r1: t.rect.r1 + count, c1: t.rect.c1 };
    if (below.r1 >= MAX_ROWS) return this.addTableRows(t, index, values);
    let empty = !this.tables.some((o) => o !== t && o.sheetId === sheet.id && rectsOverlap(o.rect, below));
    sheet.cells.forEach(() => void (empty = false), below);
    if (!empty) return this.addTableRows(t, index, values);
    const cols = rectColumns(t.rect);
    if (values !== undefined && values !== null) {
      if (!Array.isArray(values) || !values.every((r) => Array.isArray(r) && r.length === cols)) {
        throw invalidArgument(`table.rows.add: values must be a 2-D array with ${cols} columns per row.`);
      }
      for (const row of values as unknown[][]) row.forEach((v, c) => this.validateInput(toWireValue(v), `rows.add values[..][${c}]`));
    }
    const body = this.bodyRect(t);
    const calculated = t.columns.map((_, i) => this.calculatedFormula(t, i));
    t.rect = { ...t.rect, r1: t.rect.r1 + count };
    this.fillCalculatedColumns(t, sheet, calculated, body.r0, below.r0, below.r1);
    if (Array.isArray(values)) {
      (values as unknown[][]).forEach((row, i) =>
        row.forEach((v, c) => {
          const w = toWireValue(v);
          if (w !== null) this.setCellContent(sheet, below.r0 + i, t.rect.c0 + c, w as string | number | boolean);
        }),
      );
      this.stats.cellsWritten += count * cols;
    }
    this.stats.rowsAddCalls++;
    this.invalidateCalculation();
  }
}


/** Excel keeps 15 significant digits of a number; integers beyond that are truncated, as typed input is. */
export function toFifteenDigits(v: number): number {
  if (!Number.isInteger(v) || Math.abs(v) < 1e15) return v;
  const digits = Math.floor(Math.log10(Math.abs(v))) + 1;
  const scale = 10 ** (digits - 15);
  return Math.trunc(v / scale) * scale;
}
