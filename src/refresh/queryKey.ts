/**
 * The row key of a table that holds a local query's result rather than the export's rows (issue
 * #25, point 2). The counts a refresh reports ("1 added, 2 changed") are only as true as the key
 * the rows are matched by:
 *
 * - **A summary** (`$apply` whose last row-shaping step is `groupby`) has one row per group, so its
 *   group-by columns are its key, whatever the dataset's key was. A summary with no group-by
 *   columns (`aggregate(...)` alone) is one row: there is nothing to match, so no key.
 * - **A filtered or narrowed table** (`$filter`, `$select`, `$orderby`, `$top`, an `$apply` of only
 *   `filter`/`compute`) keeps the dataset's rows, so it keeps the dataset's key; the planner uses it
 *   whenever the key columns are still in the table and falls back to matching by position (and
 *   the pane then says "rewritten", never "changed") when `$select` dropped one of them.
 *
 * Pure: no Office, no DOM.
 */
import type { Column } from "../table/model";
import type { LocalQuery } from "../query";
import { parseApply, type ApplyStep } from "../query/applyParser";
import { ColumnResolver } from "../query/columns";
import type { KeyChoice } from "./delta";

/**
 * The key to match a queried table's rows by. `choice` is the source's own key (`chooseKey`);
 * `columns` are the columns of the query's result (group-by references are resolved against them,
 * so `Budget_x0020_Contingency` finds `Budget Contingency`). An `$apply` that cannot be read is
 * left to the refresh to report; the source's key is returned unchanged.
 */
export function keyForQuery(choice: KeyChoice | null, query: LocalQuery | null | undefined, columns: readonly Column[]): KeyChoice | null {
  if (!query?.apply) return choice;
  let steps: ApplyStep[];
  try {
    steps = parseApply(query.apply);
  } catch {
    return choice;
  }
  // The last step that replaces the rows decides what one row is; filter and compute keep the rows.
  const shaping = [...steps].reverse().find((s) => s.k === "groupby" || s.k === "aggregate");
  if (!shaping) return choice;
  if (shaping.k === "aggregate" || shaping.columns.length === 0) {
    return { candidates: [], origin: "none", reason: "a summary without group-by columns is a single row" };
  }
  const resolver = new ColumnResolver(columns);
  const names: string[] = [];
  for (const ref of shaping.columns) {
    try {
      names.push(columns[resolver.resolve(ref)].name);
    } catch {
      // A group-by column the result no longer has ($select after the summary): no key.
      return { candidates: [], origin: "none", reason: `the summary's group-by column ${ref.name} is not in the table` };
    }
  }
  return { candidates: [names], origin: "query", reason: "the summary's group-by columns (one row per group)" };
}
