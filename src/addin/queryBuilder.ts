/**
 * The import panel's local query: the small builder (columns to keep, filters, summary, sort, top)
 * and the paste field, both turned into one {@link LocalQuery}, plus the "sent to service" /
 * "applied locally" preview. The query itself is parsed and evaluated by `src/query`; this module
 * only writes OData text from form fields, so nothing here re-implements the engine.
 */
import type { LocalQuery, SplitUrl } from "../query";
import { formatColumnRef } from "../query/columns";
import { AGGREGATE_METHODS, type AggregateMethod } from "../query/applyParser";
import type { Column, ColumnType } from "../table/model";
import { isIdentifierColumn } from "../workbook/cells";

/** Operators offered by the builder (value = OData operator or function name). */
export const FILTER_OPS = ["eq", "ne", "gt", "ge", "lt", "le", "contains", "startswith", "endswith"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
export const FILTER_OP_LABELS: Record<FilterOp, string> = {
  eq: "equals",
  ne: "does not equal",
  gt: "greater than",
  ge: "at least",
  lt: "less than",
  le: "at most",
  contains: "contains",
  startswith: "starts with",
  endswith: "ends with",
};
const TEXT_ONLY_OPS: ReadonlySet<string> = new Set(["contains", "startswith", "endswith"]);

/** A column as the builder knows it (name + model type). */
export interface BuilderColumn {
  name: string;
  type: ColumnType;
}

export interface FilterRow {
  column: string;
  op: FilterOp;
  /** As typed; quoted automatically for text, date-times and dates are written as OData literals. */
  value: string;
}

/** An aggregation method of the Summarize step: the extension's methods, plus `$count` ("count of rows"). */
export type SummaryMethod = AggregateMethod | "count";
export const SUMMARY_METHODS: readonly SummaryMethod[] = [...AGGREGATE_METHODS, "count"];
export const SUMMARY_METHOD_LABELS: Record<SummaryMethod, string> = {
  sum: "sum",
  min: "smallest (min)",
  max: "largest (max)",
  average: "average",
  countdistinct: "count of distinct values",
  count: "count of rows",
};

/** One aggregate of the Summarize step: `column with method as alias`, or `$count as alias`. */
export interface SummaryAggregate {
  method: SummaryMethod;
  /** Ignored for `count` (it counts rows, not values). */
  column: string;
  /** Name of the result column. */
  alias: string;
}

/** The Summarize step: one row per combination of the group-by columns, with the aggregates over its rows. */
export interface SummaryState {
  /** In the order chosen: the result's first columns. */
  groupBy: string[];
  aggregates: SummaryAggregate[];
}

/** Form state of the builder. */
export interface BuilderState {
  /** Columns to keep; `null` or every column = keep all (no `$select`). Not used with a summary. */
  keep: string[] | null;
  filters: FilterRow[];
  /** The Summarize step; absent, null or with nothing chosen = no summary. */
  summary?: SummaryState | null;
  sortColumn: string;
  sortDir: "asc" | "desc";
  /** Text of the "top" box ("" = all rows). */
  top: string;
}

export const EMPTY_BUILDER: BuilderState = { keep: null, filters: [], summary: null, sortColumn: "", sortDir: "asc", top: "" };

/** A builder field that cannot be turned into a query; `field` says which input to mark. */
export class BuilderError extends Error {
  constructor(
    readonly field: "filter" | "top" | "keep" | "sort" | "summary",
    message: string,
    readonly index?: number,
  ) {
    super(message);
    this.name = "BuilderError";
  }
}

/** Maps a manifest column type (OData EDM name) to the model's type; unknown names are text, as the contract says. */
export function columnTypeOfEdm(type: string): ColumnType {
  switch (type) {
    case "Edm.Int16":
    case "Edm.Int32":
    case "Edm.Int64":
    case "Edm.Byte":
    case "Edm.SByte":
      return "integer";
    case "Edm.Decimal":
    case "Edm.Double":
    case "Edm.Single":
      return "decimal";
    case "Edm.Boolean":
      return "boolean";
    case "Edm.Date":
      return "date";
    case "Edm.DateTimeOffset":
      return "datetime";
    default:
      return "text";
  }
}

/** A column reference the engine reads back exactly (the engine's own rule: bare identifier, else double-quoted). */
export function columnRef(name: string): string {
  return formatColumnRef(name);
}

/**
 * The OData literal for a typed value.
 * @throws BuilderError when the text is not a value of that type.
 */
export function literal(value: string, type: ColumnType, index = 0): string {
  const v = value.trim();
  if (v.toLowerCase() === "null") return "null";
  switch (type) {
    case "integer":
      if (!/^[+-]?\d+$/.test(v)) throw new BuilderError("filter", `Filter ${index + 1}: "${value}" is not a whole number.`, index);
      return v.replace(/^\+/, "");
    case "decimal":
      if (!/^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(v)) throw new BuilderError("filter", `Filter ${index + 1}: "${value}" is not a number (use a dot for decimals).`, index);
      return v.replace(/^\+/, "");
    case "boolean":
      if (!/^(true|false)$/i.test(v)) throw new BuilderError("filter", `Filter ${index + 1}: enter true or false.`, index);
      return v.toLowerCase();
    case "date":
      if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) throw new BuilderError("filter", `Filter ${index + 1}: enter a date as YYYY-MM-DD.`, index);
      return v;
    case "datetime":
      if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return `${v}T00:00:00Z`;
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) {
        throw new BuilderError("filter", `Filter ${index + 1}: enter a time as YYYY-MM-DDThh:mm:ssZ.`, index);
      }
      return v;
    default:
      return `'${value.replace(/'/g, "''")}'`;
  }
}

