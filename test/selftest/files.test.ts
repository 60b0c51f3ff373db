/**
 * What the self-test tools write and read (issue #36, findings 3 and 4):
 * - every file they write (the self-test manifest, the saved transcript, host:replay's scrubbed
 *   copy) goes through the CLI's atomic writer: a link planted at the name is replaced, never
 *   followed, and the file is 0600 whatever the umask;
 * - a hostile transcript prints no control character (no terminal title, no cleared screen, no
 *   fake "0 differences" line), and a gzip bomb stops at the cap without taking the memory.
 */
import { execFile } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { promisify } from "util";
import * as zlib from "zlib";
import { main as hostReplay, readTranscriptFile } from "../../src/selftest/cli/hostReplay";
import { saveTranscript, writeSelfTestManifest } from "../../src/selftest/cli/testExcel";
import { MAX_TRANSCRIPT_BYTES, serializeTranscript, type Transcript } from "../../src/selftest/core/transcript";

const ROOT = path.resolve(__dirname, "..", "..");
const EMULATED = path.join(__dirname, "..", "transcripts", "emulated-web.json.gz");
const posix = process.platform !== "win32";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-selftest-files-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
const dir = (): string => {
  const d = path.join(tmp, `d${n++}`);
  fs.mkdirSync(d);
  return d;
};
const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

/** A small real transcript: the setup and the first import of the kit's own recording. */
function smallTranscript(): Transcript {
  const t = readTranscriptFile(EMULATED);
  return { ...t, scenarios: t.scenarios.slice(0, 2) };
}

/**
 * Plants a link at `target` to a victim file, runs `write`, and checks the victim is untouched and
 * `target` is a new regular file, 0600, written under a permissive umask.
 */
async function plantedLinkAndMode(target: string, write: () => unknown): Promise<string> {
  const victim = path.join(path.dirname(target), "victim.txt");
  fs.writeFileSync(victim, "precious");
  fs.symlinkSync(victim, target);
  const umask = process.umask(0o000);
  try {
    await write();
  } finally {
    process.umask(umask);
  }
  expect(fs.readFileSync(victim, "utf8")).toBe("precious");
  expect(fs.lstatSync(target).isSymbolicLink()).toBe(false);
  expect(fs.lstatSync(target).isFile()).toBe(true);
  expect(modeOf(target)).toBe("600");
  // Only the file and the victim: no temporary file left behind.
  expect(fs.readdirSync(path.dirname(target)).sort()).toEqual([path.basename(target), "victim.txt"].sort());
  return fs.readFileSync(target, "utf8");
}

