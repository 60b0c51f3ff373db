/**
 * Exact decimal numbers for `Edm.Decimal` arithmetic (OData 4.01 Part 2 §5.1.1.2): a value is
 * `m × 10^e` with a BigInt coefficient, so `24.71 add 0.1 eq 24.81` holds and `Int64` values beyond
 * 2^53 never round. Scaled BigInt instead of a library: the four operations and the comparison are
 * a few lines each, and BigInt is what the engine already uses for big integers.
 *
 * The API is deliberately small and pure (values are immutable), so `$filter`/`$orderby` and later
 * aggregation (`sum`, `average`) share one definition of decimal arithmetic:
 *
 * - {@link fromString} / {@link fromNumber} / {@link fromInteger}, {@link toString} / {@link toNumber};
 * - {@link add}, {@link sub}, {@link mul}, {@link div}, {@link mod}, {@link neg};
 * - {@link compare}, {@link isZero}, {@link isInteger};
 * - {@link trunc}, {@link floor}, {@link ceiling}, {@link round} (to a whole number).
 *
 * Rules (decided once, here):
 * - `add`, `sub`, `mul`, `mod` and `neg` are exact.
 * - `div` is exact when the quotient has at most {@link DIVISION_DIGITS} significant digits;
 *   otherwise it is rounded to that many significant digits, ties to even (IEEE 754 decimal128's
 *   precision and default rounding). `1 div 3` is `0.3333…3` (34 threes).
 * - `mod` is the remainder of truncated division: its sign is the dividend's (`-7 mod 2` is `-1`),
 *   as OData's integer `mod` and the IEEE `fmod` that OData refers to.
 * - Division and modulo by zero throw {@link DecimalError} (`division_by_zero`).
 * - A JS number stands for the decimal it prints as (`String(x)`, the shortest text that reads back
 *   to the same double): a cell read from JSON as `24.71` is exactly 24.71, not the binary double.
 */

/** Significant digits kept by {@link div} (IEEE 754 decimal128 precision). */
export const DIVISION_DIGITS = 34;
/** Largest decimal exponent {@link fromString} accepts (decimal128's range), so no operation explodes. */
export const MAX_EXPONENT = 6144;

/** An exact decimal `m × 10^e`. Create with the functions of this module; never mutated. */
export class Decimal {
  /** @internal use {@link fromString}, {@link fromNumber} or {@link fromInteger}. */
  constructor(
    readonly m: bigint,
    readonly e: number,
  ) {}
  toString(): string {
    return toString(this);
  }
}

/** Raised for division or modulo by zero and for text that is not a decimal number. */
export class DecimalError extends Error {
  override readonly name = "DecimalError";
  constructor(
    readonly code: "division_by_zero" | "invalid_number" | "out_of_range",
    message: string,
  ) {
    super(message);
  }
}

const ZERO = new Decimal(0n, 0);
const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Parses `[+-]digits[.digits][e[+-]digits]` (the OData `decimalValue` form without INF/NaN). */
export function fromString(text: string): Decimal {
  const m = DECIMAL_TEXT.exec(text);
  if (!m) throw new DecimalError("invalid_number", `'${text}' is not a decimal number`);
  const frac = m[3] ?? "";
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  const e = exp - frac.length;
  if (!Number.isSafeInteger(exp) || Math.abs(e) > MAX_EXPONENT + 40) {
    throw new DecimalError("out_of_range", `'${text}' is out of range`);
  }
  const coef = BigInt(m[2] + frac);
  return normalize(m[1] === "-" ? -coef : coef, e);
}

