import fc from "fast-check";
import * as path from "path";
import { spawnSync } from "child_process";
import {
  dateToSerial,
  dateTimeToSerial,
  planColumns,
  toValues,
  estimateRowBytes,
  isIdentifierColumn,
  TEXT_FORMAT,
  DATE_FORMAT,
  DATETIME_MS_FORMAT,
  INTEGER_FORMAT,
  DECIMAL_FORMAT,
} from "../../src/workbook/cells";
import { typedRows } from "../../src/workbook/writer";
import type { Table } from "../../src/table/model";

const meta = { key: "t", kind: "dataset" as const, format: "json" as const, schemaVersion: "1", generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" };

describe("date serials", () => {
  const known: [string, number][] = [
    ["1900-01-01", 1],
    ["1900-02-28", 59],
    ["1900-03-01", 61],
    ["1970-01-01", 25569],
    ["2000-02-29", 36585],
    ["2024-01-01", 45292],
    ["2024-12-31", 45657],
    ["9999-12-31", 2958465],
  ];

  // Jest's sandbox does not pass TZ changes to the engine, so each zone runs in its own Node process.
  for (const tz of ["Pacific/Auckland", "America/Los_Angeles"]) {
    it(`gives Excel's serials with no day shift under TZ=${tz}`, () => {
      const script = `
        const c = require(${JSON.stringify(path.resolve(__dirname, "../../src/workbook/cells.ts"))});
        const known = ${JSON.stringify(known.map(([iso]) => iso))};
        console.log(JSON.stringify({
          offset: new Date(2024, 0, 15).getTimezoneOffset(),
          serials: known.map((d) => c.dateToSerial(d)),
          dt: [c.dateTimeToSerial("2024-01-01T00:00:00Z"), c.dateTimeToSerial("2024-01-01T23:30:00-08:00")],
        }));`;
      const out = spawnSync(process.execPath, ["--require", "tsx/cjs", "-e", script], { env: { ...process.env, TZ: tz }, encoding: "utf8" });
      expect(out.stderr).toBe("");
      const res = JSON.parse(out.stdout) as { offset: number; serials: number[]; dt: number[] };
      // Proves the child really ran in that zone.
      expect(res.offset).toBe(tz === "Pacific/Auckland" ? -780 : 480);
      expect(res.serials).toEqual(known.map(([, s]) => s));
      expect(res.dt[0]).toBe(45292);
      expect(res.dt[1]).toBeCloseTo(45293 + 7.5 / 24, 10);
    });
  }

  it("agrees with a UTC calendar for every date from 1900-03-01 to 9999-12-31", () => {
    const day0 = Date.UTC(1900, 2, 1);
    const dayN = Date.UTC(9999, 11, 31);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.round((dayN - day0) / 86400000) }), (n) => {
        const d = new Date(day0 + n * 86400000);
        const iso = d.toISOString().slice(0, 10);
        expect(dateToSerial(iso)).toBe(Math.round(d.getTime() / 86400000) + 25569);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps dates before 1900 (which Excel cannot show) out of the serial range", () => {
    expect(dateToSerial("1899-12-31")).toBeNull();
    expect(dateTimeToSerial("1899-12-31T12:00:00Z")).toBeNull();
  });
});

