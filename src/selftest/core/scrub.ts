/**
 * Scrubbing: a transcript a customer can share. Cell values, sheet names, table and column names and
 * setting values are replaced by placeholders; the structure that shows where an emulated host is
 * wrong stays (which requests, objects, addresses' cells, number formats, counts, error codes,
 * refusals).
 *
 * Decisions:
 * - **One consistent map for all text.** The same text becomes the same placeholder everywhere (a
 *   sheet name in `worksheets.add`, in `getItem`, in every address; a column name in the header
 *   row's values and in `columns.getItem`), and two different texts never share one (compared
 *   ignoring case, as Excel compares sheet, table and column names). So the scrubbed requests still
 *   address the same objects and the transcript still replays on the emulated host.
 * - **Same-shaped placeholders.** Each letter becomes `x`/`X` (its case kept), each digit `1`, other
 *   characters stay: `Acme Corp, 00420` → `Xxxx Xxxx, 11111`. Text keeps its length, so a name stays
 *   valid where the original was, and typed input keeps its kind (`1,234.5` → `1,111.1`, still a
 *   number). A clash is told apart by changing letters or digits from the end. Kept as they are:
 *   empty text, `TRUE`/`FALSE`, Excel's error values (`#N/A`).
 * - **Numbers** (issue #36): per column, by a random rank order. Each column position of the value
 *   blocks (the j-th column of every 2-D array of cell values, formulas' constants and `ValuesAsJson`
 *   cells; single values such as a setting's are one more "column") has a map of its own: its n
 *   distinct numbers get n distinct whole numbers (1 + random gaps of 1…1000, added up), dealt out
 *   in a random order. What survives, per column: which numbers are equal (the same number, the
 *   same placeholder). What does not: any value, sign, magnitude, order, difference or ratio, and
 *   anything across columns (a known fiscal year says nothing about a budget). One `a·x + b` for the
 *   whole transcript, as before #36, gave every number back exactly from two known ones; a map that
 *   kept the order would still give a number's rank in its column, which is its value in a column
 *   of consecutive whole numbers (periods, years, counts) and roughly its value wherever the
 *   column's range and spread are known. So a sorted table is no longer sorted in a scrubbed
 *   transcript, and its replay compares each block of cells by column (replay.ts).
 *   The text Excel shows for a number (`Text`, read beside `Values`) becomes the scrubbed number's
 *   digits; a `Text` read alone is a text like any other (its length and its digits' positions stay).
 * - **Formulas** keep their functions, operators, cell references and numbers; their text literals,
 *   sheet names and structured references (`Table1[@[Budget]]`) are mapped. A formula that is
 *   really a constant (what `formulas` returns for a value) is scrubbed as the value.
 * - Setting keys and values (the add-in's JSON, with environment addresses and binding ids) are
 *   mapped whole. Enumerations (`"Down"`, `"Contents"`) and the ids the host chose stay.
 *
 * What a scrubbed transcript can no longer show: exact values. `replayTranscript` compares values in
 * a scrubbed transcript by type only.
 *
 * Pure logic: no Office, no DOM.
 */
