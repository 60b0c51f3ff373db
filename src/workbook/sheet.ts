/**
 * Small Office helpers shared by import and refresh: emptiness checks, calculation suspension.
 * Every function takes the request context as a parameter (nothing global), so tests pass a mock
 * or an emulated context.
 */
import type { Rect } from "../refresh/plan";
import { a1 } from "./names";

/** Largest rectangle whose formulas are loaded for an exact emptiness check; larger overlaps are refused outright. */
const MAX_CHECKED_CELLS = 500_000;

function intersect(a: Rect, b: Rect): Rect | null {
  const row = Math.max(a.row, b.row);
  const column = Math.max(a.column, b.column);
  const rowEnd = Math.min(a.row + a.rowCount, b.row + b.rowCount);
  const colEnd = Math.min(a.column + a.columnCount, b.column + b.columnCount);
  return rowEnd > row && colEnd > column ? { row, column, rowCount: rowEnd - row, columnCount: colEnd - column } : null;
}

/**
 * Finds the first non-empty cell (value or formula) of `rect` on a sheet, or null when it is empty.
 * Costs one `sync`, plus one more only when the sheet's used range overlaps the rectangle.
 */
export async function findOccupiedCell(context: Excel.RequestContext, sheet: Excel.Worksheet, rect: Rect): Promise<string | null> {
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
  await context.sync();
  if (used.isNullObject) return null;
  const overlap = intersect(rect, { row: used.rowIndex, column: used.columnIndex, rowCount: used.rowCount, columnCount: used.columnCount });
  if (!overlap) return null;
  if (overlap.rowCount * overlap.columnCount > MAX_CHECKED_CELLS) return a1(overlap.row, overlap.column, overlap.rowCount, overlap.columnCount);
  const range = sheet.getRangeByIndexes(overlap.row, overlap.column, overlap.rowCount, overlap.columnCount);
  range.load("formulas");
  await context.sync();
  const f = range.formulas as unknown[][];
  for (let r = 0; r < f.length; r++) {
    for (let c = 0; c < f[r].length; c++) {
      if (f[r][c] !== "" && f[r][c] !== null) return a1(overlap.row + r, overlap.column + c);
    }
  }
  return null;
}

/**
 * Calculation suspended for a long write: the mode is set to manual (ExcelApi 1.8) and restored by
 * `restore()`; `perSync()` additionally suspends API calculation until the next sync (ExcelApi 1.6),
 * which also covers hosts where the mode could not be read.
 */
export interface CalculationGuard {
  /** Queue before each `sync` of the write. */
  perSync(): void;
  /** Queue the mode restore (it reaches Excel with the next `sync`). */
  restore(): void;
}

/** Loads the calculation mode (one `sync`, usually shared with the caller's other loads via `pending`). */
export function prepareCalculation(context: Excel.RequestContext): { app: Excel.Application; start(): CalculationGuard } {
  const app = context.application;
  app.load("calculationMode");
  return {
    app,
    start(): CalculationGuard {
      const previous = app.calculationMode;
      let manual = false;
      if (previous !== "Manual") {
        app.calculationMode = "Manual";
        manual = true;
      }
      // Called once per write, as the docs ask: repeated calls make the Excel window flicker.
      app.suspendScreenUpdatingUntilNextSync();
      return {
        perSync: () => app.suspendApiCalculationUntilNextSync(),
        restore: () => {
          if (manual) app.calculationMode = previous;
        },
      };
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
