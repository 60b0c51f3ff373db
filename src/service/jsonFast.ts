/**
 * Rows of a JSON export or OData collection parsed straight from the body's text into model rows,
 * one pass, no intermediate objects (issue #38).
 *
 * The batch reader (`jsonRows.ts`) scans every character in JavaScript to find where a batch of rows
 * may be cut, has `JSON.parse` build an object per row, and then converts each object's fields by
 * name: at 200,000 rows × 12 that was 60 % of an import's own CPU time, and the objects were most of
 * its garbage. Here each row object is read field by field: a key is matched against the column the
 * export's own order says comes next (`startsWith`, native), a string value is found with `indexOf`,
 * a number's digits are read where they are, and the cell goes through the same conversion
 * (`cellOf`) as every other path, with the common cases (text, a safe integer, a finite number, a
 * boolean, a canonical date or date-time) decided without it.
 *
 * Anything else in a row (a nested value, an escaped key, a field no column describes, an element
 * that is not an object, anything that is not JSON) sends THAT row to the general path: its text is
 * cut out (strings and nesting respected) and read with `parseJsonLossless` and the converter's
 * `add`, so extra fields, array rows and every error are exactly the batch reader's, with the error's
 * offset in the whole body.
 *
 * Strings are copied out of the body's text (`detachString`): a slice of 13 or more characters
 * would be a view that keeps its whole piece of the body alive for as long as the row lives. The
 * workbook writer holds one block of rows, ~23,000 at 4 MB, and their views kept ~17 MB of decoded
 * pieces alive (two bytes a character once a piece holds one non-Latin-1 character): measured in a
 * heap snapshot of a whole-sheet import (#38), whose peak RSS fell from ~400 MB to under 300 MB
 * with the copy (the bench's median of three processes). This path is used only for a sink that
 * drops its rows soon (`TableSink.transient`); a table kept whole uses the batch reader.
 */
import type { CellValue, Column } from "../table/model";
import { BodyShapeError, MAX_JSON_DEPTH, RowConverter, cellOf, detachString, parseJsonLossless, tooDeep } from "./dataset";
import { isCanonicalDate, isCanonicalUtc } from "./values";

/** JSON's structural character codes (the batch reader, `jsonRows.ts`, keeps its own: see there). */
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const MINUS = 45;
const DOT = 46;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const LOWER_E = 101;
const UPPER_E = 69;
const PLUS = 43;

/** Characters a JSON string holds only escaped: a control character, or the escape itself. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
const NEEDS_DECODING = /[\u0000-\u001f\\]/;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Where {@link FastRows.parse} stopped. */
export interface FastStop {
  /** Index in the text of the first character not consumed (a row not complete yet, or the `]`). */
  next: number;
  /** True when the rows array closed: `next` is its `]`. */
  closed: boolean;
  /** Rows read by this call. */
  rows: number;
}

/** A value the fast path does not read: the row goes to the general path. */
const SLOW = Symbol("slow");
/** The text ended inside the row: wait for more. */
const MORE = Symbol("more");
/** `convert`'s answer for a value its column does not take (the general path names the error). */
const BAD = Symbol("bad");

const enum Kind {
  Text,
  Integer,
  Decimal,
  Boolean,
  Date,
  DateTime,
}

const KIND: Record<Column["type"], Kind> = { text: Kind.Text, integer: Kind.Integer, decimal: Kind.Decimal, boolean: Kind.Boolean, date: Kind.Date, datetime: Kind.DateTime };

/** The rows-array reader for one converter (see the module comment). */
export class FastRows {
  private readonly n: number;
  /** Each column's key as it appears in the text (quoted). */
  private readonly quotedKeys: string[];
  private readonly kinds: Kind[];
  private readonly cols: Column[];
  /** An element, not a comma or the end, comes next (at the start, and after a comma). */
  private expectElement = true;
  /** The last thing read was a comma. */
  private afterComma = false;

  constructor(private readonly converter: RowConverter) {
    this.cols = converter.columns.slice();
    this.n = this.cols.length;
    this.quotedKeys = this.cols.map((c) => JSON.stringify(c.name));
    this.kinds = this.cols.map((c) => KIND[c.type]);
  }

