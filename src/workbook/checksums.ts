/**
 * Excel proves which blocks of a table hold what the add-in thinks they hold (issue #24, item 3;
 * issue #34: a checksum no ordinary edit fools, in every locale; README "Delta refresh").
 *
 * The delta refresh must never keep a value the user typed over, cleared or replaced with a formula,
 * and it used to prove that by reading the whole table back (as many bytes as the table itself). Now
 * every write leaves, per block of rows, a live formula that Excel itself keeps calculating from the
 * table's data cells. At the next refresh the add-in works out what each block should hold (old rows
 * matched to new rows by their fingerprints, the other old rows gathered from Excel), computes the
 * checksum that content would have (`predictChecksum`, the same integer arithmetic) and reads the block
 * formulas, calculated now (`Range.calculate` on exactly those cells: manual mode, or API calculation
 * suspended by an earlier request, cannot answer stale values, and nothing else is calculated). Equal:
 * the block holds exactly that, nothing of it is read. Different (an edit by the user, a wrong match, a
 * number whose text cannot be predicted): the block is read back. So nothing is kept on trust; a wrong
 * answer needs the checksums of two different block contents to agree.
 *
 * **What is summed: a text that does not depend on the locale.** Each cell becomes a token: empty → "",
 * text → `s` + the text, a number → `n` + its text with a `.` for a decimal point, a logical value →
 * `b1` / `b0`, and `=` in front when the cell holds a formula (an error value makes the whole checksum an
 * error). A number turned into text inside a formula takes the decimal separator Excel uses (a comma in
 * de-DE and fr-FR; a custom one when "Use system separators" is off) and a logical value its name in
 * Excel's language (WAHR, VRAI): the formula therefore asks Excel which separator it writes (the text
 * between the `0` and the `5` of `0.5&""`) and puts `.` back, and names logical values itself. Decided
 * against predicting with `application.cultureInfo`/`decimalSeparator` (ExcelApi 1.11): which of the
 * culture's and the application's separator the conversion uses, and the logical names of every
 * language, would have to be known and kept right in the add-in; asking the conversion itself cannot
 * be wrong, costs one formula's worth of text, and works where ExcelApi 1.11 is missing. The block's
 * text is `firstRow:firstColumn:rows:columns|` and the tokens joined by `|` (TEXTJOIN keeps empty ones):
 * a block that moved or changed size is another text.
 *
 * **The checksum: two independent weighted sums of the characters, each modulo a prime.**
 *   h_i = ( Σ_p  c_p · w_i(p) )  mod P_i,   checksum = h_1 · P_2 + h_2,
 * with c_p the UTF-16 code of the text's p-th character, P_1 = 31,622,743 and P_2 = 31,622,741 (primes
 * below √10¹⁵, so the checksum stays under 10¹⁵: at most 15 significant digits, which every reader of
 * Excel's numbers keeps exactly). The weights are a hash of the position, unrelated between
 * neighbours: u = (p·A_i + B_i) mod Q_i, w_i(p) = 1 + ((u² + C_i) mod R_i), with primes Q_i < 2²⁵ and
 * R_i < P_i − 1 and the constants in {@link CHECKSUM_PARAMETERS} (the square of a residue modulo one
 * prime, reduced modulo another, is not a polynomial in p over either: no small linear relation holds
 * between neighbours, as it did for the old weights p² + p, under which 4300 over 1500 cancelled).
 * **Bound.** Take the weights as independent uniform draws from [1, R_i] (they are a hash; with P
 * shrunk to 1,009 and 10,007 every class of edit went unseen at about 1/P, as random weights would:
 * `test/workbook/checksumProof.test.ts`). Two different block texts differ at some position q; with
 * every other weight fixed, exactly one residue of w_i(q) mod P_i makes h_i equal (the code difference
 * is below P_i, hence invertible), and w_i(q) takes R_i values, all different mod P_i: h_i misses an
 * edit with probability at most 1/R_i, and both sums, whose weights and moduli are independent, with
 * at most 1/(R_1·R_2) ≈ 1.0 × 10⁻¹⁵ per edited block (≈ 1.3 × 10⁻¹² for a refresh in which all 1,334
 * blocks of a 200,000 × 12 table were edited). Without any model: a change of one character (one digit
 * typed over another, a letter's case) is always seen by both sums (its weight is not 0 mod P_i and the
 * code difference is below P_i). What the sums see of a number is its text: its 15 significant digits
 * (Excel's precision; no typing changes a digit beyond them). The proof is attacked directly: every
 * single-cell overwrite among a block's first 64 characters by every integer 0–9,999 and 200 texts and
 * dates, and 1,000,000 random edits of 1–3 cells, are all seen (`checksumProof.test.ts`).
 * **Exact in Excel.** Every intermediate is an integer below 2⁵³ and every MOD's quotient below 2²⁶
 * (MOD(n, d) = n − d·INT(n/d), docs: MOD function; exact there): p·A_i + B_i < 2⁴⁰ (a SEQUENCE from
 * A_i + B_i by A_i); u² + C_i < 2⁵¹; c·w_i < 2⁴⁶ (a code point above the BMP, if MID counts surrogate
 * pairs as one character: compatibility version 2); each sum < 2⁴⁰; h_1·P_2 + h_2 < 10¹⁵. Only SUM and
 * MOD of non-negative integers, no subtraction to near zero (Excel's 15-digit rounding of near-zero
 * differences cannot apply).
 * An error anywhere in the block (an error value, a text over TEXTJOIN's 32,767 characters, a
 * character outside the BMP split by MID) makes the checksum an error, which never equals a stored
 * number: such a block is always read (correct, only dearer).
 *
 * Storage: a very hidden sheet per binding, `ppm_c_` + a 7-character hash of the binding id (no slot
 * shared with other bindings, so two runtimes refreshing two tables never write the same cells):
 * `A1` the binding id, `A2` the state (JSON: table geometry, rows per block, blocks), `B1…Bn` one
 * formula per block, and columns C… a scratch area (the short fingerprints and the gathered rows are
 * calculated there and cleared). A state that does not match the table (moved, resized, other
 * columns, or written by an older version) is not used: the whole table is read, as before.
 * Rows per block: as many as keep the joined text under 24,000 characters (numbers counted at 25),
 * at least 2.
 *
 * Cost in Excel: one formula per block, each looking at its own ≈ 24,000 characters (about twenty
 * array operations over them); a user edit recalculates only the block it touches. A full
 * recalculation of a 200,000 × 12 table's 1,334 formulas handles ≈ 40 million characters (an estimate
 * of a second or two in desktop Excel; not measured here, there is no Excel on this machine). The
 * saved file grows by the formulas' text (≈ 800 bytes per block, ≈ 1 MB for 200,000 × 12;
 * `npm run bench` prints the share).
 */
