/**
 * `plainNumber` reads a CSV export's numbers without a pattern (issue #38's import CPU). It must give
 * exactly the double `Number()` gives, or null so the general conversion reads the text.
 */
import fc from "fast-check";
import { plainNumber, toCell } from "../../src/service/values";

const digit = fc.constantFrom(..."0123456789");
const digits = (min: number, max: number) => fc.array(digit, { minLength: min, maxLength: max }).map((a) => a.join(""));

test("every number it reads is Number()'s double, bit for bit", () => {
  fc.assert(
    fc.property(fc.constantFrom("", "-"), digits(1, 18), fc.option(digits(0, 24)), (sign, int, frac) => {
      const s = sign + int + (frac === null ? "" : "." + frac);
      const fast = plainNumber(s);
      if (fast !== null) expect(Object.is(fast, Number(s))).toBe(true);
    }),
    { numRuns: 20_000 },
  );
});

test("it reads the plain forms and declines everything else (the general conversion decides those)", () => {
  expect(plainNumber("92819.15")).toBe(92819.15);
  expect(plainNumber("-0.5")).toBe(-0.5);
  expect(plainNumber("007")).toBe(7);
  expect(plainNumber("123456789012345")).toBe(123456789012345);
  expect(plainNumber("0.1")).toBe(0.1);
  for (const s of ["", "-", ".", "1.", ".5", "-.5", "+1", " 1", "1 ", "1e5", "1,5", "1.2.3", "--1", "1234567890123456", "0x10", "Infinity", "NaN", "١٢"]) {
    expect(plainNumber(s)).toBeNull();
  }
});

test("cells read through it convert as before: -0 is 0, integers past 2^53 keep their digits, other forms still read", () => {
  expect(Object.is(toCell("-0", "decimal"), 0)).toBe(true);
  expect(Object.is(toCell("-0", "integer"), 0)).toBe(true);
  expect(toCell("9007199254740993", "integer")).toBe("9007199254740993");
  expect(() => toCell("1.5", "integer")).toThrow();
  expect(toCell("1e3", "decimal")).toBe(1000);
  expect(toCell(" 42 ", "integer")).toBe(42);
  expect(toCell("+7", "decimal")).toBe(7);
  expect(toCell("true", "boolean")).toBe(true);
  expect(toCell(" TRUE ", "boolean")).toBe(true);
  expect(toCell("0", "boolean")).toBe(false);
});

test("its bounds: 22 decimals are the most it divides by, the characters either side of 0-9 are not digits", () => {
  // 10^22 is the largest power of ten a double holds exactly: 22 decimals still read (a table one
  // entry short would divide by undefined and give NaN), 23 go to the general conversion (a bound
  // one higher would index past the table).
  expect(plainNumber("0.0000000000000000000001")).toBe(1e-22);
  expect(plainNumber("-0.0000000000000000000001")).toBe(-1e-22);
  expect(plainNumber("0.00000000000000000000001")).toBeNull();
  // '/' (47) and ':' (58) sit just outside '0'..'9' (48..57).
  for (const s of ["/", ":", "1/2", "1:2", "12:", "-/1"]) expect(plainNumber(s)).toBeNull();
});

test("leading zeros are not significant digits: they do not count against the 15", () => {
  // Counting them would send these to the general conversion for nothing (same value, slower).
  expect(plainNumber("0.000000000000000123")).toBe(Number("0.000000000000000123"));
  expect(plainNumber("0000000000000000042")).toBe(42);
  expect(plainNumber("-000000000000000000.5")).toBe(-0.5);
});

test("an integer column refuses a decimal point even when the value is whole", () => {
  // The fast path reads "2.0" as the whole number 2; the integer type must still refuse it, as the
  // general conversion (INT_RE) does.
  expect(() => toCell("2.0", "integer")).toThrow(/expected an integer/);
  expect(() => toCell("-7.000", "integer")).toThrow(/expected an integer/);
  expect(toCell("-7", "integer")).toBe(-7);
});