import { EXCEL_ERROR_VALUES } from "./replay";
import type { RecordedExchange, Transcript } from "./transcript";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The same-shaped placeholder of a text, before telling clashes apart. */
export function shapeOf(text: string): string {
  let out = "";
  for (const ch of text) {
    if (/\p{Nd}/u.test(ch)) out += "1";
    else if (/\p{L}/u.test(ch)) out += ch !== ch.toLowerCase() ? "X" : "x";
    else out += ch;
  }
  return out;
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** The placeholder with counter `n` written over its letters (base 26) or digits (base 10), from the end. */
function variant(base: string, n: number): string | null {
  const chars = [...base];
  const slots = chars.map((c, i) => (/[xX1]/.test(c) ? i : -1)).filter((i) => i >= 0);
  if (slots.length === 0) return null;
  let k = n;
  for (let s = slots.length - 1; s >= 0 && k > 0; s--) {
    const i = slots[s];
    if (chars[i] === "1") {
      chars[i] = String(k % 10);
      k = Math.floor(k / 10);
    } else {
      const l = LETTERS[k % 26];
      chars[i] = chars[i] === "X" ? l.toUpperCase() : l;
      k = Math.floor(k / 26);
    }
  }
  return k > 0 ? null : chars.join("");
}

/** Which number map a number belongs to: a column position of a value block, or a single value. */
export type NumberColumn = number | "single";

/**
 * The numbers of a transcript, per column, and their random rank maps: {@link collect} every number
 * first (the scrubber's first pass), then {@link map} gives each its scrubbed value.
 */
export class RankMaps {
  private readonly seen = new Map<NumberColumn, Set<number>>();
  private maps: Map<NumberColumn, Map<number, number>> | null = null;

  constructor(private readonly random: () => number = Math.random) {}

  collect(x: number, column: NumberColumn): void {
    if (!Number.isFinite(x)) return;
    let set = this.seen.get(column);
    if (!set) this.seen.set(column, (set = new Set()));
    set.add(Object.is(x, -0) ? 0 : x);
  }

  /** The scrubbed value of `x` in `column` (which must have been collected). */
  map(x: number, column: NumberColumn): number {
    if (!Number.isFinite(x)) return x;
    this.maps ??= this.build();
    const y = this.maps.get(column)?.get(Object.is(x, -0) ? 0 : x);
    if (y === undefined) throw new Error("A number was scrubbed that the first pass did not see.");
    return y;
  }

  private build(): Map<NumberColumn, Map<number, number>> {
    const out = new Map<NumberColumn, Map<number, number>>();
    for (const [column, set] of this.seen) {
      const m = new Map<number, number>();
      let y = 0;
      const ys: number[] = [];
      for (let i = 0; i < set.size; i++) ys.push((y += 1 + Math.floor(this.random() * 1000)));
      for (let i = ys.length - 1; i > 0; i--) {
        const k = Math.floor(this.random() * (i + 1));
        [ys[i], ys[k]] = [ys[k], ys[i]];
      }
      [...set].forEach((x, i) => m.set(x, ys[i]));
      out.set(column, m);
    }
    return out;
  }
}

/** The scrubber of one transcript: its text map and its numbers' rank maps. */
export class Scrubber {
  private readonly texts = new Map<string, string>();
  private readonly taken = new Set<string>();

  /**
   * @param ranks the transcript's number maps; `collecting`: this is the first pass, which only
   *   records the numbers (its output is thrown away).
   */
  constructor(
    private readonly ranks: RankMaps = new RankMaps(),
    private readonly collecting = false,
  ) {}

  /** Placeholder of a text (the same text, the same placeholder). */
  text(s: string): string {
    if (s === "" || /^(true|false)$/i.test(s) || EXCEL_ERROR_VALUES.has(s)) return s;
    const known = this.texts.get(s);
    if (known !== undefined) return known;
    const base = shapeOf(s);
    let p: string | null = base;
    if (base === s && !/[\p{L}\p{Nd}]/u.test(s)) p = s; // nothing to hide (punctuation, spaces)
    for (let n = 1; p !== null && this.taken.has(p.toLowerCase()) && p !== s; n++) p = variant(base, n);
    if (p === null) throw new Error("Cannot make a unique placeholder (too many texts of one shape).");
    this.texts.set(s, p);
    this.taken.add(p.toLowerCase());
    return p;
  }

  number(x: number, column: NumberColumn = "single"): number {
    if (this.collecting) {
      this.ranks.collect(x, column);
      return x;
    }
    return this.ranks.map(x, column);
  }

  /**
   * A cell value, or a block of them: text, number (by its column in a block); booleans and empty
   * stay; a `ValuesAsJson` cell keeps its type names and has its text and numbers scrubbed.
   */
  value(v: unknown, column: NumberColumn = "single"): unknown {
    if (typeof v === "string") return this.text(v);
    if (typeof v === "number") return this.number(v, column);
    if (Array.isArray(v)) return v.map((x, j) => (Array.isArray(x) ? x.map((c, k) => this.value(c, k)) : this.value(x, column === "single" ? j : column)));
    if (isObject(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = /^(type|basicType|errorType|errorSubType)$/.test(k) ? x : this.value(x, column);
      return out;
    }
    return v;
  }

  /** A formula: text literals, sheet names and structured references mapped; the rest kept. */
  formula(f: string): string {
    // A `formulas` read without `values` beside it cannot tell a text cell that looks like a formula
    // ("=SUM(A1:A9)" kept as text by the "@" format) from a formula. A string already met as a cell
    // value is that value: scrubbed as text, so the original never survives (issue #21's delta reads
    // the table as formulas only).
    if (!f.startsWith("=") || this.texts.has(f)) return this.text(f);
    return f.replace(/"((?:[^"]|"")*)"|'((?:[^']|'')+)'!|([A-Za-z_\u00C0-\uFFFF][\w.\u00C0-\uFFFF]*)(!|\[)|\[([^[\]]*)\]/g, (m, lit?: string, quoted?: string, name?: string, after?: string, inner?: string) => {
      if (lit !== undefined) return `"${this.text(lit.replace(/""/g, '"')).replace(/"/g, '""')}"`;
      if (quoted !== undefined) return `'${this.text(quoted.replace(/''/g, "'")).replace(/'/g, "''")}'!`;
      if (name !== undefined) return `${this.text(name)}${after}`;
      if (inner !== undefined) {
        if (inner.startsWith("#") || inner === "" ) return m;
        const at = inner.startsWith("@") ? "@" : "";
        const body = inner.slice(at.length);
        return body === "" ? m : `[${at}${this.text(body)}]`;
      }
      return m;
    });
  }

  /** `Sheet1!A1:B2`, `'My sheet'!A1`, `A1:B2`, several areas separated by commas. */
  address(a: string): string {
    return a
      .split(/,\s*/)
      .map((part) => {
        const m = /^(?:'((?:[^']|'')+)'|([^'!]+))!(.*)$/.exec(part);
        if (!m) return part;
        if (m[1] !== undefined) return `'${this.text(m[1].replace(/''/g, "'")).replace(/'/g, "''")}'!${m[3]}`;
        return `${this.text(m[2])}!${m[3]}`;
      })
      .join(a.includes(", ") ? ", " : ",");
  }
}

