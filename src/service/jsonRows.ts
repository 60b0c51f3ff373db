/**
 * Streaming reader for the two large JSON forms: the export (`{ ..., "rows": [ ... ] }`) and the
 * OData collection (`{ ..., "value": [ ... ] }`).
 *
 * `Response.text()` + `JSON.parse` holds the whole body as text and, at the end of the parse, every
 * row as an object as well, before the first row is converted: for a 55 MB export that is several
 * hundred MB at the peak. Here the decoded text is scanned as it arrives; the elements of the rows
 * array are cut out in small batches (64 K characters), each batch is parsed with `JSON.parse` and
 * handed over (to be converted and released) before the next is read. Everything outside the rows
 * array (the "envelope": key, schema, columns, row count) is kept as text and parsed at the end with
 * an empty rows array in place of the rows, so the whole body is still checked: the batches
 * are valid JSON values separated by commas, the envelope is valid JSON by itself.
 */
import type { CellValue, Column, Table } from "../table/model";
import type { TableSink } from "../table/sink";
import { Utf8Chunks } from "./utf8";
import { FastRows } from "./jsonFast";
import {
  BodyShapeError,
  MAX_JSON_DEPTH,
  RowConverter,
  columnsFromDefs,
  exportTable,
  isODataAnnotation,
  isObject,
  parseJsonLossless,
  parseJsonText,
  shownValue,
  tableFromJsonExport,
  tableFromOData,
  tooDeep,
  type MetaInput,
} from "./dataset";

/**
 * Characters of row text per parsed batch (about 115 export rows). Small batches are what keeps the
 * peak down: a batch's parsed objects die before the young generation is next collected, instead of
 * piling up in the old generation. Measured at 200,000 rows (55 MB): peak RSS of the read 190 MB with
 * 64 K batches, 220 MB with 256 K, 280 MB with 1 M, at the same speed.
 *
 * Why 32 K and not 64 K (issue #24 item 2): a batch is cut at the first comma past this size and
 * parsed as `[` + batch + `]`, which V8 flattens into a new string. A body holding any character
 * beyond Latin-1 is decoded as two bytes per character, so a 64 K batch flattens into more than
 * 128 KB, V8's largest regular heap object: every batch became a large-object allocation and
 * `JSON.parse` of the batches took 5× the time of one `JSON.parse` of the whole body (measured on the
 * 10,000-row export: 95–105 ms against 14–20 ms; 32 K batches: 14–26 ms).
 */
const BATCH_CHARS = 1 << 15;

// The character codes are this module's own constants, not imported from `jsonFast.ts`: bundled as
// CommonJS, an imported constant is a property read on the module object at every use, and this
// scanner's loop over every character of the body ran 3× slower with them (bench, 2026-11-29).
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const DOT = 46;
const MINUS = 45;
const PLUS = 43;
const LOWER_E = 101;
const UPPER_E = 69;

function isSpace(ch: number): boolean {
  return ch === 32 || ch === 10 || ch === 13 || ch === 9;
}

/** Receives each batch of rows (already parsed), with the envelope text read so far (ends with `[`). */
export type JsonRowsHandler = (rows: unknown[], envelopeHead: string) => void;

/**
 * Incremental scanner: `push` decoded text as it arrives, then `end()`, which returns the envelope
 * (the document with the rows array emptied). Rows are delivered synchronously from `push`.
 */
export class JsonRowsScanner {
  private depth = 0;
  private inString = false;
  private escape = false;
  /** A string at depth 1 where a key is expected is being read as a key. */
  private expectKey = false;
  private readingKey = false;
  private keyText = "";
  private lastKey: string | null = null;
  private awaitingValue = false;
  private inRows = false;
  private rowsSeen = false;
  /** An element must follow (a comma was the last thing split at). */
  private afterSplit = false;
  private readonly envelope: string[] = [];
  private readonly batch: string[] = [];
  private pendingChars = 0;
  /** Offset in the whole text of the first character of the current batch (for error positions). */
  private batchOffset = 0;
  /** Where the rows were cut out of the envelope, and how many characters they spanned. */
  private gapAt = -1;
  private gapChars = 0;
  private envelopeChars = 0;
  private offset = 0;
  private rowCount = 0;

