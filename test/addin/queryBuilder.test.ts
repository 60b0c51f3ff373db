import {
  BuilderError,
  EMPTY_BUILDER,
  SUMMARY_METHODS,
  buildQuery,
  columnsFor,
  isSummaryActive,
  methodAccepts,
  resultText,
  suggestAlias,
  summaryApply,
  summaryColumnNames,
  typeLabel,
  columnRef,
  columnTypeOfEdm,
  isEmptyQuery,
  literal,
  queryText,
  foreignHost,
  readPasted,
  sentRequest,
  withoutCredentials,
  type BuilderColumn,
  type BuilderState,
  type QueryEngine,
  type SummaryState,
} from "../../src/addin/queryBuilder";
import { PATHS } from "../../src/contract/contract";
import { AGGREGATE_METHODS, QueryError, applyQuery, formatColumnRef, parseQuery, splitODataUrl, streamingPlan, validateQuery } from "../../src/query";
import type { Table } from "../../src/table/model";

const columns: BuilderColumn[] = [
  { name: "project_id", type: "integer" },
  { name: "amount", type: "decimal" },
  { name: "name", type: "text" },
  { name: "Budget Contingency", type: "decimal" },
  { name: "period_start", type: "date" },
  { name: "updated_at", type: "datetime" },
  { name: "active", type: "boolean" },
];

describe("buildQuery", () => {
  it("empty builder = complete table", () => {
    const q = buildQuery(EMPTY_BUILDER, columns);
    expect(q).toEqual({});
    expect(isEmptyQuery(q)).toBe(true);
    expect(queryText(q)).toMatch(/complete table/);
  });

  it("writes typed literals, functions and ANDs the rows", () => {
    const q = buildQuery(
      {
        keep: ["project_id", "name", "amount"],
        filters: [
          { column: "amount", op: "gt", value: "1000.5" },
          { column: "name", op: "contains", value: "O'Brien" },
          { column: "period_start", op: "ge", value: "2026-01-01" },
          { column: "active", op: "eq", value: "TRUE" },
          { column: "Budget Contingency", op: "ne", value: "" },
        ],
        sortColumn: "amount",
        sortDir: "desc",
        top: "10",
      },
      columns,
    );
    expect(q).toEqual({
      filter: `amount gt 1000.5 and contains(name,'O''Brien') and period_start ge 2026-01-01 and active eq true and "Budget Contingency" ne null`,
      select: ["project_id", "amount", "name"],
      orderby: "amount desc",
      top: 10,
    });
    expect(queryText(q)).toBe(
      `$filter=amount gt 1000.5 and contains(name,'O''Brien') and period_start ge 2026-01-01 and active eq true and "Budget Contingency" ne null&$select=project_id,amount,name&$orderby=amount desc&$top=10`,
    );
  });

  it("keeping every column means no $select", () => {
    expect(buildQuery({ ...EMPTY_BUILDER, keep: columns.map((c) => c.name) }, columns)).toEqual({});
  });

  it.each([
    [{ ...EMPTY_BUILDER, keep: [] }, "keep"],
    [{ ...EMPTY_BUILDER, top: "-1" }, "top"],
    [{ ...EMPTY_BUILDER, top: "ten" }, "top"],
    [{ ...EMPTY_BUILDER, sortColumn: "nope" }, "sort"],
    [{ ...EMPTY_BUILDER, filters: [{ column: "", op: "eq" as const, value: "x" }] }, "filter"],
    [{ ...EMPTY_BUILDER, filters: [{ column: "amount", op: "gt" as const, value: "1,000" }] }, "filter"],
    [{ ...EMPTY_BUILDER, filters: [{ column: "amount", op: "contains" as const, value: "1" }] }, "filter"],
    [{ ...EMPTY_BUILDER, filters: [{ column: "period_start", op: "eq" as const, value: "21/11/2026" }] }, "filter"],
  ])("refuses bad field %#", (state, field) => {
    try {
      buildQuery(state, columns);
      throw new Error("expected BuilderError");
    } catch (e) {
      expect(e).toBeInstanceOf(BuilderError);
      expect((e as BuilderError).field).toBe(field);
    }
  });
});

