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
