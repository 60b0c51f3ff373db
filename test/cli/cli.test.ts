/**
 * The `ppm` CLI, spawned as a user runs it (`node bin/ppm.js ...`), against reference services
 * started in this process on free ports.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { parseCsvText, PpmClient } from "../../src/service";
import { applyQuery, parseQuery } from "../../src/query";
import { tableToCsv } from "../../src/cli/output";
import { CONTROL } from "../helpers/control";
import { DEFAULT_ALLOWED_ORIGINS } from "../../src/reference/cors";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
const TOKEN = "demo-acme-token";

let svc: ReferenceService;
let hidden: ReferenceService;
let tmp: string;

beforeAll(async () => {
  // CORS for the add-in origins doctor is asked about here (the service answers only the origins it is told, issue #36).
  const allowedOrigins = [...DEFAULT_ALLOWED_ORIGINS, "https://addin.example.com", "http://localhost:3456", "https://localhost:3456", "http://localhost:3457"];
  [svc, hidden] = await Promise.all([startReferenceService({ port: 0, allowedOrigins }), startReferenceService({ port: 0, exposeHeaders: false })]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-cli-"));
});
afterAll(async () => {
  await Promise.all([svc?.close(), hidden?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: CONTROL });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Spawns the CLI asynchronously (the reference service lives in this process and must keep serving). */
function ppm(args: string[], env: Record<string, string | undefined> = { PPM_TOKEN: TOKEN }): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR };
    for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const all = (r: Run) => `${r.stdout}\n${r.stderr}`;
/** A text table's wrapped DETAIL cells joined back onto their rows (for matching). */
const flat = (s: string) => s.replace(/\n {20,}/g, " ");

describe("ppm --help", () => {
  it("prints every command and option as prose: no source code leaked into the text", async () => {
    const r = await ppm(["--help"]);
    expect(r.code).toBe(0);
    for (const part of ["doctor --env URL", "datasets --env URL", "export KEY --env URL", "--excel-safe", "--mkdir", "PPM_TOKEN"]) expect(r.stdout).toContain(part);
    expect(r.stdout).not.toMatch(/=>|\.\.\.\(|Uint8Array|\bvoid\b/);
  });
});

describe("ppm doctor", () => {
  it("passes on a working environment, with a readable table", async () => {
    const r = await ppm(["doctor", "--env", svc.url], { PPM_TOKEN: TOKEN, PPM_API_AUTH: "demo-api-auth", PPM_API_SECRET: "demo-api-secret" });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^CHECK\s+RESULT\s+DETAIL/);
    for (const check of ["reachability", "credentials", "reporting enabled", "routes: reporting", "routes: snapshot", "routes: record", "manifest", "CORS preflight", "CORS exposed headers"]) {
      expect(r.stdout).toMatch(new RegExp(`${check}\\s+ok`));
    }
    expect(r.stdout).toContain("The add-in would work");
    expect(all(r)).not.toContain(TOKEN);
    expect(all(r)).not.toContain("demo-api-secret");
    // Issue #37, item 9: the manifest's word, then each export's own answer. The demo's timesheets is
    // listed as generated but answers 422, so doctor does not count it as usable, and export agrees.
    const flat = r.stdout.replace(/\s+/g, " "); // the table wraps its details
    expect(flat).toMatch(/manifest ok company acme, api \S+: 6 dataset\(s\); 5 with an export, 1 with no export yet \(risks\)/);
    expect(flat).toMatch(/exports warn 4 of 5 can be downloaded; timesheets: The cached export of "timesheets" on \S+ is unusable/);
    const ts = await ppm(["export", "timesheets", "--env", svc.url], { PPM_TOKEN: TOKEN });
    expect([ts.code, /unusable/.test(ts.stderr)]).toEqual([4, true]);
  });

  it("fails with the auth exit code on a wrong token, without echoing it", async () => {
    const r = await ppm(["doctor", "--env", svc.url], { PPM_TOKEN: "doctor-WRONG-token" });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/credentials\s+FAIL/);
    // The CLI stores no token: it names where this one came from.
    expect(r.stdout).toContain("Check the token in the PPM_TOKEN environment variable");
    expect(all(r)).not.toMatch(/stored/i);
    expect(all(r)).not.toContain("doctor-WRONG-token");
  });

  it("reports disabled reporting, absent routes, hidden CORS headers and an unreachable service", async () => {
    const g = await ppm(["doctor", "--env", svc.url, "--json"], { PPM_TOKEN: "demo-globex-token" });
    expect(g.code).toBe(3);
    const report = JSON.parse(g.stdout) as { ok: boolean; checks: Array<{ check: string; result: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.check === "reporting enabled")?.result).toBe("FAIL");
    expect(report.checks.find((c) => c.check === "routes: snapshot")?.result).toBe("ok");

    await fetch(`${svc.url}/__control/absent?groups=snapshot`, { method: "POST", headers: CONTROL });
    const a = await ppm(["doctor", "--env", svc.url, "--origin", "https://addin.example.com"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/routes: snapshot\s+warn\s+absent/);
    expect(a.stdout).toContain("https://addin.example.com");

    const h = await ppm(["doctor", "--env", hidden.url]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/CORS exposed headers\s+warn\s+not exposed: ETag/);

    const dead = await startReferenceService({ port: 0 });
    await dead.close();
    const d = await ppm(["doctor", "--env", dead.url, "--retries", "0"]);
    expect(d.code).toBe(5);
    expect(d.stdout).toMatch(/reachability\s+FAIL/);
  });
});

