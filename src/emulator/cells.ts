/**
 * Dense cell storage for one worksheet: an array of rows, each row a set of parallel arrays indexed
 * by column (constant values; formulas, number formats and cached formula results only where a row
 * has any). A Map entry plus an object per cell cost about 130 bytes and most of the time of a large
 * write; here a written cell costs one array slot per property it has, and a number format written
 * over a column range shares one string across its cells.
 */
import type { Rect } from "./address";
import type { CellError, CellValue } from "./values";

/** What a cell holds as a constant. */
export type StoredValue = number | string | boolean | CellError;

/** One stored cell as a plain object (a copy; writing to it does not change the sheet). */
export interface Cell {
  /** Constant value (absent when the cell is empty or holds a formula). */
  v?: StoredValue;
  /** Formula text including the leading `=`. */
  f?: string;
  /** Number format when not General. */
  nf?: string;
  /** Cached formula result and the calculation generation it belongs to. */
  cv?: CellValue;
  cg?: number;
}

/**
 * One row's cells. The optional arrays are allocated the first time a cell of the row needs them, so a
 * row of plain values is one array.
 */
export class RowCells {
  v: Array<StoredValue | undefined> = [];
  f: Array<string | undefined> | null = null;
  /**
   * Number formats. May be shared with other rows (`nfShared`) after a format was written over a
   * range: then it is copied before its first change.
   */
  nf: Array<string | undefined> | null = null;
  nfShared = false;
  cv: Array<CellValue | undefined> | null = null;
  cg: Array<number | undefined> | null = null;

  /** One past the last column that may hold anything. */
  width(): number {
    return Math.max(this.v.length, this.f ? this.f.length : 0, this.nf ? this.nf.length : 0);
  }

  /** A cell exists when it has a value, a formula or a number format (as a saved file would list it). */
  has(c: number): boolean {
    return this.v[c] !== undefined || (this.f !== null && this.f[c] !== undefined) || (this.nf !== null && this.nf[c] !== undefined);
  }

  /**
   * Whether the cell counts for a used range: `has`, or with `valuesOnly` a value or a formula only
   * (a format alone does not: `getUsedRange(valuesOnly)`). One test for `WorkbookModel.usedRect`
   * and `usedRectMeeting`, which must give the same answer.
   */
  used(c: number, valuesOnly: boolean): boolean {
    return valuesOnly ? this.v[c] !== undefined || (this.f !== null && this.f[c] !== undefined) : this.has(c);
  }

  /**
   * Sizes a fresh row for a write reaching column `end - 1`: an array grown one element at a time
   * carries V8's growth slack (a third again plus 16 slots), a large share of a 12-column row.
   */
  reserve(end: number): void {
    if (end <= 1024 && this.v.length === 0) this.v = new Array<StoredValue | undefined>(end);
  }

  /** Drops the cached formula result of one cell. */
  uncache(c: number): void {
    if (this.cg !== null && c < this.cg.length) {
      this.cg[c] = undefined;
      this.cv![c] = undefined;
    }
  }

  setFormula(c: number, f: string | undefined): void {
    if (f === undefined) {
      if (this.f !== null && c < this.f.length) this.f[c] = undefined;
      return;
    }
    if (this.f === null) this.f = [];
    setAt(this.f, c, f);
  }

  setFormat(c: number, nf: string | undefined): void {
    if (nf === undefined) {
      if (this.nf !== null && c < this.nf.length && this.nf[c] !== undefined) this.ownFormats()[c] = undefined;
      return;
    }
    if (this.nf === null) this.nf = [];
    else if (this.nf[c] === nf) return;
    setAt(this.ownFormats(), c, nf);
  }

  private ownFormats(): Array<string | undefined> {
    if (this.nfShared) {
      this.nf = this.nf!.slice();
      this.nfShared = false;
    }
    return this.nf!;
  }

  setValue(c: number, v: StoredValue | undefined): void {
    if (v === undefined) {
      if (c < this.v.length) this.v[c] = undefined;
      return;
    }
    setAt(this.v, c, v);
  }

  setCached(c: number, cv: CellValue | undefined, cg: number | undefined): void {
    if (this.cg === null) {
      if (cg === undefined && cv === undefined) return;
      this.cg = [];
      this.cv = [];
    }
    setAt(this.cg, c, cg);
    setAt(this.cv!, c, cv);
  }
}

/**
 * Writes past the end fill the gap with `undefined` while it is small, so the array keeps V8's fast
 * elements (a large hole turns it into a slow dictionary, which is still correct).
 */
function setAt<T>(a: Array<T | undefined>, i: number, v: T | undefined): void {
  let n = a.length;
  if (i > n && i - n <= 64) while (n < i) a[n++] = undefined;
  a[i] = v;
}

/**
 * Sets one number format on columns `c0..c1` of many rows. Rows whose formats were the same array
 * before get the same array after, so a format written over a column of 200,000 rows costs one
 * array per distinct row layout instead of one per row.
 */
export class FormatFill {
  private readonly memo = new Map<Array<string | undefined> | null, Array<string | undefined>>();
  constructor(
    private readonly c0: number,
    private readonly c1: number,
    private readonly nf: string | undefined,
  ) {}

  apply(row: RowCells): void {
    const old = row.nf;
    let next = this.memo.get(old);
    if (next === undefined) {
      next = old === null ? [] : old.slice();
      for (let c = this.c0; c <= this.c1; c++) {
        if (this.nf !== undefined) setAt(next, c, this.nf);
        else if (c < next.length) next[c] = undefined;
      }
      this.memo.set(old, next);
    }
    row.nf = next;
    row.nfShared = true;
  }
}

