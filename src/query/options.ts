/**
 * The option layer: text or URL parameters ⇄ {@link LocalQuery}, and the stored-query schema.
 * Syntax of `$filter`/`$orderby` is checked here; column names are checked when a table is known.
 */
import { z } from "../contract/zod";
import { QueryError } from "./errors";
import { parseFilter, parseOrderBy } from "./parser";
import { parseApply } from "./applyParser";

/** A stored, re-appliable local query (plain JSON: goes into workbook bindings). */
export interface LocalQuery {
  /** `$apply` text (aggregation, see ./README.md); evaluated before every other option. */
  apply?: string;
  /** `$filter` expression text. */
  filter?: string;
  /**
   * `$select` column references, in output order: a column name as the service spells it
   * (`Budget Contingency`), a `"quoted"` name, an identifier form (`Budget_x0020_Contingency`,
   * `Budget_Contingency`), or `*` for all columns.
   */
  select?: string[];
  /** `$orderby` text: `expr [asc|desc], ...`. */
  orderby?: string;
  top?: number;
  skip?: number;
  /** Ask for the row count after `$filter` (before `$skip`/`$top`). */
  count?: boolean;
}

/** Schema for a LocalQuery read back from storage (workbook settings): strict, so typos are caught. */
export const LocalQuerySchema = z.strictObject({
  apply: z.string().optional(),
  filter: z.string().optional(),
  select: z.array(z.string()).optional(),
  orderby: z.string().optional(),
  top: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  skip: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  count: z.boolean().optional(),
});

/** The options evaluated locally, in the order formatQuery writes them. */
export const SUPPORTED_OPTIONS = ["$apply", "$filter", "$select", "$orderby", "$top", "$skip", "$count"] as const;

/** OData system query options that exist but are not evaluated locally, with a hint each. */
const UNSUPPORTED: Record<string, string> = {
  $expand: "related entities are not part of the exported table",
  $search: "free-text search is not evaluated locally; use contains() in $filter",
  $format: "the format is chosen by the request path (/api/bi/v1/{key}, .csv or the OData path)",
  $compute: "computed columns are not evaluated locally",
  $levels: "recursive expansion is not supported",
  $skiptoken: "server-side paging does not apply to complete exports",
  $deltatoken: "delta links are not supported",
  $id: "entity references are not supported",
  $schemaversion: "the schema version comes from the service's response",
  $index: "ordinal positions are not supported",
  $inlinecount: "this is OData v2/v3; use $count=true",
  $callback: "JSONP is not supported",
};

/**
 * The `$` name of an OData system query option written with or without `$` (OData 4.01 makes the `$`
 * optional: `filter=`, `OrderBy=`), lower-cased; undefined for any other parameter name.
 */
export function systemOptionName(rawName: string): string | undefined {
  const name = rawName.toLowerCase();
  const withDollar = name.startsWith("$") ? name : "$" + name;
  return (SUPPORTED_OPTIONS as readonly string[]).includes(withDollar) || withDollar in UNSUPPORTED ? withDollar : undefined;
}

/**
 * The ABNF has no whitespace around `=` (`$filter =true` and `$filter= true` are not OData);
 * refuse it with a clear message rather than guess.
 */
function checkNoSpaceAroundEquals(rawName: string, value: string): void {
  if (/\s$/.test(rawName) || /^\s/.test(value)) {
    throw new QueryError({
      code: "syntax",
      option: truncate(rawName.trim()),
      detail: "no space is allowed before or after '=' in a query option",
    });
  }
}

