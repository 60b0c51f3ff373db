/**
 * Custom-field value rules shared by the add-in and the reference service, alongside the contract's
 * `NUMERIC_CUSTOM_FIELD` pattern.
 */

/**
 * The dot-decimal normal form of a numeric custom-field value that matches `NUMERIC_CUSTOM_FIELD`:
 * dot separator, no `+`, no leading zeros, no trailing fractional zeros, no sign on zero
 * ("12,5" → "12.5", "+7" → "7", "-0,50" → "-0.5", "-0,00" → "0").
 *
 * The reference service stores values in this form; the add-in uses it as the comparison key for
 * numeric fields, because the service normalises what it stores and does not guarantee trailing
 * zeros. Only meaningful for strings that pass `NUMERIC_CUSTOM_FIELD`.
 */
export function normaliseNumeric(value: string): string {
  let sign = "";
  let s = value;
  if (s.startsWith("+") || s.startsWith("-")) {
    sign = s[0] === "-" ? "-" : "";
    s = s.slice(1);
  }
  const [intRaw, fracRaw = ""] = s.split(/[.,]/);
  const int = intRaw.replace(/^0+(?=\d)/, "");
  const frac = fracRaw.replace(/0+$/, "");
  const isZero = /^0*$/.test(int) && frac === "";
  return (isZero ? "" : sign) + int + (frac === "" ? "" : "." + frac);
}
