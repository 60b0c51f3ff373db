/**
 * Excel's object model as the emulated host sees it: for each type the library names in a request
 * (`Range`, `Worksheet`, `Table`, …), its properties (read, and written by `SetProperty`), its
 * navigation properties (object paths of type Property), the methods that return objects (object
 * paths of type Method, `GetItem`-style indexers) and the methods that return values (actions of type
 * Method). Names are the wire's PascalCase names (`Values`, `GetRange`, `_KeepReference`).
 *
 * A host object is plain data (`{ type: "Range", sheetId, rect }`) resolved from an object path; it is
 * never handed to add-in code, which only ever sees Microsoft's own client objects. Everything that
 * changes the workbook goes through `WorkbookModel`, which validates before it mutates.
 */
import { MAX_COLUMNS, MAX_ROWS, Rect, assertOnGrid, boundingRect, intersectRect, rectColumns, rectRows } from "./address";
import { EmulatedExcelError, ErrorCodes, accessDenied, invalidArgument, invalidOperation, itemNotFound } from "./errors";
import { DATE1904_OFFSET, passwordHash, protectionOptions, type ClearApplyTo, type ConditionalFormatModel, type FilterCriteria, type SheetModel, type TableModel, type WorkbookModel } from "./model";
import { dateSerial } from "./typed-input";

/** A resolved object: its type name and what identifies it in the workbook. */
export type HostObject =
  | { type: "Workbook" }
  | { type: "Application" }
  | { type: "CultureInfo" }
  | { type: "NumberFormatInfo" }
  | { type: "WorksheetCollection" }
  | { type: "Worksheet"; sheetId: string }
  | { type: "WorksheetProtection"; sheetId: string }
  | { type: "WorkbookProtection" }
  | { type: "Range"; sheetId: string; rect: Rect }
  | { type: "RangeFormat"; sheetId: string; rect: Rect }
  | { type: "RangeFill"; sheetId: string; rect: Rect }
  | { type: "TableCollection"; sheetId: string | null }
  | { type: "Table"; tableId: string }
  | { type: "TableColumnCollection"; tableId: string }
  | { type: "TableColumn"; tableId: string; columnId: number }
  | { type: "TableRowCollection"; tableId: string }
  | { type: "TableRow"; tableId: string; index: number }
  | { type: "TableSort"; tableId: string }
  | { type: "AutoFilter"; tableId: string }
  | { type: "SettingCollection" }
  | { type: "Setting"; key: string }
  | { type: "NamedItemCollection"; sheetId: string | null }
  | { type: "NamedItem"; name: string; sheetId: string | null }
  | { type: "Functions" }
  | { type: "FunctionResult"; value: unknown; error: string | null }
  | { type: "ConditionalFormatCollection"; sheetId: string; rect: Rect }
  | { type: "ConditionalFormat"; sheetId: string; cfId: string; scope: Rect }
  | { type: "CustomConditionalFormat"; sheetId: string; cfId: string; scope: Rect }
  | { type: "ConditionalFormatRule"; sheetId: string; cfId: string; scope: Rect }
  | { type: "ConditionalRangeFormat"; sheetId: string; cfId: string; scope: Rect }
  | { type: "ConditionalRangeFill"; sheetId: string; cfId: string; scope: Rect };

export type HostType = HostObject["type"];
type Of<T extends HostType> = Extract<HostObject, { type: T }>;

/** What a type definition may reach while one request is answered. */
export interface HostContext {
  readonly wb: WorkbookModel;
  /** Marks the request as having changed the workbook (listeners run once it is answered). */
  changed(): void;
}

/** A value returned to the library, or an object (a Method object path's result), or null (a null object). */
type Maybe<T> = T | null;

export interface TypeDef<T extends HostType> {
  /** Scalar properties: read (Query) and, where writable, written (SetProperty). */
  readonly scalars: Readonly<Record<string, { get(o: Of<T>, h: HostContext): unknown; set?(o: Of<T>, v: unknown, h: HostContext): void }>>;
  /** Scalars a `load()` without a selection returns (Excel returns every scalar; these are the ones emulated). */
  readonly defaults?: readonly string[];
  /** Navigation properties: object paths of type Property. */
  readonly nav?: Readonly<Record<string, (o: Of<T>, h: HostContext) => Maybe<HostObject>>>;
  /** Methods whose result is an object (object paths of type Method); null is a null object. */
  readonly objects?: Readonly<Record<string, (o: Of<T>, args: unknown[], h: HostContext, refs: ArgRefs) => Maybe<HostObject>>>;
  /** Methods whose result is a value (actions of type Method); `undefined` means no result. */
  readonly calls?: Readonly<Record<string, (o: Of<T>, args: unknown[], h: HostContext, refs: ArgRefs) => unknown>>;
  /** `collection.getItem(key)` (object paths of type Indexer). */
  indexer?(o: Of<T>, key: unknown, h: HostContext): HostObject;
  /** A collection's items (Query results carry them as `_Items`). */
  items?(o: Of<T>, h: HostContext): HostObject[];
  /** The id the library may use to find the object again (`_Id` / `Id` in results). */
  id?(o: Of<T>, h: HostContext): string | number | undefined;
  /** Throws when the object no longer exists (a deleted table, sheet or setting). */
  check?(o: Of<T>, h: HostContext): void;
}

/** Resolves an argument that refers to another object path (`ReferencedObjectPathIds`). */
export type ArgRefs = (index: number) => HostObject | null | undefined;

// ---------- helpers ----------

const sheetOf = (h: HostContext, sheetId: string): SheetModel => h.wb.requireSheetId(sheetId);
const tableOf = (h: HostContext, tableId: string): TableModel => h.wb.requireTableId(tableId);

function range(sheetId: string, rect: Rect, what = "range"): Of<"Range"> {
  assertOnGrid(rect, what);
  return { type: "Range", sheetId, rect };
}

function int(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalidArgument(`${what} must be an integer; got ${JSON.stringify(v)}.`);
  return v;
}

function bool(v: unknown, what: string, fallback?: boolean): boolean {
  if ((v === null || v === undefined) && fallback !== undefined) return fallback;
  if (typeof v !== "boolean") throw invalidArgument(`${what} must be a boolean; got ${JSON.stringify(v)}.`);
  return v;
}

/** A range argument: another Range object (by reference) or an address string (on `home` unless it names a sheet). */
function rangeArg(h: HostContext, args: unknown[], refs: ArgRefs, i: number, home: SheetModel, what: string): { sheet: SheetModel; rect: Rect } {
  const ref = refs(i);
  if (ref !== undefined) {
    if (ref === null) throw itemNotFound(`${what}: the range passed is a null object.`);
    if (ref.type !== "Range") throw invalidArgument(`${what}: expected a Range, got a ${ref.type}.`);
    return { sheet: sheetOf(h, ref.sheetId), rect: ref.rect };
  }
  const a = args[i];
  if (typeof a !== "string" || a === "") throw invalidArgument(`${what}: expected a Range or an address; got ${JSON.stringify(a)}.`);
  return h.wb.resolveAddress(a, home);
}

function cfOf(h: HostContext, o: { sheetId: string; cfId: string }): ConditionalFormatModel {
  return h.wb.requireConditionalFormat(sheetOf(h, o.sheetId), o.cfId);
}

function columnOf(h: HostContext, o: Of<"TableColumn">): { t: TableModel; index: number } {
  const t = tableOf(h, o.tableId);
  const index = t.columns.findIndex((c) => c.id === o.columnId);
  if (index < 0) throw itemNotFound("The table column has been deleted.");
  return { t, index };
}

function rowRect(h: HostContext, o: Of<"TableRow">): { t: TableModel; rect: Rect } {
  const t = tableOf(h, o.tableId);
  const b = h.wb.bodyRect(t);
  const r = b.r0 + o.index;
  if (r > b.r1) throw itemNotFound("The table row no longer exists.");
  return { t, rect: { r0: r, c0: t.rect.c0, r1: r, c1: t.rect.c1 } };
}

function namesIn(h: HostContext, sheetId: string | null): string[] {
  return sheetId === null ? h.wb.definedNames : (sheetOf(h, sheetId).names ?? []);
}

const tablesIn = (h: HostContext, sheetId: string | null): TableModel[] => (sheetId === null ? h.wb.tables : h.wb.tables.filter((t) => t.sheetId === sheetId));

const VISIBILITY = ["Visible", "Hidden", "VeryHidden"];
const COPY_TYPES = ["All", "Formulas", "Values", "Formats"];
const CLEAR_TYPES = ["All", "Formats", "Contents", "Hyperlinks", "RemoveHyperlinks"];

// ---------- the types ----------