/** Parses the text of one option into its LocalQuery field. Errors carry the option name. */
function setOption(q: LocalQuery, name: string, value: string): void {
  try {
    switch (name) {
      case "$apply": {
        if (value.trim() === "") throw emptyValue(name);
        parseApply(value);
        q.apply = value;
        return;
      }
      case "$filter": {
        const text = value.trim();
        if (text === "") throw emptyValue(name);
        parseFilter(value);
        q.filter = value;
        return;
      }
      case "$orderby":
        if (value.trim() === "") throw emptyValue(name);
        parseOrderBy(value);
        q.orderby = value;
        return;
      case "$select":
        q.select = splitSelect(value);
        return;
      case "$top":
      case "$skip": {
        const t = value.trim();
        if (!/^\d+$/.test(t)) {
          throw new QueryError({
            code: "invalid_value",
            option: name,
            detail: `expected a whole number of rows (0 or more), not '${truncate(value)}'`,
          });
        }
        // The ABNF's `1*DIGIT` has no bound; a count beyond 2^53 - 1 means "all rows" as much as that
        // number does (no table has so many), so it is kept as that number (OData conformance review).
        q[name === "$top" ? "top" : "skip"] = Math.min(Number(t), Number.MAX_SAFE_INTEGER);
        return;
      }
      case "$count": {
        const t = value.trim().toLowerCase();
        if (t !== "true" && t !== "false") {
          throw new QueryError({ code: "invalid_value", option: name, detail: `expected true or false, not '${truncate(value)}'` });
        }
        q.count = t === "true";
        return;
      }
    }
  } catch (e) {
    throw e instanceof QueryError ? e.withOption(name) : e;
  }
}

function emptyValue(name: string): QueryError {
  return new QueryError({ code: "invalid_value", option: name, detail: "the option has no value" });
}

function truncate(s: string): string {
  return s.length > 40 ? s.slice(0, 37) + "..." : s;
}

/**
 * Splits `$select` text on commas outside `"quotes"`. Items are kept as written (trimmed), so a
 * quoted item stays quoted and keeps its exact-match meaning; `*` must stand alone.
 */
export function splitSelect(text: string): string[] {
  const items: string[] = [];
  let start = 0;
  let inQuote = false;
  const push = (end: number) => {
    const raw = text.slice(start, end);
    const item = raw.trim();
    const pos = start + (raw.length - raw.trimStart().length) + 1;
    if (item === "") {
      throw new QueryError({ code: "syntax", option: "$select", detail: "expected a column name", position: pos, expected: "a column name", found: end >= text.length ? "end of input" : "','" });
    }
    if (item.startsWith('"') && !isWellQuoted(item)) {
      throw new QueryError({
        code: "syntax",
        option: "$select",
        detail: "malformed quoted column name (write a quote inside as \"\")",
        position: pos,
      });
    }
    items.push(item);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') inQuote = !inQuote;
    else if (c === "," && !inQuote) {
      push(i);
      start = i + 1;
    }
  }
  if (inQuote) {
    throw new QueryError({
      code: "invalid_literal",
      option: "$select",
      detail: 'unterminated quoted column name (close it with ")',
      position: text.lastIndexOf('"', text.length) >= 0 ? findOpenQuote(text) + 1 : 1,
    });
  }
  push(text.length);
  return items;
}

function isWellQuoted(item: string): boolean {
  return /^"(?:[^"]|"")+"$/.test(item);
}

function findOpenQuote(text: string): number {
  let open = -1;
  for (let i = 0; i < text.length; i++) if (text[i] === '"') open = open < 0 ? i : -1;
  return open;
}

/**
 * Decodes one `name=value` component: `%XX` escapes (valid UTF-8) are decoded, a lone `%` is kept;
 * `+` means a space (form encoding) unless the text already holds a literal space, which shows it
 * was typed rather than encoded (so `'C++'` survives in a typed query).
 */
export function decodeComponent(raw: string): string {
  const plusIsSpace = !raw.includes(" ");
  const s = plusIsSpace ? raw.replace(/\+/g, " ") : raw;
  if (!s.includes("%")) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      // Not valid UTF-8: decode byte by byte only what is ASCII, keep the rest as written.
      return run.replace(/%([0-7][0-9A-Fa-f])/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
  });
}

/**
 * Splits a query string on `&`. Inside a query option's value (`$filter=` or `filter=`), `&` between
 * single quotes belongs to a string literal (typed queries are not encoded); other parameters split
 * at every `&`.
 */
