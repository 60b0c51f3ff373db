import {
  PpmError,
  assertSafeUrl,
  buildUrl,
  columnTypeFromEdm,
  combineResources,
  connectionScope,
  environmentKey,
  normalizeBaseUrl,
  normalizeCustomFieldForDisplay,
  normalizeDateTime,
  parseCsdl,
  parseJsonLossless,
  readManifest,
  redactSecrets,
  snapshotTable,
  tableFingerprint,
  toCell,
  validateNumericCustomField,
  validatorKey,
  parseRetryAfter,
  CsvTableBuilder,
  parseCsvText,
} from "../../src/service";

function thrown(fn: () => unknown): PpmError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PpmError) return e;
    throw e;
  }
  throw new Error("expected a PpmError");
}

describe("normalizeBaseUrl", () => {
  it.each([
    ["https://eu.example.com/", "https://eu.example.com"],
    ["https://EU.Example.com///", "https://eu.example.com"],
    ["https://eu.example.com:443/ppm/", "https://eu.example.com/ppm"],
    ["http://localhost:4100/", "http://localhost:4100"],
    ["http://127.0.0.1:4100", "http://127.0.0.1:4100"],
    ["  https://x.example.com  ", "https://x.example.com"],
  ])("%s -> %s", (input, out) => {
    expect(normalizeBaseUrl(input)).toBe(out);
  });

  it.each([
    ["", /empty/],
    ["eu.example.com", /no scheme: write https:\/\/eu\.example\.com\.$/],
    ["localhost:4310", /no scheme: write http:\/\/localhost:4310\.$/],
    ["user:secret-pass@eu.example.com", /absolute/],
    ["http://localhost:4100/api/bi/v1", /ends with \/api\/bi\/v1, a path the add-in adds itself: use http:\/\/localhost:4100\.$/],
    ["https://eu.example.com/ppm/api/bi/odata/v1/financials", /use https:\/\/eu\.example\.com\/ppm\.$/],
    ["http://eu.example.com", /https/],
    ["ftp://eu.example.com", /scheme/],
    ["https://user:secret-pass@eu.example.com", /user name or password/],
    ["https://eu.example.com/?company_api_token=abc", /query/],
    ["https://eu.example.com/?", /query/],
    ["https://eu.example.com/#x", /fragment/],
  ])("rejects %s", (input, why) => {
    const e = thrown(() => normalizeBaseUrl(input));
    expect(e.code).toBe("invalid_base_url");
    expect(e.message).toMatch(why);
    expect(e.message).not.toContain("secret-pass");
  });
});

describe("connection scope", () => {
  const conn = { baseUrl: "https://eu.example.com/", token: "tok-SECRET-123" };
  it("never contains the token, and separates companies and environments", () => {
    const a = connectionScope(conn);
    expect(a).not.toContain("tok-SECRET-123");
    expect(a.startsWith("https://eu.example.com|token:")).toBe(true);
    expect(connectionScope({ ...conn, token: "other" })).not.toBe(a);
    expect(connectionScope(conn, "acme")).toBe("https://eu.example.com|company:acme");
    expect(connectionScope({ ...conn, baseUrl: "https://us.example.com" }, "acme")).not.toBe(connectionScope(conn, "acme"));
    expect(environmentKey("https://eu.example.com//")).toBe("https://eu.example.com");
  });
  it("validator keys differ per environment, company, dataset and format", () => {
    const keys = new Set([
      validatorKey("https://a|company:1", "financials", "csv"),
      validatorKey("https://b|company:1", "financials", "csv"),
      validatorKey("https://a|company:2", "financials", "csv"),
      validatorKey("https://a|company:1", "projects", "csv"),
      validatorKey("https://a|company:1", "financials", "json"),
    ]);
    expect(keys.size).toBe(5);
  });
});

