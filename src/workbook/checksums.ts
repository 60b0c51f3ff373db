/**
 * Excel proves which blocks of a table hold what the add-in thinks they hold (issue #24, item 3;
 * README "Delta refresh").
 *
 * The delta refresh must never keep a value the user typed over, cleared or replaced with a formula,
 * and it used to prove that by reading the whole table back (as many bytes as the table itself). Now
 * every write leaves, per block of rows, a live formula that Excel itself keeps calculating from the
 * table's data cells — a checksum of every character (code × a position weight), the text's length,
 * which cells are text and which are formulas, and where the block is. At the next refresh the add-in
 * works out what each block should hold (old rows matched to new rows by their fingerprints, the other
 * old rows gathered from Excel), computes the checksum that content would have (`predictChecksum`,
 * the same integer arithmetic) and reads the block formulas, calculated now (`application.calculate`,
 * so manual mode or suspended API calculation cannot answer stale values). Equal: the block holds
 * exactly that, nothing of it is read. Different (an edit by the user, a wrong match, a number whose
 * text cannot be predicted): the block is read back as formulas. So nothing is ever kept on trust;
 * a wrong answer needs a checksum collision of two different block contents.
 *
 * Storage: a very hidden sheet per binding, `ppm_c_` + a 7-character hash of the binding id (no slot
 * shared with other bindings, so two runtimes refreshing two tables never write the same cells):
 * `A1` the binding id, `A2` the state (JSON: table geometry, rows per block, blocks), `B1…Bn` one
 * formula per block, and columns C… a scratch area (the short fingerprints and the gathered rows are
 * calculated there and cleared). A state that does not match the table (moved, resized, other
 * columns) is not used: the whole table is read, as before.
 *
 * The formula of one block (R rows × W columns, `blk` its absolute address on the table's sheet):
 *   =LET(blk,'Sheet'!$A$2:$L$151, txt,TEXTJOIN("|",FALSE,blk), pos,SEQUENCE(LEN(txt)),
 *        SUM(UNICODE(MID(txt,pos,1))*(MOD(pos*pos,65521)+pos)) + LEN(txt)*1000003
 *        + SUM(ISTEXT(blk)*(ROW(blk)*16384+COLUMN(blk)))*7 + SUM(ISFORMULA(blk)*(ROW(blk)*16384+COLUMN(blk)))*11)
 * Every term is an integer below 2^53, so Excel's doubles add it exactly. A changed character changes
 * its term by (code difference × weight), never 0; a swap of two characters or cells changes the
 * non-linear weights; a number typed over text of the same digits changes the ISTEXT term; any
 * formula changes the ISFORMULA term; a cleared cell changes the text's length; the block moved or
 * resized changes ROW/COLUMN. An error anywhere in the block (including a `#VALUE!` from text over
 * TEXTJOIN's 32,767 characters or a character outside the BMP split by MID) makes the checksum an
 * error, which never equals a stored number: such a block is always read (correct, only dearer).
 * Rows per block: as many as keep the joined text under 24,000 characters (numbers counted at 24),
 * at most 4,096 cells (so the ISTEXT/ISFORMULA terms stay exact), at least 2.
 *
 * Cost in Excel: one formula per block, each looking at its own ≈ 24,000 characters; a user edit
 * recalculates only the block it touches. A full recalculation of a 200,000 × 12 table's 1,334
 * formulas handles ≈ 40 million characters (an estimate of about a second in desktop Excel; not
 * measured here, there is no Excel on this machine). The saved file grows by the formulas' text
 * (≈ 330 bytes per block, ≈ 0.4 MB for 200,000 × 12; `npm run bench` prints the share).
 */
import { rowHash } from "../refresh/rowHash";
import { columnLetters } from "./names";
import { loadInBlocks, RANGE_WRITE_OVERHEAD_BYTES, writeInBatches, type QueuedWrite } from "./blocks";
import { queueUntracked } from "./untracked";
import { queueDeleteHiddenSheet } from "./slots";

