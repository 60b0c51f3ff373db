/**
 * Recursive-descent parser for `$filter` and `$orderby`.
 *
 * Precedence, loosest first: `or`, `and`, `not`, comparisons and `in`, `add sub`, `mul div divby mod`,
 * unary `-`, primary. `not` sits below the comparisons (as in SQL and Power Query), so
 * `not a eq 1` means `not (a eq 1)`; strict OData would read `(not a) eq 1`, which is a type error
 * unless `a` is boolean, so no working OData filter changes meaning.
 */
import type { BinaryOp, Expr, OrderItem } from "./ast";
import { QueryError } from "./errors";
import { describeToken, tokenize, type Token } from "./lexer";

const COMPARISON = new Set(["eq", "ne", "gt", "ge", "lt", "le"]);
const ADDITIVE = new Set(["add", "sub"]);
const MULTIPLICATIVE = new Set(["mul", "div", "divby", "mod"]);
/** Words that can never be a bare column name (quote such a column: `"and"`). */
export const RESERVED: ReadonlySet<string> = new Set([...COMPARISON, ...ADDITIVE, ...MULTIPLICATIVE, "and", "or", "not", "in", "has", "asc", "desc"]);

/** Nesting limit (parentheses, `not`, `-`, function calls): keeps recursion far from the stack limit. */
export const MAX_NESTING = 100;
/** Depth limit of the whole tree (long `or` chains); compiled closures recurse this deep per row. */
export const MAX_DEPTH = 2000;

class Parser {
  private i = 0;
  private nesting = 0;
  constructor(private readonly tokens: Token[]) {}

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
    if (t.kind !== "eof") this.i++;
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
    let left = this.parseNot();
    while (this.word() === "and") {
      const t = this.next();
      left = { k: "bin", op: "and", left, right: this.parseNot(), pos: t.pos };
    }
    return left;
  }

  parseNot(): Expr {
    if (this.word() === "not") {
      const t = this.next();
      return { k: "not", arg: this.nested(() => this.parseNot()), pos: t.pos };
    }
    return this.parseComparison();
  }

  parseComparison(): Expr {
    let left = this.parseAdditive();
    for (;;) {
      const w = this.word();
      if (w !== undefined && COMPARISON.has(w)) {
        const t = this.next();
        left = { k: "bin", op: w as BinaryOp, left, right: this.parseAdditive(), pos: t.pos };
      } else if (w === "in") {
        const t = this.next();
        left = { k: "in", arg: left, items: this.parseList(), pos: t.pos };
      } else if (w === "has") {
        throw new QueryError({
          code: "syntax",
          detail: "the 'has' operator (enumeration flags) is not supported",
          position: this.peek().pos,
        });
      } else {
        return left;
      }
    }
  }

  parseList(): Expr[] {
    this.expect("lparen", "'(' to start the list of values");
    const items: Expr[] = [];
    for (;;) {
      items.push(this.parseAdditive());
      if (this.peek().kind === "comma") {
        this.next();
        continue;
      }
      this.expect("rparen", "',' or ')'");
      return items;
    }
  }

  parseAdditive(): Expr {
    let left = this.parseMultiplicative();
    for (let w = this.word(); w !== undefined && ADDITIVE.has(w); w = this.word()) {
      const t = this.next();
      left = { k: "bin", op: w as BinaryOp, left, right: this.parseMultiplicative(), pos: t.pos };
    }
    return left;
  }

  parseMultiplicative(): Expr {
    let left = this.parseUnary();
    for (let w = this.word(); w !== undefined && MULTIPLICATIVE.has(w); w = this.word()) {
      const t = this.next();
      left = { k: "bin", op: w as BinaryOp, left, right: this.parseUnary(), pos: t.pos };
    }
    return left;
  }

  parseUnary(): Expr {
    const t = this.peek();
    if (t.kind === "minus") {
      this.next();
      const arg = this.nested(() => this.parseUnary());
      // Fold `-5` into a literal so it is a constant in `in (...)` lists and prints as written.
      if (arg.k === "lit" && (arg.type === "integer" || arg.type === "decimal")) {
        const v = arg.value as number | bigint;
        return { k: "lit", type: arg.type, value: typeof v === "bigint" ? -v : -v, pos: t.pos, text: "-" + arg.text };
      }
      return { k: "neg", arg, pos: t.pos };
    }
    if (t.kind === "word" && t.text.toLowerCase() === "not") {
      // `not` in operand position (`a eq not b`) binds to its operand only.
      this.next();
      return { k: "not", arg: this.nested(() => this.parseUnary()), pos: t.pos };
    }
    return this.parsePrimary();
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

/** Parses a `$filter` expression. Throws {@link QueryError} (without `option`; callers add it). */
export function parseFilter(text: string): Expr {
  const p = new Parser(tokenize(text));
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
  const p = new Parser(tokenize(text));
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
