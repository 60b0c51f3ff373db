/**
 * Tokenizer for `$filter` and `$orderby` expressions. Positions are 1-based character (UTF-16 code
 * unit) offsets into the option's decoded text, the same numbers error messages show.
 */
import { DecimalError, fromString, type Decimal } from "./decimal";
import { QueryError } from "./errors";

export type TokenKind =
  | "lparen"
  | "rparen"
  | "comma"
  | "minus"
  | "star"
  | "string"
  | "quoted"
  | "integer"
  | "decimal"
  | "date"
  | "datetime"
  | "word"
  | "eof";

export interface Token {
  kind: TokenKind;
  /** The source text of the token. */
  text: string;
  /**
   * Decoded value: string content for `string`/`quoted`, the integer (bigint beyond 2^53) for
   * integers, an exact {@link Decimal} for decimals, `YYYY-MM-DD` for dates, epoch milliseconds for
   * date-times.
   */
  value?: string | number | bigint | Decimal;
  /** 1-based start position. */
  pos: number;
}

// OData identifiers: a letter or `_`, then letters, digits, `_` (Unicode categories as the ABNF says).
const WORD = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*/uy;
const NUMBER = /\d+(\.\d+)?([eE][+-]?\d+)?/y;
const DATE = /(\d{4})-(\d{2})-(\d{2})(?![\d])/y;
// Offset may be `Z`, `±hh:mm`, or ` hh:mm`: an unencoded `+` in a pasted URL arrives as a space.
const DATETIME =
  /(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,12}))?)?(Z|z|[+-]\d{2}:\d{2}| \d{2}:\d{2}(?![\d:]))?/y;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** Human name of a token for "but found ..." messages. */
export function describeToken(t: Token): string {
  return t.kind === "eof" ? "end of input" : `'${t.text}'`;
}

/**
 * Splits `text` into tokens, ending with an `eof` token. Throws {@link QueryError} on bad characters.
 * `offset` is added to every position: `text` is a part of a longer option's text (an expression
 * inside `$apply`) that starts after `offset` characters, so positions stay positions in the option.
 */
export function tokenize(text: string, offset = 0): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const pos = i + 1 + offset;
    switch (c) {
      case "(":
        tokens.push({ kind: "lparen", text: c, pos });
        i++;
        continue;
      case ")":
        tokens.push({ kind: "rparen", text: c, pos });
        i++;
        continue;
      case ",":
        tokens.push({ kind: "comma", text: c, pos });
        i++;
        continue;
      case "-":
        if (isDigit(text[i + 1])) break;
        tokens.push({ kind: "minus", text: c, pos });
        i++;
        continue;
      case "*":
        tokens.push({ kind: "star", text: c, pos });
        i++;
        continue;
      case "'":
      case '"': {
        const end = readQuoted(text, i, c, offset);
        tokens.push({
          kind: c === "'" ? "string" : "quoted",
          text: text.slice(i, end),
          value: text.slice(i + 1, end - 1).split(c + c).join(c),
          pos,
        });
        if (c === '"' && end - i === 2) {
          throw new QueryError({ code: "syntax", detail: "empty quoted column name", position: pos });
        }
        i = end;
        continue;
      }
    }
    if (c >= "0" && c <= "9") {
      const t = readNumeric(text, i, offset);
      tokens.push(int64OrDecimal(t));
      i += t.text.length;
      continue;
    }
    // A sign directly before digits belongs to the number literal (ABNF: `[SIGN] 1*DIGIT ...`), so
    // `-5 in (...)` and `+5` are literals; `- x` (with a space, or before a name) is negation.
    if ((c === "+" || c === "-") && isDigit(text[i + 1])) {
      const t = readNumeric(text, i + 1, offset);
      if (t.kind !== "integer" && t.kind !== "decimal") {
        throw new QueryError({ code: "invalid_literal", detail: `a sign cannot precede the ${t.kind === "date" ? "date" : "date-time"} '${t.text}'`, position: pos });
      }
      tokens.push(int64OrDecimal(signed(t, c)));
      i += t.text.length + 1;
      continue;
    }
    WORD.lastIndex = i;
    const w = WORD.exec(text);
    if (w) {
      tokens.push({ kind: "word", text: w[0], pos });
      i += w[0].length;
      continue;
    }
    throw new QueryError({
      code: "syntax",
      detail:
        c === "/"
          ? "unexpected character '/' (navigation paths and casts are not supported)"
          : `unexpected character '${c}'`,
      position: pos,
      expected: "an expression",
    });
  }
  tokens.push({ kind: "eof", text: "", pos: n + 1 + offset });
  return tokens;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer literal beyond Edm.Int64 is a decimal: the ABNF's `int64Value` is at most 19 digits in
 * -9223372036854775808…9223372036854775807, and a longer run of digits matches `decimalValue` only,
 * so `99999999999999999999 div 2` is a decimal division (49999999999999999999.5).
 */
