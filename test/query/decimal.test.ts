/** src/query/decimal.ts: the exact decimal arithmetic shared by $filter/$orderby (and later $apply). */
import fc from "fast-check";
import * as D from "../../src/query/decimal";

fc.configureGlobal({ seed: 20251123 });

const d = D.fromString;
const s = (x: D.Decimal) => D.toString(x);

describe("decimal", () => {
  test("add, sub, mul are exact", () => {
    expect(s(D.add(d("24.71"), d("0.1")))).toBe("24.81");
    expect(s(D.add(D.fromNumber(0.1), D.fromNumber(0.2)))).toBe("0.3");
    expect(s(D.sub(d("100"), d("0.01")))).toBe("99.99");
    expect(s(D.mul(d("1.1"), d("1.1")))).toBe("1.21");
    expect(s(D.add(d("9007199254740993"), d("1")))).toBe("9007199254740994");
    expect(s(D.mul(d("-1.5e3"), d("+2E-2")))).toBe("-30");
  });

  test("div keeps 34 significant digits, ties to even; exact quotients are exact", () => {
    expect(s(D.div(d("1"), d("3")))).toBe("0." + "3".repeat(34));
    expect(s(D.div(d("2"), d("3")))).toBe("0." + "6".repeat(33) + "7");
    expect(s(D.div(d("-2"), d("3")))).toBe("-0." + "6".repeat(33) + "7");
    expect(s(D.div(d("10"), d("4")))).toBe("2.5");
    expect(s(D.div(d("1e-101"), d("8")))).toBe("0." + "0".repeat(101) + "125");
    // 1 + 5e-34 has 35 digits: the tie goes to the even neighbour (1), 1 + 15e-34 to ...2
    expect(s(D.div(d("1.0000000000000000000000000000000005"), d("1")))).toBe("1");
    expect(s(D.div(d("1.0000000000000000000000000000000015"), d("1")))).toBe("1.000000000000000000000000000000002");
    expect(() => D.div(d("1"), d("0"))).toThrow(D.DecimalError);
  });

  test("mod has the sign of the dividend; by zero throws", () => {
    expect(s(D.mod(d("7"), d("2")))).toBe("1");
    expect(s(D.mod(d("-7"), d("2")))).toBe("-1");
    expect(s(D.mod(d("7.5"), d("-2")))).toBe("1.5");
    expect(s(D.mod(d("99.99"), d("0.5")))).toBe("0.49");
    expect(() => D.mod(d("1"), d("0"))).toThrow("modulo by zero");
  });

  test("compare, rounding to whole numbers", () => {
    expect(D.compare(d("0.1"), d("0.10"))).toBe(0);
    expect(D.compare(d("1e6144"), d("-1e6144"))).toBe(1);
    expect(D.compare(d("-0.2"), d("-0.1"))).toBe(-1);
    expect(D.compare(d("123456789012345678901"), d("123456789012345678900.5"))).toBe(1);
    expect([D.round(d("2.5")), D.round(d("-2.5")), D.round(d("2.49")), D.floor(d("-2.1")), D.ceiling(d("-2.1")), D.trunc(d("-2.9"))].map(s)).toEqual([
      "3",
      "-3",
      "2",
      "-3",
      "-2",
      "-2",
    ]);
  });

  test("text forms: parse ABNF decimals, print plain; bad text and huge exponents are refused", () => {
    expect(s(d("-1.234567e3"))).toBe("-1234.567");
    expect(s(d("+42"))).toBe("42");
    expect(s(d("1.50"))).toBe("1.5");
    expect(s(d("0"))).toBe("0");
    expect(s(d("-0.0"))).toBe("0");
    for (const bad of ["42.", ".1", "1e", "INF", "NaN", "1,5", "- 1"]) expect(() => d(bad)).toThrow(D.DecimalError);
    expect(() => d("1e99999")).toThrow("out of range");
  });

  test("a double stands for the decimal it prints as (fast path agrees with String(x))", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(D.compare(D.fromNumber(x), d(String(x).replace("e+", "e")))).toBe(0);
      }),
      { numRuns: 4000 },
    );
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 6 }), (n, k) => {
        const x = n / 10 ** k;
        expect(D.compare(D.fromNumber(x), d(String(x).replace("e+", "e")))).toBe(0);
      }),
      { numRuns: 4000 },
    );
  });
});
