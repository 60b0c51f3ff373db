/**
 * CSV reading and writing (RFC 4180: comma, double-quote quoting, CRLF rows, quoted cells may hold
 * commas, quotes and line breaks).
 *
 * Reading is incremental: the response body is decoded chunk by chunk and fed to papaparse's
 * streaming parser, which hands over one row at a time. Only web-platform APIs are used
 * (`ReadableStream`, `TextDecoder`), so the same code runs in the task pane and in Node; the raw
 * body is never held in full.
 */
import Papa from "papaparse";

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
 * The minimal Node-readable look-alike papaparse's stream reader needs (`readable`, `read`, `on`,
 * `removeListener`, `pause`, `resume`). Driving papaparse through it keeps its chunk-boundary
 * handling (rows and quoted line breaks split across chunks) without importing Node's `stream`.
 */
class PushSource {
  readonly readable = true;
  private readonly handlers: Record<string, Array<(arg?: unknown) => void>> = { data: [], end: [], error: [] };
  read(): null {
    return null;
  }
  on(event: string, fn: (arg?: unknown) => void): this {
    (this.handlers[event] ??= []).push(fn);
    return this;
  }
  removeListener(event: string, fn: (arg?: unknown) => void): this {
    this.handlers[event] = (this.handlers[event] ?? []).filter((f) => f !== fn);
    return this;
  }
  pause(): void {
    /* Parsing is synchronous within each push; there is nothing to pause. */
  }
  resume(): void {
    /* See pause(). */
  }
  emit(event: "data" | "end" | "error", arg?: unknown): void {
    for (const fn of [...(this.handlers[event] ?? [])]) fn(arg);
  }
}

/** Receives each parsed record (header included, as record 0). Throwing stops parsing. */
export type CsvRecordHandler = (fields: string[], recordIndex: number) => void;

/**
 * Incremental CSV parser: `push` decoded text as it arrives, then `end`. Records are delivered to
 * the handler synchronously. The line ending (CRLF, as the spec says, or a lone LF from a lenient
 * deployment) is detected from the first line break outside quotes.
 */
export class CsvStreamParser {
  private started = false;
  private head = "";
  private source?: PushSource;
  private parser?: { abort(): void };
  /** The first error of the parse, boxed: anything can be thrown, and `undefined` means none. */
  private failure: { error: unknown } | undefined;
  private records = 0;
  private finished = false;

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
      this.head += text;
      const nl = detectNewline(this.head);
      if (nl === null) return;
      this.start(nl);
      const first = this.head.replace(/^\uFEFF/, "");
      this.head = "";
      this.source!.emit("data", first);
    } else {
      this.source!.emit("data", text);
    }
    this.rethrow();
  }

  /** Signals the end of input and flushes the last record. */
  end(): void {
    this.rethrow();
    if (!this.started) {
      this.start("\r\n");
      const first = this.head.replace(/^\uFEFF/, "");
      this.head = "";
      if (first) this.source!.emit("data", first);
    }
    this.source!.emit("end");
    this.rethrow();
    if (!this.finished) throw new CsvSyntaxError("the CSV ended unexpectedly", this.records + 1);
  }

  private rethrow(): void {
    if (this.failure !== undefined) throw this.failure.error;
  }

  private start(newline: "\r\n" | "\n"): void {
    this.started = true;
    this.source = new PushSource();
    // papaparse's typings only admit Node streams here; PushSource implements what it calls.
    const parse = Papa.parse as unknown as (input: unknown, config: Papa.ParseConfig<string[]> & { error?: (e: Error) => void }) => void;
    parse(this.source, {
      delimiter: ",",
      newline,
      quoteChar: '"',
      escapeChar: '"',
      header: false,
      dynamicTyping: false,
      skipEmptyLines: false,
      step: (results: Papa.ParseStepResult<string[]>, parser: Papa.Parser) => {
        this.parser = parser;
        if (this.failure !== undefined) return;
        try {
          const err = results.errors.find((e) => e.code === "MissingQuotes" || e.code === "InvalidQuotes");
          if (err) throw new CsvSyntaxError(`${err.message.replace(/\.$/, "")}`, this.records + 1);
          // In streaming mode papaparse does not report the final line break as an empty record, so
          // an empty record here is real data (a single-column row holding an empty cell).
          this.onRecord(results.data, this.records++);
        } catch (e) {
          this.failure = { error: e };
          parser.abort();
        }
      },
      complete: () => {
        this.finished = true;
      },
      error: (e: Error) => {
        if (this.failure === undefined) this.failure = { error: e };
      },
    });
  }

}

/** The line ending of a CSV, from its first line break outside quotes; null until one is seen. */
function detectNewline(text: string): "\r\n" | "\n" | null {
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) inQuotes = !inQuotes;
    else if (c === 10 && !inQuotes) return i > 0 && text.charCodeAt(i - 1) === 13 ? "\r\n" : "\n";
  }
  return null;
}

/**
 * Reads a byte stream as UTF-8 CSV, record by record, without holding the whole body.
 * Rejects on a syntax error, on invalid UTF-8 or when `signal` aborts.
 */
export async function parseCsvStream(stream: ReadableStream<Uint8Array>, onRecord: CsvRecordHandler, signal?: AbortSignal): Promise<void> {
  const parser = new CsvStreamParser(onRecord);
  const reader = stream.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(decodeUtf8(decoder, value, records(parser)));
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

function decodeUtf8(decoder: InstanceType<typeof TextDecoder>, bytes: Uint8Array | undefined, recordsSoFar: number): string {
  try {
    return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
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
