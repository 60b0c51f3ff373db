/**
 * Secret-redaction sweep (issue #14, item 7): a hostile service echoes the caller's token in plain,
 * Base64, Base64url, percent-encoded and Basic form on every error path there is (documented
 * errors, transport faults, unreadable and foreign bodies, stalls, resets, redirects, snapshots,
 * records). Each path is run through the service client, through a workbook refresh (stored binding,
 * saved file, the pane's error view) and through the CLI as a user runs it; none of the token's
 * forms, and no 8-character piece of it, may appear anywhere.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient, PpmError, type DatasetFormat } from "../../src/service";
import { sourceFromClient } from "../../src/refresh/source";
import { importSource } from "../../src/workbook/importSource";
import { refreshTable } from "../../src/workbook/refresh";
import { describeError, describeFailure } from "../../src/taskpane/errorView";
import { Workbook, createRequestContext, serializeWorkbook } from "../../src/emulator";
import { csvRecords, echoAll, echoedForms, startHostileService, type Behaviour, type HostileService } from "../helpers/hostileService";
import { CONTROL } from "../helpers/control";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
// Characters that every encoding changes: + / = space % ! ~ and a long enough body. Every other
// 3-byte group is "~~~" (Base64 "fn5+"), and the length needs padding, so Base64, Base64url and the
// unpadded text are three different strings, and no 8 characters of the Base64url text appear in
// the Base64 text (checked below: forms that coincide would let one hide the other's leak).
const TOKEN = "tk+~~~Vq9~~~/Lm~~~=Zx~~~ 4%~~~hJ!~~~r8W~~~c_2~~~N";
const API_AUTH = "sweep-api-auth";
const API_SECRET = "sweep-api-secret";

let ref: ReferenceService;
let svc: HostileService;

beforeAll(async () => {
  ref = await startReferenceService({ port: 0 });
  // Upstream sees the demo credentials; the client only ever knows TOKEN.
  svc = await startHostileService(ref.url, { upstreamCredentials: { "Company-Api-Token": "demo-acme-token", "api-token": "demo-acme-token", "api-auth": "demo-api-auth", "api-secret": "demo-api-secret" } });
});
afterAll(async () => {
  await svc?.close();
  await ref?.close();
});

/** Every way the token could show: its forms, and any 8 characters of the token or of its Base64 text. */
function leaksIn(text: string): string[] {
  const found: string[] = [];
  const forms = echoedForms(TOKEN);
  const all = [...Object.values(forms), encodeURIComponent(TOKEN), forms.percent.toLowerCase(), forms.base64.replace(/=+$/, "")];
  for (const f of all) if (text.includes(f)) found.push(f);
  for (const source of [TOKEN, forms.base64.replace(/=+$/, ""), forms.base64url, forms.basicUrl]) {
    for (let i = 0; i + 8 <= source.length; i++) if (text.includes(source.slice(i, i + 8))) found.push(source.slice(i, i + 8));
  }
  return [...new Set(found)];
}

function expectNoLeak(where: string, text: string): void {
  expect({ where, leaks: leaksIn(text) }).toEqual({ where, leaks: [] });
}

const echo = (t: string | null) => echoAll(t);
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ status, headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });

interface Scenario {
  name: string;
  format: DatasetFormat;
  behaviour: Behaviour;
  code: string;
}

const P: Record<DatasetFormat, string> = { csv: "/api/bi/v1/financials.csv", json: "/api/bi/v1/financials", odata: "/api/bi/odata/v1/financials" };

const realHeader = async (req: Parameters<Behaviour>[0]) => csvRecords((await req.upstream({ unconditional: true })).body.toString("utf8"))[0];

