/**
 * Writing a table into a worksheet as an Excel table (ListObject), block by block as its rows arrive
 * (issue #38): the one write path of an import, whether the rows come from a complete table
 * (`importTable`) or stream in from the service (`importSource`, through `fetchDataset`'s sink).
 *
 * A {@link TableWriter} is a `TableSink`: each row is validated as it arrives and kept until a block
 * is full; the source awaits `flush()` between pieces of the body, and that is where a full block is
 * typed (`typing.ts`), fingerprinted, sent to Excel and dropped. So nothing keeps the whole table:
 * at any moment the writer holds at most one block of rows (plus the piece of the body being read),
 * the fingerprints packed 7 characters per row (`HashPacker`), and a few numbers (rows written, the
 * longest row for the block checksums' size). Memory therefore does not grow with the table.
 *
 * Order of work, chosen for Excel's limits and so a partial write is never mistaken for data:
 * 1. the rows are validated as they come (shape, types, Excel's cell and sheet limits);
 * 2. before the first write, two `sync`s of reads (sheet, table and defined names, the settings, the
 *    date system, the sheet's and the workbook's protection) and the target's checks: a protected
 *    target sheet, or a new sheet under structure protection, is refused (issue #35, `protection.ts`);
 *    the binding must be storable (no secret, the settings budget) and, on a chosen sheet, the area
 *    empty and no other table touched;
 * 3. a new sheet is added by a request of its own that reads its id (the clean-up finds it by that id,
 *    never by its name); the first block's request also sets the info cell to "importing —
 *    INCOMPLETE", the header row (text) and the number formats (text columns `@` BEFORE any value);
 * 4. values in row blocks cut by their rows' request bytes (`rowRequestBytes`) under the target, the
 *    first at most 5,000 rows, then doubling; a refused request is retried in halves (`blocks.ts`);
 * 5. one last request creates the table over the filled range, names it, writes the final info
 *    line and stores the binding (kept through co-authors' stale settings copies, `settle.ts`); no
 *    calculation is asked for (issue #34, `sheet.ts`); then the fingerprints and Excel's block
 *    checksums are stored, except under structure protection (their hidden sheets cannot be added).
 * On cancel or failure in 3-5 (Excel's, or the source's: a body cut short, a malformed row, a row
 * count that does not add up) the written cells are cleared and the info cell says what happened,
 * with no table and no binding, exactly as before streaming (on a chosen sheet, with the area's number
 * formats read before the first write put back: `formatImage.ts`); if even that fails, the "INCOMPLETE"
 * marker is what stays. A table small enough to fit in the first block is written only after its
 * whole body arrived, so nothing at all is written when such a body fails.
 *
 * Two kinds of source:
 * - **known** (a complete table, `importTable`): the row count and the column plans are known before
 *   the first row, so the whole area is checked and every column's number format is set once over the
 *   whole column in the first request, as before streaming, and nothing is written unless every check
 *   passed (the whole table is validated first).
 * - **streamed** (unknown row count, always to a sheet the import adds: `importSource` reads an import
 *   into a chosen sheet whole, so its area is checked before anything is written): each block's
 *   request sets its rows' formats (12 small operations per ~4 MB block) and reads back the sheet's
 *   used range, so a value typed on the new sheet below the rows written stops the import before it
 *   would be overwritten (`checkTyped`). The column plans come from
 *   the first block; two decisions that depend on every row are made good as they arrive: a date-time
 *   column in which a later value has milliseconds gets the `.000` format over the whole column at the
 *   end, and an integer column in which a later value has 16 or more digits (Excel keeps 15) becomes
 *   text: its rows written so far are read back and written again as text, and the fingerprints of
 *   this import are not kept (the first refresh then reads the table once).
 */
import type { CellValue, Column } from "../table/model";
import type { TableSink } from "../table/sink";
import type { Binding, BindingValidators } from "../refresh/binding";
import { bindingSettingKey, serializeBinding } from "../refresh/binding";
import { rowValidator, validateColumns, EXCEL_MAX_CELL_CHARS, EXCEL_MAX_ROWS, EXCEL_MAX_COLUMNS, type ValidationIssue } from "../refresh/validate";
import { HashPacker } from "../refresh/rowHash";
import { queueStoreProbes, storeRowHashes } from "./delta";
import { hasMilliseconds, needsTextDigits, planColumns, headerValues, TEXT_FORMAT, DATETIME_FORMAT, DATETIME_MS_FORMAT, type ColumnPlan } from "./cells";
import { a1, deriveSheetName, sheetLabel, deriveTableName, isValidSheetName, isValidTableName, parseCell } from "./names";
import { infoComplete, infoFailed, infoInProgress } from "./info";
import { findOccupiedCell, findTouchingTable, areaOf, prepareCalculation, probeRowBytes, queueColumnFormats, queueDateSystemProbe, queuePutBack, queueTypedProbe, queueUsedArea, reachesRows, rowsUnderProbe, setEvery, typedIn, type CalculationGuard, type TypedCells } from "./sheet";
import type { Rect } from "../refresh/plan";
import { DEFAULT_TARGET_REQUEST_BYTES, errorText, isResponseTooLarge, FIRST_BLOCK_ROWS, RANGE_WRITE_OVERHEAD_BYTES, rowJsonBytes, rowRequestBytes, syncOrSplit, throwIfAborted, WriteError } from "./blocks";
import { checkSettingsBudget, queueBindingSetting } from "./bindingStore";
import { dateColumnsOf, typeBlock, typeRowInPlace, type TypedBlock } from "./typing";
import { rowChars } from "./checksums";
import { keepSetting } from "./settle";
import { protectedError, queueProtection } from "./protection";
import { captureFormats, restoreFormats, type FormatImage } from "./formatImage";

/** Rows looked at when fitting column widths after an import. */
const AUTOFIT_ROWS = 200;

/** Rows read back and written again per request when an integer column turns out to need text. */
const CONVERT_ROWS = 50_000;

export interface ImportTarget {
  /** Existing sheet to write into; default: a new sheet named after the source key. */
  sheetName?: string;
  /** Top-left cell of the info line (the header goes one row below); default `A1`. */
  anchor?: string;
}

/** A binding before the writer knows where the table went. */
export type BindingDraft = Omit<Binding, "tableName" | "sheetName" | "rowCount" | "lastRefreshAt" | "lastCheckedAt" | "lastFailure">;

/** What the source tells at the end of its body: the schema version and the validators the binding keeps. */
export interface SourceEnd {
  schemaVersion: string | null;
  validators: BindingValidators;
  /** The export's generation time from its body, for the info line when the validators lack it. */
  generatedAt?: string | null;
}