  constructor(
    private readonly arrayKey: string,
    private readonly onRows: JsonRowsHandler,
    /** Characters of row text per batch (tests use tiny batches to split everywhere). */
    private readonly batchChars = BATCH_CHARS,
    /**
     * Called where the rows array opens, with the envelope text up to its `[`: a {@link FastRows} to
     * read the rows straight from the text (`jsonFast.ts`), or null for batches (the default).
     */
    private readonly onRowsStart?: (head: string) => FastRows | null,
  ) {}

  /** The fast reader of the rows, once chosen (see the constructor). */
  private fast: FastRows | null = null;
  /** Text of a row not complete yet (fast reading). */
  private carry = "";

  /**
   * Fast reading of rows from `s[i]` (see `jsonFast.ts`): complete rows are read straight from the
   * text, a row cut by the end of the piece waits in {@link carry}. Returns where the scan goes on.
   */
  private fastRows(s: string, i: number): number {
    let at = i;
    if (this.carry.length > 0) {
      // The row the last piece cut: completed from the start of this one, in a short joined text, so
      // that the rest of the piece is read as it is. A string joined from two (a cons string) has
      // every character read through the join, several times slower: measured 3× the CPU time.
      const carried = this.carry.length;
      let window = Math.min(s.length, i + 16_384);
      for (;;) {
        const text = this.carry + s.slice(i, window);
        const stop = this.fast!.parse(text, 0, this.offset + i - carried);
        this.rowCount += stop.rows;
        const next = i + stop.next - carried;
        if (stop.closed) return this.closeRows(next);
        if (next >= i) {
          at = next;
          break;
        }
        if (window === s.length) {
          // Still the same row: it goes on in the next piece.
          this.carry = text.slice(stop.next);
          this.from = s.length;
          return s.length;
        }
        window = s.length; // a row longer than the window: the whole piece joined once
      }
      this.carry = "";
    }
    const stop = this.fast!.parse(s, at, this.offset);
    this.rowCount += stop.rows;
    if (stop.closed) return this.closeRows(stop.next);
    this.carry = s.slice(stop.next);
    this.from = s.length;
    return s.length;
  }

  /** The rows array closed at `s[at]` (its `]`, which is envelope again). Returns where the scan goes on. */
  private closeRows(at: number): number {
    this.carry = "";
    this.depth = 1;
    this.inRows = false;
    this.gapChars = this.offset + at - this.gapAt;
    this.from = at;
    return at + 1;
  }

  /** Rows delivered so far. */
  get rows(): number {
    return this.rowCount;
  }

  /** True once the rows array was found (and streamed) at the top level of a root object. */
  get streamed(): boolean {
    return this.rowsSeen;
  }

