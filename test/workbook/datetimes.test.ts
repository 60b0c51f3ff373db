/**
 * Dates and date-times in the sheet (issue #14, item 9): both follow Excel's 1900 date system alike
 * (serials from 1900-01-01, counting Excel's fictitious 1900-02-29; text before 1900), and a
 * date-time keeps its milliseconds under a format that never rounds it into the next day.
 */
import { Workbook, createRequestContext, inspect } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { DATETIME_FORMAT, DATETIME_MS_FORMAT, DATE_FORMAT, dateTimeToSerial, dateToSerial, dayToSerial, daysFromCivil } from "../../src/workbook/cells";
import { bindingDraft, finTable, fixedNow } from "./helpers";

async function importRows(rows: (string | null)[][]) {
  const wb = new Workbook({ currentYear: 2026 });
  const cols = [
    { name: "day", type: "date" as const },
    { name: "at", type: "datetime" as const },
    { name: "whole", type: "datetime" as const },
  ];
  const table = finTable(rows, {}, cols);
  await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow });
  return inspect(wb, `'financials (json)'!A3:C${2 + rows.length}`);
}

describe("Excel's 1900 date system, one rule for dates and date-times", () => {
  it("dayToSerial: 1 on 1900-01-01, 59 on 1900-02-28, 61 on 1900-03-01 (60 is Excel's 1900-02-29), null before", () => {
    expect(dayToSerial(daysFromCivil(1900, 1, 1))).toBe(1);
    expect(dayToSerial(daysFromCivil(1900, 2, 28))).toBe(59);
    expect(dayToSerial(daysFromCivil(1900, 3, 1))).toBe(61);
    expect(dayToSerial(daysFromCivil(1899, 12, 31))).toBeNull();
  });

  it("date-times before 1900-03-01 become serials exactly as dates do (they stayed text before)", () => {
    for (const [date, dt] of [
      ["1900-01-01", "1900-01-01T00:00:00Z"],
      ["1900-01-15", "1900-01-15T12:00:00Z"],
      ["1900-02-28", "1900-02-28T18:00:00Z"],
      ["1900-03-01", "1900-03-01T06:00:00Z"],
    ]) {
      expect(Math.floor(dateTimeToSerial(dt)!)).toBe(dateToSerial(date));
    }
    expect(dateTimeToSerial("1900-01-15T12:00:00Z")).toBe(15.5);
    expect(dateTimeToSerial("1899-12-31T23:59:59.999Z")).toBeNull();
    expect(dateToSerial("1899-12-31")).toBeNull();
  });

  it("in the sheet: 1900 dates and date-times are numbers shown as what was sent; 1899 stays text in both columns", async () => {
    const r = await importRows([
      ["1900-01-15", "1900-01-15T12:00:00Z", "1900-02-28T23:00:00Z"],
      ["1899-12-31", "1899-12-31T12:00:00Z", "1899-12-31T12:00:00Z"],
    ]);
    expect(r.values[0]).toEqual([15, 15.5, 59 + 23 / 24]);
    expect(r.text[0]).toEqual(["1900-01-15", "1900-01-15 12:00:00", "1900-02-28 23:00:00"]);
    expect(r.valueTypes[1]).toEqual(["String", "String", "String"]);
    expect(r.values[1]).toEqual(["1899-12-31", "1899-12-31T12:00:00Z", "1899-12-31T12:00:00Z"]);
  });
});

describe("fractional seconds", () => {
  it("keeps milliseconds (truncated, never rounded up) in the serial", () => {
    const s = dateTimeToSerial("2026-01-15T23:59:59.9999999Z")!;
    expect(Math.floor(s)).toBe(dateToSerial("2026-01-15"));
    expect(Math.round((s - Math.floor(s)) * 86_400_000)).toBe(86_399_999);
    expect(dateTimeToSerial("2026-01-15T06:00:00.250Z")).toBeCloseTo(dateToSerial("2026-01-15")! + 0.25 + 0.25 / 86400, 10);
  });

  it("23:59:59.999 shows as that day, with its milliseconds, not as the next day's 00:00:00", async () => {
    const r = await importRows([
      ["2026-01-15", "2026-01-15T23:59:59.999Z", "2026-01-15T23:59:59Z"],
      ["2026-01-16", "2026-01-16T00:00:00Z", "2026-01-16T00:00:00.0004Z"],
    ]);
    expect(r.numberFormat[0]).toEqual([DATE_FORMAT, DATETIME_MS_FORMAT, DATETIME_FORMAT]);
    expect(r.text[0]).toEqual(["2026-01-15", "2026-01-15 23:59:59.999", "2026-01-15 23:59:59"]);
    expect(r.text[1]).toEqual(["2026-01-16", "2026-01-16 00:00:00.000", "2026-01-16 00:00:00"]);
  });

  it("the emulator rounds a time to the format's precision, as Excel does (why the format matters)", async () => {
    const wb = new Workbook({ currentYear: 2026 });
    const ctx = createRequestContext(wb);
    const s = ctx.workbook.worksheets.getActiveWorksheet();
    const serial = dateTimeToSerial("2026-01-15T23:59:59.999Z")!;
    s.getRange("A1:B1").values = [[serial, serial]];
    s.getRange("A1:B1").numberFormat = [[DATETIME_FORMAT, DATETIME_MS_FORMAT]];
    await ctx.sync();
    expect(inspect(wb, "A1:B1").text[0]).toEqual(["2026-01-16 00:00:00", "2026-01-15 23:59:59.999"]);
  });
});
