/**
 * Table-driven `$filter` cases: valid expressions with the row ids they must keep, invalid ones with
 * the error code and exact 1-based position they must report.
 */
import { applyQuery, QueryError, type QueryErrorCode } from "../../src/query";
import { ALL, makeTable, NOW } from "./fixture";

const table = makeTable();
const ids = (filter: string): number[] =>
  applyQuery(table, { filter }, { now: NOW }).table.rows.map((r) => r[0] as number);
const except = (...out: number[]) => ALL.filter((i) => !out.includes(i));

// [expression, ids kept]
const VALID: Array<[string, number[]]> = [
  // text comparison (ordinal, case-sensitive)
  ["Name eq 'Alpha'", [1, 6]],
  ["Name ne 'Alpha'", [2, 3, 4, 5, 7, 8]],
  ["Name gt 'Delta'", [3, 7, 8]],
  ["Name lt 'B'", [1, 6]],
  ["Name ge 'Zeta'", [3, 7, 8]],
  ["Name le 'Beta'", [1, 2, 6]],
  ["Name eq 'alpha'", []],
  ["Status eq 'On Hold'", [4]],
  // numbers
  ["Budget gt 250", [1, 6]],
  ["Budget ge 250", [1, 2, 6, 7]],
  ["Budget lt 0", [5]],
  ["Budget le 0", [4, 5]],
  ["Budget eq 0", [4]],
  ["Budget ne 250", [1, 3, 4, 5, 6, 8]],
  ["Budget eq 1000.5", [1]],
  ["Budget gt -100", [1, 2, 4, 5, 6, 7, 8]],
  ["Budget gt -75.5", [1, 2, 4, 6, 7, 8]],
  ["Budget gt - 75.5", [1, 2, 4, 6, 7, 8]],
  ["Budget eq 1e6", [6]],
  ["Budget eq 1E+6", [6]],
  ["Score eq 5", [1, 8]],
  ["Score eq 5.0", [1, 8]],
  ["Score lt 0", [3]],
  ["Score ge 7", [5, 7]],
  ["Score ge Id", [1, 2, 5, 7]],
  ["Budget_Contingency lt Score", [8]],
  // Int64 beyond 2^53 compares exactly
  ["BigNum eq 9007199254740993", [1]],
  ["BigNum eq 9007199254740992", [2]],
  ["BigNum gt 9007199254740992", [1, 7]],
  ["BigNum lt 0", [5]],
  ["BigNum eq -9007199254740993", [5]],
  ["BigNum ge 42", [1, 2, 3, 7]],
  ["BigNum eq 123456789012345678901234567890", [7]],
  ["BigNum gt 9007199254740991", [1, 2, 7]],
  ["BigNum in (42, 9007199254740993)", [1, 3]],
  ["BigNum add 1 eq 9007199254740994", [1]],
  ["BigNum sub 1 eq 9007199254740991", [2]],
  ["BigNum lt 1.5", [5, 8]],
  ["BigNum gt 9007199254740992.0", [1, 7]],
  ["BigNum ne 9007199254740993", except(1)],
  // booleans
  ["Active eq true", [1, 3, 6]],
  ["Active eq false", [2, 5, 8]],
  ["Active ne true", [2, 4, 5, 7, 8]],
  ["Active", [1, 3, 6]],
  ["not Active", [2, 5, 8]],
  ["Active eq null", [4, 7]],
  ["Active ne null", [1, 2, 3, 5, 6, 8]],
  // null semantics: only eq/ne see nulls; every other comparison with null is false
  ["Name eq null", [4]],
  ["Name ne null", except(4)],
  ["null eq Name", [4]],
  ["null ne Name", except(4)],
  ["Budget gt null", []],
  ["Budget lt null", []],
  ["Budget ge null", []],
  ["null le Budget", []],
  ["null eq null", ALL],
  ["null ne null", []],
  ["not (Budget gt 100)", [3, 4, 5, 8]],
  ["not (Budget le 100)", [1, 2, 3, 6, 7]],
  ["Budget gt 100 or Budget eq null", [1, 2, 3, 6, 7]],
  ["Budget add null eq null", ALL],
  ["contains(Name, null) eq null", ALL],
  // column-name rule: exact, "quoted", _x0020_ escapes, `_` for a non-identifier character
  ["Budget_Contingency gt 10", [1, 3, 5]],
  ['"Budget Contingency" ge 50', [1, 5]],
  ["Budget_x0020_Contingency eq null", [2, 7]],
  ["Cost_Center_Code eq 'CC-100'", [1, 4, 7]],
  ["Cost_x0020_Center_x0020_Code eq 'CC-100'", [1, 4, 7]],
  ['"Cost Center Code" in (\'CC-200\', \'CC-300\')', [2, 5, 6]],
  // logical operators, three-valued logic
  ["Status eq 'Open' and Active eq true", [1, 3, 6]],
  ["Status eq 'Open' or Status eq 'Closed'", [1, 2, 3, 5, 6, 8]],
  ["Status eq 'Open' and not Active", [8]],
  ["Active and Score gt 4", [1]],
  ["Active or Score gt 4", [1, 3, 5, 6, 7, 8]],
  ["not (Active and Score gt 100)", ALL],
  ["not (Active or Score gt 100)", [2, 5, 8]],
  ["Active eq true or Active eq false", [1, 2, 3, 5, 6, 8]],
  ["Active and Active", [1, 3, 6]],
  ["Active or not Active", [1, 2, 3, 5, 6, 8]],
  ["Score gt 4 and Active", [1]],
  ["Score gt 4 or Active", [1, 3, 5, 6, 7, 8]],
  ["not (Score gt 4 and Active)", [2, 3, 4, 5, 6, 8]],
  ["not (Score gt 4 or Active)", [2]],
  ["not (Active and Score gt 4)", [2, 3, 4, 5, 6, 8]],
  // precedence (OData 4.01 Part 2): or < and < eq/ne < gt/ge/lt/le < add/sub < mul/div/mod < - not < in
  ["not (Id eq 1) or Id eq 2 and Score eq 3", except(1)],
  ["not Active eq true", [2, 5, 8]],
  ["not Active eq false", [1, 3, 6]],
  ["Active eq Score gt 4", [1, 2]],
  ["Score gt 4 eq Active", [1, 2]],
  ["Id lt 3 eq Id lt 2", [1, 3, 4, 5, 6, 7, 8]],
  ["Id sub 2 sub 3 eq -4", [1]],
  ["Id div 2 mul 2 eq Id", [2, 4, 6, 8]],
  ["Id eq 1 or Id eq 8 and Score eq 3", [1]],
  ["(Id eq 1 or Id eq 8) and Score eq 5", [1, 8]],
  ["not (Id eq 1) and Id le 3", [2, 3]],
  ["not (Id eq 1 or Id eq 2) and Id le 3", [3]],
  ["not not Active", [1, 3, 6]],
  ["Id add 2 mul 3 eq 9", [3]],
  ["(Id add 2) mul 3 eq 9", [1]],
  ["Id sub 1 sub 1 eq 0", [2]],
  ["Id mul 2 gt Id add 3", [4, 5, 6, 7, 8]],
  ["Id eq 2 eq true", [2]],
  ["Id eq 1 eq false", except(1)],
  // arithmetic
  ["Id div 2 eq 1", [2, 3]],
  ["Id divby 2 eq 1.5", [3]],
  ["Id mod 3 eq 0", [3, 6]],
  ["-Id eq -1", [1]],
  ["- Id lt -6", [7, 8]],
  ["Score mod 4 eq -2", [3]],
  ["Budget ne 0 and Budget div Budget eq 1", [1, 2, 5, 6, 7, 8]],
  // exact decimal arithmetic (Edm.Decimal): no binary rounding
  ["Budget add 0.01 eq 100", [8]],
  ["Budget_Contingency add 0.1 eq 12.35", [3]],
  ["Budget mul 3 eq 299.97", [8]],
  ["Budget sub 0.1 eq 99.89", [8]],
  ["Budget divby 3 eq 33.33", [8]],
  ["Budget mod 0.5 eq 0.49", [8]],
  ["Id divby 3 mul 3 eq Id", [3, 6]],
  // an integer literal beyond Edm.Int64 is a decimal (ABNF int64Value), so div does not truncate it
  ["99999999999999999999 div 2 eq 49999999999999999999.5", ALL],
  ["9223372036854775809 div 2 eq 4611686018427387904.5", ALL],
  ["9223372036854775807 div 2 eq 4611686018427387903", ALL],
  ["-9223372036854775808 div 3 eq -3074457345618258602", ALL],
  // date parts of a literal in UTC, or whose zone cannot change the part
  ["year(2025-01-01T00:30:00Z) eq 2025", ALL],
  ["year(2025-01-01T00:30:00-00:00) eq 2025", ALL],
  ["minute(2025-01-01T00:30:00+02:00) eq 30", ALL],
  ["second(2025-01-01T00:30:05+05:30) eq 5", ALL],
  // divby zero does not fail (Part 2 §5.1.1.2.5): INF, -INF or NaN by the left operand's sign
  ["Id divby 0 gt 1e300", ALL],
  ["Id divby 0 eq Id divby 0", ALL],
  ["Id divby 0.0 add 1 eq 1 divby 0", ALL],
  ["Budget divby 0 lt -1e300", [5]],
  ["Budget divby 0 eq 0 divby 0", []],
  ["Budget divby 0 ne Budget divby 0", [4]],
  ["Budget divby 0 ge 0", [1, 2, 6, 7, 8]],
  ["- (Budget divby 0) gt 1e300", [5]],
  // the ABNF's nanInfinity literals (case-sensitive): INF, -INF, NaN
  ["Budget divby 0 eq INF", [1, 2, 6, 7, 8]],
  ["Budget divby 0 eq -INF", [5]],
  ["Budget divby 0 eq NaN", []],
  ["Budget lt INF", [1, 2, 4, 5, 6, 7, 8]],
  ["INF add 1 eq INF and NaN ne NaN", ALL],
  ["Budget eq 99.990000000000000000001", []],
  ["Budget lt 99.990000000000000000001", [4, 5, 8]],
  ["BigNum add 1 eq 9007199254740994", [1]],
  ["BigNum add 0.5 gt 9007199254740993", [1, 7]],
  ["BigNum mul 10 eq 90071992547409930", [1]],
  // literals: sign and exponent forms of the ABNF
  ["Score eq +5", [1, 8]],
  ["Score eq 5e0", [1, 8]],
  ["Budget eq 1.0005e3", [1]],
  ["Budget eq +1E6", [6]],
  ["Budget eq 1e999", []],
  // booleans are ordered: false < true
  ["Active gt false", [1, 3, 6]],
  ["Active lt true", [2, 5, 8]],
  ["Active ge false", [1, 2, 3, 5, 6, 8]],
  ["Budget mul 2 gt 2000", [1, 6]],
  ["Budget add Budget_Contingency gt 1000", [1, 6]],
  ["Budget div 2 eq 500.25", [1]],
  ["Score sub Id eq 4", [1]],
  // string functions
  ["contains(Name, 'lph')", [1, 6]],
  ["contains(Name, 'a')", [1, 2, 3, 5, 6, 8]],
  ["startswith(Name, 'A')", [1, 6]],
  ["endswith(Name, 'a')", [1, 2, 3, 5, 6, 8]],
  ["not contains(Name, 'a')", [7]],
  ["contains(Name, '')", except(4)],
  ["tolower(Name) eq 'alpha'", [1, 6]],
  ["toupper(Name) eq 'GAMMA'", [3]],
  ["trim(Note) eq 'padded'", [3]],
  ["length(Name) eq 5", [1, 3, 5, 6]],
  ["length(Note) gt 10", [1, 8]],
  ["length(trim(Note)) eq 6", [3]],
  ["indexof(Name, 'ta') eq 2", [2, 8]],
  ["indexof(Name, 'x') eq -1", except(4)],
  ["substring(Name, 1) eq 'lpha'", [1, 6]],
  ["substring(Name, 1, 2) eq 'et'", [2, 8]],
  ["substring(Name, 10) eq ''", except(4)],
  // null eq null is true: row 4 has no Name on either side
  ["substring(Name, 0, 100) eq Name", ALL],
  ["concat(Name, Status) eq 'AlphaOpen'", [1, 6]],
  ["concat(concat(Name, ' - '), Status) eq 'Beta - Closed'", [2]],
  ["startswith(Cost_Center_Code, 'CC-1')", [1, 4, 7]],
  ["Name eq 'Alpha' and contains(Note, 'plan')", [1]],
  // string literal escaping and awkward characters
  ["Note eq 'O''Brien''s plan'", [1]],
  ["contains(Note, '''')", [1]],
  ["Note eq 'a&b'", [5]],
  ["Note eq '100%'", [6]],
  ["Note eq 'C++'", [7]],
  ["Note eq 'Ünïcode ✓'", [4]],
  ["Note eq 'comma, inside'", [8]],
  ["Note eq ''", []],
  ["Note eq 'it''s (not) \"quoted\"'", []],
  // dates (calendar days)
  ["Start eq 2025-01-31", [1]],
  ["Start gt 2025-01-31", [3, 7]],
  ["Start ge 2025-01-01", [1, 3, 6, 7]],
  ["Start lt 2024-12-31", [2, 5, 8]],
  ["Start le 2024-02-29", [5, 8]],
  ["Start ne 2025-01-31", except(1)],
  ["year(Start) eq 2025", [1, 3, 6, 7]],
  ["month(Start) eq 2", [3, 8]],
  ["day(Start) eq 31", [1, 7]],
  ["Start in (2025-01-31, 2024-02-29)", [1, 8]],
  ["Start eq null", [4]],
  ["date(Start) eq Start", ALL],
  // date-times compare by instant, whatever the literal's offset
  ["Updated eq 2025-01-31T08:00:00Z", [1]],
  ["Updated eq 2025-01-31T10:00:00+02:00", [1]],
  ["Updated eq 2025-01-31T03:00:00-05:00", [1]],
  ["Updated eq 2025-01-31T08:00:00.000Z", [1]],
  ["Updated gt 2025-01-31T08:00:00Z", [2, 6, 7, 8]],
  ["Updated lt 2025-01-31T08:00:00Z", [3, 5]],
  ["Updated ge 2025-01-31T09:59:59.999+02:00", [1, 2, 5, 6, 7, 8]],
  ["Updated lt 2025-01-31T07:59:59.999Z", [3]],
  ["Updated eq 2025-01-31T07:59:59.999Z", [5]],
  ["Updated gt 2025-01-31T10:00:00 02:00", [2, 6, 7, 8]],
  ["Updated le 2025-01-31T08:00Z", [1, 3, 5]],
  ["Updated lt 2025-01-01T00:00:00+14:00", [3]],
  ["hour(Updated) eq 9", [2]],
  ["minute(Updated) eq 30", [2]],
  ["second(Updated) eq 59", [3, 5]],
  ["year(Updated) eq 2026", [6]],
  ["month(Updated) eq 6", [3, 7]],
  ["day(Updated) eq 31", [1, 2, 5]],
  ["date(Updated) eq 2025-01-31", [1, 2, 5]],
  ["date(Updated) eq Start", [1, 4]],
  ["date(Updated) lt 2025-01-01", [3]],
  ["Updated gt now()", [6, 7]],
  ["Updated in (2025-01-31T08:00:00Z, 2026-01-01T01:00:00+01:00)", [1, 6]],
  // numeric functions (round: half away from zero)
  ["round(Budget) eq 1001", [1]],
  ["round(Budget) eq -76", [5]],
  ["floor(Budget) eq -76", [5]],
  ["ceiling(Budget) eq -75", [5]],
  ["floor(Budget) eq 99", [8]],
  ["ceiling(Budget) eq 100", [8]],
  ["round(Budget_Contingency) eq 12", [3]],
  ["round(Budget_Contingency) eq 6", [6]],
  ["round(Score) eq 5", [1, 8]],
  ["floor(BigNum) eq 9007199254740993", [1]],
  // in (...)
  ["Status in ('Open', 'On Hold')", [1, 3, 4, 6, 8]],
  ["Status in ('Open', null)", [1, 3, 6, 7, 8]],
  ["Id in (1)", [1]],
  ["Budget in (250, 0, -75.5)", [2, 4, 5, 7]],
  ["not (Status in ('Open'))", [2, 4, 5, 7]],
  ["not Status in ('Open')", [2, 4, 5, 7]],
  ["Score in (-2, 10)", [3, 5]],
  ["Active in (false)", [2, 5, 8]],
  ["tolower(Name) in ('alpha', 'gamma')", [1, 3, 6]],
  ["(Id add 1) in (2, 3)", [1, 2]],
  ["Id in ()", []],
  ["not (Id in ())", ALL],
  ["Status in ('Open') eq true", [1, 3, 6, 8]],
  ["Id in (+1, -2, 3e0)", [1, 3]],
  // case-insensitive keywords and function names, whitespace, parentheses, constants
  ["Name EQ 'Alpha' AND Active", [1, 6]],
  ["CONTAINS(Name, 'lph')", [1, 6]],
  ["Active eq TRUE", [1, 3, 6]],
  ["((Id eq 1))", [1]],
  ["  Id  eq\t1  ", [1]],
  ["Id eq 1 or (Id eq 2 or (Id eq 3))", [1, 2, 3]],
  ["true", ALL],
  ["false", []],
  ["1 eq 1", ALL],
  ["'a' lt 'b'", ALL],
  ["2025-01-31 lt 2025-02-01", ALL],
  ["Id eq 1 and true", [1]],
];

