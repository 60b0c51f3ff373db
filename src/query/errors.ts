/**
 * The one error type of the local query engine. Data lives in fields (so the task pane can put a
 * caret under the offending character); the message is for the person who typed the query.
 */

/** Machine-readable reasons a query is rejected. */
export type QueryErrorCode =
  /** The text does not follow the grammar (`expected ')' at 23`). */
  | "syntax"
  /** A literal is malformed (bad date, unterminated string, ...). */
  | "invalid_literal"
  /** A column reference matches no column. */
  | "unknown_column"
  /** A `_`-form column reference matches more than one column. */
  | "ambiguous_column"
  /** A function name that is not supported. */
  | "unknown_function"
  /** A function called with the wrong number of arguments. */
  | "arity"
  /** Operands or arguments of incompatible types (`'abc' gt 5`). */
  | "type_mismatch"
  /** A `$` option the local engine does not evaluate (`$expand`, `$search`, ...). */
  | "unsupported_option"
  /** A `$` name that is not an OData system query option at all. */
  | "unknown_option"
  /** A parameter without `$` where only query options are allowed. */
  | "not_a_query_option"
  /** The same option given twice (OData: duplicates are an error). */
  | "duplicate_option"
  /** An option value of the wrong shape (`$top=-1`, `$count=maybe`). */
  | "invalid_value"
  /** A stored query object that is not a valid LocalQuery. */
  | "invalid_query"
  /** A pasted address that cannot be parsed as a URL. */
  | "invalid_url"
  /** `div` or `mod` by zero while evaluating (OData: the request fails); names the expression. */
  | "division_by_zero"
  /** A function argument OData calls a bad request while evaluating: `substring`'s negative length. */
  | "invalid_argument"
  /**
   * A result a cell cannot hold: a sum, average or computed decimal beyond the largest number
   * (±1.8e308) while evaluating; names the result column and its expression.
   */
  | "overflow";

/** Details of a {@link QueryError}; every field but `code` and `detail` is optional. */
export interface QueryErrorInit {
  code: QueryErrorCode;
  /** The option the problem is in (`$filter`, `$orderby`, `$select`, `$top`, ...). */
  option?: string;
  /** 1-based character position in the option's (decoded) text. */
  position?: number;
  /** What the parser expected at `position` (`')'`, `an operand`, ...). */
  expected?: string;
  /** What it found there instead (`end of input`, `'and'`, ...). */
  found?: string;
  /** Nearest column or function name, for unknown names. */
  suggestion?: string;
  /** Advice on how to fix it; goes last in `message`. */
  hint?: string;
  /**
   * Human sentence without option prefix, position, `found` and suggestion; `message` is
   * `<option>: <detail> at <position> but found <found> (did you mean <suggestion>?); <hint>`.
   */
  detail: string;
}

/**
 * Thrown by every entry point of the query engine for bad input. `message` reads
 * `$filter: expected ')' at 23 but found end of input` — option, what went wrong, 1-based position.
 * Messages quote only the query text itself, never other URL parameters (they may hold a token).
 */
export class QueryError extends Error {
  override readonly name = "QueryError";
  readonly code: QueryErrorCode;
  readonly option: string | undefined;
  /** 1-based position in the option's decoded text; `undefined` when the whole option is at fault. */
  readonly position: number | undefined;
  readonly expected: string | undefined;
  readonly found: string | undefined;
  readonly suggestion: string | undefined;
  readonly hint: string | undefined;
  /** The message without option prefix and position. */
  readonly detail: string;

  constructor(init: QueryErrorInit) {
    super(formatMessage(init));
    this.code = init.code;
    this.option = init.option;
    this.position = init.position;
    this.expected = init.expected;
    this.found = init.found;
    this.suggestion = init.suggestion;
    this.hint = init.hint;
    this.detail = init.detail;
  }

  /** The same error attributed to `option` (the parsers below the option layer do not know it). */
  withOption(option: string): QueryError {
    if (this.option === option) return this;
    return new QueryError({
      code: this.code,
      option,
      position: this.position,
      expected: this.expected,
      found: this.found,
      suggestion: this.suggestion,
      hint: this.hint,
      detail: this.detail,
    });
  }
}

function formatMessage(init: QueryErrorInit): string {
  let text = (init.option ? `${init.option}: ` : "") + init.detail;
  if (init.position !== undefined) text += ` at ${init.position}`;
  if (init.found !== undefined) text += ` but found ${init.found}`;
  if (init.suggestion !== undefined) text += ` (did you mean ${init.suggestion}?)`;
  if (init.hint !== undefined) text += `; ${init.hint}`;
  return text;
}
