/**
 * The one rule of a refresh (issue #21, item 7; README "Your formulas and the table"): the new export
 * is written over the SAME sheet rows, in the export's order — row n of the table receives record n of
 * the export — and no sheet row is ever inserted or deleted. So A1 references, defined names and
 * conditional formats pointing into the table from anywhere keep their positions, whether a refresh
 * writes only what changed (a delta) or everything (a full rewrite); the table grows into the empty
 * rows below it or leaves its last rows empty. The cells of the user's own columns inside the table are
 * the exception: they belong to records, so they move with their record (matched by key, else by
 * position), as a sort moves them.
 *
 * Pure: what a delta writes (copies of moved records, changed cells), and how the user's cells move.
 */
import type { CellValue } from "../table/model";

/** A horizontal run of cells to write: `values` go to `row`, columns `column`, `column + 1`, … (0-based within the data columns). */
export interface WriteSpan {
  row: number;
  column: number;
  values: CellValue[];
}

/** A cell as read back (`Range.formulas`): "" is an empty cell. */
function readCell(v: unknown): unknown {
  return v === "" || v === undefined ? null : v;
}

/** A cell as it will be written (`toValues`): "" is an empty cell. */
function newCell(v: CellValue): CellValue {
  return v === "" ? null : v;
}

/**
 * True when the cell read back already holds exactly what would be written. A text starting with `=`
 * is never taken as equal: `Range.formulas` gives the same string for the text and for a formula the
 * user typed over it, and the service's value must win (it is rewritten, under the text format).
 */
export function cellHolds(read: unknown, next: CellValue): boolean {
  const a = readCell(read);
  const b = newCell(next);
  if (typeof b === "string" && b.startsWith("=")) return false;
  return a === b;
}

/**
 * What a delta writes to put the new export on the table's rows (the one rule above) while sending
 * only what changed: a record that moved to another row (rows were added or removed above it) has
 * its data cells COPIED from the rollback copy inside Excel (`copies`, runs of rows with the same
 * offset; only the two addresses cross the network), then every cell that differs from the new
 * export is written (`spans`): changed values, cells the user typed over, and every cell of a new
 * record. Rows the old table has beyond the new one's end are cleared by the shrink.
 * @param old the old rows as read back (`formulas`, sheet order)
 * @param next the new rows as they will be written (export order)
 * @param newToOld for every new row, the old row of its record, or -1 (a new record)
 */
export function deltaWrites(
  old: readonly (readonly unknown[])[],
  next: readonly (readonly CellValue[])[],
  newToOld: ArrayLike<number>,
  width: number,
): { copies: RowCopy[]; spans: WriteSpan[]; cells: number; rows: number[] } {
  const spans: WriteSpan[] = [];
  const rows: number[] = [];
  let cells = 0;
  const copies: RowCopy[] = [];
  for (let r = 0; r < next.length; r++) {
    const b = next[r];
    const o = newToOld[r];
    if (o < 0 || o >= old.length) {
      spans.push({ row: r, column: 0, values: b.slice(0, width) });
      cells += width;
      rows.push(r);
      continue;
    }
    if (o !== r) {
      const last = copies[copies.length - 1];
      if (last && last.to + last.count === r && last.from + last.count === o) last.count++;
      else copies.push({ from: o, to: r, count: 1 });
    }
    const a = old[o];
    let open: WriteSpan | null = null;
    let changed = o !== r;
    for (let c = 0; c < width; c++) {
      if (cellHolds(a[c], b[c])) {
        open = null;
        continue;
      }
      changed = true;
      cells++;
      if (open) open.values.push(b[c]);
      else {
        open = { row: r, column: c, values: [b[c]] };
        spans.push(open);
      }
    }
    if (changed) rows.push(r);
  }
  return { copies, spans, cells, rows };
}

/** A run of user-column rows copied from the rollback copy: old rows `from … from+count-1` go to new rows `to …`. */
export interface RowCopy {
  from: number;
  to: number;
  count: number;
}

/** A run of new rows `start … start+count-1`. */
export interface NewRowRun {
  start: number;
  count: number;
}

/**
 * How the user's own columns follow their records: for every new row whose record stood on another row
 * before, a copy of that old row's user cells (runs of consecutive rows with the same offset are one
 * copy); the rows of records that are new get the user columns' calculated formulas, or nothing
 * (`fresh`). A row whose record did not move is left alone.
 * @param newToOld for every new row, the old row of its record, or -1 (a new record).
 */
export function userCellMoves(newToOld: ArrayLike<number>): { copies: RowCopy[]; fresh: NewRowRun[] } {
  const copies: RowCopy[] = [];
  const fresh: NewRowRun[] = [];
  for (let i = 0; i < newToOld.length; i++) {
    const o = newToOld[i];
    if (o < 0) {
      const last = fresh[fresh.length - 1];
      if (last && last.start + last.count === i) last.count++;
      else fresh.push({ start: i, count: 1 });
      continue;
    }
    if (o === i) continue;
    const last = copies[copies.length - 1];
    if (last && last.to + last.count === i && last.from + last.count === o) last.count++;
    else copies.push({ from: o, to: i, count: 1 });
  }
  return { copies, fresh };
}
