/**
 * Larger than a sheet: a worksheet holds 1,048,576 rows (one of them the table's header), so an
 * export with more rows can be imported only with a local query that brings the result within that
 * limit, and it is then reduced while it streams instead of being held whole.
 */
import type { LocalQuery } from "./options";

/** Rows of an Excel worksheet (header row included). */
export const SHEET_ROWS = 1_048_576;

export interface StreamingPlan {
  /** The export has more rows than a sheet can hold below a header. */
  exceedsSheet: boolean;
  /** Evaluate the query row by row as the export streams in (`createQuerySink`), keeping only its result. */
  stream: boolean;
  /** Set when the import must not start: what to tell the user (the pane offers Summarize). */
  refusal?: { message: string; action: string };
}

/**
 * Decides, before downloading, how an export of `sourceRows` rows (the manifest's `row_count`;
 * `null` when unknown) is imported with `query`:
 * - within a sheet: as today, and streamed through the query when it has `$apply` (a summary never
 *   needs the raw table);
 * - larger than a sheet: only with `$apply` or `$filter` (or a `$top` within the limit), streamed;
 *   whether the result fits is checked again on the result, as for every import.
 */
export function streamingPlan(query: LocalQuery | null | undefined, sourceRows: number | null | undefined, datasetKey = "the dataset"): StreamingPlan {
  const q = query ?? {};
  const exceedsSheet = typeof sourceRows === "number" && sourceRows + 1 > SHEET_ROWS;
  const reduces = q.apply !== undefined || q.filter !== undefined || (q.top !== undefined && q.top + 1 <= SHEET_ROWS);
  const plan: StreamingPlan = { exceedsSheet, stream: q.apply !== undefined || (exceedsSheet && reduces) };
  if (exceedsSheet && !reduces) {
    plan.refusal = {
      message: `${datasetKey} has ${sourceRows.toLocaleString("en-US")} rows; a worksheet holds ${(SHEET_ROWS - 1).toLocaleString("en-US")} plus the header row.`,
      action: "Summarize it ($apply, e.g. groupby((project_id),aggregate(budget with sum as total))) or filter it ($filter) so the result fits in a sheet; it is then computed as the rows arrive.",
    };
  }
  return plan;
}
