/** Cell value representation shared by the model, the formula evaluator and the host. */

/** An Excel error value such as `#NAME?`. Kept as an object so it cannot be confused with text. */
export interface CellError {
  error: string;
  /** The message a custom function gave with its error (Excel shows it in the cell's error indicator). */
  message?: string;
}

/** What a cell holds after evaluation. `null` is an empty cell. */
export type CellValue = number | string | boolean | CellError | null;

export function isCellError(v: unknown): v is CellError {
  return typeof v === "object" && v !== null && typeof (v as CellError).error === "string";
}

/** `Excel.RangeValueType` names as `Range.valueTypes` reports them. */
export type RangeValueType = "Empty" | "String" | "Double" | "Boolean" | "Error";

export function valueTypeOf(v: CellValue): RangeValueType {
  if (v === null) return "Empty";
  if (typeof v === "number") return "Double";
  if (typeof v === "boolean") return "Boolean";
  if (typeof v === "string") return "String";
  return "Error";
}

/** The value as `Range.values` returns it: errors as their literal (`#NAME?`), empty as `""`. */
export function toApiValue(v: CellValue): number | string | boolean {
  if (v === null) return "";
  if (isCellError(v)) return v.error;
  return v;
}

const NON_ASCII = /[\u0080-\uffff]/;

/** UTF-8 size of the JSON encoding of a value: how the emulator measures request and response payloads. */
export function jsonByteLength(value: unknown): number {
  const s = JSON.stringify(value) ?? "";
  // Most requests are ASCII: one native scan answers them without a loop over every character.
  if (!NON_ASCII.test(s)) return s.length;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * A number as Excel turns it into text inside a formula (TEXTJOIN, the checksums of issue #24): at
 * most 15 significant digits (docs: "Excel specifications and limits", number precision 15 digits;
 * `=1/3&""` is 0.333333333333333), trailing zeros dropped. Magnitudes JavaScript writes with an
 * exponent (below 1e-6, from 1e21) are written as `1E-07` / `1E+21` here; Excel's exact threshold for
 * scientific notation in this conversion is not documented (the add-in never relies on those cases:
 * its predictor treats them as unknown).
 */
export function numberText(n: number): string {
  let t = numberTexts.get(n);
  if (t === undefined) {
    const s = String(Number(n.toPrecision(15)));
    const e = /^(-?[0-9.]+)e([+-])([0-9]+)$/.exec(s);
    t = e ? `${e[1]}E${e[2]}${e[3].padStart(2, "0")}` : s;
    // The checksum formulas turn every number of a block into text several times per calculation.
    if (numberTexts.size >= 100_000) numberTexts.clear();
    numberTexts.set(n, t);
  }
  return t;
}
const numberTexts = new Map<number, string>();
