/**
 * Formulas: relative-reference translation (for calculated columns, sorting, inserted cells) and a
 * deliberately small evaluator so tests can observe results. Supported: numbers, strings, booleans,
 * error literals, A1 references and ranges (optionally sheet-qualified), structured references to
 * table columns (`[@Col]`, `[@[Col name]]`, `Table1[Col]`, `Table1[[#This Row],[Col]]`), the operators
 * + - * / ^ & = <> < > <= >= % and unary -/+/@, and the functions SUM, AVERAGE, MIN, MAX, COUNT, COUNTA,
 * IF, IFERROR, ROUND, ABS, AND, OR, NOT, CONCAT, CONCATENATE, LEN, UPPER, LOWER, and (issue #24, for the
 * delta refresh's block checksums) LET, SEQUENCE, MID, UNICODE, MOD, TEXTJOIN, ISTEXT, ISNUMBER,
 * ISBLANK, ISERROR, ISFORMULA, ROW, COLUMN, INDEX (reference form), with dynamic arrays: operators and these functions apply
 * element by element over arrays and multi-cell ranges, a dimension of 1 broadcast (`lift`). A
 * formula whose final result is an array larger than one cell is #VALUE! here (Excel would spill it;
 * the stricter reading, as nothing of ours relies on a spill).
 * Anything else evaluates to `#NAME?`, which is also what Excel shows for an unknown name.
 */
import { MAX_COLUMNS, MAX_ROWS, Rect, columnIndexOf, columnLetters, rectContains } from "./address";
import type { SheetModel, TableModel } from "./shapes";
import { CellError, CellValue, isCellError, numberText } from "./values";

/** The parts of a culture that turn numbers and logical values into text inside a formula (`locales.ts`). */
export interface FormulaLocale {
  readonly decimalSeparator: string;
  readonly profile: { readonly trueText: string; readonly falseText: string };
}
const EN_US: FormulaLocale = { decimalSeparator: ".", profile: { trueText: "TRUE", falseText: "FALSE" } };

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
    // A string literal, a quoted sheet name or a structured reference: copied as it is.
    const verbatim = verbatimEnd(formula, i, true);
    if (verbatim >= 0) {
      out += formula.slice(i, verbatim);
      i = verbatim;
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
  /** True when the cell holds a formula (ISFORMULA); absent: no cell does. */
  hasFormula?(sheet: SheetModel, r: number, c: number): boolean;
  /** What a defined name refers to (`=Sheet1!$C$5`), as seen from a formula on `sheet`; undefined: no such name. */
  nameFormula?(name: string, sheet: SheetModel | null): string | undefined;
  /** The culture numbers and logical values are written in when turned into text (issue #34); absent: en-US. */
  readonly locale?: FormulaLocale;
}

export interface EvalContext {
  wb: FormulaWorkbook;
  sheet: SheetModel;
  row: number;
  col: number;
  /** Defined names being evaluated (a name referring to itself evaluates to #NAME?, not forever). */
  names?: readonly string[];
}

interface RangeValue {
  kind: "range";
  sheet: SheetModel;
  rect: Rect;
}
/** A dynamic array (issue #24: SEQUENCE, MID/UNICODE over arrays, operators broadcasting), row-major. */
interface ArrayValue {
  kind: "array";
  rows: number;
  cols: number;
  data: CellValue[];
  /** Known to hold numbers only (a SEQUENCE, an arithmetic result): not checked again element by element. */
  numeric?: boolean;
}
type Value = CellValue | RangeValue | ArrayValue;

