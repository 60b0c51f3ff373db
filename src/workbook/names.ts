/**
 * Excel names: table names and sheet names derived from a dataset or snapshot key, valid under
 * Excel's rules and de-duplicated against what the workbook already holds. Pure.
 */

/** Excel's table-name rules: starts with a letter, `_` or `\`; then letters, digits, `_`, `.`; ≤ 255 chars; not a cell reference. */
export function isValidTableName(name: string): boolean {
  if (name.length < 1 || name.length > 255) return false;
  if (!/^[A-Za-z_\\][A-Za-z0-9_.\\]*$/.test(name)) return false;
  if (/^[A-Za-z]{1,3}[0-9]+$/.test(name)) return false; // A1-style reference
  if (/^[Rr]([0-9]+)?[Cc]([0-9]+)?$/.test(name) || /^[RrCc]$/.test(name)) return false; // R1C1-style
  return true;
}

/**
 * A stable, valid table name for a source key: `ppm_<key>` with invalid characters replaced by `_`,
 * then `_2`, `_3`, ... if taken (comparison is case-insensitive, as Excel's is).
 */
export function deriveTableName(key: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((t) => t.toLowerCase()));
  let base = "ppm_" + key.replace(/[^A-Za-z0-9_.]/g, "_");
  base = base.slice(0, 240);
  if (!used.has(base.toLowerCase())) return base;
  for (let i = 2; ; i++) {
    const candidate = `${base}_${i}`;
    if (!used.has(candidate.toLowerCase())) return candidate;
  }
}

const SHEET_BAD = /[:\\/?*[\]]/g;

/** Excel's sheet-name rules: 1-31 chars, none of `: \ / ? * [ ]`, no leading/trailing apostrophe, not "History". */
export function isValidSheetName(name: string): boolean {
  return name.length >= 1 && name.length <= 31 && !/[:\\/?*[\]]/.test(name) && !name.startsWith("'") && !name.endsWith("'") && name.toLowerCase() !== "history";
}

/**
 * A valid, unused sheet name for a key: the key itself, then `key 2`, `key 3`, ... (case-insensitive).
 * Not Excel's `(2)` for a copied sheet: after the label's own parentheses it read
 * `financials (json) (2)` (issue #37).
 */
export function deriveSheetName(key: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((t) => t.toLowerCase()));
  let base = key.replace(SHEET_BAD, "_").replace(/^'+|'+$/g, "").trim() || "PPM";
  if (base.toLowerCase() === "history") base = "History data";
  base = base.slice(0, 31);
  if (!used.has(base.toLowerCase())) return base;
  for (let i = 2; ; i++) {
    const suffix = ` ${i}`;
    const candidate = base.slice(0, 31 - suffix.length) + suffix;
    if (!used.has(candidate.toLowerCase())) return candidate;
  }
}

/**
 * The name a new sheet starts from: the source and its form, as the pane words them
 * (`financials (csv)`, `projects (snapshot)`), so two imports of one dataset in different forms
 * are told apart at a glance.
 */
export function sheetLabel(source: { kind: "dataset"; key: string; format: string } | { kind: "snapshot"; endpoint: string }): string {
  return source.kind === "dataset" ? `${source.key} (${source.format})` : `${source.endpoint} (snapshot)`;
}

/** Column letters of a 0-based column index (0 → A, 26 → AA). */
export function columnLetters(index: number): string {
  let n = index + 1;
  let s = "";
  while (n > 0) {
    const r = (n - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

/** A1 address of a rectangle given by 0-based indexes. */
export function a1(row: number, column: number, rowCount = 1, columnCount = 1): string {
  const tl = `${columnLetters(column)}${row + 1}`;
  if (rowCount === 1 && columnCount === 1) return tl;
  return `${tl}:${columnLetters(column + columnCount - 1)}${row + rowCount}`;
}

/** Parses a plain A1 cell address (optionally `Sheet!`-prefixed, `$` allowed) to 0-based indexes. */
export function parseCell(address: string): { row: number; column: number } {
  const cell = address.includes("!") ? address.slice(address.lastIndexOf("!") + 1) : address;
  const m = /^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})(?::.*)?$/.exec(cell);
  if (!m) throw new RangeError(`"${address}" is not a cell address like B3.`);
  let col = 0;
  for (const ch of m[1].toUpperCase()) col = col * 26 + (ch.charCodeAt(0) - 64);
  return { row: Number(m[2]) - 1, column: col - 1 };
}