export function splitParams(qs: string): string[] {
  const parts: string[] = [];
  let i = 0;
  // The next '=' and '&' at or after i, searched again only once passed: linear in the text.
  let eq = -2;
  let amp = -2;
  while (i <= qs.length) {
    if (eq !== -1 && eq < i) eq = qs.indexOf("=", i);
    if (amp !== -1 && amp < i) amp = qs.indexOf("&", i);
    const nameEnd = eq >= 0 && (amp < 0 || eq < amp) ? eq : -1;
    const rawName = nameEnd >= 0 ? qs.slice(i, nameEnd) : "";
    const isOption = nameEnd >= 0 && (/^(\$|%24)/i.test(rawName) || systemOptionName(decodeComponent(rawName).trim()) !== undefined);
    let end: number;
    if (isOption) {
      let inQuote = false;
      end = qs.length;
      for (let j = nameEnd + 1; j < qs.length; j++) {
        const c = qs[j];
        if (c === "'") inQuote = !inQuote;
        else if (c === "&" && !inQuote) {
          end = j;
          break;
        }
      }
    } else {
      end = amp < 0 ? qs.length : amp;
    }
    parts.push(qs.slice(i, end));
    i = end + 1;
  }
  return parts.filter((p) => p !== "");
}

/** Builds a LocalQuery from decoded `$name`/value pairs (names as written, with `$`). */
export function queryFromPairs(pairs: Iterable<readonly [string, string]>): LocalQuery {
  const q: LocalQuery = {};
  const seen = new Set<string>();
  for (const [rawName, value] of pairs) {
    const trimmed = rawName.trimStart();
    const system = systemOptionName(trimmed.trimEnd());
    if (!trimmed.startsWith("$") && system === undefined) {
      throw new QueryError({
        code: "not_a_query_option",
        detail: `'${truncate(rawName)}' is not a query option; the local engine evaluates ${SUPPORTED_OPTIONS.join(", ")} (the '$' is optional)`,
      });
    }
    checkNoSpaceAroundEquals(trimmed, value);
    const name = system ?? trimmed.toLowerCase();
    if (name in UNSUPPORTED) {
      throw new QueryError({
        code: "unsupported_option",
        option: name,
        detail: `not supported locally: ${UNSUPPORTED[name]}`,
      });
    }
    if (!(SUPPORTED_OPTIONS as readonly string[]).includes(name)) {
      throw new QueryError({
        code: "unknown_option",
        option: truncate(rawName),
        detail: `not an OData query option; the local engine evaluates ${SUPPORTED_OPTIONS.join(", ")}`,
      });
    }
    if (seen.has(name)) {
      throw new QueryError({ code: "duplicate_option", option: name, detail: "given more than once (OData does not allow repeated options)" });
    }
    seen.add(name);
    setOption(q, name, value);
  }
  return q;
}

/**
 * Parses a query typed or pasted by a user, or taken from a URL:
 * - `$filter=...&$top=10` (with or without a leading `?`, URL-encoded or not, see {@link decodeComponent});
 *   the `$` is optional for OData's system query options (`filter=...&top=10`, OData 4.01);
 * - a bare expression with no `$` option, taken whole as `$filter` (no decoding);
 * - URLSearchParams (already decoded; every name must be a `$` option).
 * Empty text gives the empty query `{}`. Throws {@link QueryError}.
 */
export function parseQuery(input: string | URLSearchParams): LocalQuery {
  if (typeof input !== "string") return queryFromPairs(input.entries());
  let text = input.trim();
  if (text.startsWith("?")) text = text.slice(1).trim();
  if (text === "") return {};
  const first = /^([A-Za-z_]\w*)\s*=/.exec(text);
  if (!/^(\$|%24)/i.test(text) && (first === null || systemOptionName(first[1]) === undefined)) {
    const m = first;
    if (m) {
      throw new QueryError({
        code: "not_a_query_option",
        detail: `'${m[1]}=' is not a query option; the local engine evaluates ${SUPPORTED_OPTIONS.join(", ")} (the '$' is optional)`,
      });
    }
    const q: LocalQuery = {};
    setOption(q, "$filter", text);
    return q;
  }
  return queryFromPairs(
    splitParams(text).map((part) => {
      const eq = part.indexOf("=");
      if (eq < 0) {
        const name = decodeComponent(part);
        throw new QueryError({ code: "invalid_value", option: truncate(name), detail: "expected '=' and a value after the option name" });
      }
      return [decodeComponent(part.slice(0, eq)), decodeComponent(part.slice(eq + 1))] as const;
    }),
  );
}