const isRange = (v: Value): v is RangeValue => v !== null && typeof v === "object" && "kind" in v && v.kind === "range";
const isArray = (v: Value): v is ArrayValue => v !== null && typeof v === "object" && "kind" in v && v.kind === "array";

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
    if (sheet !== undefined && /^#REF!/i.test(src.slice(i))) {
      // A reference whose cells were deleted (`Data!#REF!`).
      out.push({ t: "err", v: "#REF!" });
      i += 5;
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

/** Operations with a loop of their own over numeric arrays (the checksum formulas: tens of thousands of elements). */
type FastOp = "+" | "-" | "*" | "MOD";

/**
 * `op` over two numeric arrays broadcast to `n` elements (each either n long or one long), in one tight
 * loop; null when a result is not a finite number or a divisor is 0 (the caller's general path gives
 * the error values element by element).
 */
function allNumbers(data: readonly CellValue[]): boolean {
  for (let i = 0; i < data.length; i++) if (typeof data[i] !== "number") return false;
  return true;
}

function fastPair(op: FastOp, a: number[], b: number[], n: number): number[] | null {
  if ((a.length !== n && a.length !== 1) || (b.length !== n && b.length !== 1)) return null;
  if (op === "MOD" && (b.length === 1 ? b[0] === 0 : b.includes(0))) return null;
  // One loop per operation and shape (an array by a number, a number by an array, two arrays): these
  // run over every character of a checksum's block, tens of thousands of times per formula.
  const sa = a.length === n && n > 1, sb = b.length === n && n > 1;
  const out = new Array<number>(n).fill(0);
  switch (op) {
    case "+":
      if (sa && !sb) {
        const y = b[0];
        for (let i = 0; i < n; i++) {
          const x = a[i];
          out[i] = x + y;
        }
      } else if (!sa && sb) {
        const x = a[0];
        for (let i = 0; i < n; i++) {
          const y = b[i];
          out[i] = x + y;
        }
      } else {
        for (let i = 0; i < n; i++) {
          const x = a[sa ? i : 0], y = b[sb ? i : 0];
          out[i] = x + y;
        }
      }
      break;
    case "-":
      if (sa && !sb) {
        const y = b[0];
        for (let i = 0; i < n; i++) {
          const x = a[i];
          out[i] = x - y;
        }
      } else if (!sa && sb) {
        const x = a[0];
        for (let i = 0; i < n; i++) {
          const y = b[i];
          out[i] = x - y;
        }
      } else {
        for (let i = 0; i < n; i++) {
          const x = a[sa ? i : 0], y = b[sb ? i : 0];
          out[i] = x - y;
        }
      }
      break;
    case "*":
      if (sa && !sb) {
        const y = b[0];
        for (let i = 0; i < n; i++) {
          const x = a[i];
          out[i] = x * y;
        }
      } else if (!sa && sb) {
        const x = a[0];
        for (let i = 0; i < n; i++) {
          const y = b[i];
          out[i] = x * y;
        }
      } else {
        for (let i = 0; i < n; i++) {
          const x = a[sa ? i : 0], y = b[sb ? i : 0];
          out[i] = x * y;
        }
      }
      break;
    case "MOD":
      if (sa && !sb) {
        const y = b[0];
        for (let i = 0; i < n; i++) {
          const x = a[i];
          out[i] = x - y * Math.floor(x / y);
        }
      } else if (!sa && sb) {
        const x = a[0];
        for (let i = 0; i < n; i++) {
          const y = b[i];
          out[i] = x - y * Math.floor(x / y);
        }
      } else {
        for (let i = 0; i < n; i++) {
          const x = a[sa ? i : 0], y = b[sb ? i : 0];
          out[i] = x - y * Math.floor(x / y);
        }
      }
      break;
  }
  for (let i = 0; i < n; i++) if (!Number.isFinite(out[i])) return null;
  return out;
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
    if (isArray(v)) return v.rows === 1 && v.cols === 1 ? v.data[0] : VALUE;
    if (isRange(v)) {
      if (v.rect.r0 === v.rect.r1 && v.rect.c0 === v.rect.c1) return this.ctx.wb.valueAt(v.sheet, v.rect.r0, v.rect.c0);
      return VALUE;
    }
    return v;
  }

  /**
   * The same result as lifting `f` over two arguments, in one loop, when both are numbers or arrays of
   * numbers of broadcastable sizes (the checksum formulas' shape: thousands of elements); else null.
   */
  private numericPair(a: Value, b: Value, f: (x: number, y: number) => number | CellError, op?: FastOp): ArrayValue | null {
    if (!isArray(a) && !isArray(b)) return null;
    const ga = isArray(a) ? a : typeof a === "number" ? { kind: "array" as const, rows: 1, cols: 1, data: [a] } : null;
    const gb = isArray(b) ? b : typeof b === "number" ? { kind: "array" as const, rows: 1, cols: 1, data: [b] } : null;
    if (!ga || !gb) return null;
    const rows = Math.max(ga.rows, gb.rows), cols = Math.max(ga.cols, gb.cols);
    if ((ga.rows !== 1 && ga.rows !== rows) || (gb.rows !== 1 && gb.rows !== rows) || (ga.cols !== 1 && ga.cols !== cols) || (gb.cols !== 1 && gb.cols !== cols)) return null;
    if (!(ga.numeric || allNumbers(ga.data)) || !(gb.numeric || allNumbers(gb.data))) return null;
    const da = ga.data as number[], db = gb.data as number[];
    if (op) {
      const fast = fastPair(op, da, db, rows * cols);
      if (fast) return { kind: "array", rows, cols, data: fast, numeric: true };
    }
    const data = new Array<CellValue>(rows * cols);
    for (let r = 0; r < rows; r++) {
      const ra = ga.rows === 1 ? 0 : r * ga.cols, rb = gb.rows === 1 ? 0 : r * gb.cols;
      for (let c = 0; c < cols; c++) {
        const v = f(da[ra + (ga.cols === 1 ? 0 : c)], db[rb + (gb.cols === 1 ? 0 : c)]);
        data[r * cols + c] = typeof v === "number" && !Number.isFinite(v) ? err("#NUM!") : v;
      }
    }
    return { kind: "array", rows, cols, data };
  }

  /** Cell values of ranges already read by this evaluation (a LET name used several times is read once). */
  private grids = new Map<RangeValue, ArrayValue>();

  /** A range's cell values, or an array, as an array; a scalar as a 1×1 array. */
  private grid(v: Value): ArrayValue {
    if (isArray(v)) return v;
    if (isRange(v)) {
      const known = this.grids.get(v);
      if (known) return known;
      const { r0, c0, r1, c1 } = v.rect;
      const rows = r1 - r0 + 1, cols = c1 - c0 + 1;
      const data: CellValue[] = new Array<CellValue>(rows * cols).fill(null);
      this.ctx.wb.forEachStoredCell(v.sheet, v.rect, (r, c) => (data[(r - r0) * cols + (c - c0)] = this.ctx.wb.valueAt(v.sheet, r, c)));
      const g: ArrayValue = { kind: "array", rows, cols, data };
      this.grids.set(v, g);
      return g;
    }
    return { kind: "array", rows: 1, cols: 1, data: [v] };
  }

  /**
   * Applies `f` element by element when any argument is an array or a multi-cell range (dynamic-array
   * "lifting"; docs: "Dynamic array formulas and spilled array behavior"): a dimension of 1 is
   * broadcast over the other argument's; elements beyond a smaller array are #N/A (docs: "Guidelines
   * and examples of array formulas", arrays of different sizes). All scalar: `f` once.
   */
  private lift(args: Value[], f: (xs: CellValue[]) => CellValue): Value {
    const multi = args.some((a) => isArray(a) || (isRange(a) && (a.rect.r0 !== a.rect.r1 || a.rect.c0 !== a.rect.c1)));
    if (!multi) return f(args.map((a) => this.scalar(a)));
    const grids = args.map((a) => this.grid(a));
    const rows = Math.max(...grids.map((g) => g.rows));
    const cols = Math.max(...grids.map((g) => g.cols));
    const data = new Array<CellValue>(rows * cols);
    const xs = new Array<CellValue>(grids.length);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        let na = false;
        for (let k = 0; k < grids.length; k++) {
          const g = grids[k];
          const gr = g.rows === 1 ? 0 : r, gc = g.cols === 1 ? 0 : c;
          if (gr >= g.rows || gc >= g.cols) { na = true; break; }
          xs[k] = g.data[gr * g.cols + gc];
        }
        data[r * cols + c] = na ? err("#N/A") : f(xs);
      }
    }
    return { kind: "array", rows, cols, data };
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
  /**
   * A value as text inside a formula (`&`, CONCAT, TEXTJOIN, LEN, MID, …): a number with at most 15
   * significant digits (values.ts `numberText`) and the culture's decimal separator, a logical value
   * under the culture's name for it (`locales.ts`).
   */
  private str(v: CellValue): string | CellError {
    if (v === null) return "";
    const locale = this.ctx.wb.locale ?? EN_US;
    if (typeof v === "boolean") return v ? locale.profile.trueText : locale.profile.falseText;
    if (typeof v === "number") {
      const t = numberText(v);
      return locale.decimalSeparator === "." ? t : t.replace(".", locale.decimalSeparator);
    }
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
      const right = this.additive();
      // Element by element over arrays and multi-cell ranges (dynamic arrays, see `lift`).
      left = this.lift([left, right], ([p, q]) => {
        const a = this.str(p);
        const b = this.str(q);
        return isCellError(a) ? a : isCellError(b) ? b : a + b;
      });
    }
    return left;
  }

  private arith(a: Value, b: Value, f: (x: number, y: number) => number | CellError, op?: FastOp): Value {
    const fast = this.numericPair(a, b, f, op);
    if (fast) return fast;
    return this.lift([a, b], ([p, q]) => {
      const x = this.num(p);
      const y = this.num(q);
      if (isCellError(x)) return x;
      if (isCellError(y)) return y;
      const r = f(x, y);
      return typeof r === "number" && !Number.isFinite(r) ? err("#NUM!") : r;
    });
  }

  private additive(): Value {
    let left = this.term();
    let op: string | null;
    while ((op = this.peekOp("+", "-"))) {
      this.pos++;
      const right = this.term();
      left = this.arith(left, right, op === "+" ? (x, y) => x + y : (x, y) => x - y, op === "+" ? "+" : "-");
    }
    return left;
  }

  private term(): Value {
    let left = this.power();
    let op: string | null;
    while ((op = this.peekOp("*", "/"))) {
      this.pos++;
      const right = this.power();
      left = this.arith(left, right, op === "*" ? (x, y) => x * y : (x, y) => (y === 0 ? DIV0 : x / y), op === "*" ? "*" : undefined);
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
        if (t.v.toUpperCase() === "LET" && this.peekOp("(")) {
          this.pos++;
          return this.let();
        }
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
        for (let k = this.scopes.length - 1; k >= 0; k--) {
          const bound = this.scopes[k].get(t.v.toLowerCase());
          if (bound !== undefined) return bound;
        }
        return this.definedName(t.v);
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

  /** Names bound by LET, innermost last. */
  private scopes: Array<Map<string, Value>> = [];

  /**
   * `LET(name1, value1, [name2, value2, …], calculation)` (docs: LET function): each value is
   * calculated once, in order, and may use the names before it; a reference stays a reference. The
   * names apply only inside the LET; a name must be a plain identifier (a cell reference is refused,
   * as Excel refuses a name that conflicts with range syntax).
   */
  private let(): Value {
    const scope = new Map<string, Value>();
    this.scopes.push(scope);
    try {
      let pairs = 0;
      for (;;) {
        const t = this.toks[this.pos];
        const next = this.toks[this.pos + 1];
        if (t && t.t === "ident" && next && next.t === "op" && next.v === ",") {
          this.pos += 2;
          const v = this.comparison();
          scope.set(t.v.toLowerCase(), v);
          pairs++;
          this.expectOp(",");
          continue;
        }
        if (pairs === 0) throw new FormulaSyntaxError("LET needs a name and a value");
        const result = this.comparison();
        this.expectOp(")");
        return result;
      }
    } finally {
      this.scopes.pop();
    }
  }

  /** A defined name: its formula evaluated where the name is used (a range stays a range). */
  private definedName(name: string): Value {
    const seen = this.ctx.names ?? [];
    const f = this.ctx.wb.nameFormula?.(name, this.ctx.sheet);
    if (f === undefined || seen.includes(name.toLowerCase())) return NAME;
    try {
      const inner = new Evaluator(tokenize(f.replace(/^=/, "")), { ...this.ctx, names: [...seen, name.toLowerCase()] });
      return inner.expression();
    } catch (e) {
      if (e instanceof FormulaSyntaxError) return NAME;
      throw e;
    }
  }

  /** The whole token list as one expression, unreduced (a reference stays a range). */
  expression(): Value {
    const v = this.comparison();
    if (this.pos < this.toks.length) throw new FormulaSyntaxError("trailing tokens");
    return v;
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
      if (isArray(a)) {
        // Text and logical values inside an array are skipped like a range's (docs: SUM function).
        for (const v of a.data) out.push({ v, fromRange: true });
      } else if (isRange(a)) {
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
        if (name === "SUM" && args.length === 1 && isArray(args[0])) {
          // One array (the checksums' shape): numbers summed, text and logicals skipped, an error returned.
          let total = 0;
          const data = args[0].data;
          for (let i = 0; i < data.length; i++) {
            const v = data[i];
            if (typeof v === "number") total += v;
            else if (v !== null && typeof v === "object") return v;
          }
          return total;
        }
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
        // docs (IF function); over an array or multi-cell range of conditions, one result per element
        // (dynamic arrays, `lift`): each element takes its own branch's element.
        if (args.length < 2 || args.length > 3) return VALUE;
        const cond = args[0];
        if (isArray(cond) || (isRange(cond) && (cond.rect.r0 !== cond.rect.r1 || cond.rect.c0 !== cond.rect.c1))) {
          const has3 = args.length === 3;
          return this.lift(has3 ? [cond, args[1], args[2]] : [cond, args[1]], ([x, a, b]) => {
            const c = bool(x);
            if (isCellError(c)) return c;
            return c ? a : has3 ? b : false;
          });
        }
        const c = bool(cond);
        if (isCellError(c)) return c;
        return c ? args[1] : args.length === 3 ? args[2] : false;
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
        return this.lift(args, ([v]) => {
          const x = this.str(v);
          if (isCellError(x)) return x;
          return name === "LEN" ? x.length : name === "UPPER" ? x.toUpperCase() : x.toLowerCase();
        });
      }
      case "SEQUENCE": {
        // docs (SEQUENCE function): SEQUENCE(rows, [columns], [start], [step]), filled row by row;
        // an empty array (rows or columns 0) is #CALC!.
        if (args.length < 1 || args.length > 4) return VALUE;
        const n: number[] = [];
        for (let k = 0; k < 4; k++) {
          const d = 1;
          const x = k < args.length ? this.num(this.scalar(args[k])) : d;
          if (isCellError(x)) return x;
          n.push(x);
        }
        const rows = Math.trunc(n[0]), cols = Math.trunc(n[1]);
        if (rows < 0 || cols < 0) return VALUE;
        if (rows === 0 || cols === 0) return err("#CALC!");
        if (rows * cols > MAX_ROWS * 16) return err("#NUM!");
        const data: number[] = [];
        for (let i = 0; i < rows * cols; i++) data.push(n[2] + i * n[3]);
        return { kind: "array", rows, cols, data, numeric: data.every(Number.isFinite) };
      }
      case "MID": {
        // docs (MID function): start_num < 1 or num_chars < 0 is #VALUE!; past the end is "".
        if (args.length !== 3) return VALUE;
        const [t0, a0, b0] = args;
        if (typeof t0 === "string" && isArray(a0) && typeof b0 === "number" && b0 >= 0 && a0.data.every((x) => typeof x === "number" && x >= 1)) {
          // Characters of one text at many positions (the checksums' shape), in one loop.
          const len = Math.trunc(b0);
          const at = a0.data as number[];
          if (len === 1 && at.every((p, i) => p === i + 1)) {
            // Every character in order (MID(t, SEQUENCE(LEN(t)), 1)): the text's UTF-16 code units, "" past its end.
            const data: string[] = t0.slice(0, at.length).split("");
            while (data.length < at.length) data.push("");
            return { kind: "array", rows: a0.rows, cols: a0.cols, data };
          }
          return { kind: "array", rows: a0.rows, cols: a0.cols, data: at.map((p) => t0.substr(Math.trunc(p) - 1, len)) };
        }
        return this.lift(args, ([t, a, b]) => {
          const x = this.str(t), st = this.num(a), cnt = this.num(b);
          if (isCellError(x)) return x;
          if (isCellError(st)) return st;
          if (isCellError(cnt)) return cnt;
          const from = Math.trunc(st), len = Math.trunc(cnt);
          if (from < 1 || len < 0) return VALUE;
          return x.substr(from - 1, len);
        });
      }
      case "UNICODE": {
        // docs (UNICODE function): the code point of the first character; #VALUE! for a partial
        // surrogate or an invalid data type (the empty text is taken as invalid: there is no first character).
        if (args.length !== 1) return VALUE;
        const a0 = args[0];
        if (isArray(a0) && a0.data.every((x) => typeof x === "string" && x !== "")) {
          const data: CellValue[] = [];
          let numeric = true;
          for (const x of a0.data as string[]) {
            const cp = x.codePointAt(0)!;
            if (cp >= 0xd800 && cp <= 0xdfff) {
              data.push(VALUE);
              numeric = false;
            } else data.push(cp);
          }
          return { kind: "array", rows: a0.rows, cols: a0.cols, data, numeric };
        }
        return this.lift(args, ([v]) => {
          const x = this.str(v);
          if (isCellError(x)) return x;
          if (x === "") return VALUE;
          const cp = x.codePointAt(0)!;
          return cp >= 0xd800 && cp <= 0xdfff ? VALUE : cp;
        });
      }
      case "MOD": {
        // docs (MOD function): n - d*INT(n/d); the result has the sign of the divisor; d = 0 is #DIV/0!.
        if (args.length !== 2) return VALUE;
        return this.arith(args[0], args[1], (x, y) => (y === 0 ? DIV0 : x - y * Math.floor(x / y)), "MOD");
      }
      case "TEXTJOIN": {
        // docs (TEXTJOIN function): delimiter between every joined item (text1… may be ranges or arrays,
        // joined row by row); ignore_empty TRUE skips empty cells; over 32,767 characters is #VALUE!.
        if (args.length < 3) return VALUE;
        const delim = this.str(this.scalar(args[0]));
        if (isCellError(delim)) return delim;
        const ignore = bool(args[1]);
        if (isCellError(ignore)) return ignore;
        const parts: string[] = [];
        let length = 0;
        for (const a of args.slice(2)) {
          const g = isArray(a) || isRange(a) ? this.grid(a).data : [this.scalar(a)];
          for (const v of g) {
            if (isCellError(v)) return v;
            if (ignore && (v === null || v === "")) continue;
            // Numbers as Excel writes them into text: at most 15 significant digits, the culture's decimal separator (`str`).
            const x = this.str(v) as string;
            parts.push(x);
            length += x.length + delim.length;
            if (length > 32767 + delim.length) return VALUE;
          }
        }
        const out = parts.join(delim);
        return out.length > 32767 ? VALUE : out;
      }
      case "ISTEXT":
      case "ISNUMBER":
      case "ISLOGICAL":
      case "ISBLANK":
      case "ISERROR": {
        // docs (IS functions): TRUE/FALSE per value, never an error; over a range or array, one per cell.
        if (args.length !== 1) return VALUE;
        return this.lift(args, ([v]) =>
          name === "ISTEXT" ? typeof v === "string" : name === "ISNUMBER" ? typeof v === "number" : name === "ISLOGICAL" ? typeof v === "boolean" : name === "ISBLANK" ? v === null : isCellError(v));
      }
      case "SUBSTITUTE": {
        // docs (SUBSTITUTE function): SUBSTITUTE(text, old_text, new_text, [instance_num]): every
        // occurrence, or only the instance_num-th; an empty old_text changes nothing.
        if (args.length < 3 || args.length > 4) return VALUE;
        return this.lift(args, ([t, o, n, k]) => {
          const text = this.str(t), from = this.str(o), to = this.str(n);
          if (isCellError(text)) return text;
          if (isCellError(from)) return from;
          if (isCellError(to)) return to;
          if (from === "") return text;
          if (args.length === 3) return text.split(from).join(to);
          const nth = this.num(k);
          if (isCellError(nth)) return nth;
          if (Math.trunc(nth) < 1) return VALUE;
          let at = -1;
          for (let i = 0; i < Math.trunc(nth); i++) {
            at = text.indexOf(from, at + 1);
            if (at < 0) return text;
          }
          return text.slice(0, at) + to + text.slice(at + from.length);
        });
      }
      case "ROWS":
      case "COLUMNS": {
        // docs (ROWS, COLUMNS functions): the number of rows (columns) in a reference or array.
        if (args.length !== 1) return VALUE;
        const a = args[0];
        if (isRange(a)) return name === "ROWS" ? a.rect.r1 - a.rect.r0 + 1 : a.rect.c1 - a.rect.c0 + 1;
        if (isArray(a)) return name === "ROWS" ? a.rows : a.cols;
        return isCellError(a) ? a : 1;
      }
      case "ISFORMULA": {
        // docs (ISFORMULA function): TRUE when the reference holds a formula; over a range, one value
        // per cell (dynamic arrays). A value that is not a reference is #VALUE!.
        if (args.length !== 1) return VALUE;
        const a = args[0];
        if (!isRange(a)) return VALUE;
        const { r0, c0, r1, c1 } = a.rect;
        const has = (r: number, c: number) => !!this.ctx.wb.hasFormula?.(a.sheet, r, c);
        if (r0 === r1 && c0 === c1) return has(r0, c0);
        const cols = c1 - c0 + 1;
        const data: CellValue[] = [];
        for (let r = r0; r <= r1; r++) for (let c = c0; c < c0 + cols; c++) data.push(has(r, c));
        return { kind: "array", rows: r1 - r0 + 1, cols, data };
      }
      case "INDEX": {
        // docs (INDEX function, reference form): INDEX(reference, row_num, [column_num]) is the cell at
        // that row and column of the reference, itself a reference (so ISBLANK sees an empty cell); with
        // one index, a one-column reference takes it as the row and a one-row reference as the column. An
        // index outside the reference is #REF!. (Row or column 0, the whole column or row, is not emulated:
        // #VALUE!, the stricter reading.)
        if (args.length < 2 || args.length > 3) return VALUE;
        const a = args[0];
        if (!isRange(a)) return VALUE;
        const i = this.num(this.scalar(args[1]));
        const j = args.length === 3 ? this.num(this.scalar(args[2])) : 1;
        if (isCellError(i)) return i;
        if (isCellError(j)) return j;
        const { r0, c0, r1, c1 } = a.rect;
        let rr = Math.trunc(i), cc = Math.trunc(j);
        if (args.length === 2 && r0 === r1 && c0 !== c1) { cc = rr; rr = 1; }
        if (rr === 0 || cc === 0) return VALUE;
        if (rr < 0 || cc < 0 || r0 + rr - 1 > r1 || c0 + cc - 1 > c1) return REF;
        const r = r0 + rr - 1, c = c0 + cc - 1;
        return { kind: "range", sheet: a.sheet, rect: { r0: r, c0: c, r1: r, c1: c } };
      }
      case "ROW":
      case "COLUMN": {
        // docs (ROW, COLUMN functions): no argument → the formula's own cell; a range → its row numbers
        // as a vertical array (columns as a horizontal one).
        if (args.length === 0) return name === "ROW" ? this.ctx.row + 1 : this.ctx.col + 1;
        const a = args[0];
        if (args.length !== 1 || !isRange(a)) return VALUE;
        const { r0, c0, r1, c1 } = a.rect;
        if (name === "ROW") {
          if (r0 === r1) return r0 + 1;
          return { kind: "array", rows: r1 - r0 + 1, cols: 1, data: Array.from({ length: r1 - r0 + 1 }, (_, i) => r0 + 1 + i) };
        }
        if (c0 === c1) return c0 + 1;
        return { kind: "array", rows: 1, cols: c1 - c0 + 1, data: Array.from({ length: c1 - c0 + 1 }, (_, i) => c0 + 1 + i) };
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

/**
 * Where a run that the reference scanners copy untouched, starting at `i`, ends (the index after
 * it): a string literal `"…"` (doubled quotes inside), a quoted sheet name `'…'` when `sheetQuotes`,
 * or a structured reference `[…]` (nested brackets counted). A run that never closes ends past the
 * text. -1 when none starts at `i`.
 */
function verbatimEnd(text: string, i: number, sheetQuotes: boolean): number {
  const ch = text[i];
  if (ch === '"' || (sheetQuotes && ch === "'")) return closingQuote(text, i) + 1;
  if (ch === "[") return closingBracket(text, i) + 1;
  return -1;
}

/** Index of the quote that closes the quoted run opened at `start` (doubled quotes are escapes), or `text.length` when it never closes. */
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

// ---------- references adjusting when cells are inserted or deleted (issue #21) ----------

/**
 * A shift of cells on one sheet: `Range.insert("Down")` moves the cells of columns `c0..c1` from row
 * `at` down by `count`; `Range.delete("Up")` removes rows `at..at+count-1` of those columns and moves
 * the cells below up by `count`.
 */
export interface CellShift {
  sheetName: string;
  kind: "insert" | "delete";
  at: number;
  count: number;
  c0: number;
  c1: number;
}

const REF_PART = /^(\$?)([A-Za-z]{1,3})(\$?)(\d+)/;

/**
 * Where a rectangle of cells ends up after a shift, or null when all its cells were deleted (a
 * reference to them becomes `#REF!`). A rectangle only partly inside the shifted columns is left as
 * it is (Excel's rule there is not documented; the emulator takes the stricter reading that such a
 * reference does not follow). A range that the insertion point falls inside grows; one that loses
 * some rows to a deletion shrinks (Excel's behaviour when rows are inserted inside or deleted from a
 * range a formula refers to, e.g. `=SUM(F5:F24)` becoming `=SUM(F5:F25)`).
 */
export function shiftRect(rect: Rect, shift: CellShift): Rect | null {
  if (rect.c0 < shift.c0 || rect.c1 > shift.c1) return rect;
  const n = shift.count;
  if (shift.kind === "insert") {
    if (rect.r0 >= shift.at) return { ...rect, r0: rect.r0 + n, r1: rect.r1 + n };
    if (rect.r1 >= shift.at) return { ...rect, r1: rect.r1 + n };
    return rect;
  }
  const d0 = shift.at, d1 = shift.at + n - 1;
  if (rect.r1 < d0) return rect;
  if (rect.r0 > d1) return { ...rect, r0: rect.r0 - n, r1: rect.r1 - n };
  // Some rows of the rectangle are deleted.
  const firstLeft = rect.r0 < d0 ? rect.r0 : d1 + 1;
  const lastLeft = rect.r1 > d1 ? rect.r1 : d0 - 1;
  if (firstLeft > lastLeft) return null;
  const map = (r: number) => (r < d0 ? r : r - n);
  return { ...rect, r0: map(firstLeft), r1: map(lastLeft) };
}

/**
 * Rewrites every A1 reference of a formula (`B5`, `$B$5`, `B5:C9`, `Sheet1!B5`, `'My Sheet'!B5:C9`)
 * whose target `fn` moves: `fn` gets the sheet the reference names (undefined: the formula's own
 * sheet) and the rectangle, and answers the new rectangle, null for `#REF!`, or the same object to
 * leave the text untouched. Strings, structured references and names are copied as they are.
 */
export function rewriteReferences(formula: string, fn: (sheet: string | undefined, rect: Rect) => Rect | null): string {
  let out = "";
  let i = 0;
  const n = formula.length;
  while (i < n) {
    const ch = formula[i];
    // A string literal or a structured reference: copied as it is (a quoted sheet name is read below).
    const verbatim = verbatimEnd(formula, i, false);
    if (verbatim >= 0) {
      out += formula.slice(i, verbatim);
      i = verbatim;
      continue;
    }
    const prev = i > 0 ? formula[i - 1] : "";
    let sheet: string | undefined;
    let start = i;
    let j = i;
    if (ch === "'") {
      const q = closingQuote(formula, i);
      if (formula[q + 1] === "!") {
        sheet = formula.slice(i + 1, q).replace(/''/g, "'");
        j = q + 2;
      } else {
        out += formula.slice(i, q + 1);
        i = q + 1;
        continue;
      }
    } else if (/[A-Za-z_\\$]/.test(ch) && !IDENT_CHAR.test(prev)) {
      const ident = /^[A-Za-z_\\][A-Za-z0-9_.]*!/.exec(formula.slice(i));
      if (ident) {
        sheet = ident[0].slice(0, -1);
        j = i + ident[0].length;
      }
    } else {
      out += ch;
      i++;
      continue;
    }
    const a = REF_PART.exec(formula.slice(j));
    let end = a ? j + a[0].length : j;
    let b: RegExpExecArray | null = null;
    if (a && formula[end] === ":") {
      b = REF_PART.exec(formula.slice(end + 1));
      if (b) end = end + 1 + b[0].length;
    }
    const after = formula[end] ?? "";
    if (!a || /[A-Za-z0-9_(.!]/.test(after)) {
      // Not a reference: copy the identifier (or the sheet prefix and what follows it) as it is.
      if (sheet !== undefined) {
        out += formula.slice(start, j);
        i = j;
        continue;
      }
      let k = i;
      while (k < n && (IDENT_CHAR.test(formula[k]) || formula[k] === "$")) k++;
      out += formula.slice(i, Math.max(k, i + 1));
      i = Math.max(k, i + 1);
      continue;
    }
    const pa = { r: Number(a[4]) - 1, c: columnIndexOf(a[2]) };
    const pb = b ? { r: Number(b[4]) - 1, c: columnIndexOf(b[2]) } : pa;
    const rect: Rect = { r0: Math.min(pa.r, pb.r), c0: Math.min(pa.c, pb.c), r1: Math.max(pa.r, pb.r), c1: Math.max(pa.c, pb.c) };
    const moved = fn(sheet, rect);
    const prefix = formula.slice(start, j);
    if (moved === rect) {
      out += formula.slice(start, end);
    } else if (moved === null) {
      out += `${prefix}#REF!`;
    } else {
      const part = (m: RegExpExecArray, r: number, c: number) => `${m[1]}${columnLetters(c)}${m[3]}${r + 1}`;
      // Each corner keeps its own $ anchors and its place (a range written bottom-up stays so).
      const down = pa.r <= pb.r, right = pa.c <= pb.c;
      const first = part(a, down ? moved.r0 : moved.r1, right ? moved.c0 : moved.c1);
      out += prefix + first + (b ? `:${part(b, down ? moved.r1 : moved.r0, right ? moved.c1 : moved.c0)}` : "");
    }
    start = end;
    i = end;
  }
  return out;
}

/** A formula on sheet `hostSheet` after a shift: references into the shifted cells follow them, deleted ones become `#REF!`. */
export function adjustFormulaForShift(formula: string, hostSheet: string | null, shift: CellShift): string {
  return rewriteReferences(formula, (sheet, rect) => {
    const target = sheet ?? hostSheet;
    if (target === null || target.toLowerCase() !== shift.sheetName.toLowerCase()) return rect;
    const moved = shiftRect(rect, shift);
    if (moved !== null && moved.r0 === rect.r0 && moved.r1 === rect.r1) return rect;
    return moved;
  });
}
