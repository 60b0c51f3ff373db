/**
 * Recursive-descent parser for `$filter` and `$orderby`, with the operator precedence of OData 4.01
 * Part 2 §5.1.1.16, tightest first: grouping `( )`; primary (literals, columns, function calls,
 * `in`); unary `-` and `not`; `mul div divby mod`; `add sub`; relational `gt ge lt le`; equality
 * `eq ne`; `and`; `or`. Binary operators of one level associate to the left. So
 * `not Active eq true` is `(not Active) eq true`, `Active eq Budget gt 9` is
 * `Active eq (Budget gt 9)`, and `not Status in ('a')` is `not (Status in ('a'))`.
 */
import type { BinaryOp, Expr, OrderItem } from "./ast";
import { QueryError } from "./errors";
import { describeToken, tokenize, type Token } from "./lexer";

const EQUALITY = new Set(["eq", "ne"]);
const RELATIONAL = new Set(["gt", "ge", "lt", "le"]);
const COMPARISON = new Set([...EQUALITY, ...RELATIONAL]);
const ADDITIVE = new Set(["add", "sub"]);
const MULTIPLICATIVE = new Set(["mul", "div", "divby", "mod"]);
/** Words that can never be a bare column name (quote such a column: `"and"`). */
export const RESERVED: ReadonlySet<string> = new Set([...COMPARISON, ...ADDITIVE, ...MULTIPLICATIVE, "and", "or", "not", "in", "has", "asc", "desc"]);

/** Nesting limit (parentheses, `not`, `-`, function calls): keeps recursion far from the stack limit. */
export const MAX_NESTING = 100;
/** Depth limit of the whole tree (long `or` chains); compiled closures recurse this deep per row. */
export const MAX_DEPTH = 2000;

/** Leftmost source position of an expression (binary nodes carry their operator's position). */
export function startPos(e: Expr): number {
  switch (e.k) {
    case "bin":
      return startPos(e.left);
    case "in":
      return startPos(e.arg);
    default:
      return e.pos;
  }
}

class Parser {
  private i = 0;
  private nesting = 0;
  /** 1-based position just past the last consumed token. */
  private end = 1;
  constructor(
    private readonly tokens: Token[],
    private readonly source: string,
    /** Characters of the option's text before `source` (positions count from the option's start). */
    private readonly offset = 0,
  ) {
    this.end = 1 + offset;
  }

  /** Runs `f` one nesting level deeper, refusing pathological input with a clear error. */
  nested<T>(f: () => T): T {
    if (++this.nesting > MAX_NESTING) {
      throw new QueryError({
        code: "syntax",
        detail: `expression is nested too deeply (more than ${MAX_NESTING} levels)`,
        position: this.peek().pos,
      });
    }
    try {
      return f();
    } finally {
      this.nesting--;
    }
  }

  peek(): Token {
    return this.tokens[this.i];
  }
  next(): Token {
    const t = this.tokens[this.i];
    if (t.kind !== "eof") {
      this.i++;
      this.end = t.pos + t.text.length;
    }
    return t;
  }
  /** Lower-cased keyword at the cursor, or undefined when the token is not a word. */
  word(): string | undefined {
    const t = this.peek();
    return t.kind === "word" ? t.text.toLowerCase() : undefined;
  }

  fail(expected: string, t: Token = this.peek()): never {
    throw new QueryError({ code: "syntax", detail: `expected ${expected}`, position: t.pos, expected, found: describeToken(t) });
  }

  expect(kind: Token["kind"], label: string): Token {
    if (this.peek().kind !== kind) this.fail(label);
    return this.next();
  }

  parseOr(): Expr {
    let left = this.parseAnd();
    while (this.word() === "or") {
      const t = this.next();
      left = { k: "bin", op: "or", left, right: this.parseAnd(), pos: t.pos };
    }
    return left;
  }

  parseAnd(): Expr {
    let left = this.parseEquality();
    while (this.word() === "and") {
      const t = this.next();
      left = { k: "bin", op: "and", left, right: this.parseEquality(), pos: t.pos };
    }
    return left;
  }