/** The decimal a JS number prints as (`String(x)`); throws for NaN and ±Infinity. */
export function fromNumber(x: number): Decimal {
  if (!Number.isFinite(x)) throw new DecimalError("invalid_number", `${x} is not a decimal number`);
  if (Number.isSafeInteger(x)) return x === 0 ? ZERO : normalize(BigInt(x), 0);
  // Fast path without text: the fewest decimals k with x = double(n / 10^k). While |n| < 2^50 the
  // double's rounding interval is narrower than 10^-k, so n / 10^k is the only k-decimal in it,
  // hence exactly the decimal String(x) prints (test/query/decimal.test.ts checks this).
  let scale = 1;
  for (let k = 1; k <= 15; k++) {
    scale *= 10;
    const n = Math.round(x * scale);
    if (Math.abs(n) >= FAST_LIMIT) break;
    if (n / scale === x) return new Decimal(BigInt(n), -k);
  }
  return fromString(String(x));
}

const FAST_LIMIT = 2 ** 50;

/** An integer (number must be a safe integer). */
export function fromInteger(x: bigint | number): Decimal {
  if (typeof x === "number" && !Number.isSafeInteger(x)) return fromNumber(x);
  return normalize(BigInt(x), 0);
}

/** Canonical text: plain notation, no exponent, no trailing fractional zeros, `0` for zero. */
export function toString(d: Decimal): string {
  if (d.m === 0n) return "0";
  const neg = d.m < 0n;
  const digits = (neg ? -d.m : d.m).toString();
  let out: string;
  if (d.e >= 0) out = digits + "0".repeat(d.e);
  else {
    const point = digits.length + d.e;
    out = point > 0 ? digits.slice(0, point) + "." + digits.slice(point) : "0." + "0".repeat(-point) + digits;
  }
  return neg ? "-" + out : out;
}

/** Nearest double (may round: use only where a double is wanted, e.g. writing to Excel). */
export function toNumber(d: Decimal): number {
  return Number(toString(d));
}

const bitLength = (x: bigint): number => x.toString(2).length;

/**
 * The double nearest to the exact quotient `num / den` (`den` > 0), ties to even: a single correct
 * rounding at any size, so an average is the double nearest to the true average, not a rounding of
 * a rounding. ±Infinity when the quotient is beyond the largest double (callers turn that into an
 * error), a subnormal or 0 below the smallest normal one.
 */
export function nearestDouble(num: bigint, den: bigint): number {
  if (den <= 0n) throw new RangeError("nearestDouble: the denominator must be positive");
  if (num === 0n) return 0;
  const negative = num < 0n;
  const a = negative ? -num : num;
  // a / den lies in [2^(la-ld-1), 2^(la-ld+1)); scaled by 2^-e it has 53 or 54 integer bits.
  let e = Math.max(bitLength(a) - bitLength(den) - 53, -1074);
  let q = 0n;
  let r = 0n;
  let d = den;
  const divide = () => {
    const x = e >= 0 ? a : a << BigInt(-e);
    d = e >= 0 ? den << BigInt(e) : den;
    q = x / d;
    r = x - q * d;
  };
  divide();
  if (q >= 1n << 53n) {
    e += 1;
    divide();
  }
  const twice = r * 2n;
  if (twice > d || (twice === d && (q & 1n) === 1n)) q += 1n;
  // q ≤ 2^53 and e ≥ -1074, so q × 2^e is exact unless it is beyond the double range (then Infinity).
  const x = e > 1023 ? Infinity : Number(q) * 2 ** e;
  return negative ? -x : x;
}

/** Strips trailing zeros so equal values have one representation. */
function normalize(m: bigint, e: number): Decimal {
  if (m === 0n) return ZERO;
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  return new Decimal(m, e);
}

const POW10: bigint[] = [1n];
function pow10(n: number): bigint {
  while (POW10.length <= Math.min(n, 64)) POW10.push(POW10[POW10.length - 1] * 10n);
  return n < POW10.length ? POW10[n] : 10n ** BigInt(n);
}

/** Coefficients of `a` and `b` brought to the smaller exponent. */
function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  if (a.e === b.e) return [a.m, b.m, a.e];
  if (a.e > b.e) return [a.m * pow10(a.e - b.e), b.m, b.e];
  return [a.m, b.m * pow10(b.e - a.e), a.e];
}