describe("literals and names", () => {
  it("quotes column names that are not plain identifiers", () => {
    expect(columnRef("amount")).toBe("amount");
    expect(columnRef('Say "hi"')).toBe('"Say ""hi"""');
    expect(columnRef("and")).toBe('"and"');
    // The special-value literals, case-sensitive: a column so named is quoted, and reads back as itself.
    expect([columnRef("INF"), columnRef("NaN"), columnRef("inf")]).toEqual(['"INF"', '"NaN"', "inf"]);
    const t = { columns: [{ name: "INF", type: "decimal" as const }], rows: [[1], [2]], meta: {} } as unknown as Parameters<typeof applyQuery>[0];
    expect(applyQuery(t, { filter: `${columnRef("INF")} eq 2` }).table.rows).toEqual([[2]]);
  });
  it("formats each type", () => {
    expect(literal("+5", "integer")).toBe("5");
    expect(literal("null", "text")).toBe("null");
    expect(literal("=SUM(A1)", "text")).toBe("'=SUM(A1)'");
    expect(literal("2026-01-01", "datetime")).toBe("2026-01-01T00:00:00Z");
    expect(() => literal("2026-01-01T10:00", "datetime")).toThrow(BuilderError);
  });
  it("maps EDM types, unknown = text", () => {
    expect(columnTypeOfEdm("Edm.Int64")).toBe("integer");
    expect(columnTypeOfEdm("Edm.Decimal")).toBe("decimal");
    expect(columnTypeOfEdm("Edm.Date")).toBe("date");
    expect(columnTypeOfEdm("Edm.DateTimeOffset")).toBe("datetime");
    expect(columnTypeOfEdm("Edm.Geography")).toBe("text");
  });
});

describe("preview of what is sent", () => {
  it("shows a path with no $ option and no token", () => {
    expect(sentRequest(PATHS, "http://localhost:4100/", "financials", "json")).toBe("GET http://localhost:4100/api/bi/v1/financials");
    expect(sentRequest(PATHS, "https://x.example.com", "financials", "csv")).toBe("GET https://x.example.com/api/bi/v1/financials.csv");
    expect(sentRequest(PATHS, "https://x.example.com", "financials", "odata")).toBe("GET https://x.example.com/api/bi/odata/v1/financials");
  });
});

describe("readPasted", () => {
  const calls: string[] = [];
  const engine: QueryEngine = {
    parseQuery: (t) => {
      calls.push(`parse:${t}`);
      return { top: 5 };
    },
    splitODataUrl: (u) => {
      calls.push(`split:${u}`);
      return { query: { filter: "a eq 1" }, dataset: { key: "financials", format: "odata" }, removedCredentials: true };
    },
  };
  beforeEach(() => (calls.length = 0));

  it("blank text is no query and calls nothing", () => {
    expect(readPasted("   ", engine)).toEqual({ query: {}, removed: [] });
    expect(calls).toEqual([]);
  });
  it("an address goes through splitODataUrl", () => {
    expect(readPasted(" https://x/api/bi/odata/v1/financials?$filter=a eq 1 ", engine)).toEqual({
      query: { filter: "a eq 1" },
      datasetKey: "financials",
      format: "odata",
      removed: ["a credential in the address (it was not kept)"],
    });
    expect(calls).toEqual(["split:https://x/api/bi/odata/v1/financials?$filter=a eq 1"]);
  });
  it("bare options go through parseQuery, a leading ? is dropped", () => {
    expect(readPasted("?$top=5", engine).query).toEqual({ top: 5 });
    expect(calls).toEqual(["parse:$top=5"]);
  });
});

describe("against the real query engine", () => {
  const table: Table = {
    columns: [
      { name: "project_id", type: "integer" },
      { name: "Budget Contingency", type: "decimal" },
      { name: "name", type: "text" },
    ],
    rows: [
      [1, 10.5, "Alpha"],
      [2, null, "Beta"],
      [3, 99, "O'Brien"],
    ],
    meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" },
  };
  const cols = table.columns.map((c) => ({ name: c.name, type: c.type }));

  it("builder output parses back and filters as the user meant", () => {
    const q = buildQuery(
      { keep: ["project_id", "name"], filters: [{ column: "Budget Contingency", op: "ge", value: "10" }, { column: "name", op: "contains", value: "'" }], sortColumn: "project_id", sortDir: "desc", top: "" },
      cols,
    );
    expect(parseQuery(queryText(q))).toEqual(q);
    const out = applyQuery(table, q).table;
    expect(out.columns.map((c) => c.name)).toEqual(["project_id", "name"]);
    expect(out.rows).toEqual([[3, "O'Brien"]]);
  });

  it("a pasted OData URL keeps the $ options local and drops a token parameter", () => {
    const r = readPasted("https://svc.example.com/api/bi/odata/v1/financials?$filter=project_id gt 1&$top=1&company_api_token=abc123", { parseQuery, splitODataUrl });
    expect(r.datasetKey).toBe("financials");
    expect(r.format).toBe("odata");
    expect(r.query).toEqual({ filter: "project_id gt 1", top: 1 });
    expect(r.removed.length).toBe(1);
    expect(JSON.stringify(r)).not.toContain("abc123");
  });

  it("a pasted address with $apply is split like the other options, shown, and applied (never sent)", () => {
    const r = readPasted("https://svc.example.com/api/bi/v1/financials?$apply=groupby((name),aggregate(project_id with sum as total))&$orderby=total desc", { parseQuery, splitODataUrl });
    expect(r.datasetKey).toBe("financials");
    expect(r.query).toEqual({ apply: "groupby((name),aggregate(project_id with sum as total))", orderby: "total desc" });
    expect(isEmptyQuery(r.query)).toBe(false);
    expect(queryText(r.query)).toBe("$apply=groupby((name),aggregate(project_id with sum as total))&$orderby=total desc");
    expect(parseQuery(queryText(r.query))).toEqual(r.query);
    expect(sentRequest(PATHS, "https://svc.example.com", "financials", "json")).not.toContain("$apply");
    expect(applyQuery(table, r.query).table.rows).toEqual([["O'Brien", 3], ["Beta", 2], ["Alpha", 1]]);
  });
});

