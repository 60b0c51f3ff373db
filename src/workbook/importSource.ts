/**
 * Fetch, query and import in one call: what the task pane's "Import" button does. Builds the binding
 * from the source and the table actually written (columns after the local query), so import and
 * refresh can never disagree about it.
 */
import { applyQuery, createQuerySink, streamingPlan, type LocalQuery } from "../query";
import { PpmError } from "../service/errors";
import { draftBinding, type BindingSource } from "../refresh/binding";
import type { QueryApplier } from "../refresh/plan";
import type { RefreshSource } from "../refresh/source";
import { importTable, type ImportOptions, type ImportResult } from "./writer";
import { newBindingId } from "./bindingStore";

export interface ImportSourceOptions extends Omit<ImportOptions, "binding"> {
  source: BindingSource;
  /** The user's connection: only its id and environment are stored. */
  connection: { id: string; baseUrl: string };
  companyId: string | number | null;
  query?: LocalQuery | null;
  applyQuery?: QueryApplier;
  bindingId?: string;
  /**
   * Rows of the export (the manifest's `row_count`), when known: an export larger than a sheet is
   * refused before downloading unless the query summarises or filters it.
   */
  sourceRows?: number | null;
}

/**
 * Fetches a source whole (no validators: a first import), applies the local query and imports the
 * result as a new bound Excel table.
 * @throws the source's error (e.g. `PpmError` with `not_generated`) or a `WriteError`; nothing is
 * written unless the fetch and the query succeeded.
 */
export async function importSource(context: Excel.RequestContext, from: RefreshSource, options: ImportSourceOptions): Promise<ImportResult> {
  const query = options.query && Object.keys(options.query).length ? options.query : null;
  const key = options.source.kind === "dataset" ? options.source.key : options.source.endpoint;
  const plan = streamingPlan(query, options.sourceRows, key);
  if (plan.refusal) throw new PpmError("invalid_request", plan.refusal.message, { action: plan.refusal.action, datasetKey: key });
  // A summary (or a filter over more rows than a sheet) is computed as the rows arrive: only the
  // groups or the kept rows are ever in memory.
  const sink = query && plan.stream ? createQuerySink(query) : undefined;
  const fetched = await from.fetch(options.source, { validators: {}, signal: options.signal, sink });
  // The service client already refuses a 304 to a request without validators; this guards other sources.
  if (fetched.status !== "updated") throw new PpmError("unexpected_not_modified", "The source answered 'unchanged' to a request without validators, so there is no data to import.");
  // A source that ignored the sink returned the raw table: the query is applied to it as usual.
  const table = sink?.finished ? fetched.table : query ? (options.applyQuery ?? ((t, q) => applyQuery(t, q)))(fetched.table, query).table : fetched.table;
  const { source, connection, companyId, bindingId, ...rest } = options;
  return importTable(context, table, {
    ...rest,
    binding: draftBinding({
      id: bindingId ?? newBindingId(),
      connectionId: connection.id,
      environment: connection.baseUrl,
      companyId,
      source,
      query,
      columns: table.columns,
      schemaVersion: table.meta.schemaVersion,
      validators: fetched.validators,
    }),
  });
}