/**
 * Turns the builder's fields into a LocalQuery (empty object = the complete table).
 *
 * With a summary, the fields keep the meaning OData gives them around `$apply` (Data Aggregation
 * 4.0 §3: `$apply` is evaluated first, every other option applies to its result):
 * - the row filters describe the source rows, so they become the first transformation,
 *   `$apply=filter(...)/groupby(...)`, not a `$filter` (which would filter the summary);
 * - the sort and "first N rows" choices apply to the summary (`$orderby`, `$top` name its columns);
 * - "columns to keep" is not used: the summary holds exactly its group-by columns and aggregates,
 *   so a `$select` would repeat the summary's own choice.
 * @throws BuilderError for a field that cannot be expressed.
 */
export function buildQuery(state: BuilderState, columns: readonly BuilderColumn[]): LocalQuery {
  const q: LocalQuery = {};
  const byName = new Map(columns.map((c) => [c.name, c]));
  const terms: string[] = [];
  state.filters.forEach((f, i) => {
    const col = byName.get(f.column);
    if (!col) throw new BuilderError("filter", `Filter ${i + 1}: choose a column.`, i);
    if (TEXT_ONLY_OPS.has(f.op)) {
      if (col.type !== "text") throw new BuilderError("filter", `Filter ${i + 1}: "${FILTER_OP_LABELS[f.op]}" works on text columns only.`, i);
      terms.push(`${f.op}(${columnRef(col.name)},${literal(f.value, "text", i)})`);
    } else {
      if (!(FILTER_OPS as readonly string[]).includes(f.op)) throw new BuilderError("filter", `Filter ${i + 1}: choose a comparison.`, i);
      // An empty box means "is empty" for eq/ne, which is what a user comparing to blank expects.
      const lit = f.value.trim() === "" && (f.op === "eq" || f.op === "ne") ? "null" : literal(f.value, col.type, i);
      terms.push(`${columnRef(col.name)} ${f.op} ${lit}`);
    }
  });
  const summary = state.summary && isSummaryActive(state.summary) ? state.summary : null;
  let resultNames: ReadonlySet<string> = new Set(byName.keys());
  if (summary) {
    const apply = summaryApply(summary, columns);
    q.apply = terms.length ? `filter(${terms.join(" and ")})/${apply}` : apply;
    resultNames = new Set(summaryColumnNames(summary));
  } else {
    if (terms.length) q.filter = terms.join(" and ");
    if (state.keep !== null) {
      const keep = columns.filter((c) => state.keep!.includes(c.name)).map((c) => c.name);
      if (keep.length === 0) throw new BuilderError("keep", "Keep at least one column.");
      if (keep.length < columns.length) q.select = keep;
    }
  }
  if (state.sortColumn) {
    if (!resultNames.has(state.sortColumn)) throw new BuilderError("sort", summary ? "Choose a column of the summary to sort by." : "Choose a column to sort by.");
    q.orderby = `${columnRef(state.sortColumn)}${state.sortDir === "desc" ? " desc" : ""}`;
  }
  const top = state.top.trim();
  if (top) {
    if (!/^\d+$/.test(top)) throw new BuilderError("top", "Top must be a whole number of rows (0 or more).");
    const n = Number(top);
    if (!Number.isSafeInteger(n)) throw new BuilderError("top", "Top is too large.");
    q.top = n;
  }
  return q;
}

