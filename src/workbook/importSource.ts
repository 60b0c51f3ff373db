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
import { TableWriter, TooWideToStream, UndeclaredField } from "./tableWriter";
import { EXCEL_MAX_ROWS } from "../refresh/validate";
import { parseCell } from "./names";
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
  return importFrom(context, from, options, true);
}

async function importFrom(context: Excel.RequestContext, from: RefreshSource, options: ImportSourceOptions, stream: boolean): Promise<ImportResult> {
  const query = options.query && Object.keys(options.query).length ? options.query : null;
  const key = options.source.kind === "dataset" ? options.source.key : options.source.endpoint;
  const plan = streamingPlan(query, options.sourceRows, key);
  if (plan.refusal) throw new PpmError("invalid_request", plan.refusal.message, { action: plan.refusal.action, datasetKey: key });
  if (stream && !query && streams(options)) return streamSource(context, from, options);
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

/**
 * Whether an import without a local query goes to Excel as its rows arrive (issue #38: memory does not
 * grow with the table), decided before the download. It does when everything a refusal needs is
 * known before the first write, or cannot refuse; otherwise the table is read whole, checked whole,
 * and refused with nothing written (the review of #38, R2/R4/R5/R6):
 * - a reporting dataset as JSON or CSV: an OData collection is read whole, as its "declared
 *   properties present" check needs every row (`PpmClient.checkColumns`); a snapshot arrives whole
 *   anyway, and its column plans should see every row;
 * - to a sheet the import adds: a chosen sheet's area must be checked empty, and free of other tables,
 *   over every row before anything is written there, and a refusal part way would leave the number
 *   formats of the rows written on the user's cells;
 * - a row count from the manifest that fits below the anchor: a larger one is refused, before
 *   anything is written, once the table is read (it may be stale: the body decides). With no count,
 *   a table longer than the sheet is refused at the row that does not fit, and the sheet it added then
 *   holds the failure's message only.
 */
function streams(options: ImportSourceOptions): boolean {
  const source = options.source;
  if (source.kind !== "dataset" || source.format === "odata") return false;
  if (options.target?.sheetName !== undefined) return false;
  const rows = options.sourceRows;
  return typeof rows !== "number" || rows <= EXCEL_MAX_ROWS - 2 - parseCell(options.target?.anchor ?? "A1").row;
}

/**
 * The import of a source without a local query, streamed (issue #38): the rows go through a
 * {@link TableWriter} as the body arrives, typed and written to Excel a block at a time, so the
 * add-in never holds the whole table. A failure of the source after the first block (the body cut
 * short, a malformed row, a row count that does not add up) clears what was written, as an Excel
 * failure does; a table that fits in the first block is written only once its whole body arrived.
 */
async function streamSource(context: Excel.RequestContext, from: RefreshSource, options: ImportSourceOptions): Promise<ImportResult> {
  const { source, connection, companyId, bindingId, sourceRows } = options;
  const { target, tableName, signal, onProgress, targetRequestBytes, secrets, now } = options;
  const rest = { target, tableName, signal, onProgress, targetRequestBytes, secrets, now };
  const id = bindingId ?? newBindingId();
  const draft = (columns: Parameters<typeof draftBinding>[0]["columns"], end?: { schemaVersion: string | null; validators: Parameters<typeof draftBinding>[0]["validators"] }) =>
    draftBinding({ id, connectionId: connection.id, environment: connection.baseUrl, companyId, source, query: null, columns, schemaVersion: end?.schemaVersion ?? null, validators: end?.validators ?? {} });
  const writer = new TableWriter(context, { ...rest, expectedRows: sourceRows, binding: draft });
  let fetched: Awaited<ReturnType<RefreshSource["fetch"]>>;
  try {
    fetched = await from.fetch(source, { validators: {}, signal: options.signal, sink: writer });
  } catch (e) {
    if (!(e instanceof UndeclaredField || e instanceof TooWideToStream)) return writer.fail(e);
    // A field the export's columns do not list becomes an extra column, which a streamed import cannot
    // add once its header is written: what was written goes, and the table is read whole instead (so
    // is a table too wide to stream, before anything is written).
    await writer.discard();
    return importFrom(context, from, options, false);
  }
  if (fetched.status !== "updated") {
    return writer.fail(new PpmError("unexpected_not_modified", "The source answered 'unchanged' to a request without validators, so there is no data to import."));
  }
  const table = fetched.table;
  // A source that cannot stream returned its table without passing it through the sink.
  if (!writer.begun) return importTable(context, table, { ...rest, binding: draft(table.columns, { schemaVersion: table.meta.schemaVersion, validators: fetched.validators }) });
  try {
    return await writer.finish({ schemaVersion: table.meta.schemaVersion, validators: fetched.validators, generatedAt: table.meta.generatedAt });
  } catch (e) {
    return writer.fail(e);
  }
}
