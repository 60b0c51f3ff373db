/** applyQuery / compileQuery / validateQuery: $select, $orderby, $skip, $top, $count on a table. */
import { applyQuery, compileQuery, QueryError, validateQuery, type LocalQuery } from "../../src/query";
import type { Column } from "../../src/table/model";
import { COLUMNS, errorOf, makeTable, NOW, ROWS } from "./fixture";

const table = makeTable();
const run = (q: LocalQuery) => applyQuery(table, q, { now: NOW });
const col = (q: LocalQuery, name: string) => {
  const r = run(q);
  const i = r.table.columns.findIndex((c) => c.name === name);
  return r.table.rows.map((row) => row[i]);
};

describe("$select", () => {
  test("keeps the requested order and the column metadata", () => {
    const r = run({ select: ["Score", "Name", "BigNum"] });
    expect(r.table.columns).toEqual([COLUMNS[10], COLUMNS[1], COLUMNS[9]]);
    expect(r.table.rows[0]).toEqual([5, "Alpha", "9007199254740993"]);
    expect(r.table.rows).toHaveLength(8);
  });
  test.each([["Budget Contingency"], ['"Budget Contingency"'], ["Budget_x0020_Contingency"], ["Budget_Contingency"], [" Budget Contingency "]])(
    "%s names the column with a space",
    (item) => {
      expect(run({ select: [item] }).table.columns.map((c) => c.name)).toEqual(["Budget Contingency"]);
    },
  );
  test("* is every column", () => {
    expect(run({ select: ["*"] }).table.columns.map((c) => c.name)).toEqual(COLUMNS.map((c) => c.name));
  });
  test("several items select the union (OData 4.01 Part 2 §5.1.4): a repeat adds nothing, * beside names is every column", () => {
    expect(run({ select: ["Name", "Name"] }).table.columns.map((c) => c.name)).toEqual(["Name"]);
    expect(run({ select: ["Budget Contingency", "Name", "Budget_Contingency"] }).table.columns.map((c) => c.name)).toEqual(["Budget Contingency", "Name"]);
    for (const select of [["Name", "*"], ["*", "Name"], ["*", "*"]]) expect(run({ select }).table.columns.map((c) => c.name)).toEqual(COLUMNS.map((c) => c.name));
  });
  test.each<[string[], string, number | undefined, string]>([
    [["Name", "Sccore"], "unknown_column", 6, "$select: unknown column 'Sccore' at 6 (did you mean Score?)"],
    [["Name", "Budget Contingenc"], "unknown_column", 6, 'did you mean "Budget Contingency"?'],
    [["*", "Sccore"], "unknown_column", 3, "unknown column 'Sccore'"],
    [[], "invalid_value", undefined, "lists no columns"],
  ])("%j → %s", (select, code, position, fragment) => {
    const e = errorOf(() => run({ select }));
    expect({ code: e.code, option: e.option, position: e.position }).toEqual({ code, option: "$select", position });
    expect(e.message).toContain(fragment);
  });
  test("a `_` form that fits several columns is ambiguous; the exact name still wins", () => {
    const cols: Column[] = [
      { name: "Cost Center", type: "text" },
      { name: "Cost-Center", type: "text" },
      { name: "Other", type: "text" },
    ];
    const t = makeTable(cols, [["a", "b", "c"]]);
    const e = errorOf(() => applyQuery(t, { filter: "Cost_Center eq 'a'" }));
    expect(e.code).toBe("ambiguous_column");
    expect(e.position).toBe(1);
    expect(e.message).toContain('"Cost Center", "Cost-Center"');
    expect(applyQuery(t, { filter: "Cost_x0020_Center eq 'a'" }).table.rows).toHaveLength(1);
    const withExact = makeTable([...cols, { name: "Cost_Center", type: "text" }], [["a", "b", "c", "d"]]);
    expect(applyQuery(withExact, { select: ["Cost_Center"] }).table.rows).toEqual([["d"]]);
  });
  test("columns named like keywords are written quoted", () => {
    const t = makeTable([{ name: "and", type: "integer" }, { name: "true", type: "boolean" }], [[1, true], [2, false]]);
    expect(applyQuery(t, { filter: '"and" eq 2 or "true"' }).table.rows).toEqual([[1, true], [2, false]]);
    expect(applyQuery(t, { filter: '"and" eq 2' }).table.rows).toEqual([[2, false]]);
  });
  test("unicode identifiers are column names", () => {
    const t = makeTable([{ name: "Größe", type: "integer" }], [[1], [2]]);
    expect(applyQuery(t, { filter: "Größe gt 1" }).table.rows).toEqual([[2]]);
  });
});

