/**
 * What the CLI reads (issue #36, finding 5): `--token` is refused; `--views` is checked like
 * `--token-file` (a regular file of bounded size, opened without blocking, read after the token) and
 * no error quotes it; a `--cache` directory must be the user's own and writable by nobody else.
 * Every run is a separate process with a time limit, as a user runs it: a read that blocks shows as
 * a killed process, not as a hung test.
 */
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { FileValidatorStore } from "../../src/service/node";
import { validatorKey } from "../../src/service/validators";
import { PpmClient } from "../../src/service/client";
import { emptyDocument, serializeViews, upsertView } from "../../src/views/views";
import { parseQuery } from "../../src/query";
import { CONTROL } from "../helpers/control";
import { cliFixture } from "./fixture";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
const TOKEN = "demo-acme-token";
const posix = process.platform !== "win32";
/** How long a run may take before it counts as hung (a start of the CLI takes about 1-3 s here). */
const RUN_LIMIT_MS = 20_000;

const fixture = cliFixture("ppm-cli-inputs-");
const dir = fixture.dir;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Killed at the time limit. */
  hung: boolean;
}

/** Runs the CLI as a user does (a process of its own), killed after RUN_LIMIT_MS. */
function ppm(args: string[], env: Record<string, string> = { PPM_TOKEN: TOKEN }): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: RUN_LIMIT_MS, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }, (e, stdout, stderr) => {
      const hung = !!e && (e as { killed?: boolean }).killed === true;
      resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, stdout, stderr, ms: Date.now() - t0, hung });
    });
    child.stdin?.end();
  });
}

/** The service's request log, without the control calls. */
async function served(): Promise<string[]> {
  const log = (await (await fetch(`${fixture.svc().url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ path: string }> };
  return log.requests.map((r) => r.path);
}

/** Every piece of `secret` of 4 characters or more that appears in `text` (none, when nothing of it leaked). */
function piecesOf(secret: string, text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 4 <= secret.length; i++) if (text.includes(secret.slice(i, i + 4))) found.push(secret.slice(i, i + 4));
  return found;
}

describe("--token (finding 5)", () => {
  it("is refused, naming --token-file, --token-stdin and PPM_TOKEN; its value is never printed and nothing is sent", async () => {
    const value = "cmdline-SECRET-9f3a7c";
    for (const args of [["--token", value], [`--token=${value}`]]) {
      const r = await ppm(["datasets", "--env", fixture.svc().url, ...args], {});
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--token is not accepted/);
      for (const alt of ["--token-file", "--token-stdin", "PPM_TOKEN"]) expect(r.stderr).toContain(alt);
      expect(piecesOf(value.replace("cmdline-", ""), r.stdout + r.stderr)).toEqual([]);
    }
    // Refused even with a valid token beside it in PPM_TOKEN: the flag itself is the problem.
    const withEnv = await ppm(["datasets", "--env", fixture.svc().url, "--token", TOKEN]);
    expect(withEnv.code).toBe(2);
    expect(await served()).toEqual([]);
  });

  it("the usage text no longer offers it", async () => {
    const r = await ppm(["--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/--token TOKEN\s+company API token/);
    expect(r.stdout).toContain("--token TOKEN is refused");
  });
});

(posix ? describe : describe.skip)("--views is checked like --token-file (finding 5)", () => {
  const viewArgs = (file: string) => ["export", "--view", "Top", "--views", file, "--env", fixture.svc().url];

  it("/dev/zero is refused at once, without reading it", async () => {
    const r = await ppm(viewArgs("/dev/zero"));
    expect(r.hung).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--views /dev/zero: not a regular file");
    expect(await served()).toEqual([]);
  });

  it("a FIFO with no writer is refused at once (opening it does not wait)", async () => {
    const fifo = path.join(dir("fifo"), "views.json");
    execFileSync("mkfifo", [fifo]);
    const r = await ppm(viewArgs(fifo));
    expect(r.hung).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--views ${fifo}: not a regular file`);
  });

  it("a file above the size cap (300 MB, sparse) is refused before it is read", async () => {
    const big = path.join(dir("big"), "views.json");
    fs.writeFileSync(big, "");
    fs.truncateSync(big, 300 * 1024 * 1024);
    const r = await ppm(viewArgs(big));
    expect(r.hung).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--views .* is too large \(314572800 bytes; at most 1048576\)/);
  });

  it("--views tok --token-file tok prints nothing of the token, and the token is read first", async () => {
    const d = dir("tok");
    const tok = path.join(d, "tok");
    const secret = "demo-acme-token";
    fs.writeFileSync(tok, `${secret}\n`, { mode: 0o600 });
    fs.chmodSync(tok, 0o600);
    const r = await ppm(["export", "--view", "Top", "--views", tok, "--token-file", tok, "--env", fixture.svc().url], {});
    expect(piecesOf(secret, r.stdout + r.stderr.replaceAll(tok, "FILE"))).toEqual([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--views ${tok} is not a views file exported from the PPM pane (not JSON)`);
    // A JSON file that is not a views document: named as such, nothing of it quoted.
    const json = path.join(d, "secret.json");
    fs.writeFileSync(json, JSON.stringify({ apiSecret: "zq-SECRET-77b1e0" }));
    const j = await ppm(["export", "--view", "Top", "--views", json, "--env", fixture.svc().url]);
    expect(j.code).toBe(2);
    expect(j.stderr).toContain('(no "format": "ppm-views")');
    expect(piecesOf("zq-SECRET-77b1e0", j.stdout + j.stderr)).toEqual([]);
    expect(await served()).toEqual([]);
  });

  it("is read after the token: without one, the token is what the run stops at", async () => {
    const r = await ppm(["export", "--view", "Top", "--views", "/dev/zero", "--env", fixture.svc().url], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no company API token");
    expect(r.stderr).not.toContain("--views");
  });

  it("a real views file still works, and a directory or a missing file is named plainly", async () => {
    const d = dir("ok");
    const file = path.join(d, "views.json");
    fs.writeFileSync(file, serializeViews(upsertView(emptyDocument(), { name: "Top", dataset: "financials", query: parseQuery("$top=2&$select=project_id") })));
    const r = await ppm(viewArgs(file));
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\r\n")).toHaveLength(3);
    expect((await ppm(viewArgs(d))).stderr).toContain(`--views ${d}: not a regular file`);
    expect((await ppm(viewArgs(path.join(d, "nope.json")))).stderr).toContain("no such file");
  });

  it("--token-file gets the same checks: /dev/zero and a FIFO are refused at once", async () => {
    const fifo = path.join(dir("tokfifo"), "tok");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    for (const file of ["/dev/zero", fifo]) {
      const r = await ppm(["datasets", "--env", fixture.svc().url, "--token-file", file], {});
      expect(r.hung).toBe(false);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--token-file ${file}: not a regular file`);
    }
  });
});