export const CHECK_SHEET_PREFIX = "ppm_c_";
const STATE_VERSION = 2;
/** Characters of joined text a block aims at (TEXTJOIN refuses more than 32,767). */
const BLOCK_TEXT = 24_000;
const BLOCK_CELLS = 4_096;

/** Where the table's data cells are: body rows `top … top+rows-1`, columns `left … left+width-1` (0-based). */
export interface ChecksGeometry {
  sheet: string;
  top: number;
  left: number;
  width: number;
  rows: number;
}

interface ChecksState {
  v: number;
  g: ChecksGeometry;
  /** Rows per block. */
  r: number;
  /** Blocks. */
  n: number;
}

/** The sheet holding a binding's checksums. */
export function checkSheetName(bindingId: string): string {
  return CHECK_SHEET_PREFIX + rowHash([bindingId]);
}

/** Characters a row adds to a block's joined text (numbers counted at 24, separators included). */
export function rowChars(row: readonly unknown[], width: number): number {
  let chars = width;
  for (let c = 0; c < width; c++) {
    const v = row[c];
    chars += typeof v === "string" ? v.length : v === null || v === undefined ? 0 : 24;
  }
  return chars;
}

/** Rows per block when the longest row adds `longest` characters (the joined text stays under {@link BLOCK_TEXT}). */
export function blockRows(longest: number, width: number): number {
  return Math.max(2, Math.min(Math.floor(BLOCK_TEXT / Math.max(1, longest)), Math.floor(BLOCK_CELLS / Math.max(1, width))));
}

/** Rows per block for these rows (the joined text of a block stays under {@link BLOCK_TEXT}). */
export function rowsPerBlock(rows: readonly (readonly unknown[])[], width: number): number {
  let longest = 1;
  for (const row of rows) longest = Math.max(longest, rowChars(row, width));
  return blockRows(longest, width);
}

/**
 * A number as Excel writes it into text inside a formula: at most 15 significant digits, trailing
 * zeros dropped (`=1/3&""` is 0.333333333333333; docs: "Excel specifications and limits", number
 * precision 15 digits). Null where Excel would use scientific notation (its exact threshold there is
 * not documented): the block is then read, never guessed. (The emulator's TEXTJOIN writes numbers
 * the same way: src/emulator/values.ts numberText; the two must not import each other.)
 */
export function excelNumberText(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  const s = String(Number(n.toPrecision(15)));
  return /e/i.test(s) ? null : s;
}

/**
 * The value the block formula ({@link checksumFormula}) has when rows `from … from+rows.length-1`
 * hold exactly `rows` (values, no formulas), computed here with the same integer arithmetic; null
 * when it cannot be predicted (a number Excel may write in scientific notation, a character outside
 * the BMP that MID splits, text over TEXTJOIN's limit): such a block is read.
 */
export function predictChecksum(g: ChecksGeometry, from: number, rows: readonly (readonly unknown[])[]): number | null {
  const parts: string[] = [];
  let where = 0;
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < g.width; c++) {
      const v = rows[r][c];
      let t: string | null;
      if (v === null || v === undefined || v === "") t = "";
      else if (typeof v === "string") {
        t = v;
        where += (g.top + from + r + 1) * 16384 + (g.left + c + 1);
      } else if (typeof v === "number") t = excelNumberText(v);
      else if (typeof v === "boolean") t = v ? "TRUE" : "FALSE";
      else t = null;
      if (t === null) return null;
      parts.push(t);
    }
  }
  const txt = parts.join("|");
  if (txt.length === 0 || txt.length > 32767) return null;
  let sum = 0;
  for (let p = 1; p <= txt.length; p++) {
    const code = txt.charCodeAt(p - 1);
    if (code >= 0xd800 && code <= 0xdfff) return null;
    sum += code * (((p * p) % 65521) + p);
  }
  return sum + txt.length * 1000003 + where * 7;
}

function quoteSheet(name: string): string {
  return `'${name.replace(/'/g, "''")}'`;
}