function int64OrDecimal(t: Token): Token {
  if (t.kind !== "integer" || typeof t.value !== "bigint" || (t.value >= INT64_MIN && t.value <= INT64_MAX)) return t;
  return { kind: "decimal", text: t.text, value: decimalValue(t.text, t.pos), pos: t.pos };
}

function signed(t: Token, sign: string): Token {
  const text = sign + t.text;
  const pos = t.pos - 1;
  if (t.kind === "decimal") return { kind: "decimal", text, value: decimalValue(text, pos), pos };
  const v = t.value as number | bigint;
  if (sign === "+") return { ...t, text, pos };
  const n = typeof v === "bigint" ? -v : -v;
  return { kind: "integer", text, value: typeof n === "bigint" && n >= -SAFE_MAX ? Number(n) : n, pos };
}

function decimalValue(text: string, pos: number): Decimal {
  try {
    return fromString(text);
  } catch (e) {
    if (e instanceof DecimalError) throw new QueryError({ code: "invalid_literal", detail: `number '${text}' is out of range`, position: pos });
    throw e;
  }
}

/** Index just past the closing quote of a quoted run starting at `start`; doubled quotes escape. */
function readQuoted(text: string, start: number, q: string, offset: number): number {
  let j = start + 1;
  for (;;) {
    const k = text.indexOf(q, j);
    if (k < 0) {
      throw new QueryError({
        code: "invalid_literal",
        detail: q === "'" ? "unterminated string literal (close it with ')" : 'unterminated quoted column name (close it with ")',
        position: start + 1 + offset,
      });
    }
    if (text[k + 1] === q) {
      j = k + 2;
      continue;
    }
    return k + 1;
  }
}

function readNumeric(text: string, i: number, offset: number): Token {
  const pos = i + 1 + offset;
  DATETIME.lastIndex = i;
  const dt = DATETIME.exec(text);
  if (dt) {
    if (dt[8] === undefined) {
      throw new QueryError({
        code: "invalid_literal",
        detail: `date-time literal '${dt[0]}' needs an offset (Z or ±hh:mm)`,
        position: pos,
      });
    }
    return { kind: "datetime", text: dt[0], value: dateTimeValue(dt, pos), pos };
  }
  DATE.lastIndex = i;
  const d = DATE.exec(text);
  if (d) {
    checkDate(+d[1], +d[2], +d[3], d[0], pos);
    return { kind: "date", text: d[0], value: d[0], pos };
  }
  NUMBER.lastIndex = i;
  const m = NUMBER.exec(text)!;
  const after = text[i + m[0].length];
  if (after === ".") {
    throw new QueryError({ code: "invalid_literal", detail: `invalid number '${m[0]}.'`, position: pos });
  }
  if (after !== undefined && /[\p{L}_]/u.test(after)) {
    WORD.lastIndex = i + m[0].length;
    const rest = WORD.exec(text)?.[0] ?? after;
    throw new QueryError({
      code: "invalid_literal",
      detail: `invalid number '${m[0]}${rest}' (column names cannot start with a digit; quote them as "${m[0]}${rest}")`,
      position: pos,
    });
  }
  if (m[1] === undefined && m[2] === undefined) {
    const big = BigInt(m[0]);
    return { kind: "integer", text: m[0], value: big > SAFE_MAX ? big : Number(big), pos };
  }
  return { kind: "decimal", text: m[0], value: decimalValue(m[0], pos), pos };
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function checkDate(y: number, mo: number, d: number, text: string, pos: number): void {
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const max = mo === 2 && !leap ? 28 : DAYS_IN_MONTH[mo - 1];
  if (mo < 1 || mo > 12 || max === undefined || d < 1 || d > max) {
    throw new QueryError({ code: "invalid_literal", detail: `'${text}' is not a valid date`, position: pos });
  }
}

function dateTimeValue(m: RegExpExecArray, pos: number): number {
  const [text, y, mo, d, h, mi, s, frac, off] = m as unknown as string[];
  checkDate(+y, +mo, +d, text, pos);
  const sec = s === undefined ? 0 : +s;
  // The ABNF allows second 60 (a leap second); UTC milliseconds have none, so :60 is the first
  // instant of the next minute.
  if (+h > 23 || +mi > 59 || sec > 60) {
    throw new QueryError({ code: "invalid_literal", detail: `'${text}' is not a valid time of day`, position: pos });
  }
  let offsetMin = 0;
  if (off !== "Z" && off !== "z") {
    const sign = off.startsWith("-") ? -1 : 1;
    const oh = +off.slice(1, 3);
    const om = +off.slice(4, 6);
    if (oh > 23 || om > 59) {
      throw new QueryError({ code: "invalid_literal", detail: `'${text}' has an invalid offset`, position: pos });
    }
    offsetMin = sign * (oh * 60 + om);
  }
  const ms = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000 + 1e-6);
  const utc = Date.UTC(+y, +mo - 1, +d, +h, +mi, sec, ms);
  // Date.UTC maps years 0-99 onto 1900-1999; OData years are literal.
  const fixed = +y < 100 ? new Date(utc).setUTCFullYear(+y) : utc;
  return fixed - offsetMin * 60_000;
}