// [expression, code, 1-based position, message fragment]
const INVALID: Array<[string, QueryErrorCode, number | undefined, string]> = [
  ["Id eq", "syntax", 6, "expected an operand at 6 but found end of input"],
  ["(Id eq 1", "syntax", 9, "expected ')' at 9"],
  ["Id eq 1)", "syntax", 8, "expected an operator or end of expression at 8 but found ')'"],
  ["Id eq 1 Name eq 'x'", "syntax", 9, "but found 'Name'"],
  ["'abc' gt 5", "type_mismatch", 7, "cannot compare text with number using 'gt' at 7"],
  ["Nmae eq 'x'", "unknown_column", 1, "unknown column 'Nmae' at 1 (did you mean Name?)"],
  ["Name eq 'abc", "invalid_literal", 9, "unterminated string literal"],
  ["Id eq 1 and", "syntax", 12, "expected an operand"],
  ["Id eq 1 an Id eq 2", "syntax", 9, "but found 'an'"],
  ["Budget gt '100'", "type_mismatch", 8, "write the number value without quotes"],
  ["Start eq 2025-01-31T00:00:00Z", "type_mismatch", 7, "use date(...)"],
  ["Updated eq 2025-01-31", "type_mismatch", 9, "cannot compare date-time with date"],
  ["Start eq 2025-02-30", "invalid_literal", 10, "'2025-02-30' is not a valid date"],
  ["Start eq 2025-13-01", "invalid_literal", 10, "not a valid date"],
  ["Start eq 2023-02-29", "invalid_literal", 10, "not a valid date"],
  ["Updated eq 2025-01-31T08:00:00", "invalid_literal", 12, "needs an offset"],
  ["Updated eq 2025-01-31T25:00:00Z", "invalid_literal", 12, "not a valid time of day"],
  ["Updated gt 2025-01-31T10:00:00+25:00", "invalid_literal", 12, "invalid offset"],
  ["foo(Name)", "unknown_function", 1, "unknown function 'foo'"],
  ["Contain(Name, 'a')", "unknown_function", 1, "did you mean 'contains'?"],
  ["contains(Name)", "arity", 1, "contains() takes 2 arguments, not 1"],
  ["substring(Name)", "arity", 1, "takes 2 or 3 arguments"],
  ["substring(Name, 1, 2, 3) eq 'x'", "arity", 1, "not 4"],
  ["tolower(Name, Name) eq 'a'", "arity", 1, "takes 1 argument, not 2"],
  ["now(1) eq null", "arity", 1, "now() takes 0 arguments"],
  ["contains(Name, 5)", "type_mismatch", 16, "contains() argument 2 must be text, not number"],
  ["length(Id) eq 1", "type_mismatch", 8, "must be text"],
  ["hour(Start) eq 1", "type_mismatch", 6, "must be a date-time, not date"],
  ["year(Name) eq 1", "type_mismatch", 6, "must be a date or date-time"],
  ["round(Name) eq 1", "type_mismatch", 7, "must be a number"],
  ["date(Name) eq 2025-01-01", "type_mismatch", 6, "must be a date or date-time"],
  ["concat(Name, Id) eq 'a'", "type_mismatch", 14, "argument 2 must be text"],
  ["substring(Name, 1.5) eq 'x'", "type_mismatch", 17, "must be a whole number"],
  ["Id add 'x' eq 1", "type_mismatch", 4, "'add' needs numbers"],
  ["Start add 1 eq 1", "type_mismatch", 7, "date arithmetic is not supported"],
  ["Id eq -'a'", "type_mismatch", 7, "'-' needs a number"],
  ["Name", "type_mismatch", 1, "the filter must be a true/false condition, but this expression is text"],
  ["Id add 1", "type_mismatch", 1, "is number"],
  ["not Id eq 1", "type_mismatch", 1, "'not' needs a true/false condition"],
  ["Id add 1 in (2, 3)", "type_mismatch", 4, "'add' needs numbers"],
  ["Budget div 0 eq null", "division_by_zero", 8, "division by zero in 'Budget div 0'"],
  ["Id div 0 eq null", "division_by_zero", 4, "division by zero in 'Id div 0'"],
  ["Id gt 1 and Score mod (Id sub Id) eq 1", "division_by_zero", 19, "modulo by zero in 'Score mod (Id sub Id)'"],
  ["Id divby 0 mod 0 eq 1", "division_by_zero", 12, "modulo by zero in 'Id divby 0 mod 0'"],
  ["Budget eq inf", "unknown_column", 11, "unknown column 'inf'"],
  ["year(2025-01-01T00:30:00+02:00) eq 2025", "invalid_argument", 6, "year() of '2025-01-01T00:30:00+02:00' would answer in UTC"],
  ["Id eq 1 and date(2025-01-01T00:30:00-01:00) eq 2025-01-01", "invalid_argument", 18, "write the literal in UTC: 2025-01-01T01:30:00Z"],
  ["minute(2025-01-01T00:30:00+05:30) eq 0", "invalid_argument", 8, "minute()"],
  ["Id eq 0 and substring(Name, 1, -1) eq 'x'", "invalid_argument", 13, "substring()'s length is negative (-1)"],
  ["Id eq +'a'", "syntax", 7, "unexpected character '+'"],
  ["not Id", "type_mismatch", 1, "'not' needs a true/false condition"],
  ["Id eq 1 and Name", "type_mismatch", 13, "'and' needs true/false conditions"],
  ["Name or Active", "type_mismatch", 1, "'or' needs true/false conditions"],
  ["Id eq 1 eq 2", "type_mismatch", 9, "cannot compare boolean with number"],
  ["Id eq now()", "type_mismatch", 4, "cannot compare number with date-time"],
  ["Id in (1, 'a')", "type_mismatch", 11, "cannot compare number with text using 'in'"],
  ["Id in (1, Score)", "syntax", 11, "must be literals"],
  ["Id in 1", "syntax", 7, "expected '(' to start the list of values"],
  ["Id in (1, 2", "syntax", 12, "expected ',' or ')' at 12 but found end of input"],
  ["Id eq 1 has x", "syntax", 9, "'has' operator"],
  ["Name/Length eq 1", "syntax", 5, "navigation paths"],
  ["Id eq 1 && Id eq 2", "syntax", 9, "unexpected character '&'"],
  ["Id = 1", "syntax", 4, "unexpected character '='"],
  ["eq 1", "syntax", 1, "expected an operand at 1 but found 'eq'"],
  ["and", "syntax", 1, "expected an operand"],
  ["not", "syntax", 4, "but found end of input"],
  ["Id eq 1 or", "syntax", 11, "expected an operand"],
  ["Id eq ,", "syntax", 7, "but found ','"],
  ["Id eq 1 and (Name eq 'a' or )", "syntax", 29, "expected an operand at 29 but found ')'"],
  ["Id eq 1 asc", "syntax", 9, "but found 'asc'"],
  ["in eq 1", "syntax", 1, "expected an operand"],
  ["Id eq 1.", "invalid_literal", 7, "invalid number '1.'"],
  ["Id eq 12abc", "invalid_literal", 7, "column names cannot start with a digit"],
  ["Budget eq 1e99999", "invalid_literal", 11, "out of range"],
  ["Start eq -2025-01-01", "invalid_literal", 10, "a sign cannot precede the date"],
  ["Budget_Contingency_x eq 1", "unknown_column", 1, 'did you mean "Budget Contingency"?'],
  ['"Budget Contingency eq 1', "invalid_literal", 1, "unterminated quoted column name"],
  ['"budget contingency" eq 1', "unknown_column", 1, 'did you mean "Budget Contingency"?'],
  ["Cost_Center eq 'x'", "unknown_column", 1, 'did you mean "Cost Center Code"?'],
  ["name eq 'x'", "unknown_column", 1, "did you mean Name?"],
  ['Name eq "Alpha"', "unknown_column", 9, "text values use single quotes"],
  ['"" eq 1', "syntax", 1, "empty quoted column name"],
  ["contains(Name, 'a'", "syntax", 19, "expected ',' or ')'"],
  ["Id eq 1 or Id eq 2)", "syntax", 19, "but found ')'"],
];

