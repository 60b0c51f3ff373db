/**
 * The browser end-to-end suite (started by run.js, which has already found a browser).
 *
 * 1. starts the reference service on 127.0.0.1 (port 0);
 * 2. builds the add-in in development mode (task pane, commands, preview) into a temp directory;
 * 3. serves it from http://localhost:<port> (another origin than the service: CORS is exercised);
 * 4. opens preview.html in Chromium and runs the journeys in order, each through the real UI;
 * 5. prints one line per journey and closes with `e2e: N passed, M failed` alone on a line.
 *
 * Screenshots of the main states are kept when the journey that took them passed (see SCREENSHOTS:
 * docs/screenshots/ with PPM_UPDATE_SCREENSHOTS=1); a failing journey leaves one in test-results/e2e/.
 * Usage: `node test/e2e/run.js [word,word]` runs only journeys whose name contains one of the words.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { chromium, type Browser } from "playwright-core";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { buildAddin } from "./build";
import { E2E, type ExtraServiceOptions, type Journey } from "./harness";
import { JOURNEYS } from "./journeys";
import { startStaticServer, type StaticServer } from "./static-server";

const root = path.resolve(__dirname, "..", "..");
/**
 * Screenshots of passed journeys go to test-results/e2e/screenshots; with PPM_UPDATE_SCREENSHOTS=1
 * they replace the README's copies in docs/screenshots (so a plain `npm test` leaves the tree clean).
 */
const SCREENSHOTS = process.env.PPM_UPDATE_SCREENSHOTS === "1"
  ? path.join(root, "docs", "screenshots")
  : path.join(root, "test-results", "e2e", "screenshots");
const FAILURES = path.join(root, "test-results", "e2e");
/** A journey that takes longer than this is stuck; fail it rather than the whole run's time budget. */
const JOURNEY_TIMEOUT_MS = 90_000;
/**
 * When an early journey breaks (say, connections), the later ones each wait out their timeouts;
 * past this budget the rest are reported as not run, so a broken build fails in minutes, not half an hour.
 */