const Workbook: TypeDef<"Workbook"> = {
  scalars: { Name: { get: () => "Book1.xlsx" } },
  defaults: ["Name"],
  nav: {
    Worksheets: () => ({ type: "WorksheetCollection" }),
    Tables: () => ({ type: "TableCollection", sheetId: null }),
    Settings: () => ({ type: "SettingCollection" }),
    Application: () => ({ type: "Application" }),
    Names: () => ({ type: "NamedItemCollection", sheetId: null }),
    Functions: () => ({ type: "Functions" }),
    Protection: () => ({ type: "WorkbookProtection" }),
  },
  calls: {
    /**
     * Docs, Workbook.getIsActiveCollabSession (ExcelApi 1.9): "Returns true if the workbook is being
     * edited by multiple users (through co-authoring)." True while a co-authoring session
     * (`coauthoring.ts`) has two or more clients open.
     */
    GetIsActiveCollabSession: (_o, _a, h) => h.wb.coauthoring?.active() ?? false,
  },
  objects: {
    /** Docs, Workbook.getSelectedRange: "If multiple ranges are selected, this method will throw an error." */
    GetSelectedRange: (_o, _a, h) => {
      if (h.wb.extraSelectionAreas.length > 0) {
        throw new EmulatedExcelError(ErrorCodes.invalidSelection, "The current selection is invalid for this operation: several ranges are selected.");
      }
      const { sheet, rect } = h.wb.selectedRange();
      return range(sheet.id, rect);
    },
    GetActiveCell: (_o, _a, h) => {
      const { sheet, rect } = h.wb.selectedRange();
      return range(sheet.id, { r0: rect.r0, c0: rect.c0, r1: rect.r0, c1: rect.c0 });
    },
  },
};

const Application: TypeDef<"Application"> = {
  scalars: {
    CalculationMode: {
      get: (_o, h) => h.wb.calculationMode,
      set: (_o, v, h) => {
        if (v !== "Automatic" && v !== "AutomaticExceptTables" && v !== "Manual") {
          throw invalidArgument(`calculationMode must be Automatic, AutomaticExceptTables or Manual; got ${String(v)}.`);
        }
        const wasManual = h.wb.calculationMode === "Manual";
        // Automatic mode had every formula current: those results are what manual mode keeps showing.
        if (!wasManual && v === "Manual") h.wb.freezeResults();
        h.wb.stats.calculationModeSets++;
        h.wb.calculationMode = v;
        if (wasManual && v !== "Manual") h.wb.calculateAll();
      },
    },
    /**
     * ExcelApi 1.11 (docs, Excel.Application): `decimalSeparator` / `thousandsSeparator`, "the string
     * used as the decimal separator for numeric values. This is based on the local Excel settings", and
     * `useSystemSeparators`, "Specifies if the system separators of Excel are enabled" (`locales.ts`).
     */
    DecimalSeparator: { get: (_o, h) => h.wb.locale.decimalSeparator },
    ThousandsSeparator: { get: (_o, h) => h.wb.locale.thousandsSeparator },
    UseSystemSeparators: { get: (_o, h) => h.wb.locale.useSystemSeparators },
  },
  defaults: ["CalculationMode", "DecimalSeparator", "ThousandsSeparator", "UseSystemSeparators"],
  nav: {
    /** ExcelApi 1.11: "Provides information based on current system culture settings" (`locales.ts`). */
    CultureInfo: () => ({ type: "CultureInfo" }),
  },
  calls: {
    SuspendApiCalculationUntilNextSync: (_o, _a, h) => {
      h.wb.calculationSuspended = true;
      h.wb.stats.suspendCalculationCalls++;
      return undefined;
    },
    SuspendScreenUpdatingUntilNextSync: (_o, _a, h) => {
      h.wb.stats.suspendScreenUpdatingCalls++;
      return undefined;
    },
    /**
     * `application.calculate(calculationType)` (ExcelApi 1.1): every type recalculates everything here,
     * and ends a suspension of API calculation (docs: Application.suspendApiCalculationUntilNextSync,
     * "Once set, it is the developer's responsibility to re-calc the workbook"). The type is required
     * (Excel.CalculationType: Recalculate, Full, FullRebuild). Full and FullRebuild also call every
     * custom function anew (custom-functions.ts, `restartAll`).
     */
    Calculate: (_o, args, h) => {
      if (args[0] !== "Recalculate" && args[0] !== "Full" && args[0] !== "FullRebuild") {
        throw invalidArgument(`calculate: calculationType must be Recalculate, Full or FullRebuild; got ${JSON.stringify(args[0])}.`);
      }
      if (args[0] !== "Recalculate") h.wb.customFunctions.restartAll();
      h.wb.calculateAll(`application ${args[0]}`);
      h.changed();
      return undefined;
    },
  },
};

/**
 * `Application.cultureInfo` (ExcelApi 1.11): `name`, "the culture name in the format
 * languagecode2-country/regioncode2 (e.g., "zh-cn" or "en-us")", and `numberFormat`.
 */
const CultureInfo: TypeDef<"CultureInfo"> = {
  scalars: { Name: { get: (_o, h) => h.wb.locale.profile.cultureName } },
  defaults: ["Name"],
  nav: { NumberFormat: () => ({ type: "NumberFormatInfo" }) },
};

/** `CultureInfo.numberFormat` (ExcelApi 1.11): the system culture's separators, "based on current system settings". */
const NumberFormatInfo: TypeDef<"NumberFormatInfo"> = {
  scalars: {
    NumberDecimalSeparator: { get: (_o, h) => h.wb.locale.profile.decimalSeparator },
    NumberGroupSeparator: { get: (_o, h) => h.wb.locale.profile.thousandsSeparator },
  },
  defaults: ["NumberDecimalSeparator", "NumberGroupSeparator"],
};

function sheetKey(h: HostContext, key: unknown): SheetModel | undefined {
  if (typeof key !== "string") return undefined;
  return h.wb.sheetByName(key) ?? h.wb.sheetById(key);
}

const WorksheetCollection: TypeDef<"WorksheetCollection"> = {
  scalars: {},
  items: (_o, h) => h.wb.sheets.map((s) => ({ type: "Worksheet", sheetId: s.id })),
  indexer: (_o, key, h) => {
    const s = sheetKey(h, key);
    if (!s) throw itemNotFound(`The requested worksheet '${String(key)}' doesn't exist.`);
    return { type: "Worksheet", sheetId: s.id };
  },
  objects: {
    Add: (_o, args, h) => {
      const name = args[0];
      if (name !== undefined && name !== null && typeof name !== "string") throw invalidArgument("worksheets.add: the name must be a string.");
      h.changed();
      return { type: "Worksheet", sheetId: h.wb.addSheet(name).id };
    },
    GetItemOrNullObject: (_o, args, h) => {
      const s = sheetKey(h, args[0]);
      return s ? { type: "Worksheet", sheetId: s.id } : null;
    },
    GetActiveWorksheet: (_o, _a, h) => ({ type: "Worksheet", sheetId: h.wb.activeSheet().id }),
    GetFirst: (_o, args, h) => {
      const visibleOnly = args[0] === true;
      const s = h.wb.sheets.find((x) => !visibleOnly || (x.visibility ?? "Visible") === "Visible");
      if (!s) throw itemNotFound("There is no worksheet.");
      return { type: "Worksheet", sheetId: s.id };
    },
    GetLast: (_o, args, h) => {
      const visibleOnly = args[0] === true;
      const s = [...h.wb.sheets].reverse().find((x) => !visibleOnly || (x.visibility ?? "Visible") === "Visible");
      if (!s) throw itemNotFound("There is no worksheet.");
      return { type: "Worksheet", sheetId: s.id };
    },
    _GetSheetById: (_o, args, h) => ({ type: "Worksheet", sheetId: h.wb.requireSheetId(String(args[0])).id }),
  },
  calls: {
    GetCount: (_o, args, h) => (args[0] === true ? h.wb.sheets.filter((s) => (s.visibility ?? "Visible") === "Visible").length : h.wb.sheets.length),
  },
};

