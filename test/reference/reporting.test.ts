/** Reporting endpoints: credentials and precedence, every error code and body, `$` options, routes. */
import { DATASET_CACHE_CONTROL, ErrorBodySchema, ExportEnvelopeSchema, ManifestSchema, ODataEnvelopeSchema } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { ACME_RECORD_HEADERS, ACME_TOKEN, GLOBEX_TOKEN, acme, basic, control, get, json, start, type ErrorReply, type ExportReply, type ODataReply } from "./helpers";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});

const DATASET_PATHS = ["/api/bi/odata/v1/financials", "/api/bi/v1/financials", "/api/bi/v1/financials.csv"];
const ALL_REPORTING_PATHS = ["/api/bi/odata/v1", "/api/bi/odata/v1/$metadata", "/api/bi/v1/manifest", ...DATASET_PATHS];

async function expectError(res: Response, status: number, code: string): Promise<ErrorReply> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = await json<ErrorReply>(res);
  expect(ErrorBodySchema.parse(body).error).toBe(code);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

describe("credentials", () => {
  test.each(ALL_REPORTING_PATHS)("header credential works on %s", async (path) => {
    const res = await get(svc.url, path, acme());
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  test("query parameter company_api_token works", async () => {
    const res = await get(svc.url, `/api/bi/v1/manifest?company_api_token=${ACME_TOKEN}`);
    expect(res.status).toBe(200);
    expect((await json(res)).company_id).toBe("acme");
  });

  test("Basic with user company_api_token works", async () => {
    const res = await get(svc.url, "/api/bi/v1/manifest", { Authorization: basic("company_api_token", ACME_TOKEN) });
    expect(res.status).toBe(200);
  });

  test("Basic with another user name is 401", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/manifest", { Authorization: basic("admin", ACME_TOKEN) }), 401, "unauthorized");
  });

  test("malformed Authorization is 401", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/manifest", { Authorization: "Bearer " + ACME_TOKEN }), 401, "unauthorized");
    await expectError(await get(svc.url, "/api/bi/v1/manifest", { Authorization: "Basic !!!" }), 401, "unauthorized");
  });

  test.each(ALL_REPORTING_PATHS)("no credentials on %s is 401", async (path) => {
    await expectError(await get(svc.url, path), 401, "unauthorized");
  });

  test("wrong header token is 401", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/financials", { "Company-Api-Token": "nope" }), 401, "unauthorized");
  });

  test("record headers are ignored by reporting (only them → 401)", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/manifest", ACME_RECORD_HEADERS), 401, "unauthorized");
  });

  test("precedence: a valid header wins over a wrong query parameter and wrong Basic", async () => {
    const res = await get(svc.url, "/api/bi/v1/manifest?company_api_token=wrong", {
      "Company-Api-Token": ACME_TOKEN,
      Authorization: basic("company_api_token", "wrong"),
    });
    expect(res.status).toBe(200);
  });

  test("precedence: a wrong header is not rescued by a valid query parameter or Basic", async () => {
    const res = await get(svc.url, `/api/bi/v1/manifest?company_api_token=${ACME_TOKEN}`, {
      "Company-Api-Token": "wrong",
      Authorization: basic("company_api_token", ACME_TOKEN),
    });
    await expectError(res, 401, "unauthorized");
  });

  test("precedence: query parameter wins over Basic", async () => {
    const ok = await get(svc.url, `/api/bi/v1/manifest?company_api_token=${ACME_TOKEN}`, {
      Authorization: basic("company_api_token", "wrong"),
    });
    expect(ok.status).toBe(200);
    const bad = await get(svc.url, `/api/bi/v1/manifest?company_api_token=wrong`, {
      Authorization: basic("company_api_token", ACME_TOKEN),
    });
    await expectError(bad, 401, "unauthorized");
  });

  test("precedence decides the company: header globex beats query acme → 403", async () => {
    const res = await get(svc.url, `/api/bi/v1/manifest?company_api_token=${ACME_TOKEN}`, { "Company-Api-Token": GLOBEX_TOKEN });
    await expectError(res, 403, "bi_reporting_disabled");
  });

  test.each(["Company-Api-Token", "company-api-token", "COMPANY-API-TOKEN", "Company%2DApi%2DToken"])(
    "Company-Api-Token as query parameter (%s) is 400 query_string_token_rejected, even with a valid header",
    async (name) => {
      const res = await get(svc.url, `/api/bi/v1/financials?${name}=${ACME_TOKEN}`, acme());
      const body = await expectError(res, 400, "query_string_token_rejected");
      expect(JSON.stringify(body)).not.toContain(ACME_TOKEN);
    },
  );

  test("query_string_token_rejected comes before the 401 check", async () => {
    await expectError(await get(svc.url, `/api/bi/v1/financials?Company-Api-Token=x`), 400, "query_string_token_rejected");
  });

  test.each(ALL_REPORTING_PATHS)("globex (reporting disabled) gets 403 bi_reporting_disabled on %s", async (path) => {
    await expectError(await get(svc.url, path, { "Company-Api-Token": GLOBEX_TOKEN }), 403, "bi_reporting_disabled");
  });

  test("error bodies never echo the token", async () => {
    const res = await get(svc.url, "/api/bi/v1/financials", { "Company-Api-Token": "secret-wrong-token" });
    expect(await res.text()).not.toContain("secret-wrong-token");
  });
});