/** Every error path of a dataset request, each answered with the token echoed back. */
const SCENARIOS: Scenario[] = [
  { name: "401 unauthorized", format: "csv", code: "unauthorized", behaviour: (r) => json(401, { error: "unauthorized", message: echo(r.token) }) },
  { name: "403 bi_reporting_disabled", format: "json", code: "bi_reporting_disabled", behaviour: (r) => json(403, { error: "bi_reporting_disabled", message: echo(r.token) }) },
  { name: "403 forbidden", format: "csv", code: "forbidden", behaviour: (r) => json(403, { message: echo(r.token) }) },
  { name: "404 unknown_dataset", format: "csv", code: "unknown_dataset", behaviour: (r) => json(404, { error: "unknown_dataset", message: echo(r.token), dataset_key: echo(r.token) }) },
  { name: "404 not_generated", format: "odata", code: "not_generated", behaviour: (r) => json(404, { error: "not_generated", message: echo(r.token) }) },
  { name: "404 route absent", format: "csv", code: "route_absent", behaviour: (r) => ({ status: 404, headers: { "Content-Type": "text/plain" }, body: echo(r.token) }) },
  { name: "400 unsupported options", format: "odata", code: "unsupported_odata_query_options", behaviour: (r) => json(400, { error: "unsupported_odata_query_options", message: echo(r.token), unsupported_options: [echo(r.token)] }) },
  { name: "400 query_string_token_rejected", format: "csv", code: "query_string_token_rejected", behaviour: (r) => json(400, { error: "query_string_token_rejected", message: echo(r.token) }) },
  { name: "422 invalid_cached_artifact", format: "json", code: "invalid_cached_artifact", behaviour: (r) => json(422, { error: "invalid_cached_artifact", message: echo(r.token), dataset_key: echo(r.token) }) },
  { name: "429 beyond the longest wait", format: "csv", code: "rate_limited", behaviour: (r) => json(429, { message: echo(r.token) }, { "Retry-After": "9999" }) },
  { name: "500 with a text body", format: "csv", code: "server_error", behaviour: (r) => ({ status: 500, headers: { "Content-Type": "text/plain" }, body: echo(r.token) }) },
  { name: "503 with a JSON body", format: "json", code: "server_error", behaviour: (r) => json(503, { message: echo(r.token), detail: { token: echo(r.token) } }) },
  { name: "418 nested body", format: "csv", code: "http_error", behaviour: (r) => json(418, { message: echo(r.token), nested: { deep: [echo(r.token), { again: echo(r.token) }] }, [echo(r.token)]: 1 }) },
  { name: "200 HTML page", format: "csv", code: "unexpected_content", behaviour: (r) => ({ headers: { "Content-Type": "text/html" }, body: `<!DOCTYPE html><html><body>${echo(r.token)}</body></html>` }) },
  { name: "200 JSON error body on CSV", format: "csv", code: "unexpected_content", behaviour: (r) => json(200, { error: echo(r.token), message: echo(r.token) }) },
  { name: "200 JSON error body on JSON", format: "json", code: "unexpected_content", behaviour: (r) => json(200, { error: echo(r.token), message: echo(r.token) }) },
  { name: "200 CSV with a foreign header", format: "csv", code: "unexpected_content", behaviour: (r) => ({ headers: { "Content-Type": "text/csv" }, body: `"${echo(r.token)}",b\r\n1,2\r\n` }) },
  { name: "200 X-Service-Dataset-Key echoing", format: "csv", code: "unexpected_content", behaviour: async (r) => ({ ...(await r.upstream({ unconditional: true })), headers: { "Content-Type": "text/csv", "X-Service-Dataset-Key": echo(r.token) } }) },
  { name: "200 JSON export of another dataset", format: "json", code: "unexpected_content", behaviour: (r) => json(200, { dataset_key: echo(r.token), row_count: 0, columns: [], rows: [] }) },
  { name: "200 not JSON (parse snippet)", format: "json", code: "malformed_body", behaviour: (r) => ({ headers: { "Content-Type": "application/json" }, body: `{"dataset_key":"financials","rows":[${r.token}${echo(r.token)}]}` }) },
  { name: "200 JSON cell of the wrong type", format: "json", code: "schema_mismatch", behaviour: async (r) => {
    const up = await r.upstream({ unconditional: true });
    const body = JSON.parse(up.body.toString("utf8")) as { rows: Array<Record<string, unknown>> };
    body.rows[3].fiscal_year = `${r.token}${echo(r.token)}`;
    return { ...up, body: JSON.stringify(body) };
  } },
  { name: "200 OData cell of the wrong type", format: "odata", code: "schema_mismatch", behaviour: async (r) => {
    const up = await r.upstream({ unconditional: true });
    const body = JSON.parse(up.body.toString("utf8")) as { value: Array<Record<string, unknown>> };
    body.value[0].fiscal_year = `${r.token} ${echo(r.token)}`;
    return { ...up, body: JSON.stringify(body) };
  } },
  { name: "200 CSV cell of the wrong type", format: "csv", code: "schema_mismatch", behaviour: async (r) => {
    const up = await r.upstream({ unconditional: true });
    const recs = csvRecords(up.body.toString("utf8"));
    const hdr = recs[0].split(",");
    const fy = hdr.indexOf("fiscal_year");
    const cells = recs[1].split(",");
    cells[fy] = `"${r.token}"`;
    return { ...up, body: `${recs[0]}\r\n${cells.join(",")}\r\n` };
  } },
  { name: "200 CSV record of the wrong width", format: "csv", code: "schema_mismatch", behaviour: async (r) => ({ headers: { "Content-Type": "text/csv" }, body: `${await realHeader(r)}\r\n"${echo(r.token)}",x\r\n` }) },
  { name: "200 CSV unterminated quote", format: "csv", code: "malformed_body", behaviour: async (r) => ({ headers: { "Content-Type": "text/csv" }, body: `${await realHeader(r)}\r\n"${echo(r.token)}\r\n` }) },
  { name: "200 CSV cut at a row boundary", format: "csv", code: "incomplete_export", behaviour: async (r) => {
    const up = await r.upstream({ unconditional: true });
    return { ...up, body: `${csvRecords(up.body.toString("utf8")).slice(0, 30).join("\r\n")}\r\n` };
  } },
  { name: "304 without validators", format: "csv", code: "unexpected_not_modified", behaviour: (r) => ({ status: 304, headers: { ETag: `"${echo(r.token)}"` } }) },
  { name: "a body that stalls", format: "csv", code: "timeout", behaviour: (r) => ({ headers: { "Content-Type": "text/csv" }, body: echo(r.token), stall: true }) },
  { name: "a connection reset mid-body", format: "json", code: "network", behaviour: (r) => ({ headers: { "Content-Type": "application/json" }, body: `{"rows":["${echo(r.token)}`.padEnd(70_000, " "), reset: true }) },
  { name: "a redirect carrying the token", format: "csv", code: "redirected", behaviour: (r) => ({ status: 302, headers: { Location: `http://127.0.0.1:9/?t=${encodeURIComponent(r.token ?? "")}&b=${echo(r.token).replace(/[ |]/g, "")}` } }) },
];

