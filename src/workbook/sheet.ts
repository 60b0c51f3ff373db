/**
 * Small Office helpers shared by import and refresh: emptiness checks, calculation suspension.
 * Every function takes the request context as a parameter (nothing global), so tests pass a mock
 * or an emulated context.
 */
import type { Rect } from "../refresh/plan";
import type { ColumnPlan } from "./cells";
import { a1 } from "./names";
import { firstReadRows, jsonBytes, visitInBlocks } from "./blocks";
import { rewritableRows } from "./cells";

function intersect(a: Rect, b: Rect): Rect | null {
  const row = Math.max(a.row, b.row);
  const column = Math.max(a.column, b.column);
  const rowEnd = Math.min(a.row + a.rowCount, b.row + b.rowCount);
  const colEnd = Math.min(a.column + a.columnCount, b.column + b.columnCount);
  return rowEnd > row && colEnd > column ? { row, column, rowCount: rowEnd - row, columnCount: colEnd - column } : null;
}

/**
 * True when the host declares an Office requirement set. Outside Office (Node tests, the browser
 * preview without `Office.context`) the documented APIs are assumed, as the emulator provides them.
 */
export function apiSupported(set: string, version: string): boolean {
  const office = (globalThis as { Office?: { context?: { requirements?: { isSetSupported(name: string, v?: string): boolean } } } }).Office;
  const req = office?.context?.requirements;
  return req ? req.isSetSupported(set, version) : true;
}

/**
 * Finds the first non-empty cell (value or formula) of `rect` on a sheet, or null when it is empty.
 * One `sync` for the used range; where it overlaps, the formulas are read in row blocks sized by the
 * bytes each block measured (`visitInBlocks`: a small first block, then blocks aimed at
 * `targetResponseBytes`; a refused block is halved), stopping at the first occupied cell.
 */
export async function findOccupiedCell(context: Excel.RequestContext, sheet: Excel.Worksheet, rect: Rect, targetResponseBytes?: number): Promise<string | null> {
  const used = queueUsedArea(sheet);
  await context.sync();
  const area = areaOf(used);
  const overlap = area && intersect(rect, area);
  if (!overlap) return null;
  let found: string | null = null;
  await visitInBlocks(
    context,
    (from, count) => sheet.getRangeByIndexes(overlap.row + from, overlap.column, count, overlap.columnCount),
    overlap.rowCount,
    "formulas",
    firstReadRows(overlap.columnCount),
    (f, from) => {
      for (let r = 0; r < f.length; r++) {
        for (let c = 0; c < f[r].length; c++) {
          if (f[r][c] !== "" && f[r][c] !== null) {
            found = a1(overlap.row + from + r, overlap.column + c);
            return true;
          }
        }
      }
    },
    { targetResponseBytes },
  );
  return found;
}

/**
 * The name of a table on `sheet` (other than `except`) that `rect` touches: overlaps, or sits in the row
 * or column right next to. Excel grows a table into values written directly below or to the right of
 * it (AutoExpansion), so two tables must keep a blank row and column between them. One `sync`, plus one
 * more when the sheet has tables.
 */
export async function findTouchingTable(context: Excel.RequestContext, sheet: Excel.Worksheet, rect: Rect, except?: string): Promise<string | null> {
  const tables = sheet.tables;
  tables.load("items/name");
  await context.sync();
  const others = tables.items.filter((t) => t.name !== except);
  if (others.length === 0) return null;
  const ranges = others.map((t) => {
    const r = t.getRange();
    r.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
    return { name: t.name, r };
  });
  await context.sync();
  const ring: Rect = { row: Math.max(0, rect.row - 1), column: Math.max(0, rect.column - 1), rowCount: rect.rowCount + (rect.row > 0 ? 2 : 1), columnCount: rect.columnCount + (rect.column > 0 ? 2 : 1) };
  for (const { name, r } of ranges) {
    if (intersect(ring, { row: r.rowIndex, column: r.columnIndex, rowCount: r.rowCount, columnCount: r.columnCount })) return name;
  }
  return null;
}

/**
 * Calculation during a write (issue #34). The add-in never changes the calculation mode (it is
 * application-wide, every open workbook, and nothing restores it when the add-in's runtime dies
 * mid-write: office-js #2770, #6922), never suspends API calculation and never calls
 * `Application.calculate` (which recalculates every open workbook, in manual mode too: docs,
 * Excel.Application.calculate, "Recalculate all currently opened workbooks in Excel"). After
 * `suspendApiCalculationUntilNextSync` "it is the developer's responsibility to re-calc the workbook"
 * (docs), and the only ways to do that are that call or `Worksheet.calculate` per sheet, whose order
 * across sheets decides whether a chain of formulas over several sheets ends up current. So the mode
 * the user chose decides: in automatic mode Excel recalculates what each write request made dirty (only
 * the dependents of the cells written), in manual mode nothing of the user's is calculated until the
 * user asks (F9), and the add-in calculates exactly its own formulas when it reads them
 * (`Range.calculate`: the block checksums, the gathering and scratch cells).
 */
export interface CalculationGuard {
  /** Kept for the callers' shape: there is no mode to restore. */
  restore(): void;
}

/** The calculation guard of one write; nothing is read from Excel. Screen updating is suspended once per write (ExcelApi 1.9). */
export function prepareCalculation(context: Excel.RequestContext): { app: Excel.Application; start(): CalculationGuard } {
  const app = context.application;
  const screen = apiSupported("ExcelApi", "1.9");
  return {
    app,
    start(): CalculationGuard {
      // Called once per write, as the docs ask: repeated calls make the Excel window flicker.
      if (screen) app.suspendScreenUpdatingUntilNextSync();
      return { restore: () => undefined };
    },
  };
}

