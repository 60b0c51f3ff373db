/**
 * Writing a large rectangle of cells in row blocks that fit Excel's request payload limit.
 *
 * Excel on the web rejects a request over 5 MB with `RequestPayloadSizeLimitExceeded`; the whole
 * request is refused, so nothing of it was applied. Blocks are sized from the measured JSON size of
 * a sample of rows to stay under a target (4 MB by default), and a refused block is halved and
 * retried together with its prelude (the small idempotent operations queued before it).
 */

/** Default target size of one request. Leaves a margin under the 5 MB limit for estimation error. */
export const DEFAULT_TARGET_REQUEST_BYTES = 4_000_000;

/**
 * Request bytes one small write costs besides its values: Microsoft's client library sends, for each
 * range an operation reaches, an object path (`getRangeByIndexes` and its arguments), Instantiate
 * actions, the `_KeepReference` of a tracked object and the SetProperty or Method action itself —
 * about 450 bytes of the request body measured with the pinned @microsoft/office-js (a 1 × 8 write:
 * 483 bytes of which 41 are values), more as action ids grow. Used to size batches of many small
 * writes (a delta's changed cells) so the real request stays under the target.
 */
export const RANGE_WRITE_OVERHEAD_BYTES = 560;
/** The same for `copyFrom` (two ranges and the method): about 860 bytes measured. */
export const RANGE_COPY_OVERHEAD_BYTES = 1_000;

/**
 * Rows in the FIRST value block, whatever the byte estimate allows. Microsoft's large-range guidance
 * ("Read or write to a large range": split into row blocks, "start with 5k–20k rows", retry smaller on a
 * limit error) is followed at its cautious end, because Excel on the web refuses some requests far
 * under 5 MB with a bare GeneralException (office-js #1012, #1314; office-js-docs-reference #354:
 * 2,000 × 10 cells). After each accepted block the next may double, up to the byte target, so a large
 * table costs only a few more syncs; after a refusal it never grows again.
 */
export const FIRST_BLOCK_ROWS = 5_000;

/** Error codes raised by the writer. */
export type WriteErrorCode =
  | "invalid_table"
  | "cell_too_long"
  | "too_many_rows"
  | "too_many_columns"
  | "occupied"
  | "payload_too_large"
  | "cancelled"
  | "table_missing"
  | "table_changed"
  | "table_busy"
  | "adjacent_table"
  | "name_taken"
  | "settings_full"
  | "selection_invalid"
  | "no_changes"
  | "lock_lost"
  | "changed_during_refresh"
  /** Issue #35: the sheet or the workbook's structure is protected (`protection.ts`); nothing was written. */
  | "protected"
  | "write_failed";

/** The writer's one error type: a machine `code` and a message for the person reading it. */
export class WriteError extends Error {
  constructor(
    readonly code: WriteErrorCode,
    message: string,
    readonly details: { rowsWritten?: number; address?: string; cause?: unknown; holder?: string; lockedUntil?: string; sheet?: string; protection?: "sheet" | "structure" } = {},
  ) {
    super(message);
    this.name = code === "cancelled" ? "AbortError" : "WriteError";
  }
}

/** True for Excel's payload-limit error (code as Office reports it). */
export function isPayloadTooLarge(err: unknown): boolean {
  return !!err && typeof err === "object" && (err as { code?: unknown }).code === "RequestPayloadSizeLimitExceeded";
}

/**
 * True for an error that may mean "request too large": the documented code, or the GeneralException
 * (HTTP 500, "An internal error has occurred") Excel on the web often answers instead (office-js #1012,
 * #1314). Either way the refused request applied nothing, so a smaller block is safe to try.
 */
export function maybeTooLarge(err: unknown): boolean {
  return isPayloadTooLarge(err) || (!!err && typeof err === "object" && (err as { code?: unknown }).code === "GeneralException");
}

/**
 * Sends one write request of `items` rows or writes. True when Excel took it; false when it was
 * refused for its size and holds more than one item (the refused request applied nothing, so the
 * caller sends the same items again in halves). One item refused with the documented code is
 * `tooLarge`; a GeneralException on one item is not about size and is thrown as it is, as is every
 * other error.
 */