describe("pasted addresses: credentials cleared, other hosts named", () => {
  const engine: QueryEngine = { parseQuery, splitODataUrl };
  it("takes the token out of the text itself and keeps everything else as typed", () => {
    expect(withoutCredentials("https://u:p@ppm.example.com/api/bi/odata/v1/financials?$filter=a eq 1&company_api_token=SECRET&$top=5#x", engine)).toBe(
      "https://ppm.example.com/api/bi/odata/v1/financials?$filter=a eq 1&$top=5#x",
    );
    expect(withoutCredentials("https://h/api/bi/v1/financials?Company-Api-Token=SECRET", engine)).toBe("https://h/api/bi/v1/financials");
    expect(withoutCredentials("$filter=a eq 1", engine)).toBe("$filter=a eq 1");
  });
  it("names both hosts when the pasted address is on another one", () => {
    expect(foreignHost("https://other.example.com/api/bi/odata/v1/financials?$top=1", "https://ppm.example.com")).toEqual({ pasted: "other.example.com", used: "ppm.example.com" });
    expect(foreignHost("https://PPM.example.com/api/bi/odata/v1/financials", "https://ppm.example.com")).toBeNull();
    expect(foreignHost("$top=1", "https://ppm.example.com")).toBeNull();
  });
});

describe("the Summarize step", () => {
  const fin: BuilderColumn[] = [
    { name: "project_id", type: "text" },
    { name: "fiscal_year", type: "integer" },
    { name: "budget", type: "decimal" },
    { name: "period_start", type: "date" },
    { name: "last_updated", type: "datetime" },
    { name: "is_capex", type: "boolean" },
    { name: "Budget Contingency", type: "decimal" },
  ];
  const summary = (s: Partial<SummaryState>): BuilderState => ({ ...EMPTY_BUILDER, summary: { groupBy: [], aggregates: [], ...s } });
  const builderError = (f: () => unknown): BuilderError => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(BuilderError);
      return e as BuilderError;
    }
    throw new Error("expected a BuilderError");
  };

  it("offers the engine's methods plus $count, each for the types the engine accepts", () => {
    expect(SUMMARY_METHODS).toEqual([...AGGREGATE_METHODS, "count"]);
    expect(columnsFor("sum", fin).map((c) => c.name)).toEqual(["fiscal_year", "budget", "Budget Contingency"]);
    expect(columnsFor("average", fin).map((c) => c.name)).toEqual(["fiscal_year", "budget", "Budget Contingency"]);
    expect(columnsFor("min", fin)).toEqual(fin);
    expect(columnsFor("max", fin)).toEqual(fin);
    expect(columnsFor("countdistinct", fin)).toEqual(fin);
    expect(columnsFor("count", fin)).toEqual([]);
    // Every pairing offered is one the engine accepts, and every pairing refused is one it refuses.
    for (const m of AGGREGATE_METHODS) {
      for (const c of fin) {
        const q = { apply: `aggregate(${formatColumnRef(c.name)} with ${m} as x)` };
        if (methodAccepts(m, c.type)) expect(() => validateQuery(q, fin)).not.toThrow();
        else expect(() => validateQuery(q, fin)).toThrow(QueryError);
      }
    }
  });

  it("an empty step is no summary", () => {
    expect(isSummaryActive({ groupBy: [], aggregates: [] })).toBe(false);
    expect(isSummaryActive(null)).toBe(false);
    expect(buildQuery(summary({}), fin)).toEqual({});
  });

  it("writes groupby + aggregate with the group-by columns in the order chosen", () => {
    const s: SummaryState = {
      groupBy: ["fiscal_year", "project_id"],
      aggregates: [
        { method: "sum", column: "budget", alias: "total_budget" },
        { method: "count", column: "", alias: "rows" },
      ],
    };
    expect(summaryApply(s, fin)).toBe("groupby((fiscal_year,project_id),aggregate(budget with sum as total_budget,$count as rows))");
    expect(summaryColumnNames(s)).toEqual(["fiscal_year", "project_id", "total_budget", "rows"]);
  });

  it("quotes column names, and writes groupby alone and aggregate alone", () => {
    expect(summaryApply({ groupBy: ["Budget Contingency"], aggregates: [] }, fin)).toBe('groupby(("Budget Contingency"))');
    expect(summaryApply({ groupBy: [], aggregates: [{ method: "average", column: "Budget Contingency", alias: "avg_bc" }] }, fin)).toBe('aggregate("Budget Contingency" with average as avg_bc)');
  });

  it("row filters go before the summary as filter(...); sort and top apply to the summary; columns to keep are not used", () => {
    const q = buildQuery(
      {
        keep: ["project_id"],
        filters: [{ column: "fiscal_year", op: "eq", value: "2026" }, { column: "is_capex", op: "eq", value: "true" }],
        summary: { groupBy: ["project_id"], aggregates: [{ method: "sum", column: "budget", alias: "total_budget" }] },
        sortColumn: "total_budget",
        sortDir: "desc",
        top: "3",
      },
      fin,
    );
    expect(q).toEqual({
      apply: "filter(fiscal_year eq 2026 and is_capex eq true)/groupby((project_id),aggregate(budget with sum as total_budget))",
      orderby: "total_budget desc",
      top: 3,
    });
    expect(queryText(q)).toBe("$apply=filter(fiscal_year eq 2026 and is_capex eq true)/groupby((project_id),aggregate(budget with sum as total_budget))&$orderby=total_budget desc&$top=3");
    expect(parseQuery(queryText(q))).toEqual(q);
    // The engine agrees that $orderby names the summary's column.
    expect(validateQuery(q, fin).map((c) => c.name)).toEqual(["project_id", "total_budget"]);
  });

  it("sorting by a dataset column the summary does not hold is refused", () => {
    const e = builderError(() => buildQuery({ ...summary({ groupBy: ["project_id"] }), sortColumn: "budget" }, fin));
    expect(e.field).toBe("sort");
    expect(e.message).toMatch(/column of the summary/);
  });

  it.each<[string, SummaryState, RegExp, number | undefined]>([
    ["empty name", { groupBy: [], aggregates: [{ method: "count", column: "", alias: " " }] }, /enter a name/, 0],
    ["not an identifier", { groupBy: [], aggregates: [{ method: "count", column: "", alias: "total budget" }] }, /letters, digits and _/, 0],
    ["starts with a digit", { groupBy: [], aggregates: [{ method: "count", column: "", alias: "2026_total" }] }, /letters, digits and _/, 0],
    ["too long", { groupBy: [], aggregates: [{ method: "count", column: "", alias: "x".repeat(129) }] }, /at most 128/, 0],
    ["a group-by column", { groupBy: ["fiscal_year"], aggregates: [{ method: "count", column: "", alias: "Fiscal_Year" }] }, /already a group-by column \("fiscal_year"\)/, 0],
    ["a dataset column", { groupBy: ["project_id"], aggregates: [{ method: "sum", column: "budget", alias: "budget" }] }, /already a column of the dataset/, 0],
    ["used twice (case ignored, as Excel headers)", { groupBy: [], aggregates: [{ method: "count", column: "", alias: "n" }, { method: "sum", column: "budget", alias: "N" }] }, /already used by aggregate 1/, 1],
    ["no column", { groupBy: [], aggregates: [{ method: "max", column: "", alias: "m" }] }, /choose a column/, 0],
    ["sum of text", { groupBy: [], aggregates: [{ method: "sum", column: "project_id", alias: "t" }] }, /needs a number column.*project_id/, 0],
    ["average of a date", { groupBy: [], aggregates: [{ method: "average", column: "period_start", alias: "t" }] }, /needs a number column/, 0],
    ["unknown group-by column", { groupBy: ["nope"], aggregates: [] }, /not a column/, undefined],
  ])("refuses %s", (_what, s, message, index) => {
    const e = builderError(() => buildQuery({ ...EMPTY_BUILDER, summary: s }, fin));
    expect(e.field).toBe("summary");
    expect(e.message).toMatch(message);
    expect(e.index).toBe(index);
  });

  it("accepts any identifier the engine accepts as an alias, including Unicode letters", () => {
    const q = buildQuery(summary({ groupBy: ["project_id"], aggregates: [{ method: "sum", column: "budget", alias: "Summe_Budget_ü" }, { method: "count", column: "", alias: "_n" }] }), fin);
    expect(validateQuery(q, fin).map((c) => c.name)).toEqual(["project_id", "Summe_Budget_ü", "_n"]);
  });

  it("suggests unique identifier aliases that the builder accepts", () => {
    expect(suggestAlias("sum", "budget", fin.map((c) => c.name))).toBe("total_budget");
    expect(suggestAlias("count", "", [])).toBe("rows");
    expect(suggestAlias("count", "", ["rows", "ROWS_2"])).toBe("rows_3");
    expect(suggestAlias("average", "Budget Contingency", [])).toBe("average_Budget_Contingency");
    expect(suggestAlias("countdistinct", "project_id", [])).toBe("distinct_project_id");
    expect(suggestAlias("max", "---", [])).toBe("max_value");
    const names = fin.map((c) => c.name);
    const aggregates = fin.map((c) => {
      const alias = suggestAlias("max", c.name, names);
      names.push(alias);
      return { method: "max" as const, column: c.name, alias };
    });
    expect(() => validateQuery({ apply: summaryApply({ groupBy: ["project_id"], aggregates }, fin) }, fin)).not.toThrow();
  });

  it("shows what the result holds, in a finance user's words, not OData type names (issue #25)", () => {
    const cols = fin.map((c) => ({ ...c, sourceType: { text: "Edm.String", integer: "Edm.Int32", decimal: "Edm.Decimal", date: "Edm.Date", datetime: "Edm.DateTimeOffset", boolean: "Edm.Boolean" }[c.type] }));
    const q = buildQuery(
      summary({
        groupBy: ["fiscal_year", "project_id"],
        aggregates: [
          { method: "sum", column: "budget", alias: "total_budget" },
          { method: "count", column: "", alias: "rows" },
          { method: "sum", column: "fiscal_year", alias: "years" },
          { method: "average", column: "fiscal_year", alias: "avg_year" },
          { method: "max", column: "period_start", alias: "last_period" },
          { method: "countdistinct", column: "is_capex", alias: "kinds" },
        ],
      }),
      cols,
    );
    expect(resultText(validateQuery(q, cols))).toBe(
      "fiscal_year (whole number), project_id (text), total_budget (decimal), rows (whole number), years (whole number), avg_year (decimal), last_period (date), kinds (whole number)",
    );
    expect([typeLabel({ type: "boolean" }), typeLabel({ type: "datetime" })]).toEqual(["true/false", "date and time"]);
  });

  it("a summary is what lets an export larger than a sheet be imported", () => {
    expect(streamingPlan(buildQuery(EMPTY_BUILDER, fin), 2_000_000, "financials").refusal?.message).toMatch(/2,000,000 rows/);
    const q = buildQuery(summary({ groupBy: ["project_id"], aggregates: [{ method: "count", column: "", alias: "rows" }] }), fin);
    expect(streamingPlan(q, 2_000_000, "financials")).toEqual({ exceedsSheet: true, stream: true });
  });

  it("computes what the user chose, on a table", () => {
    const table: Table = {
      columns: [
        { name: "project_id", type: "text" },
        { name: "fiscal_year", type: "integer" },
        { name: "budget", type: "decimal" },
      ],
      rows: [
        ["A", 2025, 0.1],
        ["B", 2025, 5],
        ["A", 2025, 0.2],
        ["A", 2026, 1],
        ["B", 2026, null],
      ],
      meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" },
    };
    const q = buildQuery(
      {
        ...summary({ groupBy: ["fiscal_year", "project_id"], aggregates: [{ method: "sum", column: "budget", alias: "total_budget" }, { method: "count", column: "", alias: "rows" }] }),
        filters: [{ column: "budget", op: "ne", value: "5" }],
        sortColumn: "rows",
        sortDir: "desc",
      },
      table.columns,
    );
    // OData: null ne 5 is true, so B's null row is kept (a group with a null sum); 5 is filtered out first.
    expect(applyQuery(table, q).table.rows).toEqual([
      [2025, "A", 0.3, 2],
      [2026, "A", 1, 1],
      [2026, "B", null, 1],
    ]);
  });
});