  /** One left-associative level of Part 2's precedence table: `next (op next)*`. */
  private binaryLevel(ops: ReadonlySet<string>, next: () => Expr): Expr {
    let left = next();
    for (let w = this.word(); w !== undefined && ops.has(w); w = this.word()) {
      const t = this.next();
      left = { k: "bin", op: w as BinaryOp, left, right: next(), pos: t.pos };
    }
    return left;
  }

  parseEquality(): Expr {
    return this.binaryLevel(EQUALITY, () => this.parseRelational());
  }

  parseRelational(): Expr {
    return this.binaryLevel(RELATIONAL, () => this.parseAdditive());
  }

  parseAdditive(): Expr {
    return this.binaryLevel(ADDITIVE, () => this.parseMultiplicative());
  }

  parseMultiplicative(): Expr {
    let left = this.parseUnary();
    for (let w = this.word(); w !== undefined && MULTIPLICATIVE.has(w); w = this.word()) {
      const t = this.next();
      const right = this.parseUnary();
      const from = startPos(left);
      // Division and modulo keep their source text: a zero divisor is an error that quotes it.
      const text = w === "mul" ? undefined : this.source.slice(from - 1 - this.offset, this.end - 1 - this.offset);
      left = { k: "bin", op: w as BinaryOp, left, right, pos: t.pos, ...(text === undefined ? {} : { text }) };
    }
    return left;
  }

  parseUnary(): Expr {
    const t = this.peek();
    if (t.kind === "minus") {
      this.next();
      const arg = this.nested(() => this.parseUnary());
      // Fold `- 5` into a literal so it is a constant in `in (...)` lists and prints as written.
      if (arg.k === "lit" && arg.type === "integer") {
        const v = arg.value as number | bigint;
        return { k: "lit", type: arg.type, value: typeof v === "bigint" ? -v : -v, pos: t.pos, text: "-" + arg.text };
      }
      return { k: "neg", arg, pos: t.pos };
    }
    if (t.kind === "word" && t.text.toLowerCase() === "not") {
      this.next();
      return { k: "not", arg: this.nested(() => this.parseUnary()), pos: t.pos };
    }
    return this.parsePostfix();
  }

  /** A primary, then `in (...)`: `in` is a primary-level operator in OData 4.01's table. */
  parsePostfix(): Expr {
    let left = this.parsePrimary();
    for (;;) {
      const w = this.word();
      if (w === "in") {
        const t = this.next();
        left = { k: "in", arg: left, items: this.parseList(), pos: t.pos };
      } else if (w === "has") {
        throw new QueryError({
          code: "syntax",
          detail: "the 'has' operator (enumeration flags) is not supported: the tables have no enumeration columns",
          position: this.peek().pos,
        });
      } else {
        return left;
      }
    }
  }

  /** `( literal, ... )`, possibly empty (OData 4.01: `x in ()` is false). */
  parseList(): Expr[] {
    this.expect("lparen", "'(' to start the list of values");
    const items: Expr[] = [];
    if (this.peek().kind === "rparen") {
      this.next();
      return items;
    }
    for (;;) {
      items.push(this.nested(() => this.parseUnary()));
      if (this.peek().kind === "comma") {
        this.next();
        continue;
      }
      this.expect("rparen", "',' or ')'");
      return items;
    }
  }

