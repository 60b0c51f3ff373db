/**
 * The workbook's plain data shapes: sheets, tables, their sort and filter state. They live apart
 * from the `WorkbookModel` class so that the formula evaluator can name them without importing the
 * model, which imports the evaluator.
 */
import type { Rect } from "./address";
import type { CellStore } from "./cells";

/**
 * `Excel.WorksheetProtectionOptions` (ExcelApi 1.2): what a protected sheet still allows. Each
 * `allow…` is false unless given; `selectionMode` "Normal" as the Protect Sheet dialog starts.
 */
export interface SheetProtectionOptions {
  allowAutoFilter: boolean;
  allowDeleteColumns: boolean;
  allowDeleteRows: boolean;
  allowEditObjects: boolean;
  allowEditScenarios: boolean;
  allowFormatCells: boolean;
  allowFormatColumns: boolean;
  allowFormatRows: boolean;
  allowInsertColumns: boolean;
  allowInsertHyperlinks: boolean;
  allowInsertRows: boolean;
  allowPivotTables: boolean;
  allowSort: boolean;
  selectionMode: "Normal" | "Unlocked" | "None";
}

export interface SheetModel {
  id: string;
  name: string;
  /** Issue #35: set while the sheet is protected (`Worksheet.protection.protect`); a hash of the password, if one was given. */
  protection?: { options: SheetProtectionOptions; passwordHash: string | null };
  cells: CellStore;
  /** Rows hidden by a table's auto filter (0-based). */
  hiddenRows: Set<number>;
  /** Number of `format.autofitColumns()` calls applied to ranges of this sheet. */
  autofitCount: number;
  /** `Worksheet.visibility` (ExcelApi 1.1); a VeryHidden sheet can only be shown again through the API. */
  visibility?: SheetVisibility;
  /** Sheet-scoped defined names (`worksheet.names`, ExcelApi 1.4): they share the table namespace too. */
  names?: string[];
  /**
   * Solid cell fills (`Range.format.fill`), `"row,col"` → `#RRGGBB`; absent = No Fill. Kept by cell
   * position: they do not move with sort, row insertion or deletion (Excel moves them), which no
   * add-in code relies on.
   */
  fills?: Map<string, string>;
  /**
   * Conditional formats whose ranges lie on this sheet (`Range.conditionalFormats`, ExcelApi 1.6), in
   * priority order: the first is the top priority (`add` puts a new one first).
   */
  conditionalFormats?: ConditionalFormatModel[];
  /**
   * Areas Excel will not shift cells through (issue #21): merged cells (`Range.merge`), PivotTables and
   * legacy array formulas (test set-up: `WorkbookModel.addObstacle`). `Range.insert` / `Range.delete`
   * moving any of their cells is refused.
   */
  obstacles?: Array<{ rect: Rect; kind: ObstacleKind }>;
}

export type ObstacleKind = "merged" | "pivot" | "array";

/**
 * One conditional format (only the `Custom` type is emulated). Its formula is kept relative to the
 * top-left cell of its range, as Excel keeps it (office-js #5194: the API reads and writes it
 * relative to the top-left cell of the range it was fetched through, see `host-objects.ts`).
 */
export interface ConditionalFormatModel {
  id: string;
  type: "Custom";
  /** One rectangular area (a format over several areas is not emulated). */
  rect: Rect;
  /** `custom.rule.formula` for the range's top-left cell; null until set (a rule without formula applies nowhere). */
  formula: string | null;
  /** `custom.format.fill.color` ("#RRGGBB"), null for no fill. */
  fill: string | null;
  stopIfTrue: boolean;
}

export type SheetVisibility = "Visible" | "Hidden" | "VeryHidden";

export interface SortField {
  /** Column index within the table (0-based), as `Excel.SortField.key`. */
  key: number;
  ascending: boolean;
}

/** Subset of `Excel.FilterCriteria` the emulator evaluates. */
export interface FilterCriteria {
  /** "Values" and "Custom" are evaluated; other kinds keep every row visible. */
  filterOn: string;
  values?: string[];
  criterion1?: string;
  criterion2?: string;
  operator?: "And" | "Or";
}

export interface TableColumnModel {
  id: number;
  name: string;
}

export interface TableModel {
  id: string;
  name: string;
  sheetId: string;
  /** Whole table: header row, body rows and (when shown) the totals row. */
  rect: Rect;
  showTotals: boolean;
  style: string;
  columns: TableColumnModel[];
  nextColumnId: number;
  /** Sort state applied by `table.sort.apply`, re-applied by `table.sort.reapply()`. */
  sort: { fields: SortField[]; matchCase: boolean } | null;
  /** Auto-filter criteria per column index, re-applied by `table.autoFilter.reapply()`. */
  filters: Map<number, FilterCriteria>;
  /** False after `table.autoFilter.remove()` (a new table has its filter buttons on). */
  autoFilterEnabled?: boolean;
}
