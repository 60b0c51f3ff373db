/**
 * `npm run test:excel` — prove the add-in in Excel with one command (issue #27).
 *
 *   npm run test:excel                        desktop Excel (Windows or Mac): sideloads the self-test variant
 *   npm run test:excel -- --host web          Excel on the web: serves it and prints the manifest to upload
 *   npm run test:excel -- --host emulated     the same kit on the emulated host, in headless Chromium
 *
 * Every route starts the reference service (demo data) and the kit's test server (testServer.ts:
 * 127.0.0.1 only, posts only with this run's nonce, from the page's origin, the first report only),
 * runs the self-test page's scenarios inside a new workbook, waits for the page to post its results
 * and transcript, prints the scenario × result table, saves the transcript and exits 0 (all passed),
 * 1 (a scenario failed, or the kit refused the workbook) or 2 (the route cannot run here: no desktop
 * Excel, no browser). Every file it writes (the self-test manifest, the transcript) goes through the
 * CLI's writer: a new 0600 file created exclusively, renamed over the target (issue #36).
 *
 * With `--host emulated` the saved transcript is also replayed on the emulated host at once: a run
 * whose own transcript does not replay with 0 differences fails.
 */
import { randomBytes } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { spawn, spawnSync, type ChildProcess } from "child_process";
import { writeFileAtomic } from "../../service/node";
import { printable } from "../core/printable";
import { startReferenceService, type ReferenceService } from "../../reference/server";
import { isProfileId, type ProfileId } from "../../emulator/profiles";
import { formatTable, parseReport, reportPassed, type SelfTestReport } from "../core/report";
import { formatReplay } from "../core/replay";
import { scrubTranscript } from "../core/scrub";
import { parseTranscript, serializeTranscript, exchangeCount, type Transcript } from "../core/transcript";
import { selfTestManifest } from "../core/manifest";
import { startKitServer, type KitServer } from "./testServer";
import { replayOnEmulatedHost } from "./replayHost";

const root = path.resolve(__dirname, "..", "..", "..");
const OUT_DIR = path.join(root, "test-results", "selftest");

const USAGE = `usage: npm run test:excel -- [--host excel|web|emulated] [options]

  --host excel       desktop Excel on this computer (Windows or Mac), sideloaded with office-addin-debugging (default)
  --host web         Excel on the web: starts the servers, prints the self-test manifest to upload, waits for the results
  --host emulated    the emulated host in headless Chromium (what CI runs)
  --profile P        emulated host's platform: web (default), windows, mac, windows-2021
  --save-transcript FILE   where to save the transcript (default test-results/selftest/transcript-<host>.json)
  --scrub            save the transcript scrubbed (values and names replaced): the file to send us
  --test-server-port N     port of the test server (default 4201, where the self-test page in Excel posts;
                           emulated: a free port, the page is told)
  --timeout S        seconds to wait for the results (default 600; emulated 240)

Exit status: 0 every scenario passed; 1 a scenario failed or the kit refused the workbook; 2 this route cannot run here.`;

interface Options {
  host: "excel" | "web" | "emulated";
  profile: ProfileId;
  saveTranscript: string | null;
  scrub: boolean;
  /** null: 4201 for real Excel (the page there posts to it), a free port for the emulated host. */
  testServerPort: number | null;
  timeoutS: number | null;
}

class UsageError extends Error {}

export function parseArgs(argv: string[]): Options | "help" {
  const o: Options = { host: "excel", profile: "web", saveTranscript: null, scrub: false, testServerPort: null, timeoutS: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes("=") ? [argv[i].slice(0, argv[i].indexOf("=")), argv[i].slice(argv[i].indexOf("=") + 1)] : [argv[i], undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "--help" || flag === "-h") return "help";
    else if (flag === "--host") {
      const v = value();
      if (v !== "excel" && v !== "web" && v !== "emulated") throw new UsageError(`--host must be excel, web or emulated (got "${v}")`);
      o.host = v;
    } else if (flag === "--profile") {
      const v = value();
      if (!isProfileId(v)) throw new UsageError(`--profile must be web, windows, mac or windows-2021 (got "${v}")`);
      o.profile = v;
    } else if (flag === "--save-transcript") o.saveTranscript = value();
    else if (flag === "--scrub") o.scrub = true;
    else if (flag === "--test-server-port" || flag === "--timeout") {
      const v = value();
      if (!/^\d+$/.test(v)) throw new UsageError(`${flag} must be a whole number (got "${v}")`);
      if (flag === "--timeout") o.timeoutS = Number(v);
      else o.testServerPort = Number(v);
    } else throw new UsageError(`unknown option ${argv[i]}`);
  }
  return o;
}