describe("column plans and values", () => {
  const table: Table = {
    columns: [
      { name: "name", type: "text" },
      { name: "count", type: "integer" },
      { name: "amount", type: "decimal" },
      { name: "active", type: "boolean" },
      { name: "due", type: "date" },
      { name: "updated", type: "datetime" },
      { name: "project_id", type: "integer" },
      { name: "big", type: "integer" },
      { name: "Budget (custom)", type: "decimal" },
    ],
    rows: [
      ["=SUM(A1)", 3, 1.5, true, "2024-02-29", "2024-01-01T12:00:00Z", 42, "9007199254740993", "12.50"],
      [null, null, null, null, null, null, null, null, ""],
      ["00123", 0, -2, false, "1900-01-01", "2024-06-30T23:59:59.500+02:00", 7, "1", "-3,5"],
    ],
    meta,
  };

  it("writes a numeric custom field of a record snapshot in General, other decimals in #,##0.00", () => {
    const plans = planColumns({
      columns: [
        { name: "Budget Contingency", type: "decimal", customField: true },
        { name: "amount", type: "decimal" },
        { name: "Sponsor", type: "text", customField: true },
      ],
      rows: [[1500.5, 2, "x"]],
    });
    expect(plans.map((p) => p.numberFormat)).toEqual(["General", DECIMAL_FORMAT, TEXT_FORMAT]);
  });

  it("formats text, identifiers and beyond-2^53 integers as text, the rest by type", () => {
    const plans = planColumns(table);
    expect(plans.map((p) => [p.name, p.numberFormat, p.kind])).toEqual([
      ["name", TEXT_FORMAT, "text"],
      ["count", INTEGER_FORMAT, "number"],
      ["amount", DECIMAL_FORMAT, "number"],
      ["active", "General", "boolean"],
      ["due", DATE_FORMAT, "date"],
      // A value with milliseconds (.500) in the column: the format shows them.
      ["updated", DATETIME_MS_FORMAT, "datetime"],
      ["project_id", TEXT_FORMAT, "text"],
      ["big", TEXT_FORMAT, "text"],
      ["Budget (custom)", DECIMAL_FORMAT, "number"],
    ]);
  });

  it("converts values: text exact, numbers, serials, booleans, nulls and empty strings to empty cells", () => {
    const values = toValues(table.rows, planColumns(table), 0, 3);
    expect(values[0]).toEqual(["=SUM(A1)", 3, 1.5, true, 45351, 45292.5, "42", "9007199254740993", 12.5]);
    expect(values[1]).toEqual(["", "", "", "", "", "", "", "", ""]);
    expect(values[2][0]).toBe("00123");
    expect(values[2][4]).toBe(1);
    expect(values[2][5]).toBeCloseTo(45473 + (21 * 3600 + 59 * 60 + 59.5) / 86400, 10);
    expect(values[2][8]).toBe(-3.5);
  });

  it("fills a reused block buffer exactly as it would make a new one (a longer buffer is cut to the block)", () => {
    const plans = planColumns(table);
    const fresh = toValues(table.rows, plans, 0, 3);
    const buffer: (string | number | boolean)[][] = [];
    expect(toValues(table.rows, plans, 0, 3, buffer)).toBe(buffer);
    const rowsBefore = [...buffer];
    expect(buffer).toEqual(fresh);
    // The next block: the same row arrays, filled again; one row fewer here.
    expect(toValues(table.rows, plans, 1, 3, buffer)).toEqual(fresh.slice(1));
    expect(buffer).toHaveLength(2);
    expect(buffer[0]).toBe(rowsBefore[0]);
  });

  it("typedRows reuses one block buffer only when asked: a refresh keeps its blocks, an import is done with each once sent", () => {
    const plans = planColumns(table);
    const fresh = toValues(table.rows, plans, 0, 3);
    // Default (the refresh: it keeps `get(0, total)` while typing other blocks): every block is new
    // and stays as it was typed.
    const kept = typedRows(table, plans);
    const first = kept.get(0, 2);
    expect(kept.get(2, 3)).not.toBe(first);
    expect(first).toEqual(fresh.slice(0, 2));
    // With `reuse` (the import): the next block is typed into the same arrays.
    const reused = typedRows(table, plans, false, true);
    const a = reused.get(0, 2);
    const rowA = a[0];
    const b = reused.get(1, 3);
    expect(b).toBe(a);
    expect(b[0]).toBe(rowA);
    expect(b).toEqual(fresh.slice(1, 3));
    // The fingerprints are the same either way.
    expect(reused.hashes()).toEqual(kept.hashes());
  });

  it("typedRows in a 1904 workbook: 1904-01-01 is serial 0, the day before stays text, also in a reused buffer", () => {
    const dates: Table = { columns: [{ name: "d", type: "date" }], rows: [["1904-01-01"], ["1903-12-31"], ["1904-01-02"]], meta };
    const plans = planColumns(dates);
    for (const reuse of [false, true]) {
      const t = typedRows(dates, plans, true, reuse);
      expect(t.get(0, 3)).toEqual([[0], ["1903-12-31"], [1]]);
      // The next block is adjusted once, from its own serials (not from the last block's values).
      expect(t.get(1, 3)).toEqual([["1903-12-31"], [1]]);
    }
  });

  it("recognises identifier columns case-insensitively", () => {
    expect(isIdentifierColumn("Resource_ID")).toBe(true);
    expect(isIdentifierColumn("project_token")).toBe(true);
    expect(isIdentifierColumn("idea")).toBe(false);
    expect(isIdentifierColumn("paid")).toBe(false);
  });

  it("never underestimates a row's JSON size", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()), { maxLength: 12 }), (row) => {
        expect(estimateRowBytes(row)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(row), "utf8"));
      }),
    );
  });
});