export async function syncOrSplit(context: { sync(): Promise<unknown> }, items: number, tooLarge: (cause: unknown) => WriteError): Promise<boolean> {
  try {
    await context.sync();
    return true;
  } catch (err) {
    if (!maybeTooLarge(err)) throw err;
    if (items > 1) return false;
    if (!isPayloadTooLarge(err)) throw err;
    throw tooLarge(err);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined, rowsWritten: number, totalRows: number): void {
  if (signal?.aborted) {
    throw new WriteError("cancelled", `Cancelled after ${rowsWritten.toLocaleString("en-US")} of ${totalRows.toLocaleString("en-US")} rows.`, { rowsWritten });
  }
}

export interface BlockSource {
  total: number;
  /** Cell values (or formulas) of rows [from, to), each row exactly `width` long. */
  get(from: number, to: number): unknown[][];
}

export interface BlockWriteOptions {
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  /** Which range property receives the block. */
  property?: "values" | "formulas";
  /**
   * Small idempotent operations queued before the first block (re-queued if that request is refused),
   * so they share the first block's request instead of costing their own `sync`.
   */
  prelude?: () => void;
  /** Called before every block's `sync` (e.g. to suspend calculation until that sync). */
  beforeSync?: () => void;
  /** Awaited before each block is queued (e.g. the table lock's ownership check, issue #21). */
  beforeBlock?: () => Promise<void>;
}

/** Measured JSON bytes per row over a sample spread through the rows, with a small margin. */
const utf8 = new TextEncoder();

export function bytesPerRow(src: BlockSource, from: number): number {
  const remaining = src.total - from;
  if (remaining <= 0) return 1;
  const SAMPLE = 64;
  let bytes = 0;
  let rows = 0;
  const step = Math.max(1, Math.floor(remaining / 4));
  // Four short runs spread through the rest, so a table whose long texts sit at the end is not underestimated.
  for (let start = from; start < src.total && rows < SAMPLE * 4; start += step) {
    const end = Math.min(src.total, start + SAMPLE);
    const sample = src.get(start, end);
    // TextEncoder, not Node's Buffer: this runs in the task pane's webview.
    bytes += utf8.encode(JSON.stringify(sample)).length;
    rows += end - start;
  }
  return Math.max(1, Math.ceil((bytes / rows) * 1.05));
}

/** A string whose JSON is its own characters between two quotes, one byte each (printable ASCII, no `"` or `\\`). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * An upper bound of the request bytes one row's values take in the JSON Microsoft's library sends
 * (`[a,b,…],` in UTF-8): a plain string its length plus its quotes; any other string counted character
 * by character (an escaped control character 6, `"` and `\` 2, UTF-8's 1–3 bytes, a surrogate pair 4,
 * a lone surrogate 6 as `JSON.stringify` escapes it); a number at most 24 (`-1.2345678901234567e-308`);
 * `false` 5. Review of #38 (R1): blocks are cut by the sum of their rows' bytes, so a long text that
 * arrives late, or that a sample missed, can never make a request larger than its target.
 */
export function rowJsonBytes(row: readonly unknown[], width: number): number {
  // `[`, `]`, the commas between the cells and the one after the row in the block's array.
  let bytes = 2 + width;
  for (let c = 0; c < width; c++) {
    const v = row[c];
    if (typeof v === "string") bytes += (PLAIN.test(v) ? v.length : textJsonBytes(v)) + 2;
    else if (typeof v === "number") bytes += numberJsonBytes(v);
    else bytes += 5;
  }
  return bytes;
}

/**
 * Request bytes Microsoft's library adds per cell of a large `values` write, besides the values' JSON:
 * it splits such an array into pieces of about 1,500 cells, or a row when a row is longer
 * (`_ValidateArraySize`, then a `GetRow`/`GetBoundingRect` path and a SetProperty per piece, ~860 bytes
 * each). Measured with the pinned @microsoft/office-js: 12 columns 0.62 bytes a cell, 100 columns 0.57,
 * 3,000 columns 0.28. Counted at 0.7.
 */
export const VALUE_PIECE_BYTES_PER_CELL = 0.7;

/** {@link rowJsonBytes} plus the library's pieces ({@link VALUE_PIECE_BYTES_PER_CELL}): what a row adds to a request. */
export function rowRequestBytes(row: readonly unknown[], width: number): number {
  return rowJsonBytes(row, width) + Math.ceil(width * VALUE_PIECE_BYTES_PER_CELL);
}

/** 10^0 … 10^16. */
const POW10 = Array.from({ length: 17 }, (_, k) => 10 ** k);

/**
 * An upper bound of the characters of `JSON.stringify(v)`, without building it (a `String()` per
 * number was too dear at a million rows): a safe integer's digits exactly; a fraction with at most six
 * decimals, proven by `m / 10^k === v` (the double nearest `m / 10^k` is `v`, so `v`'s shortest text
 * is no longer than those digits); anything else 26 (17 significant digits, a sign, a point, six
 * leading zeros or an exponent).
 */
function numberJsonBytes(v: number): number {
  const sign = v < 0 ? 1 : 0;
  const a = sign ? -v : v;
  if (a < 1e15) {
    const whole = Math.floor(a);
    let digits = 1;
    while (whole >= POW10[digits]) digits++;
    if (whole === a) return sign + digits;
    for (let k = 1; k <= 6; k++) {
      const m = a * POW10[k];
      if (Number.isInteger(m) && m / POW10[k] === a) return sign + digits + 1 + k;
    }
  }
  return 26;
}

function textJsonBytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x20) n += 6;
    else if (u === 0x22 || u === 0x5c) n += 2;
    else if (u < 0x80) n += 1;
    else if (u < 0x800) n += 2;
    else if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else if ((u & 0xf800) === 0xd800) n += 6;
    else n += 3;
  }
  return n;
}