function cliClient() {
  return { id: "sweep", name: "Sweep Co", baseUrl: svc.url, token: TOKEN, apiAuth: API_AUTH, apiSecret: API_SECRET };
}

/** Every text an error carries: message, action, path, details, toJSON(), its string and stack. */
function errorTexts(e: unknown): string {
  if (!(e instanceof PpmError)) return `not a PpmError: ${String(e)}`;
  return [e.message, e.action, e.path ?? "", JSON.stringify(e.details ?? {}), JSON.stringify(e.toJSON()), String(e), e.stack ?? ""].join("\n");
}

describe("secret redaction on every error path", () => {
  beforeEach(async () => {
    svc.clear();
    await fetch(`${ref.url}/__control/reset`, { method: "POST", headers: CONTROL });
  });

  it("(control) the token's Base64, Base64url and unpadded forms all differ", () => {
    const f = echoedForms(TOKEN);
    expect(new Set([f.base64, f.base64url, f.base64.replace(/=+$/, "")]).size).toBe(3);
    expect(f.basicUrl).not.toBe(f.basic.replace(/=+$/, ""));
    for (let i = 0; i + 8 <= f.base64url.length; i++) expect(f.base64).not.toContain(f.base64url.slice(i, i + 8));
    // After the constant "company_api_token:" prefix (24 Base64 characters), the same for Basic.
    for (let i = 24; i + 8 <= f.basicUrl.length; i++) expect(f.basic).not.toContain(f.basicUrl.slice(i, i + 8));
  });

  it("(control) the hostile service really echoes every form of the token", async () => {
    svc.on(P.csv, SCENARIOS[0].behaviour);
    const r = await fetch(`${svc.url}${P.csv}`, { headers: { "Company-Api-Token": TOKEN } });
    const text = await r.text();
    for (const f of Object.values(echoedForms(TOKEN))) expect(text).toContain(JSON.stringify(f).slice(1, -1));
    expect(leaksIn(text).length).toBeGreaterThan(5);
  });

  it.each(SCENARIOS.map((s) => [s.name, s] as const))("service client: %s", async (_name, s) => {
    svc.on(P[s.format], s.behaviour);
    // A short timeout only where the scenario is the stall: elsewhere a loaded machine's pause must not turn the code into "timeout".
    const client = new PpmClient(cliClient(), { retries: 0, timeoutMs: s.code === "timeout" ? 500 : 5_000 });
    const e = await client.fetchDataset("financials", { format: s.format, conditional: false }).catch((x: unknown) => x);
    expect((e as PpmError).code).toBe(s.code);
    expectNoLeak(`${s.name}: error`, errorTexts(e));
    const view = describeError(e, { connectionId: "sweep", secrets: [] });
    expectNoLeak(`${s.name}: error view`, JSON.stringify(view));
  });

  it("workbook refresh: stored failures, the saved file and the pane's view of them", async () => {
    const wb = new Workbook();
    const client = (timeoutMs = 5_000) => new PpmClient(cliClient(), { retries: 0, timeoutMs });
    const ids: Record<DatasetFormat, string> = { csv: "", json: "", odata: "" };
    for (const format of ["csv", "json", "odata"] as const) {
      const r = await importSource(createRequestContext(wb), sourceFromClient(client()), {
        source: { kind: "dataset", key: "financials", format },
        connection: { id: "sweep", baseUrl: svc.url },
        companyId: "acme",
        secrets: [TOKEN],
        target: { sheetName: `fin_${format}` },
      });
      ids[format] = r.binding.id;
    }
    for (const s of SCENARIOS) {
      svc.clear();
      svc.on(P[s.format], s.behaviour);
      // No secrets handed to the engine: redaction must not depend on the caller remembering them.
      const report = await refreshTable(createRequestContext(wb), ids[s.format], sourceFromClient(client(s.code === "timeout" ? 500 : 5_000)), {});
      // The binding has validators, so a 304 answers its conditional request: valid, "unchanged"
      // (the echoed ETag must still not be stored).
      const expected = s.code === "unexpected_not_modified" ? { outcome: "unchanged", code: undefined } : { outcome: "failed", code: s.code };
      expect({ name: s.name, outcome: report.outcome, code: report.failure?.code }).toEqual({ name: s.name, ...expected });
      expectNoLeak(`${s.name}: refresh report`, JSON.stringify({ ...report, binding: report.binding }));
      expectNoLeak(`${s.name}: saved workbook`, serializeWorkbook(wb));
      if (report.failure) expectNoLeak(`${s.name}: error view`, JSON.stringify(describeFailure(report.failure, {})));
    }
  }, 60_000);

  it("snapshot and record paths", async () => {
    const client = new PpmClient(cliClient(), { retries: 0, timeoutMs: 5_000 });
    const texts: string[] = [];
    svc.on("/api/snapshot/projects", (r) => json(200, [{ project_token: echo(r.token), name: 5, [echo(r.token)]: echo(r.token) }, 7]));
    texts.push(errorTexts(await client.fetchSnapshot("projects").catch((x: unknown) => x)));
    svc.on("/api/snapshot/projects", (r) => ({ status: 500, body: echo(r.token) }));
    texts.push(errorTexts(await client.fetchSnapshot("projects").catch((x: unknown) => x)));
    svc.on("/api/v1/project", (r) => json(400, { message: `${echo(r.token)} custom` }));
    texts.push(errorTexts(await client.updateRecord("project", "pt_acme_0001", { custom_fields: { Sponsor: "x" } }, { numericFields: [] }).catch((x: unknown) => x)));
    svc.on("/api/v1/project", (r) => json(404, { message: echo(r.token) }));
    texts.push(errorTexts(await client.getRecord("project", "pt_acme_0001", { customFieldNames: [] }).catch((x: unknown) => x)));
    svc.on("/api/bi/v1/manifest", (r) => json(200, { api_version: echo(r.token), company_id: 1, datasets: echo(r.token) }));
    texts.push(errorTexts(await client.manifest().catch((x: unknown) => x)));
    svc.on("/api/bi/v1/manifest", (r) => ({ headers: { "Content-Type": "application/json" }, body: `{"a": ${r.token}}` }));
    texts.push(errorTexts(await client.manifest().catch((x: unknown) => x)));
    expect(texts.every((t) => !t.startsWith("not a PpmError"))).toBe(true);
    texts.forEach((t, i) => expectNoLeak(`snapshot/record path ${i}`, t));
  });
});