const Worksheet: TypeDef<"Worksheet"> = {
  check: (o, h) => void sheetOf(h, o.sheetId),
  id: (o) => o.sheetId,
  scalars: {
    Name: { get: (o, h) => sheetOf(h, o.sheetId).name, set: (o, v, h) => h.wb.renameSheet(sheetOf(h, o.sheetId), v) },
    Id: { get: (o) => o.sheetId },
    Position: { get: (o, h) => h.wb.sheets.indexOf(sheetOf(h, o.sheetId)) },
    Visibility: {
      get: (o, h) => sheetOf(h, o.sheetId).visibility ?? "Visible",
      /** The last visible sheet cannot be hidden; hiding the active sheet activates a visible one. */
      set: (o, v, h) => {
        if (typeof v !== "string" || !VISIBILITY.includes(v)) throw invalidArgument(`visibility must be Visible, Hidden or VeryHidden; got ${String(v)}.`);
        const wb = h.wb;
        const sheet = sheetOf(h, o.sheetId);
        // Issue #35: hiding or showing a sheet is a change of the workbook's structure.
        if (v !== (sheet.visibility ?? "Visible")) wb.checkStructureEditable();
        if (v !== "Visible" && !wb.sheets.some((x) => x !== sheet && (x.visibility ?? "Visible") === "Visible")) {
          throw invalidOperation("A workbook must contain at least one visible worksheet.");
        }
        sheet.visibility = v as SheetModel["visibility"];
        if (v !== "Visible" && wb.activeSheetId === sheet.id) {
          const other = wb.sheets.find((x) => (x.visibility ?? "Visible") === "Visible");
          if (other) wb.activeSheetId = other.id;
        }
      },
    },
  },
  defaults: ["Name", "Id", "Position", "Visibility"],
  nav: {
    Tables: (o) => ({ type: "TableCollection", sheetId: o.sheetId }),
    Names: (o) => ({ type: "NamedItemCollection", sheetId: o.sheetId }),
    Protection: (o) => ({ type: "WorksheetProtection", sheetId: o.sheetId }),
  },
  objects: {
    GetRange: (o, args, h) => {
      const sheet = sheetOf(h, o.sheetId);
      const address = args[0];
      if (address === undefined || address === null || address === "") return range(o.sheetId, { r0: 0, c0: 0, r1: MAX_ROWS - 1, c1: MAX_COLUMNS - 1 });
      if (typeof address !== "string") throw invalidArgument("getRange: the address must be a string.");
      const { sheet: s, rect } = h.wb.resolveAddress(address, sheet);
      if (s !== sheet) throw invalidArgument(`The address '${address}' refers to another worksheet.`);
      return range(o.sheetId, rect);
    },
    GetRangeByIndexes: (o, args, h) => {
      sheetOf(h, o.sheetId);
      const [r, c, rows, cols] = args.map((a, i) => int(a, ["startRow", "startColumn", "rowCount", "columnCount"][i]));
      if (!(rows >= 1 && cols >= 1)) throw invalidArgument("getRangeByIndexes: rowCount and columnCount must be at least 1.");
      return range(o.sheetId, { r0: r, c0: c, r1: r + rows - 1, c1: c + cols - 1 });
    },
    GetCell: (o, args, h) => {
      sheetOf(h, o.sheetId);
      const r = int(args[0], "row"), c = int(args[1], "column");
      return range(o.sheetId, { r0: r, c0: c, r1: r, c1: c });
    },
    /** On an empty sheet Excel returns A1 (docs: Worksheet.getUsedRange, "If the entire worksheet is blank, this function will return the top left cell"). */
    GetUsedRange: (o, args, h) => range(o.sheetId, h.wb.usedRect(sheetOf(h, o.sheetId), args[0] === true) ?? { r0: 0, c0: 0, r1: 0, c1: 0 }),
    GetUsedRangeOrNullObject: (o, args, h) => {
      const r = h.wb.usedRect(sheetOf(h, o.sheetId), args[0] === true);
      return r ? range(o.sheetId, r) : null;
    },
  },
  calls: {
    /** `calculate(markAllDirty)` (ExcelApi 1.6): "Calculates all cells on a worksheet" (`WorkbookModel.calculateCells`). */
    Calculate: (o, args, h) => {
      const sheet = sheetOf(h, o.sheetId);
      bool(args[0], "calculate: markAllDirty");
      h.wb.calculateCells(sheet, null, `worksheet ${sheet.name}`);
      h.changed();
      return undefined;
    },
    Activate: (o, _a, h) => {
      h.wb.activateSheet(sheetOf(h, o.sheetId));
      h.changed();
      return undefined;
    },
    Delete: (o, _a, h) => {
      h.wb.deleteSheet(sheetOf(h, o.sheetId));
      h.changed();
      return undefined;
    },
  },
};

/** Derived ranges share one rule: the result must stay on the grid (InvalidArgument otherwise). */
function derived(f: (o: Of<"Range">, args: unknown[], h: HostContext) => Rect) {
  return (o: Of<"Range">, args: unknown[], h: HostContext): HostObject => range(o.sheetId, f(o, args, h), "resulting range");
}

function otherRect(h: HostContext, o: Of<"Range">, args: unknown[], refs: ArgRefs, what: string): Rect {
  const sheet = sheetOf(h, o.sheetId);
  const { sheet: s, rect } = rangeArg(h, args, refs, 0, sheet, what);
  if (s !== sheet) throw invalidArgument(`${what}: the ranges must be on the same worksheet.`);
  return rect;
}