/**
 * Writes `src.total` rows into the ranges `rangeAt(from, count)` returns, one `sync` per block.
 * Checks the signal between blocks. Returns the number of `sync` calls it made.
 * @throws WriteError `cancelled` (rowsWritten says how far it got), `payload_too_large` when a single row is refused.
 */
export async function writeInBlocks(
  context: { sync(): Promise<unknown> },
  rangeAt: (from: number, count: number) => { values: unknown; formulas: unknown },
  src: BlockSource,
  options: BlockWriteOptions = {},
): Promise<{ syncs: number; blocks: number; shrinks: number }> {
  const target = options.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES;
  const prop = options.property ?? "values";
  let prelude = options.prelude;
  let syncs = 0, blocks = 0, shrinks = 0;
  let from = 0;
  const byBytes = Math.max(1, Math.floor(target / bytesPerRow(src, 0)));
  let perBlock = Math.min(byBytes, FIRST_BLOCK_ROWS);
  let mayGrow = true;
  while (from < src.total) {
    throwIfAborted(options.signal, from, src.total);
    await options.beforeBlock?.();
    const count = Math.min(perBlock, src.total - from);
    const values = src.get(from, from + count);
    prelude?.();
    (rangeAt(from, count) as Record<string, unknown>)[prop] = values;
    options.beforeSync?.();
    syncs++;
    // One sync per row block is the point: each request must stay under Excel's 5 MB payload limit.
    if (!(await syncOrSplit(context, count, (cause) => new WriteError("payload_too_large", `Row ${from + 1} alone is larger than Excel accepts in one request.`, { rowsWritten: from, cause })))) {
      // The refused request applied nothing: retry the same rows (and prelude) in smaller blocks.
      perBlock = Math.ceil(count / 2);
      mayGrow = false;
      shrinks++;
      continue;
    }
    prelude = undefined;
    blocks++;
    from += count;
    if (mayGrow) perBlock = Math.min(byBytes, perBlock * 2);
    options.onProgress?.(from, src.total);
  }
  if (prelude) {
    // Nothing to write, but the prelude still has to reach the workbook.
    await options.beforeBlock?.();
    prelude();
    options.beforeSync?.();
    syncs++;
    await context.sync();
  }
  return { syncs, blocks, shrinks };
}

/** Default target size of one response when reading blocks back (Excel on the web limits responses to 5 MB too). */
export const DEFAULT_TARGET_RESPONSE_BYTES = 4_000_000;

/**
 * Cells in the FIRST block of a read whose cell sizes are unknown (a probe): 25 cells stay under 5 MB
 * whatever they hold (32,767 characters, each at most 6 bytes of JSON: `\u0001`); every later block is
 * sized from the bytes per row the blocks before it measured, aimed at the response target.
 */
export const FIRST_READ_BLOCK_CELLS = 25;