export interface TableWriterOptions {
  /**
   * The binding to store: made from the columns when they are known (to check, before the first
   * write, that it can be stored), and again with the source's end (schema version, validators).
   */
  binding: (columns: readonly Column[], end?: SourceEnd) => BindingDraft;
  target?: ImportTarget;
  /** Table name to use instead of the derived `ppm_<key>` (must be valid and free). */
  tableName?: string;
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  /** Into a chosen sheet: the most runs of number formats its area may have (`formatImage.ts`; tests lower it). */
  maxFormatRuns?: number;
  /** Credentials that must never be stored (checked against the binding before writing). */
  secrets?: readonly string[];
  now?: () => Date;
  /**
   * A complete table's row count and column plans (see the module comment: "known"), and whether its
   * rows were validated already (`validateTable`).
   */
  known?: { rows: number; plans: ColumnPlan[]; validated: boolean };
  /** Rows the source says it will send, for progress only (the manifest's row count). */
  expectedRows?: number | null;
}

export interface ImportResult {
  binding: Binding;
  sheetName: string;
  tableName: string;
  /** Address of the whole table, header included, e.g. `A2:L200002`. */
  address: string;
  rowCount: number;
  syncs: number;
  blocks: number;
  shrinks: number;
}

/**
 * A row carries a field its export's `columns` do not list (`TableSink.extraField`). A complete
 * table would keep it as an extra column at the end; a streamed import has written its header by
 * then, so the caller undoes what was written (`discard`) and reads the table whole instead.
 */
export class UndeclaredField extends Error {
  constructor(readonly field: string) {
    super(`A row of the export carries the field "${field}", which its columns do not list.`);
    this.name = "UndeclaredField";
  }
}

/**
 * A table too wide to stream: each streamed block sets its rows' number format column by column, and
 * at this width those operations alone would take a quarter of a request (review of #38, R5). Thrown
 * by `begin`, before anything is written; the caller reads the table whole, whose formats are set
 * once over each whole column.
 */
export class TooWideToStream extends Error {
  constructor(readonly width: number) {
    super(`${width} columns are read whole before they are written.`);
    this.name = "TooWideToStream";
  }
}

/** What the reads before the first write found. */
interface Prepared {
  sheet: Excel.Worksheet;
  /** Its name, as last read (the user may rename a sheet while it is being imported into). */
  sheetName: string;
  created: boolean;
  /**
   * The id of the sheet this import added, read in the request that added it: the one way a failure's
   * clean-up finds it again (review of #38, R3/R11: by its name it could find another import's sheet
   * of the same name, or none after a rename). Null until added.
   */
  sheetId: string | null;
  tableName: string;
  /** A chosen sheet's: the area's number formats before the import, put back by a failure's clean-up (`formatImage.ts`). */
  formats: FormatImage | null;
  date1904: boolean;
  calc: ReturnType<typeof prepareCalculation>;
  settings: Excel.SettingCollection;
  /**
   * Streamed: the last row of the added sheet that holds a value, read with each block (-1: none yet).
   * Below the rows written, it is a value typed while the import runs: the next block's cells are
   * then looked at before they are written (review of #38, R4).
   */
  usedBottom: number;
  /**
   * The sheet's used area (values only), as the last block's request read it: null when empty,
   * undefined before the first answer. Sizes the next block (`probeMayReadAll`).
   */
  usedArea?: Rect | null;
  /** The workbook's structure is protected (issue #35): no hidden fingerprint sheets can be added. */
  structureProtected: boolean;
}

/**
 * Writes one table (see the module comment). Use as a `TableSink` (`begin`, `row`, `flush`, `end`),
 * then `finish` with the source's end, or `fail` with what went wrong.
 */
export class TableWriter implements TableSink {
  /** Rows are dropped once their block is written (see `TableSink.transient`). */
  readonly transient = true;
  private columns: Column[] | null = null;
  /** The source converted every cell already (`TableSink.begin`'s facts). */
  private converted = false;
  private anchor = { row: 0, column: 0 };
  private width = 0;
  private maxRows = 0;
  private check: ReturnType<typeof rowValidator> | null = null;
  /**
   * Rows received and not yet typed (from `pendingAt` on): a complete table's, typed block by block
   * as they are written; a streamed one's until the first block has decided the column plans.
   */
  private pending: CellValue[][] = [];
  private pendingAt = 0;
  /** The first rows of `pending` already typed (a block Excel refused is sent again in halves). */
  private typed: TypedBlock | null = null;
  /**
   * A complete table's blocks are typed into these same arrays: each block's request is serialised
   * by the sync that sends it before the next block is typed (200,000 row arrays fewer for the
   * collector at an import). `typed` is only ever replaced whole by a new typing.
   */
  private readonly buffer: (string | number | boolean)[][] = [];
  /**
   * Streamed, once the plans are known: each row is typed as it arrives, in its own array (one array
   * per row, the model values gone at once), and waits here with its fingerprint (from `readyAt` on).
   */
  private eager: { kinds: ColumnPlan["kind"][]; dateColumns: number[]; integers: number[]; times: number[] } | null = null;
  private ready: (string | number | boolean)[][] = [];
  private readyHashes: string[] = [];
  /** Each ready row's request bytes (`rowRequestBytes`), and their sum from `readyAt` on. */
  private readyBytes: number[] = [];
  private waitingBytes = 0;
  private readyAt = 0;
  /** The header's request bytes (the first request carries it). */
  private headerBytes = 0;
  /** Integer columns that turned out to need text (see `revise`): converted before the next block. */
  private readonly toText = new Set<number>();
  private received = 0;
  private written = 0;
  /** Rows a request has reached, written or not (a failed request may have applied part of itself). */
  private reached = 0;
  /** `probeRowBytes`, once the plans are known. */
  private probeRowCost: number | null = null;
  private plans: ColumnPlan[] | null = null;
  /** Date-time columns that got the milliseconds format after their first rows were written. */
  private readonly msColumns = new Set<number>();
  private readonly packer = new HashPacker();
  private hashesKept = true;
  private longest = 1;
  private prepared: Prepared | null = null;
  private guard: CalculationGuard | null = null;
  private started = false;
  /**
   * A write request was sent (it may have failed after applying part of itself: Excel applies a
   * request's actions in order and stops at the one that fails, and a lost request may have been
   * applied whole), so a failure must undo what may be there.
   */
  private touched = false;
  /**
   * Cells a user typed into rows a block was about to fill, read in the block's own request before
   * its values (the probe): the clean-up writes them back after clearing what the import wrote.
   */
  private typedOver: TypedCells | null = null;
  /** The last request (table, binding) was sent: a failure must look for a table and a binding to remove. */
  private committing = false;
  /** The writer's own failure (a `WriteError`, an `UndeclaredField`) or the source's: later calls refuse with it. */
  private failure: Error | null = null;
  private perBlock = FIRST_BLOCK_ROWS;
  private mayGrow = true;
  private syncs = 0;
  private blocks = 0;
  private shrinks = 0;
  private readonly now: () => Date;