/** Desktop Excel on this computer, or null with the reason. */
export function findDesktopExcel(platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = fs.existsSync, env: NodeJS.ProcessEnv = process.env): { path: string | null; why: string } {
  if (platform === "darwin") {
    const p = "/Applications/Microsoft Excel.app";
    return exists(p) ? { path: p, why: "" } : { path: null, why: `no ${p}` };
  }
  if (platform === "win32") {
    const bases = [env["ProgramFiles"], env["ProgramFiles(x86)"], env["ProgramW6432"]].filter((b): b is string => !!b);
    for (const b of bases) {
      for (const rel of ["Microsoft Office\\root\\Office16\\EXCEL.EXE", "Microsoft Office\\Office16\\EXCEL.EXE"]) {
        const p = path.win32.join(b, rel);
        if (exists(p)) return { path: p, why: "" };
      }
    }
    return { path: null, why: "no EXCEL.EXE under Program Files\\Microsoft Office" };
  }
  return { path: null, why: `desktop Excel does not run on ${platform}` };
}

function webSteps(manifestPath: string): string {
  return [
    "Excel on the web:",
    "  1. npm run test:excel -- --host web     (starts the reference service, the dev server on https://localhost:3000 and the test server on https://localhost:4201, and waits)",
    "  2. In Excel on the web, create a NEW blank workbook (https://excel.new). The kit runs only in a new, empty workbook; it refuses any other.",
    `  3. Insert > Add-ins > Upload My Add-in, and choose ${manifestPath} (the one this run wrote: it carries this run's key, and the test server takes results from no other). The self-test pane opens and runs; the command prints the table.`,
    "  (Your browser must trust the development certificate of https://localhost: run `npx office-addin-dev-certs install` once.)",
  ].join("\n");
}

/** The real dev server's origin, where Excel loads the self-test page from. */
const DEV_ORIGIN = "https://localhost:3000";

/**
 * Writes the self-test manifest for this run (its page address carries the run's nonce and the test
 * server's port) to `dir`/manifest-selftest.xml, through the CLI's atomic 0600 writer.
 */
export function writeSelfTestManifest(query: Readonly<Record<string, string>>, dir = OUT_DIR): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, "manifest-selftest.xml");
  writeFileAtomic(file, [selfTestManifest(fs.readFileSync(path.join(root, "manifest.xml"), "utf8"), DEV_ORIGIN, query)]);
  return file;
}