describe("$ query options", () => {
  test.each(DATASET_PATHS.concat(["/api/bi/odata/v1", "/api/bi/odata/v1/$metadata", "/api/bi/v1/manifest"]))(
    "$top on %s is 400 listing it",
    async (path) => {
      const body = await expectError(await get(svc.url, `${path}?$top=1`, acme()), 400, "unsupported_odata_query_options");
      expect(body.unsupported_options).toEqual(["$top"]);
    },
  );

  test("percent-encoded %24filter is recognised", async () => {
    const body = await expectError(
      await get(svc.url, "/api/bi/odata/v1/financials?%24filter=budget%20gt%205", acme()),
      400,
      "unsupported_odata_query_options",
    );
    expect(body.unsupported_options).toEqual(["$filter"]);
  });

  test("all options are listed, in order, once each, including unknown ones", async () => {
    const q = "$select=a&%24top=2&$skip=1&$orderby=x&$expand=y&$count=true&$format=json&$top=3&$custom=1&plain=ok";
    const body = await expectError(await get(svc.url, `/api/bi/odata/v1/financials?${q}`, acme()), 400, "unsupported_odata_query_options");
    expect(body.unsupported_options).toEqual(["$select", "$top", "$skip", "$orderby", "$expand", "$count", "$format", "$custom"]);
  });

  test("a $ option without value still counts", async () => {
    const body = await expectError(await get(svc.url, "/api/bi/v1/financials?$count", acme()), 400, "unsupported_odata_query_options");
    expect(body.unsupported_options).toEqual(["$count"]);
  });

  test("non-$ parameters are fine", async () => {
    const res = await get(svc.url, "/api/bi/v1/manifest?foo=bar&x=%20", acme());
    expect(res.status).toBe(200);
  });

  test("401 and 403 come before $ options", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/financials?$top=1"), 401, "unauthorized");
    await expectError(await get(svc.url, "/api/bi/v1/financials?$top=1", { "Company-Api-Token": GLOBEX_TOKEN }), 403, "bi_reporting_disabled");
  });

  test("$ options come before dataset lookup", async () => {
    await expectError(await get(svc.url, "/api/bi/v1/nope?$top=1", acme()), 400, "unsupported_odata_query_options");
  });
});