  /**
   * Reads rows from `text[i]` on (just after the rows array's `[`, or where the last call stopped).
   * `base` is the offset of `text[0]` in the whole body, for error positions.
   * @throws BodyShapeError for what is not JSON, or a cell that does not fit its column.
   */
  parse(text: string, i: number, base: number): FastStop {
    const len = text.length;
    const before = this.converter.count;
    const stop = (next: number, closed: boolean): FastStop => ({ next, closed, rows: this.converter.count - before });
    for (;;) {
      let j = i;
      while (j < len && isSpace(text.charCodeAt(j))) j++;
      if (j >= len) return stop(i, false);
      const c = text.charCodeAt(j);
      if (!this.expectElement) {
        if (c === CLOSE_BRACKET) return stop(j, true);
        if (c !== COMMA) throw new BodyShapeError("the response is not valid JSON (a comma is missing between two elements of a list)", `offset ${base + j}`, "malformed_body");
        this.expectElement = true;
        this.afterComma = true;
        i = j + 1;
        continue;
      }
      if (c === CLOSE_BRACKET) {
        if (this.afterComma) throw new BodyShapeError("the response is not valid JSON (a list ends with a comma)", `offset ${base + j}`, "malformed_body");
        return stop(j, true);
      }
      if (c === COMMA) throw new BodyShapeError("the response is not valid JSON (a list holds an empty element)", `offset ${base + j}`, "malformed_body");
      const end = c === OPEN_BRACE ? this.fastRow(text, j) : SLOW;
      if (end === MORE) return stop(j, false);
      if (end === SLOW) {
        const cut = elementEnd(text, j, base);
        if (cut < 0) return stop(j, false);
        this.slowRow(text, j, cut, base);
        i = cut;
      } else i = end;
      this.expectElement = false;
      this.afterComma = false;
    }
  }

  /**
   * One row object at `text[at]` (`{`), read field by field: the index just after its `}`, or
   * {@link SLOW} / {@link MORE}.
   */
  private fastRow(text: string, at: number): number | typeof SLOW | typeof MORE {
    const len = text.length;
    const n = this.n;
    const out = new Array<CellValue>(n);
    for (let k = 0; k < n; k++) out[k] = null;
    let j = at + 1;
    let expect = 0;
    while (j < len && isSpace(text.charCodeAt(j))) j++;
    if (j >= len) return MORE;
    if (text.charCodeAt(j) === CLOSE_BRACE) {
      this.converter.emit(out);
      return j + 1;
    }
    for (;;) {
      // --- the key: the column the export's order says comes next, else looked up ---
      if (text.charCodeAt(j) !== QUOTE) return j >= len ? MORE : SLOW;
      let col: number;
      // The key the export's order says comes next, compared where it must start. `startsWith` looks
      // at the key's length only: `indexOf(key, j) === j` was marginally faster when the guess is
      // right but searched the whole rest of the piece when it is not (a row that leaves a key out),
      // which made such a body quadratic (review of #38, R9).
      const guess = expect < n ? this.quotedKeys[expect] : null;
      if (guess !== null && text.startsWith(guess, j)) {
        col = expect;
        j += guess.length;
      } else {
        const e = text.indexOf('"', j + 1);
        if (e < 0) return MORE;
        const key = text.slice(j + 1, e);
        if (key.indexOf("\\") >= 0) return SLOW;
        const found = this.converter.index.get(key);
        if (found !== undefined && found < n) col = found;
        else if (this.converter.skipKey(key)) col = -1; // an OData annotation: read and dropped
        else return SLOW; // a field no column describes: the general path keeps or ignores it
        j = e + 1;
      }
      while (j < len && isSpace(text.charCodeAt(j))) j++;
      if (j >= len) return MORE;
      if (text.charCodeAt(j) !== COLON) return SLOW;
      j++;
      while (j < len && isSpace(text.charCodeAt(j))) j++;
      if (j >= len) return MORE;
      // --- the value ---
      const c = text.charCodeAt(j);
      let value: unknown;
      if (c === QUOTE) {
        // The closing quote: the next one not escaped (an odd run of backslashes before it escapes it).
        let e = j;
        for (;;) {
          e = text.indexOf('"', e + 1);
          if (e < 0) return MORE;
          let b = e - 1;
          while (text.charCodeAt(b) === BACKSLASH) b--;
          if ((e - 1 - b) % 2 === 0) break;
        }
        let s = text.slice(j + 1, e);
        if (NEEDS_DECODING.test(s)) {
          try {
            s = JSON.parse(text.slice(j, e + 1)) as string;
          } catch {
            return SLOW; // not a valid JSON string: the general path names the error
          }
        }
        value = s;
        j = e + 1;
      } else if ((c >= DIGIT_0 && c <= DIGIT_9) || c === MINUS) {
        const e = numberEnd(text, j);
        if (e === -2) return SLOW;
        if (e < 0) return MORE;
        value = numberValue(text, j, e);
        j = e;
      } else if (c === 116 /* t */ || c === 102 /* f */ || c === 110 /* n */) {
        const word = c === 116 ? "true" : c === 102 ? "false" : "null";
        if (len - j < word.length + 1) return MORE;
        if (!text.startsWith(word, j)) return SLOW;
        value = c === 116 ? true : c === 102 ? false : null;
        j += word.length;
      } else return SLOW; // a nested value, or not JSON
      if (col >= 0) {
        const cell = this.convert(value, col);
        // A value its column does not take: the general path reads the row whole, so a key given twice
        // is judged by its last value, as `JSON.parse` and the batch reader judge it (R10), and a real
        // error is named by the same code as everywhere else.
        if (cell === BAD) return SLOW;
        out[col] = cell;
        expect = col + 1;
      }
      // --- a comma and the next key, or the end of the row ---
      while (j < len && isSpace(text.charCodeAt(j))) j++;
      if (j >= len) return MORE;
      const d = text.charCodeAt(j);
      if (d === CLOSE_BRACE) {
        this.converter.emit(out);
        return j + 1;
      }
      if (d !== COMMA) return SLOW;
      j++;
      while (j < len && isSpace(text.charCodeAt(j))) j++;
      if (j >= len) return MORE;
    }
  }

