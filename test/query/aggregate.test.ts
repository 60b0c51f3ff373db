/** `$apply`: types of results, exactness, errors with positions, the option layer and the row sink. */
import { applyQuery, compileQuery, formatQuery, parseQuery, readStoredQuery, splitODataUrl } from "../../src/query";
import type { CellValue, Column } from "../../src/table/model";
import { errorOf, makeTable } from "./fixture";

const apply = (text: string, table = makeTable()) => applyQuery(table, { apply: text });

describe("$apply results", () => {
  it("sums of decimals are exact decimals, averages decimals, counts integers", () => {
    const cols: Column[] = [{ name: "G", type: "text" }, { name: "D", type: "decimal" }];
    const rows: CellValue[][] = [["a", 0.1], ["a", 0.2], ["b", 0.3], ["b", null], ["a", 1.005]];
    const r = apply("groupby((G),aggregate(D with sum as S, D with average as Av, $count as N, D with countdistinct as K))", makeTable(cols, rows)).table;
    expect(r.columns.map((c) => [c.name, c.type])).toEqual([["G", "text"], ["S", "decimal"], ["Av", "decimal"], ["N", "integer"], ["K", "integer"]]);
    // 0.1 + 0.2 + 1.005 = 1.305 exactly (floating point gives 1.3050000000000002); 1.305 / 3 = 0.435.
    expect(r.rows).toEqual([["a", 1.305, 0.435, 3, 3], ["b", 0.3, 0.3, 2, 1]]);
  });

  it("sums of Int64 stay exact beyond 2^53 and stay integers", () => {
    const r = apply("aggregate(BigNum with sum as S, BigNum with max as Mx, BigNum with min as Mn)").table;
    // 9007199254740993 + 9007199254740992 + 42 - 9007199254740993 + 7 + 123456789012345678901234567890 + 0
    expect(r.columns.map((c) => c.type)).toEqual(["integer", "integer", "integer"]);
    expect(r.rows).toEqual([["123456789012354686100489308931", "123456789012345678901234567890", "-9007199254740993"]]);
  });

  it("aggregate over no rows gives one row: null sums, zero counts; groupby over no rows gives none", () => {
    expect(apply("filter(Id gt 100)/aggregate(Budget with sum as S, $count as N, Name with countdistinct as K)").table.rows).toEqual([[null, 0, 0]]);
    expect(apply("filter(Id gt 100)/groupby((Status),aggregate($count as N))").table.rows).toEqual([]);
  });

  it("null is a group of its own; dates, date-times and booleans group and compare", () => {
    const r = apply("groupby((Status),aggregate(Start with min as First, Updated with max as Last, Active with max as AnyActive))").table;
    expect(r.rows).toEqual([
      ["Open", "2024-02-29", "2026-01-01T00:00:00Z", true],
      ["Closed", "2023-03-10", "2025-01-31T09:30:00Z", false],
      ["On Hold", null, null, null],
      [null, "2025-12-31", "2025-06-15T12:00:00Z", null],
    ]);
  });

  it("compute adds typed columns; columns with spaces can be grouped quoted or with _", () => {
    const r = apply('compute(Score mul 2 as Double)/groupby(("Cost Center Code"),aggregate(Double with sum as S))').table;
    expect(r.columns.map((c) => c.name)).toEqual(["Cost Center Code", "S"]);
    expect(r.rows).toEqual([["CC-100", 24], ["CC-200", 6], [null, -4], ["CC-300", 20], ["CC-400", 10]]);
    expect(apply("groupby((Cost_Center_Code))").table.rows.length).toBe(5);
  });

  it("$filter, $orderby, $select, $top, $skip and $count apply to the result", () => {
    const r = applyQuery(makeTable(), parseQuery("$apply=groupby((Status),aggregate($count as N))&$filter=N ge 2&$orderby=N desc,Status&$select=Status&$top=1&$skip=0&$count=true"));
    expect(r.table.rows).toEqual([["Open"]]);
    expect(r.count).toBe(2);
  });

  it("leaves the input table untouched", () => {
    const t = makeTable();
    const before = JSON.stringify(t);
    apply("filter(Id gt 1)/compute(Id add 1 as X)", t);
    applyQuery(t, { apply: "filter(Id gt 1)" }).table.rows[0][0] = 999;
    expect(JSON.stringify(t)).toBe(before);
  });
});

