/**
 * Local query engine (OData-style `$filter`, `$select`, `$orderby`, `$top`, `$skip`, `$count`),
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
export { applyQuery, compileQuery, validateQuery, type QueryResult, type CompiledQuery, type ApplyOptions } from "./apply";
export { splitODataUrl, type SplitUrl } from "./url";
export { formatColumnRef } from "./columns";
export { FUNCTION_NAMES } from "./compile";
