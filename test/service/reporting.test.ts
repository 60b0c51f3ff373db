/**
 * Reporting endpoints against the reference service over real HTTP: service root, $metadata,
 * manifest, the three dataset forms, conditional requests and every documented reporting error.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { MemoryValidatorStore, PpmClient, validatorKey } from "../../src/service";
import type { Table as ModelTable } from "../../src/table/model";

type Table = ModelTable;
import {
  ACME_TOKEN,
  GLOBEX_TOKEN,
  acme,
  capturedErrors,
  clearLog,
  control,
  errorTexts,
  expectPpmError,
  globex,
  hideValidatorHeaders,
  recordingFetch,
  requestLog,
  urlOf,
} from "./helpers";

let svc: ReferenceService;
let svc2: ReferenceService;

beforeAll(async () => {
  [svc, svc2] = await Promise.all([startReferenceService({ port: 0 }), startReferenceService({ port: 0 })]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), svc2?.close()]);
});
beforeEach(async () => {
  await Promise.all([control(svc.url, "reset"), control(svc2.url, "reset")]);
});

const client = (opts: ConstructorParameters<typeof PpmClient>[1] = {}) => new PpmClient(acme(svc.url), { retries: 0, ...opts });

async function table(c: PpmClient, key: string, format: "json" | "csv" | "odata"): Promise<ModelTable> {
  const r = await c.fetchDataset(key, { format, conditional: false });
  if (r.status !== "updated") throw new Error("expected a table");
  return r.table;
}

const shape = (t: Table) => ({ columns: t.columns.map((c) => ({ name: c.name, type: c.type })), rows: t.rows });

describe("service root, $metadata and manifest", () => {
  it("lists dataset keys in the service root", async () => {
    const root = await client().serviceRoot();
    expect(root.map((e) => e.name)).toEqual(expect.arrayContaining(["financials", "projects", "risks", "milestones", "timesheets"]));
  });

  it("parses $metadata into typed columns", async () => {
    const md = await client().metadata();
    const fin = md.entitySets.find((s) => s.name === "financials");
    expect(fin?.columns.map((c) => [c.name, c.type])).toEqual([
      ["project_id", "text"],
      ["project_name", "text"],
      ["cost_center_code", "text"],
      ["fiscal_year", "integer"],
      ["period_number", "integer"],
      ["budget", "decimal"],
      ["actual_cost", "decimal"],
      ["variance_pct", "decimal"],
      ["period_start", "date"],
      ["last_updated", "datetime"],
      ["is_capex", "boolean"],
      ["external_ref", "integer"],
    ]);
    expect(fin?.keys.length).toBeGreaterThan(0);
  });

  it("reports listed-but-not-generated datasets as no usable export, zero rows as valid, and custom-field metadata", async () => {
    const m = await client().manifest();
    expect(m.companyId).toBe("acme");
    const by = Object.fromEntries(m.datasets.map((d) => [d.key, d]));
    expect(by.financials.status).toBe("ready");
    expect(by.financials.usable).toBe(true);
    expect(by.risks.status).toBe("no_export");
    expect(by.risks.usable).toBe(false);
    expect(by.milestones.status).toBe("empty");
    expect(by.milestones.usable).toBe(true);
    expect(by.milestones.rowCount).toBe(0);
    expect(by.projects.publishedAt).toMatch(/^\d{4}-/);
    expect(by.projects.pendingChanges.length).toBeGreaterThan(0);
    expect(m.customFields.find((f) => f.name === "Budget Contingency")?.type).toBe("numeric");
  });
});

/**
 * A client whose OData requests ask for the default number form (Int64 and Decimal as JSON numbers):
 * the Accept header loses its IEEE754Compatible parameter on the way, as with a client or proxy
 * that does not send it. Records what was asked for and the Content-Type answered.
 */
function numberFormClient() {
  const seen: Array<{ accept: string; contentType: string }> = [];
  const f: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const accept = (headers.get("accept") ?? "").replace(/;\s*IEEE754Compatible=true/i, "");
    headers.set("accept", accept);
    const res = await fetch(input, { ...init, headers });
    seen.push({ accept, contentType: res.headers.get("content-type") ?? "" });
    return res;
  };
  return { c: client({ fetch: f }), seen };
}

