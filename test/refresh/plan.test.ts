import { decide, planResize, withSuccess, withFailure, withUnchanged, failureFrom, isSameData } from "../../src/refresh/plan";
import { validateTable, checkColumnsMatch, checkValue, digitsAt, isCalendarDate, EXCEL_MAX_ROWS } from "../../src/refresh/validate";
import { makeBinding, makeTable, rowsOf, COLUMNS } from "./fixtures";
import type { Table } from "../../src/table/model";

const noQuery = (t: Table) => ({ table: t });

describe("decide", () => {
  it("writes nothing on 304", () => {
    expect(decide(makeBinding(), { status: "unchanged", validators: { etag: '"e1"' } }, noQuery).kind).toBe("unchanged");
  });

  it("writes nothing when generated_at is unchanged, and writes when it moved", () => {
    const b = makeBinding();
    const same = decide(b, { status: "updated", table: makeTable(rowsOf(2)), validators: { generatedAt: "2026-01-01T00:00:00Z" } }, noQuery);
    expect(same.kind).toBe("unchanged");
    const moved = decide(b, { status: "updated", table: makeTable(rowsOf(2)), validators: { generatedAt: "2026-01-02T00:00:00Z" } }, noQuery);
    expect(moved.kind).toBe("write");
  });

  it("compares snapshots by content fingerprint", () => {
    const b = makeBinding({ source: { kind: "snapshot", endpoint: "projects" }, validators: { etag: "fp1" } });
    expect(isSameData(b, { etag: "fp1" })).toBe(true);
    expect(isSameData(b, { etag: "fp2" })).toBe(false);
  });

  it("validates the whole new table and the column set before anything is written", () => {
    const b = makeBinding();
    const v = { generatedAt: "2026-02-01T00:00:00Z" };
    const bad = rowsOf(1000);
    bad[999][3] = "2024-02-30";
    const r1 = decide(b, { status: "updated", table: makeTable(bad), validators: v }, noQuery);
    expect(r1).toMatchObject({ kind: "fail", code: "bad_value" });
    expect((r1 as { message: string }).message).toMatch(/Row 1000, column "due"/);
    const renamed = makeTable(rowsOf(2), {}, [...COLUMNS.slice(0, 3), { name: "due_date", type: "date" }]);
    const r2 = decide(b, { status: "updated", table: renamed, validators: v }, noQuery);
    expect(r2).toMatchObject({ kind: "fail", code: "schema_mismatch" });
    expect((r2 as { message: string }).message).toMatch(/missing: due; new: due_date/);
    const retyped = makeTable(rowsOf(2), {}, [...COLUMNS.slice(0, 3), { name: "due", type: "text" }]);
    expect(decide(b, { status: "updated", table: retyped, validators: v }, noQuery)).toMatchObject({ kind: "fail", code: "schema_mismatch" });
  });

  it("re-applies the stored local query and reports a query failure", () => {
    const b = makeBinding({ query: { top: 1 } });
    const v = { generatedAt: "2026-02-01T00:00:00Z" };
    const seen: unknown[] = [];
    const r = decide(b, { status: "updated", table: makeTable(rowsOf(5)), validators: v }, (t, q) => {
      seen.push(q);
      return { table: { ...t, rows: t.rows.slice(0, q.top) } };
    });
    expect(seen).toEqual([{ top: 1 }]);
    expect(r.kind === "write" && r.table.rows.length).toBe(1);
    const f = decide(b, { status: "updated", table: makeTable(rowsOf(5)), validators: v }, () => {
      throw new Error("unknown column x");
    });
    expect(f).toMatchObject({ kind: "fail", code: "query_failed" });
  });
});