  /** A value read from the text, as the column's model value (the common cases without `cellOf`). */
  private convert(v: unknown, col: number): CellValue | typeof BAD {
    if (v === null || v === "") return null;
    switch (this.kinds[col]) {
      case Kind.Text:
        // Copied out of the body (see the module's comment); a date's text is not: the writer makes it
        // a serial number as the row arrives, and copying it first was a third of what a row promoted.
        if (typeof v === "string") return detachString(v);
        break;
      case Kind.Integer:
        if (typeof v === "number" && Number.isSafeInteger(v)) return v;
        break;
      case Kind.Decimal:
        if (typeof v === "number" && Number.isFinite(v)) return v === 0 ? 0 : v;
        break;
      case Kind.Boolean:
        if (typeof v === "boolean") return v;
        break;
      case Kind.Date:
        if (typeof v === "string" && isCanonicalDate(v)) return v;
        break;
      case Kind.DateTime:
        if (typeof v === "string" && isCanonicalUtc(v)) return v;
        break;
    }
    try {
      // Whatever else stays text (an integer beyond 2^53 is kept as its exact digits) is copied too.
      const cell = cellOf(v, this.cols[col], `${this.converter.rowsPath}[${this.converter.count}].${this.cols[col].name}`);
      return typeof cell === "string" ? detachString(cell) : cell;
    } catch {
      return BAD;
    }
  }

  /**
   * The general path for the element `text[at … end)`: read as the batch reader reads a batch
   * (`parseJsonLossless`, the converter's `add`), so its fields, its shape and its errors are the
   * batch reader's, the error's offset in the whole body.
   */
  private slowRow(text: string, at: number, end: number, base: number): void {
    let value: unknown;
    try {
      value = parseJsonLossless(text.slice(at, end));
    } catch (e) {
      if (e instanceof BodyShapeError) {
        const m = /^offset (\d+)$/.exec(e.path);
        throw m ? new BodyShapeError(e.message, `offset ${base + at + Number(m[1])}`, e.kind) : e;
      }
      throw e;
    }
    this.converter.add([value]);
  }
}

