import { decide, planResize, withSuccess, withFailure, withUnchanged, failureFrom, isSameData } from "../../src/refresh/plan";
import { validateTable, checkColumnsMatch, EXCEL_MAX_ROWS } from "../../src/refresh/validate";
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
