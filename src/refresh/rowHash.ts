/**
 * Compact per-row fingerprints (issue #15): what the workbook keeps about the rows it last wrote, so
 * a refresh can tell BEFORE reading the old table back (on Excel on the web that read costs as many
 * bytes as the table itself, issue #10 B13) whether a delta can pay at all: a new row whose
 * fingerprint no old row has must be written. When it can, the table is read and the delta planned
 * from the real cells (`src/workbook/delta.ts`), so the fingerprints never decide what is written.
 *
 * A fingerprint is 7 characters (42 bits) of a hash of the row's cells as written (typed values).
 * A collision (2^-42 per row) can only make that lower bound too low, never a result wrong.
 *
 * Storage ({@link HashStore}): a base (every fingerprint, written with a full rewrite, packed
 * 4,000 to a cell) plus an edit log (one entry per delta refresh: removed runs, inserted
 * fingerprints, changed rows), so a delta stores what it changed, not every row again. The log is
 * folded into a new base when it grows past a quarter of the base ({@link shouldCompact}).
 */
import type { CellValue } from "../table/model";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.";
export const HASH_CHARS = 7;
/** Fingerprints per stored cell (28,000 characters, under Excel's 32,767 per cell). */
export const HASHES_PER_CELL = 4000;
/** Characters of log text per stored cell. */
export const LOG_CHARS_PER_CELL = 30_000;

/**
 * cyrb53-style 53-bit hash (two 32-bit lanes) of a row's injective text (type-tagged cells, strings
 * length-prefixed; "" and null are one, an empty cell):
 *   empty → `z`; string → `s<length>:<text>`; safe integer → `n<digits>|` (−0 as `0`); any other finite
 *   number → `d` and its two 32-bit halves (IEEE 754 bits, so equal numbers read back from Excel hash
 *   alike); NaN or ±Infinity → `n<String(n)>|`; boolean → `T`/`F`; anything else → `?<JSON>|`.
 * The text is fed to the hash unit by unit, never built (issue #24 item 2: building it, and the
 * decimal text of every fraction, were a third of an import's own time at 200,000 rows).
 * Fingerprints stored before fractions were hashed by their bits differ for rows holding one: such a
 * row counts as changed once, so that first refresh is a full rewrite and stores new ones (never a
 * wrong result: the fingerprints only bound what a delta could save).
 */
const Z = 122, S = 115, N = 110, T = 84, F = 70, COLON = 58, BAR = 124, MINUS = 45, QUESTION = 63;
const D = 100;
const M1 = 2654435761, M2 = 1597334677;
const float = new Float64Array(1);
const words = new Uint32Array(float.buffer);
/** Scratch for the decimal digits of an integer (at most 16 for a safe integer, plus a length prefix). */
const digits = new Uint8Array(24);

