/** parseQuery / formatQuery / readStoredQuery: the text and storage forms of a LocalQuery. */
import fc from "fast-check";
import { applyQuery, describeQuery, formatQuery, parseQuery, readStoredQuery, type LocalQuery } from "../../src/query";
import { errorOf, makeTable } from "./fixture";

// A fixed seed keeps runs reproducible; failures print the seed and path to replay.
fc.configureGlobal({ seed: 20250131 });

describe("parseQuery", () => {
  test.each<[string, LocalQuery]>([
    ["$filter=Name eq 'x'&$top=10", { filter: "Name eq 'x'", top: 10 }],
    ["?$filter=Name eq 'x'&$top=10", { filter: "Name eq 'x'", top: 10 }],
    ["  ?$top=0  ", { top: 0 }],
    ["%24filter=Name%20eq%20%27x%27&%24top=10", { filter: "Name eq 'x'", top: 10 }],
    ["$filter=Name+eq+'x'", { filter: "Name eq 'x'" }],
    ["$filter=Note eq 'C++'", { filter: "Note eq 'C++'" }],
    ["$filter=Note%20eq%20'C%2B%2B'", { filter: "Note eq 'C++'" }],
    ["$filter=Note eq '100%'", { filter: "Note eq '100%'" }],
    ["$filter=Note%20eq%20'100%25'", { filter: "Note eq '100%'" }],
    ["$filter=Note eq 'a&b'&$top=1", { filter: "Note eq 'a&b'", top: 1 }],
    ["$filter=Note eq 'it''s & more'&$skip=2", { filter: "Note eq 'it''s & more'", skip: 2 }],
    ["$select=Name, \"Budget Contingency\",Budget_x0020_Contingency", { select: ["Name", '"Budget Contingency"', "Budget_x0020_Contingency"] }],
    ["$select=Name,Budget Contingency", { select: ["Name", "Budget Contingency"] }],
    ['$select="a,b",c', { select: ['"a,b"', "c"] }],
    ["$select=*,Name,Name", { select: ["*", "Name", "Name"] }],
    ["$select=*", { select: ["*"] }],
    ["$orderby=Name desc,Id", { orderby: "Name desc,Id" }],
    ["$count=true", { count: true }],
    ["$top=99999999999999999999&$skip=9007199254740993", { top: Number.MAX_SAFE_INTEGER, skip: Number.MAX_SAFE_INTEGER }],
    ["$count=FALSE", { count: false }],
    ["$Filter=Id eq 1&$TOP=2", { filter: "Id eq 1", top: 2 }],
    ["$filter=Id eq 1&&$top=2&", { filter: "Id eq 1", top: 2 }],
    ["Name eq 'x' and Id gt 2", { filter: "Name eq 'x' and Id gt 2" }],
    ["contains(Note,'C++')", { filter: "contains(Note,'C++')" }],
    ["", {}],
    ["?", {}],
    // OData 4.01: the `$` of a system query option is optional, names are case-insensitive
    ["filter=Id eq 1&top=2", { filter: "Id eq 1", top: 2 }],
    ["OrderBy=Name&select=Id,Name&skip=1&count=true", { orderby: "Name", select: ["Id", "Name"], skip: 1, count: true }],
    ["filter=Note eq 'a&b'&top=1", { filter: "Note eq 'a&b'", top: 1 }],
    ["top=5&$skip=10", { top: 5, skip: 10 }],
    [
      "$filter=Id gt 1&$select=Id,Name&$orderby=Id desc&$top=5&$skip=1&$count=true",
      { filter: "Id gt 1", select: ["Id", "Name"], orderby: "Id desc", top: 5, skip: 1, count: true },
    ],
  ])("%s", (text, expected) => {
    expect(parseQuery(text)).toEqual(expected);
  });

  test("URLSearchParams input (already decoded)", () => {
    expect(parseQuery(new URLSearchParams("%24filter=Note+eq+%27C%2B%2B%27&$top=3"))).toEqual({ filter: "Note eq 'C++'", top: 3 });
    expect(errorOf(() => parseQuery(new URLSearchParams("$top=3&foo=bar"))).code).toBe("not_a_query_option");
  });

  test.each<[string, string, string | undefined, number | undefined, string]>([
    ["$top=abc", "invalid_value", "$top", undefined, "$top: expected a whole number of rows"],
    ["$top=-1", "invalid_value", "$top", undefined, "not '-1'"],
    ["$skip=1.5", "invalid_value", "$skip", undefined, "not '1.5'"],
    ["$count=yes", "invalid_value", "$count", undefined, "expected true or false"],
    ["$expand=Tasks", "unsupported_option", "$expand", undefined, "$expand: not supported locally"],
    ["$apply=groupby((Status)", "syntax", "$apply", 17, "expected ')' to close groupby"],
    ["$search=alpha", "unsupported_option", "$search", undefined, "use contains()"],
    ["$format=json", "unsupported_option", "$format", undefined, "not supported locally"],
    ["$inlinecount=allpages", "unsupported_option", "$inlinecount", undefined, "use $count=true"],
    ["$foo=1", "unknown_option", "$foo", undefined, "not an OData query option"],
    ["$filter=Id eq 1&$filter=Id eq 2", "duplicate_option", "$filter", undefined, "given more than once"],
    ["$top=1&$TOP=2", "duplicate_option", "$top", undefined, "given more than once"],
    ["$filter=", "invalid_value", "$filter", undefined, "has no value"],
    ["$orderby=  ", "invalid_value", "$orderby", undefined, "has no value"],
    ["$filter", "invalid_value", "$filter", undefined, "expected '='"],
    ["$filter=Id eq 1&foo=bar", "not_a_query_option", undefined, undefined, "'foo' is not a query option"],
    ["Score=1", "not_a_query_option", undefined, undefined, "the '$' is optional"],
    ["$filter =Id eq 1", "syntax", "$filter", undefined, "no space is allowed before or after '='"],
    ["$filter= Id eq 1", "syntax", "$filter", undefined, "no space is allowed before or after '='"],
    ["filter=Id eq 1&$filter=Id eq 2", "duplicate_option", "$filter", undefined, "more than once"],
    ["expand=Orders", "unsupported_option", "$expand", undefined, "not supported locally"],
    ["$filter=(Id eq 1", "syntax", "$filter", 9, "$filter: expected ')' at 9"],
    ["%24filter=(Id%20eq%201", "syntax", "$filter", 9, "expected ')' at 9"],
    ["$orderby=Name sideways", "syntax", "$orderby", 6, "expected ',', 'asc', 'desc' or end of expression at 6"],
    ["$orderby=Name desc,", "syntax", "$orderby", 11, "expected a sort key at 11"],
    ["$select=Name,,Id", "syntax", "$select", 6, "expected a column name at 6"],
    ["$select=Name,", "syntax", "$select", 6, "but found end of input"],
    ['$select="Budget Contingency', "invalid_literal", "$select", 1, "unterminated quoted column name"],
    ['$select="a"b,c', "syntax", "$select", 1, "malformed quoted column name"],
    ["Name eq", "syntax", "$filter", 8, "expected an operand at 8"],
  ])("%s → %s", (text, code, option, position, fragment) => {
    const e = errorOf(() => parseQuery(text));
    expect({ code: e.code, option: e.option, position: e.position }).toEqual({ code, option, position });
    expect(e.message).toContain(fragment);
  });

  test("a credential parameter is refused without echoing its value", () => {
    const e = errorOf(() => parseQuery("$top=1&company_api_token=SECRET-123"));
    expect(e.code).toBe("not_a_query_option");
    expect(e.message).not.toContain("SECRET-123");
    expect(JSON.stringify(e)).not.toContain("SECRET-123");
  });
});