const Range: TypeDef<"Range"> = {
  check: (o, h) => void sheetOf(h, o.sheetId),
  scalars: {
    Address: { get: (o, h) => h.wb.addressOf(sheetOf(h, o.sheetId), o.rect) },
    AddressLocal: { get: (o, h) => h.wb.addressOf(sheetOf(h, o.sheetId), o.rect) },
    RowIndex: { get: (o) => o.rect.r0 },
    ColumnIndex: { get: (o) => o.rect.c0 },
    RowCount: { get: (o) => rectRows(o.rect) },
    ColumnCount: { get: (o) => rectColumns(o.rect) },
    CellCount: { get: (o) => rectRows(o.rect) * rectColumns(o.rect) },
    IsEntireColumn: { get: (o) => o.rect.r0 === 0 && o.rect.r1 === MAX_ROWS - 1 },
    IsEntireRow: { get: (o) => o.rect.c0 === 0 && o.rect.c1 === MAX_COLUMNS - 1 },
    Values: {
      get: (o, h) => h.wb.readValues(sheetOf(h, o.sheetId), o.rect),
      set: (o, v, h) => {
        const sheet = sheetOf(h, o.sheetId);
        h.wb.writeValues(sheet, o.rect, v);
        h.wb.autoExpandTables(sheet, o.rect);
      },
    },
    Formulas: {
      get: (o, h) => h.wb.readFormulas(sheetOf(h, o.sheetId), o.rect),
      set: (o, v, h) => {
        const sheet = sheetOf(h, o.sheetId);
        h.wb.writeFormulas(sheet, o.rect, v);
        h.wb.autoExpandTables(sheet, o.rect);
      },
    },
    NumberFormat: {
      get: (o, h) => h.wb.readNumberFormat(sheetOf(h, o.sheetId), o.rect),
      set: (o, v, h) => h.wb.writeNumberFormat(sheetOf(h, o.sheetId), o.rect, v),
    },
    Text: { get: (o, h) => h.wb.readText(sheetOf(h, o.sheetId), o.rect) },
    ValueTypes: { get: (o, h) => h.wb.readValueTypes(sheetOf(h, o.sheetId), o.rect) },
  },
  defaults: ["Address", "AddressLocal", "CellCount", "ColumnCount", "ColumnIndex", "Formulas", "IsEntireColumn", "IsEntireRow", "NumberFormat", "RowCount", "RowIndex", "Text", "ValueTypes", "Values"],
  nav: {
    Format: (o) => ({ type: "RangeFormat", sheetId: o.sheetId, rect: o.rect }),
    Worksheet: (o, h) => ({ type: "Worksheet", sheetId: sheetOf(h, o.sheetId).id }),
    ConditionalFormats: (o) => ({ type: "ConditionalFormatCollection", sheetId: o.sheetId, rect: o.rect }),
  },
  objects: {
    GetCell: derived((o, a) => {
      const r = o.rect.r0 + int(a[0], "row"), c = o.rect.c0 + int(a[1], "column");
      return { r0: r, c0: c, r1: r, c1: c };
    }),
    GetRow: derived((o, a) => {
      const row = int(a[0], "row");
      if (row < 0 || row >= rectRows(o.rect)) throw invalidArgument(`getRow: row ${row} is outside the range.`);
      return { r0: o.rect.r0 + row, c0: o.rect.c0, r1: o.rect.r0 + row, c1: o.rect.c1 };
    }),
    GetColumn: derived((o, a) => {
      const col = int(a[0], "column");
      if (col < 0 || col >= rectColumns(o.rect)) throw invalidArgument(`getColumn: column ${col} is outside the range.`);
      return { r0: o.rect.r0, c0: o.rect.c0 + col, r1: o.rect.r1, c1: o.rect.c0 + col };
    }),
    GetResizedRange: derived((o, a) => {
      const rect = { ...o.rect, r1: o.rect.r1 + int(a[0], "deltaRows"), c1: o.rect.c1 + int(a[1], "deltaColumns") };
      if (rect.r1 < rect.r0 || rect.c1 < rect.c0) throw invalidArgument("getResizedRange: the range would have no rows or columns.");
      return rect;
    }),
    GetAbsoluteResizedRange: derived((o, a) => {
      const rows = int(a[0], "numRows"), cols = int(a[1], "numColumns");
      if (rows < 1 || cols < 1) throw invalidArgument("getAbsoluteResizedRange: numRows and numColumns must be at least 1.");
      return { r0: o.rect.r0, c0: o.rect.c0, r1: o.rect.r0 + rows - 1, c1: o.rect.c0 + cols - 1 };
    }),
    GetOffsetRange: derived((o, a) => {
      const dr = int(a[0], "rowOffset"), dc = int(a[1], "columnOffset");
      return { r0: o.rect.r0 + dr, c0: o.rect.c0 + dc, r1: o.rect.r1 + dr, c1: o.rect.c1 + dc };
    }),
    GetEntireColumn: derived((o) => ({ r0: 0, c0: o.rect.c0, r1: MAX_ROWS - 1, c1: o.rect.c1 })),
    GetEntireRow: derived((o) => ({ r0: o.rect.r0, c0: 0, r1: o.rect.r1, c1: MAX_COLUMNS - 1 })),
    GetLastRow: derived((o) => ({ ...o.rect, r0: o.rect.r1 })),
    GetLastColumn: derived((o) => ({ ...o.rect, c0: o.rect.c1 })),
    GetLastCell: derived((o) => ({ r0: o.rect.r1, c0: o.rect.c1, r1: o.rect.r1, c1: o.rect.c1 })),
    /**
     * `getRowsBelow(count = 1)` / `getRowsAbove(count = 1)` (ExcelApi 1.3, docs: Range.getRowsBelow,
     * "Gets a certain number of rows below the current Range object"): the rows next to the range, in
     * its columns; 0 or a negative count, or rows off the grid, are refused.
     */
    GetRowsBelow: derived((o, a) => {
      const n = a[0] === undefined || a[0] === null ? 1 : int(a[0], "count");
      if (n < 1) throw invalidArgument("getRowsBelow: count must be at least 1.");
      return { r0: o.rect.r1 + 1, c0: o.rect.c0, r1: o.rect.r1 + n, c1: o.rect.c1 };
    }),
    GetRowsAbove: derived((o, a) => {
      const n = a[0] === undefined || a[0] === null ? 1 : int(a[0], "count");
      if (n < 1) throw invalidArgument("getRowsAbove: count must be at least 1.");
      return { r0: o.rect.r0 - n, c0: o.rect.c0, r1: o.rect.r0 - 1, c1: o.rect.c1 };
    }),
    GetColumnsAfter: derived((o, a) => {
      const n = a[0] === undefined || a[0] === null ? 1 : int(a[0], "count");
      if (n < 1) throw invalidArgument("getColumnsAfter: count must be at least 1.");
      return { r0: o.rect.r0, c0: o.rect.c1 + 1, r1: o.rect.r1, c1: o.rect.c1 + n };
    }),
    GetColumnsBefore: derived((o, a) => {
      const n = a[0] === undefined || a[0] === null ? 1 : int(a[0], "count");
      if (n < 1) throw invalidArgument("getColumnsBefore: count must be at least 1.");
      return { r0: o.rect.r0, c0: o.rect.c0 - n, r1: o.rect.r1, c1: o.rect.c0 - 1 };
    }),
    GetBoundingRect: (o, args, h, refs) => range(o.sheetId, boundingRect(o.rect, otherRect(h, o, args, refs, "getBoundingRect"))),
    GetIntersection: (o, args, h, refs) => {
      const r = intersectRect(o.rect, otherRect(h, o, args, refs, "getIntersection"));
      if (!r) throw itemNotFound("getIntersection: the ranges do not intersect.");
      return range(o.sheetId, r);
    },
    GetIntersectionOrNullObject: (o, args, h, refs) => {
      const r = intersectRect(o.rect, otherRect(h, o, args, refs, "getIntersectionOrNullObject"));
      return r ? range(o.sheetId, r) : null;
    },
    /**
     * `Range.getUsedRange(valuesOnly)` (ExcelApi 1.1): the used part of this range. Docs: "If there are
     * no used cells within the range, this function will throw an ItemNotFound error" (unlike
     * `Worksheet.getUsedRange`, which gives A1 on an empty sheet).
     */
    GetUsedRange: (o, args, h) => {
      const r = h.wb.usedRectMeeting(sheetOf(h, o.sheetId), o.rect, args[0] === true);
      if (!r) throw itemNotFound("No cells in the range are used.");
      return range(o.sheetId, r);
    },
    GetUsedRangeOrNullObject: (o, args, h) => {
      const r = h.wb.usedRectMeeting(sheetOf(h, o.sheetId), o.rect, args[0] === true);
      return r ? range(o.sheetId, r) : null;
    },
    /** `Range.insert(shift)`: the inserted cells (the same address), see `WorkbookModel.shiftCells`. */
    Insert: (o, args, h) => {
      h.wb.insertOrDeleteCells(sheetOf(h, o.sheetId), o.rect, args[0], "insert");
      h.changed();
      return range(o.sheetId, o.rect);
    },
  },
  calls: {
    _KeepReference: () => undefined,
    /** `calculate()` (ExcelApi 1.6): "Calculates a range of cells on a worksheet" (`WorkbookModel.calculateCells`). */
    Calculate: (o, _a, h) => {
      const sheet = sheetOf(h, o.sheetId);
      h.wb.calculateCells(sheet, o.rect, `range ${h.wb.addressOf(sheet, o.rect)}`);
      h.changed();
      return undefined;
    },
    /** The library's check before it splits a large write into row blocks (`setRangePropertiesInBulk`). */
    _ValidateArraySize: (o, args) => {
      const rows = int(args[0], "rows"), cols = int(args[1], "columns");
      if (rows !== rectRows(o.rect) || cols !== rectColumns(o.rect)) {
        throw invalidArgument(
          `The number of rows or columns in the input array doesn't match the size or dimensions of the range (range is ${rectRows(o.rect)}x${rectColumns(o.rect)}, input is ${rows}x${cols}).`,
        );
      }
      return undefined;
    },
    /**
     * `merge(across)` / `unmerge()` (ExcelApi 1.2): merged areas are modelled only as areas cells cannot
     * be shifted through (issue #21, `WorkbookModel.mergeCells`; Excel's message "We can't do that to a
     * merged cell.").
     */
    Merge: (o, args, h) => {
      h.wb.mergeCells(sheetOf(h, o.sheetId), o.rect, bool(args[0], "merge: across", false));
      h.changed();
      return undefined;
    },
    Unmerge: (o, _a, h) => {
      h.wb.unmergeCells(sheetOf(h, o.sheetId), o.rect);
      h.changed();
      return undefined;
    },
    Select: (o, _a, h) => {
      h.wb.requireSheetId(o.sheetId);
      h.wb.activeSheetId = o.sheetId;
      h.wb.selection = { sheetId: o.sheetId, rect: { ...o.rect } };
      h.wb.extraSelectionAreas = [];
      h.changed();
      return undefined;
    },
    Delete: (o, args, h) => {
      h.wb.insertOrDeleteCells(sheetOf(h, o.sheetId), o.rect, args[0], "delete");
      h.changed();
      return undefined;
    },
    Clear: (o, args, h) => {
      const a = args[0] === undefined || args[0] === null ? "All" : args[0];
      if (typeof a !== "string" || !CLEAR_TYPES.includes(a)) throw invalidArgument(`clear: unknown applyTo ${JSON.stringify(a)}.`);
      h.wb.clear(sheetOf(h, o.sheetId), o.rect, a as ClearApplyTo);
      h.changed();
      return undefined;
    },
    /**
     * `copyFrom(source, copyType, skipBlanks, transpose)` (ExcelApi 1.9). Docs (Range.copyFrom): "The
     * destination range can be a different size than the source range; the destination is expanded
     * automatically if it's smaller than the source": a larger destination that is a whole multiple of
     * the source is filled with copies of it (tiling), as pasting does.
     */
    CopyFrom: (o, args, h, refs) => {
      const copyType = args[1] === undefined || args[1] === null ? "All" : args[1];
      if (args[2] === true || args[3] === true) throw invalidArgument("copyFrom: skipBlanks and transpose are not emulated.");
      if (typeof copyType !== "string" || !COPY_TYPES.includes(copyType)) throw invalidArgument(`copyFrom: copy type ${JSON.stringify(copyType)} is not emulated.`);
      const dst = sheetOf(h, o.sheetId);
      const { sheet: src, rect: from } = rangeArg(h, args, refs, 0, dst, "copyFrom");
      h.wb.copyRangeTiled(src, from, dst, o.rect, copyType as "All" | "Formulas" | "Values" | "Formats");
      h.changed();
      return undefined;
    },
  },
};

const RangeFormat: TypeDef<"RangeFormat"> = {
  scalars: {},
  nav: { Fill: (o) => ({ type: "RangeFill", sheetId: o.sheetId, rect: o.rect }) },
  calls: {
    /** Column widths are not modelled; the call is counted (`stats.autofitCalls`). */
    AutofitColumns: (o, _a, h) => {
      // Issue #35: column widths on a protected sheet only with allowFormatColumns.
      h.wb.checkSheetEditable(sheetOf(h, o.sheetId), "formatColumns");
      sheetOf(h, o.sheetId).autofitCount++;
      h.wb.stats.autofitCalls++;
      return undefined;
    },
    AutofitRows: (o, _a, h) => {
      const sheet = sheetOf(h, o.sheetId);
      if (sheet.protection && !sheet.protection.options.allowFormatRows) h.wb.checkSheetEditable(sheet);
      h.wb.stats.autofitCalls++;
      return undefined;
    },
  },
};

