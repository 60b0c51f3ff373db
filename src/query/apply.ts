/** Compiling a LocalQuery against a column list, and running it on a table. */
import type { CellValue, Column, Table } from "../table/model";
import { ColumnResolver } from "./columns";
import { Compiler, type Row } from "./compile";
import { QueryError } from "./errors";
import { compileApply, type CompiledApply, type RowSink } from "./aggregate";
import type { TableSink } from "../table/sink";
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
  /**
   * A sink for the source rows as they stream in (see `src/table/sink.ts`): `$apply` and `$filter`
   * are evaluated row by row, so only groups and kept rows stay in memory; `$orderby`, `$skip`,
   * `$top` and `$select` run at the end on what is left. `end()` gives the same rows as `run`.
   */
  sink(): QuerySink;
}

/** A {@link TableSink} that evaluates a query; `count` is set by `end()` when `$count` was asked for. */
export interface QuerySink extends TableSink {
  count?: number;
  /**
   * True once `end()` has run: the rows went through the query. A source that cannot stream may
   * ignore a sink; then the query is still to be applied to its table.
   */
  finished?: boolean;
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
  // $apply first: every other option applies to its result (OData Data Aggregation 4.0, 3.16).
  const pipeline: CompiledApply | undefined = q.apply === undefined ? undefined : withOption("$apply", () => compileApply(columns, q.apply!, { now }));
  // From here on `columns` are those `$filter` and the rest see: the summary's when there is one.
  const source = columns;
  columns = pipeline ? pipeline.columns : columns;
  const compiler = new Compiler(columns, { now });
  const filter = q.filter === undefined ? undefined : withOption("$filter", () => compiler.filter(parseFilter(q.filter!)));
  const keys: SortKey[] | undefined =
    q.orderby === undefined ? undefined : withOption("$orderby", () => compileOrderBy(parseOrderBy(q.orderby!), compiler));
  const picks = q.select === undefined ? undefined : resolveSelect(columns, q.select);
  const outColumns = (picks ?? columns.map((_, i) => i)).map((i) => ({ ...columns[i] }));
  const skip = q.skip ?? 0;
  const top = q.top;
  const wantCount = q.count === true;
  const checkColumns = (given: readonly Column[]) => {
    if (given.length !== source.length || given.some((c, i) => c.name !== source[i].name || c.type !== source[i].type)) {
      throw new QueryError({ code: "invalid_query", detail: "the table's columns differ from those the query was compiled for" });
    }
  };

  /** `$orderby`, `$skip`, `$top`, `$select` over the rows left after `$apply` and `$filter`. */
  const finish = (kept: readonly Row[], copy: boolean, count = kept.length): { rows: CellValue[][]; count: number } => {
    let rows = kept;
    if (keys) {
      const k = keys;
      const input = rows;
      rows = withOption("$orderby", () => sortRows(input, k));
    }
    const end = top === undefined ? rows.length : Math.min(rows.length, skip + top);
    const out: CellValue[][] = [];
    for (let i = skip; i < end; i++) {
      const r = rows[i];
      if (picks) {
        const o = new Array<CellValue>(picks.length);
        for (let j = 0; j < picks.length; j++) o[j] = r[picks[j]]!;
        out.push(o);
      } else {
        out.push(copy ? r.slice() : (r as CellValue[]));
      }
    }
    return { rows: out, count };
  };

