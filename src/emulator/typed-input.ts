/**
 * How Excel (en-US) interprets a string written to a cell whose number format is not text (`@`):
 * the same rules as typing into the cell. Kept deterministic: "this year" for `m/d` input comes from
 * the caller.
 */

/** The largest string a cell holds. */
export const MAX_CELL_TEXT = 32_767;

/** Excel error literals; typing one of these yields the error value itself. */
export const ERROR_LITERALS = ["#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"] as const;

export type TypedInput =
  | { kind: "empty" }
  | { kind: "string"; value: string }
  | { kind: "number"; value: number; format?: string }
  | { kind: "boolean"; value: boolean }
  | { kind: "error"; value: string }
  | { kind: "formula"; formula: string };

const MS_PER_DAY = 86_400_000;
const EPOCH = Date.UTC(1899, 11, 30);

/**
 * Excel serial number of a calendar date (1900 date system). Dates before 1900-03-01 are one lower
 * because Excel counts the non-existent 1900-02-29 (serial 60).
 */
export function dateSerial(year: number, month: number, day: number): number | null {
  if (year < 1900 || year > 9999 || month < 1 || month > 12 || day < 1) return null;
  const t = Date.UTC(year, month - 1, day);
  const d = new Date(t);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  const serial = Math.round((t - EPOCH) / MS_PER_DAY);
  return serial < 61 ? serial - 1 : serial;
}

/**
 * Calendar parts of a serial (inverse of {@link dateSerial}); serial 60 reads as 1900-02-29 as in Excel.
 * The time is rounded to the shown precision, `secondDecimals` (0-3) digits of a second, and a time
 * that rounds up to 24:00 becomes the next day, as Excel displays it (a format such as
 * `h:mm:ss.00` shows fractions of a second, at most three digits: Microsoft support, "Review
 * guidelines for customizing a number format", times section).
 */
export function serialToParts(serial: number, secondDecimals = 0): {
  year: number; month: number; day: number; hour: number; minute: number; second: number; weekday: number;
  /** The shown fraction of the second, in units of 10^-secondDecimals s. */
  fraction: number;
} {
  const unitsPerSecond = 10 ** secondDecimals;
  const unitsPerDay = 86400 * unitsPerSecond;
  let days = Math.floor(serial);
  let units = Math.round((serial - days) * unitsPerDay);
  if (units >= unitsPerDay) {
    days += 1;
    units -= unitsPerDay;
  }
  const fraction = units % unitsPerSecond;
  const secs = (units - fraction) / unitsPerSecond;
  let year: number, month: number, day: number;
  if (days === 60) {
    year = 1900; month = 2; day = 29;
  } else {
    const d = new Date(EPOCH + (days < 60 ? days + 1 : days) * MS_PER_DAY);
    year = d.getUTCFullYear(); month = d.getUTCMonth() + 1; day = d.getUTCDate();
  }
  const weekday = new Date(EPOCH + days * MS_PER_DAY).getUTCDay();
  return { year, month, day, hour: Math.floor(secs / 3600), minute: Math.floor((secs % 3600) / 60), second: secs % 60, weekday, fraction };
}

/** Excel keeps 15 significant digits of typed numbers and drops (not rounds) the rest. */
function truncateTo15Digits(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n === 0) return n;
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return n;
  const digits = (m[2] + (m[3] ?? "")).replace(/^0+/, "");
  if (digits.replace(/0+$/, "").length <= 15) return n;
  const intLen = m[2].replace(/^0+/, "").length;
  const exp = Number(m[4] ?? "0");
  const kept = digits.slice(0, 15);
  // Rebuild as 0.kept × 10^(intLen + exp) when the integer part is non-zero; otherwise from the raw decimals.
  if (intLen > 0) return Number(`${m[1]}0.${kept}e${intLen + exp}`);
  const lead = (m[3] ?? "").match(/^0*/)![0].length;
  return Number(`${m[1]}0.${kept}e${exp - lead}`);
}

function twoDigitYear(y: string): number {
  const n = Number(y);
  if (y.length === 4) return n;
  return n < 30 ? 2000 + n : 1900 + n;
}