const RangeFill: TypeDef<"RangeFill"> = {
  scalars: {
    Color: {
      get: (o, h) => h.wb.readFill(sheetOf(h, o.sheetId), o.rect).color,
      set: (o, v, h) => h.wb.writeFillColor(sheetOf(h, o.sheetId), o.rect, v),
    },
    Pattern: { get: (o, h) => h.wb.readFill(sheetOf(h, o.sheetId), o.rect).pattern },
    TintAndShade: { get: (o, h) => h.wb.readFill(sheetOf(h, o.sheetId), o.rect).tintAndShade },
  },
  defaults: ["Color", "Pattern", "TintAndShade"],
  calls: {
    Clear: (o, _a, h) => {
      h.wb.clearFill(sheetOf(h, o.sheetId), o.rect);
      h.changed();
      return undefined;
    },
  },
};

// ---------- conditional formats ----------

type CfRef = { sheetId: string; cfId: string; scope: Rect };
const cfPart = <T extends "ConditionalFormat" | "CustomConditionalFormat" | "ConditionalFormatRule" | "ConditionalRangeFormat" | "ConditionalRangeFill">(type: T, o: CfRef): Of<T> =>
  ({ type, sheetId: o.sheetId, cfId: o.cfId, scope: o.scope }) as Of<T>;

const ConditionalFormatCollection: TypeDef<"ConditionalFormatCollection"> = {
  scalars: {},
  items: (o, h) => h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.rect).map((cf) => cfPart("ConditionalFormat", { sheetId: o.sheetId, cfId: cf.id, scope: o.rect })),
  indexer: (o, key, h) => {
    const cf = h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.rect).find((x) => x.id === key);
    if (!cf) throw itemNotFound(`The conditional format '${String(key)}' does not exist.`);
    return cfPart("ConditionalFormat", { sheetId: o.sheetId, cfId: cf.id, scope: o.rect });
  },
  objects: {
    /** Adds a format over this range at the top priority; only "Custom" is emulated (others: InvalidArgument). */
    Add: (o, args, h) => {
      const cf = h.wb.addConditionalFormat(sheetOf(h, o.sheetId), o.rect, args[0]);
      h.changed();
      return cfPart("ConditionalFormat", { sheetId: o.sheetId, cfId: cf.id, scope: o.rect });
    },
    GetItemAt: (o, args, h) => {
      const i = int(args[0], "index");
      const cf = h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.rect)[i];
      if (!cf) throw itemNotFound(`There is no conditional format at index ${i}.`);
      return cfPart("ConditionalFormat", { sheetId: o.sheetId, cfId: cf.id, scope: o.rect });
    },
    GetItemOrNullObject: (o, args, h) => {
      const cf = h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.rect).find((x) => x.id === args[0]);
      return cf ? cfPart("ConditionalFormat", { sheetId: o.sheetId, cfId: cf.id, scope: o.rect }) : null;
    },
  },
  calls: {
    GetCount: (o, _a, h) => h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.rect).length,
    ClearAll: (o, _a, h) => {
      const sheet = sheetOf(h, o.sheetId);
      for (const cf of h.wb.conditionalFormatsOver(sheet, o.rect)) h.wb.deleteConditionalFormat(sheet, cf.id);
      h.changed();
      return undefined;
    },
  },
};

const ConditionalFormat: TypeDef<"ConditionalFormat"> = {
  check: (o, h) => void cfOf(h, o),
  id: (o) => o.cfId,
  scalars: {
    Id: { get: (o) => o.cfId },
    Type: { get: (o, h) => cfOf(h, o).type },
    /**
     * `priority`: the format's index among the formats of its sheet (0 = top). Setting it moves the
     * format to that place (docs: ConditionalFormat.priority, "The priority (or index) within the
     * conditional format collection that this conditional format currently exists in. Changing this
     * also changes other conditional formats' priorities"); beyond the end it goes last.
     */
    Priority: {
      get: (o, h) => h.wb.conditionalFormatsOver(sheetOf(h, o.sheetId), o.scope).indexOf(cfOf(h, o)),
      set: (o, v, h) => h.wb.setConditionalFormatPriority(sheetOf(h, o.sheetId), o.cfId, int(v, "priority"), o.scope),
    },
    StopIfTrue: {
      get: (o, h) => cfOf(h, o).stopIfTrue,
      set: (o, v, h) => {
        cfOf(h, o).stopIfTrue = bool(v, "ConditionalFormat.stopIfTrue");
      },
    },
  },
  defaults: ["Id", "Type", "Priority", "StopIfTrue"],
  nav: {
    Custom: (o, h) => {
      if (cfOf(h, o).type !== "Custom") throw invalidOperation("The conditional format is not of the Custom type.");
      return cfPart("CustomConditionalFormat", o);
    },
    CustomOrNullObject: (o, h) => (cfOf(h, o).type === "Custom" ? cfPart("CustomConditionalFormat", o) : null),
  },
  objects: {
    GetRange: (o, _a, h) => range(o.sheetId, { ...cfOf(h, o).rect }),
    GetRangeOrNullObject: (o, _a, h) => range(o.sheetId, { ...cfOf(h, o).rect }),
  },
  calls: {
    Delete: (o, _a, h) => {
      h.wb.deleteConditionalFormat(sheetOf(h, o.sheetId), o.cfId);
      h.changed();
      return undefined;
    },
  },
};

const CustomConditionalFormat: TypeDef<"CustomConditionalFormat"> = {
  scalars: {},
  nav: {
    Rule: (o) => cfPart("ConditionalFormatRule", o),
    Format: (o) => cfPart("ConditionalRangeFormat", o),
  },
};

/** `rule.formula`, read and written relative to the top-left cell of the range the format was reached through (office-js #5194). */
const ConditionalFormatRule: TypeDef<"ConditionalFormatRule"> = {
  scalars: {
    Formula: {
      get: (o, h) => h.wb.readConditionalFormula(cfOf(h, o), { r: o.scope.r0, c: o.scope.c0 }),
      set: (o, v, h) => h.wb.writeConditionalFormula(cfOf(h, o), v, { r: o.scope.r0, c: o.scope.c0 }),
    },
  },
  defaults: ["Formula"],
};

const ConditionalRangeFormat: TypeDef<"ConditionalRangeFormat"> = {
  scalars: {},
  nav: { Fill: (o) => cfPart("ConditionalRangeFill", o) },
};

const ConditionalRangeFill: TypeDef<"ConditionalRangeFill"> = {
  scalars: { Color: { get: (o, h) => cfOf(h, o).fill, set: (o, v, h) => h.wb.writeConditionalFill(cfOf(h, o), v) } },
  defaults: ["Color"],
  calls: {
    Clear: (o, _a, h) => {
      cfOf(h, o).fill = null;
      h.changed();
      return undefined;
    },
  },
};

// ---------- tables ----------

function findTable(h: HostContext, sheetId: string | null, key: unknown): TableModel | undefined {
  if (typeof key !== "string" && typeof key !== "number") return undefined;
  const k = String(key).toLowerCase();
  return tablesIn(h, sheetId).find((t) => t.name.toLowerCase() === k || t.id.toLowerCase() === k);
}

const TableCollection: TypeDef<"TableCollection"> = {
  check: (o, h) => void (o.sheetId === null || sheetOf(h, o.sheetId)),
  scalars: { Count: { get: (o, h) => tablesIn(h, o.sheetId).length } },
  items: (o, h) => tablesIn(h, o.sheetId).map((t) => ({ type: "Table", tableId: t.id })),
  indexer: (o, key, h) => {
    const t = findTable(h, o.sheetId, key);
    if (!t) throw itemNotFound(`The requested table '${String(key)}' doesn't exist.`);
    return { type: "Table", tableId: t.id };
  },
  objects: {
    /**
     * `tables.add(address, hasHeaders)`: a Range, or an address. Without a sheet in the address the
     * ACTIVE sheet is used, also through `worksheet.tables` (docs, TableCollection.add: "If the address
     * does not contain a sheet name, the currently-active sheet is used"; `Worksheet.tables` is a
     * TableCollection and no worksheet-scoped exception is documented: the stricter reading, issue #21).
     * An address naming another sheet than the worksheet's is refused.
     */
    Add: (o, args, h, refs) => {
      const { sheet, rect } = rangeArg(h, args, refs, 0, h.wb.activeSheet(), "tables.add");
      const named = refs(0) !== undefined || (typeof args[0] === "string" && args[0].includes("!"));
      if (o.sheetId !== null && sheet.id !== o.sheetId && named) throw invalidArgument("tables.add: the range is not on this worksheet.");
      const t = h.wb.addTable(sheet, rect, args[1] as boolean);
      h.changed();
      return { type: "Table", tableId: t.id };
    },
    GetItemOrNullObject: (o, args, h) => {
      const t = findTable(h, o.sheetId, args[0]);
      return t ? { type: "Table", tableId: t.id } : null;
    },
    GetItemAt: (o, args, h) => {
      const i = int(args[0], "index");
      const t = tablesIn(h, o.sheetId)[i];
      if (!t) throw itemNotFound(`There is no table at index ${i}.`);
      return { type: "Table", tableId: t.id };
    },
  },
  calls: { GetCount: (o, _a, h) => tablesIn(h, o.sheetId).length },
};

