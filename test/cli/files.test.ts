/**
 * Files the CLI writes and reads (issue #22 items 3 and 4): outputs and cache entries are created
 * exclusively (a planted link is never followed) and readable by their owner only; the token can
 * come from a file that only its owner can read, or from standard input, instead of the command line.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { runCli, type CliIo } from "../../src/cli/main";
import { FileValidatorStore, writeFileAtomic } from "../../src/service/node";
import { CONTROL } from "../helpers/control";
import { cliFixture } from "./fixture";

const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "bin/ppm.js");
const TOKEN = "demo-acme-token";
const posix = process.platform !== "win32";

const fixture = cliFixture("ppm-cli-files-");
const dir = fixture.dir;

/** Runs the CLI in this process (so a link can be planted at a name that contains this process's id). */
async function inProcess(args: string[], env: Record<string, string> = { PPM_TOKEN: TOKEN }, stdin?: string): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { env, stdout: (t) => void (out += t), stderr: (t) => void (err += t), ...(stdin !== undefined ? { readStdin: async () => stdin } : {}) };
  const code = await runCli(args, io);
  return { code, out, err };
}

/** Spawns the CLI as a user runs it, with optional standard input. */
function ppm(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } }, (e, stdout, stderr) => {
      resolve({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

const mode = (file: string) => fs.statSync(file).mode & 0o777;

(posix ? describe : describe.skip)("ppm export: files are created exclusively and owner-only", () => {
  it("a planted OUT.<pid>.tmp link is not followed: its target stays as it was", async () => {
    const d = dir("planted");
    const victim = path.join(d, "victim.txt");
    fs.writeFileSync(victim, "precious");
    const out = path.join(d, "fin.csv");
    // The name the CLI used for its temporary file before issue #22, for this very process.
    fs.symlinkSync(victim, `${out}.${process.pid}.tmp`);
    const r = await inProcess(["export", "financials", "--env", fixture.svc().url, "--out", out]);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious");
    expect(fs.lstatSync(out).isFile()).toBe(true);
    expect(fs.readFileSync(out, "utf8")).toMatch(/^project_id,/);
    // No temporary file is left behind.
    expect(fs.readdirSync(d).sort()).toEqual(["fin.csv", "fin.csv." + process.pid + ".tmp", "victim.txt"].sort());
  });

  it("a link planted at the cache entry's old temporary name is not followed either", async () => {
    const d = dir("cache-link");
    const cache = path.join(d, "cache");
    const out = path.join(d, "fin.csv");
    expect((await inProcess(["export", "financials", "--env", fixture.svc().url, "--out", out, "--cache", cache])).code).toBe(0);
    const [entry] = fs.readdirSync(cache);
    expect(entry).toMatch(/^[0-9a-f]{32}\.json$/);
    const victim = path.join(d, "victim.txt");
    fs.writeFileSync(victim, "precious");
    fs.symlinkSync(victim, path.join(cache, `${entry}.${process.pid}.tmp`));
    await fetch(`${fixture.svc().url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    expect((await inProcess(["export", "financials", "--env", fixture.svc().url, "--out", out, "--cache", cache])).code).toBe(0);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious");
    expect(fs.lstatSync(path.join(cache, entry)).isFile()).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(cache, entry), "utf8"))).toMatchObject({ validators: expect.any(Object) as unknown });
  });

  it("the temporary file is opened exclusively: an existing file or link at its name fails the write, nothing is followed", () => {
    const d = dir("exclusive");
    const victim = path.join(d, "victim.txt");
    fs.writeFileSync(victim, "precious");
    const target = path.join(d, "out.csv");
    fs.symlinkSync(victim, path.join(d, ".out.csv.fixed.tmp"));
    expect(() => writeFileAtomic(target, ["a,b\r\n"], () => "fixed")).toThrow(/EEXIST/);
    fs.writeFileSync(path.join(d, ".again.csv.fixed.tmp"), "someone else's");
    expect(() => writeFileAtomic(path.join(d, "again.csv"), ["a,b\r\n"], () => "fixed")).toThrow(/EEXIST/);
    expect(fs.readFileSync(path.join(d, ".again.csv.fixed.tmp"), "utf8")).toBe("someone else's");
    expect(fs.readFileSync(victim, "utf8")).toBe("precious");
    expect(fs.existsSync(target)).toBe(false);
  });

  it("a link at the output's own name is replaced by the new file, not written through", async () => {
    const d = dir("out-link");
    const victim = path.join(d, "victim.txt");
    fs.writeFileSync(victim, "precious");
    const out = path.join(d, "fin.csv");
    fs.symlinkSync(victim, out);
    expect((await inProcess(["export", "financials", "--env", fixture.svc().url, "--out", out])).code).toBe(0);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious");
    expect(fs.lstatSync(out).isSymbolicLink()).toBe(false);
  });

  it("outputs and cache entries are 0600 (the cache directory 0700) whatever the umask, also when rewritten", async () => {
    const d = dir("modes");
    const out = path.join(d, "fin.csv");
    const json = path.join(d, "fin.json");
    const cache = path.join(d, "cache");
    fs.writeFileSync(out, "old", { mode: 0o644 });
    fs.chmodSync(out, 0o644);
    const r = await ppm(["export", "financials", "--env", fixture.svc().url, "--out", out, "--cache", cache], { PPM_TOKEN: TOKEN });
    expect(r.code).toBe(0);
    expect(mode(out).toString(8)).toBe("600");
    expect(mode(cache).toString(8)).toBe("700");
    const entries = fs.readdirSync(cache);
    expect(entries.length).toBe(1);
    for (const e of entries) expect(mode(path.join(cache, e)).toString(8)).toBe("600");
    expect((await ppm(["export", "financials", "--env", fixture.svc().url, "--out", json, "--output-format", "json"], { PPM_TOKEN: TOKEN })).code).toBe(0);
    expect(mode(json).toString(8)).toBe("600");
    // A store written directly (the same code path as the CLI's cache).
    const store = new FileValidatorStore(path.join(d, "direct"));
    store.set("k", { etag: '"1"' });
    for (const e of fs.readdirSync(path.join(d, "direct"))) expect(mode(path.join(d, "direct", e)).toString(8)).toBe("600");
  });
});

describe("ppm: the token from a file or from standard input", () => {
  (posix ? it : it.skip)("--token-file refuses a file that other users can read, and says how to fix it", async () => {
    const d = dir("tokfile");
    const file = path.join(d, "token");
    fs.writeFileSync(file, `${TOKEN}\n`);
    for (const m of [0o644, 0o640, 0o604, 0o660]) {
      fs.chmodSync(file, m);
      await fetch(`${fixture.svc().url}/__control/requests`, { method: "DELETE", headers: CONTROL });
      const r = await ppm(["datasets", "--env", fixture.svc().url, "--token-file", file]);
      expect({ m: m.toString(8), code: r.code }).toEqual({ m: m.toString(8), code: 2 });
      expect(r.stderr).toContain(`chmod 600 ${file}`);
      expect(r.stderr).toContain(`mode 0${m.toString(8)}`);
      expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN);
      const log = (await (await fetch(`${fixture.svc().url}/__control/requests`, { headers: CONTROL })).json()) as { requests: unknown[] };
      expect(log.requests).toEqual([]);
    }
    fs.chmodSync(file, 0o600);
    const ok = await ppm(["datasets", "--env", fixture.svc().url, "--token-file", file]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("financials");
    expect(`${ok.stdout}${ok.stderr}`).not.toContain(TOKEN);
    fs.chmodSync(file, 0o400);
    expect((await ppm(["datasets", "--env", fixture.svc().url, "--token-file", file])).code).toBe(0);
  });

  it("--token-file: a missing or empty file is a usage error; a wrong token in it is named by its source", async () => {
    const d = dir("tokfile2");
    expect((await ppm(["datasets", "--env", fixture.svc().url, "--token-file", path.join(d, "nope")])).stderr).toContain("no such file");
    const empty = path.join(d, "empty");
    fs.writeFileSync(empty, "\n", { mode: 0o600 });
    const e = await ppm(["datasets", "--env", fixture.svc().url, "--token-file", empty]);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain("is empty");
    const wrong = path.join(d, "wrong");
    fs.writeFileSync(wrong, "file-WRONG-token\r\n", { mode: 0o600 });
    fs.chmodSync(wrong, 0o600);
    const w = await ppm(["datasets", "--env", fixture.svc().url, "--token-file", wrong]);
    expect(w.code).toBe(3);
    expect(w.stderr).toContain("--token-file");
    expect(w.stderr).not.toContain("WRONG");
  });

  it("--token-stdin reads the first line of standard input; PPM_TOKEN is not needed", async () => {
    const r = await ppm(["datasets", "--env", fixture.svc().url, "--token-stdin"], {}, `${TOKEN}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("financials");
    const w = await ppm(["datasets", "--env", fixture.svc().url, "--token-stdin"], { PPM_TOKEN: TOKEN }, "stdin-WRONG-token\n");
    expect(w.code).toBe(3);
    expect(w.stderr).toContain("--token-stdin");
    expect(w.stderr).not.toContain("WRONG");
    const none = await ppm(["datasets", "--env", fixture.svc().url, "--token-stdin"], {}, "");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("held no token");
  });

  it("one token option at a time; --token is refused (#36) and points at the safer ways", async () => {
    const both = await inProcess(["datasets", "--env", fixture.svc().url, "--token-file", "/nonexistent", "--token-stdin"], {}, TOKEN);
    expect(both.code).toBe(2);
    expect(both.err).toContain("use one of --token-file, --token-stdin");
    expect(both.err).not.toContain(TOKEN);
    const flag = await inProcess(["datasets", "--env", fixture.svc().url, "--token", TOKEN], {});
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/--token is not accepted.*--token-file FILE.*--token-stdin.*PPM_TOKEN/);
    expect(flag.err).not.toContain(TOKEN);
    const missing = await inProcess(["datasets", "--env", fixture.svc().url], {});
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/PPM_TOKEN.*--token-file FILE or --token-stdin/);
  });
});
