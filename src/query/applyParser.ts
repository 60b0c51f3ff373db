/**
 * Parser for `$apply` (OData Data Aggregation 4.0): transformations chained with `/`.
 *
 *     apply       = step *( "/" step )
 *     step        = "aggregate(" aggItem *( "," aggItem ) ")"
 *                 | "groupby((" column *( "," column ) ")" [ "," apply ] ")"
 *                 | "filter(" boolean expression ")"
 *                 | "compute(" expression " as " alias *( "," expression " as " alias ) ")"
 *     aggItem     = expression " with " ( sum | min | max | average | countdistinct ) " as " alias
 *                 | "$count as " alias
 *
 * Expressions are the `$filter` language: their text is handed to the `$filter` parser, padded so
 * its positions are positions in the `$apply` text. Positions are 1-based, as in every query error.
 */
import type { Expr } from "./ast";
import { QueryError } from "./errors";
import { parseFilter } from "./parser";

export type AggregateMethod = "sum" | "min" | "max" | "average" | "countdistinct";
export const AGGREGATE_METHODS: readonly AggregateMethod[] = ["sum", "min", "max", "average", "countdistinct"];
export const TRANSFORMATIONS = ["aggregate", "groupby", "filter", "compute"] as const;
/**
 * Nesting limit of transformations inside `groupby(..., ...)`: parsing recurses once per level, so
 * the stack stays small. Chained steps (`t1/t2/...`) have no limit: they are parsed in a loop.
 */
export const MAX_APPLY_NESTING = 20;

/** A column reference as written (`"quoted"` names are exact, as in `$filter`). */
export interface ApplyColumnRef {
  name: string;
  quoted: boolean;
  pos: number;
  text: string;
}

export type AggregateItem =
  | { k: "count"; alias: string; aliasPos: number; pos: number }
  | { k: "method"; expr: Expr; exprText: string; method: AggregateMethod; alias: string; aliasPos: number; pos: number };

export interface ComputeItem {
  expr: Expr;
  /** The expression as written (for errors). */
  exprText: string;
  alias: string;
  aliasPos: number;
  pos: number;
}

export type ApplyStep =
  | { k: "filter"; expr: Expr; pos: number }
  | { k: "compute"; items: ComputeItem[]; pos: number }
  | { k: "aggregate"; items: AggregateItem[]; pos: number }
  | { k: "groupby"; columns: ApplyColumnRef[]; steps: ApplyStep[]; pos: number };

type Kind = "word" | "lparen" | "rparen" | "comma" | "slash" | "string" | "quoted" | "other" | "eof";
interface Tok {
  kind: Kind;
  text: string;
  pos: number;
  /** Content of a quoted name (`""` unescaped). */
  value?: string;
}

const WORD = /[$\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*/uy;
const ALIAS = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*$/u;

const SINGLE: Partial<Record<string, Kind>> = { "(": "lparen", ")": "rparen", ",": "comma", "/": "slash" };

function scan(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const pos = i + 1;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      i++;
      continue;
    }
    const k = SINGLE[c];
    if (k) {
      out.push({ kind: k, text: c, pos });
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        const q = text.indexOf(c, j);
        if (q < 0) {
          throw new QueryError({
            code: "invalid_literal",
            detail: c === "'" ? "unterminated string literal (close it with ')" : 'unterminated quoted column name (close it with ")',
            position: pos,
          });
        }
        if (text[q + 1] === c) {
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      const raw = text.slice(i, j);
      out.push({ kind: c === "'" ? "string" : "quoted", text: raw, pos, value: raw.slice(1, -1).split(c + c).join(c) });
      i = j;
      continue;
    }
    WORD.lastIndex = i;
    const w = WORD.exec(text);
    if (w) {
      out.push({ kind: "word", text: w[0], pos });
      i += w[0].length;
      continue;
    }
    out.push({ kind: "other", text: c, pos });
    i++;
  }
  out.push({ kind: "eof", text: "", pos: text.length + 1 });
  return out;
}