(posix ? describe : describe.skip)("--cache must be the user's own and not writable by others (finding 5)", () => {
  /**
   * The attack: a cache directory anyone can write to, with an entry planted for the export (the
   * service's own validators, and the identity the CLI stores) and a planted output file. Before
   * #36 the export reported "unchanged" and left the planted file as the user's export.
   */
  async function planted(modeBits: number): Promise<{ cache: string; out: string }> {
    const d = dir("planted-cache");
    const cache = path.join(d, "cache");
    fs.mkdirSync(cache);
    fs.chmodSync(cache, modeBits);
    const out = path.join(d, "fin.csv");
    fs.writeFileSync(out, "project_id,budget\r\nPLANTED,1\r\n");
    const client = new PpmClient({ id: "cli", name: "the company", baseUrl: fixture.svc().url, token: TOKEN });
    await client.manifest();
    const r = await client.fetchDataset("financials", { format: "csv", conditional: false });
    if (r.status !== "updated") throw new Error("no export");
    new FileValidatorStore(cache).set(validatorKey(client.scope, "financials", "csv"), r.validators, { out, query: null, outputFormat: "csv" });
    fs.chmodSync(cache, modeBits); // set() keeps an existing directory's mode; make sure
    return { cache, out };
  }

  it.each([["0777", 0o777], ["0775 (group)", 0o775], ["0757", 0o757], ["1777 (sticky, as /tmp)", 0o1777]])("a cache directory with mode %s is refused before anything is sent; the planted entry decides nothing", async (_label, bits) => {
    const { cache, out } = await planted(bits);
    await fetch(`${fixture.svc().url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const r = await ppm(["export", "financials", "--env", fixture.svc().url, "--out", out, "--cache", cache]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--cache .* is writable by other users \(mode \d+\); refusing to use it/);
    expect(r.stderr).not.toContain("unchanged (the service answered 304");
    expect(await served()).toEqual([]);
  });

  it("a directory that belongs to another user is refused", async () => {
    const d = dir("foreign-cache");
    let foreign: string;
    if (process.getuid?.() === 0) {
      foreign = path.join(d, "cache");
      fs.mkdirSync(foreign, { mode: 0o700 });
      fs.chownSync(foreign, 65534, 65534);
    } else {
      foreign = "/"; // root's, and not writable by others
    }
    const r = await ppm(["export", "financials", "--env", fixture.svc().url, "--out", path.join(d, "fin.csv"), "--cache", foreign]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--cache ${foreign} belongs to another user`);
  });

  it("the user's own 0700 or 0755 directory works, and a missing one is created 0700", async () => {
    const { cache, out } = await planted(0o755);
    const r = await ppm(["export", "financials", "--env", fixture.svc().url, "--out", out, "--cache", cache]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("unchanged");
    const fresh = path.join(dir("fresh"), "new", "cache");
    const f = await ppm(["export", "financials", "--env", fixture.svc().url, "--out", path.join(path.dirname(fresh), "..", "fin.csv"), "--cache", fresh]);
    expect(f.code).toBe(0);
    expect((fs.statSync(fresh).mode & 0o777).toString(8)).toBe("700");
  });
});