  constructor(
    private readonly context: Excel.RequestContext,
    private readonly options: TableWriterOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** Rows received so far. */
  get rowsReceived(): number {
    return this.received;
  }

  /** The most rows this writer held at once (received, not yet written): one block and a piece of the body. */
  maxHeld = 0;

  /** True once the source has named its columns (a source that ignored the sink never does). */
  get begun(): boolean {
    return this.columns !== null;
  }

  begin(columns: readonly Column[], facts?: { converted?: boolean }): void {
    // Cells the source converted already need only Excel's own limit checked (a cell's length).
    this.converted = facts?.converted === true;
    const issues = validateColumns(columns, 3);
    if (issues.length) throw this.refusal(issues);
    const o = this.options;
    const anchor = parseCell(o.target?.anchor ?? "A1");
    this.anchor = anchor;
    this.width = columns.length;
    if (anchor.column + this.width > EXCEL_MAX_COLUMNS) {
      throw new WriteError("too_many_columns", `${this.width} columns starting at column ${anchor.column + 1} do not fit on a sheet (${EXCEL_MAX_COLUMNS} columns).`);
    }
    if (o.tableName !== undefined && !isValidTableName(o.tableName)) {
      throw new WriteError("invalid_table", `"${o.tableName}" is not a valid Excel table name (letters, digits, _ and . only, starting with a letter or _, and not like a cell address).`);
    }
    if (o.target?.sheetName !== undefined && !isValidSheetName(o.target.sheetName)) {
      throw new WriteError("invalid_table", `"${o.target.sheetName}" is not a valid sheet name.`);
    }
    // An Excel table always has at least one body row, below the info line and the header.
    this.maxRows = EXCEL_MAX_ROWS - anchor.row - 2;
    this.columns = columns.map((c) => ({ ...c }));
    this.check = rowValidator(this.columns);
    this.headerBytes = rowJsonBytes(headerValues(this.columns)[0], this.width);
    if (o.known) this.plans = o.known.plans;
    else if (this.width * RANGE_WRITE_OVERHEAD_BYTES * 4 > (o.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES)) throw new TooWideToStream(this.width);
    throwIfAborted(o.signal, 0, this.received);
  }

  row(cells: CellValue[]): void {
    if (this.failure !== null) throw this.failure;
    const r = this.received;
    if (r >= this.maxRows) throw (this.failure = this.tooManyRows(r + 1));
    if (this.converted) {
      if (cells.length !== this.width || tooLong(cells)) {
        const issues: ValidationIssue[] = [];
        this.check!(cells, r, issues, 1);
        throw (this.failure = this.refusal(issues));
      }
    } else if (!this.options.known?.validated) {
      const issues: ValidationIssue[] = [];
      if (this.check!(cells, r, issues, 1)) throw (this.failure = this.refusal(issues));
    }
    if (this.eager) this.typeOne(cells);
    else {
      this.pending.push(cells);
      // Streamed, before the first block decides the plans: the rows held are counted by their bytes
      // too, so 5,000 rows of long texts are not all held before the first write (review of #38, R1).
      if (!this.options.known) this.waitingBytes += rowRequestBytes(cells, this.width);
    }
    this.received = r + 1;
    if (this.waiting > this.maxHeld) this.maxHeld = this.waiting;
  }

  flush(): Promise<void> | void {
    if (this.failure !== null) throw this.failure;
    // A block is due at its row count, or (once the plans are known and rows are typed as they come)
    // at the request bytes its rows take, whichever comes first.
    if (this.waiting < this.perBlock && this.waitingBytes < this.valueBudget(!this.started)) return;
    return this.guarded(() => this.writeReady(false));
  }

  /**
   * Streamed: revises the plans for one arriving row (a date-time with milliseconds in a column
   * planned without them; an integer of 16 or more digits in a column planned as numbers), then types
   * it in place and keeps it with its fingerprint until its block is written.
   */
  private typeOne(cells: CellValue[]): void {
    const e = this.eager!;
    const plans = this.plans!;
    for (let i = 0; i < e.integers.length; i++) {
      const c = e.integers[i];
      if (needsTextDigits(cells[c])) {
        // Written as text from now on; the rows before are made text before the next block (`convert`).
        plans[c] = { ...plans[c], numberFormat: TEXT_FORMAT, kind: "text" };
        e.kinds[c] = "text";
        e.integers.splice(i--, 1);
        this.toText.add(c);
      }
    }
    for (let i = 0; i < e.times.length; i++) {
      const c = e.times[i];
      const v = cells[c];
      if (typeof v === "string" && hasMilliseconds(v)) {
        plans[c] = { ...plans[c], numberFormat: DATETIME_MS_FORMAT };
        e.times.splice(i--, 1);
        this.msColumns.add(c);
      }
    }
    const hash = typeRowInPlace(cells, e.kinds, e.dateColumns);
    const typed = cells as unknown as (string | number | boolean)[];
    const chars = rowChars(typed, this.width);
    if (chars > this.longest) this.longest = chars;
    const bytes = rowRequestBytes(typed, this.width);
    this.ready.push(typed);
    this.readyHashes.push(hash);
    this.readyBytes.push(bytes);
    this.waitingBytes += bytes;
  }

  end(): { columns: Column[]; rows: CellValue[][] } {
    return { columns: this.columns ?? [], rows: [] };
  }

  /** A field no column describes cannot be written once the header is (see {@link UndeclaredField}). */
  extraField(name: string): void {
    throw (this.failure = new UndeclaredField(name));
  }

  /**
   * Undoes everything written, without a word on the sheet: the sheet this import added is deleted
   * (found by its id). For a caller that starts the import over another way (see
   * {@link UndeclaredField}); a streamed import only ever writes to a sheet it added. If even that
   * fails, the failure's clean-up runs instead ({@link fail}).
   */
  async discard(): Promise<void> {
    const p = this.prepared;
    if (!p || !this.touched) return;
    try {
      // The sheet this import added, by its id (a streamed import writes to no other).
      const added = p.sheetId !== null ? this.context.workbook.worksheets.getItemOrNullObject(p.sheetId) : null;
      added?.load("name");
      this.syncs++;
      await this.context.sync();
      if (added && !added.isNullObject) added.delete();
      if (!p.created) p.sheet.getRangeByIndexes(this.anchor.row, this.anchor.column, 2 + Math.max(1, this.reached), this.width).clear("Contents");
      this.guard?.restore();
      if (!p.created && p.formats) this.syncs += await restoreFormats(this.context, p.sheet, p.formats);
      else {
        this.syncs++;
        await this.context.sync();
      }
      this.touched = false;
      this.started = false;
    } catch (e) {
      await this.fail(e);
    }
  }

  /**
   * Writes what is left, creates the table, stores the binding (made with the source's `end`), then
   * the fingerprints and Excel's block checksums.
   * @throws WriteError; a failure after the first write clears what was written first (see {@link fail}).
   */
  async finish(end: SourceEnd): Promise<ImportResult> {
    if (this.failure !== null) throw this.failure;
    if (!this.columns) throw new WriteError("invalid_table", "The source sent no columns.");
    return this.guarded(async () => {
      await this.writeReady(true);
      return this.complete(end);
    });
  }

  /**
   * After a failure anywhere (the source's or the writer's): clears what was written and says so in
   * the info cell (nothing when nothing was written), then throws the failure: the writer's own as a
   * `WriteError` (what Excel threw is `write_failed`), a source's error (a body cut short, a malformed
   * row: a `PpmError`) as it is.
   *
   * Only what this import can prove its own is touched (review of #38, R3/R8/R11): the sheet it added
   * by the id read when it was added, the table by its place (the header row at the anchor, on that
   * sheet), the binding by this import's id. Never anything found by a name, which another import
   * (a second pane, the other runtime, a co-author) may have taken meanwhile.
   */
  async fail(err: unknown): Promise<never> {
    // The writer's own failure (a WriteError), or the source's error as it is.
    const shown = (this.failure ?? err) as Error;
    if (shown instanceof Error) this.failure = shown;
    if (!this.touched || !this.prepared) throw shown;
    const p = this.prepared;
    const o = this.options;
    const wb = this.context.workbook;
    const headerRow = this.anchor.row + 1;
    try {
      // A failed request may have applied part of itself, so what is there is looked up afresh.
      const sheet = p.created ? wb.worksheets.getItemOrNullObject(p.sheetId!) : p.sheet;
      const tables = this.committing ? sheet.tables : null;
      tables?.load("items/id");
      const key = bindingSettingKey(this.draft().id);
      // A binding of that id stored before this import (a caller's own id) is not this import's to remove.
      const binding = this.committing && !p.settings.items.some((i) => i.key === key) ? wb.settings.getItemOrNullObject(key) : null;
      binding?.load("key");
      sheet.load("name");
      this.syncs++;
      await this.context.sync();
      // The sheet this import added is gone (the user deleted it): nothing of this import is left.
      if (sheet.isNullObject) throw shown;
      if (tables && tables.items.length > 0) {
        // The table the last request created, whatever name it got: the one whose header is at the anchor.
        const placed = tables.items.map((t) => {
          const r = t.getRange();
          r.load(["rowIndex", "columnIndex"]);
          return { t, r };
        });
        this.syncs++;
        await this.context.sync();
        for (const { t, r } of placed) if (r.rowIndex === headerRow && r.columnIndex === this.anchor.column) t.delete();
      }
      if (binding && !binding.isNullObject) binding.delete();
      // Clear what was written (and any rows a failed request reached), then say so where the table would have been.
      // Values were written no further than the requests reached: below them, a known table's area
      // has only the formats of the first request (put back below), and may hold what the user typed
      // there meanwhile, which must stay.
      const rows = 2 + Math.max(1, this.reached);
      sheet.getRangeByIndexes(this.anchor.row, this.anchor.column, rows, this.width).clear("Contents");
      const cell = sheet.getRangeByIndexes(this.anchor.row, this.anchor.column, 1, 1);
      cell.numberFormat = [[TEXT_FORMAT]];
      const code = isCoded(shown) ? shown.code : "write_failed";
      cell.values = [[infoFailed("import", this.draft().source, this.now().toISOString(), code, redact(errorText(shown), o.secrets), false)]];
      this.guard?.restore();
      // On a chosen sheet the area's own formats go back (the message, written first as text, stays text).
      let pending = true;
      if (!p.created && p.formats) {
        this.syncs += await restoreFormats(this.context, sheet, p.formats);
        pending = false;
      }
      // Then what a user typed where a block went over it, as typed (`checkProbe`).
      if (this.typedOver) {
        queuePutBack(sheet, this.typedOver);
        pending = true;
      }
      if (pending) await this.context.sync();
    } catch {
      // The "INCOMPLETE" marker written with the first block stays; nothing more can be done here.
    }
    throw shown;
  }

  /**
   * Adds the sheet this import writes to, in a request of its own, and reads its id with it: from now
   * on the sheet is found by that id (see {@link fail}). Were the add part of the first block's
   * request, a refused block could not tell whether the sheet was added, and a sheet found by its name
   * might be another import's. A failed add touches nothing: if it was applied and only its answer was
   * lost, an empty sheet stays, which the message names.
   */
  private async addSheet(): Promise<void> {
    const p = this.prepared!;
    const sheet = this.context.workbook.worksheets.add(p.sheetName);
    sheet.load(["id", "name"]);
    this.syncs++;
    try {
      await this.context.sync();
    } catch (e) {
      const taken = (e as { code?: unknown } | null)?.code === "ItemAlreadyExists";
      throw new WriteError(
        "write_failed",
        taken
          ? `A sheet named "${p.sheetName}" was added while this import started (another import, or a co-author); nothing was imported. Import again: the new sheet gets a free name.`
          : `Adding the sheet "${p.sheetName}" failed: ${errorText(e)} Nothing was imported; if an empty sheet "${p.sheetName}" appeared, it can be deleted.`,
        { rowsWritten: 0, cause: e },
      );
    }
    p.sheet = sheet;
    p.sheetId = sheet.id;
    p.sheetName = sheet.name;
    this.touched = true;
  }

  /**
   * Runs a step of the writer's own; its failure is kept (so later rows and flushes refuse at once),
   * as a `WriteError`: what Excel threw becomes `write_failed`.
   */
  private async guarded<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (e) {
      this.failure ??= e instanceof WriteError ? e : new WriteError("write_failed", `Writing to Excel failed: ${errorText(e)}`, { rowsWritten: this.written, cause: e });
      throw this.failure;
    }
  }