describe("secret redaction in CLI output", () => {
  // Each CLI run is a process; three hostile services let three paths run at once.
  let pool: HostileService[] = [];
  beforeAll(async () => {
    const creds = { "Company-Api-Token": "demo-acme-token", "api-token": "demo-acme-token", "api-auth": "demo-api-auth", "api-secret": "demo-api-secret" };
    pool = await Promise.all([0, 1, 2].map(() => startHostileService(ref.url, { upstreamCredentials: creds })));
  });
  afterAll(async () => {
    await Promise.all(pool.map((p) => p.close()));
  });
  beforeEach(async () => {
    await fetch(`${ref.url}/__control/reset`, { method: "POST", headers: CONTROL });
  });

  function ppm(args: string[]): Promise<string> {
    return new Promise((resolve) => {
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, PPM_TOKEN: TOKEN, PPM_API_AUTH: API_AUTH, PPM_API_SECRET: API_SECRET };
      execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        resolve(`exit ${err ? String(err.code) : 0}\n${stdout}\n${stderr}`);
      });
    });
  }

  it("ppm export on every error path", async () => {
    for (let at = 0; at < SCENARIOS.length; at += pool.length) {
      const batch = SCENARIOS.slice(at, at + pool.length);
      const outputs = await Promise.all(
        batch.map((s, i) => {
          const host = pool[i];
          host.clear();
          host.on(P[s.format], s.behaviour);
          return ppm(["export", "financials", "--env", host.url, "--format", s.format, "--retries", "0", "--timeout", "1500"]);
        }),
      );
      batch.forEach((s, i) => {
        expect({ name: s.name, exit: outputs[i].split("\n")[0] }).not.toEqual({ name: s.name, exit: "exit 0" });
        expectNoLeak(`CLI export: ${s.name}`, outputs[i]);
      });
    }
  }, 180_000);

  it("ppm datasets and doctor on echoed manifest, probe and record errors", async () => {
    const host = pool[0];
    host.clear();
    host.on("/api/bi/v1/manifest", (r) => json(401, { error: "unauthorized", message: echo(r.token) }));
    host.on("/api/bi/odata/v1", (r) => json(500, { message: echo(r.token) }));
    host.on("/api/snapshot/*", (r) => json(403, { message: echo(r.token) }));
    host.on("/api/v1/*", (r) => json(400, { message: echo(r.token) }));
    const outputs = await Promise.all([
      ppm(["datasets", "--env", host.url, "--retries", "0"]),
      ppm(["datasets", "--env", host.url, "--json", "--retries", "0"]),
      ppm(["doctor", "--env", host.url, "--retries", "0"]),
      ppm(["doctor", "--env", host.url, "--json", "--retries", "0"]),
    ]);
    outputs.forEach((o, i) => {
      expect(o.startsWith("exit 0")).toBe(false);
      expectNoLeak(`CLI ${["datasets", "datasets --json", "doctor", "doctor --json"][i]}`, o);
    });
  }, 60_000);
});