/** Saves a transcript (its directory made if need be) through the CLI's atomic 0600 writer. */
export function saveTranscript(file: string, t: Transcript): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, [serializeTranscript(t)]);
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${Math.round(ms / 1000)} s`)), ms)))]).finally(() => clearTimeout(timer));
}

function transcriptFile(o: Options, label: string): string {
  return o.saveTranscript ? path.resolve(o.saveTranscript) : path.join(OUT_DIR, `transcript-${label}${o.scrub ? ".scrubbed" : ""}.json`);
}

/** Prints the table and saves the transcript; returns the transcript as saved (scrubbed or not) and the exit status. */
async function finish(o: Options, server: KitServer, label: string, replayIt: boolean): Promise<number> {
  const report: SelfTestReport = parseReport(await withTimeout(server.results(), (o.timeoutS ?? (o.host === "emulated" ? 240 : 600)) * 1000, "results from the self-test page"));
  console.log(`\n${formatTable(report)}`);
  let ok = reportPassed(report);
  const text = server.transcript();
  if (!text) {
    console.log("test:excel: the page sent no transcript.");
    return 1;
  }
  let t: Transcript = parseTranscript(text);
  if (o.scrub) t = scrubTranscript(t);
  const file = transcriptFile(o, label);
  saveTranscript(file, t);
  console.log(`\ntranscript: ${exchangeCount(t)} requests and answers saved to ${path.relative(process.cwd(), file)}${o.scrub ? " (scrubbed: cell values and names replaced, safe to share)" : ""}`);
  if (replayIt) {
    const r = await replayOnEmulatedHost(t);
    console.log(formatReplay(r, 20));
    if (r.differences.length) ok = false;
  } else {
    console.log(`Compare it with the emulated host: npm run host:replay -- ${path.relative(process.cwd(), file)}`);
    if (!o.scrub) console.log("To send it to us without your data, scrub it first: npm run host:replay -- FILE --scrub");
  }
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Emulated host: the preview's self-test page in headless Chromium

function findBrowser(): string | null {
  const explicit = process.env.PPM_E2E_BROWSER;
  if (explicit) return fs.existsSync(explicit) ? explicit : null;
  const candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable", "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"];
  return candidates.find((p) => fs.existsSync(p)) ?? null;
}

/** Builds only the self-test page of the preview (development mode), with the repository's webpack.config.js. */
async function buildSelfTestPage(outDir: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const webpack = require("webpack") as typeof import("webpack");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const makeConfig = require(path.join(root, "webpack.config.js")) as (env: unknown, options: { mode: string }) => Promise<import("webpack").Configuration>;
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const config = await makeConfig({}, { mode: "development" });
    const entry = config.entry as Record<string, unknown>;
    config.entry = { "office-shim": entry["office-shim"], selftest: entry.selftest } as import("webpack").EntryObject;
    // The self-test pages and the copies (client files, trusted-types.js, css); no other page.
    config.plugins = (config.plugins ?? []).filter((p) => {
      const filename = (p as { userOptions?: { filename?: unknown } } | null)?.userOptions?.filename;
      return typeof filename !== "string" || filename.startsWith("preview-selftest");
    });
    config.output = { ...config.output, path: outDir };
    config.devtool = false;
    const compiler = webpack(config);
    if (!compiler) throw new Error("webpack did not create a compiler");
    const stats = await new Promise<import("webpack").Stats>((resolve, reject) =>
      compiler.run((err, s) => compiler.close(() => (err || !s ? reject(err ?? new Error("webpack returned no stats")) : resolve(s)))),
    );
    if (stats.hasErrors()) throw new Error(`webpack: ${(stats.toJson({ all: false, errors: true }).errors ?? []).map((e) => e.message).join("\n")}`);
  } finally {
    process.chdir(cwd);
  }
}

async function runEmulated(o: Options): Promise<number> {
  const browser = findBrowser();
  if (!browser) {
    console.error("test:excel: no Chromium, Chrome or Edge found for the emulated host (set PPM_E2E_BROWSER to one).");
    return 2;
  }
  const started = Date.now();
  const closers: Array<() => Promise<unknown>> = [];
  try {
    // The test server first: the page is served from its origin, the only one the service answers (CORS).
    const server = await startKitServer(o.testServerPort ?? 0, { throwawayCertificate: true });
    closers.push(() => server.close());
    const service: ReferenceService = await startReferenceService({ port: 0, quiet: true, allowedOrigins: [server.origin] });
    closers.push(() => service.close());
    console.log(`test:excel: reference service ${service.url}; test server ${server.origin}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-selftest-"));
    closers.push(() => Promise.resolve(fs.rmSync(dir, { recursive: true, force: true })));
    await buildSelfTestPage(dir);
    console.log(`test:excel: self-test page built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const site = server.serveDirectory(dir);
    const { chromium } = await import("playwright-core");
    const b = await chromium.launch({ executablePath: browser, headless: true });
    closers.push(() => b.close());
    // The test server (which also serves the page) has a throwaway certificate made for this run.
    const page = await (await b.newContext({ ignoreHTTPSErrors: true })).newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    const file = o.profile === "web" ? "preview-selftest.html" : `preview-selftest.${o.profile}.html`;
    const url = `${site}${file}?${new URLSearchParams({ service: service.url, testServerPort: String(server.port), nonce: server.nonce, profile: o.profile }).toString()}`;
    console.log(`test:excel: running the kit on the emulated ${o.profile} host (${site}${file})`);
    await page.goto(url);
    try {
      const code = await finish(o, server, `emulated-${o.profile}`, true);
      console.log(`test:excel: ${code === 0 ? "passed" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return code;
    } catch (e) {
      const status = await page.locator("#status").textContent().catch(() => null);
      console.error(printable(`test:excel: ${e instanceof Error ? e.message : String(e)}`) + (status ? `\n  the page says: ${printable(status)}` : "") + (errors.length ? `\n  page errors:\n    ${errors.slice(0, 10).map(printable).join("\n    ")}` : ""));
      return 1;
    }
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Real Excel: desktop (sideloaded) or on the web (uploaded by the user)

function npx(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  return spawn(process.platform === "win32" ? "npx.cmd" : "npx", args, { cwd: root, stdio: "inherit", env: { ...process.env, ...opts.env }, shell: process.platform === "win32" });
}

async function runRealExcel(o: Options): Promise<number> {
  // This run's nonce, in the manifest's page address: the test server takes posts with it only.
  const nonce = randomBytes(16).toString("hex");
  const testServerPort = o.testServerPort ?? 4201;
  const manifest = writeSelfTestManifest({ testServerPort: String(testServerPort), nonce, service: "http://localhost:4100" });
  const rel = path.relative(process.cwd(), manifest);
  if (o.host === "excel") {
    const excel = findDesktopExcel();
    if (!excel.path) {
      console.log(`test:excel: no desktop Excel on this computer (${excel.why}).`);
      console.log("Nothing was started and no workbook was opened.\n");
      console.log(webSteps(rel));
      console.log("\nOr run the same kit on the emulated host: npm run test:excel -- --host emulated");
      return 2;
    }
    console.log(`test:excel: desktop Excel found (${excel.path}).`);
  }
  const closers: Array<() => Promise<unknown>> = [];
  const children: ChildProcess[] = [];
  try {
    const service = await startReferenceService({ port: 4100, quiet: true, allowedOrigins: [DEV_ORIGIN] });
    closers.push(() => service.close());
    const server = await startKitServer(testServerPort, { throwawayCertificate: false, pageOrigin: DEV_ORIGIN, nonce });
    closers.push(() => server.close());
    // The dev server (https with the trusted development certificates, as `npm start`).
    children.push(npx(["webpack", "serve", "--mode", "development"]));
    console.log(`test:excel: reference service ${service.url}, test server ${server.origin}, dev server ${DEV_ORIGIN} (building…)`);
    if (o.host === "excel") {
      // office-addin-debugging opens a NEW workbook with the self-test add-in in it (office-addin-dev-settings'
      // sideload makes a fresh document from a template); the kit checks again that the workbook is new.
      // It is fetched on demand (npx), not a dependency: its current release pulls a native module (keytar)
      // that does not build without network, which would break `npm ci` for everyone.
      children.push(npx(["--yes", "office-addin-debugging@6.0.3", "start", manifest, "desktop", "--app", "excel", "--no-debug", "--dev-server-port", "3000"]));
      console.log(`test:excel: sideloading ${rel} into desktop Excel (a new workbook)…`);
    } else {
      console.log(`\n${webSteps(rel).split("\n").slice(2).join("\n")}\n\nWaiting for the results…`);
    }
    return await finish(o, server, o.host === "excel" ? "excel-desktop" : "excel-web", false);
  } finally {
    if (o.host === "excel") spawnSync(process.platform === "win32" ? "npx.cmd" : "npx", ["--yes", "office-addin-debugging@6.0.3", "stop", manifest], { cwd: root, stdio: "inherit", shell: process.platform === "win32" });
    for (const c of children) c.kill();
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

async function main(argv: string[]): Promise<number> {
  let o: Options | "help";
  try {
    o = parseArgs(argv);
  } catch (e) {
    console.error(`test:excel: ${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    return 2;
  }
  if (o === "help") {
    console.log(USAGE);
    return 0;
  }
  return o.host === "emulated" ? runEmulated(o) : runRealExcel(o);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`test:excel: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(1);
    },
  );
}