function tableRange(h: HostContext, o: { tableId: string }, f: (t: TableModel) => Rect | null, what: string): HostObject {
  const t = tableOf(h, o.tableId);
  const r = f(t);
  if (!r) throw invalidOperation(`The table has no ${what} range.`);
  return range(t.sheetId, r);
}

const Table: TypeDef<"Table"> = {
  check: (o, h) => void tableOf(h, o.tableId),
  id: (o) => o.tableId,
  scalars: {
    Name: { get: (o, h) => tableOf(h, o.tableId).name, set: (o, v, h) => h.wb.renameTable(tableOf(h, o.tableId), v) },
    Id: { get: (o) => o.tableId },
    ShowTotals: { get: (o, h) => tableOf(h, o.tableId).showTotals, set: (o, v, h) => h.wb.setShowTotals(tableOf(h, o.tableId), v) },
    ShowHeaders: { get: () => true },
    Style: {
      get: (o, h) => tableOf(h, o.tableId).style,
      set: (o, v, h) => {
        if (typeof v !== "string" || v === "") throw invalidArgument("table.style must be a style name.");
        tableOf(h, o.tableId).style = v;
      },
    },
  },
  defaults: ["Name", "Id", "ShowTotals", "ShowHeaders", "Style"],
  nav: {
    Columns: (o) => ({ type: "TableColumnCollection", tableId: o.tableId }),
    Rows: (o) => ({ type: "TableRowCollection", tableId: o.tableId }),
    Sort: (o) => ({ type: "TableSort", tableId: o.tableId }),
    AutoFilter: (o) => ({ type: "AutoFilter", tableId: o.tableId }),
    Worksheet: (o, h) => ({ type: "Worksheet", sheetId: tableOf(h, o.tableId).sheetId }),
  },
  objects: {
    GetRange: (o, _a, h) => tableRange(h, o, (t) => ({ ...t.rect }), "whole"),
    GetHeaderRowRange: (o, _a, h) => tableRange(h, o, (t) => h.wb.headerRect(t), "header row"),
    GetDataBodyRange: (o, _a, h) => tableRange(h, o, (t) => h.wb.bodyRect(t), "data body"),
    GetTotalRowRange: (o, _a, h) => tableRange(h, o, (t) => h.wb.totalsRect(t), "total row"),
    ConvertToRange: (o, _a, h) => {
      const { sheet, rect } = h.wb.convertTableToRange(tableOf(h, o.tableId));
      h.changed();
      return range(sheet.id, rect);
    },
  },
  calls: {
    /** ExcelApi 1.13: header row stays, the new range overlaps the old one; name and id are kept. */
    Resize: (o, args, h, refs) => {
      const t = tableOf(h, o.tableId);
      const { sheet, rect } = rangeArg(h, args, refs, 0, sheetOf(h, t.sheetId), "table.resize");
      h.wb.resizeTable(t, sheet, rect);
      h.changed();
      return undefined;
    },
    Delete: (o, _a, h) => {
      h.wb.deleteTable(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
    ClearFilters: (o, _a, h) => {
      h.wb.clearFilters(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
    ReapplyFilters: (o, _a, h) => {
      h.wb.apiReapplyFilter(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
  },
};

function findColumn(h: HostContext, tableId: string, key: unknown): Of<"TableColumn"> | null {
  const t = tableOf(h, tableId);
  const c =
    typeof key === "number"
      ? t.columns.find((x) => x.id === key)
      : typeof key === "string"
        ? t.columns.find((x) => x.name.toLowerCase() === key.toLowerCase() || String(x.id) === key)
        : undefined;
  return c ? { type: "TableColumn", tableId, columnId: c.id } : null;
}

const TableColumnCollection: TypeDef<"TableColumnCollection"> = {
  check: (o, h) => void tableOf(h, o.tableId),
  scalars: { Count: { get: (o, h) => tableOf(h, o.tableId).columns.length } },
  items: (o, h) => tableOf(h, o.tableId).columns.map((c) => ({ type: "TableColumn", tableId: o.tableId, columnId: c.id })),
  indexer: (o, key, h) => {
    const c = findColumn(h, o.tableId, key);
    if (!c) throw itemNotFound(`The table column '${String(key)}' does not exist.`);
    return c;
  },
  objects: {
    /** Inserts a column at `index` (end when omitted); `values` is (rows incl. header) x 1. */
    Add: (o, args, h) => {
      const col = h.wb.addTableColumn(tableOf(h, o.tableId), args[0] as number | null | undefined, args[1], args[2]);
      h.changed();
      return { type: "TableColumn", tableId: o.tableId, columnId: col.id };
    },
    GetItemOrNullObject: (o, args, h) => findColumn(h, o.tableId, args[0]),
    GetItemAt: (o, args, h) => {
      const i = int(args[0], "index");
      const c = tableOf(h, o.tableId).columns[i];
      if (!c) throw itemNotFound(`There is no table column at index ${i}.`);
      return { type: "TableColumn", tableId: o.tableId, columnId: c.id };
    },
  },
  calls: { GetCount: (o, _a, h) => tableOf(h, o.tableId).columns.length },
};

function columnRange(h: HostContext, o: Of<"TableColumn">, f: (t: TableModel, c: number) => Rect | null, what: string): HostObject {
  const { t, index } = columnOf(h, o);
  const r = f(t, t.rect.c0 + index);
  if (!r) throw invalidOperation(`The table column has no ${what} range.`);
  return range(t.sheetId, r);
}

const TableColumn: TypeDef<"TableColumn"> = {
  check: (o, h) => void columnOf(h, o),
  id: (o) => o.columnId,
  scalars: {
    Id: { get: (o) => o.columnId },
    Index: { get: (o, h) => columnOf(h, o).index },
    Name: { get: (o, h) => columnOf(h, o).t.columns[columnOf(h, o).index].name, set: (o, v, h) => h.wb.renameTableColumn(tableOf(h, o.tableId), o.columnId, v) },
    Values: {
      get: (o, h) => {
        const { t, index } = columnOf(h, o);
        const c = t.rect.c0 + index;
        return h.wb.readValues(sheetOf(h, t.sheetId), { r0: t.rect.r0, c0: c, r1: t.rect.r1, c1: c });
      },
    },
  },
  defaults: ["Id", "Index", "Name", "Values"],
  objects: {
    GetRange: (o, _a, h) => columnRange(h, o, (t, c) => ({ r0: t.rect.r0, c0: c, r1: t.rect.r1, c1: c }), "whole"),
    GetHeaderRowRange: (o, _a, h) => columnRange(h, o, (t, c) => ({ r0: t.rect.r0, c0: c, r1: t.rect.r0, c1: c }), "header row"),
    GetDataBodyRange: (o, _a, h) =>
      columnRange(h, o, (t, c) => {
        const b = h.wb.bodyRect(t);
        return { r0: b.r0, c0: c, r1: b.r1, c1: c };
      }, "data body"),
    GetTotalRowRange: (o, _a, h) => columnRange(h, o, (t, c) => (t.showTotals ? { r0: t.rect.r1, c0: c, r1: t.rect.r1, c1: c } : null), "total row"),
  },
};

const TableRowCollection: TypeDef<"TableRowCollection"> = {
  check: (o, h) => void tableOf(h, o.tableId),
  scalars: { Count: { get: (o, h) => h.wb.bodyRowCount(tableOf(h, o.tableId)) } },
  items: (o, h) => Array.from({ length: h.wb.bodyRowCount(tableOf(h, o.tableId)) }, (_, index) => ({ type: "TableRow", tableId: o.tableId, index })),
  objects: {
    /**
     * `rows.add(index, values, alwaysInsert)` (counted in `stats.rowsAddCalls`). With `alwaysInsert`
     * false (ExcelApi 1.15) rows added at the end take empty rows right below the table without
     * shifting anything, where there are such (docs: TableRowCollection.add, "alwaysInsert: Specifies
     * whether the new rows will be inserted into the table when new rows are added. If true, the new
     * rows will be inserted into the table. If false, the new rows will be added below the table").
     */
    Add: (o, args, h) => {
      const t = tableOf(h, o.tableId);
      const at = args[0] === undefined || args[0] === null ? h.wb.bodyRowCount(t) : (args[0] as number);
      h.wb.addTableRows2(t, args[0] as number | null | undefined, args[1], args[2] !== false);
      h.changed();
      return { type: "TableRow", tableId: o.tableId, index: at };
    },
    GetItemAt: (o, args, h) => {
      const i = int(args[0], "index");
      if (i < 0 || i >= h.wb.bodyRowCount(tableOf(h, o.tableId))) throw itemNotFound(`There is no table row at index ${i}.`);
      return { type: "TableRow", tableId: o.tableId, index: i };
    },
  },
  calls: {
    GetCount: (o, _a, h) => h.wb.bodyRowCount(tableOf(h, o.tableId)),
    /** `deleteRowsAt(index, count)`: see `WorkbookModel.deleteTableRows` (refused on a filtered table). */
    DeleteRowsAt: (o, args, h) => {
      h.wb.deleteTableRows(tableOf(h, o.tableId), int(args[0], "index"), args[1] === undefined || args[1] === null ? 1 : int(args[1], "count"));
      h.changed();
      return undefined;
    },
  },
};

const TableRow: TypeDef<"TableRow"> = {
  check: (o, h) => void rowRect(h, o),
  scalars: {
    Index: { get: (o) => o.index },
    Values: {
      get: (o, h) => {
        const { t, rect } = rowRect(h, o);
        return h.wb.readValues(sheetOf(h, t.sheetId), rect);
      },
      set: (o, v, h) => {
        const { t, rect } = rowRect(h, o);
        h.wb.writeValues(sheetOf(h, t.sheetId), rect, v);
      },
    },
  },
  defaults: ["Index", "Values"],
  objects: {
    GetRange: (o, _a, h) => {
      const { t, rect } = rowRect(h, o);
      return range(t.sheetId, rect);
    },
  },
  calls: {
    Delete: (o, _a, h) => {
      h.wb.deleteTableRows(tableOf(h, o.tableId), o.index, 1);
      h.changed();
      return undefined;
    },
  },
};

const TableSort: TypeDef<"TableSort"> = {
  scalars: {
    Fields: { get: (o, h) => tableOf(h, o.tableId).sort?.fields.map((f) => ({ key: f.key, ascending: f.ascending })) ?? [] },
    MatchCase: { get: (o, h) => tableOf(h, o.tableId).sort?.matchCase ?? false },
    Method: { get: () => "PinYin" },
  },
  defaults: ["Fields", "MatchCase", "Method"],
  calls: {
    Apply: (o, args, h) => {
      h.wb.applySort(tableOf(h, o.tableId), args[0], args[1]);
      h.changed();
      return undefined;
    },
    Clear: (o, _a, h) => {
      h.wb.clearSort(tableOf(h, o.tableId));
      return undefined;
    },
    Reapply: (o, _a, h) => {
      h.wb.reapplySort(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
  },
};

const AutoFilter: TypeDef<"AutoFilter"> = {
  scalars: {
    Enabled: { get: (o, h) => tableOf(h, o.tableId).autoFilterEnabled !== false },
    IsDataFiltered: { get: (o, h) => tableOf(h, o.tableId).filters.size > 0 },
    Criteria: {
      get: (o, h) => {
        const t = tableOf(h, o.tableId);
        return t.columns.map((_, i) => JSON.parse(JSON.stringify(t.filters.get(i) ?? { filterOn: "Custom" })) as FilterCriteria);
      },
    },
  },
  defaults: ["Enabled", "IsDataFiltered", "Criteria"],
  calls: {
    /** Filters `columnIndex` of the table by `criteria` (Values and simple Custom comparisons are evaluated). */
    Apply: (o, args, h) => {
      const t = tableOf(h, o.tableId);
      if (args[1] !== undefined && args[1] !== null) h.wb.applyFilter(t, args[1], args[2]);
      h.changed();
      return undefined;
    },
    Reapply: (o, _a, h) => {
      h.wb.apiReapplyFilter(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
    /** Removes the filter buttons and every criterion (ExcelApi 1.9). */
    Remove: (o, _a, h) => {
      h.wb.removeAutoFilter(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
    ClearCriteria: (o, _a, h) => {
      h.wb.clearFilters(tableOf(h, o.tableId));
      h.changed();
      return undefined;
    },
  },
};

// ---------- settings ----------

const SettingCollection: TypeDef<"SettingCollection"> = {
  scalars: {},
  items: (_o, h) => [...h.wb.settings.keys()].map((key) => ({ type: "Setting", key })),
  indexer: (_o, key, h) => {
    if (typeof key !== "string" || !h.wb.settings.has(key)) throw itemNotFound(`The setting '${String(key)}' does not exist.`);
    return { type: "Setting", key };
  },
  objects: {
    /** Adds or replaces a setting; the value must be JSON-serialisable (it arrives as JSON anyway). */
    Add: (_o, args, h) => {
      h.wb.setSetting(args[0], args[1]);
      h.changed();
      return { type: "Setting", key: args[0] as string };
    },
    GetItemOrNullObject: (_o, args, h) => (typeof args[0] === "string" && h.wb.settings.has(args[0]) ? { type: "Setting", key: args[0] } : null),
  },
  calls: { GetCount: (_o, _a, h) => h.wb.settings.size },
};

const Setting: TypeDef<"Setting"> = {
  check: (o, h) => {
    if (!h.wb.settings.has(o.key)) throw itemNotFound(`The setting '${o.key}' does not exist.`);
  },
  id: (o) => o.key,
  scalars: {
    Key: { get: (o) => o.key },
    Value: {
      get: (o, h) => h.wb.getSetting(o.key),
      set: (o, v, h) => {
        if (!h.wb.settings.has(o.key)) throw itemNotFound(`The setting '${o.key}' does not exist.`);
        h.wb.setSetting(o.key, v);
      },
    },
  },
  defaults: ["Key", "Value"],
  calls: {
    Delete: (o, _a, h) => {
      h.wb.deleteSetting(o.key);
      h.changed();
      return undefined;
    },
  },
};

// ---------- names ----------

const NamedItemCollection: TypeDef<"NamedItemCollection"> = {
  scalars: {},
  items: (o, h) => namesIn(h, o.sheetId).map((name) => ({ type: "NamedItem", name, sheetId: o.sheetId })),
  indexer: (o, key, h) => {
    const name = namesIn(h, o.sheetId).find((n) => typeof key === "string" && n.toLowerCase() === key.toLowerCase());
    if (!name) throw itemNotFound(`The name '${String(key)}' does not exist.`);
    return { type: "NamedItem", name, sheetId: o.sheetId };
  },
  objects: {
    /**
     * `names.add(name, reference, comment)` (ExcelApi 1.4); on `worksheet.names` the name is scoped
     * to that sheet (docs: Worksheet.names, "Collection of names scoped to the current worksheet").
     * Names share one namespace with tables. The reference is a Range (kept as an absolute reference
     * to it, `=Sheet1!$C$5`) or a formula text starting with "=" (issue #21: what the name refers to
     * is kept, follows inserted and deleted cells, and evaluates where the name is used).
     */
    Add: (o, args, h, refs) => {
      const name = args[0];
      if (typeof name !== "string") throw invalidArgument("names.add: the name must be a string.");
      const ref = refs(1);
      if (ref === null) throw itemNotFound("names.add: the reference is a null object.");
      if (ref === undefined && (typeof args[1] !== "string" || args[1] === "")) throw invalidArgument("names.add: the reference must be a Range or a formula.");
      if (ref !== undefined && ref.type !== "Range") throw invalidArgument("names.add: the reference must be a Range or a formula.");
      let formula: string;
      if (ref !== undefined) {
        const a = h.wb.addressOf(sheetOf(h, ref.sheetId), ref.rect);
        const bang = a.lastIndexOf("!");
        formula = `=${a.slice(0, bang)}!${a.slice(bang + 1).replace(/([A-Z]+)(\d+)/g, "$$$1$$$2")}`;
      } else formula = args[1] as string;
      h.wb.addDefinedName(name, o.sheetId === null ? undefined : sheetOf(h, o.sheetId).name, formula);
      h.changed();
      return { type: "NamedItem", name, sheetId: o.sheetId };
    },
    GetItemOrNullObject: (o, args, h) => {
      const name = namesIn(h, o.sheetId).find((n) => typeof args[0] === "string" && n.toLowerCase() === args[0].toLowerCase());
      return name ? { type: "NamedItem", name, sheetId: o.sheetId } : null;
    },
  },
  calls: { GetCount: (o, _a, h) => namesIn(h, o.sheetId).length },
};

const NamedItem: TypeDef<"NamedItem"> = {
  check: (o, h) => {
    if (!namesIn(h, o.sheetId).includes(o.name)) throw itemNotFound(`The name '${o.name}' does not exist.`);
  },
  id: (o) => o.name,
  scalars: {
    Name: { get: (o) => o.name },
    /** `Excel.NamedItemScope`: "Worksheet" for a sheet-scoped name, else "Workbook". */
    Scope: { get: (o) => (o.sheetId === null ? "Workbook" : "Worksheet") },
    /**
     * What the name refers to (ExcelApi 1.7, docs: NamedItem.formula, "The formula of the named item.
     * Formulas always start with an equal sign"): `=Sheet1!$C$5`, `=#REF!` once its cells were deleted
     * (issue #21). A name added without a reference (test set-up) reads null.
     */
    Formula: { get: (o, h) => h.wb.nameFormulas.get(`${o.sheetId ?? ""}|${o.name.toLowerCase()}`)?.formula ?? null },
    Visible: { get: () => true },
  },
  defaults: ["Name", "Scope", "Visible", "Formula"],
  nav: {
    Worksheet: (o) => {
      if (o.sheetId === null) throw itemNotFound("The name is scoped to the workbook: it has no worksheet.");
      return { type: "Worksheet", sheetId: o.sheetId };
    },
    WorksheetOrNullObject: (o) => (o.sheetId === null ? null : { type: "Worksheet", sheetId: o.sheetId }),
  },
};

// ---------- worksheet functions ----------

const Functions: TypeDef<"Functions"> = {
  scalars: {},
  objects: {
    /** `DATE(year, month, day)`: the serial in the workbook's date system (1904 → 1904-01-01 is 0); #NUM! before its start. */
    Date: (_o, args, h) => {
      const [y, m, d] = args;
      const base = typeof y === "number" && typeof m === "number" && typeof d === "number" ? dateSerial(y, m, d) : null;
      const v = base === null ? null : h.wb.date1904 ? base - DATE1904_OFFSET : base;
      return v === null || v < 0 ? { type: "FunctionResult", value: null, error: "#NUM!" } : { type: "FunctionResult", value: v, error: null };
    },
  },
};

const FunctionResult: TypeDef<"FunctionResult"> = {
  scalars: { Value: { get: (o) => o.value }, Error: { get: (o) => o.error } },
  defaults: ["Value", "Error"],
};

/**
 * A readable name of a host object for `WorkbookModel.faultInjector` (issue #21): `workbook`,
 * `application`, `worksheets[Data]`, `Data!A1:H10`, `Data!A1:H10.format.fill`, `tables[Projects]`,
 * `tables[Projects].rows`, `settings`, `settings[key]`, `names[Budget]`, … Never throws (a deleted
 * object is named by its id).
 */
export function describeHostObject(o: HostObject, h: HostContext): string {
  const wb = h.wb;
  const sheetName = (id: string): string => wb.sheetById(id)?.name ?? id;
  const tableName = (id: string): string => wb.tables.find((t) => t.id === id)?.name ?? id;
  const at = (id: string, rect: Rect): string => {
    const s = wb.sheetById(id);
    return s ? wb.addressOf(s, rect) : `${id}!?`;
  };
  switch (o.type) {
    case "Workbook":
      return "workbook";
    case "Application":
      return "application";
    case "CultureInfo":
      return "application.cultureInfo";
    case "NumberFormatInfo":
      return "application.cultureInfo.numberFormat";
    case "WorksheetCollection":
      return "worksheets";
    case "Worksheet":
      return `worksheets[${sheetName(o.sheetId)}]`;
    case "Range":
      return at(o.sheetId, o.rect);
    case "RangeFormat":
      return `${at(o.sheetId, o.rect)}.format`;
    case "RangeFill":
      return `${at(o.sheetId, o.rect)}.format.fill`;
    case "TableCollection":
      return o.sheetId === null ? "tables" : `worksheets[${sheetName(o.sheetId)}].tables`;
    case "Table":
      return `tables[${tableName(o.tableId)}]`;
    case "TableColumnCollection":
      return `tables[${tableName(o.tableId)}].columns`;
    case "TableColumn":
      return `tables[${tableName(o.tableId)}].columns[${o.columnId}]`;
    case "TableRowCollection":
      return `tables[${tableName(o.tableId)}].rows`;
    case "TableRow":
      return `tables[${tableName(o.tableId)}].rows[${o.index}]`;
    case "TableSort":
      return `tables[${tableName(o.tableId)}].sort`;
    case "AutoFilter":
      return `tables[${tableName(o.tableId)}].autoFilter`;
    case "SettingCollection":
      return "settings";
    case "Setting":
      return `settings[${o.key}]`;
    case "NamedItemCollection":
      return o.sheetId === null ? "names" : `worksheets[${sheetName(o.sheetId)}].names`;
    case "WorksheetProtection":
      return `worksheets[${sheetName(o.sheetId)}].protection`;
    case "WorkbookProtection":
      return "protection";
    case "NamedItem":
      return o.sheetId === null ? `names[${o.name}]` : `worksheets[${sheetName(o.sheetId)}].names[${o.name}]`;
    case "Functions":
    case "FunctionResult":
      return "functions";
    case "ConditionalFormatCollection":
      return `${at(o.sheetId, o.rect)}.conditionalFormats`;
    default:
      return `${at(o.sheetId, o.scope)}.conditionalFormats[${o.cfId}]`;
  }
}

// ---------- protection (issue #35) ----------

/**
 * `Worksheet.protection` (docs: Excel.WorksheetProtection, ExcelApi 1.2): `protected`, `options`,
 * `protect(options?, password?)` ("Protects a worksheet. Fails if the worksheet has already been
 * protected": `AccessDenied`, as office-js #6784 shows Excel answering), `unprotect(password?)` (a wrong
 * password is refused; unprotecting a sheet that is not protected changes nothing: office-js #6784
 * calls Excel's failing there a regression). What a protected sheet refuses: `WorkbookModel.checkSheetEditable`.
 */
const WorksheetProtection: TypeDef<"WorksheetProtection"> = {
  check: (o, h) => void sheetOf(h, o.sheetId),
  scalars: {
    Protected: { get: (o, h) => sheetOf(h, o.sheetId).protection !== undefined },
    Options: { get: (o, h) => ({ ...(sheetOf(h, o.sheetId).protection?.options ?? protectionOptions(undefined)) }) },
  },
  defaults: ["Protected", "Options"],
  calls: {
    Protect: (o, args, h) => {
      const sheet = sheetOf(h, o.sheetId);
      if (sheet.protection) throw accessDenied("The worksheet is already protected.");
      if (args[0] !== undefined && args[0] !== null && typeof args[0] !== "object") throw invalidArgument("protect: the options must be a WorksheetProtectionOptions object.");
      sheet.protection = { options: protectionOptions(args[0]), passwordHash: passwordHash(args[1]) };
      h.changed();
      return undefined;
    },
    Unprotect: (o, args, h) => {
      const sheet = sheetOf(h, o.sheetId);
      if (!sheet.protection) return undefined;
      if (sheet.protection.passwordHash !== null && passwordHash(args[0]) !== sheet.protection.passwordHash) throw accessDenied("The password you supplied is not correct.");
      delete sheet.protection;
      h.changed();
      return undefined;
    },
  },
};

/**
 * `Workbook.protection` (docs: Excel.WorkbookProtection, ExcelApi 1.7): the workbook's structure.
 * `protect(password?)` "Fails if the workbook has been protected" (`AccessDenied`); `unprotect(password?)`.
 * What it refuses: `WorkbookModel.checkStructureEditable`.
 */
const WorkbookProtection: TypeDef<"WorkbookProtection"> = {
  scalars: { Protected: { get: (_o, h) => h.wb.structureProtection !== null } },
  defaults: ["Protected"],
  calls: {
    Protect: (_o, args, h) => {
      if (h.wb.structureProtection) throw accessDenied("The workbook is already protected.");
      h.wb.structureProtection = { passwordHash: passwordHash(args[0]) };
      h.changed();
      return undefined;
    },
    Unprotect: (_o, args, h) => {
      const p = h.wb.structureProtection;
      if (!p) return undefined;
      if (p.passwordHash !== null && passwordHash(args[0]) !== p.passwordHash) throw accessDenied("The password you supplied is not correct.");
      h.wb.structureProtection = null;
      h.changed();
      return undefined;
    },
  },
};

/** Every type the host answers for, by the name the library gives it. */
export const TYPES: { readonly [T in HostType]: TypeDef<T> } = {
  Workbook,
  Application,
  CultureInfo,
  NumberFormatInfo,
  WorksheetCollection,
  Worksheet,
  WorksheetProtection,
  WorkbookProtection,
  Range,
  RangeFormat,
  RangeFill,
  TableCollection,
  Table,
  TableColumnCollection,
  TableColumn,
  TableRowCollection,
  TableRow,
  TableSort,
  AutoFilter,
  SettingCollection,
  Setting,
  NamedItemCollection,
  NamedItem,
  Functions,
  FunctionResult,
  ConditionalFormatCollection,
  ConditionalFormat,
  CustomConditionalFormat,
  ConditionalFormatRule,
  ConditionalRangeFormat,
  ConditionalRangeFill,
};