function describe(t: Tok): string {
  return t.kind === "eof" ? "end of input" : `'${t.text}'`;
}

class ApplyParser {
  private i = 0;
  private depth = 0;
  constructor(
    private readonly text: string,
    private readonly toks: Tok[],
  ) {}

  peek(): Tok {
    return this.toks[this.i];
  }
  next(): Tok {
    const t = this.toks[this.i];
    if (t.kind !== "eof") this.i++;
    return t;
  }
  fail(expected: string, t: Tok = this.peek(), detail?: string): never {
    throw new QueryError({ code: "syntax", detail: detail ?? `expected ${expected}`, position: t.pos, expected, found: describe(t) });
  }
  expect(kind: Kind, label: string): Tok {
    if (this.peek().kind !== kind) this.fail(label);
    return this.next();
  }
  isWord(w: string): boolean {
    const t = this.peek();
    return t.kind === "word" && t.text.toLowerCase() === w;
  }

  sequence(): ApplyStep[] {
    const steps = [this.step()];
    while (this.peek().kind === "slash") {
      this.next();
      steps.push(this.step());
    }
    return steps;
  }

  step(): ApplyStep {
    const t = this.peek();
    const name = t.kind === "word" ? t.text.toLowerCase() : "";
    if (t.kind !== "word" || !(TRANSFORMATIONS as readonly string[]).includes(name)) {
      const known = ["topcount", "topsum", "toppercent", "bottomcount", "bottomsum", "bottompercent", "identity", "concat", "expand", "search", "ancestors", "descendants", "traverse", "rollup", "nest", "join", "outerjoin", "orderby", "top", "skip"];
      if (t.kind === "word" && known.includes(name)) {
        throw new QueryError({
          code: "syntax",
          detail: `the transformation '${t.text}' is not supported; use aggregate, groupby, filter or compute`,
          position: t.pos,
          expected: "aggregate, groupby, filter or compute",
          found: describe(t),
        });
      }
      this.fail("a transformation (aggregate, groupby, filter or compute)");
    }
    this.next();
    if (++this.depth > MAX_APPLY_NESTING) {
      throw new QueryError({ code: "syntax", detail: `transformations are nested too deeply (more than ${MAX_APPLY_NESTING} levels); chain them with '/' instead`, position: t.pos });
    }
    try {
      this.expect("lparen", `'(' after ${name}`);
      switch (name) {
        case "filter": {
          const [expr] = this.expression(["rparen"], "')'");
          this.next();
          return { k: "filter", expr, pos: t.pos };
        }
        case "compute": {
          const items: ComputeItem[] = [];
          for (;;) {
            const start = this.peek();
            const [expr, exprText] = this.expression(["as"], "'as' and a name for the computed column");
            this.next();
            const alias = this.alias();
            items.push({ expr, exprText, alias: alias.text, aliasPos: alias.pos, pos: start.pos });
            if (this.peek().kind === "comma") {
              this.next();
              continue;
            }
            this.expect("rparen", "',' or ')'");
            return { k: "compute", items, pos: t.pos };
          }
        }
        case "aggregate": {
          const items: AggregateItem[] = [];
          for (;;) {
            items.push(this.aggregateItem());
            if (this.peek().kind === "comma") {
              this.next();
              continue;
            }
            this.expect("rparen", "',' or ')'");
            return { k: "aggregate", items, pos: t.pos };
          }
        }
        default:
          return this.groupby(t.pos);
      }
    } finally {
      this.depth--;
    }
  }

