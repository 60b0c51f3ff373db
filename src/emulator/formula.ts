/**
 * Formulas: relative-reference translation (for calculated columns, sorting, inserted cells) and a
 * deliberately small evaluator so tests can observe results. Supported: numbers, strings, booleans,
 * error literals, A1 references and ranges (optionally sheet-qualified), structured references to
 * table columns (`[@Col]`, `[@[Col name]]`, `Table1[Col]`, `Table1[[#This Row],[Col]]`), the operators
 * + - * / ^ & = <> < > <= >= % and unary -/+/@, and the functions SUM, AVERAGE, MIN, MAX, COUNT, COUNTA,
 * IF, IFERROR, ROUND, ABS, AND, OR, NOT, CONCAT, CONCATENATE, LEN, UPPER, LOWER.
 * Anything else evaluates to `#NAME?`, which is also what Excel shows for an unknown name.
 */
import { MAX_COLUMNS, MAX_ROWS, Rect, columnIndexOf, columnLetters, rectContains } from "./address";
import type { SheetModel, TableModel } from "./shapes";
import { CellError, CellValue, isCellError } from "./values";

const REF_AT = /^(\$?)([A-Za-z]{1,3})(\$?)(\d+)/;
const IDENT_CHAR = /[A-Za-z0-9_.\\]/;

/**
 * Moves every relative A1 reference in a formula by (dRow, dCol), leaving `$`-anchored parts,
 * strings, quoted sheet names and structured references alone. A reference moved off the grid
 * becomes `#REF!`, as in Excel.
 */
