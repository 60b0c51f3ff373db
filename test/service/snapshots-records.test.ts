/**
 * Snapshot and record endpoints, retries, timeouts, cancellation, network failure and the
 * capability probe, against the reference service over real HTTP.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient, resourceDedupKey } from "../../src/service";
import { RESOURCE_DEDUP_KEY, SNAPSHOT_ENDPOINTS } from "../../src/contract/contract";
import { ACME_API_SECRET, ACME_TOKEN, acme, capturedErrors, clearLog, control, errorTexts, expectPpmError, globex, recordingFetch, requestLog } from "./helpers";

let svc: ReferenceService;
let noCors: ReferenceService;

beforeAll(async () => {
  [svc, noCors] = await Promise.all([startReferenceService({ port: 0 }), startReferenceService({ port: 0, exposeHeaders: false })]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), noCors?.close()]);
});
beforeEach(async () => {
  await control(svc.url, "reset");
});

const client = (opts: ConstructorParameters<typeof PpmClient>[1] = {}) => new PpmClient(acme(svc.url), { retries: 0, ...opts });

describe("snapshots", () => {
  it.each(SNAPSHOT_ENDPOINTS)("%s: validated rows become a table, unknown fields kept", async (endpoint) => {
    const c = client();
    const rows = await c.fetchSnapshotRows(endpoint);
    expect(rows.length).toBeGreaterThan(0);
    const t = await c.fetchSnapshot(endpoint);
    expect(t.rows).toHaveLength(rows.length);
    expect(t.meta.kind).toBe("snapshot");
    expect(t.meta.etag).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Every field of every row is a column (custom fields and undocumented fields pass through).
    const names = new Set(rows.flatMap((r) => Object.keys(r)));
    expect(new Set(t.columns.map((c) => c.name))).toEqual(names);
    for (const row of t.rows) expect(row).toHaveLength(t.columns.length);
  });

  it("resource rows are typed per the spec", async () => {
    const t = await client().fetchSnapshot("projectResources");
    const type = (n: string) => t.columns.find((c) => c.name === n)?.type;
    expect([type("period_number"), type("fiscal_year"), type("estimate"), type("resource_id"), type("work_type"), type("npt_category_id")]).toEqual([
      "integer", "integer", "decimal", "text", "text", "text",
    ]);
    expect(type("resource_team")).toBe("text");
  });

  it("custom fields: numeric only when the manifest says so; '00420' stays text; no manifest → text", async () => {
    const t = await client().fetchSnapshot("projects");
    const col = (n: string) => t.columns.findIndex((c) => c.name === n);
    expect(t.columns[col("Budget Contingency")].type).toBe("decimal");
    expect(t.columns[col("Cost Center Code")].type).toBe("text");
    expect(t.rows.map((r) => r[col("Cost Center Code")])).toContain("00420");
    expect(t.rows.some((r) => typeof r[col("Budget Contingency")] === "number")).toBe(true);

    // globex has reporting disabled: its manifest is unavailable, so nothing is guessed numeric.
    const gc = new PpmClient(globex(svc.url), { retries: 0 });
    const g = await gc.fetchSnapshot("projects");
    for (const c of g.columns) if (!["project_token", "project_name", "project_type", "status", "start_date"].includes(c.name)) expect(c.type).toBe("text");
    // ...and it is asked for once per client, not once per snapshot.
    await gc.fetchSnapshot("proposals");
    expect((await requestLog(svc.url)).filter((r) => r.path === "/api/bi/v1/manifest" && r.status === 403)).toHaveLength(1);
  });

  it("combined resources remove overlapping non_project_work cells and never project_work rows", async () => {
    const c = client();
    const [p, q] = [await c.fetchSnapshotRows("projectResources"), await c.fetchSnapshotRows("proposalResources")];
    const t = await c.fetchSnapshot("combinedResources");
    const wt = t.columns.findIndex((x) => x.name === "work_type");
    const pw = (rows: Record<string, unknown>[]) => rows.filter((r) => r.work_type === "project_work").length;
    expect(t.rows.filter((r) => r[wt] === "project_work")).toHaveLength(pw(p) + pw(q));
    const nptKeys = [...p, ...q].filter((r) => r.work_type === "non_project_work").map(resourceDedupKey);
    const unique = new Set(nptKeys);
    expect(unique.size).toBeLessThan(nptKeys.length); // the demo data does overlap
    expect(t.rows.filter((r) => r[wt] === "non_project_work")).toHaveLength(unique.size);
    expect(RESOURCE_DEDUP_KEY).toEqual(["work_type", "resource_id", "npt_category_id", "fiscal_year", "period_number"]);
  });

  it("scores keep criteria with no selected option, with null option fields", async () => {
    const rows = await client().fetchSnapshotRows("projectScores");
    const optionKeys = Object.keys(rows[0]).filter((k) => k.startsWith("scoring_criterion_option_"));
    expect(optionKeys.length).toBeGreaterThan(0);
    const unselected = rows.filter((r) => optionKeys.every((k) => r[k] === null));
    expect(unselected.length).toBeGreaterThan(0);
    const t = await client().fetchSnapshot("projectScores");
    expect(t.rows).toHaveLength(rows.length);
  });

  it("the content fingerprint is stable for unchanged data", async () => {
    const c = client();
    expect((await c.fetchSnapshot("proposals")).meta.etag).toBe((await c.fetchSnapshot("proposals")).meta.etag);
    expect((await c.fetchSnapshot("proposals")).meta.etag).not.toBe((await c.fetchSnapshot("projects")).meta.etag);
  });

  it("a snapshot row breaking the documented fields is a schema mismatch with its path", async () => {
    const bad = recordingFetch((url, res) =>
      url.endsWith("/projects/resources") ? new Response(JSON.stringify([{ period: "P1", period_name: "Jan", period_number: "one", fiscal_year: 2026, estimate: 1, work_type: "project_work", snapshot_source: "projects", resource_id: 1 }]), { status: 200 }) : res,
    );
    const e = await expectPpmError(client({ fetch: bad.fetch }).fetchSnapshot("projectResources"), "schema_mismatch");
    expect(e.path).toBe("[0].period_number");
  });

  it("snapshot errors: wrong token, absent route", async () => {
    await expectPpmError(new PpmClient(acme(svc.url, { token: "snap-WRONG-token" }), { retries: 0 }).fetchSnapshot("projects"), "unauthorized");
    await control(svc.url, "absent?groups=snapshot");
    await expectPpmError(client().fetchSnapshot("projectScores"), "route_absent");
  });
});

describe("records", () => {
  it("get, create and update a project and a proposal", async () => {
    const c = client();
    const [first] = await c.fetchSnapshotRows("projects");
    const got = await c.getRecord("project", String(first.project_token));
    expect(got.record.project_token).toBe(first.project_token);
    expect(got.customFields["Budget Contingency"]).toBe(first["Budget Contingency"] ?? null);

    for (const kind of ["project", "proposal"] as const) {
      const created = await c.createRecord(kind, { project_name: `New ${kind}`, custom_fields: { "Budget Contingency": "12,5", Sponsor: "Ann" } });
      expect(created.customFields["Budget Contingency"]).toBe("12.5");
      expect(created.customFields.Sponsor).toBe("Ann");
      const token = String(created.record.project_token);
      const updated = await c.updateRecord(kind, token, { custom_fields: { "Budget Contingency": "-7" } });
      expect(updated.customFields["Budget Contingency"]).toBe("-7");
      const reread = await c.getRecord(kind, token);
      expect(reread.record.project_name).toBe(`New ${kind}`);
      expect(reread.customFields["Budget Contingency"]).toBe("-7");
    }
  });

  it("invalid numeric custom fields are refused before any request", async () => {
    const c = client();
    await c.manifest();
    await clearLog(svc.url);
    for (const v of ["1,000.50", "1e3", " 12", "", "12.345"]) {
      const e = await expectPpmError(c.createRecord("project", { custom_fields: { "Budget Contingency": v } }), "invalid_custom_field");
      expect(e.details?.field).toBe("Budget Contingency");
    }
    await expectPpmError(c.updateRecord("project", "pt_acme_0001", { custom_fields: { "Budget Contingency": 12 as unknown as string } }), "invalid_custom_field");
    expect((await requestLog(svc.url)).filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("the server's 400 is still handled", async () => {
    const e = await expectPpmError(client().createRecord("project", { custom_fields: { "Budget Contingency": "1.000,5" } }, { numericFields: [] }), "invalid_custom_field");
    expect(e.status).toBe(400);
    const u = await expectPpmError(client().createRecord("project", { custom_fields: { "No Such Field": "x" } }), "invalid_custom_field");
    expect(u.status).toBe(400);
  });

  it("record errors: unknown token, missing or wrong credentials, absent route", async () => {
    const nf = await expectPpmError(client().getRecord("project", "pt_nope"), "record_not_found");
    expect(nf.status).toBe(404);
    await expectPpmError(new PpmClient({ id: "x", name: "NoCreds", baseUrl: svc.url, token: ACME_TOKEN }).getRecord("project", "pt_acme_0001"), "record_credentials_missing");
    const w = await expectPpmError(new PpmClient(acme(svc.url, { apiSecret: "wrong-SECRET-value" }), { retries: 0 }).getRecord("proposal", "pp_acme_0001"), "unauthorized");
    expect(errorTexts(w)).not.toContain("wrong-SECRET-value");
    await control(svc.url, "absent?groups=record");
    await expectPpmError(client().getRecord("project", "pt_acme_0001"), "route_absent");
  });
});

describe("retries, timeouts, cancellation and network failure", () => {
  it("retries idempotent GETs on 503 and 429, honouring Retry-After", async () => {
    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/financials.csv")}&status=503&count=2&retryAfter=0`);
    const c = new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1 });
    expect((await c.fetchDataset("financials", { format: "csv" })).status).toBe("updated");
    const log = (await requestLog(svc.url)).filter((r) => r.path === "/api/bi/v1/financials.csv");
    expect(log.map((r) => r.status)).toEqual([503, 503, 200]);

    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/manifest")}&status=429&count=1&retryAfter=1`);
    expect((await c.manifest()).companyId).toBe("acme");

    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/manifest")}&status=429&count=5&retryAfter=120`);
    const e = await expectPpmError(new PpmClient(acme(svc.url), { retries: 3, maxRetryAfterSeconds: 30 }).manifest(), "rate_limited");
    expect(e.retryAfterSeconds).toBe(120);
  });

  it("gives up after the bounded number of retries, and never retries 4xx, 500 or writes", async () => {
    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/projects")}&status=502&count=9&retryAfter=0`);
    const gaveUp = await expectPpmError(new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1 }).fetchDataset("projects", { format: "json" }), "server_error");
    expect(gaveUp.attempts).toBe(3); // so the pane can say the request was already retried
    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/milestones")}&status=500&count=9&retryAfter=0`);
    await expectPpmError(new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1 }).fetchDataset("milestones", { format: "json" }), "server_error");
    await control(svc.url, `fault?path=${encodeURIComponent("/api/v1/proposal")}&status=503&count=9&retryAfter=0`);
    await expectPpmError(new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1 }).createRecord("proposal", { project_name: "x" }), "server_error");
    await expectPpmError(new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1 }).fetchDataset("nope", { format: "json" }), "unknown_dataset");
    const log = await requestLog(svc.url);
    const count = (p: string) => log.filter((r) => r.path === p).length;
    expect(count("/api/bi/v1/projects")).toBe(3);
    expect(count("/api/bi/v1/milestones")).toBe(1);
    expect(log.filter((r) => r.path === "/api/v1/proposal" && r.method === "POST")).toHaveLength(1);
    expect(count("/api/bi/v1/nope")).toBe(1);
  });

  it("times out", async () => {
    await control(svc.url, `delay?path=${encodeURIComponent("/api/bi/v1/manifest")}&ms=3000&count=1`);
    // Retries are allowed, and a second attempt would succeed (the delay applies once): a timeout is still not retried.
    const rec = recordingFetch();
    const e = await expectPpmError(new PpmClient(acme(svc.url), { retries: 2, retryBaseDelayMs: 1, timeoutMs: 150, fetch: rec.fetch }).manifest(), "timeout");
    expect(e.message).toMatch(/did not answer/);
    expect(rec.sent).toHaveLength(1);
  });

  it("is cancelled by an AbortSignal, before or during a call", async () => {
    const pre = new AbortController();
    pre.abort();
    await clearLog(svc.url);
    await expectPpmError(client().manifest({ signal: pre.signal }), "cancelled");
    expect(await requestLog(svc.url)).toEqual([]);

    await control(svc.url, `delay?path=${encodeURIComponent("/api/bi/odata/v1")}&ms=3000&count=1`);
    const ac = new AbortController();
    const p = client().serviceRoot({ signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expectPpmError(p, "cancelled");
  });

  it("cancels a retry wait too", async () => {
    await control(svc.url, `fault?path=${encodeURIComponent("/api/bi/v1/manifest")}&status=503&count=5&retryAfter=30`);
    const ac = new AbortController();
    const p = new PpmClient(acme(svc.url), { retries: 3 }).manifest({ signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await expectPpmError(p, "cancelled");
  });

  it("reports a network failure", async () => {
    const closed = await startReferenceService({ port: 0 });
    const url = closed.url;
    await closed.close();
    const e = await expectPpmError(new PpmClient(acme(url), { retries: 1, retryBaseDelayMs: 1 }).manifest(), "network");
    expect(e.message).toContain(new URL(url).host);
  });
});

describe("capability probe", () => {
  it("finds all groups on a full environment", async () => {
    const p = await client().probe();
    expect(p).toMatchObject({ reporting: true, snapshot: true, record: true });
    expect(p.corsExposesHeaders).toBeUndefined();
  });

  it("distinguishes absent groups", async () => {
    await control(svc.url, "absent?groups=snapshot,record");
    expect(await client().probe()).toMatchObject({ reporting: true, snapshot: false, record: false });
    await control(svc.url, "absent?groups=reporting");
    const p = await client().probe();
    expect(p).toMatchObject({ reporting: false, snapshot: true, record: true });
    expect(p.details.reporting.state).toBe("absent");
  });

  it("reports disabled reporting, refused tokens and missing record credentials", async () => {
    const g = await new PpmClient(globex(svc.url), { retries: 0 }).probe();
    expect(g).toMatchObject({ reporting: false, snapshot: true, record: true });
    expect(g.details.reporting.state).toBe("disabled");
    const w = await new PpmClient(acme(svc.url, { token: "probe-WRONG" }), { retries: 0 }).probe();
    expect(w.details.reporting.state).toBe("unauthorized");
    expect(w.record).toBe("unknown");
    expect(JSON.stringify(w)).not.toContain("probe-WRONG");
    const n = await new PpmClient({ id: "n", name: "n", baseUrl: svc.url, token: ACME_TOKEN }, { retries: 0 }).probe();
    expect(n.record).toBe("unknown");
    expect(n.details.record.state).toBe("no_credentials");
  });

  it("checks CORS for an add-in origin", async () => {
    const ok = await client().checkCors("https://localhost:3000");
    expect(ok.ok).toBe(true);
    expect(ok.missingExposedHeaders).toEqual([]);
    const hidden = await new PpmClient(acme(noCors.url), { retries: 0 }).checkCors("https://localhost:3000");
    expect(hidden.preflightOk).toBe(true);
    expect(hidden.missingExposedHeaders).toEqual(expect.arrayContaining(["ETag", "X-Service-Generated-At"]));
    expect(hidden.ok).toBe(false);
  });
});

describe("token redaction", () => {
  it("no captured error text contains a token or secret", () => {
    expect(capturedErrors.length).toBeGreaterThan(15);
    for (const e of capturedErrors) {
      const t = errorTexts(e);
      for (const s of [ACME_TOKEN, ACME_API_SECRET, "snap-WRONG-token", "wrong-SECRET-value", "demo-globex-token"]) expect(t).not.toContain(s);
    }
  });
});