describe("$orderby", () => {
  test("ascending puts nulls first; descending puts them last", () => {
    expect(col({ orderby: "Budget", select: ["Id"] }, "Id")).toEqual([3, 5, 4, 8, 2, 7, 1, 6]);
    expect(col({ orderby: "Budget desc", select: ["Id"] }, "Id")).toEqual([6, 1, 2, 7, 8, 4, 5, 3]);
    expect(col({ orderby: "Budget asc" }, "Id")).toEqual([3, 5, 4, 8, 2, 7, 1, 6]);
  });
  test("several keys, mixed directions, ties in original order", () => {
    expect(col({ orderby: "Status, Id desc" }, "Id")).toEqual([7, 5, 2, 4, 8, 6, 3, 1]);
    expect(col({ orderby: "Status desc" }, "Id")).toEqual([1, 3, 6, 8, 4, 2, 5, 7]);
    expect(col({ orderby: "Active" }, "Id")).toEqual([4, 7, 2, 5, 8, 1, 3, 6]);
  });
  test("text is ordinal (uppercase before lowercase)", () => {
    expect(col({ orderby: "Name" }, "Name")).toEqual([null, "Alpha", "Alpha", "Beta", "Delta", "Zeta", "epsilon", "gamma"]);
    expect(col({ orderby: "tolower(Name)" }, "Name")).toEqual([null, "Alpha", "Alpha", "Beta", "Delta", "epsilon", "gamma", "Zeta"]);
  });
  test("big integers and date-times sort exactly", () => {
    expect(col({ orderby: "BigNum" }, "Id")).toEqual([4, 5, 8, 6, 3, 2, 1, 7]);
    expect(col({ orderby: "Updated" }, "Id")).toEqual([4, 3, 5, 1, 2, 8, 7, 6]);
    expect(col({ orderby: "Start desc" }, "Id")).toEqual([7, 3, 1, 6, 2, 8, 5, 4]);
  });
  test("expressions as keys", () => {
    expect(col({ orderby: "Score mul -1, Id" }, "Id")).toEqual([4, 5, 7, 1, 8, 2, 6, 3]);
  });
  test.each<[string, string, number, string]>([
    ["Nme", "unknown_column", 1, "$orderby: unknown column 'Nme' at 1"],
    ["Name, Sttus desc", "unknown_column", 7, "did you mean Status?"],
    ["Name add 1", "type_mismatch", 6, "'add' needs numbers"],
  ])("%s → %s", (orderby, code, position, fragment) => {
    const e = errorOf(() => run({ orderby }));
    expect({ code: e.code, option: e.option, position: e.position }).toEqual({ code, option: "$orderby", position });
    expect(e.message).toContain(fragment);
  });
});

describe("$skip, $top, $count and the order of evaluation", () => {
  test("filter, then count, then orderby, skip, top, select", () => {
    const r = run({ filter: "Status eq 'Open'", orderby: "Id desc", skip: 1, top: 2, count: true, select: ["Id"] });
    expect(r.count).toBe(4);
    expect(r.table.rows).toEqual([[6], [3]]);
  });
  test("count is absent unless asked for", () => {
    expect(run({ top: 1 }).count).toBeUndefined();
    expect(run({ top: 1, count: false }).count).toBeUndefined();
    expect(run({ top: 1, count: true }).count).toBe(8);
  });
  test("top 0, skip past the end", () => {
    expect(run({ top: 0 }).table.rows).toEqual([]);
    expect(run({ skip: 100 }).table.rows).toEqual([]);
    expect(run({ skip: 7 }).table.rows.map((r) => r[0])).toEqual([8]);
  });
  test("an empty query returns a copy of the table", () => {
    const r = run({});
    expect(r.table.rows).toEqual(ROWS);
    expect(r.table.meta).toEqual(table.meta);
    expect(r.table.rows[0]).not.toBe(table.rows[0]);
  });
  test("the input table is not mutated", () => {
    const t = makeTable();
    const before = JSON.stringify(t);
    const r = applyQuery(t, { filter: "Id gt 2", orderby: "Name desc", select: ["Name", "Id"], top: 3 });
    r.table.rows[0][0] = "changed";
    r.table.columns[0].name = "changed";
    r.table.meta.key = "changed";
    expect(JSON.stringify(t)).toBe(before);
  });
  test("an empty table stays empty, with count 0", () => {
    const r = applyQuery(makeTable(COLUMNS, []), { filter: "Id gt 1", orderby: "Name", count: true });
    expect(r.table.rows).toEqual([]);
    expect(r.count).toBe(0);
  });
});