describe("formatQuery / describeQuery", () => {
  const samples: LocalQuery[] = [
    {},
    { filter: "Name eq 'x'", top: 10 },
    { filter: "Note eq 'C++' or Note eq 'a&b' or Note eq '100%' or Note eq '#1'", count: true },
    { filter: "contains(Note,'C++')" },
    { filter: "Note eq '%41'" },
    { select: ["Name", '"Budget Contingency"', "Cost_Center_Code"], orderby: "Name desc, Id", skip: 3, top: 0 },
    { select: ["*"], count: false },
  ];
  test.each(samples.map((q) => [JSON.stringify(q), q] as const))("round-trips %s", (_label, q) => {
    expect(parseQuery(formatQuery(q))).toEqual(q);
    expect(parseQuery(formatQuery(q, { encode: true }))).toEqual(q);
  });

  test("select names holding a comma or a quote are written quoted and name the same column", () => {
    const q: LocalQuery = { select: ["a,b", 'say "hi"', "plain name"] };
    const back = parseQuery(formatQuery(q));
    expect(back).toEqual({ select: ['"a,b"', '"say ""hi"""', "plain name"] });
    const cols = ["a,b", 'say "hi"', "plain name"].map((name) => ({ name, type: "text" as const }));
    const t = makeTable(cols, [["1", "2", "3"]]);
    expect(applyQuery(t, back).table.rows).toEqual(applyQuery(t, q).table.rows);
    expect(applyQuery(t, back).table.columns.map((c) => c.name)).toEqual(["a,b", 'say "hi"', "plain name"]);
  });

  test("readable form keeps spaces; encoded form has none", () => {
    expect(formatQuery({ filter: "Name eq 'x'", top: 10 })).toBe("$filter=Name eq 'x'&$top=10");
    expect(formatQuery({ filter: "Name eq 'x'", top: 10 }, { encode: true })).toBe("$filter=Name%20eq%20'x'&$top=10");
  });

  test("round-trips any text literal (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 12 }), fc.boolean(), (s, encode) => {
        const q: LocalQuery = { filter: `Note eq '${s.split("'").join("''")}'`, top: 1 };
        expect(parseQuery(formatQuery(q, { encode }))).toEqual(q);
      }),
      { numRuns: 300 },
    );
  });

  test("describeQuery shows one option per line", () => {
    expect(describeQuery({ top: 5, filter: "Id gt 1" })).toBe("$filter=Id gt 1\n$top=5");
    expect(describeQuery({})).toContain("whole table");
  });
});

describe("readStoredQuery", () => {
  test("accepts a valid stored query and returns a copy", () => {
    const stored = { filter: "Id gt 1", select: ["Id"], orderby: "Id", top: 2, skip: 0, count: true };
    const q = readStoredQuery(JSON.parse(JSON.stringify(stored)));
    expect(q).toEqual(stored);
  });
  test.each<[unknown, string]>([
    [null, "invalid_query"],
    ["$top=1", "invalid_query"],
    [{ filter: 1 }, "invalid_query"],
    [{ orderBy: "Id" }, "invalid_query"],
    [{ top: -1 }, "invalid_query"],
    [{ top: 1.5 }, "invalid_query"],
    [{ select: [] }, "invalid_value"],
    [{ filter: "Id eq" }, "syntax"],
    [{ orderby: "Id up" }, "syntax"],
  ])("rejects %j", (value, code) => {
    const e = errorOf(() => readStoredQuery(value));
    expect(e.code).toBe(code);
  });
});
