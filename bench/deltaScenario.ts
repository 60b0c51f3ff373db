/**
 * The delta-refresh scenario shared by `bench/deltaRefresh.ts` (200,000 × 12) and the deterministic
 * budget tests (`test/workbook/budgets.test.ts`, 2,000 × 12): one table generator, so the test's
 * small table and the bench's large one change in exactly the same way.
 */
import type { RefreshSource } from "../src/refresh/source";
import type { CellValue, Column, Table } from "../src/table/model";

export const COLUMNS: Column[] = [
  { name: "Id", type: "integer" }, { name: "Name", type: "text" }, { name: "Code", type: "text" }, { name: "Amount", type: "decimal" },
  { name: "Hours", type: "integer" }, { name: "Start", type: "date" }, { name: "Updated", type: "datetime" }, { name: "Active", type: "boolean" },
  { name: "Owner", type: "text" }, { name: "Budget", type: "decimal" }, { name: "Phase", type: "text" }, { name: "Score", type: "integer" },
];

/** Row `id` of generation `v`: every generation changes every row. */
export function row(id: number, v: number): CellValue[] {
  return [id, `Project ${id} v${v}`, `C${(id * 7) % 10000}`, Math.round(id * 13.7 + v) / 100, (id + v) % 500,
    `2025-${String((id % 12) + 1).padStart(2, "0")}-${String((id % 28) + 1).padStart(2, "0")}`, `2026-01-${String((v % 28) + 1).padStart(2, "0")}T10:00:00Z`,
    id % 3 === 0, `owner${id % 97}`, id * 3 + v, ["Plan", "Build", "Run"][id % 3], (id * v) % 100];
}

/** Tables with distinct generations (validators), numbered per process. */
export function tableMaker(): (rows: CellValue[][]) => Table {
  let gen = 0;
  return (rows) => {
    gen++;
    const at = `2026-01-01T00:00:${String(gen % 60).padStart(2, "0")}Z`;
    return { columns: COLUMNS, rows, meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: at, etag: `"g${gen}"`, lastModified: null, fetchedAt: at } };
  };
}

/** A source that answers every refresh with `t`, keyed by `Id` as `$metadata` would declare. */
export const sourceOf = (t: Table): RefreshSource => ({
  fetch: () => Promise.resolve({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt }, key: { candidates: [["Id"]], origin: "metadata", reason: "the key $metadata declares" } }),
});

/** 1 % of the rows changed (one cell each: a status edit), 0.1 % removed, 0.1 % added, spread over the table. */
export function onePercentChanged(prev: CellValue[][], firstNewId: number): CellValue[][] {
  const next: CellValue[][] = [];
  let added = 0;
  for (let i = 0; i < prev.length; i++) {
    if (i % 1000 === 500) continue; // removed
    const r = prev[i];
    next.push(i % 100 === 7 ? [...r.slice(0, 10), r[10] === "Run" ? "Plan" : "Run", r[11]] : r);
    if (i % 1000 === 900) next.push(row(firstNewId + added++, 2));
  }
  return next;
}