  push(s: string): void {
    const n = s.length;
    this.from = 0;
    for (let i = 0; i < n; i++) {
      if (this.inRows) {
        i = (this.fast ? this.fastRows(s, i) : this.scanRows(s, i)) - 1;
        continue;
      }
      const ch = s.charCodeAt(i);
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (ch === BACKSLASH) this.escape = true;
        else if (ch === QUOTE) {
          this.inString = false;
          if (this.readingKey) {
            this.readingKey = false;
            this.lastKey = this.keyText;
          }
        } else if (this.readingKey) this.keyText += s[i];
        continue;
      }
      if (!this.sawContent && !isSpace(ch)) {
        this.sawContent = true;
        this.rootIsObject = ch === OPEN_BRACE;
      }
      if (ch === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && this.expectKey) {
          this.readingKey = true;
          this.keyText = "";
          this.expectKey = false;
        }
        continue;
      }
      if (isSpace(ch)) continue;
      if (this.depth === 1 && this.awaitingValue) {
        this.awaitingValue = false;
        if (ch === OPEN_BRACKET && this.lastKey === this.arrayKey && this.rootIsObject) {
          if (this.rowsSeen) throw new BodyShapeError(`"${this.arrayKey}" appears twice in the response`, this.arrayKey);
          this.rowsSeen = true;
          this.inRows = true;
          this.depth = 2;
          this.envelope.push(s.slice(this.from, i + 1));
          this.envelopeChars += i + 1 - this.from;
          this.gapAt = this.offset + i + 1;
          this.from = i + 1;
          this.batchOffset = this.gapAt;
          this.afterSplit = false;
          this.fast = this.onRowsStart?.(this.envelope.join("")) ?? null;
          continue;
        }
      }
      if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
        if (++this.depth > MAX_JSON_DEPTH) throw tooDeep(this.offset + i);
        if (this.depth === 1 && ch === OPEN_BRACE) this.expectKey = true;
      } else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) {
        this.depth--;
      } else if (ch === COMMA && this.depth === 1) {
        this.expectKey = true;
      } else if (ch === COLON && this.depth === 1) {
        this.awaitingValue = true;
      }
    }
    if (this.run > 0) {
      // A number running on into the next piece: keep its digits so far.
      this.runHead = this.runFrom >= 0 ? s.slice(this.runFrom) : this.runHead + s;
      this.runFrom = -1;
    }
    if (n > 0) {
      this.prev2 = n > 1 ? s.charCodeAt(n - 2) : this.prev1;
      this.prev1 = s.charCodeAt(n - 1);
    }
    const from = this.from;
    if (this.inRows) {
      if (n > from) {
        this.batch.push(s.slice(from));
        this.pendingChars += n - from;
      }
    } else if (n > from) {
      this.envelope.push(s.slice(from));
      this.envelopeChars += n - from;
    }
    this.offset += n;
  }

  /**
   * Scans rows text from `s[i]` until the piece ends or the rows array closes; returns where it
   * stopped (just after the closing `]`, which belongs to the envelope). The hot loop of the reader:
   * state lives in locals, strings and digit runs are skipped in tight inner loops.
   */
  private scanRows(s: string, i: number): number {
    const n = s.length;
    let depth = this.depth;
    let inString = this.inString;
    let escape = this.escape;
    let run = this.run;
    while (i < n) {
      if (inString) {
        if (escape) {
          escape = false;
          i++;
        }
        while (i < n) {
          const c = s.charCodeAt(i);
          if (c === BACKSLASH) {
            if (i + 1 < n) {
              i += 2;
              continue;
            }
            escape = true;
            i = n;
            break;
          }
          i++;
          if (c === QUOTE) {
            inString = false;
            break;
          }
        }
        continue;
      }
      const ch = s.charCodeAt(i);
      if (ch >= DIGIT_0 && ch <= DIGIT_9) {
        if (run === 0) this.startRun(s, i);
        let j = i + 1;
        while (j < n) {
          const c = s.charCodeAt(j);
          if (c < DIGIT_0 || c > DIGIT_9) break;
          j++;
        }
        run += j - i;
        i = j;
        continue;
      }
      if (run > 0) {
        this.run = run;
        this.endRun(s, i, ch);
        run = 0;
      }
      if (ch === QUOTE) inString = true;
      else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
        // Refused here, while scanning: nothing recursive ever sees the value.
        if (++depth > MAX_JSON_DEPTH) throw tooDeep(this.offset + i);
      }
      else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) {
        depth--;
        if (depth === 1) {
          // The rows array closed: the rest of its text is the last batch; `]` is envelope again.
          this.depth = 1;
          this.inString = false;
          this.escape = false;
          this.run = 0;
          this.takeBatch(s, this.from, i, true);
          this.inRows = false;
          this.gapChars = this.offset + i - this.gapAt;
          this.from = i;
          return i + 1;
        }
      } else if (ch === COMMA && depth === 2 && this.pendingChars + (i - this.from) >= this.batchChars) {
        this.takeBatch(s, this.from, i, false);
        this.afterSplit = true;
        this.from = i + 1;
        this.batchOffset = this.offset + i + 1;
      }
      i++;
    }
    this.depth = depth;
    this.inString = inString;
    this.escape = escape;
    this.run = run;
    return i;
  }

  /** Start in the current piece of the text not yet added to the envelope or the batch. */
  private from = 0;
  /** Digits in the current run of digits outside strings in the rows (0: not in one). */
  private run = 0;
  /** Where the run started in the current piece (-1: in an earlier piece; its digits are in runHead). */
  private runFrom = -1;
  private runHead = "";
  private runStart = 0;
  /** Character before the run, and the one before that (the run may start a piece). */
  private runPrev1 = 0;
  private runPrev2 = 0;
  /** Last two characters of the pieces pushed so far. */
  private prev1 = 0;
  private prev2 = 0;
  /** Offsets in the whole text where a quote goes in (around integers beyond 2^53), in order. */
  private quotes: number[] = [];

  private startRun(s: string, i: number): void {
    this.runFrom = i;
    this.runHead = "";
    this.runStart = this.offset + i;
    this.runPrev1 = i >= 1 ? s.charCodeAt(i - 1) : this.prev1;
    this.runPrev2 = i >= 2 ? s.charCodeAt(i - 2) : i === 1 ? this.prev1 : this.prev2;
  }

  /**
   * A run of digits ended at `s[i]` (= `ch`). An integer literal of 16+ digits that a double cannot
   * hold exactly is quoted, as `parseJsonLossless` does (same rule: not part of a fraction or an
   * exponent), so the batch can go straight to `JSON.parse` with no regular-expression pass.
   */
  private endRun(s: string, i: number, ch: number): void {
    const digits = this.run;
    this.run = 0;
    if (digits < 16 || ch === DOT || ch === LOWER_E || ch === UPPER_E) return;
    const negative = this.runPrev1 === MINUS;
    const before = negative ? this.runPrev2 : this.runPrev1;
    if (before === DOT || before === LOWER_E || before === UPPER_E || before === PLUS || before === MINUS || (before >= DIGIT_0 && before <= DIGIT_9)) return;
    const text = this.runFrom >= 0 ? s.slice(this.runFrom, i) : this.runHead + s.slice(0, i);
    if (Number.isSafeInteger(Number(text))) return;
    this.quotes.push(this.runStart - (negative ? 1 : 0), this.offset + i);
  }

  /** Whether the document's first character is `{`: only a root object's rows are streamed. */
  private rootIsObject = false;
  private sawContent = false;

  /** Parses the batch text up to `s[to]` (exclusive) and hands the rows over. */
  private takeBatch(s: string, from: number, to: number, last: boolean): void {
    if (to > from) this.batch.push(s.slice(from, to));
    const text = this.batch.length === 1 ? this.batch[0] : this.batch.join("");
    this.batch.length = 0;
    this.pendingChars = 0;
    if (text.trim() === "") {
      // `[]` is an empty list; `[1,]` is not JSON.
      if (last && this.afterSplit) throw new BodyShapeError("the response is not valid JSON (a list ends with a comma)", `offset ${this.offset + to}`, "malformed_body");
      if (!last) throw new BodyShapeError("the response is not valid JSON (a list holds an empty element)", `offset ${this.offset + to}`, "malformed_body");
      return;
    }
    // Quote the integers beyond 2^53 found while scanning (offsets in the whole text).
    const inserted: number[] = [];
    let src = text;
    if (this.quotes.length > 0) {
      const parts: string[] = [];
      let last = 0;
      for (const q of this.quotes) {
        const at = q - this.batchOffset;
        parts.push(text.slice(last, at));
        inserted.push(at + inserted.length);
        last = at;
      }
      parts.push(text.slice(last));
      src = parts.join('"');
      this.quotes.length = 0;
    }
    let rows: unknown;
    try {
      rows = parseJsonText(`[${src}]`);
    } catch (e) {
      // Back from a position in "[" + src to one in the whole body.
      throw shifted(e, (pos) => this.batchOffset + Math.max(0, pos - 1 - inserted.filter((q) => q < pos - 1).length));
    }
    const list = rows as unknown[];
    this.rowCount += list.length;
    this.onRows(list, this.envelope.join(""));
  }

  /** Ends the input; returns the envelope parsed (the rows array, if streamed, is empty in it). */
  end(): unknown {
    if (this.inRows || this.inString) {
      throw new BodyShapeError("the response is not valid JSON (it ends in the middle of a value)", `offset ${this.offset}`, "malformed_body");
    }
    const text = this.envelope.join("");
    this.envelope.length = 0;
    try {
      return parseJsonLossless(text);
    } catch (e) {
      throw shifted(e, (pos) => (this.gapAt >= 0 && pos >= this.gapAt ? pos + this.gapChars : pos));
    }
  }

  /** Characters of envelope text kept (for tests: it must stay small). */
  get envelopeLength(): number {
    return this.envelopeChars;
  }
}

