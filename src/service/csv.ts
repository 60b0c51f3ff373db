/**
 * CSV reading and writing (RFC 4180: comma, double-quote quoting, CRLF rows, quoted cells may hold
 * commas, quotes and line breaks).
 *
 * Reading is incremental and linear in the body size, however the body is cut into chunks: each
 * character is looked at once, by a small state machine that carries its state from one chunk to
 * the next. A cell (or a record) that spans chunks is kept as the list of its pieces and joined
 * once, when it ends. (papaparse, used before, re-parsed the unfinished record from its start on
 * every chunk: a 50 MB cell took 30 s, and 1-byte chunks were quadratic in the record length.)
 * Only web-platform APIs are used (`ReadableStream`, `TextDecoder`), so the same code runs in the
 * task pane and in Node; the raw body is never held in full.
 */

import { Utf8Chunks } from "./utf8";

/** A CSV syntax problem, with the 1-based data line it was found on. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/**
 * Receives each parsed record (header included, as record 0). Throwing stops parsing. `joined`
 * lists the fields that were assembled from several pieces (a cell spanning chunks, or holding
 * `""`): those are new strings. Every other field is cut from a decoded chunk, and V8 may keep
 * that whole chunk alive for as long as the field lives (see `detachString`).
 */
export type CsvRecordHandler = (fields: string[], recordIndex: number, joined: readonly number[]) => void;

const NONE: readonly number[] = Object.freeze([]);

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;

/** Where the parser is within a record. */
const enum State {
  /** At the start of a field (after a comma, a line break, or at the start of input). */
  FieldStart,
  /** Inside a field that did not start with a quote (quotes in it are data). */
  Unquoted,
  /** Inside a quoted field. */
  Quoted,
  /** Just after a quote inside a quoted field: `""` is a quote, anything else ends the field. */
  QuoteInQuoted,
  /** After a quoted field's closing quote and a CR: only LF may follow. */
  AfterQuoteCr,
}

/** `s.indexOf(c, from)`, or `n` (the length) when there is none. */
function indexOr(s: string, c: string, from: number, n: number): number {
  const k = s.indexOf(c, from);
  return k < 0 ? n : k;
}

/** Record separator: unknown until the first line break outside quotes says which. */
const enum Newline {
  Unknown,
  CrLf,
  Lf,
}

/**
 * Incremental CSV parser: `push` decoded text as it arrives, then `end`. Records are delivered to
 * the handler synchronously. The line ending (CRLF, as the spec says, or a lone LF from a lenient
 * deployment) is taken from the first line break outside quotes; with CRLF, a lone LF or CR in an
 * unquoted field is data. After a closing quote only a comma, a line break (CRLF or LF) or the end
 * may follow; anything else is an error (RFC 4180), as is a quoted field the body never closes.
 */
export class CsvStreamParser {
  private state = State.FieldStart;
  private newline = Newline.Unknown;
  private fields: string[] = [];
  /** Indices in `fields` of joined fields (see {@link CsvRecordHandler}). */
  private joined: number[] | null = null;
  /** Pieces of the current field from earlier chunks (or split at `""`), joined when it ends. */
  private parts: string[] = [];
  /** The last piece in `parts` ends with CR (a CRLF may be split between two chunks). */
  private partsEndWithCr = false;
  private records = 0;
  private started = false;
  private failure: unknown;

  constructor(private readonly onRecord: CsvRecordHandler) {}

  /** Records delivered so far (header included). */
  get recordCount(): number {
    return this.records;
  }

  /** Feeds more text. */
  push(text: string): void {
    this.rethrow();
    if (!text) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    try {
      this.scan(text);
    } catch (e) {
      this.failure = e;
      throw e;
    }
  }

  /** Signals the end of input and flushes the last record. */
  end(): void {
    this.rethrow();
    try {
      switch (this.state) {
        case State.Quoted:
          throw new CsvSyntaxError("Quoted field unterminated", this.records + 1);
        case State.FieldStart:
          // After a line break (or on empty input) there is no further record; after a comma
          // there is one more, empty, field.
          if (this.fields.length > 0) this.endRecord("");
          break;
        default:
          this.endRecord("");
      }
      this.state = State.FieldStart;
    } catch (e) {
      this.failure = e;
      throw e;
    }
  }

  private rethrow(): void {
    // What the parser threw (a CsvSyntaxError, or the consumer's own error), thrown again as it was.
    if (this.failure !== undefined) throw this.failure as Error;
  }

  /** The current field's text: the pieces so far plus `tail`. */
  private take(tail: string): string {
    if (this.parts.length === 0) return tail;
    if (tail) this.parts.push(tail);
    // Only a join of two or more non-empty pieces is sure to be a new string.
    let pieces = 0;
    for (const p of this.parts) if (p) pieces++;
    if (pieces > 1) (this.joined ??= []).push(this.fields.length);
    const s = this.parts.length === 1 ? this.parts[0] : this.parts.join("");
    this.parts = [];
    this.partsEndWithCr = false;
    return s;
  }

  private keep(piece: string): void {
    if (!piece) return;
    this.parts.push(piece);
    this.partsEndWithCr = piece.charCodeAt(piece.length - 1) === CR;
  }

  private endField(tail: string): void {
    this.fields.push(this.take(tail));
  }

  private endRecord(tail: string): void {
    this.fields.push(this.take(tail));
    const fields = this.fields;
    const joined = this.joined ?? NONE;
    this.fields = [];
    this.joined = null;
    this.onRecord(fields, this.records++, joined);
  }

