/**
 * A small number-format renderer for `Range.text`: General, fixed decimals, thousands separators,
 * percent, scientific, text (`@`) and common date/time codes. Unsupported codes fall back to General.
 */
import { serialToParts } from "./typed-input";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Excel's General format: up to 11 characters, switching to scientific for very large/small numbers. */
export function formatGeneral(n: number): string {
  if (n === 0) return "0";
  const abs = Math.abs(n);
  if (Number.isInteger(n) && abs < 1e11) return String(n);
  if (abs >= 1e11 || abs < 1e-9) {
    const [mant, exp] = n.toExponential(5).split("e");
    const m = mant.replace(/\.?0+$/, "");
    const e = Number(exp);
    return `${m}E${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  // Up to 10 significant digits fit the 11-character General width in most cases.
  const intDigits = Math.max(1, Math.floor(Math.log10(abs)) + 1);
  const decimals = Math.max(0, 10 - intDigits);
  return String(Number(n.toFixed(decimals)));
}

function withThousands(intPart: string): string {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function literalText(part: string): string {
  return part
    .replace(/"([^"]*)"/g, "$1")
    .replace(/_./g, " ")
    .replace(/\*./g, "")
    .replace(/\\(.)/g, "$1");
}

function formatNumberCode(n: number, code: string): string | null {
  const m = /[#0,]*[#0](?:\.[0#]*)?|\.[0#]+/.exec(code.replace(/"[^"]*"/g, (q) => "\u0000".repeat(q.length)));
  if (!m) return null;
  const prefix = literalText(code.slice(0, m.index));
  let rest = code.slice(m.index + m[0].length);
  const pattern = m[0];
  const pct = code.replace(/"[^"]*"/g, "").includes("%");
  const decimals = pattern.includes(".") ? pattern.split(".")[1].length : 0;
  const thousands = pattern.split(".")[0].includes(",");
  let v = pct ? n * 100 : n;
  const sci = /^[Ee]\+(0+)/.exec(rest);
  if (sci) {
    rest = rest.slice(sci[0].length);
    const [mant, exp] = v.toExponential(decimals).split("e");
    const e = Number(exp);
    return `${prefix}${mant}E${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(sci[1].length, "0")}${literalText(rest)}`;
  }
  const neg = v < 0;
  v = Math.abs(v);
  const [whole, d] = v.toFixed(decimals).split(".");
  let i = whole;
  if (thousands) i = withThousands(i);
  if (!pattern.split(".")[0].includes("0") && i === "0") i = "";
  let s = d === undefined ? i : `${i}.${d}`;
  if (neg && Number(s.replace(/,/g, "")) !== 0) s = `-${s}`;
  return `${prefix}${s}${literalText(rest)}`;
}

function isDateCode(code: string): boolean {
  return /[ymdhs]/i.test(code.replace(/"[^"]*"/g, "").replace(/\[[^\]]*\]/g, ""));
}

function formatDateCode(serial: number, code: string): string {
  const ampm = /AM\/PM/i.test(code);
  // `.0`, `.00`, `.000` after the seconds: fractions of a second (the time is rounded to them).
  const tokens = code.match(/"[^"]*"|AM\/PM|yyyy|yy|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|\.0{1,3}|\\.|./gi) ?? [];
  const decimals = tokens.find((t) => /^\.0+$/.test(t))?.length;
  const p = serialToParts(serial, decimals ? decimals - 1 : 0);
  let out = "";
  let lastWasHour = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const lower = t.toLowerCase();
    // "m"/"mm" right after an hour token, or right before seconds, means minutes.
    const nextIsSeconds = tokens.slice(i + 1).find((x) => /[a-z]/i.test(x))?.toLowerCase().startsWith("s") ?? false;
    if (lower === "yyyy") out += String(p.year);
    else if (lower === "yy") out += String(p.year % 100).padStart(2, "0");
    else if (lower === "mmmm") out += MONTHS[p.month - 1];
    else if (lower === "mmm") out += MONTHS[p.month - 1].slice(0, 3);
    else if (lower === "mm" || lower === "m") {
      const minutes = lastWasHour || nextIsSeconds;
      const v = minutes ? p.minute : p.month;
      out += lower === "mm" ? String(v).padStart(2, "0") : String(v);
    } else if (lower === "dddd") out += DAYS[p.weekday];
    else if (lower === "ddd") out += DAYS[p.weekday].slice(0, 3);
    else if (lower === "dd") out += String(p.day).padStart(2, "0");
    else if (lower === "d") out += String(p.day);
    else if (lower === "hh" || lower === "h") {
      const h = ampm ? ((p.hour + 11) % 12) + 1 : p.hour;
      out += lower === "hh" ? String(h).padStart(2, "0") : String(h);
    } else if (lower === "ss") out += String(p.second).padStart(2, "0");
    else if (lower === "s") out += String(p.second);
    else if (/^\.0+$/.test(t)) out += `.${String(p.fraction).padStart(t.length - 1, "0")}`;
    else if (lower === "am/pm") out += p.hour < 12 ? "AM" : "PM";
    else if (t.startsWith('"')) out += t.slice(1, -1);
    else if (t.startsWith("\\")) out += t.slice(1);
    else out += t;
    if (/[a-z]/i.test(t)) lastWasHour = lower === "h" || lower === "hh";
  }
  return out;
}

/** Display text of a cell value under a number format, as `Range.text` reports it. */
export function formatCellText(value: number | string | boolean | null, numberFormat: string, date1904 = false): string {
  if (value === null) return "";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "string") return value;
  if (!Number.isFinite(value)) return "#NUM!";
  const sections = numberFormat.split(";");
  let code = sections[0];
  if (value < 0 && sections.length > 1 && sections[1] !== "") code = sections[1];
  code = code.replace(/\[[^\]]*\]/g, "").trim();
  if (code === "" || /^general$/i.test(code) || code === "@") return formatGeneral(value);
  if (isDateCode(code)) {
    if (value < 0) return "#".repeat(8);
    // A 1904-system serial counts from 1904-01-01: the same calendar day is 1,462 lower.
    return formatDateCode(date1904 ? value + 1462 : value, code);
  }
  // A separate negative section carries its own sign (e.g. parentheses), so it formats the magnitude.
  const usesNegativeSection = value < 0 && sections.length > 1 && sections[1] !== "";
  const text = formatNumberCode(usesNegativeSection ? -value : value, code);
  return text ?? formatGeneral(value);
}