// -------------------------------------------------------------------------------------------------
// Which object a path or result is (for the meaning of its arguments and properties)

type Kind = "workbook" | "worksheets" | "worksheet" | "tables" | "table" | "columns" | "column" | "settings" | "setting" | "names" | "name" | "range" | "other";

const COLLECTION_ITEM: Partial<Record<Kind, Kind>> = { worksheets: "worksheet", tables: "table", columns: "column", settings: "setting", names: "name" };
const PROPERTY_KIND: Record<string, Kind> = { Worksheets: "worksheets", Tables: "tables", Columns: "columns", Settings: "settings", Names: "names", Worksheet: "worksheet" };
const ITEM_METHODS = new Set(["Add", "GetItem", "GetItemOrNullObject", "GetItemAt", "GetFirst", "GetLast", "GetNext", "GetPrevious", "GetActiveWorksheet", "GetNextOrNullObject", "GetPreviousOrNullObject", "GetFirstOrNullObject", "GetLastOrNullObject"]);
const RANGE_METHODS = /^Get.*Range|^GetCell|^GetRow|^GetColumn|^GetIntersection|^GetBoundingRect|^GetOffsetRange|^GetResizedRange|^GetHeaderRowRange|^GetDataBodyRange|^GetTotalRowRange|^GetLastRow|^GetEntire/;

interface PathInfo {
  ObjectPathType?: number;
  Name?: string;
  ParentObjectPathId?: number;
  ArgumentInfo?: { Arguments?: unknown[] };
}

