/**
 * `ppm export`, spawned as a user runs it, against a hostile or broken service (issue #14): a real
 * HTTP proxy on 127.0.0.1 in front of the reference service. Nothing wrong is ever written, and the
 * exit code is never 0 for it.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { csvRecords, startHostileService, type HostileService, type Reply, type RequestInfo } from "../helpers/hostileService";
import { CONTROL } from "../helpers/control";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
const TOKEN = "demo-acme-token";

let ref: ReferenceService;
let svc: HostileService;
let tmp: string;

beforeAll(async () => {
  ref = await startReferenceService({ port: 0 });
  svc = await startHostileService(ref.url);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-hostile-"));
});
afterAll(async () => {
  await svc?.close();
  await ref?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  svc.clear();
  await fetch(`${ref.url}/__control/reset`, { method: "POST", headers: CONTROL });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function ppm(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, PPM_TOKEN: TOKEN };
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const CSV = "/api/bi/v1/financials.csv";
const cutCsv = async (req: RequestInfo): Promise<Reply> => {
  const up = await req.upstream();
  return up.status === 200 ? { ...up, body: `${csvRecords(up.body.toString("utf8")).slice(0, 60).join("\r\n")}\r\n` } : up;
};

const cases: Array<[string, (req: RequestInfo) => Reply | Promise<Reply>, RegExp]> = [
  ["an HTML sign-in page", () => ({ headers: { "Content-Type": "text/html" }, body: "<!DOCTYPE html>\n<html><body>Sign in</body></html>" }), /error: The service answered with an HTML page \(Content-Type text\/html\), not the CSV export of "financials": a sign-in page or a proxy in between\?/],
  ["an HTML page without Content-Type", () => ({ body: "<!DOCTYPE html>\n<html><body>Sign in</body></html>" }), /HTML page, not the CSV export/],
  ["a JSON error body with status 200", () => ({ headers: { "Content-Type": "application/json" }, body: '{"error":"unauthorized","message":"Credentials missing or wrong"}' }), /JSON error body \("unauthorized"\) and status 200/],
  ["a wrong CSV header", () => ({ headers: { "Content-Type": "text/csv" }, body: "a,b\r\n1,2\r\n" }), /does not have the dataset's columns/],
  ["a 304 to a request without validators", () => ({ status: 304 }), /304 Not Modified .* which carried no validators/],
  ["a CSV cut at a row boundary (59 of 120 rows)", cutCsv, /arrived with 59 rows, but the manifest lists 120/],
];

describe("ppm export refuses what is not the export", () => {
  it.each(cases)("%s: exit 1, --out not written, the reason on stderr", async (_name, behaviour, message) => {
    svc.on(CSV, behaviour);
    const out = path.join(tmp, `x-${Math.random().toString(36).slice(2)}.csv`);
    const r = await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--out", out, "--retries", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/action: /);
    expect(r.stdout).toBe("");
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(tmp).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("to stdout too: nothing of the page is printed", async () => {
    svc.on(CSV, () => ({ headers: { "Content-Type": "text/html" }, body: "<!DOCTYPE html><html>Sign in</html>" }));
    const r = await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--retries", "0"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).not.toContain("<!DOCTYPE");
  });

  it("a 304 with --cache but nothing cached yet is an error, and the file is not created", async () => {
    svc.on(CSV, () => ({ status: 304 }));
    const out = path.join(tmp, "cached.csv");
    const r = await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--out", out, "--cache", path.join(tmp, "cache"), "--retries", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/unchanged/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("(control) a 304 to the cached validators is still 'unchanged', exit 0", async () => {
    const out = path.join(tmp, "ok.csv");
    const cache = path.join(tmp, "cache-ok");
    expect((await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--out", out, "--cache", cache])).code).toBe(0);
    const again = await ppm(["export", "financials", "--env", svc.url, "--format", "csv", "--out", out, "--cache", cache]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/unchanged/);
  });
});
