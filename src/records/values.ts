/**
 * Custom-field values between the sheet and the service.
 *
 * Three concerns, one module, so they can never drift apart:
 * - what a sheet cell means as the string the service expects ({@link cellToText});
 * - when two values are "the same" for change detection ({@link canonicalValue}, {@link valueHash});
 * - whether a value may be sent at all ({@link validateFieldValue}), using the service client's
 *   `validateNumericCustomField`, with a message naming the rule that was broken.
 */
import { NUMERIC_CUSTOM_FIELD } from "../contract/contract";
import { normaliseNumeric } from "../contract/customFields";
import { validateNumericCustomField } from "../service/customFields";

/** A cell as read from Excel: its value, or an Excel error (`#VALUE!`, `#N/A`, ...). */
export type SheetValue = string | number | boolean | null | { error: string };

/** The text a cell stands for, or why it cannot stand for any. */
export type CellText = { ok: true; text: string; fromNumber: boolean } | { ok: false; reason: string };

/** Significant digits Excel keeps; anything beyond is binary noise from arithmetic. */
const EXCEL_DIGITS = 15;

/**
 * Writes a finite number as a plain decimal string: dot separator, no exponent, no thousands
 * separator, at most 15 significant digits (what Excel itself keeps of a typed number), trailing
 * zeros dropped. `1234.5` → `"1234.5"`, `1e21` → `"1000000000000000000000"`, `0.1 + 0.2` → `"0.3"`.
 * Returns null for NaN and infinities.
 */
export function numberToPlainString(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  let v = Number(n.toPrecision(EXCEL_DIGITS));
  if (Object.is(v, -0)) v = 0;
  const s = String(v);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  // Expand the exponent on the digit string itself; float arithmetic would reintroduce noise.
  const digits = m[2] + (m[3] ?? "");
  const point = 1 + Number(m[4]);
  let body: string;
  if (point <= 0) body = "0." + "0".repeat(-point) + digits;
  else if (point >= digits.length) body = digits + "0".repeat(point - digits.length);
  else body = digits.slice(0, point) + "." + digits.slice(point);
  return m[1] + body;
}

/**
 * The string a cell stands for, as it would be sent in `custom_fields`:
 * - empty cell → `""`;
 * - text → exactly its text (never trimmed: surrounding spaces are the user's and the numeric rule
 *   rejects them, which is better than silently sending something else);
 * - number (Excel turned typed input into one) → {@link numberToPlainString};
 * - boolean → `TRUE` / `FALSE` (as Excel shows it);
 * - an Excel error → not sendable.
 */
export function cellToText(value: SheetValue | undefined): CellText {
  if (value === null || value === undefined) return { ok: true, text: "", fromNumber: false };
  if (typeof value === "string") return { ok: true, text: value, fromNumber: false };
  if (typeof value === "number") {
    const s = numberToPlainString(value);
    return s === null ? { ok: false, reason: "The cell holds a number Excel cannot show." } : { ok: true, text: s, fromNumber: true };
  }
  if (typeof value === "boolean") return { ok: true, text: value ? "TRUE" : "FALSE", fromNumber: false };
  return { ok: false, reason: `The cell shows the Excel error ${value.error}; correct the cell first.` };
}

/**
 * The canonical form of an accepted numeric value (the spec module's `normaliseNumeric`). It is the
 * comparison key for numeric fields, because the service normalises what it stores ("12,5" → "12.5")
 * and does not guarantee trailing zeros.
 */
export { normaliseNumeric };

/**
 * The form two values are compared in. Missing (null) and empty are the same (Excel shows both as an
 * empty cell). Numeric fields compare by number when the text is a valid value; anything else compares
 * as exact text. `numeric` null = field type unknown: exact text.
 */
export function canonicalValue(text: string | null, numeric: boolean | null): string {
  if (text === null) return "";
  if (numeric && NUMERIC_CUSTOM_FIELD.test(text)) return normaliseNumeric(text);
  return text;
}