describe("ppm datasets", () => {
  it("lists datasets with their export status", async () => {
    const r = await ppm(["datasets", "--env", svc.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/financials\s+ready\s+120/);
    expect(r.stdout).toMatch(/risks\s+no export yet\s+-/);
    expect(r.stdout).toMatch(/milestones\s+ready \(0 rows\)\s+0/);
    const j = await ppm(["datasets", "--env", svc.url, "--json"]);
    const body = JSON.parse(j.stdout) as { company_id: string; datasets: Array<{ key: string; status: string; usable: boolean }> };
    expect(body.company_id).toBe("acme");
    expect(body.datasets.find((d) => d.key === "risks")).toMatchObject({ status: "no_export", usable: false });
  });
});

describe("ppm export", () => {
  it("writes RFC 4180 CSV, then reports unchanged on 304 without rewriting, then rewrites after regeneration", async () => {
    const out = path.join(tmp, "fin.csv");
    const cache = path.join(tmp, "cache");
    const first = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("120 row(s)");
    const text = fs.readFileSync(out, "utf8");
    expect(text.startsWith("project_id,project_name,cost_center_code,")).toBe(true);
    expect(text.endsWith("\r\n")).toBe(true);
    expect(text).toContain('"The ""Big"" Upgrade"');
    expect(text).toContain('"Line one\r\nLine two"');
    expect(text).toContain("Zürich – Ω 東京");
    const rows = parseCsvText(text);
    expect(rows).toHaveLength(121);
    expect(rows[1][11]).toBe("9007199254740993");
    expect(fs.readdirSync(cache).join(" ")).not.toContain(TOKEN);

    const old = new Date("2020-01-01T00:00:00Z");
    fs.utimesSync(out, old, old);
    const second = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("unchanged");
    expect(fs.statSync(out).mtime.getTime()).toBe(old.getTime());
    const log = (await (await fetch(`${svc.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ path: string; status: number }> };
    expect(log.requests.filter((q) => q.path === "/api/bi/v1/financials.csv").map((q) => q.status)).toEqual([200, 304]);
    // And again: an unchanged run keeps the cache entry usable.
    const again = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(again.stderr).toContain("unchanged");
    expect(fs.statSync(out).mtime.getTime()).toBe(old.getTime());

    await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    const third = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(third.code).toBe(0);
    expect(third.stderr).toContain("written");
    expect(fs.statSync(out).mtime.getTime()).not.toBe(old.getTime());
    expect(fs.readFileSync(out, "utf8")).not.toBe(text);
  });

  it("downloads again when the output file is gone, and writes JSON from any form", async () => {
    const out = path.join(tmp, "proj.json");
    const cache = path.join(tmp, "cache2");
    expect((await ppm(["export", "projects", "--env", svc.url, "--format", "odata", "--output-format", "json", "--out", out, "--cache", cache])).code).toBe(0);
    const body = JSON.parse(fs.readFileSync(out, "utf8")) as { dataset_key: string; row_count: number; columns: Array<{ name: string; type: string }>; rows: Array<Record<string, unknown>> };
    expect(body.dataset_key).toBe("projects");
    expect(body.rows).toHaveLength(body.row_count);
    expect(body.columns.find((c) => c.name === "start_date")?.type).toBe("date");
    fs.rmSync(out);
    const again = await ppm(["export", "projects", "--env", svc.url, "--format", "odata", "--output-format", "json", "--out", out, "--cache", cache]);
    expect(again.stderr).toContain("written");
    expect(fs.existsSync(out)).toBe(true);
  });

  it("writes the same table from JSON, CSV and OData (OData asked for with IEEE754Compatible=true), every Int64 digit kept", async () => {
    const outs = await Promise.all(["json", "csv", "odata"].map((f) => ppm(["export", "financials", "--env", svc.url, "--format", f])));
    for (const r of outs) expect(r.code).toBe(0);
    expect(outs[2].stdout).toBe(outs[0].stdout);
    // --format csv writes the service's own bytes (quoting as the service chose), so it is compared
    // as a table; JSON and OData are written from the table and so are byte-identical to each other.
    expect(parseCsvText(outs[1].stdout)).toEqual(parseCsvText(outs[0].stdout));
    expect(outs[2].stdout).toContain(",9007199254740993\r\n");
    const q = await ppm(["export", "financials", "--env", svc.url, "--format", "odata", "--query", "filter=external_ref gt 9007199254740992&select=external_ref&top=1"]);
    expect(parseCsvText(q.stdout)).toEqual([["external_ref"], ["9007199254740993"]]);
  });

  it("applies a local query before writing, and to stdout when there is no --out", async () => {
    const r = await ppm(["export", "financials", "--env", svc.url, "--format", "json", "--query", "$filter=fiscal_year eq 2026&$select=project_id,budget&$top=3&$count=true"]);
    expect(r.code).toBe(0);
    const rows = parseCsvText(r.stdout);
    expect(rows[0]).toEqual(["project_id", "budget"]);
    expect(rows).toHaveLength(4);
    expect(r.stderr).toMatch(/count: \d+/);
    const bad = await ppm(["export", "financials", "--env", svc.url, "--query", "$filter=fiscal_year eq"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--query");
  });

  it("--query '$apply=...' gives the same summary as the local query engine on the complete table", async () => {
    const apply = "$apply=groupby((fiscal_year,project_id),aggregate(budget with sum as total_budget,$count as periods))&$orderby=project_id,fiscal_year&$count=true";
    for (const format of ["json", "csv"] as const) {
      const r = await ppm(["export", "financials", "--env", svc.url, "--format", format, "--query", apply]);
      expect(r.code).toBe(0);
      const client = new PpmClient({ id: "t", name: "t", baseUrl: svc.url, token: TOKEN });
      const whole = await client.fetchDataset("financials", { format, conditional: false });
      if (whole.status !== "updated") throw new Error("expected data");
      const expected = applyQuery(whole.table, parseQuery(apply));
      expect(r.stdout).toBe([...tableToCsv(expected.table)].join(""));
      expect(parseCsvText(r.stdout)[0]).toEqual(["fiscal_year", "project_id", "total_budget", "periods"]);
      expect(r.stderr).toContain(`count: ${expected.count}`);
    }
    const bad = await ppm(["export", "financials", "--env", svc.url, "--query", "$apply=groupby((fiscal_year),aggregate(budget with total as t))"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected an aggregation method");
  });

  it("a summary beyond the number range fails with status 1, names the column and writes nothing", async () => {
    // Each value (budget × 10^303, about 10^307-10^308) fits a double; their sum does not.
    const out = path.join(tmp, "overflow.csv");
    for (const format of ["json", "csv"] as const) {
      const r = await ppm(["export", "financials", "--env", svc.url, "--format", format, "--out", out, "--query", "$apply=groupby((fiscal_year),aggregate(budget mul 1e303 with sum as huge_total,$count as n))"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: the --query cannot be evaluated on this data: \$apply: 'huge_total' \(budget mul 1e303 with sum\) is about \d\.\d\de\+3\d\d, beyond the largest number a cell can hold/);
      expect(r.stderr).toContain("nothing was written");
      expect(fs.existsSync(out)).toBe(false);
      expect(fs.readdirSync(tmp).filter((f) => f.startsWith("overflow"))).toEqual([]);
    }
    // Without --out: nothing on stdout either.
    const toStdout = await ppm(["export", "financials", "--env", svc.url, "--query", "$apply=compute(budget mul 1e305 as x)"]);
    expect(toStdout.code).toBe(1);
    expect(toStdout.stdout).toBe("");
    expect(toStdout.stderr).toContain("the computed column 'x' (budget mul 1e305)");
  });

  it("distinguishes auth, dataset, usage and network failures by exit code, never echoing the token", async () => {
    const wrong = await ppm(["export", "financials", "--env", svc.url], { PPM_TOKEN: "export-WRONG-token" });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/error: .*401/);
    expect(wrong.stderr).toMatch(/action: Check the token in the PPM_TOKEN environment variable/);
    expect(all(wrong)).not.toMatch(/stored/i);
    expect(all(wrong)).not.toContain("export-WRONG-token");

    const flag = await ppm(["export", "financials", "--env", svc.url, "--token", "flag-WRONG-token"], {});
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--token is not accepted");
    expect(all(flag)).not.toContain("flag-WRONG-token");

    const ng = await ppm(["export", "risks", "--env", svc.url]);
    expect(ng.code).toBe(4);
    // The pane's words for this state ("No export yet"), with the service and the dataset (issue #37).
    expect(ng.stderr).toMatch(/No export yet: .* has not generated the dataset "risks"/);
    expect((await ppm(["export", "nope", "--env", svc.url])).code).toBe(4);
    expect((await ppm(["export", "timesheets", "--env", svc.url])).code).toBe(4);

    expect((await ppm(["export", "--env", svc.url])).code).toBe(2);
    expect((await ppm(["export", "financials", "--env", svc.url, "--format", "xml"])).code).toBe(2);
    expect((await ppm(["export", "financials", "--env", svc.url, "--cache", tmp])).code).toBe(2);
    expect((await ppm(["export", "financials", "--env", svc.url], {})).code).toBe(2);
    expect((await ppm(["export", "financials", "--env", "http://ppm.example.com"])).code).toBe(2);
    const unknown = await ppm(["frobnicate", "--env", svc.url]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command");

    const dead = await startReferenceService({ port: 0 });
    await dead.close();
    expect((await ppm(["export", "financials", "--env", dead.url, "--retries", "0"])).code).toBe(5);
  });
});

/** The service's own bytes of a dataset form, as a checksum reference. */
async function serviceBytes(pathname: string): Promise<Buffer> {
  const r = await fetch(`${svc.url}${pathname}`, { headers: { "Company-Api-Token": TOKEN } });
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** Runs the CLI, capturing stdout as bytes (a byte-exact export is compared byte for byte). */
function ppmBytes(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, PPM_TOKEN: TOKEN };
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "buffer", maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr: stderr.toString("utf8") });
    });
  });
}

describe("ppm export: byte-exact CSV (issue #14, item 10)", () => {
  it("without a query, --format csv writes the service's bytes unchanged, to a file and to stdout", async () => {
    const service = await serviceBytes("/api/bi/v1/financials.csv");
    // The case that used to differ: a quoted field with leading and trailing spaces.
    expect(service.toString("utf8")).toContain('," leading and trailing space ",');
    const out = path.join(tmp, "exact.csv");
    const r = await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--out", out]);
    expect(r.code).toBe(0);
    expect(sha256(fs.readFileSync(out))).toBe(sha256(service));
    const s = await ppmBytes(["export", "financials", "--env", svc.url]);
    expect(s.code).toBe(0);
    expect(sha256(s.stdout)).toBe(sha256(service));
  });

  it("a query or another form rewrites the table (RFC 4180, equivalent, not the same bytes)", async () => {
    const out = path.join(tmp, "rewritten.csv");
    expect((await ppm(["export", "financials", "--env", svc.url, "--format", "json", "--out", out])).code).toBe(0);
    const text = fs.readFileSync(out, "utf8");
    expect(parseCsvText(text)).toEqual(parseCsvText((await serviceBytes("/api/bi/v1/financials.csv")).toString("utf8")));
  });
});

describe("ppm CLI rules (issue #13, point 14)", () => {
  it("the output format is --output-format (default csv), never the --out file's extension", async () => {
    const asJsonName = path.join(tmp, "named.json");
    const r = await ppm(["export", "milestones", "--env", svc.url, "--out", asJsonName]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`warning: writing CSV to ${asJsonName}`);
    expect(fs.readFileSync(asJsonName, "utf8").startsWith("{")).toBe(false);
    expect(parseCsvText(fs.readFileSync(asJsonName, "utf8"))[0][0]).toBeTruthy();

    const asCsvName = path.join(tmp, "named.csv");
    const j = await ppm(["export", "milestones", "--env", svc.url, "--output-format", "json", "--out", asCsvName]);
    expect(j.code).toBe(0);
    expect(j.stderr).toContain(`warning: writing JSON to ${asCsvName}`);
    expect(JSON.parse(fs.readFileSync(asCsvName, "utf8"))).toMatchObject({ dataset_key: "milestones", row_count: 0 });

    const plain = await ppm(["export", "milestones", "--env", svc.url, "--output-format", "json", "--out", path.join(tmp, "plain.out")]);
    expect(plain.stderr).not.toContain("warning");
  });

  it("--out into a missing directory is a usage error (nothing downloaded) unless --mkdir", async () => {
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const missing = path.join(tmp, "no", "such", "dir", "fin.csv");
    const r = await ppm(["export", "financials", "--env", svc.url, "--out", missing]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the directory of --out does not exist: ${path.dirname(missing)}`);
    expect(r.stderr).toContain("--mkdir");
    expect(fs.existsSync(path.join(tmp, "no"))).toBe(false);
    const log = (await (await fetch(`${svc.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ path: string }> };
    expect(log.requests.filter((q) => q.path.startsWith("/api/"))).toEqual([]);

    const m = await ppm(["export", "financials", "--env", svc.url, "--out", missing, "--mkdir"]);
    expect(m.code).toBe(0);
    expect(fs.readFileSync(missing)).toEqual(await serviceBytes("/api/bi/v1/financials.csv"));
    expect((await ppm(["export", "financials", "--env", svc.url, "--mkdir"])).code).toBe(2);
  });

  it("--excel-safe prefixes formula-like text cells with ' for Excel; the default stays byte-exact", async () => {
    const out = path.join(tmp, "safe.csv");
    const r = await ppm(["export", "financials", "--env", svc.url, "--excel-safe", "--out", out]);
    expect(r.code).toBe(0);
    const rows = parseCsvText(fs.readFileSync(out, "utf8"));
    const names = rows.slice(1).map((x) => x[1]);
    for (const risky of ["=SUM(A1:A9)", "+41 44 668 18 00", "-5 days", "@risk review"]) {
      expect(names).toContain(`'${risky}`);
      expect(names).not.toContain(risky);
    }
    // Numbers are never prefixed (a negative variance stays a number), nor safe text.
    const variance = rows[0].indexOf("variance_pct");
    expect(rows.slice(1).some((x) => x[variance].startsWith("-"))).toBe(true);
    expect(rows.slice(1).every((x) => !x[variance].startsWith("'"))).toBe(true);
    expect(names).toContain("Alpha, Beta & Gamma");
    expect(names).toContain("'apostrophe");
    expect(names).not.toContain("''apostrophe");

    const plain = path.join(tmp, "plain.csv");
    expect((await ppm(["export", "financials", "--env", svc.url, "--out", plain])).code).toBe(0);
    expect(fs.readFileSync(plain)).toEqual(await serviceBytes("/api/bi/v1/financials.csv"));
    expect(fs.readFileSync(plain, "utf8")).toContain("\r\nPRJ-0003,=SUM(A1:A9),");

    expect((await ppm(["export", "financials", "--env", svc.url, "--excel-safe", "--output-format", "json"])).code).toBe(2);
  });

  it("doctor's default origin is what npm start serves: localhost on the configured port; certificate files alone do not make it https (issue #25)", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { config: { dev_server_port: number } };
    const home = fs.mkdtempSync(path.join(tmp, "home-"));
    // An empty state directory (no record of an earlier npm start) and, for the configured port, a
    // port nobody serves on in this test (another worktree's npm start may run on 3000).
    const state = fs.mkdtempSync(path.join(tmp, "state-"));
    const base = { PPM_TOKEN: TOKEN, HOME: home, PPM_STATE_DIR: state };
    const plain = await ppm(["doctor", "--env", svc.url], { ...base, PPM_DEV_PORT: "3457" });
    expect(plain.code).toBe(0);
    expect(flat(plain.stdout)).toMatch(/add-in origin\s+ok\s+http:\/\/localhost:3457 \(port from PPM_DEV_PORT; http: no development certificate yet/);
    expect(flat(plain.stdout)).toContain("origin http://localhost:3457 may send the add-in's headers");

    fs.mkdirSync(path.join(home, ".office-addin-dev-certs"));
    for (const f of ["ca.crt", "localhost.crt", "localhost.key"]) fs.writeFileSync(path.join(home, ".office-addin-dev-certs", f), "test certificate");
    const files = await ppm(["doctor", "--env", svc.url], { ...base, PPM_DEV_PORT: "3456" });
    expect(flat(files.stdout)).toContain("origin http://localhost:3456 may send");
    const http = await ppm(["doctor", "--env", svc.url], { ...base, PPM_DEV_PORT: "3456", PPM_DEV_HTTP: "1" });
    expect(flat(http.stdout)).toContain("http because PPM_DEV_HTTP=1");

    // What npm start recorded when it last ran wins over the prediction (for its port only).
    fs.writeFileSync(path.join(state, "dev-server.json"), JSON.stringify({ origin: "https://localhost:3456", at: "2026-03-01T10:00:00.000Z" }));
    const recorded = await ppm(["doctor", "--env", svc.url], { ...base, PPM_DEV_PORT: "3456" });
    expect(flat(recorded.stdout)).toMatch(/https:\/\/localhost:3456 \(what npm start served when it last ran \(2026-03-01 10:00 UTC\), https/);
    const otherPort = await ppm(["doctor", "--env", svc.url], { ...base, PPM_DEV_PORT: "3457" });
    expect(flat(otherPort.stdout)).toContain("origin http://localhost:3457 may send");
    expect(pkg.config.dev_server_port).toBe(3000);

    const given = await ppm(["doctor", "--env", svc.url, "--origin", "https://addin.example.com"], base);
    expect(flat(given.stdout)).not.toContain("add-in origin");
    expect(flat(given.stdout)).toContain("origin https://addin.example.com may send");
  });
});
