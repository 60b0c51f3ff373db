/** Compiling a LocalQuery against a column list, and running it on a table. */
import type { CellValue, Column, Table } from "../table/model";
import { ColumnResolver } from "./columns";
import { Compiler, type Row } from "./compile";
import { QueryError } from "./errors";
import { readStoredQuery, type LocalQuery } from "./options";
import { compileOrderBy, sortRows, type SortKey } from "./orderby";
import { parseFilter, parseOrderBy } from "./parser";

export interface QueryResult {
  table: Table;
  /** Row count after `$filter`, before `$skip`/`$top` (present when `count` was asked for). */
  count?: number;
}

/** Options for compiling/applying a query. */
export interface ApplyOptions {
  /** The instant `now()` stands for (default: the time of the call). Fixed for the whole run. */
  now?: Date | number;
}

/** A query checked against a column list, ready to run on any table with those columns. */
export interface CompiledQuery {
  /** Columns of the result, in output order. */
  readonly columns: Column[];
  run(table: Table): QueryResult;
}

function withOption<T>(option: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw e instanceof QueryError ? e.withOption(option) : e;
  }
}

/**
 * Checks `query` (shape, syntax, column names, types) against `columns` and compiles it once.
 * Throws {@link QueryError}.
 */
export function compileQuery(columns: readonly Column[], query: LocalQuery, opts: ApplyOptions = {}): CompiledQuery {
  const q = readStoredQuery(query);
  const now = opts.now === undefined ? Date.now() : typeof opts.now === "number" ? opts.now : opts.now.getTime();
  const compiler = new Compiler(columns, { now });
  const filter = q.filter === undefined ? undefined : withOption("$filter", () => compiler.filter(parseFilter(q.filter!)));
  const keys: SortKey[] | undefined =
    q.orderby === undefined ? undefined : withOption("$orderby", () => compileOrderBy(parseOrderBy(q.orderby!), compiler));
  const picks = q.select === undefined ? undefined : resolveSelect(columns, q.select);
  const outColumns = (picks ?? columns.map((_, i) => i)).map((i) => ({ ...columns[i] }));
  const skip = q.skip ?? 0;
  const top = q.top;
  const wantCount = q.count === true;

  return {
    columns: outColumns,
    run(table: Table): QueryResult {
      if (table.columns.length !== columns.length || table.columns.some((c, i) => c.name !== columns[i].name || c.type !== columns[i].type)) {
        throw new QueryError({ code: "invalid_query", detail: "the table's columns differ from those the query was compiled for" });
      }
      let rows: readonly Row[] = table.rows;
      if (filter) {
        const kept: Row[] = [];
        const src = table.rows;
        for (let i = 0; i < src.length; i++) if (filter(src[i])) kept.push(src[i]);
        rows = kept;
      }
      const count = rows.length;
      if (keys) rows = sortRows(rows, keys);
      const end = top === undefined ? rows.length : Math.min(rows.length, skip + top);
      const out: CellValue[][] = [];
      for (let i = skip; i < end; i++) {
        const r = rows[i];
        if (picks) {
          const o = new Array<CellValue>(picks.length);
          for (let j = 0; j < picks.length; j++) o[j] = r[picks[j]]!;
          out.push(o);
        } else {
          out.push(r.slice());
        }
      }
      const result: QueryResult = { table: { columns: outColumns.map((c) => ({ ...c })), rows: out, meta: { ...table.meta } } };
      if (wantCount) result.count = count;
      return result;
    },
  };
}

/**
 * Resolves `$select` items to column indices in the requested order. Item rules: `*` is every column;
 * `"quoted"` is an exact name; otherwise the exact name, then the identifier rules of ColumnResolver.
 * Positions in errors are 1-based in the comma-joined list.
 */
export function resolveSelect(columns: readonly Column[], select: readonly string[]): number[] {
  if (select.length === 0) throw new QueryError({ code: "invalid_value", option: "$select", detail: "lists no columns" });
  if (select.length === 1 && select[0].trim() === "*") return columns.map((_, i) => i);
  const resolver = new ColumnResolver(columns);
  const out: number[] = [];
  const seen = new Map<number, string>();
  let pos = 1;
  for (const raw of select) {
    const item = raw.trim();
    const at = pos + (raw.length - raw.trimStart().length);
    pos += raw.length + 1;
    if (item === "*") {
      throw new QueryError({
        code: "invalid_value",
        option: "$select",
        detail: "'*' selects every column and cannot be combined with names",
        position: at,
      });
    }
    const quoted = /^"(?:[^"]|"")+"$/.test(item);
    const name = quoted ? item.slice(1, -1).split('""').join('"') : item;
    const i = withOption("$select", () => resolver.resolve({ name, quoted, pos: at }));
    if (seen.has(i)) {
      throw new QueryError({
        code: "invalid_value",
        option: "$select",
        detail: `column '${columns[i].name}' is selected twice ('${seen.get(i)}' and '${item}')`,
        position: at,
      });
    }
    seen.set(i, item);
    out.push(i);
  }
  return out;
}

/**
 * Checks a query against a column list without data (e.g. before storing it with a binding) and
 * returns the result's columns. Throws {@link QueryError}.
 */
export function validateQuery(query: LocalQuery, columns: readonly Column[]): Column[] {
  return compileQuery(columns, query).columns;
}

/**
 * Applies a query to a table: `$filter`, then `$count`, `$orderby`, `$skip`, `$top`, `$select`.
 * Returns a new table with fresh row arrays; the input is not mutated. Throws {@link QueryError}.
 */
export function applyQuery(table: Table, query: LocalQuery, opts: ApplyOptions = {}): QueryResult {
  return compileQuery(table.columns, query, opts).run(table);
}
