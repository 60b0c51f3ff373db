/**
 * The number formats of an area as they were before an import wrote into it, so a failed import into
 * a sheet the user chose leaves those cells' formats exactly as they were, not as text (`@`) or as the
 * import's date formats. Without it, a number the user types later into a cell the failed import
 * left as `@` becomes text.
 *
 * Why the formats are read, not inferred: Excel's API has no cheap question for "is this area's
 * format uniform". `Range.numberFormat` answers one string per cell; `getCellProperties` and
 * `getColumnProperties` carry no number format (docs: Excel.CellPropertiesFormat); and whether a
 * format given to a whole column or row counts in `getUsedRange(false)` is not documented, so the
 * used range cannot prove the rest of the area "General" (the strictest reading). The area is read
 * in blocks by bytes (`visitInBlocks`, under Excel on the web's 5 MB a response) and kept as runs per
 * column: an area formatted as a user usually formats it (whole columns, or nothing) is a few runs,
 * whatever its row count. Restoring writes one small `numberFormat` operation a run (the documented
 * single-value form), so a restore costs what the formats vary, not the cells.
 */
import { firstReadRows, visitInBlocks, WriteError } from "./blocks";
import { setEvery } from "./sheet";

/** An area's number formats as runs: `runs[c]` lists [first row (from the area's top), format] of column c. */
export interface FormatImage {
  row: number;
  column: number;
  rowCount: number;
  runs: Array<Array<[number, string]>>;
}

/**
 * Runs kept at most (each an array of a number and a string: ~100 bytes of memory, so ~20 MB). An
 * area whose formats change more often than that (a format a cell over a very large area) is refused
 * before anything is written: a failure could not put it back within the pane's memory.
 */
export const MAX_FORMAT_RUNS = 200_000;

/** Operations queued per request when a restore is written (each ~300 request bytes). */
export const RESTORE_OPERATIONS_PER_REQUEST = 2_000;

/** Reads the number formats of `rowCount` × `columnCount` cells from (`row`, `column`) of `sheet`, in blocks. */
export async function captureFormats(
  context: Excel.RequestContext,
  sheet: Excel.Worksheet,
  area: { row: number; column: number; rowCount: number; columnCount: number },
  options: { targetResponseBytes?: number; maxRuns?: number; where?: string; what?: "import" | "refresh" } = {},
): Promise<{ image: FormatImage; syncs: number }> {
  const { targetResponseBytes, maxRuns = MAX_FORMAT_RUNS, where: sheetRef = "the area", what = "import" } = options;
  const runs: Array<Array<[number, string]>> = Array.from({ length: area.columnCount }, () => []);
  const last: Array<string | null> = new Array<string | null>(area.columnCount).fill(null);
  let kept = 0;
  const { blocks } = await visitInBlocks(
    context,
    (from, count) => sheet.getRangeByIndexes(area.row + from, area.column, count, area.columnCount),
    area.rowCount,
    "numberFormat",
    firstReadRows(area.columnCount),
    (rows, from) => {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        for (let c = 0; c < area.columnCount; c++) {
          const f = String(row[c]);
          if (f !== last[c]) {
            runs[c].push([from + r, f]);
            last[c] = f;
            kept++;
          }
        }
      }
      if (kept > maxRuns) {
        throw new WriteError(
          "occupied",
          `The cells' number formats in ${sheetRef} change more than ${maxRuns.toLocaleString("en-US")} times; were the ${what} to fail, they could not all be put back. Clear that area's formats (Home › Clear › Clear Formats)${what === "import" ? " or import to a new sheet" : ", then refresh again"}.`,
        );
      }
    },
    { targetResponseBytes },
  );
  return { image: { row: area.row, column: area.column, rowCount: area.rowCount, runs }, syncs: blocks };
}

/**
 * Puts the formats of `image` back on `sheet`: one operation a run, a request every
 * {@link RESTORE_OPERATIONS_PER_REQUEST} operations, and at least one. Whatever the caller queued goes with the first.
 * @returns the requests sent.
 */
export async function restoreFormats(context: Excel.RequestContext, sheet: Excel.Worksheet, image: FormatImage): Promise<number> {
  let queued = 0;
  let syncs = 0;
  for (let c = 0; c < image.runs.length; c++) {
    const runs = image.runs[c];
    for (let k = 0; k < runs.length; k++) {
      const [start, format] = runs[k];
      const end = k + 1 < runs.length ? runs[k + 1][0] : image.rowCount;
      setEvery(sheet.getRangeByIndexes(image.row + start, image.column + c, end - start, 1), "numberFormat", format);
      if (++queued === RESTORE_OPERATIONS_PER_REQUEST) {
        // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one request per 2,000 operations keeps each under Excel on the web's 5 MB
        await context.sync();
        syncs++;
        queued = 0;
      }
    }
  }
  if (queued > 0 || syncs === 0) {
    await context.sync();
    syncs++;
  }
  return syncs;
}