export function add(a: Decimal, b: Decimal): Decimal {
  if (a.m === 0n) return b;
  if (b.m === 0n) return a;
  const [x, y, e] = align(a, b);
  return normalize(x + y, e);
}

export function sub(a: Decimal, b: Decimal): Decimal {
  if (b.m === 0n) return a;
  const [x, y, e] = align(a, b);
  return normalize(x - y, e);
}

export function mul(a: Decimal, b: Decimal): Decimal {
  return normalize(a.m * b.m, a.e + b.e);
}

export function neg(a: Decimal): Decimal {
  return a.m === 0n ? a : new Decimal(-a.m, a.e);
}

const abs = (x: bigint) => (x < 0n ? -x : x);
const digitCount = (x: bigint) => abs(x).toString().length;

/** `a / b`, rounded to {@link DIVISION_DIGITS} significant digits, ties to even. */
export function div(a: Decimal, b: Decimal): Decimal {
  if (b.m === 0n) throw new DecimalError("division_by_zero", "division by zero");
  if (a.m === 0n) return ZERO;
  const negative = a.m < 0n !== b.m < 0n;
  const x = abs(a.m);
  const y = abs(b.m);
  // Scale the dividend so the integer quotient has more digits than kept; the rest is a remainder.
  const k = Math.max(0, DIVISION_DIGITS + 1 + digitCount(y) - digitCount(x));
  const n = x * pow10(k);
  let q = n / y;
  const exact = n % y === 0n;
  let e = a.e - b.e - k;
  const drop = digitCount(q) - DIVISION_DIGITS;
  if (drop > 0) {
    const unit = pow10(drop);
    const rest = q % unit;
    q /= unit;
    e += drop;
    const half = unit / 2n;
    if (rest > half || (rest === half && (!exact || q % 2n === 1n))) q += 1n;
  }
  return normalize(negative ? -q : q, e);
}

/** Remainder of truncated division (sign of `a`); exact. */
export function mod(a: Decimal, b: Decimal): Decimal {
  if (b.m === 0n) throw new DecimalError("division_by_zero", "modulo by zero");
  const [x, y, e] = align(a, b);
  return normalize(x % y, e);
}

/** -1, 0 or 1. */
export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  if (a.m === b.m && a.e === b.e) return 0;
  const sa = a.m < 0n ? -1 : a.m > 0n ? 1 : 0;
  const sb = b.m < 0n ? -1 : b.m > 0n ? 1 : 0;
  if (sa !== sb) return sa < sb ? -1 : 1;
  // Same sign: compare magnitudes by order of magnitude first, so huge exponents never align.
  const ma = digitCount(a.m) + a.e;
  const mb = digitCount(b.m) + b.e;
  if (ma !== mb) return (ma < mb ? -1 : 1) * sa as -1 | 1;
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isZero(a: Decimal): boolean {
  return a.m === 0n;
}

export function isInteger(a: Decimal): boolean {
  return a.e >= 0;
}

/** The integer value of a whole-number decimal (see {@link isInteger}). */
export function toBigInt(a: Decimal): bigint {
  return a.e >= 0 ? a.m * pow10(a.e) : a.m / pow10(-a.e);
}

/** Toward zero. */
export function trunc(a: Decimal): Decimal {
  return a.e >= 0 ? a : normalize(a.m / pow10(-a.e), 0);
}

/** Toward negative infinity. */
export function floor(a: Decimal): Decimal {
  const t = trunc(a);
  return a.m < 0n && compare(t, a) !== 0 ? sub(t, ONE) : t;
}

/** Toward positive infinity. */
export function ceiling(a: Decimal): Decimal {
  const t = trunc(a);
  return a.m > 0n && compare(t, a) !== 0 ? add(t, ONE) : t;
}

/** To the nearest whole number; halves away from zero (OData `round`: 0.5 → 1, -0.5 → -1). */
export function round(a: Decimal): Decimal {
  if (a.e >= 0) return a;
  const half = new Decimal(a.m < 0n ? -5n : 5n, -1);
  return trunc(add(a, half));
}

const ONE = new Decimal(1n, 0);
