/**
 * Output helpers of the CLI: readable text tables and the RFC 4180 / JSON serialisations of a table.
 */
import type { CellValue, Table } from "../table/model";
import { csvRecord } from "../service/csv";

/**
 * Formats rows as a left-aligned text table with a header and a rule, at most `maxWidth` characters
 * wide (issue #25: a 600-character detail made every line and the rule 600 characters long). The
 * last column wraps between words onto continuation lines under itself; the others are padded to
 * their longest cell.
 */
export function textTable(header: string[], rows: string[][], maxWidth = 100): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const last = header.length - 1;
  const indent = widths.slice(0, last).reduce((n, w) => n + w + 2, 0);
  const room = Math.max(20, maxWidth - indent);
  widths[last] = Math.min(widths[last], room);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === last ? c : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  const out = [line(header), line(widths.map((w) => "-".repeat(w)))];
  for (const r of rows) {
    const [first, ...more] = wrapWords(r[last] ?? "", room);
    out.push(line([...r.slice(0, last), first]));
    for (const m of more) out.push(`${" ".repeat(indent)}${m}`);
  }
  return out.join("\n") + "\n";
}

/** Lines of at most `width` characters, broken between words (a longer word gets a line of its own). */
function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (cur && cur.length + 1 + word.length > width) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  lines.push(cur);
  return lines;
}

/**
 * Text for a terminal: control characters other than line breaks (LF, CRLF) and tabs (an escape sequence in a
 * dataset's name would move the cursor, retitle the window or hide what follows) and the bidirectional
 * overrides and isolates (which reorder what is shown) become U+FFFD. Only what goes to a terminal is
 * changed; output piped to a file or a program stays exactly the service's (security review, 2026-11-30).
 */
export function terminalSafe(text: string): string {
  // A CR is kept only before a LF (CRLF, as CSV ends its records); alone it returns the cursor to the
  // line's start, and what follows would hide what was printed. U+2028/2029 and U+061C are line and
  // direction controls too.
  // eslint-disable-next-line no-control-regex
  return text.replace(/\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, "\ufffd");
}

/** A cell as CSV text: null → empty, booleans `true`/`false`, numbers in plain JS notation. */
export function cellText(v: CellValue): string {
  if (v === null) return "";
  return typeof v === "string" ? v : String(v);
}

/**
 * A text cell made safe for opening in Excel (OWASP "CSV Injection"): a value starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return would be read as a formula, so it gets a leading `'`,
 * which Excel shows as text. Also guarded (security review, 2026-11-30; the strictest reading where
 * Excel's CSV reading is not documented): such a start after leading spaces (also no-break ones),
 * the full-width ＝＋－＠, and the same after a `;` inside the text, because Excel in a locale whose
 * list separator is `;` splits the line there (`a;=1` becomes `a;'=1`). Anything else is unchanged.
 */
export function excelSafeCell(text: string): string {
  const guarded = text.includes(";") ? text.replace(/;(\s*)(?=[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/g, ";$1'") : text;
  return /^[\t\r]|^\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]/.test(guarded) ? `'${guarded}` : guarded;
}

/**
 * Serialises a table as RFC 4180 CSV: header row, comma, quotes where needed, CRLF after every
 * record. `guardText` (e.g. {@link excelSafeCell}) rewrites the header and the text columns' cells;
 * numbers, dates and booleans are never formulas and stay as they are (a negative number is not
 * prefixed).
 */
export function* tableToCsv(table: Table, guardText?: (text: string) => string): Generator<string> {
  const guard = guardText ?? ((t: string) => t);
  yield csvRecord(table.columns.map((c) => guard(c.name)));
  const textCols = table.columns.map((c) => !!guardText && c.type === "text");
  for (const row of table.rows) yield csvRecord(row.map((v, i) => (textCols[i] && typeof v === "string" ? guard(v) : cellText(v))));
}

/** Serialises a table as JSON: export metadata, typed columns, and rows as objects keyed by column name. */
export function* tableToJson(table: Table, extra: Record<string, unknown> = {}): Generator<string> {
  const head = {
    dataset_key: table.meta.key,
    format: table.meta.format,
    schema_version: table.meta.schemaVersion,
    generated_at: table.meta.generatedAt,
    fetched_at: table.meta.fetchedAt,
    row_count: table.rows.length,
    ...extra,
    columns: table.columns.map((c) => ({ name: c.name, type: c.type, ...(c.sourceType ? { source_type: c.sourceType } : {}) })),
  };
  const headText = JSON.stringify(head, null, 2);
  yield `${headText.slice(0, -2)},\n  "rows": [`;
  const names = table.columns.map((c) => c.name);
  for (let r = 0; r < table.rows.length; r++) {
    const obj: Record<string, CellValue> = {};
    const row = table.rows[r];
    for (let c = 0; c < names.length; c++) obj[names[c]] = row[c];
    yield `${r === 0 ? "\n" : ",\n"}    ${JSON.stringify(obj)}`;
  }
  yield `${table.rows.length ? "\n  " : ""}]\n}\n`;
}