  private draft(end?: SourceEnd): BindingDraft {
    return this.options.binding(this.columns ?? [], end);
  }

  private refusal(issues: ValidationIssue[]): WriteError {
    const first = issues[0].code;
    const code = first === "too_many_rows" || first === "too_many_columns" || first === "cell_too_long" ? first : "invalid_table";
    return new WriteError(code, issues.map((i) => i.message).join(" "));
  }

  private tooManyRows(rows: number): WriteError {
    const known = this.options.known?.rows;
    const at = (this.anchor.row + 3).toLocaleString("en-US");
    return new WriteError(
      "too_many_rows",
      known !== undefined
        ? `${known.toLocaleString("en-US")} rows starting at row ${at} do not fit on a sheet (${EXCEL_MAX_ROWS.toLocaleString("en-US")} rows). Add a local filter ($filter or $top) to import fewer rows.`
        : `The data has more than ${(rows - 1).toLocaleString("en-US")} rows, which do not fit on a sheet starting at row ${at} (${EXCEL_MAX_ROWS.toLocaleString("en-US")} rows). Add a local filter ($filter or $top) to import fewer rows.`,
    );
  }

  /** Rows waiting to be written. */
  private get waiting(): number {
    return this.pending.length - this.pendingAt + this.ready.length - this.readyAt;
  }