  parsePrimary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case "lparen": {
        this.next();
        const e = this.nested(() => this.parseOr());
        this.expect("rparen", "')'");
        return e;
      }
      case "string":
        this.next();
        return { k: "lit", type: "text", value: t.value as string, pos: t.pos, text: t.text };
      case "integer":
      case "decimal":
      case "date":
      case "datetime":
        this.next();
        return { k: "lit", type: t.kind, value: t.value!, pos: t.pos, text: t.text };
      case "quoted":
        this.next();
        return { k: "col", name: t.value as string, quoted: true, pos: t.pos, text: t.text };
      case "word": {
        const w = t.text.toLowerCase();
        if (w === "true" || w === "false") {
          this.next();
          return { k: "lit", type: "boolean", value: w === "true", pos: t.pos, text: t.text };
        }
        if (w === "null") {
          this.next();
          return { k: "lit", type: "null", value: null, pos: t.pos, text: t.text };
        }
        // ABNF nanInfinity (case-sensitive): the special values `divby` zero makes, so they can be
        // compared with (`x divby y eq INF`); `-INF` is the negation of INF. A column named so is
        // written quoted ("INF").
        if ((t.text === "INF" || t.text === "NaN") && this.tokens[this.i + 1]?.kind !== "lparen") {
          this.next();
          return { k: "lit", type: "decimal", value: t.text === "INF" ? Infinity : NaN, pos: t.pos, text: t.text };
        }
        if (this.tokens[this.i + 1]?.kind === "lparen") return this.parseCall();
        if (RESERVED.has(w)) this.fail("an operand");
        this.next();
        return { k: "col", name: t.text, quoted: false, pos: t.pos, text: t.text };
      }
      default:
        return this.fail("an operand");
    }
  }

  parseCall(): Expr {
    const name = this.next();
    this.next(); // the '(' seen by the caller
    const args: Expr[] = [];
    if (this.peek().kind === "rparen") {
      this.next();
    } else {
      for (;;) {
        args.push(this.nested(() => this.parseOr()));
        if (this.peek().kind === "comma") {
          this.next();
          continue;
        }
        this.expect("rparen", "',' or ')'");
        break;
      }
    }
    return { k: "call", name: name.text.toLowerCase(), args, pos: name.pos, text: name.text };
  }

  atEnd(): boolean {
    return this.peek().kind === "eof";
  }
}

/**
 * Parses a `$filter` expression. Throws {@link QueryError} (without `option`; callers add it).
 * `offset`: how many characters of the option's text come before `text` (an expression inside
 * `$apply`), so positions in errors and in the tree are positions in the whole option.
 */
export function parseFilter(text: string, offset = 0): Expr {
  const p = new Parser(tokenize(text, offset), text, offset);
  if (p.atEnd()) p.fail("an expression");
  const e = p.parseOr();
  if (!p.atEnd()) p.fail("an operator or end of expression");
  checkDepth(e);
  return e;
}

function children(e: Expr): Expr[] {
  switch (e.k) {
    case "bin":
      return [e.left, e.right];
    case "in":
      return [e.arg, ...e.items];
    case "neg":
    case "not":
      return [e.arg];
    case "call":
      return e.args;
    default:
      return [];
  }
}

/** Iterative depth check (a recursive one would fail on the very input it guards against). */
function checkDepth(root: Expr): void {
  const stack: Array<[Expr, number]> = [[root, 1]];
  while (stack.length) {
    const [e, d] = stack.pop()!;
    if (d > MAX_DEPTH) {
      throw new QueryError({
        code: "syntax",
        detail: `expression is too long (more than ${MAX_DEPTH} chained operators); use 'in (...)' for a list of values`,
        position: e.pos,
      });
    }
    for (const c of children(e)) stack.push([c, d + 1]);
  }
}

/** Parses a `$orderby` list: `expr [asc|desc], ...`. */
export function parseOrderBy(text: string): OrderItem[] {
  const p = new Parser(tokenize(text), text);
  const items: OrderItem[] = [];
  for (;;) {
    const start = p.peek();
    if (start.kind === "eof") p.fail("a sort key");
    const expr = p.parseOr();
    checkDepth(expr);
    let desc = false;
    const w = p.word();
    if (w === "asc" || w === "desc") {
      p.next();
      desc = w === "desc";
    }
    items.push({ expr, desc, pos: start.pos });
    if (p.peek().kind === "comma") {
      p.next();
      continue;
    }
    if (!p.atEnd()) p.fail("',', 'asc', 'desc' or end of expression");
    return items;
  }
}
