/**
 * Turns the three dataset forms (JSON export, CSV, OData) into the one tabular model.
 *
 * Rules shared by all forms, so they yield identical tables: column order and types come from the
 * service's column definitions; cells go through `toCell`; a row object's fields that no column
 * describes are appended as extra columns (typed from their values) rather than dropped.
 */
import type { CellValue, Column, ColumnType, Table, TableMeta } from "../table/model";
import type { TableSink } from "../table/sink";
import { CellError, columnTypeFromEdm as typeFromSource, inferColumnType, toCell } from "./values";
import { Utf8Chunks } from "./utf8";

/** A body that does not have the documented shape. `path` locates the offending part. */
export class BodyShapeError extends Error {
  constructor(
    message: string,
    readonly path: string,
    /**
     * `malformed_body` (not JSON / not CSV), `schema_mismatch` (valid syntax, wrong shape) or
     * `unexpected_content` (another document than the export: an error body, another dataset;
     * the message is then a whole sentence on its own).
     */
    readonly kind: "malformed_body" | "schema_mismatch" | "unexpected_content" = "schema_mismatch",
  ) {
    super(message);
  }
}

/**
 * Deepest nesting of objects and lists accepted in a JSON body, the outermost counting as 1. An
 * export row sits at depth 3 (`{ "rows": [ { ... } ] }`), so this leaves 61 levels for a cell's
 * value, far more than any dataset has; what is deeper is refused before anything recursive
 * (`JSON.stringify` of a cell, redaction of error details, another engine's `JSON.parse`) could
 * overflow the stack on it.
 */
export const MAX_JSON_DEPTH = 64;

/** The refusal of a body nested deeper than {@link MAX_JSON_DEPTH}, at `offset` in the body. */
export function tooDeep(offset: number): BodyShapeError {
  return new BodyShapeError(`it is nested deeper than ${MAX_JSON_DEPTH} levels`, `offset ${offset}`, "malformed_body");
}

/**
 * Where `text` first nests deeper than {@link MAX_JSON_DEPTH} (offset of the opening bracket), or
 * -1. One pass, no recursion; string contents are skipped.
 */
export function jsonTooDeepAt(text: string): number {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // Skip the string (a backslash escapes the next character).
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) return i;
    } else if (c === 125 || c === 93) depth--;
  }
  return -1;
}

// A JSON integer literal beyond 2^53 (not part of a fraction or exponent) - see parseJsonLossless.
const BIG_INT_OR_STRING = /"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])-?\d{16,}(?![\d.eE])/g;

function hasUnsafeIntegerLiteral(text: string): boolean {
  const re = new RegExp(BIG_INT_OR_STRING.source, "g");
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) if (m[0].charCodeAt(0) !== 34 && !Number.isSafeInteger(Number(m[0]))) return true;
  return false;
}

/**
 * `JSON.parse`, except that integer literals too large for a double are kept as their exact digit
 * strings (Int64 ids beyond 2^53 would otherwise be silently rounded, and the JSON form would
 * disagree with the CSV form of the same dataset).
 *
 * @throws BodyShapeError (`malformed_body`) when the text is not JSON, or is nested deeper than
 *   {@link MAX_JSON_DEPTH}.
 */
export function parseJsonLossless(text: string): unknown {
  const deep = jsonTooDeepAt(text);
  if (deep >= 0) throw tooDeep(deep);
  let src = text;
  if (/\d{16}/.test(text) && hasUnsafeIntegerLiteral(text)) {
    // Only now is a second copy of the body made; bodies that send big integers as strings
    // (the IEEE754Compatible convention) never pay for it.
    src = text.replace(BIG_INT_OR_STRING, (m) => (m.charCodeAt(0) === 34 || Number.isSafeInteger(Number(m)) ? m : `"${m}"`));
  }
  return parseJsonText(src);
}

/**
 * `JSON.parse` with the error as a {@link BodyShapeError} (`malformed_body`, path `offset N`). For
 * text whose integers beyond 2^53 are already quoted (see `jsonRows.ts`); else use
 * {@link parseJsonLossless}.
 */
export function parseJsonText(src: string): unknown {
  try {
    return JSON.parse(src);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = /position (\d+)/.exec(msg);
    throw new BodyShapeError(`the response is not valid JSON (${msg.replace(/\s*in JSON at position \d+.*$/, "")})`, pos ? `offset ${pos[1]}` : "(body)", "malformed_body");
  }
}

