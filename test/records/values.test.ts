// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import fc from "fast-check";
import { canonicalValue, cellToText, explainNumericProblem, normaliseNumeric, numberToPlainString, numericCellText, validateFieldValue, valueHash } from "../../src/records/values";
import { NUMERIC_CUSTOM_FIELD } from "../../src/contract/contract";

describe("numberToPlainString", () => {
  it.each([
    [1234.5, "1234.5"],
    [12, "12"],
    [-0.5, "-0.5"],
    [-0, "0"],
    [1e21, "1000000000000000000000"],
    [1.5e-7, "0.00000015"],
    [0.1 + 0.2, "0.3"],
    [12.345, "12.345"],
    [123456789012345680000, "123456789012346000000"],
  ])("%p → %p", (n, s) => {
    expect(numberToPlainString(n)).toBe(s);
  });

  it("refuses NaN and infinities", () => {
    expect(numberToPlainString(NaN)).toBeNull();
    expect(numberToPlainString(Infinity)).toBeNull();
  });

  it("never produces an exponent, a comma or more than 15 significant digits, and round-trips Excel-precision numbers", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const s = numberToPlainString(n)!;
        expect(s).not.toMatch(/[eE,]/);
        expect(s.replace(/^-/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length).toBeLessThanOrEqual(15);
        expect(Number(s)).toBe(Number(n.toPrecision(15)) || 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe("cellToText: how a cell becomes the string the service expects", () => {
  it("keeps text exactly, including the spaces and separators the rule rejects", () => {
    expect(cellToText("1,234.5")).toEqual({ ok: true, text: "1,234.5", fromNumber: false });
    expect(cellToText(" 12")).toEqual({ ok: true, text: " 12", fromNumber: false });
    expect(cellToText("00420")).toEqual({ ok: true, text: "00420", fromNumber: false });
  });
  it("turns numbers Excel made from typed input into dot decimals without exponent", () => {
    expect(cellToText(1234.5)).toEqual({ ok: true, text: "1234.5", fromNumber: true });
    expect(cellToText(1e3)).toEqual({ ok: true, text: "1000", fromNumber: true });
  });
  it("reads empty cells as the empty string and booleans as Excel shows them", () => {
    expect(cellToText(null)).toEqual({ ok: true, text: "", fromNumber: false });
    expect(cellToText("")).toEqual({ ok: true, text: "", fromNumber: false });
    expect(cellToText(true)).toEqual({ ok: true, text: "TRUE", fromNumber: false });
  });
  it("refuses Excel error cells with a reason", () => {
    const r = cellToText({ error: "#VALUE!" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain("#VALUE!");
  });
});

describe("the numeric rule, as checked before sending", () => {
  const accepted = ["12", "+7", "-0,5", "12.34", "1,5", "0", "-250.75"];
  const rejected = ["1,234.5", "1.234,5", "1e3", " 12", "12 ", "", "12.345", "12.", ".5", "1 234", "--1", "12a"];
  it.each(accepted)("accepts %p", (v) => {
    expect(validateFieldValue(v, true)).toEqual({ ok: true });
  });
  it.each(rejected)("rejects %p with a sentence", (v) => {
    const r = validateFieldValue(v, true);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/^[A-Z].*\.$/);
  });
  it("names the broken rule", () => {
    expect(explainNumericProblem("1,234.5")).toMatch(/thousands/i);
    expect(explainNumericProblem("1e3")).toMatch(/scientific/i);
    expect(explainNumericProblem(" 12")).toMatch(/spaces/i);
    expect(explainNumericProblem("")).toMatch(/empty/i);
    expect(explainNumericProblem("12.345")).toMatch(/two decimal/i);
  });
  it("agrees with the contract's rule on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[+\- 0-9.,e]{0,8}$/), (v) => {
        expect(validateFieldValue(v, true).ok).toBe(NUMERIC_CUSTOM_FIELD.test(v));
      }),
      { numRuns: 1000 },
    );
  });
  it("accepts any text for text fields, warning when Excel turned it into a number", () => {
    expect(validateFieldValue(" anything ", false)).toEqual({ ok: true });
    expect(validateFieldValue("420", false, true)).toMatchObject({ ok: true, warning: expect.stringMatching(/leading zeros/) });
  });
});

describe("comparison form", () => {
  it("compares numeric fields by value, the way the service normalises", () => {
    expect(normaliseNumeric("12,5")).toBe("12.5");
    expect(normaliseNumeric("+007.50")).toBe("7.5");
    expect(normaliseNumeric("-0,00")).toBe("0");
    expect(canonicalValue("1500.50", true)).toBe(canonicalValue("1500.5", true));
    expect(canonicalValue("12,5", true)).toBe("12.5");
  });
  it("compares text exactly, and missing equal to empty", () => {
    expect(canonicalValue("00420", false)).not.toBe(canonicalValue("420", false));
    expect(canonicalValue("1500.50", null)).not.toBe(canonicalValue("1500.5", null));
    expect(canonicalValue(null, true)).toBe(canonicalValue("", true));
  });
  it("hashes are short and distinguish nearby values", () => {
    expect(valueHash("1500.5")).not.toBe(valueHash("1500.50"));
    expect(valueHash("")).toMatch(/^[0-9a-z]{1,7}$/);
  });
});

describe("numericCellText: a number cell of a numeric field, judged by how Excel shows it", () => {
  it("a General cell is sent as its plain decimal", () => {
    expect(numericCellText(1234.5, { numberFormat: "General", text: "1234.5" })).toEqual({ ok: true, text: "1234.5" });
    expect(numericCellText(0.1, undefined)).toEqual({ ok: true, text: "0.1" });
  });
  it("a format Excel chose for `1,234.5` (thousands separator) is refused with the rule's reason, showing what Excel shows", () => {
    const r = numericCellText(1234.5, { numberFormat: "#,##0.00", text: "1,234.50" });
    expect(r).toMatchObject({ ok: false, text: "1,234.50", message: expect.stringContaining("Thousands separators are not accepted") });
    expect(!r.ok && r.message).toContain("Type 1234.5 instead.");
  });
  it.each([
    ["0%", "12%"],
    ["0.00E+00", "1.00E+03"],
    ["m/d/yyyy", "1/2/2026"],
  ])("format %p showing %p is refused", (numberFormat, text) => {
    expect(numericCellText(0.12, { numberFormat, text }).ok).toBe(false);
  });
  it("a display that is the same number is accepted; one that rounds is refused", () => {
    expect(numericCellText(12.5, { numberFormat: "0.00", text: "12.50" })).toEqual({ ok: true, text: "12.5" });
    expect(numericCellText(12.345, { numberFormat: "0.00", text: "12.35" })).toMatchObject({ ok: false, message: expect.stringContaining("holds 12.345") });
  });
});