  return {
    columns: outColumns,
    run(table: Table): QueryResult {
      checkColumns(table.columns);
      // Evaluation can fail (e.g. division by zero once decimals are exact): the error names its option.
      let rows: readonly Row[] = pipeline ? withOption("$apply", () => pipeline.run(table.rows)) : table.rows;
      if (filter) {
        const kept: Row[] = [];
        const src = rows;
        // Evaluation can fail (division by zero): the whole query fails, as OData's request would.
        withOption("$filter", () => {
          for (let i = 0; i < src.length; i++) if (filter(src[i])) kept.push(src[i]);
        });
        rows = kept;
      }
      // Copied: source rows (or rows $apply passed through) must not be shared with the input table.
      const done = finish(rows, true);
      const result: QueryResult = { table: { columns: outColumns.map((c) => ({ ...c })), rows: done.rows, meta: { ...table.meta } } };
      if (wantCount) result.count = done.count;
      return result;
    },
    sink(): QuerySink {
      const kept: Row[] = [];
      let passed = 0;
      // Without $orderby, rows past $skip + $top can never be in the result: they are counted, not kept.
      const limit = !keys && top !== undefined ? skip + top : Infinity;
      const collect: RowSink = {
        row(r) {
          if (filter) {
            let keep: boolean;
            try {
              keep = filter(r);
            } catch (e) {
              throw e instanceof QueryError ? e.withOption("$filter") : e;
            }
            if (!keep) return;
          }
          if (passed++ < limit) kept.push(r);
        },
        end: () => undefined,
      };
      let input: RowSink | undefined;
      const self: QuerySink = {
        begin(cols) {
          checkColumns(cols);
          input = pipeline ? pipeline.open(collect) : collect;
        },
        row(cells) {
          try {
            input!.row(cells);
          } catch (e) {
            // Errors of the $apply stages carry no option yet; $filter's already say "$filter".
            throw e instanceof QueryError && e.option === undefined ? e.withOption("$apply") : e;
          }
        },
        end() {
          if (!input) throw new QueryError({ code: "invalid_query", detail: "no columns were given before the rows" });
          try {
            input.end();
          } catch (e) {
            throw e instanceof QueryError && e.option === undefined ? e.withOption("$apply") : e;
          }
          // Source rows reach `kept` only when there is no $apply; they belong to no one else, so no copy.
          const done = finish(kept, false, passed);
          kept.length = 0;
          if (wantCount) self.count = done.count;
          self.finished = true;
          return { columns: outColumns.map((c) => ({ ...c })), rows: done.rows };
        },
      };
      return self;
    },
  };
}

/**
 * Resolves `$select` items to column indices. Item rules: `*` is every column; `"quoted"` is an exact
 * name; otherwise the exact name, then the identifier rules of ColumnResolver. Several items select
 * the union of what each selects (OData 4.01 Part 2 §5.1.4; the ABNF allows `*` beside names and an
 * item twice): columns in the order first written, a repeat adding nothing; with `*` anywhere, every
 * column in the table's order (each item is still checked). Positions in errors are 1-based in the
 * comma-joined list.
 */
export function resolveSelect(columns: readonly Column[], select: readonly string[]): number[] {
  if (select.length === 0) throw new QueryError({ code: "invalid_value", option: "$select", detail: "lists no columns" });
  const resolver = new ColumnResolver(columns);
  const out: number[] = [];
  const seen = new Set<number>();
  let star = false;
  let pos = 1;
  for (const raw of select) {
    const item = raw.trim();
    const at = pos + (raw.length - raw.trimStart().length);
    pos += raw.length + 1;
    if (item === "*") {
      star = true;
      continue;
    }
    const quoted = /^"(?:[^"]|"")+"$/.test(item);
    const name = quoted ? item.slice(1, -1).split('""').join('"') : item;
    const i = withOption("$select", () => resolver.resolve({ name, quoted, pos: at }));
    if (seen.has(i)) continue;
    seen.add(i);
    out.push(i);
  }
  return star ? columns.map((_, i) => i) : out;
}

/**
 * A sink that evaluates `query` on rows as they stream in (`fetchDataset(key, { sink })`): compiled
 * when the source's columns arrive, so a query that does not fit them fails before any row is
 * kept. `count` is set by `end()` when `$count` was asked for. Throws {@link QueryError}.
 */
export function createQuerySink(query: LocalQuery, opts: ApplyOptions = {}): QuerySink {
  let inner: QuerySink | undefined;
  const self: QuerySink = {
    begin(columns) {
      inner = compileQuery(columns, query, opts).sink();
      inner.begin(columns);
    },
    row(cells) {
      inner!.row(cells);
    },
    end() {
      if (!inner) throw new QueryError({ code: "invalid_query", detail: "no columns were given before the rows" });
      const done = inner.end();
      if (inner.count !== undefined) self.count = inner.count;
      self.finished = true;
      return done;
    },
  };
  return self;
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