  private scan(s: string): void {
    const n = s.length;
    let i = 0;
    let start = 0;
    // Next comma and next LF at or after the scan position (n: none), found with the native
    // `indexOf` and reused until passed, so each character is searched at most once for each.
    let comma = -1;
    let lf = -1;
    while (i < n) {
      switch (this.state) {
        case State.FieldStart: {
          if (s.charCodeAt(i) === QUOTE) {
            this.state = State.Quoted;
            start = ++i;
            continue;
          }
          this.state = State.Unquoted;
          start = i;
          continue;
        }
        case State.Unquoted: {
          let j = i;
          for (;;) {
            if (comma < j) comma = indexOr(s, ",", j, n);
            if (lf < j) lf = indexOr(s, "\n", j, n);
            if (comma < lf) {
              j = comma;
              break;
            }
            j = lf;
            if (j === n) break;
            const crBefore = j > start ? s.charCodeAt(j - 1) === CR : this.partsEndWithCr;
            if (this.newline === Newline.Unknown) this.newline = crBefore ? Newline.CrLf : Newline.Lf;
            if (this.newline === Newline.Lf || crBefore) break;
            // CRLF mode: a lone LF is data; search on after it.
            j++;
          }
          if (j === n) {
            this.keep(s.slice(start, n));
            i = n;
            break;
          }
          if (s.charCodeAt(j) === COMMA) {
            this.endField(s.slice(start, j));
          } else if (this.newline === Newline.CrLf) {
            // Drop the CR of the CRLF, which may be the last character of an earlier piece.
            if (j > start) this.endRecord(s.slice(start, j - 1));
            else {
              const last = this.parts.length - 1;
              this.parts[last] = this.parts[last].slice(0, -1);
              this.endRecord("");
            }
          } else {
            this.endRecord(s.slice(start, j));
          }
          this.state = State.FieldStart;
          i = j + 1;
          break;
        }
        case State.Quoted: {
          const j = s.indexOf('"', i);
          if (j < 0) {
            this.keep(s.slice(start, n));
            i = n;
            break;
          }
          this.keep(s.slice(start, j));
          this.state = State.QuoteInQuoted;
          i = j + 1;
          break;
        }
        case State.QuoteInQuoted: {
          const c = s.charCodeAt(i);
          if (c === QUOTE) {
            // `""`: one quote of data.
            this.keep('"');
            this.state = State.Quoted;
            start = ++i;
          } else if (c === COMMA) {
            this.endField("");
            this.state = State.FieldStart;
            i++;
          } else if (c === LF) {
            if (this.newline === Newline.Unknown) this.newline = Newline.Lf;
            this.endRecord("");
            this.state = State.FieldStart;
            i++;
          } else if (c === CR) {
            this.state = State.AfterQuoteCr;
            i++;
          } else {
            throw new CsvSyntaxError("Trailing quote on quoted field is malformed", this.records + 1);
          }
          break;
        }
        case State.AfterQuoteCr: {
          if (s.charCodeAt(i) !== LF) throw new CsvSyntaxError("Trailing quote on quoted field is malformed", this.records + 1);
          if (this.newline === Newline.Unknown) this.newline = Newline.CrLf;
          this.endRecord("");
          this.state = State.FieldStart;
          i++;
          break;
        }
      }
    }
  }
}

/**
 * Reads a byte stream as UTF-8 CSV, record by record, without holding the whole body.
 * Rejects on a syntax error, on invalid UTF-8 or when `signal` aborts.
 */
export async function parseCsvStream(
  stream: ReadableStream<Uint8Array>,
  onRecord: CsvRecordHandler,
  signal?: AbortSignal,
  /** Awaited after each piece of the body is parsed, before the next is read (a sink's backpressure). */
  afterChunk?: () => Promise<void> | void,
): Promise<void> {
  const parser = new CsvStreamParser(onRecord);
  const reader = stream.getReader();
  const decoder = new Utf8Chunks({ fatal: true });
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(decodeUtf8(decoder, value, records(parser)));
      if (afterChunk) await afterChunk();
    }
    parser.push(decodeUtf8(decoder, undefined, records(parser)));
    parser.end();
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  } finally {
    reader.releaseLock();
  }
}

function records(p: CsvStreamParser): number {
  return p.recordCount;
}

function decodeUtf8(decoder: Utf8Chunks, bytes: Uint8Array | undefined, recordsSoFar: number): string {
  try {
    return decoder.decode(bytes);
  } catch {
    // Thrown as our own type: the platform's TypeError may come from another realm (tests, webviews).
    throw new CsvSyntaxError("the body is not valid UTF-8 text", recordsSoFar + 1);
  }
}

/** Parses complete CSV text (tests, small inputs). */
export function parseCsvText(text: string): string[][] {
  const out: string[][] = [];
  const p = new CsvStreamParser((f) => out.push(f));
  p.push(text);
  p.end();
  return out;
}

/** Quotes one field per RFC 4180 when it needs it. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value === "" ? (value === "" ? "" : `"${value.replace(/"/g, '""')}"`) : value;
}

/** One CSV record, CRLF-terminated. */
export function csvRecord(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

/**
 * One parser kept for the life of the module, never used. V8 optimises the scanner for the object
 * shape its parsers have; when no parser is alive at a full garbage collection that shape is freed,
 * the optimised code is thrown away ("weak objects" in `--trace-deopt`) and the next import runs
 * unoptimised code again. Measured on the 10,000-row CSV import after a full collection: about
 * 10 % of its time (bench/scenario.ts, 2026-11-29).
 */
export const KEEP_PARSER_SHAPE = new CsvStreamParser(() => undefined);