class RequestShape {
  private readonly kinds = new Map<string, Kind>();
  constructor(
    private readonly paths: Record<string, PathInfo>,
    private readonly references: Map<string, Kind>,
  ) {}

  kind(id: unknown): Kind {
    const key = String(id);
    const known = this.kinds.get(key);
    if (known) return known;
    this.kinds.set(key, "other"); // cycles
    const p = this.paths[key];
    let k: Kind = "other";
    if (p) {
      const parent = p.ParentObjectPathId === undefined ? "other" : this.kind(p.ParentObjectPathId);
      const name = p.Name ?? "";
      if (p.ObjectPathType === 1) k = "workbook";
      else if (p.ObjectPathType === 4) k = PROPERTY_KIND[name] ?? (name === "Worksheet" ? "worksheet" : "other");
      else if (p.ObjectPathType === 5) k = COLLECTION_ITEM[parent] ?? "other";
      else if (p.ObjectPathType === 6) k = this.references.get(name) ?? "other";
      else if (p.ObjectPathType === 3) {
        if (name === "GetActiveWorksheet") k = "worksheet";
        else if (ITEM_METHODS.has(name) && COLLECTION_ITEM[parent]) k = COLLECTION_ITEM[parent]!;
        else if (RANGE_METHODS.test(name)) k = "range";
      }
    }
    this.kinds.set(key, k);
    return k;
  }
}

/** Scrubs the arguments of a method on an object of kind `on`. */
function scrubArguments(s: Scrubber, on: Kind, method: string, args: unknown[], hostIds: ReadonlySet<string>): unknown[] {
  const text = (v: unknown) => (typeof v === "string" && !hostIds.has(v) ? s.text(v) : v);
  if (/^GetRange|^GetRanges|OrNullObject$/.test(method) && on !== "worksheets" && on !== "tables" && on !== "columns" && on !== "settings" && on !== "names") {
    return args.map((a, i) => (i === 0 && typeof a === "string" ? s.address(a) : a));
  }
  switch (on) {
    case "worksheets":
      return /^(Add|GetItem|GetItemOrNullObject)$/.test(method) ? args.map((a, i) => (i === 0 ? text(a) : a)) : args;
    case "tables":
      if (method === "Add") return args.map((a, i) => (i === 0 && typeof a === "string" ? s.address(a) : a));
      return /^(GetItem|GetItemOrNullObject)$/.test(method) ? args.map((a, i) => (i === 0 ? text(a) : a)) : args;
    case "columns":
      if (method === "Add") return args.map((a, i) => (i === 1 ? s.value(a) : i === 2 ? text(a) : a));
      return /^(GetItem|GetItemOrNullObject)$/.test(method) ? args.map((a, i) => (i === 0 ? text(a) : a)) : args;
    case "settings":
      // Keys too: the add-in's keys carry its binding ids (random, but written into cells as well).
      if (method === "Add") return args.map((a) => (typeof a === "string" ? s.text(a) : a));
      return /^(GetItem|GetItemOrNullObject)$/.test(method) ? args.map((a, i) => (i === 0 && typeof a === "string" ? s.text(a) : a)) : args;
    case "names":
      if (method === "Add" || method === "AddFormulaLocal") return args.map((a, i) => (i === 0 ? text(a) : i === 1 && typeof a === "string" ? s.formula(a) : i === 2 ? text(a) : a));
      return /^(GetItem|GetItemOrNullObject)$/.test(method) ? args.map((a, i) => (i === 0 ? text(a) : a)) : args;
    case "range":
      if (method === "CopyFrom") return args.map((a, i) => (i === 0 && typeof a === "string" ? s.address(a) : a));
      return args;
    default:
      return args;
  }
}

