/**
 * Combining the project and proposal resource snapshots without double counting.
 */
import { RESOURCE_DEDUP_KEY } from "../contract/contract";

type Row = Record<string, unknown>;

function keyPart(v: unknown): string {
  // Ids may come as numbers from one endpoint and strings from another; "7" and 7 are one resource.
  if (v === null || v === undefined) return "\u0000null";
  return typeof v === "string" || typeof v === "number" ? String(v) : JSON.stringify(v);
}

/** The de-duplication key of a resource row (`work_type`, `resource_id`, `npt_category_id`, `fiscal_year`, `period_number`). */
export function resourceDedupKey(row: Row): string {
  return RESOURCE_DEDUP_KEY.map((k) => keyPart(row[k])).join("\u001f");
}

/**
 * Concatenates project and proposal resource rows (projects first). `non_project_work` cells that
 * appear in both (same dedup key) are kept once - the first occurrence - because non-project time
 * belongs to the resource, not to a project, and both snapshots report it. `project_work` rows are
 * never de-duplicated: two assignments in the same period are two allocations.
 * Input rows are not modified.
 */
export function combineResources<T extends Row>(projectRows: readonly T[], proposalRows: readonly T[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const row of [...projectRows, ...proposalRows]) {
    if (row.work_type === "non_project_work") {
      const k = resourceDedupKey(row);
      if (seen.has(k)) continue;
      seen.add(k);
    }
    out.push(row);
  }
  return out;
}