// ---- the Summarize step ---------------------------------------------------------------------------

/** True when the Summarize step has something chosen (a group-by column or an aggregate). */
export function isSummaryActive(s: SummaryState | null | undefined): s is SummaryState {
  return !!s && (s.groupBy.length > 0 || s.aggregates.length > 0);
}

/**
 * Whether a method applies to a column type, as the engine accepts it (`src/query/README.md`):
 * `sum` and `average` need numbers; `min` and `max` need an ordered type (numbers, text, dates,
 * date-times, booleans: all of the model's types); `countdistinct` takes any type.
 */
export function methodAccepts(method: SummaryMethod, type: ColumnType): boolean {
  switch (method) {
    case "sum":
    case "average":
      return type === "integer" || type === "decimal";
    case "count":
      return false; // counts rows; it takes no column
    default:
      return true;
  }
}

/** The columns a method can be applied to (empty for `count`). */
export function columnsFor(method: SummaryMethod, columns: readonly BuilderColumn[]): BuilderColumn[] {
  return columns.filter((c) => methodAccepts(method, c.type));
}

/**
 * The engine's alias rule (an identifier: a letter or `_`, then letters, digits and `_`), with
 * OData's 128-character limit on simple identifiers (CSDL §17.2).
 */
const ALIAS = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*$/u;
const ALIAS_MAX = 128;
const ALIAS_PREFIX: Record<SummaryMethod, string> = { sum: "total", average: "average", min: "min", max: "max", countdistinct: "distinct", count: "rows" };

/**
 * A name for a new aggregate's result column (`total_budget`, `average_actual_cost`, `rows`), made
 * an identifier and unique among `taken` (compared ignoring case, as Excel compares table headers).
 */
export function suggestAlias(method: SummaryMethod, column: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((n) => n.toLowerCase()));
  const stem = method === "count" ? "rows" : `${ALIAS_PREFIX[method]}_${column.replace(/[^\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]+/gu, "_").replace(/^_+|_+$/g, "") || "value"}`;
  const base = stem.slice(0, ALIAS_MAX - 4);
  let name = base;
  for (let n = 2; used.has(name.toLowerCase()); n++) name = `${base}_${n}`;
  return name;
}

/** The result's column names, in order: the group-by columns, then the aliases. */
export function summaryColumnNames(s: SummaryState): string[] {
  return [...s.groupBy, ...s.aggregates.map((a) => a.alias.trim())];
}

/**
 * The `$apply` text of a summary: `groupby((c1,c2),aggregate(col with sum as alias,$count as n))`,
 * `groupby((c1))` without aggregates, `aggregate(...)` without group-by columns.
 * @throws BuilderError (field `summary`, `index` = the aggregate) for a column or name that cannot be used.
 */