describe("dataset errors", () => {
  test.each([
    ["/api/bi/v1/nope", "nope"],
    ["/api/bi/v1/nope.csv", "nope"],
    ["/api/bi/odata/v1/nope", "nope"],
    ["/api/bi/v1/manifest.csv", "manifest"],
  ])("%s → 404 unknown_dataset with dataset_key", async (path, key) => {
    const body = await expectError(await get(svc.url, path, acme()), 404, "unknown_dataset");
    expect(body.dataset_key).toBe(key);
  });

  test.each(["/api/bi/v1/risks", "/api/bi/v1/risks.csv", "/api/bi/odata/v1/risks"])("%s → 404 not_generated", async (path) => {
    const body = await expectError(await get(svc.url, path, acme()), 404, "not_generated");
    expect(body.dataset_key).toBe("risks");
  });

  test.each(["/api/bi/v1/timesheets", "/api/bi/v1/timesheets.csv", "/api/bi/odata/v1/timesheets"])(
    "%s → 422 invalid_cached_artifact",
    async (path) => {
      const body = await expectError(await get(svc.url, path, acme()), 422, "invalid_cached_artifact");
      expect(body.dataset_key).toBe("timesheets");
    },
  );

  test("unknown dataset and unknown route are distinguishable", async () => {
    const unknownDataset = await get(svc.url, "/api/bi/v1/nope", acme());
    const unknownRoute = await get(svc.url, "/api/bi/v2/nope", acme());
    expect(unknownDataset.status).toBe(404);
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await unknownRoute.text()).toBe("Not Found");
    expect((await json(unknownDataset)).error).toBe("unknown_dataset");
  });

  test.each(["/", "/api", "/api/bi", "/api/bi/v1", "/api/bi/v1/financials/extra", "/api/bi/odata/v1/financials/x", "/api/bi/odata/v2"])(
    "unknown route %s → plain 404 even without credentials",
    async (path) => {
      const res = await get(svc.url, path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await res.text()).toBe("Not Found");
    },
  );

  test("a wrong method on a reporting path is 405 with Allow", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/manifest", { method: "POST", headers: acme() });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
  });
});

describe("documents", () => {
  test("service document lists every dataset key", async () => {
    const res = await get(svc.url, "/api/bi/odata/v1", acme());
    expect(res.headers.get("odata-version")).toBe("4.0");
    const body = await json<ODataReply>(res);
    expect(body["@odata.context"]).toBe("/api/bi/odata/v1/$metadata");
    expect(body.value.map((v) => v.name)).toEqual(["financials", "projects", "resource_allocations", "risks", "milestones", "timesheets"]);
    expect(body.value.every((v) => v.kind === "EntitySet" && v.url === v.name)).toBe(true);
  });

  test("manifest follows the contract and the demo states", async () => {
    const body = ManifestSchema.parse(await json(await get(svc.url, "/api/bi/v1/manifest", acme())));
    expect(body.company_id).toBe("acme");
    expect(typeof body.api_version).toBe("string");
    const byKey = Object.fromEntries(body.datasets.map((d) => [d.key, d]));
    expect(byKey.financials.artifacts.row_count).toBe(120);
    expect(byKey.financials.columns).toHaveLength(12);
    expect(byKey.financials.formats).toEqual(["json", "csv", "odata"]);
    expect(byKey.financials.links).toEqual({ json: "/api/bi/v1/financials", csv: "/api/bi/v1/financials.csv" });
    expect(byKey.financials.artifacts.latest_successful_generated_at).toBe("2026-01-15T06:00:00Z");
    expect(byKey.risks.artifacts).toEqual({ generated_at: null, latest_successful_generated_at: null, row_count: null });
    expect(byKey.milestones.artifacts.row_count).toBe(0);
    expect(byKey.timesheets.artifacts.row_count).toBeGreaterThan(0);
    expect(byKey.timesheets.artifacts.latest_successful_generated_at).not.toBeNull();
    expect(byKey.projects.published_schema?.custom_fields).toEqual([
      { name: "Budget Contingency", type: "numeric", column: "budget_contingency" },
      { name: "Sponsor", type: "text", column: "sponsor" },
      { name: "Cost Center Code", type: "text", column: "cost_center_code" },
    ]);
    expect(byKey.projects.published_schema?.pending_changes?.length).toBeGreaterThan(0);
    expect(typeof byKey.projects.published_schema?.published_at).toBe("string");
    // Datasets may have different timestamps.
    expect(byKey.resource_allocations.artifacts.generated_at).not.toBe(byKey.financials.artifacts.generated_at);
  });

  test("JSON export envelope and OData envelope carry the same rows", async () => {
    const exp = ExportEnvelopeSchema.parse(await json(await get(svc.url, "/api/bi/v1/financials", acme())));
    const od = await get(svc.url, "/api/bi/odata/v1/financials", acme());
    expect(od.headers.get("odata-version")).toBe("4.0");
    // OData JSON writes Int64 as numbers; quote those a double cannot hold to compare exactly with
    // the export, which writes them as strings.
    const odText = (await od.text()).replace(/(?<=:)-?\d{16,}(?=[,}])/g, (m) => (Number.isSafeInteger(Number(m)) ? m : `"${m}"`));
    const odata = ODataEnvelopeSchema.parse(JSON.parse(odText));
    expect(odata["@odata.context"]).toBe("/api/bi/odata/v1/$metadata#financials");
    expect(exp.dataset_key).toBe("financials");
    expect(exp.schema_version).toBe("3");
    expect(exp.generated_at).toBe("2026-01-15T06:00:00Z");
    expect(exp.row_count).toBe(120);
    expect(exp.rows).toHaveLength(120);
    expect(odata.value).toEqual(exp.rows);
  });

  test("zero-row dataset is served with row_count 0", async () => {
    const exp = await json<ExportReply>(await get(svc.url, "/api/bi/v1/milestones", acme()));
    expect(exp.row_count).toBe(0);
    expect(exp.rows).toEqual([]);
    const csv = await (await get(svc.url, "/api/bi/v1/milestones.csv", acme())).text();
    expect(csv).toBe("milestone_id,project_token,milestone_name,due_date,completed\r\n");
    const od = await json<ODataReply>(await get(svc.url, "/api/bi/odata/v1/milestones", acme()));
    expect(od.value).toEqual([]);
  });
});

