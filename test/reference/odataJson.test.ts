/**
 * OData JSON Format 4.0 §3–4 on the reference service: `odata.metadata=minimal` on every OData JSON
 * response, Edm.Int64 and Edm.Decimal as JSON numbers by default and as strings when `Accept`
 * carries `IEEE754Compatible=true` (and the Content-Type says so). The spec's error body stays.
 */
import type { ReferenceService } from "../../src/reference/server";
import { odataJsonType, wantsIeee754Compatible } from "../../src/reference/reporting";
import { acme, get, json, start } from "./helpers";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});

const IEEE = "application/json;odata.metadata=minimal;IEEE754Compatible=true";
const NUMERIC = ["fiscal_year", "period_number", "budget", "actual_cost", "variance_pct", "external_ref"];
const INT64_OR_DECIMAL = new Set(["budget", "actual_cost", "variance_pct", "external_ref"]);

/** `"name":<raw JSON value text>` pairs of the first `n` rows, straight from the body text. */
function rawValues(text: string, name: string): string[] {
  return [...text.matchAll(new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*"|[^,}]+)`, "g"))].map((m) => m[1]);
}

describe("OData JSON number forms", () => {
  test("default: Int64 and Decimal are JSON numbers, every digit of Int64 beyond 2^53 in the text", async () => {
    const res = await get(svc.url, "/api/bi/odata/v1/financials", acme());
    expect(res.headers.get("content-type")).toBe("application/json; odata.metadata=minimal; charset=utf-8");
    const text = await res.text();
    for (const name of NUMERIC) {
      const values = rawValues(text, name).filter((v) => v !== "null");
      expect(values.length).toBeGreaterThan(50);
      for (const v of values) expect(v).toMatch(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/);
    }
    const refs = rawValues(text, "external_ref");
    expect(refs.some((v) => !Number.isSafeInteger(Number(v)))).toBe(true);
  });

  test("IEEE754Compatible=true: Int64 and Decimal are strings, other numbers stay numbers; Content-Type says so", async () => {
    const res = await get(svc.url, "/api/bi/odata/v1/financials", acme({ Accept: IEEE }));
    expect(res.headers.get("content-type")).toBe("application/json; odata.metadata=minimal; IEEE754Compatible=true; charset=utf-8");
    const text = await res.text();
    for (const name of NUMERIC) {
      for (const v of rawValues(text, name).filter((x) => x !== "null")) {
        expect(v).toMatch(INT64_OR_DECIMAL.has(name) ? /^"-?\d+(\.\d+)?(e[+-]?\d+)?"$/ : /^-?\d+$/);
      }
    }
  });

  test("both forms carry the same values, digit for digit", async () => {
    const plain = await (await get(svc.url, "/api/bi/odata/v1/financials", acme())).text();
    const ieee = await (await get(svc.url, "/api/bi/odata/v1/financials", acme({ Accept: IEEE }))).text();
    for (const name of NUMERIC) {
      const a = rawValues(plain, name);
      const b = rawValues(ieee, name).map((v) => v.replace(/^"(.*)"$/, "$1"));
      expect(b).toEqual(a);
    }
    // Apart from the quotes around Int64/Decimal values the bodies are identical.
    expect(ieee.replace(/"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"/g, "$1")).toBe(plain.replace(/"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"/g, "$1"));
  });

  test("the two representations have their own ETag, and Vary names Accept", async () => {
    const a = await get(svc.url, "/api/bi/odata/v1/financials", acme());
    const b = await get(svc.url, "/api/bi/odata/v1/financials", acme({ Accept: IEEE }));
    await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
    expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"));
    expect(b.headers.get("vary")).toContain("Accept");
    const again = await get(svc.url, "/api/bi/odata/v1/financials", acme({ Accept: IEEE, "If-None-Match": b.headers.get("etag")! }));
    expect(again.status).toBe(304);
    const other = await get(svc.url, "/api/bi/odata/v1/financials", acme({ "If-None-Match": b.headers.get("etag")! }));
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  test("the JSON export and CSV are not OData and keep their own forms", async () => {
    const res = await get(svc.url, "/api/bi/v1/financials", acme({ Accept: "application/json;IEEE754Compatible=true" }));
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    await res.arrayBuffer();
  });
});

describe("odata.metadata=minimal on every OData JSON response", () => {
  test.each([
    ["service root", "/api/bi/odata/v1", 200],
    ["service root with slash", "/api/bi/odata/v1/", 200],
    ["dataset", "/api/bi/odata/v1/financials", 200],
    ["error: $ option (the spec's body)", "/api/bi/odata/v1/financials?$top=1", 400],
    ["error: unknown dataset", "/api/bi/odata/v1/nope", 404],
  ])("%s", async (_label, path, status) => {
    for (const accept of [undefined, IEEE]) {
      const res = await get(svc.url, path, acme(accept ? { Accept: accept } : {}));
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe(odataJsonType(accept !== undefined));
      const body = await json(res);
      if (status !== 200) {
        expect(Object.keys(body).sort()).toEqual(status === 400 ? ["error", "message", "unsupported_options"] : ["dataset_key", "error", "message"]);
      }
    }
  });

  test("without credentials the 401 on an OData path is OData JSON with the spec's body", async () => {
    const res = await get(svc.url, "/api/bi/odata/v1");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe(odataJsonType(false));
    expect(await json(res)).toMatchObject({ error: "unauthorized" });
  });

  test("$metadata stays XML; non-OData JSON has no odata parameters", async () => {
    const meta = await get(svc.url, "/api/bi/odata/v1/$metadata", acme());
    expect(meta.headers.get("content-type")).toMatch(/^application\/xml/);
    await meta.arrayBuffer();
    const manifest = await get(svc.url, "/api/bi/v1/manifest", acme());
    expect(manifest.headers.get("content-type")).toBe("application/json; charset=utf-8");
    await manifest.arrayBuffer();
  });
});

describe("reading Accept", () => {
  test.each<[string | undefined, boolean]>([
    [undefined, false],
    ["application/json", false],
    [IEEE, true],
    ["application/json; IEEE754Compatible=true", true],
    ["application/json;ieee754compatible=TRUE", true],
    ["text/csv, application/json;IEEE754Compatible=true;q=0.9", true],
    ["*/*;IEEE754Compatible=true", true],
    ["application/json;IEEE754Compatible=false", false],
    ["text/plain;IEEE754Compatible=true", false],
  ])("%s → %s", (accept, want) => {
    expect(wantsIeee754Compatible(accept)).toBe(want);
  });
});