/** `'Sheet'!$A$2:$L$151` for rows `from … from+count-1` of the body. */
function absolute(g: ChecksGeometry, from: number, count: number): string {
  const l = columnLetters(g.left), r = columnLetters(g.left + g.width - 1);
  return `${quoteSheet(g.sheet)}!$${l}$${g.top + from + 1}:$${r}$${g.top + from + count}`;
}

/** The checksum formula of one block (see the module comment). */
export function checksumFormula(g: ChecksGeometry, from: number, count: number): string {
  const where = "(ROW(blk)*16384+COLUMN(blk))";
  return `=LET(blk,${absolute(g, from, count)},txt,TEXTJOIN("|",FALSE,blk),pos,SEQUENCE(LEN(txt)),SUM(UNICODE(MID(txt,pos,1))*(MOD(pos*pos,65521)+pos))+LEN(txt)*1000003+SUM(ISTEXT(blk)*${where})*7+SUM(ISFORMULA(blk)*${where})*11)`;
}

function sameGeometry(a: ChecksGeometry, b: ChecksGeometry): boolean {
  return a.sheet === b.sheet && a.top === b.top && a.left === b.left && a.width === b.width && a.rows === b.rows;
}

function parseState(text: unknown): ChecksState | null {
  if (typeof text !== "string" || !text.startsWith("{")) return null;
  try {
    const s = JSON.parse(text) as ChecksState;
    const int = (x: unknown) => typeof x === "number" && Number.isInteger(x) && x >= 0;
    if (s.v !== STATE_VERSION || !s.g || typeof s.g.sheet !== "string" || ![s.g.top, s.g.left, s.g.width, s.g.rows, s.r, s.n].every(int)) return null;
    if (s.r < 1 || s.n !== Math.ceil(s.g.rows / s.r)) return null;
    return s;
  } catch {
    return null;
  }
}

/** What a refresh learns from the checksums: each block's current value, calculated by Excel now. */
export interface ChecksReading {
  sheet: Excel.Worksheet;
  /** Rows per block. */
  rowsPerBlock: number;
  /** Each block's checksum now; null for an error (such a block is always read). */
  current: Array<number | null>;
}

async function openSheet(context: Excel.RequestContext, bindingId: string): Promise<Excel.Worksheet | null> {
  const sheet = context.workbook.worksheets.getItemOrNullObject(checkSheetName(bindingId));
  sheet.load("visibility");
  await context.sync();
  // A visible sheet of that name is the user's: never read or written.
  return sheet.isNullObject || sheet.visibility !== "VeryHidden" ? null : sheet;
}

/**
 * Reads the checksums, calculated now (manual mode, or API calculation suspended by an earlier
 * request). Null: nothing usable (no sheet, another binding, another geometry): read everything.
 */
export async function readChecks(context: Excel.RequestContext, bindingId: string, g: ChecksGeometry, targetResponseBytes?: number): Promise<ChecksReading | null> {
  const sheet = await openSheet(context, bindingId);
  if (!sheet) return null;
  const head = sheet.getRange("A1:A2");
  head.load("values");
  await context.sync();
  const state = parseState(head.values[1][0]);
  if (head.values[0][0] !== bindingId || !state || !sameGeometry(state.g, g)) return null;
  context.application.calculate("Recalculate" as Excel.CalculationType);
  const current = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(from, 1, count, 1), state.n, "values", 24, targetResponseBytes, { columns: 1 });
  return { sheet, rowsPerBlock: state.r, current: current.map((r) => (typeof r[0] === "number" ? r[0] : null)) };
}

/**
 * The blocks of an earlier reading, calculated again now: a block whose value moved since was
 * changed in between (a co-author's edit, insert, delete or sort reaching this copy; issue #26).
 */