const RUN_BUDGET_MS = 8 * 60_000;

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Moves the staged screenshots of a passed journey into the documentation folder. */
function promoteScreenshots(from: string, to: string): void {
  if (!fs.existsSync(from)) return;
  fs.mkdirSync(to, { recursive: true });
  for (const name of fs.readdirSync(from)) {
    fs.copyFileSync(path.join(from, name), path.join(to, name));
    fs.rmSync(path.join(from, name));
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const filter = process.argv[2];
  const browserPath = process.env.PPM_E2E_BROWSER;
  if (!browserPath) throw new Error("PPM_E2E_BROWSER is not set; start the suite with `node test/e2e/run.js`.");
  const started = Date.now();

  let service: ReferenceService | undefined;
  let otherService: ReferenceService | undefined;
  const extraServices: ReferenceService[] = [];
  let files: StaticServer | undefined;
  let browser: Browser | undefined;
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-e2e-"));
  let passed = 0;
  let failed = 0;
  try {
    service = await startReferenceService({ port: 0, quiet: true });
    // A second environment: older feature set (no snapshot or record routes) and a large financials export.
    otherService = await startReferenceService({ port: 0, quiet: true, absentGroups: ["snapshot", "record"], datasetRows: { financials: 10_000 } });
    const build = await buildAddin(root, outDir, service.url);
    const sizes = Object.entries(build.assets)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, size]) => `${name} ${kb(size)}`)
      .join(", ");
    console.log(`e2e: development build in ${(build.ms / 1000).toFixed(1)} s (unminified: ${sizes})`);
    files = await startStaticServer(outDir);
    browser = await chromium.launch({
      executablePath: browserPath,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        // Only the two loopback origins resolve; anything else fails at once (and is reported below).
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
      ],
    });
    console.log(`e2e: ${browserPath} (Chromium ${browser.version()}); add-in at ${files.origin}, service at ${service.url}`);
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 }, locale: "en-US", timezoneId: "UTC" });
    // "Copy details" writes to the clipboard; the journey reads it back to check what was copied.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: files.origin });
    // Nothing may come from the internet: a request to any other origin is a bug in the preview.
    // Watched, not intercepted: with request interception on, the browser driver answers CORS
    // preflights itself, and the service's CORS answers would go untested. The host resolver rule
    // above makes any such request fail fast instead of waiting on the network.
    const foreign: string[] = [];
    const ours = [files.origin, service.url, otherService.url];
    context.on("request", (request) => {
      const url = request.url();
      // A stopped reference service's standby listener is on another loopback port (issue #25):
      // loopback never leaves the machine.
      const loopback = /^http:\/\/127\.0\.0\.1:\d+\/__control\//.test(url);
      if (!ours.some((o) => url.startsWith(o)) && !loopback && !url.startsWith("data:") && !url.startsWith("blob:")) foreign.push(url);
    });
    // Diagnosis aid only (never set by `npm test`): a script run in every frame before the page's own,
    // e.g. to stub something while another part is being fixed. Its use is printed, loudly.
    if (process.env.PPM_E2E_INIT_SCRIPT) {
      console.log(`e2e: WARNING: PPM_E2E_INIT_SCRIPT=${process.env.PPM_E2E_INIT_SCRIPT} is injected; results are not a real run`);
      await context.addInitScript({ path: path.resolve(process.env.PPM_E2E_INIT_SCRIPT) });
    }
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    // Console errors are not failures by themselves (a handled 401 logs one), but they explain failures.
    const consoleErrors: string[] = [];
    page.on("console", (msg) => {
      if (msg.type() === "error" || msg.type() === "warning") consoleErrors.push(`[${msg.type()}] ${msg.text()}`);
    });
    // Screenshots are staged per journey and reach docs/screenshots only when that journey passed,
    // so the README never shows a failure, and a diagnostic run (init script) never updates them.
    const staging = path.join(outDir, "screenshots");
    const publish = !process.env.PPM_E2E_INIT_SCRIPT;
    // Journeys may start services of their own (started on demand, closed with the others).
    const startExtraService = async (opts: ExtraServiceOptions): Promise<string> => {
      const extra = await startReferenceService({ port: 0, quiet: true, ...opts });
      extraServices.push(extra);
      ours.push(extra.url);
      return extra.url;
    };
    const t = new E2E(page, service.url, otherService.url, files.origin, staging, startExtraService);
    // A 320 px task pane, the narrowest Office shows: every journey, and every screenshot, at that width.
    await page.goto(`${files.origin}/preview.html?paneWidth=320`);

    // A filter keeps journeys whose name contains any of its comma-separated words (e.g. "connections,import").
    const words = filter ? filter.split(",").filter((w) => w !== "") : [];
    const journeys: Journey[] = words.length > 0 ? JOURNEYS.filter((j) => words.some((w) => j.name.includes(w))) : JOURNEYS;
    for (const j of journeys) {
      if (Date.now() - started > RUN_BUDGET_MS) {
        failed++;
        console.log(`  FAIL ${j.name}\n       not run: the e2e run exceeded its ${RUN_BUDGET_MS / 60_000}-minute budget`);
        continue;
      }
      const t0 = Date.now();
      const errorsBefore = pageErrors.length;
      consoleErrors.length = 0;
      t.notes.length = 0;
      try {
        await withTimeout(j.run(t), JOURNEY_TIMEOUT_MS, j.name);
        const uncaught = pageErrors.slice(errorsBefore);
        if (uncaught.length > 0) throw new Error(`uncaught error(s) in the page: ${uncaught.join(" | ")}`);
        passed++;
        if (publish) promoteScreenshots(staging, SCREENSHOTS);
        console.log(`  ok   ${j.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        for (const n of t.notes) console.log(`       figure: ${n}`);
      } catch (err) {
        failed++;
        fs.rmSync(staging, { recursive: true, force: true });
        const message = err instanceof Error ? err.message : String(err);
        console.log(`  FAIL ${j.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n       ${message.split("\n").join("\n       ")}`);
        for (const line of consoleErrors.slice(-5)) console.log(`       console: ${line.slice(0, 500)}`);
        try {
          fs.mkdirSync(FAILURES, { recursive: true });
          const shot = path.join(FAILURES, `${j.name.replace(/[^a-z0-9]+/gi, "-")}.png`);
          await page.screenshot({ path: shot });
          console.log(`       screenshot: ${path.relative(root, shot)}`);
        } catch {
          // The page may be gone; the message above is what matters.
        }
      }
    }
    if (foreign.length > 0) {
      failed++;
      console.log(`  FAIL no request leaves the machine\n       requested: ${[...new Set(foreign)].join(", ")}`);
    }
    await context.close();
  } finally {
    await browser?.close().catch(() => undefined);
    await files?.close().catch(() => undefined);
    await service?.close().catch(() => undefined);
    await otherService?.close().catch(() => undefined);
    for (const extra of extraServices) await extra.close().catch(() => undefined);
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  console.log(`e2e: total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`e2e: FAILED before the journeys could finish: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    console.log("e2e: 0 passed, 1 failed");
    process.exit(1);
  },
);