(posix ? describe : describe.skip)("finding 3: every file the self-test tools write is exclusive and 0600", () => {
  it("test:excel's self-test manifest (with this run's nonce in the page's address)", async () => {
    const d = dir();
    const text = await plantedLinkAndMode(path.join(d, "manifest-selftest.xml"), () => writeSelfTestManifest({ testServerPort: "4201", nonce: "ab".repeat(16) }, d));
    expect(text).toContain(`<SourceLocation DefaultValue="https://localhost:3000/selftest.html?testServerPort=4201&amp;nonce=${"ab".repeat(16)}"/>`);
  });

  it("test:excel's saved transcript (--save-transcript FILE, or test-results/selftest/…)", async () => {
    const d = dir();
    const t = smallTranscript();
    const text = await plantedLinkAndMode(path.join(d, "transcript.json"), () => saveTranscript(path.join(d, "transcript.json"), t));
    expect(text).toBe(serializeTranscript(t));
    // A directory that does not exist yet is made owner-only.
    saveTranscript(path.join(d, "new", "t.json"), t);
    expect(modeOf(path.join(d, "new"))).toBe("700");
    expect(modeOf(path.join(d, "new", "t.json"))).toBe("600");
  });

  it("host:replay --scrub's copy, at its default name and at --scrub=OUT", async () => {
    const d = dir();
    const file = path.join(d, "t.json");
    fs.writeFileSync(file, serializeTranscript(smallTranscript()));
    const out: string[] = [];
    const given = path.join(dir(), "shared.json");
    const scrubbed = await plantedLinkAndMode(given, () => hostReplay([file, `--scrub=${given}`], (l) => out.push(l), (l) => out.push(l)));
    expect(JSON.parse(scrubbed)).toMatchObject({ scrubbed: true });
    expect(out.join("\n")).toMatch(/^replay: 13 requests, 0 differences/m);
    // The default name, FILE.scrubbed.json, in a directory of its own.
    const d2 = dir();
    fs.copyFileSync(file, path.join(d2, "t.json"));
    const victim = path.join(d2, "victim.txt");
    fs.writeFileSync(victim, "precious");
    fs.symlinkSync(victim, path.join(d2, "t.scrubbed.json"));
    expect(await hostReplay([path.join(d2, "t.json"), "--scrub"], () => undefined, () => undefined)).toBe(0);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious");
    expect(fs.lstatSync(path.join(d2, "t.scrubbed.json")).isFile()).toBe(true);
    expect(modeOf(path.join(d2, "t.scrubbed.json"))).toBe("600");
    expect(JSON.parse(fs.readFileSync(path.join(d2, "t.scrubbed.json"), "utf8"))).toMatchObject({ scrubbed: true });
  });
});