  /**
   * Writes every full block (`all`: every row left, and at least the first request, so a table of no
   * rows still gets its header). One request per block.
   */
  private async writeReady(all: boolean): Promise<void> {
    const o = this.options;
    if (!this.prepared) {
      if (!all && this.waiting < this.perBlock && this.waitingBytes < this.valueBudget(true)) return;
      this.prepared = await this.prepare();
    }
    const p = this.prepared;
    const bodyRow = this.anchor.row + 2;
    if (!this.plans) this.plans = planColumns({ columns: this.columns!, rows: this.pendingRows(Math.min(this.perBlock, this.waiting)) });
    if (!o.known && !this.eager) this.startTyping();
    if (p.created && p.sheetId === null) await this.addSheet();
    if (this.toText.size > 0) await this.convert();
    const plans = this.plans;
    while (this.waiting > 0 ? this.waiting >= this.perBlock || this.waitingBytes >= this.valueBudget(!this.started) || all : all && !this.started) {
      throwIfAborted(o.signal, this.written, this.total());
      const first = !this.started;
      // The rows of the block: at most `perBlock`, and no more than the request's bytes allow (at least one).
      let count = Math.min(this.perBlock, this.waiting);
      const block = o.known ? this.typedHead(count) : { values: this.ready };
      const at = o.known ? 0 : this.readyAt;
      const sizes = o.known ? null : this.readyBytes;
      const budget = this.valueBudget(first);
      let bytes = 0;
      for (let i = 0; i < count; i++) {
        bytes += sizes ? sizes[at + i] : rowRequestBytes(block.values[i], this.width);
        if (bytes > budget && i > 0) {
          count = i;
          break;
        }
      }
      // When the sheet may hold something at or below the rows this block fills (beside them, or far
      // below), the block's probe (below) may read back every cell of them: no more rows than fit a
      // response's budget then (`probeRowBytes`; a table of short cells is capped here, not above).
      const capped = this.probeMayReadAll(p, Math.max(bodyRow + this.written, this.anchor.row + 2 + this.reached));
      if (capped) {
        count = Math.min(count, rowsUnderProbe(o.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES, this.probeRowBytes(p, plans)));
      }
      const cutByBytes = count < Math.min(this.perBlock, this.waiting);
      if (!o.known && count > 0) await this.checkTyped(bodyRow + this.written, count);
      this.started = true;
      this.guard ??= p.calc.start();
      // Read in the same request, before anything in it: what holds a value in the rows this block
      // fills, past those earlier requests reached (the import's own). A value typed there after
      // `checkTyped` (or, on a chosen sheet, after its area was checked) would be overwritten by this
      // very request; it is read here, stops the import, and the clean-up puts it back (`typedOver`).
      const probeFrom = Math.max(bodyRow + this.written, this.anchor.row + 2 + this.reached);
      const probeEnd = bodyRow + this.written + count;
      const probe = probeFrom < probeEnd ? queueTypedProbe(p.sheet, { row: probeFrom, column: this.anchor.column, rowCount: probeEnd - probeFrom, columnCount: this.width }) : null;
      if (first) this.queuePrelude();
      if (!o.known && count > 0) queueColumnFormats(p.sheet, bodyRow + this.written, this.anchor.column, count, plans);
      if (count > 0) p.sheet.getRangeByIndexes(bodyRow + this.written, this.anchor.column, count, this.width).values = at === 0 && block.values.length === count ? block.values : block.values.slice(at, at + count);
      // What else holds a value on the sheet, read back with the block (`Prepared.usedArea`); streamed, the sheet's name too.
      const used = queueUsedArea(p.sheet);
      if (!o.known) p.sheet.load("name");
      this.reached = Math.max(this.reached, this.written + count);
      this.touched = true;
      this.syncs++;
      const from = this.written;
      // One sync per row block is the point: each request must stay under Excel's 5 MB payload limit.
      let sent: boolean;
      try {
        sent = await syncOrSplit(this.context, count, (cause) => new WriteError("payload_too_large", `Row ${from + 1} alone is larger than Excel accepts in one request.`, { rowsWritten: from, cause }));
      } catch (e) {
        // The answer was too large: the probe read back every cell of rows the block was not capped
        // for, so something was put beside or below them since the used area was last read. The
        // request may have been applied; its rows are within `reached`, so sending them again (capped
        // now) does not take the import's own values for typed ones. Once only: a capped block's
        // answer refused is not about this.
        if (!isResponseTooLarge(e) || capped) throw e;
        p.usedArea = undefined;
        this.shrinks++;
        if (first) this.started = false;
        continue;
      }
      if (!sent) {
        // Refused for its size, as far as the error tells (a GeneralException may also be an action
        // that failed after the earlier ones were applied): the same rows (and prelude) again, in
        // smaller blocks. The sheet was added by a request of its own, so it is not added twice.
        this.perBlock = Math.max(1, Math.ceil(count / 2));
        this.mayGrow = false;
        this.shrinks++;
        if (first) this.started = false;
        continue;
      }
      if (probe) this.checkProbe(probe);
      p.usedArea = areaOf(used);
      if (!o.known) p.usedBottom = p.usedArea ? p.usedArea.row + p.usedArea.rowCount - 1 : -1;
      if (!o.known) p.sheetName = p.sheet.name;
      this.blocks++;
      this.acknowledge(count);
      // A block cut by its bytes sets the pace; else the next may double (until a refusal).
      if (cutByBytes) this.perBlock = Math.max(1, count);
      else if (this.mayGrow) this.perBlock *= 2;
      o.onProgress?.(this.written, this.total());
      if (count === 0) break;
    }
  }