/** Model/service value (string, number, boolean or null) as text, for comparison and display. */
export function serviceValueText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberToPlainString(v);
  if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
  return JSON.stringify(v);
}

/**
 * A short, stable hash of a canonical value (FNV-1a, 32 bits, base 36). Stored instead of the value
 * itself so the import record stays small and holds no copy of the data. A changed cell whose hash
 * collides with the old one (about 1 in 4 billion) would go undetected; it is not sent, never
 * sent wrongly.
 */
export function valueHash(canonical: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < canonical.length; i++) {
    h ^= canonical.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/** How Excel shows a cell: its number format and display text (`Range.numberFormat`, `Range.text`). */
export interface CellShown {
  numberFormat: string;
  text: string;
}

/** Excel's name for the default number format (any case). */
export function isGeneralFormat(numberFormat: string): boolean {
  return numberFormat.toLowerCase() === "general";
}

/**
 * The text a NUMBER cell of a numeric custom field stands for, judged by how Excel shows it.
 *
 * Excel reads typed input before the add-in sees it: `1,234.5` becomes the number 1234.5. In a
 * General cell it also switches the cell's format (`#,##0.00` for separators, `0%`, `0.00E+00`, a
 * date format...), so a number cell whose format is no longer General was typed as something other
 * than a plain decimal. Such a cell is judged by what Excel shows (`1,234.50`), with the spec's rule,
 * exactly as if that text had been typed into a text cell. A General cell (or a display that is
 * canonically the same number, e.g. `12.50` in a `0.00` cell) is sent as its plain decimal.
 */
export function numericCellText(value: number, shown: CellShown | undefined): { ok: true; text: string } | { ok: false; text: string; message: string } {
  const plain = numberToPlainString(value);
  if (plain === null) return { ok: false, text: String(value), message: "The cell holds a number Excel cannot show." };
  if (!shown || isGeneralFormat(shown.numberFormat)) return { ok: true, text: plain };
  const problem = explainNumericProblem(shown.text);
  if (problem) {
    return {
      ok: false,
      text: shown.text,
      message: `Excel shows ${JSON.stringify(shown.text)} (number format ${shown.numberFormat}): it read what was typed as a formatted number. ${problem} Type ${plain} instead.`,
    };
  }
  if (normaliseNumeric(shown.text) !== normaliseNumeric(plain)) {
    return {
      ok: false,
      text: shown.text,
      message: `Excel shows ${JSON.stringify(shown.text)} (number format ${shown.numberFormat}) but the cell holds ${plain}. Set the cell's number format to General so what is sent is what you see.`,
    };
  }
  return { ok: true, text: plain };
}

/** Outcome of checking one value before it is sent. */
export type FieldValidation = { ok: true; warning?: string } | { ok: false; message: string };

/**
 * Why `text` breaks the numeric rule (null when it does not), as a sentence. The decision is the
 * service client's `validateNumericCustomField` (the contract's `NUMERIC_CUSTOM_FIELD`).
 */
export function explainNumericProblem(text: string): string | null {
  const r = validateNumericCustomField(text);
  if (r.ok) return null;
  return r.reason.charAt(0).toUpperCase() + r.reason.slice(1) + ".";
}

/**
 * Checks a value before it is sent. Numeric fields follow the spec's rule; text fields accept any
 * string. `fromNumber` marks text that Excel produced from a number, which in a text field may have
 * lost leading zeros ("00420" typed into a number cell becomes 420).
 */
export function validateFieldValue(text: string, numeric: boolean | null, fromNumber = false): FieldValidation {
  if (numeric) {
    const problem = explainNumericProblem(text);
    return problem ? { ok: false, message: problem } : { ok: true };
  }
  if (numeric === false && fromNumber) {
    return { ok: true, warning: "Excel stored this text field as a number; leading zeros or formatting may have been lost." };
  }
  return { ok: true };
}