describe("dataset forms", () => {
  it.each(["financials", "projects", "resource_allocations", "milestones"])(
    "%s yields identical tables from JSON, CSV and OData (OData in both number forms)",
    async (key) => {
      const rec = recordingFetch();
      const c = client({ fetch: rec.fetch });
      const [j, csv, od] = [await table(c, key, "json"), await table(c, key, "csv"), await table(c, key, "odata")];
      const plain = numberFormClient();
      const odNumbers = await table(plain.c, key, "odata");
      expect(shape(csv)).toEqual(shape(j));
      expect(shape(od)).toEqual(shape(j));
      expect(shape(odNumbers)).toEqual(shape(j));
      expect(csv.meta.generatedAt).toBe(j.meta.generatedAt);
      expect(od.meta.schemaVersion).toBe(j.meta.schemaVersion);
      expect([j.meta.format, csv.meta.format, od.meta.format]).toEqual(["json", "csv", "odata"]);
      // The client asks for the string form on OData requests, and got it; the other client got numbers.
      const odataSent = rec.sent.filter((r) => r.url.includes("/api/bi/odata/v1/" + key));
      expect(odataSent.map((r) => r.headers.accept)).toEqual(["application/json;odata.metadata=minimal;IEEE754Compatible=true"]);
      const plainData = plain.seen.filter((r) => r.accept.startsWith("application/json;odata"));
      expect(plainData.length).toBeGreaterThan(0);
      for (const r of plainData) expect(r.contentType).toBe("application/json; odata.metadata=minimal; charset=utf-8");
    },
  );

  it("keeps every digit of Int64 beyond 2^53 in both OData number forms", async () => {
    const strings = await table(client(), "financials", "odata");
    const numbers = await table(numberFormClient().c, "financials", "odata");
    const ref = strings.columns.findIndex((c) => c.name === "external_ref");
    expect(strings.rows[0][ref]).toBe("9007199254740993");
    expect(numbers.rows.map((r) => r[ref])).toEqual(strings.rows.map((r) => r[ref]));
    expect(numbers.rows.some((r) => typeof r[ref] === "string" && !Number.isSafeInteger(Number(r[ref])))).toBe(true);
  });

  it("keeps quotes, line breaks inside cells, non-ASCII text, leading zeros and big integers exactly", async () => {
    const t = await table(client(), "financials", "csv");
    const names = t.rows.map((r) => r[1]);
    expect(names).toContain('The "Big" Upgrade');
    expect(names).toContain("Line one\r\nLine two");
    expect(names).toContain("Line one\nLF only");
    expect(names).toContain("Carriage\rreturn only");
    expect(names).toContain("Zürich – Ω 東京");
    expect(names).toContain("=SUM(A1:A9)");
    expect(t.rows.map((r) => r[2]).filter((v) => typeof v === "string" && v.startsWith("00")).length).toBeGreaterThan(0);
    expect(t.rows[0][11]).toBe("9007199254740993");
    expect(t.meta.etag).toMatch(/^"/);
    expect(t.meta.lastModified).toMatch(/GMT$/);
  });

  it("a zero-row dataset is a valid, typed, empty table in every form", async () => {
    const c = client();
    for (const f of ["json", "csv", "odata"] as const) {
      const t = await table(c, "milestones", f);
      expect(t.rows).toEqual([]);
      expect(t.columns.map((x) => x.name)).toEqual(["milestone_id", "project_token", "milestone_name", "due_date", "completed"]);
    }
  });

  it("re-reads the manifest for CSV types when the export's schema version is newer than the cached manifest's", async () => {
    let manifests = 0;
    const rec = recordingFetch(async (url, res) => {
      if (!url.endsWith("/api/bi/v1/manifest") || manifests++ > 0) return res;
      const body = (await res.json()) as { datasets: Array<{ key: string; schema_version: string; columns: Array<{ name: string; type: string }> }> };
      const fin = body.datasets.find((d) => d.key === "financials")!;
      fin.schema_version = "0-stale";
      for (const col of fin.columns) col.type = "Edm.String";
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    });
    const c = client({ fetch: rec.fetch });
    await c.manifest();
    const t = await table(c, "financials", "csv");
    expect(manifests).toBe(2);
    expect(t.columns.find((x) => x.name === "fiscal_year")?.type).toBe("integer");
  });

  it("reports progress", async () => {
    const seen: number[] = [];
    await client().fetchDataset("financials", { format: "csv", onProgress: (n) => seen.push(n) });
    expect(seen[seen.length - 1]).toBe(120);
  });
});

describe("conditional requests", () => {
  it("304 round trip with stored validators, then a new export after regeneration", async () => {
    const store = new MemoryValidatorStore();
    const rec = recordingFetch();
    const c = client({ validators: store, fetch: rec.fetch });
    for (const format of ["json", "csv", "odata"] as const) {
      const first = await c.fetchDataset("financials", { format });
      expect(first.status).toBe("updated");
      expect(first.validators.etag).toMatch(/^"/);
      const second = await c.fetchDataset("financials", { format });
      expect(second.status).toBe("unchanged");
      expect(second.validators.etag).toBe(first.validators.etag);
      const sentSecond = rec.sent[rec.sent.length - 1];
      expect(sentSecond.headers["if-none-match"]).toBe(first.validators.etag);
      expect(sentSecond.headers["if-modified-since"]).toBe(first.validators.lastModified);
    }
    const log = await requestLog(svc.url);
    expect(log.filter((r) => r.status === 304)).toHaveLength(3);

    await control(svc.url, "regenerate?company=acme&dataset=financials");
    const third = await c.fetchDataset("financials", { format: "csv" });
    expect(third.status).toBe("updated");
    const before = store.get(validatorKey(c.scope, "financials", "csv"));
    expect(before?.etag).toBe(third.validators.etag);
    expect(await c.fetchDataset("financials", { format: "csv" })).toMatchObject({ status: "unchanged" });
  });

  it("conditional: false always downloads", async () => {
    const c = client();
    await c.fetchDataset("projects", { format: "json" });
    expect((await c.fetchDataset("projects", { format: "json", conditional: false })).status).toBe("updated");
  });

  it("validators are never reused across companies or environments", async () => {
    await control(svc.url, "reporting?company=globex&enabled=true");
    const store = new MemoryValidatorStore();
    const rec = recordingFetch();
    const a = new PpmClient(acme(svc.url), { validators: store, fetch: rec.fetch, retries: 0 });
    expect((await a.fetchDataset("financials", { format: "csv" })).status).toBe("updated");

    const datasetRequests = () => rec.sent.filter((s) => s.url.endsWith("/api/bi/v1/financials.csv"));
    // Same environment, other company: no validator of acme is sent.
    const g = new PpmClient(globex(svc.url), { validators: store, fetch: rec.fetch, retries: 0 });
    expect((await g.fetchDataset("financials", { format: "csv" })).status).toBe("updated");
    expect(datasetRequests()[1].headers["if-none-match"]).toBeUndefined();

    // Same company and token, other environment: no validator is sent either.
    const a2 = new PpmClient(acme(svc2.url), { validators: store, fetch: rec.fetch, retries: 0 });
    expect((await a2.fetchDataset("financials", { format: "csv" })).status).toBe("updated");
    expect(datasetRequests()[2].headers["if-none-match"]).toBeUndefined();

    expect(new Set(store.keys()).size).toBe(3);
    for (const k of store.keys()) {
      expect(k).not.toContain(ACME_TOKEN);
      expect(k).not.toContain(GLOBEX_TOKEN);
    }
    // Each still gets its own 304.
    for (const c of [a, g, a2]) expect((await c.fetchDataset("financials", { format: "csv" })).status).toBe("unchanged");
  });

  it("falls back to the manifest's generation time when the validator headers are not readable", async () => {
    const rec = recordingFetch((url, res) => (url.includes("/api/bi/v1/financials") || url.includes("/odata/v1/financials") ? hideValidatorHeaders(res) : res));
    const c = client({ fetch: rec.fetch });
    const first = await c.fetchDataset("financials", { format: "csv" });
    expect(first.status).toBe("updated");
    expect(first.validators).toEqual({ etag: null, lastModified: null, generatedAt: "2026-01-15T06:00:00Z" });
    if (first.status === "updated") expect(first.table.meta.generatedAt).toBe("2026-01-15T06:00:00Z");

    await clearLog(svc.url);
    const second = await c.fetchDataset("financials", { format: "csv" });
    expect(second.status).toBe("unchanged");
    const log = await requestLog(svc.url);
    expect(log.map((r) => r.path)).toEqual(["/api/bi/v1/manifest"]);

    await control(svc.url, "regenerate?company=acme&dataset=financials");
    const third = await c.fetchDataset("financials", { format: "csv" });
    expect(third.status).toBe("updated");
    expect(third.validators.generatedAt).not.toBe("2026-01-15T06:00:00Z");
    expect((await c.probe()).corsExposesHeaders).toBe(false);
  });
});

describe("no $ query option is ever sent", () => {
  it("every call's request carries no $ option, and a key cannot smuggle one", async () => {
    const c = client();
    await c.serviceRoot();
    await c.metadata();
    await c.manifest();
    for (const f of ["json", "csv", "odata"] as const) await c.fetchDataset("financials", { format: f });
    await expectPpmError(c.fetchDataset("financials?$top=1", { format: "odata" }), "unknown_dataset");
    await expectPpmError(c.fetchDataset("financials?%24top=1", { format: "json" }), "unknown_dataset");
    await c.fetchSnapshot("combinedResources");
    await c.probe();
    const log = await requestLog(svc.url);
    expect(log.length).toBeGreaterThan(8);
    for (const r of log) {
      expect(r.query).not.toMatch(/\$|%24/i);
      if (r.path.startsWith("/api/bi/")) expect(r.status).not.toBe(400);
    }
  });
});

describe("reporting errors", () => {
  it("401 unauthorized names the company and environment, never the token", async () => {
    const c = new PpmClient(acme(svc.url, { token: "wrong-token-XYZ" }), { retries: 0 });
    const e = await expectPpmError(c.manifest(), "unauthorized");
    expect(e.status).toBe(401);
    expect(e.action).toContain("Acme");
    expect(e.action).toContain(new URL(svc.url).host);
    expect(errorTexts(e)).not.toContain("wrong-token-XYZ");
    await expectPpmError(c.fetchDataset("financials", { format: "csv" }), "unauthorized");
  });

  it("Basic authentication works and is refused with a wrong token", async () => {
    const ok = new PpmClient(acme(svc.url, { authMode: "basic" }), { retries: 0 });
    expect((await ok.manifest()).companyId).toBe("acme");
    const bad = new PpmClient(acme(svc.url, { authMode: "basic", token: "bad-basic-TOKEN" }), { retries: 0 });
    const e = await expectPpmError(bad.serviceRoot(), "unauthorized");
    expect(errorTexts(e)).not.toContain("bad-basic-TOKEN");
  });

  it("403 bi_reporting_disabled", async () => {
    const e = await expectPpmError(new PpmClient(globex(svc.url), { retries: 0 }).fetchDataset("financials", { format: "json" }), "bi_reporting_disabled");
    expect(e.status).toBe(403);
  });

  it("404 unknown_dataset vs 404 not_generated vs absent route", async () => {
    const c = client();
    const u = await expectPpmError(c.fetchDataset("no_such_dataset", { format: "json" }), "unknown_dataset");
    expect(u.datasetKey).toBe("no_such_dataset");
    for (const format of ["json", "csv", "odata"] as const) {
      const n = await expectPpmError(c.fetchDataset("risks", { format }), "not_generated");
      expect(n.status).toBe(404);
      expect(n.datasetKey).toBe("risks");
    }
    // After a successful generation the export is servable.
    await control(svc.url, "regenerate?company=acme&dataset=risks");
    expect((await c.fetchDataset("risks", { format: "json" })).status).toBe("updated");

    await control(svc.url, "absent?groups=reporting");
    const a = await expectPpmError(client().fetchDataset("financials", { format: "csv" }), "route_absent");
    expect(a.status).toBe(404);
    await expectPpmError(client().manifest(), "route_absent");
  });

  it("422 invalid_cached_artifact reports the dataset key and the request time", async () => {
    const at = new Date("2026-03-04T05:06:07.000Z");
    const c = client({ now: () => at });
    const e = await expectPpmError(c.fetchDataset("timesheets", { format: "csv" }), "invalid_cached_artifact");
    expect(e.status).toBe(422);
    expect(e.datasetKey).toBe("timesheets");
    expect(e.requestTime).toBe("2026-03-04T05:06:07.000Z");
    expect(e.action).toContain("timesheets");
    expect(e.action).toContain("2026-03-04T05:06:07.000Z");
  });

  it("400 unsupported_odata_query_options and query_string_token_rejected are read from the body", async () => {
    // The client refuses to send either, so a raw request stands in for a misbehaving intermediary.
    const dollar = recordingFetch(async (_url, res) => res);
    const c = client({
      fetch: (input, init) => dollar.fetch(urlOf(input).replace("/odata/v1/financials", "/odata/v1/financials?%24top=1&%24filter=x"), init),
    });
    const e = await expectPpmError(c.fetchDataset("financials", { format: "odata" }), "unsupported_odata_query_options");
    expect(e.unsupportedOptions).toEqual(["$top", "$filter"]);
    const q = client({ fetch: (input, init) => fetch(urlOf(input).replace("/manifest", "/manifest?Company-Api-Token=x"), init) });
    await expectPpmError(q.manifest(), "query_string_token_rejected");
  });
});

describe("malformed bodies", () => {
  const replaceBody = (match: string, body: string, contentType = "application/json") =>
    recordingFetch((url, res) => (url.includes(match) ? new Response(body, { status: 200, headers: { "content-type": contentType } }) : res)).fetch;

  it("not JSON", async () => {
    const e = await expectPpmError(client({ fetch: replaceBody("/api/bi/v1/financials", "login required") }).fetchDataset("financials", { format: "json" }), "malformed_body");
    expect(e.path).toMatch(/offset|body/);
  });
  it("an HTML page is named as such, not as broken JSON", async () => {
    const e = await expectPpmError(client({ fetch: replaceBody("/api/bi/v1/financials", "<html>login</html>") }).fetchDataset("financials", { format: "json" }), "unexpected_content");
    expect(e.message).toMatch(/HTML page.*not the JSON export of "financials"/);
  });
  it("JSON with the wrong shape names the offending path", async () => {
    const e = await expectPpmError(
      client({ fetch: replaceBody("/api/bi/v1/projects", JSON.stringify({ dataset_key: "projects", columns: [{ name: "n", type: "Edm.Int32" }], rows: [{ n: 1 }, { n: "x" }] })) }).fetchDataset("projects", { format: "json" }),
      "schema_mismatch",
    );
    expect(e.path).toBe("rows[1].n");
    const m = await expectPpmError(client({ fetch: replaceBody("/api/bi/v1/manifest", JSON.stringify({ api_version: "1", company_id: "acme", datasets: {} })) }).manifest(), "schema_mismatch");
    expect(m.path).toBe("datasets");
    const o = await expectPpmError(client({ fetch: replaceBody("/odata/v1/projects", JSON.stringify({ "@odata.context": "x" })) }).fetchDataset("projects", { format: "odata" }), "schema_mismatch");
    expect(o.path).toBe("value");
  });
  it("not CSV: unterminated quote, wrong field count, not UTF-8", async () => {
    // The dataset's real header, so the body gets past the header check and fails on its rows.
    const hdr = (await client().manifest()).datasets.find((d) => d.key === "financials")!.columns.map((c) => c.name).join(",");
    const a = await expectPpmError(client({ fetch: replaceBody("/financials.csv", `${hdr}\r\n1,"2\r\n`, "text/csv") }).fetchDataset("financials", { format: "csv" }), "malformed_body");
    expect(a.path).toMatch(/record/);
    const b = await expectPpmError(client({ fetch: replaceBody("/financials.csv", `${hdr}\r\n1,2,3\r\n`, "text/csv") }).fetchDataset("financials", { format: "csv" }), "schema_mismatch");
    expect(b.path).toBe("record 1");
    const bytes = new Uint8Array([...new TextEncoder().encode(`${hdr}\r\n`), 0xff, 0xfe, 0x0d, 0x0a]);
    const c = client({ fetch: recordingFetch((url, res) => (url.includes(".csv") ? new Response(bytes, { status: 200 }) : res)).fetch });
    await expectPpmError(c.fetchDataset("financials", { format: "csv" }), "malformed_body");
  });
  it("a malformed $metadata", async () => {
    await expectPpmError(client({ fetch: replaceBody("$metadata", "<html/>", "application/xml") }).metadata(), "malformed_body");
  });
});

describe("token redaction", () => {
  it("no captured error text contains a token or secret", () => {
    expect(capturedErrors.length).toBeGreaterThan(15);
    const secrets = [ACME_TOKEN, GLOBEX_TOKEN, "wrong-token-XYZ", "bad-basic-TOKEN", "demo-api-secret", Buffer.from(`company_api_token:${ACME_TOKEN}`).toString("base64")];
    for (const e of capturedErrors) {
      const text = errorTexts(e);
      for (const s of secrets) expect(text).not.toContain(s);
    }
  });
});