  /**
   * Request bytes a block's values may take: the target less the request's other operations, each
   * about {@link RANGE_WRITE_OVERHEAD_BYTES} (the values' range; streamed, a number format per column
   * and the used range's read; the first request also the info cell, the header and, for a complete
   * table, each column's format). Review of #38, R5: a wide table's first request was 5.8 MB.
   */
  private valueBudget(first: boolean): number {
    const target = this.options.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES;
    // A column's format costs more than a small write's average once a request holds thousands of
    // actions (their ids grow): 3,000 columns measured ~760 bytes each; counted at 1.5 times.
    const perColumn = Math.ceil(RANGE_WRITE_OVERHEAD_BYTES * 1.5);
    let other = RANGE_WRITE_OVERHEAD_BYTES * 3 + (this.options.known ? 0 : perColumn * this.width);
    if (first) other += RANGE_WRITE_OVERHEAD_BYTES * 4 + perColumn * this.width + this.headerBytes;
    return Math.max(1, target - other);
  }

  /**
   * Whether a probe from row `from` down may read back every cell of its rows: the sheet's used
   * area, as the last request read it, reaches `from` or below within the import's columns (or is not
   * known yet: before the first block's answer). Under the strictest reading of `getUsedRange` the
   * probe is then that area met with the block. Not capped always: with nothing beside or below, the
   * probe answers a null object, and a cap for the worst case cost ~15 % more requests (200,000 rows
   * × 12: 16 against 14). A value put beside or below after that read can still widen the next probe
   * beyond the cap's reckoning: its answer, refused as too large, is sent again capped (`writeReady`).
   * A value typed inside that block in the same window is then not seen: two edits in one request's
   * window, as when a request's answer is lost.
   */
  private probeMayReadAll(p: Prepared, from: number): boolean {
    return p.usedArea === undefined || reachesRows(p.usedArea, from, { column: this.anchor.column, columnCount: this.width });
  }

  /**
   * Response bytes of a block's probe per row at most: the longest format its cells may hold is the
   * import's own (a complete table's columns are formatted in the first request) or, on a chosen
   * sheet, one the area had (`Prepared.formats`).
   */
  private probeRowBytes(p: Prepared, plans: ColumnPlan[]): number {
    if (this.probeRowCost === null) {
      // A column may turn text or gain milliseconds later (`convert`): that format counts from the start.
      const formats = plans.map((x) => [x.numberFormat, TEXT_FORMAT, ...(x.kind === "datetime" ? [DATETIME_MS_FORMAT] : [])]);
      for (const [c, runs] of (p.formats?.runs ?? []).entries()) for (const [, f] of runs) formats[c]?.push(f);
      this.probeRowCost = probeRowBytes(formats);
    }
    return this.probeRowCost;
  }

  /** The progress total: what the source announced, or what has arrived so far. */
  private total(): number {
    return Math.max(this.received, this.options.known?.rows ?? this.options.expectedRows ?? 0);
  }

  private pendingRows(count: number): CellValue[][] {
    return this.pending.slice(this.pendingAt, this.pendingAt + count);
  }

  /** The next `count` waiting rows typed (typed once, even when Excel refuses their block). */
  private typedHead(count: number): TypedBlock {
    if (count === 0) return { values: [], hashes: [], longest: 1 };
    if (!this.typed || this.typed.values.length < count) {
      this.typed = typeBlock(this.pending, this.pendingAt, this.pendingAt + count, this.plans!, dateColumnsOf(this.plans!, this.prepared!.date1904), this.buffer);
    }
    return this.typed;
  }

  /** Streamed: the plans are known (from the first block): the rows waiting, and every later one, are typed as they come. */
  private startTyping(): void {
    const plans = this.plans!;
    this.eager = {
      kinds: plans.map((x) => x.kind),
      dateColumns: dateColumnsOf(plans, this.prepared!.date1904),
      integers: plans.flatMap((x, c) => (this.columns![c].type === "integer" && x.kind === "number" ? [c] : [])),
      times: plans.flatMap((x, c) => (x.kind === "datetime" && x.numberFormat === DATETIME_FORMAT ? [c] : [])),
    };
    this.waitingBytes = 0;
    for (let i = this.pendingAt; i < this.pending.length; i++) this.typeOne(this.pending[i]);
    this.pending = [];
    this.pendingAt = 0;
  }