/** Scrubs a property written with SetProperty. */
function scrubSet(s: Scrubber, on: Kind, property: string, value: unknown): unknown {
  if (property === "Values" || property === "Text") return s.value(value);
  if (/^Formulas/.test(property)) return mapCells(value, (c, j) => (typeof c === "string" ? s.formula(c) : s.value(c, j)));
  if (property === "Formula") return typeof value === "string" ? s.formula(value) : value;
  if (property === "Name" && (on === "worksheet" || on === "table" || on === "column" || on === "name")) return typeof value === "string" ? s.text(value) : value;
  if (property === "Value" && (on === "setting" || on === "name")) return typeof value === "string" ? s.text(value) : s.value(value);
  return value;
}

/** Maps the cells of a block (or a row, or one cell), telling `f` each cell's column. */
function mapCells(v: unknown, f: (c: unknown, column: NumberColumn) => unknown): unknown {
  if (!Array.isArray(v)) return f(v, "single");
  return v.map((x, j) => (Array.isArray(x) ? x.map((c, k) => f(c, k)) : f(x, j)));
}

/**
 * `Text` read beside `Values`: the text of a number cell is the scrubbed number's digits (the shown
 * text would keep the original's length and format, hence its magnitude); other cells as texts.
 */
function numberTexts(s: Scrubber, text: unknown, values: unknown[]): unknown {
  if (!Array.isArray(text)) return s.value(text);
  return text.map((row: unknown, i) => {
    const vrow = values[i];
    if (!Array.isArray(row) || !Array.isArray(vrow)) return s.value(row);
    return row.map((c: unknown, j) => {
      const v: unknown = vrow[j];
      return typeof v === "number" && typeof c === "string" ? String(s.number(v, j)) : s.value(c, j);
    });
  });
}

/** Scrubs a result value of an object of kind `on`. */
function scrubResult(s: Scrubber, on: Kind, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => scrubResult(s, on, x));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === "_Items") out[k] = Array.isArray(x) ? x.map((item) => scrubResult(s, COLLECTION_ITEM[on] ?? "other", item)) : x;
    else if (k === "Text" && Array.isArray(v.Values)) out[k] = numberTexts(s, x, v.Values);
    else if (k === "Values" || k === "Text" || k === "ValuesAsJson") out[k] = s.value(x);
    else if (/^Formulas/.test(k)) {
      const values = v.Values;
      out[k] = Array.isArray(x)
        ? x.map((row: unknown, i) =>
            Array.isArray(row)
              ? row.map((c: unknown, j) => {
                  const constant = Array.isArray(values) && Array.isArray(values[i]) && (values[i] as unknown[])[j] === c;
                  return typeof c === "string" && !constant ? s.formula(c) : s.value(c, j);
                })
              : row,
          )
        : typeof x === "string" ? s.formula(x) : s.value(x);
    } else if (k === "Formula") out[k] = typeof x === "string" ? s.formula(x) : x;
    else if (k === "Address" || k === "AddressLocal") out[k] = typeof x === "string" ? s.address(x) : x;
    else if (k === "Name") out[k] = typeof x === "string" && on !== "setting" ? s.text(x) : x;
    else if (on === "setting" && (k === "Key" || k === "_Id")) out[k] = typeof x === "string" ? s.text(x) : x;
    else if (k === "Value") out[k] = on === "setting" || on === "name" || on === "other" ? s.value(x) : x;
    else if (k in PROPERTY_KIND) out[k] = scrubResult(s, PROPERTY_KIND[k], x);
    else if (isObject(x) || Array.isArray(x)) out[k] = scrubResult(s, "other", x);
    else out[k] = x;
  }
  return out;
}

/** Every host id a transcript's answers carry (kept as they are wherever they appear). */
function hostIdsOf(t: Transcript): Set<string> {
  const ids = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObject(v))
      for (const [k, x] of Object.entries(v)) {
        if ((k === "_Id" || k === "_ReferenceId" || k === "Id") && typeof x === "string") ids.add(x);
        else walk(x);
      }
  };
  for (const sc of t.scenarios) for (const x of sc.exchanges) if (x.answer.kind === "response") walk(x.answer.body);
  return ids;
}