/** Exact powers of ten a double holds (10^0 … 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * The JSON number `text[from … to)` (well formed: {@link numberEnd}) as `JSON.parse` reads it. Up to
 * 15 significant digits and no exponent, the digits make an integer a double holds exactly, and
 * dividing it by an exact power of ten rounds correctly once (Clinger's fast path): the same double
 * as `Number()`, without the copy `Number(text.slice(…))` makes. An integer literal a double cannot
 * hold keeps its digits, as `parseJsonLossless` quotes it.
 */
function numberValue(text: string, from: number, to: number): number | string {
  let i = from;
  const negative = text.charCodeAt(i) === MINUS;
  if (negative) i++;
  let m = 0;
  let digits = 0;
  let scale = 0;
  let fraction = false;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === DOT) {
      fraction = true;
      continue;
    }
    if (c < DIGIT_0 || c > DIGIT_9) {
      digits = 99; // an exponent: the general conversion
      break;
    }
    if (m === 0 && c === DIGIT_0 && !fraction) continue;
    m = m * 10 + (c - DIGIT_0);
    if (m !== 0) digits++;
    if (fraction) scale++;
  }
  if (digits <= 15 && scale <= 22) {
    const v = scale === 0 ? m : m / POW10[scale];
    return negative ? -v : v;
  }
  const t = text.slice(from, to);
  const num = Number(t);
  return Number.isSafeInteger(num) || !isIntegerLiteral(t) ? num : t;
}

/** True for `-?digits` (no fraction, no exponent). */
function isIntegerLiteral(t: string): boolean {
  for (let i = t.charCodeAt(0) === MINUS ? 1 : 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c < DIGIT_0 || c > DIGIT_9) return false;
  }
  return true;
}

/**
 * The end of the JSON number at `text[i]`: the index after it, -1 when the text ends in it (or right
 * after it, so the number might go on), -2 when it is not a JSON number.
 */
function numberEnd(text: string, i: number): number {
  const len = text.length;
  let j = i;
  if (text.charCodeAt(j) === MINUS) j++;
  if (j >= len) return -1;
  const first = text.charCodeAt(j);
  if (first < DIGIT_0 || first > DIGIT_9) return -2;
  j++;
  if (first === DIGIT_0) {
    if (j < len && text.charCodeAt(j) >= DIGIT_0 && text.charCodeAt(j) <= DIGIT_9) return -2; // a leading zero
  } else {
    while (j < len && text.charCodeAt(j) >= DIGIT_0 && text.charCodeAt(j) <= DIGIT_9) j++;
  }
  if (j < len && text.charCodeAt(j) === DOT) {
    j++;
    const start = j;
    while (j < len && text.charCodeAt(j) >= DIGIT_0 && text.charCodeAt(j) <= DIGIT_9) j++;
    if (j === start) return j >= len ? -1 : -2;
  }
  if (j < len && (text.charCodeAt(j) === LOWER_E || text.charCodeAt(j) === UPPER_E)) {
    j++;
    if (j < len && (text.charCodeAt(j) === PLUS || text.charCodeAt(j) === MINUS)) j++;
    const start = j;
    while (j < len && text.charCodeAt(j) >= DIGIT_0 && text.charCodeAt(j) <= DIGIT_9) j++;
    if (j === start) return j >= len ? -1 : -2;
  }
  return j >= len ? -1 : j;
}

/**
 * The index just after the JSON element at `text[at]` (strings and nesting respected), or -1 when
 * the text ends first. What is not well formed ends at the first character that cannot continue it,
 * so that `JSON.parse` of the cut names the error.
 */
function elementEnd(text: string, at: number, base: number): number {
  const len = text.length;
  let depth = 0;
  let j = at;
  while (j < len) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      let e = j;
      for (;;) {
        e = text.indexOf('"', e + 1);
        if (e < 0) return -1;
        let b = e - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        if ((e - 1 - b) % 2 === 0) break;
      }
      j = e + 1;
      if (depth === 0) return j;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // The rows array is depth 2 of the body: an element may nest MAX_JSON_DEPTH - 2 levels.
      if (++depth > MAX_JSON_DEPTH - 2) throw tooDeep(base + j);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return j; // the array's own `]`: the element ended before it
      if (--depth === 0) return j + 1;
    } else if (depth === 0 && (c === COMMA || isSpace(c))) {
      return j; // a scalar element
    }
    j++;
  }
  return -1;
}