/** Fingerprint of one row of cell values (as written to, or read back from, Excel). */
export function rowHash(row: readonly unknown[]): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let k = 0; k < row.length; k++) {
    const v = row[k];
    let text: string | null = null;
    let tail = -1;
    let n = -1;
    if (v === null || v === undefined || v === "") {
      h1 = Math.imul(h1 ^ Z, M1); h2 = Math.imul(h2 ^ Z, M2);
      continue;
    } else if (typeof v === "string") {
      h1 = Math.imul(h1 ^ S, M1); h2 = Math.imul(h2 ^ S, M2);
      n = v.length;
      text = v;
    } else if (typeof v === "number") {
      if (!Number.isSafeInteger(v) && Number.isFinite(v)) {
        // A fraction or a large number: its 64 bits, not its decimal text (String() of a double was
        // the fingerprint's largest cost). Tag `d` and exactly two 32-bit units: still injective.
        float[0] = v;
        h1 = Math.imul(h1 ^ D, M1); h2 = Math.imul(h2 ^ D, M2);
        h1 = Math.imul(h1 ^ words[0], M1); h2 = Math.imul(h2 ^ words[0], M2);
        h1 = Math.imul(h1 ^ words[1], M1); h2 = Math.imul(h2 ^ words[1], M2);
        continue;
      }
      h1 = Math.imul(h1 ^ N, M1); h2 = Math.imul(h2 ^ N, M2);
      if (Number.isSafeInteger(v)) {
        if (v < 0) { h1 = Math.imul(h1 ^ MINUS, M1); h2 = Math.imul(h2 ^ MINUS, M2); }
        n = Math.abs(v); // −0 is an integer too, and its digits are "0", as required
      } else text = String(v); // NaN, ±Infinity
      tail = BAR;
    } else if (typeof v === "boolean") {
      const c = v ? T : F;
      h1 = Math.imul(h1 ^ c, M1); h2 = Math.imul(h2 ^ c, M2);
      continue;
    } else {
      h1 = Math.imul(h1 ^ QUESTION, M1); h2 = Math.imul(h2 ^ QUESTION, M2);
      text = JSON.stringify(v) ?? "undefined";
      tail = BAR;
    }
    if (n >= 0) {
      // The decimal digits of n (a string's length, or a safe integer's magnitude), as String(n) writes them.
      let d = 0;
      do {
        digits[d++] = 48 + (n % 10);
        n = Math.floor(n / 10);
      } while (n > 0);
      while (d > 0) {
        const c = digits[--d];
        h1 = Math.imul(h1 ^ c, M1); h2 = Math.imul(h2 ^ c, M2);
      }
      if (typeof v === "string") { h1 = Math.imul(h1 ^ COLON, M1); h2 = Math.imul(h2 ^ COLON, M2); }
    }
    if (text !== null) {
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        h1 = Math.imul(h1 ^ c, M1); h2 = Math.imul(h2 ^ c, M2);
      }
    }
    if (tail >= 0) { h1 = Math.imul(h1 ^ tail, M1); h2 = Math.imul(h2 ^ tail, M2); }
  }
  const a = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const b = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  let value = (4294967296 * (2097151 & b) + (a >>> 0)) % 4398046511104; // 2^42
  // Seven base-64 digits, most significant first, as one string (seven joined strings made six
  // throw-away ones per row: garbage the collector paid for at every import).
  const c6 = CODES[value % 64]; value = Math.floor(value / 64);
  const c5 = CODES[value % 64]; value = Math.floor(value / 64);
  const c4 = CODES[value % 64]; value = Math.floor(value / 64);
  const c3 = CODES[value % 64]; value = Math.floor(value / 64);
  const c2 = CODES[value % 64]; value = Math.floor(value / 64);
  const c1 = CODES[value % 64]; value = Math.floor(value / 64);
  const c0 = CODES[value % 64];
  return String.fromCharCode(c0, c1, c2, c3, c4, c5, c6);
}

/** The alphabet's character codes (`HASH_CHARS` is 7: `rowHash` writes its seven digits out). */
const CODES = Array.from(ALPHABET, (ch) => ch.charCodeAt(0));

export function rowHashes(rows: readonly (readonly CellValue[] | readonly unknown[])[]): string[] {
  return rows.map(rowHash);
}

/** One delta's changes to the fingerprints, in the order they are applied. */
export interface HashLogEntry {
  /** Removed runs, old indexes ascending: [start, count]. */
  d: Array<[number, number]>;
  /** Inserted runs, new indexes ascending: [start, fingerprints concatenated]. */
  i: Array<[number, string]>;
  /** Changed rows, new indexes: [row, fingerprint]. */
  c: Array<[number, string]>;
}

/**
 * Fingerprints already packed into the cells {@link packBase} would make (issue #38): a streamed
 * import computes them block by block and keeps 7 characters per row in a few long strings, never an
 * array of a million short ones.
 */
export interface PackedHashes {
  cells: readonly string[];
  count: number;
}

/** Packs fingerprints as they come, one row at a time, into {@link PackedHashes}. */
export class HashPacker {
  private run: string[] = [];
  private readonly cells: string[] = [];
  private count = 0;

  push(hash: string): void {
    this.run.push(hash);
    this.count++;
    if (this.run.length === HASHES_PER_CELL) this.close();
  }

  /** Fingerprints packed so far. */
  get size(): number {
    return this.count;
  }

  /** The packed fingerprints of every row pushed. */
  packed(): PackedHashes {
    this.close();
    return { cells: this.cells, count: this.count };
  }