/**
 * A response body as text, decoded chunk by chunk (UTF-8, invalid bytes replaced, a BOM dropped:
 * what `Response.text()` does). `text()` first gathers every chunk and then decodes the whole buffer,
 * so for a moment it holds the body three times (chunks, joined bytes, text); here each chunk is
 * released once decoded and the peak is the decoded pieces plus the joined text.
 */
export async function readBodyText(response: Response): Promise<string> {
  if (!response.body) return response.text();
  const reader = response.body.getReader();
  const decoder = new Utf8Chunks();
  const pieces: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pieces.push(decoder.decode(value));
    }
    pieces.push(decoder.decode());
  } finally {
    reader.releaseLock();
  }
  return pieces.length === 1 ? pieces[0] : pieces.join("");
}

/**
 * A copy of a string that shares no memory with the text it was cut from. V8 represents a substring
 * of 13 or more characters as a view on its parent, so one CSV cell kept in the table would keep its
 * whole decoded chunk alive; shorter substrings are copies already.
 *
 * `(" " + s).slice(1)` flattens the joined string into a new one and returns a view on that copy,
 * never on the chunk (test/service/bodyText.test.ts keeps 100 cells cut from 1 MB chunks and checks
 * that the chunks are freed). Measured against a JSON round trip, which makes a plain new string (48
 * bytes each against 80 here): 184 ns against 471 ns per 20-character cell warm, and at 10,000 CSV
 * rows the whole import 93–100 ms against 103–111 ms (2026-11-29), for 32 bytes more per long cell.
 * `replace(/$/, "")` and `normalize()` return the view itself, which detaches nothing.
 */