export function translateFormula(formula: string, dRow: number, dCol: number): string {
  if (dRow === 0 && dCol === 0) return formula;
  let out = "";
  let i = 0;
  const n = formula.length;
  while (i < n) {
    const ch = formula[i];
    if (ch === '"' || ch === "'") {
      // A string literal or a quoted sheet name: copied as it is (a doubled quote stays inside).
      const j = closingQuote(formula, i);
      out += formula.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === "[") {
      const j = closingBracket(formula, i);
      out += formula.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const prev = i > 0 ? formula[i - 1] : "";
    if (/[A-Za-z$]/.test(ch) && !IDENT_CHAR.test(prev)) {
      const m = REF_AT.exec(formula.slice(i));
      const after = m ? formula[i + m[0].length] ?? "" : "";
      if (m && !/[A-Za-z0-9_(.!]/.test(after)) {
        let col = columnIndexOf(m[2]);
        let row = Number(m[4]) - 1;
        if (m[1] === "") col += dCol;
        if (m[3] === "") row += dRow;
        out += col < 0 || row < 0 || col >= MAX_COLUMNS || row >= MAX_ROWS ? "#REF!" : `${m[1]}${columnLetters(col)}${m[3]}${row + 1}`;
        i += m[0].length;
        continue;
      }
      let j = i;
      while (j < n && (IDENT_CHAR.test(formula[j]) || formula[j] === "$")) j++;
      out += formula.slice(i, j);
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

// ---------- evaluation ----------

/**
 * What the evaluator reads from the workbook. `WorkbookModel` implements it; it is declared here so
 * that this module does not import the model (which imports this module).
 */
export interface FormulaWorkbook {
  readonly tables: readonly TableModel[];
  /** A registered custom function's value for this cell (`#BUSY!` until it arrives); undefined when none has this name. */
  callCustomFunction?(name: string, args: CellValue[], at: { sheet: SheetModel; row: number; col: number }): CellValue | undefined;
  valueAt(sheet: SheetModel, r: number, c: number): CellValue;
  sheetById(id: string): SheetModel | undefined;
  sheetByName(name: string): SheetModel | undefined;
  tableByName(name: string): TableModel | undefined;
  bodyRect(t: TableModel): Rect;
  forEachStoredCell(sheet: SheetModel, rect: Rect, fn: (r: number, c: number) => void): void;
}

export interface EvalContext {
  wb: FormulaWorkbook;
  sheet: SheetModel;
  row: number;
  col: number;
}

interface RangeValue {
  kind: "range";
  sheet: SheetModel;
  rect: Rect;
}
type Value = CellValue | RangeValue;

type Token =
  | { t: "num"; v: number }
  | { t: "str"; v: string }
  | { t: "err"; v: string }
  | { t: "ref"; sheet?: string; a: string; b?: string }
  | { t: "struct"; table?: string; spec: string }
  | { t: "ident"; v: string }
  | { t: "op"; v: string };

const err = (e: string): CellError => ({ error: e });
const NAME = err("#NAME?");
const VALUE = err("#VALUE!");
const DIV0 = err("#DIV/0!");
const REF = err("#REF!");

class FormulaSyntaxError extends Error {}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = src.length;
  const readSheetPrefix = (): string | undefined => {
    if (src[i] === "'") {
      let j = i + 1;
      let name = "";
      while (j < n) {
        if (src[j] === "'") {
          if (src[j + 1] === "'") { name += "'"; j += 2; continue; }
          break;
        }
        name += src[j++];
      }
      if (src[j + 1] !== "!") throw new FormulaSyntaxError("bad sheet reference");
      i = j + 2;
      return name;
    }
    return undefined;
  };
  while (i < n) {
    const ch = src[i];
    if (/\s/.test(ch)) { i++; continue; }
    if (ch === '"') {
      let j = i + 1;
      let s = "";
      while (j < n) {
        if (src[j] === '"') {
          if (src[j + 1] === '"') { s += '"'; j += 2; continue; }
          break;
        }
        s += src[j++];
      }
      if (j >= n) throw new FormulaSyntaxError("unterminated string");
      out.push({ t: "str", v: s });
      i = j + 1;
      continue;
    }
    const num = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      out.push({ t: "num", v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const e = /^(#NULL!|#DIV\/0!|#VALUE!|#REF!|#NAME\?|#NUM!|#N\/A)/i.exec(src.slice(i));
    if (e) {
      out.push({ t: "err", v: e[0].toUpperCase() });
      i += e[0].length;
      continue;
    }
    if (ch === "[") {
      const j = closingBracket(src, i);
      if (j >= n) throw new FormulaSyntaxError("unbalanced brackets");
      out.push({ t: "struct", spec: src.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    let sheet: string | undefined;
    if (ch === "'") sheet = readSheetPrefix();
    const rest = src.slice(i);
    const ident = /^[A-Za-z_\\][A-Za-z0-9_.]*/.exec(rest);
    if (sheet === undefined && ident && src[i + ident[0].length] === "!") {
      sheet = ident[0];
      i += ident[0].length + 1;
    }
    const ref = /^(\$?[A-Za-z]{1,3}\$?\d+)(?::(\$?[A-Za-z]{1,3}\$?\d+))?(?![A-Za-z0-9_(.])/.exec(src.slice(i));
    if (ref) {
      out.push(sheet === undefined ? { t: "ref", a: ref[1], b: ref[2] } : { t: "ref", sheet, a: ref[1], b: ref[2] });
      i += ref[0].length;
      continue;
    }
    if (sheet !== undefined) throw new FormulaSyntaxError("bad reference after sheet name");
    if (ident) {
      i += ident[0].length;
      if (src[i] === "[") {
        let depth = 0;
        let j = i;
        for (; j < n; j++) {
          if (src[j] === "[") depth++;
          else if (src[j] === "]" && --depth === 0) break;
        }
        if (j >= n) throw new FormulaSyntaxError("unbalanced brackets");
        out.push({ t: "struct", table: ident[0], spec: src.slice(i + 1, j) });
        i = j + 1;
        continue;
      }
      out.push({ t: "ident", v: ident[0] });
      continue;
    }
    const op = /^(<>|<=|>=|[-+*/^&=<>(),:%@])/.exec(rest);
    if (op) {
      out.push({ t: "op", v: op[0] });
      i += op[0].length;
      continue;
    }
    throw new FormulaSyntaxError(`unexpected '${ch}'`);
  }
  return out;
}

function parseCellRef(s: string): { r: number; c: number } {
  const m = /^\$?([A-Za-z]{1,3})\$?(\d+)$/.exec(s)!;
  return { r: Number(m[2]) - 1, c: columnIndexOf(m[1]) };
}

class Evaluator {
  private pos = 0;
  constructor(private readonly toks: Token[], private readonly ctx: EvalContext) {}

  run(): CellValue {
    const v = this.comparison();
    if (this.pos < this.toks.length) throw new FormulaSyntaxError("trailing tokens");
    return this.scalar(v);
  }

  private peekOp(...ops: string[]): string | null {
    const t = this.toks[this.pos];
    return t && t.t === "op" && ops.includes(t.v) ? t.v : null;
  }
  private expectOp(op: string): void {
    if (!this.peekOp(op)) throw new FormulaSyntaxError(`expected ${op}`);
    this.pos++;
  }

  scalar(v: Value): CellValue {
    if (v !== null && typeof v === "object" && "kind" in v) {
      if (v.rect.r0 === v.rect.r1 && v.rect.c0 === v.rect.c1) return this.ctx.wb.valueAt(v.sheet, v.rect.r0, v.rect.c0);
      return VALUE;
    }
    return v;
  }

  private num(v: CellValue): number | CellError {
    if (v === null) return 0;
    if (typeof v === "number") return v;
    if (typeof v === "boolean") return v ? 1 : 0;
    if (typeof v === "string") {
      const n = Number(v);
      return v.trim() !== "" && Number.isFinite(n) ? n : VALUE;
    }
    return v;
  }
  private str(v: CellValue): string | CellError {
    if (v === null) return "";
    if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
    if (typeof v === "number") return String(v);
    if (typeof v === "string") return v;
    return v;
  }

  private comparison(): Value {
    let left = this.concat();
    let op: string | null;
    while ((op = this.peekOp("=", "<>", "<", ">", "<=", ">="))) {
      this.pos++;
      const a = this.scalar(left);
      const b = this.scalar(this.concat());
      if (isCellError(a)) { left = a; continue; }
      if (isCellError(b)) { left = b; continue; }
      let d: number;
      if (typeof a === "number" && typeof b === "number") d = a - b;
      else {
        const x = String(a ?? "").toLowerCase();
        const y = String(b ?? "").toLowerCase();
        d = x < y ? -1 : x > y ? 1 : 0;
      }
      left = op === "=" ? d === 0 : op === "<>" ? d !== 0 : op === "<" ? d < 0 : op === ">" ? d > 0 : op === "<=" ? d <= 0 : d >= 0;
    }
    return left;
  }

  private concat(): Value {
    let left = this.additive();
    while (this.peekOp("&")) {
      this.pos++;
      const a = this.str(this.scalar(left));
      const b = this.str(this.scalar(this.additive()));
      left = isCellError(a) ? a : isCellError(b) ? b : a + b;
    }
    return left;
  }

  private arith(a: Value, b: Value, f: (x: number, y: number) => number | CellError): CellValue {
    const x = this.num(this.scalar(a));
    const y = this.num(this.scalar(b));
    if (isCellError(x)) return x;
    if (isCellError(y)) return y;
    const r = f(x, y);
    return typeof r === "number" && !Number.isFinite(r) ? err("#NUM!") : r;
  }

  private additive(): Value {
    let left = this.term();
    let op: string | null;
    while ((op = this.peekOp("+", "-"))) {
      this.pos++;
      const right = this.term();
      left = this.arith(left, right, op === "+" ? (x, y) => x + y : (x, y) => x - y);
    }
    return left;
  }

  private term(): Value {
    let left = this.power();
    let op: string | null;
    while ((op = this.peekOp("*", "/"))) {
      this.pos++;
      const right = this.power();
      left = this.arith(left, right, op === "*" ? (x, y) => x * y : (x, y) => (y === 0 ? DIV0 : x / y));
    }
    return left;
  }

  private power(): Value {
    let left = this.unary();
    while (this.peekOp("^")) {
      this.pos++;
      const right = this.unary();
      left = this.arith(left, right, (x, y) => Math.pow(x, y));
    }
    return left;
  }

  private unary(): Value {
    const op = this.peekOp("-", "+", "@");
    if (op) {
      this.pos++;
      const v = this.unary();
      if (op === "-") return this.arith(0, v, (x, y) => x - y);
      return v;
    }
    let v = this.primary();
    while (this.peekOp("%")) {
      this.pos++;
      v = this.arith(v, 100, (x, y) => x / y);
    }
    return v;
  }

  private primary(): Value {
    const t = this.toks[this.pos++];
    if (!t) throw new FormulaSyntaxError("unexpected end");
    switch (t.t) {
      case "num": return t.v;
      case "str": return t.v;
      case "err": return err(t.v);
      case "ref": return this.reference(t.sheet, t.a, t.b);
      case "struct": return this.structured(t.table, t.spec);
      case "ident": {
        if (this.peekOp("(")) {
          this.pos++;
          const args: Value[] = [];
          if (!this.peekOp(")")) {
            for (;;) {
              args.push(this.comparison());
              if (this.peekOp(",")) { this.pos++; continue; }
              break;
            }
          }
          this.expectOp(")");
          return this.call(t.v.toUpperCase(), args);
        }
        const u = t.v.toUpperCase();
        if (u === "TRUE") return true;
        if (u === "FALSE") return false;
        return NAME;
      }
      case "op":
        if (t.v === "(") {
          const v = this.comparison();
          this.expectOp(")");
          return v;
        }
        throw new FormulaSyntaxError(`unexpected ${t.v}`);
    }
  }

  private reference(sheetName: string | undefined, a: string, b?: string): Value {
    const sheet = sheetName === undefined ? this.ctx.sheet : this.ctx.wb.sheetByName(sheetName);
    if (!sheet) return REF;
    const p = parseCellRef(a);
    const q = b === undefined ? p : parseCellRef(b);
    if (p.c >= MAX_COLUMNS || q.c >= MAX_COLUMNS || p.r >= MAX_ROWS || q.r >= MAX_ROWS || p.r < 0 || q.r < 0) return REF;
    return {
      kind: "range",
      sheet,
      rect: { r0: Math.min(p.r, q.r), c0: Math.min(p.c, q.c), r1: Math.max(p.r, q.r), c1: Math.max(p.c, q.c) },
    };
  }

  private structured(tableName: string | undefined, spec: string): Value {
    const { wb, sheet, row, col } = this.ctx;
    const table = tableName !== undefined
      ? wb.tableByName(tableName)
      : wb.tables.find((t) => t.sheetId === sheet.id && rectContains(t.rect, row, col));
    if (!table) return REF;
    const tSheet = wb.sheetById(table.sheetId);
    if (!tSheet) return REF;
    // Normalise the forms [@Col], [@[Col]], [[#This Row],[Col]], [Col].
    let thisRow = false;
    let colName: string;
    let s = spec.trim();
    if (s.startsWith("@")) {
      thisRow = true;
      s = s.slice(1).trim();
      colName = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
    } else if (/^\[#This Row\]\s*,\s*\[/i.test(s)) {
      thisRow = true;
      colName = s.replace(/^\[#This Row\]\s*,\s*\[/i, "").replace(/\]$/, "");
    } else {
      colName = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
    }
    colName = colName.replace(/'(.)/g, "$1");
    const ci = table.columns.findIndex((c) => c.name.toLowerCase() === colName.toLowerCase());
    if (ci < 0) return REF;
    const body = wb.bodyRect(table);
    const c = table.rect.c0 + ci;
    if (thisRow) {
      if (tSheet !== sheet || row < body.r0 || row > body.r1) return VALUE;
      return { kind: "range", sheet: tSheet, rect: { r0: row, c0: c, r1: row, c1: c } };
    }
    return { kind: "range", sheet: tSheet, rect: { r0: body.r0, c0: c, r1: body.r1, c1: c } };
  }

  /** Flattens arguments for aggregate functions: ranges contribute their cells, scalars themselves. */
  private flatten(args: Value[]): Array<{ v: CellValue; fromRange: boolean }> {
    const out: Array<{ v: CellValue; fromRange: boolean }> = [];
    for (const a of args) {
      if (a !== null && typeof a === "object" && "kind" in a) {
        this.ctx.wb.forEachStoredCell(a.sheet, a.rect, (r, c) => out.push({ v: this.ctx.wb.valueAt(a.sheet, r, c), fromRange: true }));
      } else out.push({ v: a, fromRange: false });
    }
    return out;
  }

  private numbers(args: Value[]): number[] | CellError {
    const out: number[] = [];
    for (const { v, fromRange } of this.flatten(args)) {
      if (isCellError(v)) return v;
      if (fromRange) {
        if (typeof v === "number") out.push(v);
      } else {
        const n = this.num(v);
        if (isCellError(n)) return n;
        out.push(n);
      }
    }
    return out;
  }

  private call(name: string, args: Value[]): Value {
    const bool = (v: Value): boolean | CellError => {
      const s = this.scalar(v);
      if (isCellError(s)) return s;
      if (typeof s === "boolean") return s;
      if (typeof s === "number") return s !== 0;
      if (s === null) return false;
      const u = s.toUpperCase();
      return u === "TRUE" ? true : u === "FALSE" ? false : VALUE;
    };
    switch (name) {
      case "SUM":
      case "AVERAGE":
      case "MIN":
      case "MAX":
      case "COUNT": {
        const ns = this.numbers(args);
        if (isCellError(ns)) return name === "COUNT" ? this.flatten(args).filter((x) => typeof x.v === "number").length : ns;
        if (name === "SUM") return ns.reduce((s, x) => s + x, 0);
        if (name === "COUNT") return ns.length;
        if (name === "AVERAGE") return ns.length === 0 ? DIV0 : ns.reduce((s, x) => s + x, 0) / ns.length;
        if (ns.length === 0) return 0;
        return name === "MIN" ? Math.min(...ns) : Math.max(...ns);
      }
      case "COUNTA":
        return this.flatten(args).filter((x) => x.v !== null).length;
      case "SUBTOTAL": {
        // The totals row's functions: 1/101 average, 2/102 count, 3/103 counta, 9/109 sum (hidden rows are
        // not told apart here).
        if (args.length < 2) return VALUE;
        const fn = this.num(this.scalar(args[0]));
        if (isCellError(fn)) return fn;
        const map: Record<number, string> = { 1: "AVERAGE", 2: "COUNT", 3: "COUNTA", 4: "MAX", 5: "MIN", 9: "SUM" };
        const inner = map[fn % 100];
        return inner ? this.call(inner, args.slice(1)) : VALUE;
      }
      case "IF": {
        if (args.length < 2 || args.length > 3) return VALUE;
        const c = bool(args[0]);
        if (isCellError(c)) return c;
        return c ? this.scalar(args[1]) : args.length === 3 ? this.scalar(args[2]) : false;
      }
      case "IFERROR": {
        if (args.length !== 2) return VALUE;
        const v = this.scalar(args[0]);
        return isCellError(v) ? this.scalar(args[1]) : v;
      }
      case "ROUND": {
        if (args.length !== 2) return VALUE;
        return this.arith(args[0], args[1], (x, d) => {
          const f = Math.pow(10, Math.trunc(d));
          return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
        });
      }
      case "ABS":
        return args.length === 1 ? this.arith(args[0], 0, (x) => Math.abs(x)) : VALUE;
      case "AND":
      case "OR": {
        const bs: boolean[] = [];
        for (const a of args) {
          const b = bool(a);
          if (isCellError(b)) return b;
          bs.push(b);
        }
        return name === "AND" ? bs.every(Boolean) : bs.some(Boolean);
      }
      case "NOT": {
        if (args.length !== 1) return VALUE;
        const b = bool(args[0]);
        return isCellError(b) ? b : !b;
      }
      case "CONCAT":
      case "CONCATENATE": {
        let s = "";
        for (const { v } of this.flatten(args)) {
          const x = this.str(v);
          if (isCellError(x)) return x;
          s += x;
        }
        return s;
      }
      case "LEN":
      case "UPPER":
      case "LOWER": {
        if (args.length !== 1) return VALUE;
        const x = this.str(this.scalar(args[0]));
        if (isCellError(x)) return x;
        return name === "LEN" ? x.length : name === "UPPER" ? x.toUpperCase() : x.toLowerCase();
      }
      default: {
        // NAMESPACE.NAME(...): an add-in's custom function (custom-functions.ts), called with scalar arguments.
        const wb = this.ctx.wb;
        if (name.includes(".") && wb.callCustomFunction) {
          const v = wb.callCustomFunction(name, args.map((a) => this.scalar(a)), { sheet: this.ctx.sheet, row: this.ctx.row, col: this.ctx.col });
          if (v !== undefined) return v;
        }
        return NAME;
      }
    }
  }
}

/** Evaluates a formula (with leading `=`) in the context of one cell. Syntax errors give `#NAME?`. */
export function evaluateFormula(formula: string, ctx: EvalContext): CellValue {
  try {
    const toks = tokenize(formula.replace(/^=/, ""));
    return new Evaluator(toks, ctx).run();
  } catch (e) {
    if (e instanceof FormulaSyntaxError) return NAME;
    throw e;
  }
}

/** Index of the quote that closes the quoted run opened at `start` (doubled quotes are escapes). */
/** Index of the `]` closing the `[` at `start` (nested brackets counted), or `text.length` when it never closes. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  let j = start;
  for (; j < text.length; j++) {
    if (text[j] === "[") depth++;
    else if (text[j] === "]" && --depth === 0) break;
  }
  return j;
}

function closingQuote(text: string, start: number): number {
  const q = text[start];
  let j = start + 1;
  while (j < text.length) {
    if (text[j] === q) {
      if (text[j + 1] === q) { j += 2; continue; }
      break;
    }
    j++;
  }
  return j;
}
