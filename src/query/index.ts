/**
 * Local query engine (OData-style `$apply`, `$filter`, `$select`, `$orderby`, `$top`, `$skip`, `$count`),
 * evaluated in the add-in on complete tables. The service rejects every `$` option, so these are
 * never sent. The language is described in ./README.md.
 */
export { QueryError, type QueryErrorCode } from "./errors";
export {
  parseQuery,
  formatQuery,
  describeQuery,
  readStoredQuery,
  LocalQuerySchema,
  SUPPORTED_OPTIONS,
  type LocalQuery,
} from "./options";
export {
  applyQuery,
  compileQuery,
  createQuerySink,
  validateQuery,
  type QueryResult,
  type CompiledQuery,
  type QuerySink,
  type ApplyOptions,
} from "./apply";
export { compileApply, type CompiledApply } from "./aggregate";
export { AGGREGATE_METHODS, type AggregateMethod } from "./applyParser";
export { streamingPlan, type StreamingPlan } from "./limits";
export { splitODataUrl, type SplitUrl } from "./url";
export { formatColumnRef } from "./columns";
export { FUNCTION_NAMES } from "./compile";