/** A parse error's `offset N` path moved from the parsed piece's positions to the whole body's. */
function shifted(e: unknown, map: (pos: number) => number): unknown {
  if (!(e instanceof BodyShapeError)) return e;
  const m = /^offset (\d+)$/.exec(e.path);
  return m ? new BodyShapeError(e.message, `offset ${map(Number(m[1]))}`, e.kind) : e;
}

/**
 * Reads a UTF-8 JSON byte stream with {@link JsonRowsScanner}. Decoding is what `Response.text()`
 * does (invalid bytes replaced, a BOM dropped). Returns the parsed envelope.
 */
export async function scanJsonStream(
  stream: ReadableStream<Uint8Array>,
  scanner: JsonRowsScanner,
  signal?: AbortSignal,
  /** Awaited after each piece of the body is scanned, before the next is read (a sink's backpressure). */
  afterChunk?: () => Promise<void> | void,
): Promise<unknown> {
  const reader = stream.getReader();
  const decoder = new Utf8Chunks();
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      const { done, value } = await reader.read();
      if (done) break;
      scanner.push(decoder.decode(value));
      if (afterChunk) await afterChunk();
    }
    scanner.push(decoder.decode());
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  } finally {
    reader.releaseLock();
  }
  return scanner.end();
}

/** Rows handed to a sink from a body read whole, with the sink's flush between pieces of them. */
export async function passThrough(rows: CellValue[][], columns: Column[], sink: TableSink): Promise<void> {
  sink.begin(columns, { converted: true });
  for (let i = 0; i < rows.length; i++) {
    sink.row(rows[i]);
    if (sink.flush && i % 1000 === 999) await sink.flush();
  }
}