  /** `count` rows went in: their fingerprints are kept packed, the rows dropped. */
  private acknowledge(count: number): void {
    if (count === 0) return;
    if (!this.options.known) {
      for (let i = 0; i < count; i++) {
        this.packer.push(this.readyHashes[this.readyAt + i]);
        this.waitingBytes -= this.readyBytes[this.readyAt + i];
      }
      this.written += count;
      this.readyAt += count;
      if (this.readyAt > 4096 && this.readyAt * 2 > this.ready.length) {
        this.ready = this.ready.slice(this.readyAt);
        this.readyHashes = this.readyHashes.slice(this.readyAt);
        this.readyBytes = this.readyBytes.slice(this.readyAt);
        this.readyAt = 0;
      }
      return;
    }
    const block = this.typed!;
    for (let i = 0; i < count; i++) this.packer.push(block.hashes[i]);
    if (block.longest > this.longest) this.longest = block.longest;
    this.typed = block.values.length > count ? { values: block.values.slice(count), hashes: block.hashes.slice(count), longest: block.longest } : null;
    this.written += count;
    this.pendingAt += count;
    if (this.pendingAt > 4096 && this.pendingAt * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.pendingAt);
      this.pendingAt = 0;
    }
  }

  /**
   * Integer columns written as numbers that turned out to hold a value of 16 or more digits, which
   * Excel keeps only as text (`typeOne`): their rows written so far are read back and written again
   * as exact text (`@` first; numbers under 10^15, whose digits a double holds exactly), and their
   * rows still waiting are made text. The fingerprints of this import are then not kept (they were of
   * numbers): the first refresh reads the table once.
   */
  private async convert(): Promise<void> {
    const p = this.prepared!;
    const bodyRow = this.anchor.row + 2;
    for (const c of this.toText) {
      const column = this.anchor.column + c;
      for (let from = 0; from < this.written; from += CONVERT_ROWS) {
        throwIfAborted(this.options.signal, this.written, this.total());
        const count = Math.min(CONVERT_ROWS, this.written - from);
        const range = p.sheet.getRangeByIndexes(bodyRow + from, column, count, 1);
        range.load("values");
        this.syncs++;
        await this.context.sync();
        const text = range.values.map(([v]) => [v === "" || v === null ? "" : String(v)]);
        const target = p.sheet.getRangeByIndexes(bodyRow + from, column, count, 1);
        setEvery(target, "numberFormat", TEXT_FORMAT);
        target.values = text;
        this.syncs++;
        await this.context.sync();
      }
      for (let i = this.readyAt; i < this.ready.length; i++) {
        const v = this.ready[i][c];
        if (typeof v === "number") this.ready[i][c] = String(v);
      }
    }
    this.toText.clear();
    this.hashesKept = false;
  }

  /** After a block's request: a value its probe found was there before the block's values went over it (see `typedOver`). */
  private checkProbe(probe: Excel.Range): void {
    this.typedOver = typedIn(probe);
    if (!this.typedOver) return;
    const at = this.typedOver.at;
    const cell = a1(at.row, at.column);
    throw (this.failure = new WriteError("occupied", `A value was typed into the rows the import was writing on "${this.prepared!.sheetName}" (at or after ${cell}) while it wrote them; the import stopped and put it back. Import again to an empty area or a new sheet.`, { address: cell }));
  }

  /**
   * Streamed: the rows a block is about to fill must still be empty. The sheet is this import's own,
   * but the user (or a co-author) can type on it while a long download runs; a value below the rows
   * written so far is looked for in the block's cells before they are written (review of #38, R4).
   */
  private async checkTyped(firstRow: number, count: number): Promise<void> {
    const p = this.prepared!;
    // Rows an earlier request reached may hold this import's own values (a request that failed after
    // applying its values, then retried in halves): only the rows past them are looked at.
    const from = Math.max(firstRow, this.anchor.row + 2 + this.reached);
    const end = firstRow + count;
    if (p.usedBottom < from || from >= end) return;
    const rect = { row: from, column: this.anchor.column, rowCount: end - from, columnCount: this.width };
    const occupied = await findOccupiedCell(this.context, p.sheet, rect);
    this.syncs++;
    if (occupied) {
      throw new WriteError("occupied", `${occupied} on "${p.sheetName}" was filled while the import was writing there; the import stopped so as not to overwrite it. Import again to a new sheet.`, { address: occupied });
    }
  }

  /** The reads before the first write, and every check that can refuse before anything is written. */
  private async prepare(): Promise<Prepared> {
    const context = this.context;
    const o = this.options;
    const wb = context.workbook;
    const sheets = wb.worksheets;
    sheets.load("items/name");
    const tables = wb.tables;
    tables.load("items/name");
    const calc = prepareCalculation(context);
    const dateSystem = queueDateSystemProbe(context);
    const chosen = o.target?.sheetName !== undefined ? sheets.getItemOrNullObject(o.target.sheetName) : null;
    chosen?.load("name");
    const wbNames = wb.names;
    wbNames.load("items/name");
    const settings = wb.settings;
    settings.load("items/key,items/value");
    // Issue #35: the target sheet's and the workbook's protection, read with these.
    const protection = queueProtection(context, chosen ? [chosen] : []);
    this.syncs++;
    await context.sync();
    const locked = protection();
    const intoExisting = !!chosen && !chosen.isNullObject;
    if ((intoExisting && locked.sheets[0]) || (!intoExisting && locked.structure)) {
      const sheetName = intoExisting ? chosen.name : o.target?.sheetName ?? deriveSheetName(sheetLabel(this.draft().source), sheets.items.map((s) => s.name));
      throw protectedError("import", { sheet: sheetName, sheetProtected: intoExisting && locked.sheets[0], structureProtected: locked.structure, addsSheet: !intoExisting });
    }
    // Sheet-scoped names can be asked for only once the sheets are known.
    const scopedNames = sheets.items.map((s) => {
      const n = s.names;
      n.load("items/name");
      return n;
    });
    this.syncs++;
    await context.sync();
    const names = [...wbNames.items.map((n) => n.name), ...scopedNames.flatMap((n) => n.items.map((i) => i.name))];

    const draft = this.draft();
    const key = draft.source.kind === "dataset" ? draft.source.key : draft.source.endpoint;
    // Table names and defined names (any scope) share one namespace: checked here, before any write.
    const tableNames = tables.items.map((t) => t.name);
    const taken = [...tableNames, ...names];
    const tableName = o.tableName ?? deriveTableName(key, taken);
    if (tableNames.some((n) => n.toLowerCase() === tableName.toLowerCase())) {
      throw new WriteError("invalid_table", `A table named "${tableName}" already exists in this workbook.`);
    }
    if (taken.some((n) => n.toLowerCase() === tableName.toLowerCase())) {
      throw new WriteError("name_taken", `"${tableName}" is already a defined name in this workbook (Formulas › Name Manager); a table cannot use it. Choose another table name.`);
    }

    let sheet: Excel.Worksheet = null as unknown as Excel.Worksheet;
    let sheetName: string;
    let created = false;
    let formats: FormatImage | null = null;
    if (chosen && !chosen.isNullObject) {
      // A chosen sheet's area is checked whole before anything is written, which needs the row count.
      if (!o.known) throw new Error("A streamed import writes only to a sheet it adds; an import into a chosen sheet reads its table whole (importSource).");
      sheet = chosen;
      sheetName = chosen.name;
      // The area as far as it is known: a complete table's, else the info line, the header and one body row.
      const area = { row: this.anchor.row, column: this.anchor.column, rowCount: Math.max(1, o.known?.rows ?? 1) + 2, columnCount: this.width };
      const occupied = await findOccupiedCell(context, sheet, area);
      this.syncs++;
      if (occupied) {
        throw new WriteError("occupied", `The import needs ${a1(area.row, area.column, area.rowCount, area.columnCount)} on "${sheetName}" to be empty, but ${occupied} is not. Choose an empty area or a new sheet.`, { address: occupied });
      }
      const touched = await findTouchingTable(context, sheet, area);
      this.syncs++;
      if (touched) {
        throw new WriteError(
          "adjacent_table",
          `The import at ${a1(area.row, area.column, area.rowCount, area.columnCount)} on "${sheetName}" would touch the table "${touched}": Excel would merge what is written next to a table into it. Leave an empty row and column between tables, or import to a new sheet.`,
        );
      }
      // Empty is not unformatted: the area's formats are kept, so a failure puts them back (formatImage.ts).
      const captured = await captureFormats(context, sheet, area, { maxRuns: o.maxFormatRuns, where: `${a1(area.row, area.column, area.rowCount, area.columnCount)} on "${sheetName}"` });
      this.syncs += captured.syncs;
      formats = captured.image;
    } else {
      sheetName = o.target?.sheetName ?? deriveSheetName(sheetLabel(draft.source), sheets.items.map((s) => s.name));
      created = true;
    }
    // The binding is checked before writing, so one that would carry a secret or overflow the
    // settings never leaves a half-import behind (checked again with the source's validators at the end).
    this.checkBinding(this.partial(draft, tableName, sheetName, 0), settings.items);
    return { sheet, sheetName, created, sheetId: null, tableName, formats, date1904: dateSystem.is1904(), calc, settings, usedBottom: -1, structureProtected: locked.structure };
  }

  private partial(draft: BindingDraft, tableName: string, sheetName: string, rowCount: number): Binding {
    const at = this.now().toISOString();
    return { ...draft, tableName, sheetName, rowCount, lastRefreshAt: at, lastCheckedAt: at, lastFailure: null };
  }

  private checkBinding(binding: Binding, settings: readonly { key: string; value: unknown }[]): string {
    const json = serializeBinding(binding, this.options.secrets ?? []);
    checkSettingsBudget(settings, bindingSettingKey(binding.id), json);
    return json;
  }

  /** The first write request's operations: the sheet, the info cell (INCOMPLETE), the header; a known table's formats. */
  private queuePrelude(): void {
    const p = this.prepared!;
    const cell = p.sheet.getRangeByIndexes(this.anchor.row, this.anchor.column, 1, 1);
    cell.numberFormat = [[TEXT_FORMAT]];
    cell.values = [[infoInProgress("import", this.draft().source)]];
    const header = p.sheet.getRangeByIndexes(this.anchor.row + 1, this.anchor.column, 1, this.width);
    setEvery(header, "numberFormat", TEXT_FORMAT);
    header.values = headerValues(this.columns!);
    const known = this.options.known;
    if (known) queueColumnFormats(p.sheet, this.anchor.row + 2, this.anchor.column, Math.max(1, known.rows), this.plans!);
    else if (this.received === 0) queueColumnFormats(p.sheet, this.anchor.row + 2, this.anchor.column, 1, this.plans!);
  }

  /** The last request (table, name, info line, binding, recalculation), then the fingerprints and checksums. */
  private async complete(end: SourceEnd): Promise<ImportResult> {
    const p = this.prepared!;
    const o = this.options;
    const context = this.context;
    throwIfAborted(o.signal, this.written, this.total());
    const rows = this.written;
    const bodyRows = Math.max(1, rows);
    const headerRow = this.anchor.row + 1;
    const bodyRow = headerRow + 1;
    const draft = this.draft(end);
    const partial = this.partial(draft, p.tableName, p.sheetName, rows);
    const bindingJson = this.checkBinding(partial, p.settings.items);
    const plans = this.plans!;
    // Date-time columns whose milliseconds showed up after their first rows: the format over all of it.
    for (const c of this.msColumns) setEvery(p.sheet.getRangeByIndexes(bodyRow, this.anchor.column + c, bodyRows, 1), "numberFormat", plans[c].numberFormat);
    const address = a1(headerRow, this.anchor.column, bodyRows + 1, this.width);
    // From a Range, never a bare address: `TableCollection.add` reads a bare address on the ACTIVE
    // sheet (docs: "If the address does not contain a sheet name, the currently-active sheet is used").
    const listObject = p.sheet.tables.add(p.sheet.getRangeByIndexes(headerRow, this.anchor.column, bodyRows + 1, this.width), true);
    listObject.name = p.tableName;
    p.sheet.getRangeByIndexes(this.anchor.row, this.anchor.column, 1, 1).values = [[infoComplete({
      source: draft.source,
      environment: draft.environment,
      generatedAt: draft.validators.generatedAt ?? end.generatedAt ?? null,
      schemaVersion: draft.schemaVersion,
      refreshedAt: partial.lastRefreshAt ?? this.now().toISOString(),
      rowCount: rows,
      query: draft.query,
    })]];
    // Fit widths to the header and the first rows only: enough for dates not to show as ####,
    // and cheap on a 200,000-row table.
    p.sheet.getRangeByIndexes(headerRow, this.anchor.column, Math.min(bodyRows, AUTOFIT_ROWS) + 1, this.width).format.autofitColumns();
    queueBindingSetting(context, partial.id, bindingJson);
    if (p.created) p.sheet.activate();
    this.guard?.restore();
    // The fingerprint store's first lookups ride in this request (reads only): one request fewer.
    const storing = this.hashesKept && !p.structureProtected;
    const probes = storing ? queueStoreProbes(context, partial.id) : undefined;
    // No calculation is asked for: Excel's own mode decides (sheet.ts, issue #34).
    this.syncs++;
    this.committing = true;
    await context.sync();
    // Issue #35: a new binding a co-author's stale settings copy could erase is settled with the batch.
    keepSetting(context, { key: bindingSettingKey(partial.id), value: bindingJson, mode: "cas", previous: null });
    // The row fingerprints a later delta refresh plans from (issue #15, delta.ts): ≈ 6 % more
    // request bytes now instead of reading the whole table back at the first refresh. Without them
    // that refresh reads the table once, so a failure here is not the import's.
    // Under structure protection (issue #35) the hidden sheets they live on cannot be added: the first refresh reads the table instead.
    if (storing) {
      try {
        // With Excel's block checksums of the same rows (issue #24: the first refresh reads only what moved).
        this.syncs += await storeRowHashes(context, partial, this.packer.packed(), plans.map((x) => x.numberFormat), o.targetRequestBytes, {
          geometry: { sheet: p.sheetName, top: bodyRow, left: this.anchor.column, width: this.width, rows },
          longestRowChars: this.longest,
        }, probes);
      } catch {
        /* the next refresh plans from the cells */
      }
    }
    return { binding: partial, sheetName: p.sheetName, tableName: p.tableName, address, rowCount: rows, syncs: this.syncs, blocks: this.blocks, shrinks: this.shrinks };
  }
}