/** True for Excel's response-size error. */
export function isResponseTooLarge(err: unknown): boolean {
  return !!err && typeof err === "object" && (err as { code?: unknown }).code === "ResponsePayloadSizeLimitExceeded";
}

type BlockRange = { load(p: string): unknown; values: unknown[][]; formulas: unknown[][]; numberFormat: unknown[][] };

/** UTF-8 bytes of a block as it crossed the wire (JSON). */
export function jsonBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value)).length;
}

export interface ReadOptions {
  /** Response bytes each block aims at (default 4 MB, under Excel on the web's 5 MB). */
  targetResponseBytes?: number;
  /** Awaited before each block is queued (e.g. the table lock's ownership check). */
  beforeBlock?: () => Promise<void>;
}

type CellProperty = "values" | "formulas" | "numberFormat" | "valueTypes" | "text";

/**
 * Reads `total` rows of one or more range properties in row blocks sized BY BYTES (issue #21, item 9):
 * the first block holds at most `firstBlockRows` rows; every block's response is measured and the next
 * one is sized to the target from the largest bytes per row seen so far. A block Excel refuses
 * (`ResponsePayloadSizeLimitExceeded`), or whose cells come back `null` (a range over five million
 * cells, office-js #4783), is halved and read again. `visit` gets each block's rows per property and
 * the index of its first row, and stops the reading by returning true.
 */
export async function visitPropertiesInBlocks<P extends CellProperty>(
  context: { sync(): Promise<unknown> },
  rangeAt: (from: number, count: number) => { load(p: string): unknown },
  total: number,
  properties: readonly P[],
  firstBlockRows: number,
  visit: (rows: Record<P, unknown[][]>, from: number) => boolean | void,
  options: ReadOptions = {},
): Promise<{ blocks: number; largestResponse: number }> {
  const target = options.targetResponseBytes ?? DEFAULT_TARGET_RESPONSE_BYTES;
  let perBlock = Math.max(1, firstBlockRows);
  let from = 0;
  let bytesPerRow = 0;
  let blocks = 0;
  let largest = 0;
  while (from < total) {
    await options.beforeBlock?.();
    const count = Math.min(perBlock, total - from);
    const range = rangeAt(from, count);
    range.load(properties.join(","));
    try {
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one sync per row block is the point: each response must stay under Excel's 5 MB payload limit
      await context.sync();
    } catch (err) {
      if (isResponseTooLarge(err) && count > 1) {
        perBlock = Math.ceil(count / 2);
        continue;
      }
      throw err;
    }
    const got = {} as Record<P, unknown[][]>;
    let missing = false;
    for (const p of properties) {
      const rows = (range as unknown as Record<string, unknown[][] | null | undefined>)[p];
      if (rows === null || rows === undefined) missing = true;
      else got[p] = rows;
    }
    if (missing) {
      // Excel answers null instead of the cells of a range over its get limit.
      if (count > 1) {
        perBlock = Math.ceil(count / 2);
        continue;
      }
      throw new WriteError("write_failed", `Excel returned no ${properties.join("/")} for row ${from + 1} (a row over its read limit).`);
    }
    blocks++;
    const bytes = jsonBytes(got);
    largest = Math.max(largest, bytes);
    bytesPerRow = Math.max(bytesPerRow, bytes / count);
    if (visit(got, from) === true) return { blocks, largestResponse: largest };
    from += count;
    perBlock = Math.max(1, Math.floor(target / Math.max(1, bytesPerRow * 1.1)));
  }
  return { blocks, largestResponse: largest };
}

/** {@link visitPropertiesInBlocks} for one property. */
export function visitInBlocks(
  context: { sync(): Promise<unknown> },
  rangeAt: (from: number, count: number) => BlockRange,
  total: number,
  property: "values" | "formulas" | "numberFormat",
  firstBlockRows: number,
  visit: (rows: unknown[][], from: number) => boolean | void,
  options: ReadOptions = {},
): Promise<{ blocks: number; largestResponse: number }> {
  return visitPropertiesInBlocks(context, rangeAt, total, [property], firstBlockRows, (rows, from) => visit(rows[property], from), options);
}