export async function recheck(
  context: Excel.RequestContext,
  reading: ChecksReading,
  table: Excel.Table,
  targetResponseBytes?: number,
): Promise<{ blocks: Array<number | null>; table: { rowIndex: number; columnIndex: number; rowCount: number; columnCount: number } }> {
  // The table's address with the recalculation, then the block values.
  context.application.calculate("Recalculate" as Excel.CalculationType);
  const range = table.getRange();
  range.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
  await context.sync();
  const at = { rowIndex: range.rowIndex, columnIndex: range.columnIndex, rowCount: range.rowCount, columnCount: range.columnCount };
  const current = await loadInBlocks(context, (from, count) => reading.sheet.getRangeByIndexes(from, 1, count, 1), reading.current.length, "values", 24, targetResponseBytes, { columns: 1 });
  return { blocks: current.map((r) => (typeof r[0] === "number" ? r[0] : null)), table: at };
}

/**
 * After a commit: makes the block formulas match the table as written (only those that changed are
 * written: the blocks from the old end on when only the row count changed), calculates them and
 * stores their values with the fingerprints' digest. Any failure leaves the state unusable (the
 * next refresh reads the table), never wrong: the state is written last.
 */
export async function storeChecks(
  context: Excel.RequestContext,
  bindingId: string,
  g: ChecksGeometry,
  /** The rows as written, or only the characters the longest of them adds (all the block size needs). */
  rows: readonly (readonly unknown[])[] | { longestRowChars: number },
  targetRequestBytes?: number,
): Promise<number> {
  const { writes, syncs } = await prepareChecks(context, bindingId, g, rows, queueChecksProbe(context, bindingId), false);
  return syncs + (await writeInBatches(context, writes, { targetRequestBytes })).syncs;
}

/** Queues the look-up of a binding's checksum sheet, to ride along another request (see {@link prepareChecks}). */
export function queueChecksProbe(context: Excel.RequestContext, bindingId: string): Excel.Worksheet {
  const sheet = context.workbook.worksheets.getItemOrNullObject(checkSheetName(bindingId));
  sheet.load("visibility");
  return sheet;
}

/**
 * The writes that make the block formulas match the table as written (see {@link storeChecks}),
 * without sending them, so that an import sends them in the fingerprints' request (issue #24: the
 * import's request count). `probe` comes from {@link queueChecksProbe}; `probed` says whether a sync
 * has answered it already. Only a sheet that exists costs a read (its head and used rows).
 */
export async function prepareChecks(
  context: Excel.RequestContext,
  bindingId: string,
  g: ChecksGeometry,
  rows: readonly (readonly unknown[])[] | { longestRowChars: number },
  probe: Excel.Worksheet,
  probed: boolean,
): Promise<{ writes: QueuedWrite[]; syncs: number }> {
  let sheet = probe;
  let syncs = 0;
  if (!probed) {
    await context.sync();
    syncs++;
  }
  let old: ChecksState | null = null;
  let usedRows = 0;
  if (sheet.isNullObject) {
    sheet = context.workbook.worksheets.add(checkSheetName(bindingId));
    sheet.visibility = "VeryHidden";
  } else {
    if (sheet.visibility !== "VeryHidden") return { writes: [], syncs };
    const head = sheet.getRange("A1:A2");
    head.load("values");
    const used = sheet.getUsedRangeOrNullObject(true);
    used.load("rowIndex,rowCount");
    await context.sync();
    syncs++;
    if (head.values[0][0] === bindingId) old = parseState(head.values[1][0]);
    usedRows = used.isNullObject ? 0 : used.rowIndex + used.rowCount;
  }
  const r = g.rows === 0 ? 2 : Array.isArray(rows) ? rowsPerBlock(rows, g.width) : blockRows(Math.max(1, (rows as { longestRowChars: number }).longestRowChars), g.width);
  const n = Math.ceil(g.rows / r);
  // Blocks whose formula text is unchanged keep their formula.
  let first = 0;
  if (old && old.r === r && old.g.sheet === g.sheet && old.g.top === g.top && old.g.left === g.left && old.g.width === g.width) {
    first = Math.max(0, Math.min(old.n, n) - 1);
    if (old.g.rows === g.rows) first = n;
  }
  const s = sheet;
  const writes: QueuedWrite[] = [{ bytes: RANGE_WRITE_OVERHEAD_BYTES + bindingId.length, queue: () => void (s.getRange("A1:A2").values = [[bindingId], [""]]) }];
  const CHUNK = 500;
  for (let b = first; b < n; b += CHUNK) {
    const formulas: string[][] = [];
    for (let k = b; k < Math.min(n, b + CHUNK); k++) formulas.push([checksumFormula(g, k * r, Math.min(r, g.rows - k * r))]);
    const at = b;
    writes.push({ bytes: RANGE_WRITE_OVERHEAD_BYTES + formulas.length * (formulas[0][0].length + 8), queue: () => queueUntracked(context, () => void (s.getRangeByIndexes(at, 1, formulas.length, 1).formulas = formulas)) });
  }
  if (usedRows > n) writes.push({ bytes: RANGE_WRITE_OVERHEAD_BYTES, queue: () => s.getRangeByIndexes(n, 1, usedRows - n, 1).clear("Contents") });
  if (usedRows > 2) writes.push({ bytes: RANGE_WRITE_OVERHEAD_BYTES, queue: () => s.getRangeByIndexes(2, 0, usedRows - 2, 1).clear("Contents") });
  const state: ChecksState = { v: STATE_VERSION, g, r, n };
  // The state last: a failure before it leaves "" (unusable: the next refresh reads the table).
  writes.push({ bytes: RANGE_WRITE_OVERHEAD_BYTES + 400, queue: () => void (s.getRange("A2").values = [[JSON.stringify(state)]]) });
  return { writes, syncs };
}