/** The cells of one worksheet. Row and column indexes are 0-based. */
export class CellStore {
  private rows: Array<RowCells | undefined> = [];
  /** Row objects allocated: tells a dense row array from a sparse one when visiting rows. */
  private allocated = 0;

  row(r: number): RowCells | undefined {
    return this.rows[r];
  }

  /** One past the last row index ever allocated (rows above it may be empty). */
  rowLimit(): number {
    return this.rows.length;
  }

  rowForWrite(r: number): RowCells {
    let row = this.rows[r];
    if (row === undefined) {
      row = new RowCells();
      setAt(this.rows, r, row);
      this.allocated++;
    }
    return row;
  }

  has(r: number, c: number): boolean {
    const row = this.rows[r];
    return row !== undefined && row.has(c);
  }

  value(r: number, c: number): StoredValue | undefined {
    return this.rows[r]?.v[c];
  }
  formula(r: number, c: number): string | undefined {
    const f = this.rows[r]?.f;
    return f ? f[c] : undefined;
  }
  format(r: number, c: number): string | undefined {
    const nf = this.rows[r]?.nf;
    return nf ? nf[c] : undefined;
  }

  /** A copy of one cell, or undefined when it holds nothing. */
  get(r: number, c: number): Cell | undefined {
    const row = this.rows[r];
    if (row === undefined || !row.has(c)) return undefined;
    return cellOf(row, c);
  }

  /** Removes a cell and returns what it held (for moving cells). */
  take(r: number, c: number): Cell | undefined {
    const cell = this.get(r, c);
    if (cell === undefined) return undefined;
    const row = this.rows[r]!;
    row.setValue(c, undefined);
    row.setFormula(c, undefined);
    row.setFormat(c, undefined);
    row.uncache(c);
    return cell;
  }

  /** Stores a whole cell (for moving cells), replacing what was there. */
  put(r: number, c: number, cell: Cell): void {
    const row = this.rowForWrite(r);
    row.setValue(c, cell.v);
    row.setFormula(c, cell.f);
    row.setFormat(c, cell.nf);
    if (cell.cg === undefined && cell.cv === undefined) row.uncache(c);
    else row.setCached(c, cell.cv, cell.cg);
  }

  /**
   * Visits the existing cells inside `rect` (the whole sheet without one) in row-major order. The cell
   * passed is a copy; `fn` may change the sheet (cells already visited or still to come).
   */
  forEach(fn: (r: number, c: number, cell: Cell) => void, rect?: Rect): void {
    const c0 = rect ? rect.c0 : 0;
    const c1 = rect ? rect.c1 : Infinity;
    this.forEachRow((r, row) => {
      const end = Math.min(c1 + 1, row.width());
      for (let c = c0; c < end; c++) if (row.has(c)) fn(r, c, cellOf(row, c));
    }, rect ? rect.r0 : 0, rect ? rect.r1 : Infinity);
  }

  /**
   * Shifts whole rows from `r0` on by `dr` (negative: rows `r0+dr..r0-1` are dropped first) when no
   * row from `r0 + min(dr, 0)` on has a cell outside columns `c0..c1` or any formula: then moving the
   * cells of those columns is moving the rows, one array splice instead of a copy per cell (a row
   * insert in a 200,000-row table). Returns false, changing nothing, when that does not hold.
   */
  trySpliceRows(r0: number, dr: number, c0: number, c1: number): boolean {
    const from = r0 + Math.min(dr, 0);
    const rows = this.rows;
    if (this.allocated * 4 < rows.length || dr > 50_000) return false;
    for (let r = from; r < rows.length; r++) {
      const row = rows[r];
      if (row === undefined) continue;
      if (row.f !== null || row.width() > c1 + 1) return false;
      for (let c = 0; c < c0; c++) if (row.has(c)) return false;
    }
    if (rows.length <= from) return true;
    if (dr < 0) {
      let dropped = 0;
      for (let r = from; r < r0 && r < rows.length; r++) if (rows[r] !== undefined) dropped++;
      rows.splice(from, -dr);
      this.allocated -= dropped;
    } else {
      rows.splice(r0, 0, ...new Array<RowCells | undefined>(dr));
    }
    return true;
  }

  /** Visits allocated rows from `r0` to `r1` in ascending order. */
  forEachRow(fn: (r: number, row: RowCells) => void, r0 = 0, r1 = Infinity): void {
    const rows = this.rows;
    const end = Math.min(r1 + 1, rows.length);
    if (this.allocated * 4 >= rows.length) {
      for (let r = r0; r < end; r++) {
        const row = rows[r];
        if (row !== undefined) fn(r, row);
      }
      return;
    }
    // A sparse sheet (say A1 and A1048576): the engine lists present indexes in ascending order.
    for (const k of Object.keys(rows)) {
      const r = Number(k);
      if (r < r0) continue;
      if (r >= end) break;
      const row = rows[r];
      if (row !== undefined) fn(r, row);
    }
  }

  /**
   * Marks every cached formula result stale (a full recalculation follows). The old results stay:
   * a circular reference reads its previous value while it is recalculated.
   */
  invalidateAll(): void {
    this.forEachRow((_, row) => {
      if (row.cg !== null) row.cg.fill(undefined);
    });
  }
}

function cellOf(row: RowCells, c: number): Cell {
  const cell: Cell = {};
  const v = row.v[c];
  if (v !== undefined) cell.v = v;
  const f = row.f ? row.f[c] : undefined;
  if (f !== undefined) cell.f = f;
  const nf = row.nf ? row.nf[c] : undefined;
  if (nf !== undefined) cell.nf = nf;
  const cg = row.cg ? row.cg[c] : undefined;
  if (cg !== undefined) cell.cg = cg;
  const cv = row.cv ? row.cv[c] : undefined;
  if (cv !== undefined) cell.cv = cv;
  return cell;
}