describe("request builder", () => {
  const base = "https://eu.example.com";
  it("builds plain URLs", () => {
    expect(buildUrl(base, "/api/bi/v1/manifest")).toBe("https://eu.example.com/api/bi/v1/manifest");
    expect(buildUrl(base, "/api/bi/odata/v1/$metadata")).toBe("https://eu.example.com/api/bi/odata/v1/$metadata");
    expect(buildUrl(base, "/x", { page: "2" })).toBe("https://eu.example.com/x?page=2");
  });
  it.each([
    [{ $filter: "a eq 1" }],
    [{ $top: "1" }],
    [{ $select: "a", other: "1" }],
    [new URLSearchParams("%24top=1")],
    [{ " $skip": "1" }],
  ])("refuses $ options %#", (q) => {
    const e = thrown(() => buildUrl(base, "/api/bi/odata/v1/financials", q));
    expect(e.code).toBe("invalid_request");
    expect(e.unsupportedOptions?.length).toBeGreaterThan(0);
  });
  it.each([
    "https://h/api?%24filter=x",
    "https://h/api?%2524x=1&%24top=1",
    "https://h/api?a=1&$orderby=b",
    "https://h/api?a=1;$count=true",
    "https://h/api?+%24expand=x",
  ])("assertSafeUrl refuses %s", (url) => {
    if (url.includes("%2524x")) {
      // `%2524` decodes to "%24x": refused too, in case some hop decodes twice.
      expect(thrown(() => assertSafeUrl(url)).unsupportedOptions).toEqual(["$x", "$top"]);
    } else {
      expect(thrown(() => assertSafeUrl(url)).code).toBe("invalid_request");
    }
  });
  it.each(["company_api_token", "Company-Api-Token", "COMPANY_API_TOKEN", "api-secret", "api_token"])("refuses credential parameter %s", (name) => {
    const e = thrown(() => buildUrl(base, "/api/bi/v1/manifest", { [name]: "tok-SECRET" }));
    expect(e.code).toBe("invalid_request");
    expect(e.message).not.toContain("tok-SECRET");
  });
  it("a dataset key cannot smuggle a query string through the path", () => {
    const url = buildUrl(base, `/api/bi/v1/${encodeURIComponent("financials?$top=1")}`);
    expect(url).not.toContain("?");
  });
  it("parses Retry-After in seconds and as a date", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
});

describe("redactSecrets", () => {
  it("removes the secret, its URL-encoded form and its Basic form", () => {
    const token = "a b/c+d";
    const basic = Buffer.from(`company_api_token:${token}`).toString("base64");
    const text = `x ${token} y ${encodeURIComponent(token)} z ${basic}`;
    const out = redactSecrets(text, [token]);
    expect(out).not.toContain(token);
    expect(out).not.toContain(encodeURIComponent(token));
    expect(out).not.toContain(basic);
    expect(out.match(/\[redacted\]/g)).toHaveLength(3);
  });
  it("ignores empty secrets", () => {
    expect(redactSecrets("abc", ["", undefined, null])).toBe("abc");
  });

  const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
  const b64url = (s: string | Buffer) => Buffer.from(s).toString("base64url");
  /** Encoded forms of a token whose Base64, Base64url and unpadded texts are all different. */
  const forms = (token: string): Array<[string, string]> => [
    ["plain", token],
    ["base64", b64(token)],
    ["base64 without padding", b64(token).replace(/=+$/, "")],
    ["base64url", b64url(token)],
    ["base64url with padding", b64url(token) + "=".repeat((4 - (b64url(token).length % 4)) % 4)],
    ["Basic user:token", `company_api_token:${token}`],
    ["Basic header value", `Basic ${b64(`company_api_token:${token}`)}`],
    ["Basic base64url", b64url(`company_api_token:${token}`)],
    ["percent-encoded (every byte)", [...Buffer.from(token)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")],
    ["percent-encoded (lower case)", [...Buffer.from(token)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")],
    ["base64 inside a longer encoded value (offset 1)", b64(`x${token}y`)],
    ["base64url inside a longer encoded value (offset 1)", b64url(`x${token}y`)],
    ["base64 inside a longer encoded value (offset 2)", b64(`{"t":"${token}"}`)],
    ["base64url inside a longer encoded value (offset 2)", b64url(`{"t":"${token}"}`)],
    ["an 8-character piece", token.slice(5, 13)],
    ["a JSON.parse snippet", (() => { try { JSON.parse(`{"a": ${token}}`); } catch (e) { return (e as Error).message; } return ""; })()],
  ];
  // Characters whose Base64 holds "+" and "/" (">>>", "???", "~~~") and a length that needs padding.
  const tokens = ["tok_9f8e7d6c5b4a3f2e1d0c", "tok>>>???~~~x9", "a??~~>>?~>?~~"];

  it("tests with tokens whose Base64, Base64url and unpadded forms differ", () => {
    for (const token of tokens.slice(1)) {
      const std = b64(token);
      const url = b64url(token);
      const unpadded = std.replace(/=+$/, "");
      expect(new Set([std, url, unpadded]).size).toBe(3);
      expect(url).not.toBe(unpadded);
      expect(b64url(`company_api_token:${token}`)).not.toBe(b64(`company_api_token:${token}`).replace(/=+$/, ""));
      // No 8 characters of the URL-safe text appear in the standard text: only its own form can hide it.
      for (let i = 0; i + 8 <= url.length; i++) expect(std).not.toContain(url.slice(i, i + 8));
    }
  });

  describe.each(tokens)("token %s", (token) => {
    it.each(forms(token))("removes the token's %s form", (_name, form) => {
      const out = redactSecrets(`before ${form} after`, [token]);
      expect(out).toContain("[redacted]");
      expect(out.startsWith("before ")).toBe(true);
      expect(out.endsWith(" after")).toBe(true);
      for (let i = 0; i + 8 <= token.length; i++) expect(out).not.toContain(token.slice(i, i + 8));
      for (const encoded of [b64(token), b64(token).replace(/=+$/, ""), b64url(token), b64url(`company_api_token:${token}`), b64(`company_api_token:${token}`).replace(/=+$/, "")]) {
        for (let i = 0; i + 8 <= encoded.length; i++) expect(out).not.toContain(encoded.slice(i, i + 8));
      }
    });
  });
  const token = tokens[0];
  it("keeps text that shares fewer than 8 characters with the token", () => {
    expect(redactSecrets("tok_9f8 and 5b4a3f2", [token])).toBe("tok_9f8 and 5b4a3f2");
  });
  it("joins overlapping matches into one marker", () => {
    expect(redactSecrets(`a ${token}${token} b`, [token])).toBe("a [redacted] b");
  });
  it("hides the start of a token cut short by a clip marker (…), which the 8-character windows miss", () => {
    for (let k = 3; k < 8; k++) expect(redactSecrets(`column "x${token.slice(0, k)}…"`, [token])).toBe('column "x[redacted]…"');
    // Two characters, or text that is no token's start, are left alone.
    expect(redactSecrets(`"${token.slice(0, 2)}…"`, [token])).toBe(`"${token.slice(0, 2)}…"`);
    expect(redactSecrets("a long name…", [token])).toBe("a long name…");
  });
});

describe("values", () => {
  it("maps EDM types", () => {
    expect(["Edm.String", "Edm.Int16", "Edm.Int32", "Edm.Int64", "Edm.Byte", "Edm.SByte", "Edm.Decimal", "Edm.Double", "Edm.Single", "Edm.Boolean", "Edm.Date", "Edm.DateTimeOffset", "Edm.Guid", "Custom.Thing", undefined].map(columnTypeFromEdm)).toEqual([
      "text", "integer", "integer", "integer", "integer", "integer", "decimal", "decimal", "decimal", "boolean", "date", "datetime", "text", "text", "text",
    ]);
  });
  it("converts cells by the model's conventions", () => {
    expect(toCell("", "text")).toBeNull();
    expect(toCell("00420", "text")).toBe("00420");
    expect(toCell("9007199254740993", "integer")).toBe("9007199254740993");
    expect(toCell("-0012", "integer")).toBe(-12);
    expect(toCell("12.50", "decimal")).toBe(12.5);
    expect(toCell("true", "boolean")).toBe(true);
    expect(toCell("2026-02-29".replace("29", "28"), "date")).toBe("2026-02-28");
    expect(() => toCell("2026-02-30", "date")).toThrow(/calendar date/);
    expect(() => toCell("abc", "integer")).toThrow(/integer/);
    expect(toCell("2026-01-01T01:30:00+02:00", "datetime")).toBe("2025-12-31T23:30:00Z");
  });
  it("checks the calendar on canonical and offset date-times alike", () => {
    expect(toCell("2024-02-29T12:00:00Z", "datetime")).toBe("2024-02-29T12:00:00Z");
    expect(() => toCell("2026-02-29T12:00:00Z", "datetime")).toThrow(/valid date-time/);
    expect(() => toCell("2026-04-31T00:00:00+01:00", "datetime")).toThrow(/valid date-time|calendar/);
    expect(() => toCell("2026-01-01T24:00:00Z", "datetime")).toThrow(/valid date-time/);
    expect(toCell("2000-02-29", "date")).toBe("2000-02-29");
    expect(() => toCell("1900-02-29", "date")).toThrow(/calendar date/);
  });
  it("keeps fractional seconds digit for digit", () => {
    expect(normalizeDateTime("2026-01-01T00:00:00.123456-01:00")).toBe("2026-01-01T01:00:00.123456Z");
    expect(normalizeDateTime("2026-01-01T00:00Z")).toBe("2026-01-01T00:00:00Z");
  });
  it("parses JSON without rounding big integers", () => {
    const v = parseJsonLossless('{"a":9007199254740993,"b":1.12345678901234567890,"c":"12345678901234567890","d":[-9007199254740993]}') as Record<string, unknown>;
    expect(v.a).toBe("9007199254740993");
    expect(typeof v.b).toBe("number");
    expect(v.c).toBe("12345678901234567890");
    expect(v.d).toEqual(["-9007199254740993"]);
    expect(() => parseJsonLossless("<html>")).toThrow(/not valid JSON/);
  });
});

describe("CSDL", () => {
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">
  <edmx:DataServices>
    <Schema Namespace="Service.Reporting" xmlns="http://docs.oasis-open.org/odata/ns/edm">
      <!-- a comment with <Property Name="ignored" Type="Edm.String"/> -->
      <EntityType Name="financials">
        <Key><PropertyRef Name="project_id"/></Key>
        <Property Name="project_id" Type="Edm.String" Nullable="false"/>
        <Property Name="amount &amp; more" Type="Edm.Decimal"/>
        <Property Name="n" Type="Edm.Int64" Nullable="false" />
        <Property Name="g" Type="Edm.Guid"/>
      </EntityType>
      <EntityContainer Name="Container">
        <EntitySet Name="financials" EntityType="Service.Reporting.financials"/>
      </EntityContainer>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>`;
  it("reads entity sets with typed columns and keys", () => {
    const md = parseCsdl(xml);
    expect(md.entitySets).toHaveLength(1);
    const set = md.entitySets[0];
    expect(set.name).toBe("financials");
    expect(set.keys).toEqual(["project_id"]);
    expect(set.columns).toEqual([
      { name: "project_id", type: "text", sourceType: "Edm.String", nullable: false },
      { name: "amount & more", type: "decimal", sourceType: "Edm.Decimal", nullable: true },
      { name: "n", type: "integer", sourceType: "Edm.Int64", nullable: false },
      { name: "g", type: "text", sourceType: "Edm.Guid", nullable: true },
    ]);
  });
  it("rejects non-CSDL text", () => {
    expect(() => parseCsdl("<html><body>login</body></html>")).toThrow(/not OData CSDL/);
  });
});

describe("manifest", () => {
  const body = {
    api_version: "1.0",
    company_id: 42,
    extra_top: true,
    datasets: [
      { key: "a", schema_version: 1, formats: ["json"], columns: [{ name: "x", type: "Edm.Int32" }], artifacts: { generated_at: "t", latest_successful_generated_at: "t", row_count: 3 } },
      { key: "b", schema_version: "2", formats: [], columns: [], artifacts: { generated_at: null, latest_successful_generated_at: null, row_count: null } },
      { key: "c", schema_version: "2", formats: [], columns: [], artifacts: { latest_successful_generated_at: "t", row_count: 0 } },
      { key: "d", schema_version: "2", formats: [], columns: [], artifacts: { latest_successful_generated_at: "t", row_count: null } },
      {
        key: "e",
        schema_version: "1",
        formats: [],
        columns: ["y"],
        published_schema: { published_at: "2025-12-01T09:00:00Z", custom_fields: [{ name: "Budget", type: "numeric" }], pending_changes: [{ field: "Z" }] },
        artifacts: { latest_successful_generated_at: "t", row_count: 1 },
      },
    ],
  };
  it("reports statuses; listed-but-not-generated is no_export, zero rows is valid", () => {
    const r = readManifest(body);
    if (!r.ok) throw new Error(r.message);
    const m = r.manifest;
    expect(m.companyId).toBe("42");
    expect(m.datasets.map((d) => [d.key, d.status, d.usable])).toEqual([
      ["a", "ready", true],
      ["b", "no_export", false],
      ["c", "empty", true],
      ["d", "no_export", false],
      ["e", "ready", true],
    ]);
    expect(m.datasets[0].columns).toEqual([{ name: "x", type: "integer", sourceType: "Edm.Int32" }]);
    expect(m.datasets[4].publishedAt).toBe("2025-12-01T09:00:00Z");
    expect(m.datasets[4].pendingChanges).toEqual([{ field: "Z" }]);
    expect(m.customFields.map((f) => [f.name, f.type])).toEqual([["Budget", "numeric"]]);
    expect(m.raw.extra_top).toBe(true);
  });
  it("reports the offending path on a mismatch", () => {
    const r = readManifest({ api_version: "1", company_id: "x", datasets: [{ key: "a", artifacts: { row_count: "many" } }] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.path).toBe("datasets[0].artifacts.row_count");
    const r2 = readManifest({ api_version: "1", company_id: "x" });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.path).toBe("datasets");
  });
});

describe("combineResources", () => {
  const npt = (src: string, extra: Record<string, unknown> = {}) => ({ work_type: "non_project_work", resource_id: 7, npt_category_id: "c1", fiscal_year: 2026, period_number: 1, estimate: 8, snapshot_source: src, ...extra });
  const pw = (src: string) => ({ work_type: "project_work", resource_id: 7, npt_category_id: null, fiscal_year: 2026, period_number: 1, estimate: 4, snapshot_source: src });
  it("dedupes non_project_work by the full key, never project_work", () => {
    const projects = [npt("projects"), pw("projects"), pw("projects")];
    const proposals = [npt("proposals"), npt("proposals", { npt_category_id: "c2" }), npt("proposals", { period_number: 2 }), pw("proposals")];
    const out = combineResources(projects, proposals);
    expect(out.filter((r) => r.work_type === "project_work")).toHaveLength(3);
    expect(out.filter((r) => r.work_type === "non_project_work")).toHaveLength(3);
    expect(out[0].snapshot_source).toBe("projects");
  });
  it("treats numeric and string ids as the same resource", () => {
    expect(combineResources([npt("projects")], [npt("proposals", { resource_id: "7" })])).toHaveLength(1);
  });
});

describe("custom fields", () => {
  it.each(["0", "12", "+12", "-12", "12.5", "12,5", "12.50", "-0,05", "007"])("accepts %s", (v) => {
    expect(validateNumericCustomField(v)).toEqual({ ok: true, normalized: v });
  });
  it.each([
    ["", /empty/],
    [" 12", /spaces/],
    ["12 ", /spaces/],
    ["1,000.50", /thousands/],
    ["1.000,5", /thousands/],
    ["1e3", /scientific/],
    ["12.345", /two decimal/],
    ["12.", /followed/],
    [".5", /before/],
    ["+-1", /sign/],
    ["12a", /digits/],
  ])("rejects %j", (v, why) => {
    const r = validateNumericCustomField(v);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(why);
  });
  it("normalises response values for display, keeping '' and null distinct", () => {
    expect(normalizeCustomFieldForDisplay("")).toBe("");
    expect(normalizeCustomFieldForDisplay(null)).toBeNull();
    expect(normalizeCustomFieldForDisplay(undefined)).toBeNull();
    expect(normalizeCustomFieldForDisplay("12.5")).toBe("12.5");
    expect(normalizeCustomFieldForDisplay("12,5")).toBe("12.5");
    expect(normalizeCustomFieldForDisplay(12.5)).toBe("12.5");
    expect(normalizeCustomFieldForDisplay("1500.1")).toBe("1500.1");
    expect(normalizeCustomFieldForDisplay("00420")).toBe("00420");
  });
});

describe("snapshot tables", () => {
  const rows = [
    { project_token: "p1", "Cost Center Code": "00420", Budget: "12.5", score: 3, flag: true },
    { project_token: "p2", "Cost Center Code": null, Budget: "", extra: "late", score: 2.5 },
  ];
  it("orders columns by first appearance and types custom fields only from the manifest", () => {
    const t = snapshotTable("projects", rows, { numericCustomFields: new Set(["Budget"]), customFields: new Set(["Budget", "Cost Center Code"]), fetchedAt: "now" });
    expect(t.columns.map((c) => [c.name, c.type])).toEqual([
      ["project_token", "text"],
      ["Cost Center Code", "text"],
      ["Budget", "decimal"],
      ["score", "decimal"],
      ["flag", "boolean"],
      ["extra", "text"],
    ]);
    expect(t.rows).toEqual([
      ["p1", "00420", 12.5, 3, true, null],
      ["p2", null, null, 2.5, null, "late"],
    ]);
    expect(t.meta.etag).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(t.meta.etag).toBe(tableFingerprint(t.columns, t.rows));
    // Custom fields are flagged, so the writer can give numeric ones the General format (write-back).
    expect(t.columns.filter((c) => c.customField).map((c) => c.name)).toEqual(["Cost Center Code", "Budget"]);
  });
  it("without a manifest, numeric-looking custom fields stay text", () => {
    const t = snapshotTable("projects", rows, { fetchedAt: "now" });
    expect(t.columns.find((c) => c.name === "Budget")?.type).toBe("text");
    expect(t.rows[0][2]).toBe("12.5");
  });
  it("fingerprints change when a cell changes", () => {
    const a = snapshotTable("projects", rows, { fetchedAt: "1" }).meta.etag;
    const b = snapshotTable("projects", [{ ...rows[0], score: 4 }, rows[1]], { fetchedAt: "2" }).meta.etag;
    expect(a).not.toBe(b);
    expect(snapshotTable("projects", rows, { fetchedAt: "3" }).meta.etag).toBe(a);
  });
});

describe("CSV table builder", () => {
  const meta = { key: "k", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "t" };
  it("types cells from the manifest columns and treats empty cells as missing", () => {
    const b = new CsvTableBuilder([{ name: "n", type: "integer" }, { name: "t", type: "text" }]);
    parseCsvText('n,t,u\r\n1,"a,b",x\r\n,,\r\n').forEach((f, i) => b.add(f, i));
    const t = b.finish(meta);
    expect(t.columns.map((c) => c.type)).toEqual(["integer", "text", "text"]);
    expect(t.rows).toEqual([
      [1, "a,b", "x"],
      [null, null, null],
    ]);
  });
  it("rejects a record with the wrong number of fields, naming it", () => {
    const b = new CsvTableBuilder(undefined);
    expect(() => parseCsvText("a,b\r\n1,2\r\n3\r\n").forEach((f, i) => b.add(f, i))).toThrow(/record 2 has 1 fields/);
  });
  it("rejects a repeated header name and an empty body", () => {
    expect(() => new CsvTableBuilder(undefined).add(["a", "a"], 0)).toThrow(/repeats/);
    expect(() => new CsvTableBuilder(undefined).finish(meta)).toThrow(/no header/);
  });
});
