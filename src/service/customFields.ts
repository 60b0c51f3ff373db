/**
 * Custom-field values: the spec's numeric rule for what may be sent, and display normalisation for
 * what comes back.
 */
import { NUMERIC_CUSTOM_FIELD } from "../contract/contract";

/** Result of {@link validateNumericCustomField}. */
export type NumericCheck = { ok: true; normalized: string } | { ok: false; reason: string };

/**
 * Checks a numeric custom-field value against the spec's rule: optional `+`/`-`, digits, and
 * optionally `.` or `,` followed by one or two digits. Whole numbers are valid. Rejected: thousands
 * separators, exponent notation, surrounding whitespace, the empty string and more than two decimals.
 *
 * `normalized` is the value as sent (unchanged: the service accepts `,`) - the check never rewrites
 * what the user typed. Use {@link numericToDisplay} for a dot-decimal form.
 */
export function validateNumericCustomField(value: string): NumericCheck {
  if (typeof value !== "string") return { ok: false, reason: "a numeric custom field value must be text, e.g. \"12.5\"" };
  if (value === "") return { ok: false, reason: "the value is empty; leave the field out instead of sending an empty value" };
  if (value.trim() !== value) return { ok: false, reason: "the value has spaces before or after it" };
  if (/\s/.test(value)) return { ok: false, reason: "the value contains spaces" };
  if (/[eE]/.test(value)) return { ok: false, reason: "scientific notation (e.g. 1e3) is not accepted" };
  if (NUMERIC_CUSTOM_FIELD.test(value)) return { ok: true, normalized: value };
  const body = value.replace(/^[+-]/, "");
  const seps = (body.match(/[.,']/g) ?? []).length;
  if (/^[+-]/.test(body)) return { ok: false, reason: "only one sign is accepted" };
  if (seps > 1 || body.includes("'")) return { ok: false, reason: 'thousands separators are not accepted; use at most one "." or "," as the decimal separator' };
  if (/^\d+[.,]\d{3,}$/.test(body)) return { ok: false, reason: "at most two decimal places are accepted (thousands separators are not accepted either)" };
  if (/^\d+[.,]$/.test(body)) return { ok: false, reason: "a decimal separator must be followed by one or two digits" };
  if (/^[.,]\d*$/.test(body)) return { ok: false, reason: "a digit must come before the decimal separator" };
  return { ok: false, reason: 'only digits, an optional sign and one "." or "," decimal separator are accepted' };
}

/** A numeric custom-field value with `,` turned into `.` (for display and comparison). */
export function numericToDisplay(value: string): string {
  return value.replace(",", ".");
}

/**
 * Normalises a custom-field value from a detail or snapshot response for display:
 * - `null`/absent stays `null` (no saved value record);
 * - `""` stays `""` (a saved numeric field with no value) - the two are kept distinct;
 * - a number becomes its decimal string with a dot;
 * - a decimal string keeps its digits (trailing zeros are neither added nor assumed); a `,`
 *   decimal separator becomes `.`.
 * Other values are stringified.
 */
export function normalizeCustomFieldForDisplay(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return /^[+-]?\d+,\d+$/.test(value) ? value.replace(",", ".") : value;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : null;
  if (typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