/** The columns an export declares before its rows, or null when its head does not say (yet). */
function headColumns(head: string, manifestColumns: Column[] | undefined): Column[] | null {
  let parsed: unknown;
  try {
    // The head ends with the rows array's `[`: closed, it is the export without rows.
    parsed = parseJsonLossless(`${head}]}`);
  } catch {
    return null;
  }
  return isObject(parsed) && parsed.columns !== undefined ? columnsFromDefs(parsed.columns, manifestColumns) : null;
}

/**
 * Builds a table from a JSON export (`format` json: `columns` are the manifest's, used where the
 * export's own definitions lack a type) or an OData collection (`format` odata: `columns` from
 * `$metadata`) read from a byte stream, converting the rows batch by batch as they arrive. The same
 * table as `tableFromJsonExport` / `tableFromOData` of the parsed body, with a fraction of the peak
 * memory.
 *
 * @throws BodyShapeError for a body that is not JSON or not of the documented shape.
 */
export async function tableFromJsonStream(
  stream: ReadableStream<Uint8Array>,
  format: "json" | "odata",
  meta: MetaInput,
  columns: Column[] | undefined,
  opts: { signal?: AbortSignal; onProgress?: (rows: number) => void; batchChars?: number; sink?: TableSink } = {},
): Promise<Table> {
  const odata = format === "odata";
  const key = odata ? "value" : "rows";
  const sink = opts.sink;
  /** A converter over the final columns; with a sink, its rows stream there. */
  let begun = false;
  const makeConverter = (cols: Column[], path: string, skip?: (k: string) => boolean): RowConverter => {
    const c = new RowConverter(cols, path, skip);
    if (sink?.extraField) c.onExtra = (name) => sink.extraField!(name);
    if (sink) {
      c.sink = (row) => {
        if (!begun) {
          begun = true;
          sink.begin(cols, { converted: true });
        }
        sink.row(row);
      };
    }
    return c;
  };
  const finish = (c: RowConverter, cols: Column[]): { columns: Column[]; rows: CellValue[][] } => {
    if (!sink) return c.finish();
    if (!begun) sink.begin(cols, { converted: true });
    return sink.end();
  };
  let converter: RowConverter | null = odata ? makeConverter(columns ?? [], "value", isODataAnnotation) : null;
  let declared: Column[] | null = null;
  let headTried = false;
  // Rows that arrive before the export has declared its columns wait here (unusual key order).
  let waiting: unknown[][] = [];
  const scanner = new JsonRowsScanner(key, (rows, head) => {
    if (!converter && !headTried) {
      headTried = true;
      declared = headColumns(head, columns);
      if (declared) converter = makeConverter(declared, "rows");
    }
    if (!converter) {
      waiting.push(rows);
      return;
    }
    converter.add(rows);
    opts.onProgress?.(converter.count);
  }, opts.batchChars, (head) => {
    // A sink that drops its rows soon may be handed rows read straight from the text (`jsonFast.ts`).
    if (!sink?.transient) return null;
    if (!converter && !headTried) {
      headTried = true;
      declared = headColumns(head, columns);
      if (declared) converter = makeConverter(declared, "rows");
    }
    fast = converter !== null;
    return converter ? new FastRows(converter) : null;
  });
  let fast = false;
  const afterChunk = () => {
    // Rows read straight from the text arrive between batches: their progress is told per piece.
    if (fast && converter) opts.onProgress?.(converter.count);
    return sink?.flush?.();
  };
  const body = await scanJsonStream(stream, scanner, opts.signal, afterChunk);
  // Not a root object with a rows array: the parsed body says what is wrong (or is an odd but
  // valid spelling), exactly as the non-streaming path would.
  if (!scanner.streamed) {
    const whole = odata ? tableFromOData(body, meta, columns ?? []) : tableFromJsonExport(body, meta, columns);
    if (!sink) return whole;
    await passThrough(whole.rows, whole.columns, sink);
    whole.rows = [];
    return { ...whole, ...sink.end() };
  }
  const rest = (body as Record<string, unknown>)[key];
  if (!Array.isArray(rest) || rest.length > 0) throw new BodyShapeError(`"${key}" appears twice in the response`, key);
  if (odata) {
    const converted = finish(converter!, columns ?? []);
    return { columns: converted.columns, rows: converted.rows, meta: { ...meta, kind: "dataset", format: "odata" } };
  }
  const envelope = body as Record<string, unknown>;
  const final = columnsFromDefs(envelope.columns, columns);
  if (!converter) {
    converter = makeConverter(final, "rows");
    for (const rows of waiting) converter.add(rows);
    waiting = [];
  } else if (JSON.stringify(declared) !== JSON.stringify(final)) {
    throw new BodyShapeError("`columns` appears twice in the export, with different definitions", "columns");
  }
  if (envelope.row_count !== undefined && envelope.row_count !== null && envelope.row_count !== scanner.rows) {
    throw new BodyShapeError(`row_count says ${shownValue(envelope.row_count)} but ${scanner.rows.toLocaleString("en-US")} rows were received`, "row_count");
  }
  return exportTable(envelope, finish(converter, final), meta);
}