export function summaryApply(s: SummaryState, columns: readonly BuilderColumn[]): string {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const datasetNames = new Map(columns.map((c) => [c.name.toLowerCase(), c.name]));
  for (const g of s.groupBy) if (!byName.has(g)) throw new BuilderError("summary", `Group by: "${g}" is not a column of this dataset.`);
  if (new Set(s.groupBy).size !== s.groupBy.length) throw new BuilderError("summary", "Group by: a column is chosen twice.");
  const seen = new Map<string, number>();
  const items = s.aggregates.map((a, i) => {
    const what = `Aggregate ${i + 1}`;
    const alias = a.alias.trim();
    if (!alias) throw new BuilderError("summary", `${what}: enter a name for its result column.`, i);
    if (!ALIAS.test(alias) || alias.length > ALIAS_MAX) {
      throw new BuilderError("summary", `${what}: "${alias}" cannot be a column name here: use letters, digits and _, starting with a letter or _ (at most ${ALIAS_MAX}).`, i);
    }
    // The extension forbids an alias equal to a column of the input; Excel's headers ignore case.
    const clash = datasetNames.get(alias.toLowerCase());
    if (clash !== undefined) {
      const role = s.groupBy.includes(clash) ? "a group-by column" : "a column of the dataset";
      throw new BuilderError("summary", `${what}: "${alias}" is already ${role} ("${clash}"); choose another name.`, i);
    }
    const twice = seen.get(alias.toLowerCase());
    if (twice !== undefined) throw new BuilderError("summary", `${what}: the name "${alias}" is already used by aggregate ${twice + 1}; choose another name.`, i);
    seen.set(alias.toLowerCase(), i);
    if (a.method === "count") return `$count as ${alias}`;
    if (!(AGGREGATE_METHODS as readonly string[]).includes(a.method)) throw new BuilderError("summary", `${what}: choose what to compute.`, i);
    const col = byName.get(a.column);
    if (!col) throw new BuilderError("summary", `${what}: choose a column.`, i);
    if (!methodAccepts(a.method, col.type)) throw new BuilderError("summary", `${what}: ${SUMMARY_METHOD_LABELS[a.method]} needs a number column, and "${col.name}" is ${col.type}.`, i);
    return `${columnRef(col.name)} with ${a.method} as ${alias}`;
  });
  const aggregate = items.length ? `aggregate(${items.join(",")})` : "";
  if (s.groupBy.length === 0) {
    if (!aggregate) throw new BuilderError("summary", "Summarize: choose a group-by column or an aggregate.");
    return aggregate;
  }
  const keys = `(${s.groupBy.map(columnRef).join(",")})`;
  return aggregate ? `groupby(${keys},${aggregate})` : `groupby(${keys})`;
}

/**
 * A column type in a finance user's words (issue #25), not OData's (`Int32`, `Decimal`): how the
 * value will sit in Excel. Every integer width (Int16, Int32, Int64) is a whole number.
 */
export const TYPE_WORDS: Record<ColumnType, string> = {
  text: "text",
  integer: "whole number",
  decimal: "decimal",
  boolean: "true/false",
  date: "date",
  datetime: "date and time",
};

/**
 * What a dataset column becomes in the sheet, in words (issue #37: `external_ref` was called a
 * "whole number" and written as text, so SUM over it gave 0). The writer's rule
 * (`planColumns`, src/workbook/cells.ts): identifier columns (`*_id`, `*_token`) are always text;
 * an integer column is text when a value has 16 or more digits (Excel keeps 15), which the pane can
 * only announce for columns that can hold such values (Int64), not know before the download.
 */
export function sheetTypeWords(c: Pick<Column, "name" | "type" | "sourceType">): string {
  if (c.type !== "text" && isIdentifierColumn(c.name)) return "identifier, written as text";
  if (c.type === "integer" && /Int64$/i.test(c.sourceType ?? "")) return "whole number; the column is text if a value has over 15 digits";
  return TYPE_WORDS[c.type];
}

/** A result column's type in words (see {@link TYPE_WORDS}). */
export function typeLabel(c: Pick<Column, "type">): string {
  return TYPE_WORDS[c.type];
}

/** What a result will hold: `fiscal_year (whole number), project_id (text), total_budget (decimal), rows (whole number)`. */
export function resultText(columns: readonly Pick<Column, "name" | "type" | "sourceType">[]): string {
  return columns.map((c) => `${c.name} (${sheetTypeWords(c)})`).join(", ");
}

/** True when the query changes nothing (the complete table is imported). */
export function isEmptyQuery(q: LocalQuery | null | undefined): boolean {
  if (!q) return true;
  return q.apply === undefined && q.filter === undefined && q.select === undefined && q.orderby === undefined && q.top === undefined && q.skip === undefined && !q.count;
}

/** Human text of a local query in `$option=value` form, for the "applied locally" preview. */
export function queryText(q: LocalQuery | null | undefined): string {
  if (isEmptyQuery(q)) return "nothing (the complete table is imported)";
  const parts: string[] = [];
  if (q!.apply !== undefined) parts.push(`$apply=${q!.apply}`);
  if (q!.filter !== undefined) parts.push(`$filter=${q!.filter}`);
  if (q!.select !== undefined) parts.push(`$select=${q!.select.join(",")}`);
  if (q!.orderby !== undefined) parts.push(`$orderby=${q!.orderby}`);
  if (q!.skip !== undefined) parts.push(`$skip=${q!.skip}`);
  if (q!.top !== undefined) parts.push(`$top=${q!.top}`);
  if (q!.count) parts.push("$count=true");
  return parts.join("&");
}