/** Every row of some properties of a range, read in blocks by bytes (first block: a probe of {@link FIRST_READ_BLOCK_CELLS} cells). */
export async function loadPropertiesInBlocks<P extends CellProperty>(
  context: { sync(): Promise<unknown> },
  rangeAt: (from: number, count: number) => { load(p: string): unknown },
  total: number,
  columns: number,
  properties: readonly P[],
  options: ReadOptions = {},
): Promise<Record<P, unknown[][]>> {
  const out = Object.fromEntries(properties.map((p) => [p, [] as unknown[][]])) as Record<P, unknown[][]>;
  await visitPropertiesInBlocks(context, rangeAt, total, properties, firstReadRows(columns * properties.length), (rows) => {
    for (const p of properties) for (const row of rows[p]) out[p].push(row);
  }, options);
  return out;
}

/** Rows of a first read block of `columns` cells per row (see {@link FIRST_READ_BLOCK_CELLS}). */
export function firstReadRows(columns: number): number {
  return Math.max(1, Math.floor(FIRST_READ_BLOCK_CELLS / Math.max(1, columns)));
}

/**
 * Reads `total` rows of one range property in row blocks sized by bytes ({@link visitInBlocks}).
 * @param bytesPerRow estimated response bytes of one row (caps the first block below {@link firstReadRows}).
 */
export async function loadInBlocks(
  context: { sync(): Promise<unknown> },
  rangeAt: (from: number, count: number) => BlockRange,
  total: number,
  property: "values" | "formulas" | "numberFormat",
  bytesPerRow: number,
  targetResponseBytes = DEFAULT_TARGET_RESPONSE_BYTES,
  options: Omit<ReadOptions, "targetResponseBytes"> & { columns?: number } = {},
): Promise<unknown[][]> {
  const out: unknown[][] = [];
  const byEstimate = Math.max(1, Math.floor(targetResponseBytes / Math.max(1, bytesPerRow)));
  const firstBlockRows = options.columns ? Math.min(byEstimate, firstReadRows(options.columns)) : byEstimate;
  await visitInBlocks(context, rangeAt, total, property, firstBlockRows, (rows) => {
    for (const row of rows) out.push(row);
  }, { ...options, targetResponseBytes });
  return out;
}

/** One queued operation of a batched write: its request bytes and how to queue it (again). */
export interface QueuedWrite {
  bytes: number;
  queue(): void;
}

/**
 * Sends many small writes (a delta's changed cells, issue #21 item 8) in requests of at most
 * `targetRequestBytes`, measured from each write's JSON. A request Excel refuses for its size (the
 * documented code, or the web's GeneralException) applied nothing: it is split in two and sent again;
 * one write refused alone fails with `payload_too_large`.
 */
export async function writeInBatches(
  context: { sync(): Promise<unknown> },
  writes: readonly QueuedWrite[],
  options: { targetRequestBytes?: number; signal?: AbortSignal; beforeBlock?: () => Promise<void>; beforeSync?: () => void; onBatch?: (done: number) => void } = {},
): Promise<{ syncs: number; largestRequest: number }> {
  const target = options.targetRequestBytes ?? DEFAULT_TARGET_REQUEST_BYTES;
  let syncs = 0;
  let largest = 0;
  let i = 0;
  let cap = Infinity; // after a refusal, batches stay at most this many writes
  while (i < writes.length) {
    throwIfAborted(options.signal, i, writes.length);
    await options.beforeBlock?.();
    let bytes = 0;
    let j = i;
    while (j < writes.length && j - i < cap && (j === i || bytes + writes[j].bytes <= target)) bytes += writes[j++].bytes;
    for (let k = i; k < j; k++) writes[k].queue();
    options.beforeSync?.();
    syncs++;
    // One sync per batch is the point: each request must stay under Excel's 5 MB payload limit.
    if (!(await syncOrSplit(context, j - i, (cause) => new WriteError("payload_too_large", "A change is larger than Excel accepts in one request.", { cause })))) {
      cap = Math.ceil((j - i) / 2);
      continue;
    }
    largest = Math.max(largest, bytes);
    i = j;
    options.onBatch?.(i);
  }
  return { syncs, largestRequest: largest };
}

/** The message of an Office or other error, without assuming its shape. */
export function errorText(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; message?: unknown };
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- an error of unknown shape without a message: its own toString, if it has one, is the best text there is
    const msg = typeof e.message === "string" ? e.message : String(err);
    return typeof e.code === "string" && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
  }
  return String(err);
}