import { rowHash } from "../refresh/rowHash";
import { columnLetters } from "./names";
import { loadInBlocks, RANGE_WRITE_OVERHEAD_BYTES, writeInBatches, type QueuedWrite } from "./blocks";
import { queueUntracked } from "./untracked";
import { queueDeleteHiddenSheet } from "./slots";

export const CHECK_SHEET_PREFIX = "ppm_c_";
/** 3: the locale-independent two-sum checksum of issue #34 (a state of version 2 describes the old formulas: not used). */
const STATE_VERSION = 3;
/** Characters of joined text a block aims at (TEXTJOIN refuses more than 32,767). */
const BLOCK_TEXT = 24_000;

/** One sum: modulus P; position hash u = (p·A + B) mod Q, w = 1 + ((u² + C) mod R), with R < P − 1. */
export interface SumParameters {
  readonly P: number;
  readonly Q: number;
  readonly R: number;
  readonly A: number;
  readonly B: number;
  readonly C: number;
}

/** The two sums' moduli (primes below √10¹⁵) and the constants of their position hashes (see the module comment). */
export const CHECKSUM_PARAMETERS: { readonly sums: readonly [SumParameters, SumParameters] } = {
  sums: [
    { P: 31_622_743, Q: 33_554_393, R: 31_622_729, A: 20_831_929, B: 9_871_127, C: 17_300_273 },
    { P: 31_622_741, Q: 33_554_371, R: 31_622_713, A: 27_644_437, B: 4_238_423, C: 12_582_917 },
  ],
};
/** Positions the weight tables cover: TEXTJOIN's 32,767 characters and the block's geometry before them. */
const MAX_TEXT = 32_767 + 64;

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

/** Characters a row adds to a block's joined text (its tokens and separators; numbers counted at 25). */
export function rowChars(row: readonly unknown[], width: number): number {
  let chars = width;
  for (let c = 0; c < width; c++) {
    const v = row[c];
    chars += typeof v === "string" ? v.length + 1 : v === null || v === undefined ? 0 : 25;
  }
  return chars;
}

