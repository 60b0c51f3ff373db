/**
 * Shared fixtures of the query suites: a small typed table that exercises every column type, nulls,
 * big integers and awkward names, and {@link errorOf} for asserting on a `QueryError`.
 */
import { QueryError } from "../../src/query";
import type { CellValue, Column, Table } from "../../src/table/model";

export const COLUMNS: Column[] = [
  { name: "Id", type: "integer" },
  { name: "Name", type: "text" },
  { name: "Status", type: "text" },
  { name: "Budget", type: "decimal" },
  { name: "Budget Contingency", type: "decimal" },
  { name: "Cost Center Code", type: "text" },
  { name: "Start", type: "date" },
  { name: "Updated", type: "datetime" },
  { name: "Active", type: "boolean" },
  { name: "BigNum", type: "integer", sourceType: "Edm.Int64" },
  { name: "Score", type: "integer" },
  { name: "Note", type: "text" },
];

// prettier-ignore
export const ROWS: CellValue[][] = [
  [1, "Alpha",   "Open",    1000.5, 50,    "CC-100", "2025-01-31", "2025-01-31T08:00:00Z",     true,  "9007199254740993", 5,    "O'Brien's plan"],
  [2, "Beta",    "Closed",  250,    null,  "CC-200", "2024-12-15", "2025-01-31T09:30:00Z",     false, "9007199254740992", 3,    null],
  [3, "gamma",   "Open",    null,   12.25, null,     "2025-02-01", "2024-06-30T23:59:59Z",     true,  42,                 -2,   "  padded  "],
  [4, null,      "On Hold", 0,      0,     "CC-100", null,         null,                       null,  null,               null, "Ünïcode ✓"],
  [5, "Delta",   "Closed",  -75.5,  100,   "CC-300", "2023-03-10", "2025-01-31T07:59:59.999Z", false, "-9007199254740993", 10,  "a&b"],
  [6, "Alpha",   "Open",    1e6,    5.5,   "CC-200", "2025-01-01", "2026-01-01T00:00:00Z",     true,  7,                  0,    "100%"],
  [7, "epsilon", null,      250,    null,  "CC-100", "2025-12-31", "2025-06-15T12:00:00Z",     null,  "123456789012345678901234567890", 7, "C++"],
  [8, "Zeta",    "Open",    99.99,  1,     "CC-400", "2024-02-29", "2025-02-28T22:00:00Z",     false, 0,                  5,    "comma, inside"],
];

export function makeTable(columns: Column[] = COLUMNS, rows: CellValue[][] = ROWS): Table {
  return {
    columns: columns.map((c) => ({ ...c })),
    rows: rows.map((r) => r.slice()),
    meta: {
      key: "financials",
      kind: "dataset",
      format: "json",
      schemaVersion: "1",
      generatedAt: "2025-06-01T00:00:00Z",
      etag: null,
      lastModified: null,
      fetchedAt: "2025-06-01T00:00:00Z",
    },
  };
}

/** The instant `now()` stands for in tests. */
export const NOW = Date.parse("2025-06-01T00:00:00Z");

export const ALL = [1, 2, 3, 4, 5, 6, 7, 8];

/** The `QueryError` that `f` throws; fails the test if it throws nothing or something else. */
export function errorOf(f: () => unknown): QueryError {
  try {
    f();
  } catch (e) {
    if (e instanceof QueryError) return e;
    throw e;
  }
  throw new Error("expected a QueryError");
}