describe("$filter table: valid expressions", () => {
  test("has at least 150 expressions in all", () => {
    expect(VALID.length + INVALID.length).toBeGreaterThanOrEqual(150);
  });
  test.each(VALID)("%s", (expr, expected) => {
    expect(ids(expr)).toEqual(expected);
  });
});

describe("$filter table: invalid expressions", () => {
  test.each(INVALID)("%s → %s at %s", (expr, code, position, fragment) => {
    let caught: unknown;
    try {
      ids(expr);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(QueryError);
    const err = caught as QueryError;
    expect({ code: err.code, position: err.position, option: err.option }).toEqual({ code, position, option: "$filter" });
    expect(err.message.startsWith("$filter: ")).toBe(true);
    expect(err.message).toContain(fragment);
  });
});

describe("$filter: pathological input gets a QueryError, not a stack overflow", () => {
  const err = (filter: string) => {
    try {
      ids(filter);
    } catch (e) {
      return e;
    }
    return undefined;
  };
  test.each<[string, string, string]>([
    ["deep parentheses", "(".repeat(5000) + "Id eq 1" + ")".repeat(5000), "nested too deeply"],
    ["deep not", "not ".repeat(5000) + "Active", "nested too deeply"],
    ["deep minus", "-".repeat(5000) + "Id eq 1", "nested too deeply"],
    ["deep calls", "tolower(".repeat(5000) + "Name" + ")".repeat(5000) + " eq 'a'", "nested too deeply"],
    ["long or chain", Array.from({ length: 20000 }, (_, i) => `Id eq ${i}`).join(" or "), "use 'in (...)'"],
  ])("%s", (_label, filter, fragment) => {
    const e = err(filter);
    expect(e).toBeInstanceOf(QueryError);
    expect((e as QueryError).code).toBe("syntax");
    expect((e as QueryError).message).toContain(fragment);
  });
  test("moderate nesting and long value lists still work", () => {
    expect(ids("(".repeat(50) + "Id eq 1" + ")".repeat(50))).toEqual([1]);
    expect(ids(Array.from({ length: 500 }, (_, i) => `Id eq ${i + 3}`).join(" or "))).toEqual([3, 4, 5, 6, 7, 8]);
    expect(ids(`Id in (${Array.from({ length: 50000 }, (_, i) => i + 5).join(",")})`)).toEqual([5, 6, 7, 8]);
  });
});
