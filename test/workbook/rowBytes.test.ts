/**
 * Review of #38 (R1): blocks are cut by `rowJsonBytes`, so it must never be below the bytes Microsoft's
 * library sends for a row's values (`JSON.stringify`, UTF-8), whatever the values; and close to them
 * for ordinary data, or blocks get small and imports take more requests.
 */
import { expect } from "@jest/globals";
import fc from "fast-check";
import { rowJsonBytes } from "../../src/workbook/blocks";

const utf8 = new TextEncoder();
const sent = (row: unknown[]) => utf8.encode(JSON.stringify(row)).length;

describe("rowJsonBytes: an upper bound of a row's request bytes", () => {
  test("never below JSON.stringify's UTF-8 bytes (property: any text, any number, booleans)", () => {
    const cell = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string({ unit: "grapheme" }),
      fc.constantFrom("", '"', "\\", "\n", "\u0001", "\ud800", "\udc00x", "😀", "é", "中"),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.constantFrom(0.1 + 0.2, 1e-7, 123456789012345.6, -0.000001, 1e21, -1.2345678901234567e-308, 5e-324, Number.MAX_VALUE, 2 ** 53 + 2, 112462.5, 0.07),
      fc.boolean(),
    );
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 12 }), (row) => {
        expect(rowJsonBytes(row, row.length)).toBeGreaterThanOrEqual(sent(row));
      }),
      { numRuns: 5_000 },
    );
  });

  test("close for ordinary data: text exact, integers exact, amounts within a digit or two", () => {
    const row = ["P-1001", "Pipeline upgrade", 42, -7, 0, 112462.5, 19.99, -0.5, 1234.567891, true];
    // `true` is counted as `false` (+1); 19.99 × 100 is not an integer in doubles, × 1,000 is (+1);
    // the comma after the row in its block (+1).
    expect(rowJsonBytes(row, row.length)).toBe(sent(row) + 3);
  });
});

describe("rowRequestBytes: a values write's request stays within the rows' sum", () => {
  test.each([
    [1_000, 12],
    [3_000, 100],
    [100, 3_000],
    [2_000, 1],
  ])("%i rows × %i columns of one-digit numbers", async (rows, cols) => {
    const { Workbook, createRequestContext } = await import("../../src/emulator");
    const { rowRequestBytes } = await import("../../src/workbook/blocks");
    const wb = new Workbook({ currentYear: 2025 });
    const ctx = createRequestContext(wb);
    const values = Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => (r + c) % 10));
    ctx.workbook.worksheets.getItem("Sheet1").getRangeByIndexes(0, 0, rows, cols).values = values;
    await ctx.sync();
    const estimate = values.reduce((n, row) => n + rowRequestBytes(row, cols), 0);
    // The request also carries the range's own path and actions (under 1,000 bytes).
    expect(wb.stats.requestBytesPerSync[0]).toBeLessThanOrEqual(estimate + 1_000);
    expect(estimate).toBeLessThanOrEqual(wb.stats.requestBytesPerSync[0] * 1.6);
  });
});