describe("$apply errors give the position and what was expected", () => {
  const cases: Array<[string, string, number | undefined, string]> = [
    ["aggregate(Budget with summ as T)", "syntax", 23, "expected an aggregation method (sum, min, max, average, countdistinct) at 23 but found 'summ'"],
    ["groupby(Status)", "syntax", 9, "expected '(' to start the list of grouping columns"],
    ["groupby((Stauts))", "unknown_column", 10, "unknown column 'Stauts' at 10 (did you mean Status?)"],
    ["aggregate(Name with sum as T)", "type_mismatch", 11, "sum needs numbers, but 'Name' is text"],
    ["aggregate(Budget with sum as Budget)", "invalid_value", 30, "the name 'Budget' is already a column here"],
    ["groupby((Status),aggregate($count as Status))", "invalid_value", 38, "already a column"],
    ["groupby((Status),filter(Id gt 1))", "syntax", 18, "must end with aggregate(...)"],
    ["filter(Budget gt 'x')", "type_mismatch", 15, "cannot compare number with text"],
    ["filter(Budget gt 1", "syntax", 19, "expected ')' at 19 but found end of input"],
    ["aggregate(Budget with sum)", "syntax", 26, "expected 'as' and a name for the result at 26 but found ')'"],
    ["aggregate(Budget)", "syntax", 17, "expected 'with'"],
    ["topcount(2,Budget)", "syntax", 1, "the transformation 'topcount' is not supported"],
    ["aggregate($count as N)/", "syntax", 24, "expected a transformation"],
    ["aggregate($count as N) x", "syntax", 24, "expected '/' and another transformation, or end of input"],
    ["aggregate(Budget with sum as T from Start with average)", "syntax", 32, "'from'"],
    ["compute(Budget add 1)", "syntax", 21, "expected 'as'"],
    ["groupby((Customer/Country))", "syntax", 18, "navigation paths are not supported"],
  ];
  it.each(cases)("%s", (text, code, position, message) => {
    const e = errorOf(() => apply(text));
    expect(e.code).toBe(code);
    expect(e.option).toBe("$apply");
    expect(e.position).toBe(position);
    expect(e.message).toContain(message);
  });

  it("INF, -INF or NaN from a divby zero reaching a result (a computed column, an aggregate) fails clearly; $orderby sorts them", () => {
    const t = makeTable();
    for (const [q, fragment] of [
      ["$apply=aggregate(Budget divby 0 with sum as s)", "'s' (Budget divby 0 with sum) is INF, -INF or NaN in a row (a divby zero)"],
      ["$apply=groupby((Status),aggregate(Budget divby 0 with max as m))", "'m' (Budget divby 0 with max) is INF, -INF or NaN"],
      ["$apply=compute(Budget divby 0 as x)", "the computed column 'x' (Budget divby 0) is INF, -INF or NaN"],
    ]) {
      const e = errorOf(() => applyQuery(t, parseQuery(q)));
      expect([q, e.code, e.message]).toEqual([q, "overflow", expect.stringContaining(fragment)]);
    }
    // Counting distinct values counts INF, -INF and NaN as three values (NaN once, as a set holds it).
    expect(applyQuery(t, parseQuery("$apply=aggregate(Budget divby 0 with countdistinct as c)")).table.rows).toEqual([[3]]);
    // null first, then -INF (5), INF in table order, NaN (4: 0 divby 0) last; descending the reverse.
    expect(applyQuery(t, parseQuery("$orderby=Budget divby 0&$select=Id")).table.rows.flat()).toEqual([3, 5, 1, 2, 6, 7, 8, 4]);
    expect(applyQuery(t, parseQuery("$orderby=Budget divby 0 desc&$select=Id")).table.rows.flat()).toEqual([4, 1, 2, 6, 7, 8, 5, 3]);
  });

  it("a bad $filter after $apply names the result's columns", () => {
    const e = errorOf(() => applyQuery(makeTable(), parseQuery("$apply=groupby((Status),aggregate($count as N))&$filter=Budget gt 1")));
    expect(e.option).toBe("$filter");
    expect(e.code).toBe("unknown_column");
  });
});

describe("$apply in the option layer", () => {
  it("parses, formats back and survives storage", () => {
    const q = parseQuery("$apply=groupby((Status),aggregate(Budget%20with%20sum%20as%20T))&$orderby=T desc");
    expect(q).toEqual({ apply: "groupby((Status),aggregate(Budget with sum as T))", orderby: "T desc" });
    expect(parseQuery(formatQuery(q))).toEqual(q);
    expect(parseQuery(formatQuery(q, { encode: true }))).toEqual(q);
    expect(readStoredQuery(JSON.parse(JSON.stringify(q)))).toEqual(q);
    expect(errorOf(() => parseQuery("$apply=")).message).toContain("no value");
  });

  it("a pasted address with $apply is split like the other options and never sent", () => {
    const s = splitODataUrl("https://ppm.example.com/api/bi/odata/v1/financials?$apply=groupby((fiscal_year),aggregate(budget with sum as total))&$top=5&company_api_token=secret");
    expect(s.url).toBe("https://ppm.example.com/api/bi/odata/v1/financials");
    expect(s.query).toEqual({ apply: "groupby((fiscal_year),aggregate(budget with sum as total))", top: 5 });
    expect(s.removedCredentials).toBe(true);
    expect(s.url).not.toContain("$apply");
  });
});

describe("the row sink", () => {
  it("gives what run gives, for queries with and without $apply", () => {
    for (const text of ["$apply=groupby((Status),aggregate(Budget with sum as S))&$orderby=S desc", "$filter=Budget gt 100&$orderby=Name&$top=3&$count=true", "$select=Name&$skip=2", "$filter=Budget ge 0&$skip=1&$top=2&$count=true", "$top=0&$count=true", "$apply=filter(Id gt 2)&$top=3&$skip=1"]) {
      const q = parseQuery(text);
      const t = makeTable();
      const compiled = compileQuery(t.columns, q);
      const sink = compiled.sink();
      sink.begin(t.columns);
      for (const r of t.rows) sink.row(r.slice());
      const out = sink.end();
      const expected = compiled.run(makeTable());
      expect(out.rows).toEqual(expected.table.rows);
      expect(out.columns).toEqual(expected.table.columns);
      expect(sink.count).toEqual(expected.count);
    }
  });

  it("refuses columns other than those it was compiled for", () => {
    const sink = compileQuery(makeTable().columns, { apply: "aggregate($count as N)" }).sink();
    expect(errorOf(() => sink.begin([{ name: "Other", type: "text" }])).code).toBe("invalid_query");
  });
});
