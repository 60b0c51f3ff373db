/** splitODataUrl: a pasted OData / Power Query / service URL → clean request + local query. */
import { applyQuery, splitODataUrl } from "../../src/query";
import { errorOf, makeTable } from "./fixture";

const HOST = "https://ppm.example.com";

describe("splitODataUrl", () => {
  test("an OData dataset URL with $filter, $select, $top", () => {
    const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?$filter=Name eq 'Alpha'&$select=Name,Id&$top=100`);
    expect(r).toEqual({
      url: `${HOST}/api/bi/odata/v1/financials`,
      query: { filter: "Name eq 'Alpha'", select: ["Name", "Id"], top: 100 },
      removedCredentials: false,
      baseUrl: HOST,
      dataset: { key: "financials", format: "odata" },
    });
  });

  test("percent-encoded option names and values (%24filter, %20, %27)", () => {
    const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?%24filter=Name%20eq%20%27Alpha%27&%24orderby=Id%20desc`);
    expect(r.query).toEqual({ filter: "Name eq 'Alpha'", orderby: "Id desc" });
    expect(r.url).toBe(`${HOST}/api/bi/odata/v1/financials`);
  });

  test("+ is a space in query values", () => {
    const r = splitODataUrl(`${HOST}/api/bi/v1/financials?$filter=Name+eq+'Alpha'+and+Score+gt+1`);
    expect(r.query.filter).toBe("Name eq 'Alpha' and Score gt 1");
    expect(r.dataset).toEqual({ key: "financials", format: "json" });
  });

  test("an unencoded + in a date-time offset still means +02:00; %2B works too", () => {
    const table = makeTable();
    const a = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?$filter=Updated+eq+2025-01-31T10:00:00+02:00`);
    const b = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?$filter=Updated%20eq%202025-01-31T10:00:00%2B02:00`);
    expect(b.query.filter).toBe("Updated eq 2025-01-31T10:00:00+02:00");
    for (const r of [a, b]) expect(applyQuery(table, r.query).table.rows.map((row) => row[0])).toEqual([1]);
  });

  test("non-$ parameters are kept, raw and in order, including repeats", () => {
    const r = splitODataUrl(`${HOST}/api/bi/v1/financials.csv?a=1&$top=5&b=two%20words&a=2&flag&$skip=1&c=x+y`);
    expect(r.url).toBe(`${HOST}/api/bi/v1/financials.csv?a=1&b=two%20words&a=2&flag&c=x+y`);
    expect(r.query).toEqual({ top: 5, skip: 1 });
    expect(r.dataset).toEqual({ key: "financials", format: "csv" });
  });

  test("OData 4.01 option names without '$' are applied locally and never sent", () => {
    const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?filter=Name eq 'Alpha'&keep=1&OrderBy=Id desc&select=Id,Name&top=3&skip=1&count=true`);
    expect(r.query).toEqual({ filter: "Name eq 'Alpha'", orderby: "Id desc", select: ["Id", "Name"], top: 3, skip: 1, count: true });
    expect(r.url).toBe(`${HOST}/api/bi/odata/v1/financials?keep=1`);
    expect(errorOf(() => splitODataUrl(`${HOST}/api/bi/odata/v1/financials?top=1&$top=2`)).code).toBe("duplicate_option");
    expect(errorOf(() => splitODataUrl(`${HOST}/api/bi/odata/v1/financials?search=blue`)).code).toBe("unsupported_option");
  });

  test("an & inside a quoted $filter literal does not split the option", () => {
    const r = splitODataUrl(`${HOST}/api/bi/v1/financials?$filter=Note eq 'a&b'&x=O'Brien&$top=1`);
    expect(r.query).toEqual({ filter: "Note eq 'a&b'", top: 1 });
    expect(r.url).toBe(`${HOST}/api/bi/v1/financials?x=O'Brien`);
  });

  test("repeated $ options are an error (OData forbids duplicates), also when differently encoded", () => {
    for (const qs of ["$top=10&$top=3", "%24top=10&$TOP=3", "$filter=Id eq 1&%24filter=Id eq 2"]) {
      const e = errorOf(() => splitODataUrl(`${HOST}/api/bi/odata/v1/financials?${qs}`));
      expect(e.code).toBe("duplicate_option");
    }
  });

  test.each(["company_api_token", "Company-Api-Token", "COMPANY_API_TOKEN", "company%5Fapi%5Ftoken", "api_token", "Api-Token", "token", "TOKEN", "access_token", "access-token", "api_secret"])(
    "the %s parameter is dropped and reported, never kept",
    (name) => {
      const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?keep=1&${name}=SECRET-TOKEN-42&$top=2`);
      expect(r.removedCredentials).toBe(true);
      expect(r.url).toBe(`${HOST}/api/bi/odata/v1/financials?keep=1`);
      expect(r.query).toEqual({ top: 2 });
      expect(JSON.stringify(r)).not.toContain("SECRET-TOKEN-42");
    },
  );

  test("a parameter whose name only contains a credential word is kept", () => {
    const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?tokens=1&my_token_count=2&$top=2`);
    expect(r.removedCredentials).toBe(false);
    expect(r.url).toBe(`${HOST}/api/bi/odata/v1/financials?tokens=1&my_token_count=2`);
  });

  test("user:password in the address is dropped and reported", () => {
    const r = splitODataUrl("https://company_api_token:SECRET-TOKEN-42@ppm.example.com/api/bi/v1/financials.csv?$top=1");
    expect(r.url).toBe(`${HOST}/api/bi/v1/financials.csv`);
    expect(r.removedCredentials).toBe(true);
    expect(JSON.stringify(r)).not.toContain("SECRET-TOKEN-42");
  });

  test("errors never echo the address or a token", () => {
    const bad = [
      "https://company_api_token:SECRET-TOKEN-42@ppm.example.com/api/bi/v1/x?$filter=(Id eq 1",
      `${HOST}/api/bi/v1/x?company_api_token=SECRET-TOKEN-42&$filter=Nope eq`,
      `${HOST}/api/bi/v1/x?company_api_token=SECRET-TOKEN-42&$expand=y`,
      "http://[SECRET-TOKEN-42/api/bi/v1/x",
      "not a url SECRET-TOKEN-42",
    ];
    for (const url of bad) {
      const e = errorOf(() => splitODataUrl(url));
      expect(e.message).not.toContain("SECRET-TOKEN-42");
      expect(JSON.stringify(e)).not.toContain("SECRET-TOKEN-42");
    }
  });

  test("an error in an option carries the option and the position in its decoded text", () => {
    const e = errorOf(() => splitODataUrl(`${HOST}/api/bi/odata/v1/financials?%24filter=%28Id%20eq%201`));
    expect({ code: e.code, option: e.option, position: e.position }).toEqual({ code: "syntax", option: "$filter", position: 9 });
    expect(e.message).toBe("$filter: expected ')' at 9 but found end of input");
  });

  test.each<[string, string]>([
    ["$expand=Tasks", "unsupported_option"],
    ["$format=json", "unsupported_option"],
    ["$bogus=1", "unknown_option"],
    ["$top=ten", "invalid_value"],
    ["$filter", "invalid_value"],
  ])("%s → %s", (qs, code) => {
    expect(errorOf(() => splitODataUrl(`${HOST}/api/bi/odata/v1/financials?${qs}`)).code).toBe(code);
  });

  test.each<[string, Partial<ReturnType<typeof splitODataUrl>>]>([
    [`${HOST}/api/bi/v1/manifest?$top=1`, { baseUrl: HOST }],
    [`${HOST}/api/bi/odata/v1/$metadata`, { baseUrl: HOST }],
    [`${HOST}/api/bi/odata/v1`, { baseUrl: HOST }],
    [`${HOST}/tenant-a/api/bi/v1/financials?$top=1`, { baseUrl: `${HOST}/tenant-a`, dataset: { key: "financials", format: "json" } }],
    [`${HOST}/api/bi/v1/my%20data.csv`, { baseUrl: HOST, dataset: { key: "my data", format: "csv" } }],
    [`${HOST}/api/bi/odata/v1/financials/`, { baseUrl: HOST, dataset: { key: "financials", format: "odata" } }],
    [`${HOST}/api/snapshot/projects/resources?$filter=estimate gt 0`, { baseUrl: HOST, snapshot: "projectResources" }],
    [`${HOST}/api/snapshot/proposals`, { baseUrl: HOST, snapshot: "proposals" }],
    ["/api/bi/v1/financials?$top=1", { dataset: { key: "financials", format: "json" } }],
    ["https://elsewhere.example/data?$top=1", {}],
  ])("classifies %s", (url, expected) => {
    const r = splitODataUrl(url);
    expect({ baseUrl: r.baseUrl, dataset: r.dataset, snapshot: r.snapshot }).toEqual({
      baseUrl: expected.baseUrl,
      dataset: expected.dataset,
      snapshot: expected.snapshot,
    });
  });

  test("no query string gives the empty query; the fragment is kept", () => {
    expect(splitODataUrl(`${HOST}/api/bi/v1/financials`)).toMatchObject({ url: `${HOST}/api/bi/v1/financials`, query: {} });
    expect(splitODataUrl(`${HOST}/api/bi/v1/financials?$top=1#part`).url).toBe(`${HOST}/api/bi/v1/financials#part`);
  });

  test("the split query runs locally with the same result as typing it", () => {
    const r = splitODataUrl(`${HOST}/api/bi/odata/v1/financials?$filter=Status%20eq%20'Open'&$orderby=Id%20desc&$top=2&$count=true`);
    const out = applyQuery(makeTable(), r.query);
    expect(out.count).toBe(4);
    expect(out.table.rows.map((row) => row[0])).toEqual([8, 6]);
  });
});