/**
 * Reads old rows of the table that the checksums prove untouched but no new row matches (changed or
 * removed records) without one request part per row: their row numbers go to the scratch column C
 * and one formula (`INDEX` into the table, the same text in every cell) fills D…, so Excel gathers
 * them into one block that is read as values (a cell of an untouched block holds no formula: the
 * checksum proves it). Empty cells come back as "" (`ISBLANK`), values keep their type.
 */
export async function gatherRows(context: Excel.RequestContext, reading: ChecksReading, g: ChecksGeometry, rows: readonly number[], targetRequestBytes?: number, targetResponseBytes?: number): Promise<unknown[][]> {
  if (rows.length === 0) return [];
  const s = reading.sheet;
  const k = rows.length;
  const indexes = rows.map((r) => [r + 1]);
  const source = absolute(g, 0, g.rows);
  const formula = `=LET(v,INDEX(${source},INDEX($C$1:$C$${k},ROW()),COLUMN()-3),IF(ISBLANK(v),"",v))`;
  const CHUNK = 20_000;
  const writes: QueuedWrite[] = [];
  for (let i = 0; i < k; i += CHUNK) {
    const part = indexes.slice(i, i + CHUNK);
    const at = i;
    writes.push({ bytes: RANGE_WRITE_OVERHEAD_BYTES + part.length * 10, queue: () => void (s.getRangeByIndexes(at, 2, part.length, 1).values = part) });
  }
  writes.push({
    bytes: RANGE_WRITE_OVERHEAD_BYTES + formula.length,
    queue: () => {
      (s.getRangeByIndexes(0, 3, k, g.width) as unknown as { formulas: string }).formulas = formula;
      context.application.calculate("Recalculate" as Excel.CalculationType);
    },
  });
  await writeInBatches(context, writes, { targetRequestBytes });
  try {
    return await loadInBlocks(context, (from, count) => s.getRangeByIndexes(from, 3, count, g.width), k, "values", 16 * g.width, targetResponseBytes, { columns: g.width });
  } finally {
    s.getRangeByIndexes(0, 2, k, 1 + g.width).clear("Contents");
    await context.sync();
  }
}

/**
 * Removes a binding's checksums (its table is no longer bound, or an interrupted refresh left cells
 * they no longer describe). A very hidden sheet cannot be deleted as it is (`queueDeleteHiddenSheet`).
 */
export async function dropChecks(context: Excel.RequestContext, bindingId: string): Promise<void> {
  const sheet = await openSheet(context, bindingId);
  if (!sheet) return;
  queueDeleteHiddenSheet(sheet);
  await context.sync();
}
