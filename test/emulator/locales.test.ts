/**
 * Issue #34: the host's locale profiles (src/emulator/locales.ts). What changes when the workbook is
 * open in a German or French Excel: numbers and logical values turned into text inside formulas, and
 * the separators and culture the Application reports; what does not: English formulas through the
 * API and locale-neutral parsing of `Range.values`. Each expectation names its source in locales.ts.
 */
import { Workbook, createExcelNamespace, inspect, type LocaleId } from "../../src/emulator";

async function calc(locale: LocaleId, setup: Array<[string, unknown[][]]>, formula: string, own?: { decimalSeparator?: string }): Promise<unknown> {
  const wb = new Workbook({ currentYear: 2025, locale, ...own });
  await createExcelNamespace(wb).run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    for (const [addr, values] of setup) s.getRange(addr).values = values as (string | number | boolean)[][];
    s.getRange("Z1").formulas = [[formula]];
    await context.sync();
  });
  return inspect(wb, "Z1").values[0][0];
}

const row: Array<[string, unknown[][]]> = [["A1:D1", [[2.25, true, "x", 1 / 3]]]];

test.each([
  ["en-US", "2.25|TRUE|x|0.333333333333333", "1.5", "FALSE"],
  ["de-DE", "2,25|WAHR|x|0,333333333333333", "1,5", "FALSCH"],
  ["fr-FR", "2,25|VRAI|x|0,333333333333333", "1,5", "FAUX"],
] as const)("%s: TEXTJOIN and & write numbers with the culture's decimal separator and logical values in its language", async (locale, joined, half, no) => {
  expect(await calc(locale, row, '=TEXTJOIN("|",FALSE,A1:D1)')).toBe(joined);
  expect(await calc(locale, [], '=1.5&""')).toBe(half);
  expect(await calc(locale, [], '=CONCAT(1=2,"")')).toBe(no);
  // The formula itself is English through the API (Range.formulas), whatever the culture.
  expect(await calc(locale, row, "=IF(A1>2,1,0)")).toBe(1);
});

test("the separator Excel writes can be asked from a formula: the text between 0 and 5 of 0.5&\"\" (also a custom one)", async () => {
  const ask = '=LET(d,0.5&"",MID(d,2,LEN(d)-2))';
  expect(await calc("en-US", [], ask)).toBe(".");
  expect(await calc("de-DE", [], ask)).toBe(",");
  expect(await calc("en-US", [], ask, { decimalSeparator: "·" })).toBe("·");
  expect(await calc("de-DE", row, '=TEXTJOIN("|",FALSE,A1)', { decimalSeparator: "·" })).toBe("2·25");
});

test.each([
  ["en-US", ".", ",", "en-us"],
  ["de-DE", ",", ".", "de-de"],
  ["fr-FR", ",", "\u202f", "fr-fr"],
] as const)("%s: Application separators and cultureInfo (ExcelApi 1.11)", async (locale, dec, group, name) => {
  const wb = new Workbook({ locale });
  await createExcelNamespace(wb).run(async (context) => {
    const app = context.application;
    app.load("decimalSeparator,thousandsSeparator,useSystemSeparators");
    const culture = app.cultureInfo;
    culture.load("name");
    culture.numberFormat.load("numberDecimalSeparator,numberGroupSeparator");
    await context.sync();
    expect([app.decimalSeparator, app.thousandsSeparator, app.useSystemSeparators]).toEqual([dec, group, true]);
    expect([culture.name, culture.numberFormat.numberDecimalSeparator, culture.numberFormat.numberGroupSeparator]).toEqual([name, dec, group]);
  });
});

test("Excel's own separators (Use system separators off): the Application reports them, the culture keeps its own", async () => {
  const wb = new Workbook({ locale: "de-DE", decimalSeparator: ".", thousandsSeparator: "'" });
  await createExcelNamespace(wb).run(async (context) => {
    const app = context.application;
    app.load("decimalSeparator,thousandsSeparator,useSystemSeparators");
    app.cultureInfo.numberFormat.load("numberDecimalSeparator");
    await context.sync();
    expect([app.decimalSeparator, app.thousandsSeparator, app.useSystemSeparators, app.cultureInfo.numberFormat.numberDecimalSeparator]).toEqual([".", "'", false, ","]);
  });
});

test.each(["en-US", "de-DE", "fr-FR"] as const)("%s: Range.values parses strings locale-neutrally (docs: locale-shaped strings are stored as text)", async (locale) => {
  const wb = new Workbook({ currentYear: 2025, locale });
  await createExcelNamespace(wb).run(async (context) => {
    context.workbook.worksheets.getItem("Sheet1").getRange("A1:B1").values = [["1.5", "TRUE"]];
    await context.sync();
  });
  expect(inspect(wb, "A1:B1").values[0]).toEqual([1.5, true]);
});