describe("validateTable", () => {
  it("refuses more rows than a sheet holds, suggesting a local filter", () => {
    const t = makeTable([]);
    t.rows = { length: EXCEL_MAX_ROWS } as unknown as Table["rows"]; // length is all the limit check reads
    const issues = validateTable(t);
    expect(issues[0].code).toBe("too_many_rows");
    expect(issues[0].message).toMatch(/local filter/);
  });
  it("finds ragged rows, bad values and duplicate column names", () => {
    expect(validateTable(makeTable([[1, "a", 1]]))[0].code).toBe("row_shape");
    expect(validateTable(makeTable([[1.5, "a", 1, null]]))[0].message).toMatch(/project_id/);
    expect(validateTable(makeTable([["12a", "a", 1, null]]))[0].code).toBe("bad_value");
    expect(validateTable(makeTable([], {}, [{ name: "A", type: "text" }, { name: "a", type: "text" }]))[0].code).toBe("duplicate_column");
    expect(validateTable(makeTable(rowsOf(50)))).toEqual([]);
    expect(checkColumnsMatch(makeBinding(), makeTable([]))).toBeNull();
  });
});

describe("date and date-time checks (read in place, digit by digit: issue #24 item 2)", () => {
  it("digitsAt reads ASCII digits only: the characters either side of 0-9 and the end of the text are not digits", () => {
    expect(digitsAt("x2026", 1, 4)).toBe(2026);
    expect(digitsAt("1/", 0, 2)).toBe(-1); // '/' is '0' − 1
    expect(digitsAt("1:", 0, 2)).toBe(-1); // ':' is '9' + 1
    // Past the end it gives NaN (not −1: NaN fails both comparisons); callers check the length
    // first, and NaN still never passes a `>= 0` test.
    expect(digitsAt("1", 0, 2) >= 0).toBe(false);
  });

  it("a date is exactly YYYY-MM-DD of a real day", () => {
    for (const s of ["2026-01-01", "2024-02-29", "2000-02-29", "2026-04-30", "2026-11-30", "2026-12-31"]) expect(isCalendarDate(s)).toBe(true);
    for (const s of [
      "2026-01-01x", // longer: a date cell holds the date and nothing after it
      "2026/01/01", "2026-01/01", "2026/01-01", // both separators are hyphens
      "20x6-01-01", "2026-1/-01", "2026-01-1/", // every field digits only
      "2026-00-10", "2026-13-01", "2026-01-00", "2026-01-32",
      "2026-02-29", "1900-02-29", "2100-02-29", // leap years: every 4th, not every 100th, but every 400th
      "2026-04-31", "2026-06-31", "2026-09-31", "2026-11-31",
    ]) expect(isCalendarDate(s)).toBe(false);
    expect(checkValue("date", "1900-02-29")).toBe("not a YYYY-MM-DD date");
    expect(checkValue("date", "2026-01-01T00:00:00Z")).toBe("not a YYYY-MM-DD date");
  });

  it("a canonical UTC date-time is valid only with a real day and time; anything else takes the general check", () => {
    const bad = "not an ISO date-time with offset";
    for (const s of ["2026-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "2026-12-31T12:30:45Z", "2026-01-01T10:00:00+02:00", "2026-01-01T10:00Z"]) expect(checkValue("datetime", s)).toBeNull();
    for (const s of [
      "2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z", "2026-01-01T25:00:00Z", "2026-01-01T99:00:00Z", // time fields in range
      "2026-01-01Tx0:00:00Z", "2026-01-01T00:/0:00Z", "2026-01-01T00:00:/0Z", // time fields digits only
      "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "20x6-01-01T00:00:00Z", // the date part is checked too
      "2026-01-01T00:00:00X", "2026-01-01 00:00:00Z", "2026-01-01T00-00:00Z", "2026-01-01T00:00-00Z", // the fixed characters
      "2026-01-01T00:00:00Zjunk", "2026-01-01T00:00:00", // no offset: no defined instant
    ]) expect(checkValue("datetime", s)).toBe(bad);
  });

  it("a date-time in any other form must name a real day too (V8's Date.parse rolls 2026-02-30 over into March)", () => {
    const bad = "not an ISO date-time with offset";
    expect(Number.isNaN(Date.parse("2026-02-30T00:00:00.5Z"))).toBe(false); // the general check alone would pass these
    for (const s of ["2026-02-30T00:00:00.5Z", "2026-04-31T10:00:00+02:00", "2025-02-29T10:00Z", "2026-02-31T00:00:00Z"]) expect(checkValue("datetime", s)).toBe(bad);
    for (const s of ["2024-02-29T10:00:00.5Z", "2026-04-30T10:00:00+02:00"]) expect(checkValue("datetime", s)).toBeNull();
  });

  it("validateTable's fast paths pass only what checkValue would", () => {
    const cols = [
      { name: "i", type: "integer" as const },
      { name: "d", type: "decimal" as const },
      { name: "b", type: "boolean" as const },
    ];
    expect(validateTable(makeTable([[2 ** 53 - 1, 1.5, true]], {}, cols))).toEqual([]);
    const codes = (row: Table["rows"][number]) => validateTable(makeTable([row], {}, cols)).map((i) => i.message);
    expect(codes([2 ** 53, 1.5, true])).toEqual(['Row 1, column "i" (integer): not a safe integer.']);
    expect(codes([1, NaN, true])).toEqual(['Row 1, column "d" (decimal): not a finite number.']);
    expect(codes([1, Infinity, true])).toEqual(['Row 1, column "d" (decimal): not a finite number.']);
    expect(codes([1, 1.5, "yes"])).toEqual(['Row 1, column "b" (boolean): not a boolean.']);
  });
});

describe("planResize", () => {
  const g = { headerRow: 1, firstColumn: 0, dataColumns: 4, userColumns: 2, bodyRows: 3 };
  it("grows into the rows below, all columns including user columns", () => {
    expect(planResize(g, 5)).toEqual({
      bodyRows: 5,
      table: { row: 1, column: 0, rowCount: 6, columnCount: 6 },
      growth: { row: 5, column: 0, rowCount: 2, columnCount: 6 },
      vacated: null,
    });
  });
  it("shrinks and reports the vacated rows; an empty result keeps one body row", () => {
    expect(planResize(g, 1).vacated).toEqual({ row: 3, column: 0, rowCount: 2, columnCount: 6 });
    expect(planResize(g, 0).bodyRows).toBe(1);
    expect(planResize(g, 3)).toMatchObject({ growth: null, vacated: null });
  });
  it("refuses to grow past the sheet's last row", () => {
    expect(() => planResize(g, EXCEL_MAX_ROWS)).toThrow(/local filter/);
  });
});

describe("binding updates", () => {
  const now = new Date("2026-03-01T10:00:00Z");
  it("record success, unchanged checks and failures", () => {
    const b = makeBinding({ lastFailure: { at: "x", code: "unauthorized", message: "m" } });
    const s = withSuccess(b, makeTable(rowsOf(7), { generatedAt: "2026-02-01T00:00:00Z" }), { etag: '"e2"', generatedAt: "2026-02-01T00:00:00Z" }, now);
    expect(s).toMatchObject({ rowCount: 7, lastRefreshAt: now.toISOString(), lastFailure: null, validators: { etag: '"e2"', generatedAt: "2026-02-01T00:00:00Z" } });
    const u = withUnchanged(b, { etag: '"e1"' }, now);
    expect(u).toMatchObject({ rowCount: 3, lastRefreshAt: b.lastRefreshAt, lastCheckedAt: now.toISOString(), lastFailure: null });
    const f = withFailure(b, failureFrom(Object.assign(new Error("Dataset not generated"), { code: "not_generated" }), now));
    expect(f.lastFailure).toEqual({ at: now.toISOString(), code: "not_generated", message: "Dataset not generated" });
    expect(f.rowCount).toBe(3);
  });
  it("classifies aborts as cancelled and redacts secrets", () => {
    const abort = new DOMException("This operation was aborted", "AbortError");
    expect(failureFrom(abort, now).code).toBe("cancelled");
    expect(failureFrom(new Error("token tok-12345 rejected"), now, ["tok-12345"]).message).toBe("token [redacted] rejected");
  });
});