export function detachString(s: string): string {
  return s.length < 13 ? s : (" " + s).slice(1);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** One wire value converted for its column; a value that does not fit is a {@link BodyShapeError} at `path`. */
export function cellOf(value: unknown, col: Column, path: string): CellValue {
  try {
    return toCell(value, col.type);
  } catch (e) {
    if (e instanceof CellError) throw new BodyShapeError(`column "${col.name}": ${e.message}`, path);
    throw e;
  }
}

/** OData annotations (`@odata.etag`, `x@odata.type`) are not data columns. */
export const isODataAnnotation = (k: string): boolean => k.startsWith("@") || k.includes("@odata.");

/**
 * Converts row objects (or arrays aligned with the columns) into table rows, batch by batch, so a
 * large export never exists twice: each source row is released (its slot set to null) as soon as it
 * is converted. Fields no column describes become extra columns at the end, typed from all their
 * values once every row has been seen. `skipKey` drops annotation keys (OData `@odata.*`).
 */
export class RowConverter {
  readonly rows: CellValue[][] = [];
  /** Rows converted so far (kept or handed to the sink). */
  count = 0;
  /**
   * When set, converted rows go here instead of into `rows`, and fields no column describes are
   * ignored (they could only be typed after the last row, and a streaming consumer works on the
   * declared columns).
   */
  sink: ((row: CellValue[]) => void) | null = null;
  /** With a sink: told of a field no column describes (`TableSink.extraField`), which is otherwise ignored. */
  onExtra: ((name: string) => void) | null = null;
  readonly columns: Column[];
  /** Column index by name (extra fields included once seen). */
  readonly index: Map<string, number>;
  private readonly extras: Array<{ name: string; values: unknown[] }> = [];

  constructor(
    baseColumns: Column[],
    readonly rowsPath: string,
    readonly skipKey: (k: string) => boolean = () => false,
  ) {
    this.columns = baseColumns.map((c) => ({ ...c }));
    this.index = new Map(this.columns.map((c, i) => [c.name, i]));
  }

  /** Converts a batch of source rows; their slots in `raws` are set to null. */
  add(raws: unknown[]): void {
    const cols = this.columns;
    const base = cols.length;
    const sink = this.sink;
    for (let i = 0; i < raws.length; i++) {
      const r = this.count;
      const raw = raws[i];
      raws[i] = null;
      const out = new Array<CellValue>(base);
      if (Array.isArray(raw)) {
        if (raw.length !== base) throw new BodyShapeError(`row ${r} has ${raw.length} cells, expected ${base}`, `${this.rowsPath}[${r}]`);
        for (let c = 0; c < base; c++) out[c] = cellOf(raw[c], cols[c], `${this.rowsPath}[${r}][${c}]`);
      } else if (isObject(raw)) {
        for (let c = 0; c < base; c++) {
          const name = cols[c].name;
          out[c] = cellOf(raw[name], cols[c], `${this.rowsPath}[${r}].${name}`);
        }
        if (sink) {
          if (this.onExtra) for (const k of Object.keys(raw)) if (!this.index.has(k) && !this.skipKey(k)) this.onExtra(k);
        } else for (const k of Object.keys(raw)) {
          let j = this.index.get(k);
          if (j === undefined) {
            if (this.skipKey(k)) continue;
            j = base + this.extras.length;
            this.index.set(k, j);
            this.extras.push({ name: k, values: [] });
          }
          if (j >= base) this.extras[j - base].values[r] = raw[k];
        }
      } else {
        throw new BodyShapeError(`row ${r} is ${raw === null ? "null" : typeof raw}, not an object`, `${this.rowsPath}[${r}]`);
      }
      this.count++;
      if (sink) sink(out);
      else this.rows.push(out);
    }
  }

  /**
   * One row converted elsewhere (`jsonFast.ts`: straight from the body's text), every cell already
   * through {@link cellOf} and no field beyond the columns: counted and handed on like `add`'s rows.
   */
  emit(out: CellValue[]): void {
    this.count++;
    if (this.sink) this.sink(out);
    else this.rows.push(out);
  }

  /** The columns (extra ones typed now) and rows; call once, after the last batch. */
  finish(): { columns: Column[]; rows: CellValue[][] } {
    const columns = this.columns;
    for (const extra of this.extras) {
      const col: Column = { name: extra.name, type: inferColumnType(extra.values) };
      columns.push(col);
      for (let r = 0; r < this.rows.length; r++) this.rows[r].push(cellOf(extra.values[r], col, `${this.rowsPath}[${r}].${extra.name}`));
    }
    this.extras.length = 0;
    return { columns, rows: this.rows };
  }
}

/** Converts a whole list of source rows (see {@link RowConverter}). */
function convertRows(rawRows: unknown[], baseColumns: Column[], rowsPath: string, skipKey?: (k: string) => boolean): { columns: Column[]; rows: CellValue[][] } {
  const converter = new RowConverter(baseColumns, rowsPath, skipKey);
  converter.add(rawRows);
  return converter.finish();
}

/** Column definitions of a JSON export (`{ name, type, nullable }` or bare names); unknown types → text. */
export function columnsFromDefs(defs: unknown, fallback: Column[] | undefined): Column[] {
  if (!Array.isArray(defs)) throw new BodyShapeError("`columns` is missing or not a list", "columns");
  const fb = new Map((fallback ?? []).map((c) => [c.name, c]));
  return defs.map((d, i) => {
    if (typeof d === "string") return fb.get(d) ? { ...fb.get(d)! } : { name: d, type: "text" as const };
    if (!isObject(d) || typeof d.name !== "string" || !d.name) throw new BodyShapeError(`column ${i} has no name`, `columns[${i}].name`);
    const sourceType = typeof d.type === "string" ? d.type : fb.get(d.name)?.sourceType;
    const col: Column = { name: d.name, type: sourceType ? typeFromSource(sourceType) : (fb.get(d.name)?.type ?? "text") };
    if (sourceType) col.sourceType = sourceType;
    if (typeof d.nullable === "boolean") col.nullable = d.nullable;
    return col;
  });
}

/** Export metadata that does not come from the body. */
export type MetaInput = Omit<TableMeta, "kind" | "format" | "key"> & { key: string };

/** An untrusted body value as error text: scalars as they are, anything else as JSON. */
export function shownValue(v: unknown): string {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" || typeof v === "bigint" || v === null || v === undefined ? String(v) : JSON.stringify(v);
}

/**
 * Builds a table from a JSON export body (`dataset_key`, `schema_version`, `generated_at`,
 * `row_count`, `columns`, `rows`).
 */
export function tableFromJsonExport(body: unknown, meta: MetaInput, manifestColumns?: Column[]): Table {
  if (!isObject(body)) throw new BodyShapeError("the export is not a JSON object", "(root)");
  refuseErrorBody(body, "rows", "JSON export", meta.key);
  if (!Array.isArray(body.rows)) throw new BodyShapeError("`rows` is missing or not a list", "rows");
  const columns = columnsFromDefs(body.columns, manifestColumns);
  if (body.row_count !== undefined && body.row_count !== null && body.row_count !== body.rows.length) {
    throw new BodyShapeError(`row_count says ${shownValue(body.row_count)} but ${body.rows.length.toLocaleString("en-US")} rows were received`, "row_count");
  }
  return exportTable(body, convertRows(body.rows, columns, "rows"), meta);
}

/**
 * An error body sent with status 200 (`{ "error": ..., "message": ... }` and no rows) is named as
 * such, not reported as a missing `rows` list. Only its `error` code is quoted, clipped.
 */
function refuseErrorBody(body: Record<string, unknown>, rowsKey: string, form: string, key: string): void {
  if (rowsKey in body) return;
  const e = body.error;
  const code = typeof e === "string" ? e : isObject(e) && typeof e.code === "string" ? e.code : undefined;
  if (code === undefined) return;
  const shown = code.length > 60 ? `${code.slice(0, 60)}…` : code;
  throw new BodyShapeError(`The service answered with a JSON error body ("${shown}") and status 200, not the ${form} of "${key}".`, "error", "unexpected_content");
}

/** The table of a JSON export whose rows are converted (`body` is the envelope: key, schema, dates). */
export function exportTable(body: Record<string, unknown>, converted: { columns: Column[]; rows: CellValue[][] }, meta: MetaInput): Table {
  if (typeof body.dataset_key === "string" && body.dataset_key !== meta.key) {
    const shown = body.dataset_key.length > 60 ? `${body.dataset_key.slice(0, 60)}…` : body.dataset_key;
    throw new BodyShapeError(`The service answered the request for "${meta.key}" with the export of "${shown}" (its dataset_key).`, "dataset_key", "unexpected_content");
  }
  return {
    columns: converted.columns,
    rows: converted.rows,
    meta: {
      ...meta,
      kind: "dataset",
      format: "json",
      schemaVersion: meta.schemaVersion ?? (body.schema_version !== undefined && body.schema_version !== null ? shownValue(body.schema_version) : null),
      generatedAt: meta.generatedAt ?? (typeof body.generated_at === "string" ? body.generated_at : null),
    },
  };
}

/** Builds a table from an OData envelope (`@odata.context`, `value`). Column types come from `$metadata`. */
export function tableFromOData(body: unknown, meta: MetaInput, columns: Column[]): Table {
  if (!isObject(body)) throw new BodyShapeError("the OData response is not a JSON object", "(root)");
  refuseErrorBody(body, "value", "OData collection", meta.key);
  if (!Array.isArray(body.value)) throw new BodyShapeError("`value` is missing or not a list", "value");
  const converted = convertRows(body.value, columns, "value", isODataAnnotation);
  return { columns: converted.columns, rows: converted.rows, meta: { ...meta, kind: "dataset", format: "odata" } };
}

/**
 * Incremental builder for the CSV form: the first record is the header, each further record a
 * row. Types come from the manifest's columns (CSV carries none); unknown names are text.
 *
 * The header must hold every column the manifest lists for the dataset (a header without them is
 * another document: a proxy's page, another dataset). Columns the manifest does not list are kept,
 * as in the JSON form, because a newly published custom field can reach the export first.
 */
export class CsvTableBuilder {
  readonly rows: CellValue[][] = [];
  /** Rows read so far (kept or handed to the sink). */
  count = 0;
  private columns: Column[] | null = null;
  /** The last text value seen in each column. */
  private readonly previous: Array<string | undefined> = [];
  /** Each column's type, once the header is read. */
  private types: ColumnType[] | null = null;
  /** The sink drops its rows soon (`TableSink.transient`) and types dates as they arrive: their text needs no copy. */
  private readonly transient: boolean;

  /**
   * With `sink`, the header's columns go to `sink.begin`, each row to `sink.row` instead of into
   * `rows`, and `finish` returns what `sink.end` gives.
   */
  constructor(
    private readonly typed: Column[] | undefined,
    /** Dataset key, for the message when the header is not the dataset's. */
    private readonly key = "",
    private readonly sink?: TableSink,
  ) {
    this.transient = sink?.transient === true;
  }

  /**
   * Adds one CSV record (record 0 is the header). `joined`: indices of fields that are new strings
   * (the parser's, see `CsvRecordHandler`), which need no copy.
   */
  add(fields: string[], recordIndex: number, joined: readonly number[] = []): void {
    if (this.columns === null) {
      const byName = new Map((this.typed ?? []).map((c) => [c.name, c]));
      const seen = new Set<string>();
      this.columns = fields.map((name, i) => {
        if (name === "") throw new BodyShapeError(`header cell ${i + 1} is empty`, "line 1");
        if (seen.has(name)) throw new BodyShapeError(`the header repeats the column "${name}"`, "line 1");
        seen.add(name);
        const t = byName.get(name);
        return t ? { ...t } : { name, type: "text" as const };
      });
      const missing = (this.typed ?? []).filter((c) => !seen.has(c.name)).map((c) => c.name);
      if (missing.length > 0) {
        const list = (names: string[]) => names.slice(0, 5).map((n) => `"${n.length > 40 ? `${n.slice(0, 40)}…` : n}"`).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");
        throw new BodyShapeError(
          `The CSV answer for "${this.key}" does not have the dataset's columns: its header lacks ${list(missing)} (the manifest lists ${this.typed!.length}; the header has ${list(fields)}). It is another document, such as another dataset or a page from a proxy.`,
          "line 1",
          "unexpected_content",
        );
      }
      // Each cell is converted as it is read (`toCell`): the sink need not check types again.
      this.sink?.begin(this.columns, { converted: true });
      return;
    }
    const cols = this.columns;
    // A blank line in a multi-column CSV carries no row (and is not an empty single-column row).
    if (fields.length === 1 && fields[0] === "" && cols.length > 1) return;
    if (fields.length !== cols.length) {
      throw new BodyShapeError(`record ${recordIndex} has ${fields.length} fields, the header has ${cols.length}`, `record ${recordIndex}`);
    }
    const out = new Array<CellValue>(cols.length);
    const previous = this.previous;
    const types = (this.types ??= cols.map((col) => col.type));
    for (let c = 0; c < cols.length; c++) {
      // The error's path is built only when a cell fails (a template per cell cost ~10 % of a CSV import).
      let v: CellValue;
      const field = fields[c];
      const type = types[c];
      try {
        v = type === "text" ? (field === "" ? null : field) : toCell(field, type);
      } catch (e) {
        if (e instanceof CellError) throw new BodyShapeError(`column "${cols[c].name}": ${e.message}`, `record ${recordIndex}, column "${cols[c].name}"`);
        throw e;
      }
      if (typeof v !== "string") out[c] = v;
      // Exports list a project's periods one after another, so a text cell often repeats the one
      // above it: share that string (as JSON.parse shares short repeated strings).
      else if (v === previous[c]) out[c] = previous[c] as string;
      // Strings kept as received are cut from the decoded chunk and would keep all of it alive for
      // as long as the row lives: the whole body for a table kept whole, and a block's worth of
      // pieces (~17 MB at 4 MB requests, see jsonFast.ts) for a sink that drops its rows soon. Such a
      // sink (the workbook writer) makes a date's text a serial number as the row arrives: not copied.
      // A joined field is new already: copying a 50 MB cell again cost five times the parse.
      else out[c] = previous[c] = (joined.length > 0 && joined.includes(c)) || (this.transient && (type === "date" || type === "datetime")) ? v : detachString(v);
    }
    this.count++;
    if (this.sink) this.sink.row(out);
    else this.rows.push(out);
  }

  /** The finished table. An empty body (no header) is a shape error: even zero rows have a header. */
  finish(meta: MetaInput): Table {
    if (this.columns === null) throw new BodyShapeError("the CSV has no header row", "line 1", "malformed_body");
    if (this.sink) {
      const done = this.sink.end();
      return { columns: done.columns, rows: done.rows, meta: { ...meta, kind: "dataset", format: "csv" } };
    }
    return { columns: this.columns, rows: this.rows, meta: { ...meta, kind: "dataset", format: "csv" } };
  }
}

/** One row builder kept for the life of the module, for the reason `KEEP_PARSER_SHAPE` gives (csv.ts). */
export const KEEP_BUILDER_SHAPE = new CsvTableBuilder(undefined, "");
