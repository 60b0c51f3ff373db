/**
 * Issue #25: the CLI's own words. An environment address with the service's /api path or without
 * a scheme says what to write; actions name the CLI's options, not the pane's controls; an unknown
 * query column suggests nothing unlike it; a stopped service is "refused", never a browser policy;
 * doctor's table stays within 100 characters; --excel-safe CSV starts with a UTF-8 byte order mark
 * and the plain export does not. The CLI runs as `node bin/ppm.js`.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";

const ROOT = path.resolve(__dirname, "../..");
const TOKEN = "demo-acme-token";
let svc: ReferenceService;
let tmp: string;

beforeAll(async () => {
  svc = await startReferenceService({ port: 0 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-wording-"));
});
afterAll(async () => {
  await svc.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function ppm(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const childEnv = { PATH: process.env.PATH ?? "", HOME: tmp, PPM_TOKEN: TOKEN, PPM_STATE_DIR: tmp, PPM_DEV_PORT: "3458", ...env };
    execFile(process.execPath, [path.join(ROOT, "bin/ppm.js"), ...args], { cwd: ROOT, env: childEnv, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("ppm's own words", () => {
  it("--env with the service's /api path, or without a scheme, says what to write, in the CLI's words", async () => {
    const api = await ppm(["datasets", "--env", `${svc.url}/api/bi/v1`]);
    expect(api.code).toBe(2);
    expect(api.stderr).toContain(`error: The --env address is not usable: it ends with /api/bi/v1, a path the add-in adds itself: use ${svc.url}.`);
    expect(api.stderr).toMatch(/action: Give --env \(or PPM_ENV\) as the environment's base address/);
    const bare = await ppm(["datasets", "--env", "localhost:4310"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("it has no scheme: write http://localhost:4310.");
    expect(bare.stderr).not.toMatch(/scheme must be https \(got localhost\)/);
    expect((await ppm(["datasets", "--env", "ppm.example.com"])).stderr).toContain("write https://ppm.example.com.");
    for (const r of [api, bare]) expect(r.stderr).not.toMatch(/hide it|the stored|connection|Enter the/i);
  });

  it("an unknown column in --query suggests only a column like it", async () => {
    const far = await ppm(["export", "financials", "--env", svc.url, "--query", "$filter=nosuch eq 1"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("unknown column 'nosuch'");
    expect(far.stderr).not.toMatch(/did you mean/);
    const near = await ppm(["export", "financials", "--env", svc.url, "--query", "$filter=budgte gt 1"]);
    expect(near.stderr).toContain("did you mean budget?");
  });

  it("a stopped service is refused, with no browser advice; doctor's table stays within 100 characters", async () => {
    const dead = await startReferenceService({ port: 0 });
    await dead.close();
    const r = await ppm(["datasets", "--env", dead.url, "--retries", "0"]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`error: Could not reach ${new URL(dead.url).host}: the connection was refused (nothing is listening there).`);
    expect(r.stderr).not.toMatch(/browser|Local Network|Chrome|Edge|policy/i);
    const doc = await ppm(["doctor", "--env", dead.url, "--retries", "0"]);
    expect(doc.code).toBe(5);
    expect(doc.stdout).toMatch(/reachability +FAIL +Could not reach .*: the connection was refused/);
    for (const line of doc.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("--excel-safe CSV starts with a UTF-8 byte order mark; the plain export stays the service's bytes", async () => {
    const safe = path.join(tmp, "safe.csv");
    const plain = path.join(tmp, "plain.csv");
    expect((await ppm(["export", "projects", "--env", svc.url, "--excel-safe", "--out", safe])).code).toBe(0);
    expect((await ppm(["export", "projects", "--env", svc.url, "--out", plain])).code).toBe(0);
    const bytes = fs.readFileSync(safe);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3, 13).toString("utf8")).toBe(fs.readFileSync(plain).subarray(0, 10).toString("utf8"));
    const service = Buffer.from(await (await fetch(`${svc.url}/api/bi/v1/projects.csv`, { headers: { "Company-Api-Token": TOKEN } })).arrayBuffer());
    expect(fs.readFileSync(plain).equals(service)).toBe(true);
    const stdout = await ppm(["export", "projects", "--env", svc.url, "--excel-safe"]);
    expect(stdout.stdout.startsWith("\uFEFF")).toBe(true);
  });
});