describe("dataset headers", () => {
  test.each(DATASET_PATHS)("%s carries the dataset headers", async (path) => {
    const res = await get(svc.url, path, acme());
    expect(res.status).toBe(200);
    expect(res.headers.get("x-service-dataset-key")).toBe("financials");
    expect(res.headers.get("x-service-schema-version")).toBe("3");
    expect(res.headers.get("x-service-generated-at")).toBe("2026-01-15T06:00:00Z");
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(res.headers.get("last-modified")).toBe("Thu, 15 Jan 2026 06:00:00 GMT");
    expect(res.headers.get("cache-control")).toBe(DATASET_CACHE_CONTROL);
    expect(res.headers.get("odata-version")).toBe(path.includes("/odata/") ? "4.0" : null);
    await res.arrayBuffer();
  });

  test("ETag differs per format and per company, and is stable across requests", async () => {
    const tags = await Promise.all(DATASET_PATHS.map(async (p) => (await get(svc.url, p, acme())).headers.get("etag")));
    expect(new Set(tags).size).toBe(3);
    const again = (await get(svc.url, DATASET_PATHS[1], acme())).headers.get("etag");
    expect(again).toBe(tags[1]);
    await control(svc.url, "reporting?company=globex&enabled=true");
    try {
      const globex = await get(svc.url, DATASET_PATHS[1], { "Company-Api-Token": GLOBEX_TOKEN });
      expect(globex.status).toBe(200);
      expect(globex.headers.get("etag")).not.toBe(tags[1]);
      const globexRows = (await json<ExportReply>(globex)).rows;
      const acmeRows = (await json<ExportReply>(await get(svc.url, DATASET_PATHS[1], acme()))).rows;
      expect(globexRows).not.toEqual(acmeRows);
    } finally {
      await control(svc.url, "reporting?company=globex&enabled=false");
    }
  });
});
