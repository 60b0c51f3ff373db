/** The row key of a queried table (issue #25): a summary's group-by columns, else the source's key. */
import { keyForQuery } from "../../src/refresh/queryKey";
import type { KeyChoice } from "../../src/refresh/delta";
import type { Column } from "../../src/table/model";

const datasetKey: KeyChoice = { candidates: [["project_id", "fiscal_year", "period_number"]], origin: "metadata", reason: "the key $metadata declares" };
const cols = (...names: string[]): Column[] => names.map((name) => ({ name, type: "text" }));

describe("keyForQuery", () => {
  it("keeps the source's key without a summary (filters, $select, sort and top keep the rows)", () => {
    expect(keyForQuery(datasetKey, null, cols("project_id"))).toBe(datasetKey);
    expect(keyForQuery(datasetKey, { filter: "fiscal_year eq 2026", select: ["project_id", "budget"], top: 5 }, cols("project_id", "budget"))).toBe(datasetKey);
    expect(keyForQuery(datasetKey, { apply: "filter(budget gt 0)/compute(budget mul 2 as double)" }, cols("project_id", "budget", "double"))).toBe(datasetKey);
  });

  it("a summary is keyed by its group-by columns, resolved against the result's columns", () => {
    const k = keyForQuery(datasetKey, { apply: "groupby((fiscal_year,Budget_x0020_Contingency),aggregate($count as rows))" }, cols("fiscal_year", "Budget Contingency", "rows"));
    expect(k).toMatchObject({ candidates: [["fiscal_year", "Budget Contingency"]], origin: "query" });
  });

  it("the last grouping step decides; a summary without group-by columns has no key", () => {
    expect(keyForQuery(datasetKey, { apply: "groupby((a,b),aggregate($count as n))/groupby((a),aggregate(n with sum as total))" }, cols("a", "total"))?.candidates).toEqual([["a"]]);
    expect(keyForQuery(datasetKey, { apply: "aggregate($count as rows)" }, cols("rows"))).toMatchObject({ candidates: [], origin: "none" });
  });

  it("no key when $select dropped a group-by column; an unreadable $apply is left to the refresh", () => {
    expect(keyForQuery(datasetKey, { apply: "groupby((a,b),aggregate($count as n))", select: ["a", "n"] }, cols("a", "n"))).toMatchObject({ candidates: [], origin: "none" });
    expect(keyForQuery(datasetKey, { apply: "groupby((" }, cols("a"))).toBe(datasetKey);
  });
});