  groupby(pos: number): ApplyStep {
    if (this.isWord("rollup")) this.fail("'('", this.peek(), "rollup is not supported; list the grouping columns in parentheses");
    this.expect("lparen", "'(' to start the list of grouping columns, as in groupby((col1, col2))");
    const columns: ApplyColumnRef[] = [];
    for (;;) {
      const c = this.peek();
      if (c.kind === "quoted") {
        this.next();
        columns.push({ name: c.value!, quoted: true, pos: c.pos, text: c.text });
      } else if (c.kind === "word" && !c.text.startsWith("$")) {
        if (c.text.toLowerCase() === "rollup" && this.toks[this.i + 1]?.kind === "lparen") {
          this.fail("a column name", c, "rollup is not supported; list the grouping columns in parentheses");
        }
        this.next();
        if (this.peek().kind === "slash") this.fail("',' or ')'", this.peek(), "navigation paths are not supported: the table is flat; name a column");
        columns.push({ name: c.text, quoted: false, pos: c.pos, text: c.text });
      } else {
        this.fail("a column name");
      }
      if (this.peek().kind === "comma") {
        this.next();
        continue;
      }
      this.expect("rparen", "',' or ')'");
      break;
    }
    let steps: ApplyStep[] = [];
    if (this.peek().kind === "comma") {
      this.next();
      steps = this.sequence();
    }
    this.expect("rparen", "')' to close groupby");
    return { k: "groupby", columns, steps, pos };
  }

  aggregateItem(): AggregateItem {
    const start = this.peek();
    if (start.kind === "word" && start.text.startsWith("$")) {
      if (start.text !== "$count") this.fail("$count or an expression", start, `unknown virtual property '${start.text}'; only $count is defined`);
      this.next();
      if (!this.isWord("as")) this.fail("'as' and a name for the count");
      this.next();
      const alias = this.alias();
      return { k: "count", alias: alias.text, aliasPos: alias.pos, pos: start.pos };
    }
    const [expr, exprText] = this.expression(["with"], "'with' and an aggregation method (sum, min, max, average, countdistinct)");
    this.next();
    const m = this.peek();
    const method = m.kind === "word" ? m.text.toLowerCase() : "";
    if (m.kind !== "word" || !(AGGREGATE_METHODS as readonly string[]).includes(method)) {
      this.fail("an aggregation method (sum, min, max, average, countdistinct)");
    }
    this.next();
    if (!this.isWord("as")) this.fail("'as' and a name for the result");
    this.next();
    const alias = this.alias();
    if (this.isWord("from")) {
      this.fail("',' or ')'", this.peek(), "'from' (aggregating over other properties first) is not supported; chain groupby(...)/aggregate(...) instead");
    }
    return { k: "method", expr, exprText, method: method as AggregateMethod, alias: alias.text, aliasPos: alias.pos, pos: start.pos };
  }

  alias(): Tok {
    const t = this.peek();
    if (t.kind !== "word" || !ALIAS.test(t.text)) this.fail("a name (letters, digits and _, starting with a letter or _)");
    return this.next();
  }

  /**
   * The expression from the cursor up to the first of `stops` outside parentheses (a word such as
   * `with`/`as`, or `rparen`), parsed as `$filter` text. Leaves the cursor on the stop token.
   */
  expression(stops: string[], label: string): [Expr, string] {
    const first = this.peek();
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind === "eof") this.fail(label);
      if (depth === 0) {
        const isStop = (t.kind === "word" && stops.includes(t.text.toLowerCase())) || stops.includes(t.kind);
        if (isStop) break;
        if (t.kind === "comma" || t.kind === "rparen") this.fail(label);
      }
      if (t.kind === "lparen") depth++;
      else if (t.kind === "rparen") depth--;
      this.next();
    }
    const stop = this.peek();
    if (stop === first) this.fail("an expression");
    const from = first.pos - 1;
    const body = this.text.slice(from, stop.pos - 1);
    // The offset keeps the $filter parser's positions equal to positions in the $apply text (no
    // padding: each expression costs its own length, so the whole text parses in linear time).
    return [parseFilter(body, from), body.trim()];
  }
}

/** Parses `$apply` text. Throws {@link QueryError} (without `option`; callers add it). */
export function parseApply(text: string): ApplyStep[] {
  const p = new ApplyParser(text, scan(text));
  if (p.peek().kind === "eof") p.fail("a transformation (aggregate, groupby, filter or compute)");
  const steps = p.sequence();
  if (p.peek().kind !== "eof") p.fail("'/' and another transformation, or end of input");
  return steps;
}