/** Reads a stored query (e.g. from workbook settings), checking shape and option syntax. */
export function readStoredQuery(value: unknown): LocalQuery {
  const r = LocalQuerySchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new QueryError({
      code: "invalid_query",
      detail: `stored query is not valid: ${issue.path.join(".") || "(root)"}: ${issue.message}`,
    });
  }
  const q: LocalQuery = {};
  const v = r.data;
  if (v.apply !== undefined) setOption(q, "$apply", v.apply);
  if (v.filter !== undefined) setOption(q, "$filter", v.filter);
  if (v.select !== undefined) {
    if (v.select.length === 0) throw new QueryError({ code: "invalid_value", option: "$select", detail: "lists no columns" });
    q.select = v.select.slice();
  }
  if (v.orderby !== undefined) setOption(q, "$orderby", v.orderby);
  if (v.top !== undefined) q.top = v.top;
  if (v.skip !== undefined) q.skip = v.skip;
  if (v.count !== undefined) q.count = v.count;
  return q;
}

/**
 * Writes a query as `$filter=...&$select=...` text that {@link parseQuery} reads back to the same
 * LocalQuery (a `$select` name holding `,` or `"` comes back in its `"quoted"` form, which names
 * the same column). Readable by default (spaces kept; only `%`, `&`, `+`, `#` escaped); with
 * `encode: true` values are fully percent-encoded for use in a URL.
 */
export function formatQuery(q: LocalQuery, opts: { encode?: boolean } = {}): string {
  const enc = opts.encode
    ? encodeURIComponent
    : (s: string) => s.replace(/[%&+#]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"));
  const parts: string[] = [];
  if (q.apply !== undefined) parts.push(`$apply=${enc(q.apply)}`);
  if (q.filter !== undefined) parts.push(`$filter=${enc(q.filter)}`);
  if (q.select !== undefined) parts.push(`$select=${enc(q.select.map(selectItemText).join(","))}`);
  if (q.orderby !== undefined) parts.push(`$orderby=${enc(q.orderby)}`);
  if (q.top !== undefined) parts.push(`$top=${q.top}`);
  if (q.skip !== undefined) parts.push(`$skip=${q.skip}`);
  if (q.count !== undefined) parts.push(`$count=${q.count}`);
  return parts.join("&");
}

/** A `$select` item as text: names holding `,` or `"` are quoted so the list splits back the same. */
function selectItemText(item: string): string {
  const t = item.trim();
  if (isWellQuoted(t) || !/[,"]/.test(t)) return t;
  return `"${t.split('"').join('""')}"`;
}

/** One line per option, for showing a stored query to a person (not meant to be parsed back). */
export function describeQuery(q: LocalQuery): string {
  const lines: string[] = [];
  if (q.apply !== undefined) lines.push(`$apply=${q.apply}`);
  if (q.filter !== undefined) lines.push(`$filter=${q.filter}`);
  if (q.select !== undefined) lines.push(`$select=${q.select.map(selectItemText).join(",")}`);
  if (q.orderby !== undefined) lines.push(`$orderby=${q.orderby}`);
  if (q.skip !== undefined) lines.push(`$skip=${q.skip}`);
  if (q.top !== undefined) lines.push(`$top=${q.top}`);
  if (q.count !== undefined) lines.push(`$count=${q.count}`);
  return lines.length ? lines.join("\n") : "(no query: the whole table)";
}