  private close(): void {
    if (this.run.length === 0) return;
    this.cells.push("h" + this.run.join(""));
    this.run = [];
  }
}

/** Packs fingerprints into cell texts (`h` + up to 4,000 fingerprints; the letter keeps Excel from reading a number). */
export function packBase(hashes: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < hashes.length; i += HASHES_PER_CELL) out.push("h" + hashes.slice(i, i + HASHES_PER_CELL).join(""));
  return out;
}

/** The log as text: one JSON entry per line, so a delta appends without rewriting earlier entries. */
export function logText(log: readonly HashLogEntry[]): string {
  return log.map((e) => JSON.stringify(e)).join("\n");
}

/** Splits log text into cell texts, each `L` + up to 30,000 characters (the letter keeps Excel from parsing it). */
export function packLogText(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += LOG_CHARS_PER_CELL) out.push("L" + text.slice(i, i + LOG_CHARS_PER_CELL));
  return out;
}

export class HashStoreError extends Error {}

function splitHashes(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += HASH_CHARS) out.push(s.slice(i, i + HASH_CHARS));
  return out;
}

/** Reads stored cells back (untrusted: a workbook can hold anything) and replays the log. */
export function unpack(baseCells: readonly unknown[], logCells: readonly unknown[]): { hashes: string[]; log: HashLogEntry[]; text: string } {
  let hashes: string[] = [];
  for (const c of baseCells) {
    if (typeof c !== "string" || c[0] !== "h" || (c.length - 1) % HASH_CHARS !== 0) throw new HashStoreError("a fingerprint cell is damaged");
    hashes = hashes.concat(splitHashes(c.slice(1)));
  }
  let text = "";
  for (const c of logCells) {
    if (typeof c !== "string" || c[0] !== "L") throw new HashStoreError("a fingerprint log cell is damaged");
    text += c.slice(1);
  }
  const log: HashLogEntry[] = [];
  if (text) {
    for (const line of text.split("\n")) {
      try {
        log.push(JSON.parse(line) as HashLogEntry);
      } catch {
        throw new HashStoreError("the fingerprint log is not valid JSON");
      }
    }
  }
  for (const e of log) hashes = replay(hashes, e);
  return { hashes, log, text };
}

/** Applies one log entry (the same order as the Excel writes: deletes bottom-up, inserts top-down, changes). */
export function replay(hashes: readonly string[], e: HashLogEntry): string[] {
  let out = [...hashes];
  const okRun = (x: unknown): x is [number, unknown] => Array.isArray(x) && x.length === 2 && Number.isInteger(x[0]) && (x[0] as number) >= 0;
  if (!e || !Array.isArray(e.d) || !Array.isArray(e.i) || !Array.isArray(e.c)) throw new HashStoreError("a fingerprint log entry is damaged");
  for (let k = e.d.length - 1; k >= 0; k--) {
    const run = e.d[k];
    if (!okRun(run) || !Number.isInteger(run[1]) || run[0] + run[1] > out.length) throw new HashStoreError("a removed run is out of range");
    out.splice(run[0], run[1]);
  }
  for (const run of e.i) {
    if (!okRun(run) || typeof run[1] !== "string" || run[1].length % HASH_CHARS !== 0 || run[0] > out.length) throw new HashStoreError("an inserted run is out of range");
    const add = splitHashes(run[1]);
    if (add.length < 10_000) out.splice(run[0], 0, ...add);
    else out = out.slice(0, run[0]).concat(add, out.slice(run[0]));
  }
  for (const ch of e.c) {
    if (!okRun(ch) || typeof ch[1] !== "string" || ch[1].length !== HASH_CHARS || ch[0] >= out.length) throw new HashStoreError("a changed row is out of range");
    out[ch[0]] = ch[1];
  }
  return out;
}

/** True when the log should be folded into a new base (a quarter of the base's size, or 200 entries). */
export function shouldCompact(baseRows: number, logChars: number, entries: number): boolean {
  return entries >= 200 || logChars > Math.max(30_000, (baseRows * HASH_CHARS) / 4);
}
