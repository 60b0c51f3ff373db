import type { Table, Column, CellValue } from "../../src/table/model";
import { draftBinding, type Binding } from "../../src/refresh/binding";

export const COLUMNS: Column[] = [
  { name: "project_id", type: "integer" },
  { name: "name", type: "text" },
  { name: "amount", type: "decimal" },
  { name: "due", type: "date" },
];

export function makeTable(rows: CellValue[][], over: Partial<Table["meta"]> = {}, columns: Column[] = COLUMNS): Table {
  return {
    columns,
    rows,
    meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "3", generatedAt: "2026-01-01T00:00:00Z", etag: '"e1"', lastModified: null, fetchedAt: "2026-01-01T00:00:01Z", ...over },
  };
}

export function rowsOf(n: number, seed = 0): CellValue[][] {
  return Array.from({ length: n }, (_, i) => [i + 1, `p${i + seed}`, (i * 10 + seed) / 4, `2024-01-${String((i % 28) + 1).padStart(2, "0")}`]);
}

export function makeBinding(over: Partial<Binding> = {}): Binding {
  return {
    ...draftBinding({
      id: "b1",
      connectionId: "conn-1",
      environment: "https://ppm.example.com/",
      companyId: "acme",
      source: { kind: "dataset", key: "financials", format: "json" },
      columns: COLUMNS,
      schemaVersion: "3",
      validators: { etag: '"e1"', generatedAt: "2026-01-01T00:00:00Z" },
    }),
    tableName: "ppm_financials",
    sheetName: "financials",
    rowCount: 3,
    lastRefreshAt: "2026-01-01T00:00:02Z",
    lastCheckedAt: "2026-01-01T00:00:02Z",
    lastFailure: null,
    ...over,
  };
}