describe("finding 4: a hostile transcript", () => {
  /** Terminal controls a transcript can carry: title, clear screen, cursor home, C1 CSI, a bidi override, a line break and a fake summary. */
  const ATTACK = "\u001b]0;pwned\u0007\u001b[2J\u001b[H\u009b31m\u202e\r\nreplay: 999 requests, 0 differences (0 refusal, 0 error, 0 result, 0 value)\n";
  const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

  it("prints no control character from it: one line per line the command writes, whatever its text holds", async () => {
    const t = smallTranscript();
    const hostile: Transcript = {
      ...t,
      recordedAt: `2026-11-25T20:57:36Z${ATTACK}`,
      host: { ...t.host, platform: `OfficeOnline${ATTACK}`, version: `16${ATTACK}`, emulated: false },
      scenarios: t.scenarios.map((s, i) => (i === 1 ? { ...s, name: `${s.name}${ATTACK}` } : s)),
    };
    // A recorded value the emulated host will not give back: a difference that prints the value.
    const body = JSON.stringify(hostile.scenarios[1].exchanges.map((x) => x.answer));
    expect(body).toContain('"Values":[[');
    const x = hostile.scenarios[1].exchanges.find((e) => e.answer.kind === "response" && JSON.stringify(e.answer.body).includes('"Values":[['))!;
    const answer = x.answer as { kind: "response"; body: { Results: Array<{ Value: { Values?: unknown[][] } }> } };
    const r = answer.body.Results.find((v) => Array.isArray(v.Value?.Values))!;
    r.Value.Values![0][0] = `cell${ATTACK}`;
    const file = path.join(dir(), "hostile.json");
    fs.writeFileSync(file, serializeTranscript(hostile));
    const lines: string[] = [];
    const code = await hostReplay([file, "--profile", "web"], (l) => lines.push(l), (l) => lines.push(l));
    expect(code).toBe(1);
    const printed = lines.join("\n");
    // Each call prints lines separated by the command's own line breaks, and nothing else.
    for (const line of printed.split("\n")) expect([line, CONTROL.test(line)]).toEqual([line, false]);
    expect(printed.match(/^replay: /gm)).toHaveLength(1); // the one real summary, no fake one
    expect(printed).toMatch(/^replay: \d+ requests, [1-9]\d* differences? /m);
    expect(printed).toContain("\\u{1b}]0;pwned\\u{7}");
    expect(printed).toContain("\\u{9b}31m\\u{202e}");
    // An unknown option and a bad profile are echoed escaped too.
    const bad: string[] = [];
    expect(await hostReplay([file, `--x\u001b[2J`], () => undefined, (l) => bad.push(l))).toBe(2);
    expect(await hostReplay([file, "--profile", `w\u001b[2J`], () => undefined, (l) => bad.push(l))).toBe(2);
    for (const line of bad.join("\n").split("\n")) expect(CONTROL.test(line)).toBe(false);
  });

  it("a file that is not JSON is named as such, without quoting it", async () => {
    const file = path.join(dir(), "secret.json");
    fs.writeFileSync(file, "demo-acme-token\u001b[2J");
    const err: string[] = [];
    expect(await hostReplay([file], () => undefined, (l) => err.push(l))).toBe(2);
    expect(err.join("\n")).toContain("Not a transcript: the file is not JSON.");
    expect(err.join("\n")).not.toContain("demo-acme");
  });

  (posix ? it : it.skip)("a FIFO or a device is refused at once, and a file over the cap before it is read", async () => {
    const fifo = path.join(dir(), "t.json");
    await promisify(execFile)("mkfifo", [fifo]);
    expect(() => readTranscriptFile(fifo)).toThrow("Not a regular file.");
    expect(() => readTranscriptFile("/dev/zero")).toThrow("Not a regular file.");
    const big = path.join(dir(), "big.json");
    fs.writeFileSync(big, "");
    fs.truncateSync(big, MAX_TRANSCRIPT_BYTES + 1);
    expect(() => readTranscriptFile(big)).toThrow(`more than a transcript may be (${MAX_TRANSCRIPT_BYTES})`);
  });

  (process.platform === "linux" ? it : it.skip)("a gzip bomb (611 KB, 600 MB of zeros) stops at the 16 MiB cap: the process's peak memory stays far below 600 MB", async () => {
    const bomb = path.join(dir(), "bomb.json.gz");
    await new Promise<void>((resolve, reject) => {
      const gz = zlib.createGzip({ level: 9 });
      const out = fs.createWriteStream(bomb);
      gz.pipe(out);
      out.on("finish", resolve);
      out.on("error", reject);
      const zeros = Buffer.alloc(1 << 20);
      let written = 0;
      const pump = (): void => {
        while (written < 600) {
          written++;
          if (!gz.write(zeros)) return void gz.once("drain", pump);
        }
        gz.end();
      };
      pump();
    });
    expect(fs.statSync(bomb).size).toBeLessThan(1024 * 1024);
    // In a process of its own, which reports its peak resident memory (VmHWM) after the read.
    const probe = path.join(dir(), "probe.ts");
    fs.writeFileSync(
      probe,
      [
        'import * as fs from "fs";',
        `import { readTranscriptFile } from ${JSON.stringify(path.join(ROOT, "src", "selftest", "cli", "hostReplay"))};`,
        "let outcome = 'read';",
        "try { readTranscriptFile(process.argv[2]); } catch (e) { outcome = (e as Error).message; }",
        'const peak = Number(/VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"))![1]);',
        "console.log(JSON.stringify({ outcome, peakKiB: peak }));",
      ].join("\n"),
    );
    const run = async (file: string) => {
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", probe, file], { cwd: ROOT, maxBuffer: 1 << 20 });
      return JSON.parse(stdout.trim().split("\n").pop()!) as { outcome: string; peakKiB: number };
    };
    const bombed = await run(bomb);
    expect(bombed.outcome).toBe(`Decompressed, the file is more than a transcript may be (${MAX_TRANSCRIPT_BYTES} bytes); nothing more was read.`);
    // The same process reading the kit's real 1.8 MB transcript, for scale (about 95 MB here).
    const real = await run(EMULATED);
    expect(real.outcome).toBe("read");
    expect(bombed.peakKiB).toBeLessThan(real.peakKiB + (3 * MAX_TRANSCRIPT_BYTES) / 1024);
    expect(bombed.peakKiB).toBeLessThan(300 * 1024);
  }, 60_000);
});
