import fc from "fast-check";
import { MAX_COLUMNS, MAX_ROWS, columnLetters, formatRect, parseAddress, quoteSheetName, looksLikeCellReference } from "../../src/emulator/address";
import { formatCellText } from "../../src/emulator/format";
import { translateFormula } from "../../src/emulator/formula";
import { Workbook, createExcelNamespace, inspect } from "../../src/emulator";
import { dateSerial, parseTypedInput, serialToParts } from "../../src/emulator/typed-input";
import { toFifteenDigits } from "../../src/emulator/model";

describe("addresses", () => {
  test("column letters at the edges", () => {
    expect([0, 25, 26, 701, 702, 16383].map(columnLetters)).toEqual(["A", "Z", "AA", "ZZ", "AAA", "XFD"]);
  });

  test("format/parse round trip for any rectangle on the grid", () => {
    const coord = fc.tuple(fc.integer({ min: 0, max: MAX_ROWS - 1 }), fc.integer({ min: 0, max: MAX_COLUMNS - 1 }));
    fc.assert(
      fc.property(coord, coord, ([ra, ca], [rb, cb]) => {
        const rect = { r0: Math.min(ra, rb), c0: Math.min(ca, cb), r1: Math.max(ra, rb), c1: Math.max(ca, cb) };
        expect(parseAddress(formatRect(rect)).rect).toEqual(rect);
      }),
    );
  });

  test("sheet prefixes, quotes and bad addresses", () => {
    expect(parseAddress("'It''s here'!b2:a1")).toEqual({ sheet: "It's here", rect: { r0: 0, c0: 0, r1: 1, c1: 1 } });
    expect(parseAddress("Data!$A$1")).toEqual({ sheet: "Data", rect: { r0: 0, c0: 0, r1: 0, c1: 0 } });
    expect(quoteSheetName("My Sheet")).toBe("'My Sheet'");
    expect(quoteSheetName("A1")).toBe("'A1'");
    expect(quoteSheetName("Data_2")).toBe("Data_2");
    for (const bad of ["", "A0", "XFE1", "A1:B", "1A", "A1:B2:C3", "'open!A1", "!A1"]) {
      expect(() => parseAddress(bad)).toThrow();
    }
    expect(["A1", "xfd1048576", "R1C1", "rc", "R", "c5"].every(looksLikeCellReference)).toBe(true);
    expect(["XFE1", "A1048577", "ABCD1", "Table1", "_A1"].some(looksLikeCellReference)).toBe(false);
  });
});