/** Rows per block when the longest row adds `longest` characters (the joined text stays under {@link BLOCK_TEXT}). */
export function blockRows(longest: number, _width?: number): number {
  return Math.max(2, Math.floor(BLOCK_TEXT / Math.max(1, longest)));
}

/** Rows per block for these rows (the joined text of a block stays under {@link BLOCK_TEXT}). */
export function rowsPerBlock(rows: readonly (readonly unknown[])[], width: number): number {
  let longest = 1;
  for (const row of rows) longest = Math.max(longest, rowChars(row, width));
  return blockRows(longest, width);
}

/**
 * A number as Excel writes it into text inside a formula, with `.` for the decimal separator (the
 * formula puts it back, see the module comment): at most 15 significant digits, trailing zeros dropped
 * (`=1/3&""` is 0.333333333333333; docs: "Excel specifications and limits", number precision 15
 * digits). Null where Excel would use scientific notation (its exact threshold there is not
 * documented): the block is then read, never guessed. (The emulator's conversion is
 * src/emulator/values.ts numberText; the two must not import each other.)
 */
export function excelNumberText(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  const s = String(Number(n.toPrecision(15)));
  return /e/i.test(s) ? null : s;
}

/** A cell's token in the block text (see the module comment); null when it cannot be predicted. Values only: no formulas. */
export function cellToken(v: unknown): string | null {
  if (v === null || v === undefined || v === "") return "";
  if (typeof v === "string") return "s" + v;
  if (typeof v === "number") {
    const t = excelNumberText(v);
    return t === null ? null : "n" + t;
  }
  if (typeof v === "boolean") return v ? "b1" : "b0";
  return null;
}

/**
 * The text the block formula sums when rows `from … from+rows.length-1` hold exactly `rows` (values, no
 * formulas); null when a cell cannot be predicted.
 */
export function blockText(g: ChecksGeometry, from: number, rows: readonly (readonly unknown[])[]): string | null {
  const parts: string[] = [];
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < g.width; c++) {
      const t = cellToken(rows[r][c]);
      if (t === null) return null;
      parts.push(t);
    }
  }
  return `${g.top + from + 1}:${g.left + 1}:${rows.length}:${g.width}|${parts.join("|")}`;
}

/** The position weights w(p) of one sum at index p (1-based), per parameter set, computed once per realm. */
const weightTables = new Map<SumParameters, Float64Array>();
function weights(k: SumParameters): Float64Array {
  let w = weightTables.get(k);
  if (!w) {
    w = new Float64Array(MAX_TEXT + 1);
    for (let p = 1; p <= MAX_TEXT; p++) {
      const u = (p * k.A + k.B) % k.Q;
      w[p] = 1 + ((u * u + k.C) % k.R);
    }
    weightTables.set(k, w);
  }
  return w;
}

/**
 * Terms added before a running sum is reduced: a term c·w is below 2⁴¹ for a BMP character, so 4,096
 * of them stay below 2⁵³ and the running sum is exact. Reducing every 4,096 terms instead of each (as
 * the formula's inner MOD does) gives the same residue.
 */
const REDUCE_EVERY = 4_096;

/**
 * One sum of a text, `(Σ c_p · w(p)) mod P` (see the module comment), for BMP text. Any parameters:
 * the tests shrink the modulus to measure how random the weights are (`checksumProof.test.ts`).
 */
export function sumOfText(txt: string, k: SumParameters): number {
  const w = weights(k);
  let s = 0;
  for (let from = 1; from <= txt.length; from += REDUCE_EVERY) {
    const to = Math.min(txt.length, from + REDUCE_EVERY - 1);
    for (let p = from; p <= to; p++) s += txt.charCodeAt(p - 1) * w[p];
    s %= k.P;
  }
  return s;
}

/**
 * The checksum of a block's text, as the block formula calculates it; null when Excel's result cannot
 * be predicted (a character outside the BMP, which MID splits or counts as one depending on the
 * workbook; text over TEXTJOIN's limit; an empty text).
 */
