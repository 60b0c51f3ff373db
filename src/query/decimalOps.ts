/**
 * The few exact decimal operations `$apply` needs (sums and averages), behind one small interface so
 * the implementation can be swapped without touching the aggregation code.
 *
 * Today this is big.js. When the engine's own exact decimal module (`src/query/decimal.ts`, scaled
 * BigInt) is on main, {@link DECIMAL} can be re-implemented on it (`fromNumber`/`fromString`, `add`,
 * `div`, `toString`/`toNumber`) and big.js dropped; nothing else changes.
 *
 * A JS number stands for the decimal it prints as (`String(x)`, the shortest text that reads back
 * to the same double), so the cells 0.1 and 0.2 sum to exactly 0.3.
 */
import Big from "big.js";

/** An exact decimal value, opaque to its users. */
export interface DecimalValue {
  toString(): string;
}

export interface DecimalOps {
  zero(): DecimalValue;
  /** A number (its shortest decimal text), a bigint, a decimal digit string, or a decimal object. */
  from(v: number | bigint | string | DecimalValue): DecimalValue;
  add(a: DecimalValue, b: DecimalValue): DecimalValue;
  /**
   * Quotient rounded half-even to {@link DIVISION_DIGITS} + 2 decimal places, then to
   * {@link DIVISION_DIGITS} significant digits: far more than the double a cell holds.
   */
  div(a: DecimalValue, b: DecimalValue): DecimalValue;
  /** Nearest double: where a table cell holds a decimal as a number. */
  toNumber(a: DecimalValue): number;
}

/** Significant digits of a quotient: IEEE 754 decimal128's precision, as the engine's decimals. */
export const DIVISION_DIGITS = 34;

// A private constructor, so the global big.js settings of other code never change ours.
const B = Big();
B.DP = DIVISION_DIGITS + 2;
B.RM = Big.roundHalfEven;
// Plain notation for every magnitude a table cell can hold (toString then never uses an exponent).
B.NE = -400;
B.PE = 400;

function big(v: DecimalValue): Big {
  return v as Big;
}

/** Exact decimal arithmetic on big.js. */
export const DECIMAL: DecimalOps = {
  zero: () => new B(0),
  from(v) {
    if (v instanceof B) return v;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new RangeError(`${v} is not a decimal number`);
      return new B(String(v));
    }
    if (typeof v === "bigint") return new B(v.toString());
    return new B(typeof v === "string" ? v : v.toString());
  },
  add: (a, b) => big(a).plus(big(b)),
  div(a, b) {
    const x = big(a);
    const y = big(b);
    // big.js rounds a quotient to DP decimal places; then DIVISION_DIGITS significant digits are kept.
    const q = x.div(y);
    return q.eq(0) ? q : q.prec(DIVISION_DIGITS, Big.roundHalfEven);
  },
  toNumber: (a) => Number(big(a).toString()),
};