/**
 * Sets one value on every cell of a range with a single small operation: the documented "single
 * value" form of `numberFormat`/`formulas`/`values`, which the typings (2-D arrays only) do not express.
 */
export function setEvery(range: Excel.Range, property: "numberFormat" | "formulas" | "values", value: string): void {
  (range as unknown as Record<string, unknown>)[property] = value;
}

/**
 * Queues the probe of the workbook's date system: `DATE(1904,1,1)` evaluated by Excel
 * (`workbook.functions`, ExcelApi 1.2) is 0 in the 1904 system and 1,462 in the 1900 system. Works on
 * every platform; `Workbook.use1904DateSystem` is a preview API only. Read `is1904()` after the sync.
 */
export function queueDateSystemProbe(context: Excel.RequestContext): { is1904(): boolean } {
  const result = context.workbook.functions.date(1904, 1, 1);
  result.load("value");
  return { is1904: () => result.value === 0 };
}

/** Queues one number format per column over the column's body rows (a single small operation each). */
export function queueColumnFormats(sheet: Excel.Worksheet, bodyRow: number, firstColumn: number, bodyRows: number, plans: readonly ColumnPlan[]): void {
  if (bodyRows <= 0) return;
  plans.forEach((p, i) => {
    setEvery(sheet.getRangeByIndexes(bodyRow, firstColumn + i, bodyRows, 1), "numberFormat", p.numberFormat);
  });
}

/** Cells someone typed, read before a write went over them, to be put back as typed. */
export interface TypedCells {
  at: Rect;
  formats: unknown[][];
  formulas: unknown[][];
}

/**
 * Queues, in a write request before anything in it, the read of what holds a value in `rect` (its
 * `getUsedRangeOrNullObject(true)`: a null object when empty, so the response does not grow with
 * the rows). Read {@link typedIn} after the sync.
 */
export function queueTypedProbe(sheet: Excel.Worksheet, rect: Rect): Excel.Range {
  const probe = sheet.getRangeByIndexes(rect.row, rect.column, rect.rowCount, rect.columnCount).getUsedRangeOrNullObject(true);
  probe.load(["formulas", "values", "numberFormat", "rowIndex", "columnIndex", "rowCount", "columnCount"]);
  return probe;
}

/**
 * Response bytes a {@link queueTypedProbe} of one row of EMPTY cells may take: each cell's formula and
 * value (`""`) and number format, column c's longest of `formats[c]` (General at least), with the
 * row's brackets. Under the strictest reading of `Range.getUsedRange` (the sheet's used rectangle met
 * with the range: an empty cell inside it counts), anything on the sheet beside or below the rows (a
 * note in column Z, a value typed far below) makes the probe read back every cell of them. A block's
 * rows are capped by this (`rowsUnderProbe`), so that read stays under Excel on the web's 5 MB
 * response: a block of 12 small-number columns is ~2 request bytes a cell, and its 4 MB request
 * read back 10 MB and failed (ResponsePayloadSizeLimitExceeded).
 */
export function probeRowBytes(formats: ReadonlyArray<Iterable<string | null | undefined>>): number {
  const general = jsonBytes("General");
  let bytes = 9;
  for (const column of formats) {
    let longest = general;
    for (const f of column) if (f) longest = Math.max(longest, jsonBytes(f));
    bytes += 2 * jsonBytes("") + longest + 3;
  }
  return bytes;
}

/** Queues the read of the sheet's used area, values only (`areaOf` after the sync): what decides whether a probe may read back every cell. */
export function queueUsedArea(sheet: Excel.Worksheet): Excel.Range {
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load(["rowIndex", "rowCount", "columnIndex", "columnCount"]);
  return used;
}

/** A synced {@link queueUsedArea}'s rectangle, or null when the sheet holds no value. */
export function areaOf(used: Excel.Range): Rect | null {
  return used.isNullObject ? null : { row: used.rowIndex, column: used.columnIndex, rowCount: used.rowCount, columnCount: used.columnCount };
}

/** Whether `area` reaches row `from` or below within the columns of `rect` (a probe of `rect` from `from` down may then read back every cell). */
export function reachesRows(area: Rect | null, from: number, rect: { column: number; columnCount: number }): boolean {
  return !!area && area.row + area.rowCount > from && area.column < rect.column + rect.columnCount && area.column + area.columnCount > rect.column;
}

/** Rows a block may hold so that its {@link queueTypedProbe} answers in at most `responseBytes` (one at least). */
export function rowsUnderProbe(responseBytes: number, rowBytes: number): number {
  return Math.max(1, Math.floor(responseBytes / rowBytes));
}

/** What a synced {@link queueTypedProbe} found, as typed (formats, and text kept text: `rewritableCell`), or null when nothing. */
export function typedIn(probe: Excel.Range): TypedCells | null {
  if (probe.isNullObject) return null;
  const found = probe.formulas as unknown[][];
  if (!found.some((r) => r.some((v) => v !== "" && v !== null))) return null;
  const formats = probe.numberFormat as unknown[][];
  return {
    at: { row: probe.rowIndex, column: probe.columnIndex, rowCount: probe.rowCount, columnCount: probe.columnCount },
    formats,
    formulas: rewritableRows(found, probe.values as unknown[][], (r, c) => formats[r][c]),
  };
}

/** Queues the write-back of {@link TypedCells}: formats first, then the cells. */
export function queuePutBack(sheet: Excel.Worksheet, typed: TypedCells): void {
  const back = sheet.getRangeByIndexes(typed.at.row, typed.at.column, typed.at.rowCount, typed.at.columnCount);
  back.numberFormat = typed.formats as string[][];
  back.formulas = typed.formulas as string[][];
}