describe("typed input", () => {
  test("never throws and always yields a known kind", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(["empty", "string", "number", "boolean", "error", "formula"]).toContain(parseTypedInput(s, 2025).kind);
      }),
    );
  });

  test("dates: serials match Excel's, including the 1900 leap-year quirk, and invalid dates stay text", () => {
    expect(dateSerial(1900, 1, 1)).toBe(1);
    expect(dateSerial(1900, 2, 28)).toBe(59);
    expect(dateSerial(1900, 3, 1)).toBe(61);
    expect(dateSerial(2025, 1, 31)).toBe(45688);
    expect(parseTypedInput("2/30/2025", 2025)).toEqual({ kind: "string", value: "2/30/2025" });
    expect(parseTypedInput("13/1", 2025)).toEqual({ kind: "string", value: "13/1" });
    expect(parseTypedInput("1/2/25", 2025)).toEqual({ kind: "number", value: dateSerial(2025, 1, 2), format: "m/d/yyyy" });
    expect(parseTypedInput("2025-01-31 13:45", 2025)).toEqual({ kind: "number", value: 45688 + (13 * 60 + 45) / 1440, format: "m/d/yyyy h:mm" });
    fc.assert(
      fc.property(fc.integer({ min: 61, max: 2_958_465 }), (serial) => {
        const p = serialToParts(serial);
        expect(dateSerial(p.year, p.month, p.day)).toBe(serial);
      }),
    );
  });

  test("numbers keep 15 significant digits like Excel; leading + and parentheses", () => {
    expect(parseTypedInput("123456789012345678", 2025)).toEqual({ kind: "number", value: 123456789012345000 });
    expect(parseTypedInput("0.1234567890123456789", 2025)).toEqual({ kind: "number", value: 0.123456789012345 });
    expect(parseTypedInput("+.5", 2025)).toEqual({ kind: "number", value: 0.5 });
    expect(parseTypedInput("(42)", 2025)).toEqual({ kind: "number", value: -42 });
    expect(parseTypedInput("-abc", 2025)).toEqual({ kind: "formula", formula: "=-abc" });
    expect(parseTypedInput("-", 2025)).toEqual({ kind: "string", value: "-" });
    expect(parseTypedInput("=", 2025)).toEqual({ kind: "string", value: "=" });
  });

  test("writing any string to a text-formatted cell keeps it exactly; an apostrophe prefix keeps it in a General cell", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const Excel = createExcelNamespace(wb);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (s) => {
        await Excel.run(async (ctx) => {
          const sheet = ctx.workbook.worksheets.getItem("Sheet1");
          const a = sheet.getRange("A1");
          a.numberFormat = [["@"]];
          a.values = [[s]];
          sheet.getRange("B1").values = [[`'${s}`]];
        });
        expect(inspect(wb, "A1").values).toEqual([[s]]);
        expect(inspect(wb, "B1").values).toEqual([[s]]);
      }),
      { numRuns: 200 },
    );
  });

  test("numbers written as numbers read back exactly", async () => {
    const wb = new Workbook();
    const Excel = createExcelNamespace(wb);
    await fc.assert(
      fc.asyncProperty(fc.double({ noNaN: true, noDefaultInfinity: true }), async (n) => {
        await Excel.run(async (ctx) => {
          ctx.workbook.worksheets.getItem("Sheet1").getRange("C3").values = [[n]];
        });
        expect(inspect(wb, "C3").values[0][0]).toBe(n === 0 ? 0 : toFifteenDigits(n)); // Excel keeps 15 significant digits
      }),
      { numRuns: 200 },
    );
  });
});

describe("number formats (Range.text)", () => {
  test.each([
    [1234.5, "General", "1234.5"],
    [123456789012, "General", "1.23457E+11"],
    [0.1 + 0.2, "General", "0.3"],
    [-1234.567, "#,##0.00", "-1,234.57"],
    [0.5, "0%", "50%"],
    [12345, "0.00E+00", "1.23E+04"],
    [45688, "m/d/yyyy", "1/31/2025"],
    [45688, "d-mmm", "31-Jan"],
    [45688.75, "h:mm AM/PM", "6:00 PM"],
    [45688, "dddd, mmmm d", "Friday, January 31"],
    [7, "@", "7"],
    [-3, "0;(0)", "(3)"],
    [1234.5, '"$"#,##0.00', "$1,234.50"],
    [2, '0 "items"', "2 items"],
    [-2.5, "#,##0.0_);(#,##0.0)", "(2.5)"],
  ])("%p as %p → %p", (value, format, text) => {
    expect(formatCellText(value, format)).toBe(text);
  });
});

describe("formula translation", () => {
  test("relative parts move, absolute parts, strings, sheet names and structured references stay", () => {
    expect(translateFormula("=A1+$B$2+C$3+$D4", 2, 1)).toBe("=B3+$B$2+D$3+$D6");
    expect(translateFormula('=SUM(A1:A3)&"A1"&\'Sheet A1\'!B2+[@A1]+Table1[B2]', 1, 0)).toBe(
      '=SUM(A2:A4)&"A1"&\'Sheet A1\'!B3+[@A1]+Table1[B2]',
    );
    expect(translateFormula("=LOG10(A1)+Sheet1!A1", 1, 0)).toBe("=LOG10(A2)+Sheet1!A2");
    expect(translateFormula("=A1", -1, 0)).toBe("=#REF!");
  });

  test("moving there and back is the identity while references stay on the grid", () => {
    const ref = fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 200 }), fc.boolean(), fc.integer({ min: 100, max: 5000 }));
    fc.assert(
      fc.property(fc.array(ref, { minLength: 1, maxLength: 5 }), fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 }), (refs, dr, dc) => {
        const f = "=" + refs.map(([ac, c, ar, r]) => `${ac ? "$" : ""}${columnLetters(c + 60)}${ar ? "$" : ""}${r}`).join("+");
        expect(translateFormula(translateFormula(f, dr, dc), -dr, -dc)).toBe(f);
      }),
    );
  });
});