function parseTime(t: string): { fraction: number; withSeconds: boolean } | null {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp])[Mm])?$/.exec(t);
  if (!m) return null;
  let h = Number(m[1]);
  const min = Number(m[2]);
  const s = m[3] === undefined ? 0 : Number(m[3]);
  if (m[4] !== undefined) {
    if (h < 1 || h > 12) return null;
    if (/[Pp]/.test(m[4]) && h !== 12) h += 12;
    if (/[Aa]/.test(m[4]) && h === 12) h = 0;
  }
  if (h > 23 || min > 59 || s > 59) return null;
  return { fraction: (h * 3600 + min * 60 + s) / 86400, withSeconds: m[3] !== undefined };
}

function parseDate(text: string, currentYear: number): { serial: number; format: string } | null {
  const [datePart, ...timeParts] = text.split(/\s+/);
  const timeText = timeParts.join(" ");
  let serial: number | null = null;
  let format: string;
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(datePart))) {
    // ISO text gets Excel's default date format, not its own pattern: `2018-12-31` typed into a
    // General cell reads back as numberFormat "m/d/yyyy" (office-js #229, shown in en-US).
    serial = dateSerial(Number(m[1]), Number(m[2]), Number(m[3]));
    format = "m/d/yyyy";
  } else if ((m = /^(\d{1,2})[/-](\d{1,2})[/-](\d{2}|\d{4})$/.exec(datePart))) {
    serial = dateSerial(twoDigitYear(m[3]), Number(m[1]), Number(m[2]));
    format = "m/d/yyyy";
  } else if ((m = /^(\d{1,2})\/(\d{1,2})$/.exec(datePart))) {
    serial = dateSerial(currentYear, Number(m[1]), Number(m[2]));
    format = "d-mmm";
  } else {
    return null;
  }
  if (serial === null) return null;
  if (timeText === "") return { serial, format };
  const t = parseTime(timeText);
  if (!t) return null;
  const timeFormat = t.withSeconds ? "h:mm:ss" : "h:mm";
  return { serial: serial + t.fraction, format: `${format === "d-mmm" ? "m/d/yyyy" : format} ${timeFormat}` };
}

/**
 * Interprets a string the way Excel interprets typed input in a cell formatted "General".
 * @param currentYear year used for `m/d` dates without a year (Excel uses the system clock).
 */
export function parseTypedInput(input: string, currentYear: number): TypedInput {
  if (input === "") return { kind: "empty" };
  if (input.startsWith("'")) return { kind: "string", value: input.slice(1) };
  if (input.startsWith("=")) return input.length > 1 ? { kind: "formula", formula: input } : { kind: "string", value: input };
  if ((ERROR_LITERALS as readonly string[]).includes(input.toUpperCase())) return { kind: "error", value: input.toUpperCase() };
  if (/^(true|false)$/i.test(input)) return { kind: "boolean", value: input.toLowerCase() === "true" };

  const t = input.trim();
  let m: RegExpExecArray | null;
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(t)) return { kind: "number", value: truncateTo15Digits(t.replace(/^\+/, "")) };
  if (/^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/.test(t)) {
    const value = truncateTo15Digits(t.replace(/^\+/, ""));
    if (Number.isFinite(value)) return { kind: "number", value, format: "0.00E+00" };
  }
  if ((m = /^([+-]?)(\d{1,3}(?:,\d{3})+)(\.\d*)?$/.exec(t))) {
    const value = truncateTo15Digits(`${m[1]}${m[2].replace(/,/g, "")}${m[3] ?? ""}`);
    return { kind: "number", value, format: m[3] && m[3].length > 1 ? "#,##0.00" : "#,##0" };
  }
  if ((m = /^([+-]?(?:\d+\.?\d*|\.\d+))\s*%$/.exec(t))) {
    const value = Number(m[1]) / 100;
    return { kind: "number", value, format: m[1].includes(".") && !m[1].endsWith(".") ? "0.00%" : "0%" };
  }
  if ((m = /^\((\d+\.?\d*|\.\d+)\)$/.exec(t))) return { kind: "number", value: -truncateTo15Digits(m[1]) };
  const date = parseDate(t, currentYear);
  if (date) return { kind: "number", value: date.serial, format: date.format };
  const time = parseTime(t);
  if (time) return { kind: "number", value: time.fraction, format: time.withSeconds ? "h:mm:ss" : "h:mm" };

  // Documented for Range.values: a value starting with "+", "-" or "=" is interpreted as a formula.
  // "@" is Lotus-style formula entry, which Excel also turns into a formula.
  if (input.length > 1 && (input[0] === "+" || input[0] === "-" || input[0] === "@")) {
    return { kind: "formula", formula: `=${input}` };
  }
  return { kind: "string", value: input };
}