export function checksumOfText(txt: string): number | null {
  if (txt.length === 0 || txt.length > MAX_TEXT) return null;
  const [a, b] = CHECKSUM_PARAMETERS.sums;
  const w1 = weights(a), w2 = weights(b);
  let s1 = 0, s2 = 0;
  for (let from = 1; from <= txt.length; from += REDUCE_EVERY) {
    const to = Math.min(txt.length, from + REDUCE_EVERY - 1);
    for (let p = from; p <= to; p++) {
      const code = txt.charCodeAt(p - 1);
      if (code >= 0xd800 && code <= 0xdfff) return null;
      s1 += code * w1[p];
      s2 += code * w2[p];
    }
    s1 %= a.P;
    s2 %= b.P;
  }
  return s1 * b.P + s2;
}

/**
 * The value the block formula ({@link checksumFormula}) has when rows `from … from+rows.length-1`
 * hold exactly `rows` (values, no formulas), computed here with the same integer arithmetic; null
 * when it cannot be predicted (a number Excel may write in scientific notation, a character outside
 * the BMP, text over TEXTJOIN's limit): such a block is read.
 */
export function predictChecksum(g: ChecksGeometry, from: number, rows: readonly (readonly unknown[])[]): number | null {
  const txt = blockText(g, from, rows);
  // The joined tokens alone must stay within TEXTJOIN's limit.
  if (txt === null || txt.length - txt.indexOf("|") - 1 > 32_767) return null;
  return checksumOfText(txt);
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
  const [a, b] = CHECKSUM_PARAMETERS.sums;
  // u = (p·A + B) mod Q as a SEQUENCE from A + B by A (one array operation fewer than p·A + B).
  const hash = (k: SumParameters) => `MOD(SEQUENCE(LEN(x),1,${k.A + k.B},${k.A}),${k.Q})`;
  const sum = (u: string, k: SumParameters) => `MOD(SUM(MOD(c*(1+MOD(${u}*${u}+${k.C},${k.R})),${k.P})),${k.P})`;
  return (
    `=LET(b,${absolute(g, from, count)},d,0.5&"",s,MID(d,2,LEN(d)-2),` +
    `t,IF(ISBLANK(b),"",IF(ISFORMULA(b),"=","")&IF(ISNUMBER(b),"n"&SUBSTITUTE(b&"",s,"."),IF(ISLOGICAL(b),IF(b,"b1","b0"),IF(ISTEXT(b),"s"&b,b&"")))),` +
    `x,MIN(ROW(b))&":"&MIN(COLUMN(b))&":"&ROWS(b)&":"&COLUMNS(b)&"|"&TEXTJOIN("|",FALSE,t),` +
    `c,UNICODE(MID(x,SEQUENCE(LEN(x)),1)),u,${hash(a)},v,${hash(b)},` +
    `${sum("u", a)}*${b.P}+${sum("v", b)})`
  );
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
 * Queues `Range.calculate` (ExcelApi 1.6) of a checksum sheet's block formulas `B1:Bn`: they are read
 * calculated now, in manual mode too, and nothing else of the workbook is calculated (never
 * `Application.calculate`, which recalculates every open workbook: issue #34).
 */
function queueCalculateChecks(sheet: Excel.Worksheet, blocks: number): void {
  if (blocks > 0) sheet.getRangeByIndexes(0, 1, blocks, 1).calculate();
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
  // Exactly the block formulas are calculated (Range.calculate), in the request that reads the first of them.
  queueCalculateChecks(sheet, state.n);
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
  // The table's address with the block formulas' calculation, then the block values.
  queueCalculateChecks(reading.sheet, reading.current.length);
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
export async function gatherRows(
  context: Excel.RequestContext,
  reading: ChecksReading,
  g: ChecksGeometry,
  rows: readonly number[],
  targetRequestBytes?: number,
  targetResponseBytes?: number,
  /** Awaited right before each request that writes (the gathering cells, their clearing): the refresh's fence (lock.ts). */
  beforeWrite?: () => Promise<void>,
): Promise<unknown[][]> {
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
      const area = s.getRangeByIndexes(0, 3, k, g.width);
      (area as unknown as { formulas: string }).formulas = formula;
      // Calculated now whatever the calculation mode: exactly the gathering cells.
      area.calculate();
    },
  });
  await writeInBatches(context, writes, { targetRequestBytes, beforeBlock: beforeWrite });
  try {
    return await loadInBlocks(context, (from, count) => s.getRangeByIndexes(from, 3, count, g.width), k, "values", 16 * g.width, targetResponseBytes, { columns: g.width });
  } finally {
    await beforeWrite?.();
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
