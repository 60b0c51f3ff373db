/**
 * The `ppm` CLI, spawned as a user runs it (`node bin/ppm.js ...`), against reference services
 * started in this process on free ports.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { parseCsvText, PpmClient } from "../../src/service";
import { applyQuery, parseQuery } from "../../src/query";
import { tableToCsv } from "../../src/cli/output";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
const TOKEN = "demo-acme-token";

let svc: ReferenceService;
let hidden: ReferenceService;
let tmp: string;

beforeAll(async () => {
  [svc, hidden] = await Promise.all([startReferenceService({ port: 0 }), startReferenceService({ port: 0, exposeHeaders: false })]);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-cli-"));
});
afterAll(async () => {
  await Promise.all([svc?.close(), hidden?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  await fetch(`${svc.url}/__control/reset`, { method: "POST" });
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
  });

  it("fails with the auth exit code on a wrong token, without echoing it", async () => {
    const r = await ppm(["doctor", "--env", svc.url], { PPM_TOKEN: "doctor-WRONG-token" });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/credentials\s+FAIL/);
    expect(r.stdout).toContain("Update or clear the stored token");
    expect(all(r)).not.toContain("doctor-WRONG-token");
  });

  it("reports disabled reporting, absent routes, hidden CORS headers and an unreachable service", async () => {
    const g = await ppm(["doctor", "--env", svc.url, "--json"], { PPM_TOKEN: "demo-globex-token" });
    expect(g.code).toBe(3);
    const report = JSON.parse(g.stdout) as { ok: boolean; checks: Array<{ check: string; result: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.check === "reporting enabled")?.result).toBe("FAIL");
    expect(report.checks.find((c) => c.check === "routes: snapshot")?.result).toBe("ok");

    await fetch(`${svc.url}/__control/absent?groups=snapshot`, { method: "POST" });
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
    expect(r.stdout).toMatch(/risks\s+no usable export\s+-/);
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
    const log = (await (await fetch(`${svc.url}/__control/requests`)).json()) as { requests: Array<{ path: string; status: number }> };
    expect(log.requests.filter((q) => q.path === "/api/bi/v1/financials.csv").map((q) => q.status)).toEqual([200, 304]);
    // And again: an unchanged run keeps the cache entry usable.
    const again = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(again.stderr).toContain("unchanged");
    expect(fs.statSync(out).mtime.getTime()).toBe(old.getTime());

    await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST" });
    const third = await ppm(["export", "financials", "--env", svc.url, "--out", out, "--cache", cache]);
    expect(third.code).toBe(0);
    expect(third.stderr).toContain("written");
    expect(fs.statSync(out).mtime.getTime()).not.toBe(old.getTime());
    expect(fs.readFileSync(out, "utf8")).not.toBe(text);
  });

  it("downloads again when the output file is gone, and writes JSON from any form", async () => {
    const out = path.join(tmp, "proj.json");
    const cache = path.join(tmp, "cache2");
    expect((await ppm(["export", "projects", "--env", svc.url, "--format", "odata", "--out", out, "--cache", cache])).code).toBe(0);
    const body = JSON.parse(fs.readFileSync(out, "utf8")) as { dataset_key: string; row_count: number; columns: Array<{ name: string; type: string }>; rows: Array<Record<string, unknown>> };
    expect(body.dataset_key).toBe("projects");
    expect(body.rows).toHaveLength(body.row_count);
    expect(body.columns.find((c) => c.name === "start_date")?.type).toBe("date");
    fs.rmSync(out);
    const again = await ppm(["export", "projects", "--env", svc.url, "--format", "odata", "--out", out, "--cache", cache]);
    expect(again.stderr).toContain("written");
    expect(fs.existsSync(out)).toBe(true);
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

  it("distinguishes auth, dataset, usage and network failures by exit code, never echoing the token", async () => {
    const wrong = await ppm(["export", "financials", "--env", svc.url], { PPM_TOKEN: "export-WRONG-token" });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/error: .*401/);
    expect(wrong.stderr).toMatch(/action: Update or clear the stored token/);
    expect(all(wrong)).not.toContain("export-WRONG-token");

    const flag = await ppm(["export", "financials", "--env", svc.url, "--token", "flag-WRONG-token"], {});
    expect(flag.code).toBe(3);
    expect(flag.stderr).toContain("--token is discouraged");
    expect(all(flag)).not.toContain("flag-WRONG-token");

    const ng = await ppm(["export", "risks", "--env", svc.url]);
    expect(ng.code).toBe(4);
    expect(ng.stderr).toContain("not been generated");
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
