/** Pure helpers for the selection: reading Excel's range address and comparing rectangles. */

/** A rectangle in 0-based sheet indexes. */
export interface Rect {
  row: number;
  column: number;
  rowCount: number;
  columnCount: number;
}

/**
 * Splits an address as `Range.address` gives it (`Sheet1!B3`, `'My ''Q1'' sheet'!B3:D9`) into the
 * sheet name (quotes removed) and the first cell (`B3`).
 * @throws Error for an address without a sheet or cell part.
 */
export function parseSelectionAddress(address: string): { sheetName: string; firstCell: string } {
  const bang = address.lastIndexOf("!");
  if (bang <= 0) throw new Error(`Unexpected selection address "${address}".`);
  let sheet = address.slice(0, bang);
  if (sheet.startsWith("'") && sheet.endsWith("'") && sheet.length >= 2) sheet = sheet.slice(1, -1).replace(/''/g, "'");
  const cell = address.slice(bang + 1).split(":")[0].replace(/\$/g, "").toUpperCase();
  if (!/^[A-Z]{1,3}[0-9]{1,7}$/.test(cell)) throw new Error(`Unexpected selection address "${address}".`);
  return { sheetName: sheet, firstCell: cell };
}

/** True when two rectangles share at least one cell. */
export function rectsIntersect(a: Rect, b: Rect): boolean {
  return a.row < b.row + b.rowCount && b.row < a.row + a.rowCount && a.column < b.column + b.columnCount && b.column < a.column + a.columnCount;
}