/** The dataset paths of the contract (passed in, so this module does not pull the contract's schemas into the first bundle). */
export interface DatasetPaths {
  odataDataset(key: string): string;
  exportJson(key: string): string;
  exportCsv(key: string): string;
}

/** The request the client sends for a dataset, as shown in the preview: a path and never a `$` option or token. */
export function sentRequest(paths: DatasetPaths, baseUrl: string, key: string, format: "json" | "csv" | "odata"): string {
  const path = format === "csv" ? paths.exportCsv(key) : format === "odata" ? paths.odataDataset(key) : paths.exportJson(key);
  return `GET ${baseUrl.replace(/\/+$/, "")}${path}`;
}

/** What a pasted text turned into. */
export interface PastedQuery {
  query: LocalQuery;
  /** Dataset named by a pasted URL, when it names one. */
  datasetKey?: string;
  /** Export form named by a pasted URL. */
  format?: "json" | "csv" | "odata";
  /** Things taken out of a pasted URL (e.g. a `company_api_token` parameter), for a notice. */
  removed: string[];
}

/** The engine's entry points this module needs (injected so the UI wires the real ones). */
export interface QueryEngine {
  parseQuery(input: string): LocalQuery;
  splitODataUrl(url: string): Pick<SplitUrl, "query" | "removedCredentials" | "dataset">;
}

/** True when the pasted text is an address rather than bare query options. */
export function looksLikeUrl(text: string): boolean {
  const t = text.trim();
  return /^https?:\/\//i.test(t) || t.startsWith("/");
}

/**
 * Reads the paste field: an OData/JSON/CSV address (its `$` options become the local query, its
 * credentials are dropped) or bare `$filter=...&$top=...` text. Blank text = no query.
 * @throws the engine's QueryError (with position) for text it cannot read.
 */
export function readPasted(text: string, engine: QueryEngine): PastedQuery {
  const t = text.trim();
  if (!t) return { query: {}, removed: [] };
  if (looksLikeUrl(t)) {
    const s = engine.splitODataUrl(t);
    const out: PastedQuery = { query: s.query, removed: s.removedCredentials ? ["a credential in the address (it was not kept)"] : [] };
    if (s.dataset) {
      out.datasetKey = s.dataset.key;
      out.format = s.dataset.format;
    }
    return out;
  }
  const bare = t.startsWith("?") ? t.slice(1) : t;
  return { query: engine.parseQuery(bare), removed: [] };
}

/**
 * The pasted text with its credentials taken out (user:password in the address, token parameters
 * by the engine's own rule), everything else as typed: the paste field is rewritten with it, so a
 * token that "was not kept" does not stay on screen either.
 */
export function withoutCredentials(text: string, engine: QueryEngine): string {
  const t = text.trim();
  if (!looksLikeUrl(t)) return text;
  const hash = t.indexOf("#");
  const body = hash < 0 ? t : t.slice(0, hash);
  const fragment = hash < 0 ? "" : t.slice(hash);
  const q = body.indexOf("?");
  const head = (q < 0 ? body : body.slice(0, q)).replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, "$1");
  if (q < 0) return head + fragment;
  const kept = body
    .slice(q + 1)
    .split("&")
    .filter((part) => {
      if (part === "") return false;
      try {
        return !engine.splitODataUrl(`https://x.invalid/?${part}`).removedCredentials;
      } catch {
        return true; // not a credential; the full parse reports what is wrong with it
      }
    });
  return head + (kept.length ? `?${kept.join("&")}` : "") + fragment;
}

/** The host of a pasted absolute address when it differs from the connection's, else null. */
export function foreignHost(text: string, baseUrl: string): { pasted: string; used: string } | null {
  const t = text.trim();
  if (!/^https?:\/\//i.test(t)) return null;
  try {
    const pasted = new URL(t).host;
    const used = new URL(baseUrl).host;
    return pasted.toLowerCase() === used.toLowerCase() ? null : { pasted, used };
  } catch {
    return null;
  }
}
