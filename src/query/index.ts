/**
 * Local query engine (OData-style `$filter`, `$select`, `$orderby`, `$top`, `$skip`, `$count`),
 * evaluated in the add-in on complete tables. The service rejects every `$` option, so these are
 * never sent. PLACEHOLDER until the engine lands: the signatures below are the contract.
 */
import type { Table } from "../table/model";

/** A stored, re-appliable local query (plain JSON: goes into workbook bindings). */
export interface LocalQuery {
  filter?: string;
  select?: string[];
  orderby?: string;
  top?: number;
  skip?: number;
  count?: boolean;
}

export interface QueryResult {
  table: Table;
  /** Row count after `$filter`, before `$skip`/`$top` (present when `count` was asked for). */
  count?: number;
}

/** Parses `$filter=...&$top=...` text (or params) into a LocalQuery, validating every option. */
export function parseQuery(_input: string | URLSearchParams): LocalQuery {
  throw new Error("local query engine not implemented yet");
}

/** Applies a query to a table, returning a new table (the input is not mutated). */
export function applyQuery(_table: Table, _query: LocalQuery): QueryResult {
  throw new Error("local query engine not implemented yet");
}

/** Splits a pasted service URL into the clean request URL (no `$` options) and the local query. */
export function splitODataUrl(_url: string): { url: string; query: LocalQuery } {
  throw new Error("local query engine not implemented yet");
}