/** True when a cell holds more characters than an Excel cell takes. */
function tooLong(cells: readonly CellValue[]): boolean {
  for (let c = 0; c < cells.length; c++) {
    const v = cells[c];
    if (typeof v === "string" && v.length > EXCEL_MAX_CELL_CHARS) return true;
  }
  return false;
}

/** An error with a machine `code` (a `PpmError`, a `WriteError`). */
function isCoded(e: unknown): e is { code: string; message: string } {
  return !!e && typeof e === "object" && typeof (e as { code?: unknown }).code === "string";
}

/** A message that is written into the workbook: no credential in it, ever. */
function redact(text: string, secrets: readonly string[] | undefined): string {
  let out = text;
  for (const s of secrets ?? []) if (s) out = out.split(s).join("***");
  return out;
}

/**
 * One writer kept for the life of the module, never used (no context, no rows), for the reason
 * `KEEP_PARSER_SHAPE` gives (src/service/csv.ts): V8 optimises the writer's per-row code (`row`,
 * `typeOne`, `acknowledge`, and the CSV builder's `add`, which calls `row`) for the object shape its
 * writers have. With no writer alive at a full garbage collection (between two imports in the task
 * pane, minutes apart) that shape is freed and the optimised code thrown away ("weak objects" in
 * `--trace-deopt`), so the next import starts unoptimised. Measured on the 10,000-row CSV import
 * after full collections (bench/scenario.ts `--paired`, 2026-11-30, six processes each way,
 * alternated three at a time): the import's CPU time 100–117 ms with this writer kept, 124–159 ms
 * without.
 */
export const KEEP_WRITER_SHAPE: unknown = new TableWriter(null as unknown as Excel.RequestContext, {} as TableWriterOptions);