describe("compileQuery / validateQuery", () => {
  test("validateQuery returns the result's columns without data", () => {
    expect(validateQuery({ select: ["Name", "Budget_Contingency"] }, COLUMNS).map((c) => c.name)).toEqual(["Name", "Budget Contingency"]);
    expect(validateQuery({ filter: "Id gt 1" }, COLUMNS)).toHaveLength(COLUMNS.length);
    expect(() => validateQuery({ filter: "Nope eq 1" }, COLUMNS)).toThrow(QueryError);
  });
  test("a compiled query runs on every refresh of the same dataset", () => {
    const compiled = compileQuery(COLUMNS, { filter: "Active", select: ["Id"] });
    expect(compiled.run(makeTable()).table.rows).toEqual([[1], [3], [6]]);
    expect(compiled.run(makeTable(COLUMNS, ROWS.slice(0, 2))).table.rows).toEqual([[1]]);
  });
  test("a compiled query refuses a table whose columns changed", () => {
    const compiled = compileQuery(COLUMNS, { filter: "Active" });
    const changed = makeTable(COLUMNS.map((c) => (c.name === "Active" ? { ...c, type: "text" as const } : c)));
    expect(errorOf(() => compiled.run(changed)).code).toBe("invalid_query");
  });
  test("a stored query read back as JSON is validated before use", () => {
    expect(errorOf(() => applyQuery(table, JSON.parse('{"filter": 5}') as LocalQuery)).code).toBe("invalid_query");
    expect(errorOf(() => applyQuery(table, JSON.parse('{"top": -2}') as LocalQuery)).code).toBe("invalid_query");
  });
  test("now() is fixed per run and can be injected", () => {
    const q = { filter: "Updated lt now()" };
    expect(applyQuery(table, q, { now: new Date("2025-01-31T08:00:00Z") }).table.rows.map((r) => r[0])).toEqual([3, 5]);
    expect(applyQuery(table, q, { now: Date.parse("2030-01-01T00:00:00Z") }).table.rows).toHaveLength(7);
  });
});

describe("$orderby on computed values (exact decimals, ordered booleans, code points)", () => {
  const cols: Column[] = [
    { name: "id", type: "integer" },
    { name: "budget", type: "decimal" },
    { name: "actual_cost", type: "decimal" },
    { name: "is_capex", type: "boolean" },
    { name: "name", type: "text" },
  ];
  const t = makeTable(cols, [
    [1, 0.3, 0.1, true, "ｚ"],
    [2, 0.2, 0, null, "😀"],
    [3, 0.5, 0.3, false, "z"],
    [4, 1, 0.5, true, "a😀"],
  ]);
  const ids = (orderby: string) => applyQuery(t, { orderby }).table.rows.map((r) => r[0]);

  test("ties of budget sub actual_cost keep table order (0.3 - 0.1 is exactly 0.2)", () => {
    // With doubles 0.3 - 0.1 is 0.19999999999999998 and row 1 would sort after rows 2 and 3.
    expect(ids("budget sub actual_cost desc")).toEqual([4, 1, 2, 3]);
    expect(ids("budget sub actual_cost")).toEqual([1, 2, 3, 4]);
  });

  test("booleans: null, false, true ascending", () => {
    expect(ids("is_capex, id desc")).toEqual([2, 3, 4, 1]);
    expect(ids("is_capex desc")).toEqual([1, 4, 3, 2]);
  });

  test("text by code point: 'z' < 'ｚ' (U+FF5A) < '😀' (U+1F600)", () => {
    expect(ids("name")).toEqual([4, 3, 1, 2]);
  });
});
