import {
  BuilderError,
  EMPTY_BUILDER,
  buildQuery,
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
  type QueryEngine,
} from "../../src/addin/queryBuilder";
import { PATHS } from "../../src/contract/contract";
import { applyQuery, parseQuery, splitODataUrl } from "../../src/query";
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