interface ActionInfo {
  Id?: number;
  ActionType?: number;
  Name?: string;
  ObjectPathId?: number;
  ArgumentInfo?: { Arguments?: unknown[] };
}

function scrubExchange(s: Scrubber, x: RecordedExchange, references: Map<string, Kind>, hostIds: ReadonlySet<string>): RecordedExchange {
  const body = isObject(x.request.body) ? x.request.body : {};
  const paths = (isObject(body.ObjectPaths) ? body.ObjectPaths : {}) as Record<string, PathInfo>;
  const shape = new RequestShape(paths, references);
  const newPaths: Record<string, unknown> = {};
  for (const [id, p] of Object.entries(paths)) {
    const args = p.ArgumentInfo?.Arguments;
    if (!Array.isArray(args) || args.length === 0) {
      newPaths[id] = p;
      continue;
    }
    const parent = p.ParentObjectPathId === undefined ? "other" : shape.kind(p.ParentObjectPathId);
    const scrubbed = scrubArguments(s, parent, p.ObjectPathType === 5 ? "GetItem" : (p.Name ?? ""), args, hostIds);
    newPaths[id] = { ...p, ArgumentInfo: { ...p.ArgumentInfo, Arguments: scrubbed } };
  }
  const actions = (Array.isArray(body.Actions) ? body.Actions : []) as ActionInfo[];
  const kindOfAction = new Map<number, Kind>();
  const newActions = actions.map((a) => {
    const on = shape.kind(a.ObjectPathId);
    if (a.Id !== undefined) kindOfAction.set(a.Id, on);
    const args = a.ArgumentInfo?.Arguments;
    if (!Array.isArray(args)) return a;
    let scrubbed = args;
    if (a.ActionType === 4) scrubbed = args.map((v, i) => (i === 0 ? scrubSet(s, on, a.Name ?? "", v) : v));
    else if (a.ActionType === 3) scrubbed = scrubArguments(s, on, a.Name ?? "", args, hostIds);
    return { ...a, ArgumentInfo: { ...a.ArgumentInfo, Arguments: scrubbed } };
  });
  const request = { body: { ...body, ObjectPaths: newPaths, Actions: newActions }, flags: x.request.flags };

  if (x.answer.kind === "refused") return { request, answer: { kind: "refused", code: x.answer.code, ...(x.answer.message ? { message: "(scrubbed)" } : {}) } };
  const answer = isObject(x.answer.body) ? x.answer.body : {};
  const out: Record<string, unknown> = { ...answer };
  if (Array.isArray(answer.Results)) {
    out.Results = answer.Results.map((r: unknown) => {
      if (!isObject(r)) return r;
      const on = kindOfAction.get(Number(r.ActionId)) ?? "other";
      if (isObject(r.Value) && typeof r.Value._ReferenceId === "string") references.set(r.Value._ReferenceId, on);
      return { ...r, Value: scrubResult(s, on, r.Value) };
    });
  }
  if (isObject(answer.Error)) out.Error = { ...answer.Error, Message: "(scrubbed)" };
  return { request, answer: { kind: "response", body: out } };
}

/**
 * A scrubbed copy of a transcript (see the file comment). Two passes: the first only collects the
 * numbers of every column (their rank maps need them all), the second scrubs. `random` draws the
 * rank maps' gaps (tests pass a fixed one; by default `Math.random`, never written down).
 */
export function scrubTranscript(t: Transcript, random: () => number = Math.random): Transcript {
  const ranks = new RankMaps(random);
  const hostIds = hostIdsOf(t);
  const pass = (s: Scrubber): Transcript => {
    const references = new Map<string, Kind>();
    return {
      ...t,
      scrubbed: true,
      workbook: { ...t.workbook, sheets: t.workbook.sheets.map((n) => s.text(n)) },
      scenarios: t.scenarios.map((sc) => ({ name: sc.name, exchanges: sc.exchanges.map((x) => scrubExchange(s, x, references, hostIds)) })),
    };
  };
  pass(new Scrubber(ranks, true));
  return pass(new Scrubber(ranks));
}
