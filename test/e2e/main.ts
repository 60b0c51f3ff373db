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
 * `--profiles=windows,mac,windows-2021` then runs the core journeys (CORE below) again on each of
 * those platform profiles (`preview.html?profile=…`: the client file Office loads there, its
 * requirement sets and limits), each in a fresh browser context against freshly reset services,
 * prints a profile × journey table and writes it to test-results/e2e/profiles.json.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { chromium, type Browser } from "playwright-core";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { buildAddin } from "./build";
import { ACTIVITY_SCRIPT, E2E, type ExtraServiceOptions, type Journey } from "./harness";
import { JOURNEYS } from "./journeys";
import { startStaticServer, type StaticServer } from "./static-server";
import { startCaptureServer, type CaptureServer } from "./capture-server";
import { CONTROL } from "../helpers/control";

const root = path.resolve(__dirname, "..", "..");
/**
 * Screenshots of passed journeys go to test-results/e2e/screenshots; with PPM_UPDATE_SCREENSHOTS=1
 * they replace the README's copies in docs/screenshots (so a plain `npm test` leaves the tree clean).
 */
const SCREENSHOTS = process.env.PPM_UPDATE_SCREENSHOTS === "1"
  ? path.join(root, "docs", "screenshots")
  : path.join(root, "test-results", "e2e", "screenshots");
const FAILURES = path.join(root, "test-results", "e2e");
/**
 * A journey is stuck when nothing at all has happened in the page for this long (no DOM change in
 * any frame, no request; see harness.ts): it fails then, however long it has run. There is no
 * time budget a slow or loaded machine could run out of (issue #37: journeys failed at a load
 * average of 7-8 that passed on a quiet machine). Its own waits say more precisely what was missing.
 */
const JOURNEY_IDLE_MS = 60_000;
/**
 * A broken build (say, the connection journey fails) would make every later journey wait for
 * what never comes: after this many failed journeys in a row the rest are reported as not run.
 */
const MAX_FAILURES_IN_A_ROW = 5;
/** Playwright's own waits (clicks, waitFor) never give up first: the journey's watchdog decides. */
const PLAYWRIGHT_TIMEOUT_MS = 30 * 60_000;

/**
 * The core journeys every platform profile runs (`--profiles=…`): the task pane on the platform's
 * client library, a connection, the dataset list, an import, refresh unchanged and after a
 * regeneration, and the ribbon sharing the pane's runtime.
 */
const CORE = [
  "preview: the grid shows",
  "preview: the real task pane starts",
  "connections: add acme",
  "datasets: the manifest's datasets",
  "import: financials (JSON) into a new sheet",
  "refresh: all bound tables, unchanged export",
  "refresh: after regeneration",
  "ribbon: one shared runtime",
];
const PROFILES = ["web", "windows", "mac", "windows-2021"] as const;

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

/** Runs a journey, failing it when the page has been still for `idleMs` (see {@link JOURNEY_IDLE_MS}). */
async function watched<T>(p: Promise<T>, t: E2E, idleMs: number, what: string): Promise<T> {
  let stop = false;
  const watchdog = (async (): Promise<never> => {
    let seen = await t.activity();
    let changedAt = Date.now();
    while (!stop) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await t.activity();
      if (now !== seen) {
        seen = now;
        changedAt = Date.now();
      } else if (Date.now() - changedAt > idleMs) {
        throw new Error(`${what}: stuck, nothing happened in the page for ${idleMs / 1000} s`);
      }
    }
    return new Promise<never>(() => undefined);
  })();
  try {
    return await Promise.race([p, watchdog]);
  } finally {
    stop = true;
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const filter = args.find((a) => !a.startsWith("--"));
  const extraProfiles = (args.find((a) => a.startsWith("--profiles="))?.slice("--profiles=".length).split(",").filter((p) => p !== "" && p !== "web") ?? []) as Array<(typeof PROFILES)[number]>;
  for (const p of extraProfiles) if (!(PROFILES as readonly string[]).includes(p)) throw new Error(`--profiles: unknown profile '${p}' (one of ${PROFILES.join(", ")})`);
  /** Outcome of each core journey per profile, for the table. */
  const table = new Map<string, Map<string, string>>();
  const browserPath = process.env.PPM_E2E_BROWSER;
  if (!browserPath) throw new Error("PPM_E2E_BROWSER is not set; start the suite with `node test/e2e/run.js`.");
  const started = Date.now();

  let service: ReferenceService | undefined;
  let otherService: ReferenceService | undefined;
  const extraServices: ReferenceService[] = [];
  const captures: CaptureServer[] = [];
  let files: StaticServer | undefined;
  let browser: Browser | undefined;
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-e2e-"));
  let passed = 0;
  let failed = 0;
  try {
    // The file server first: the services answer CORS for its origin only (issue #36), as they do
    // for the dev server's under `npm start`. It serves the build directory as the build fills it.
    files = await startStaticServer(outDir);
    const allowedOrigins = [files.origin];
    service = await startReferenceService({ port: 0, quiet: true, allowedOrigins });
    // A second environment: older feature set (no snapshot or record routes) and a large financials export.
    otherService = await startReferenceService({ port: 0, quiet: true, absentGroups: ["snapshot", "record"], datasetRows: { financials: 10_000 }, allowedOrigins });
    const build = await buildAddin(root, outDir, service.url);
    const sizes = Object.entries(build.assets)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, size]) => `${name} ${kb(size)}`)
      .join(", ");
    console.log(`e2e: development build in ${(build.ms / 1000).toFixed(1)} s (unminified: ${sizes})`);
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
    const newContext = async () => {
      const ctx = await browser!.newContext({ viewport: { width: 1360, height: 860 }, locale: "en-US", timezoneId: "UTC" });
      // Every frame counts its DOM changes: the journeys' waits follow that, not the clock.
      await ctx.addInitScript(ACTIVITY_SCRIPT);
      return ctx;
    };
    const context = await newContext();
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
    // Content-Security-Policy (issue #22): the pages are served with the policy enforced; every
    // frame of every page reports each `securitypolicyviolation` event, and a journey during which
    // one fires fails, naming it.
    const violations: string[] = [];
    const collectViolations = async (ctx: import("playwright-core").BrowserContext): Promise<void> => {
      await ctx.exposeBinding("__ppmCspViolation", (source, v: { directive: string; blocked: string; sourceFile: string; line: number; sample: string }) => {
        violations.push(`${v.directive} blocked ${v.blocked || "(inline)"} at ${v.sourceFile || source.frame.url()}:${v.line}${v.sample ? ` (${v.sample})` : ""}`);
      });
      await ctx.addInitScript(() => {
        document.addEventListener(
          "securitypolicyviolation",
          (e) => {
            const report = (window as unknown as { __ppmCspViolation?: (v: unknown) => void }).__ppmCspViolation;
            report?.({ directive: e.effectiveDirective || e.violatedDirective, blocked: e.blockedURI, sourceFile: e.sourceFile, line: e.lineNumber, sample: e.sample });
          },
          true,
        );
      });
    };
    await collectViolations(context);
    const page = await context.newPage();
    page.setDefaultTimeout(PLAYWRIGHT_TIMEOUT_MS);
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
      const extra = await startReferenceService({ port: 0, quiet: true, ...opts, allowedOrigins });
      extraServices.push(extra);
      ours.push(extra.url);
      return extra.url;
    };
    const startCapture = async (): Promise<CaptureServer> => {
      const c = await startCaptureServer();
      captures.push(c);
      ours.push(c.url);
      return c;
    };
    const t = new E2E(page, service.url, otherService.url, files.origin, staging, startExtraService, startCapture);
    // A 320 px task pane, the narrowest Office shows: every journey, and every screenshot, at that width.
    await page.goto(`${files.origin}/preview.html?paneWidth=320`);
    await checkPolicyEnforced(page, violations);

    // A filter keeps journeys whose name contains any of its comma-separated words (e.g. "connections,import").
    const words = filter ? filter.split(",").filter((w) => w !== "") : [];
    const journeys: Journey[] = words.length > 0 ? JOURNEYS.filter((j) => words.some((w) => j.name.includes(w))) : JOURNEYS;
    const core = JOURNEYS.filter((j) => CORE.some((c) => j.name.startsWith(c)));
    let failedInARow = 0;
    /** Runs one journey on `t` with the harness's checks; true when it passed. */
    const runJourney = async (j: Journey, t: E2E, profileLabel: string): Promise<boolean> => {
      const label = profileLabel === "web" ? j.name : `[${profileLabel}] ${j.name}`;
      if (failedInARow >= MAX_FAILURES_IN_A_ROW) {
        failed++;
        console.log(`  FAIL ${label}\n       not run: ${MAX_FAILURES_IN_A_ROW} journeys in a row failed before it (a broken build; the rest would only wait)`);
        return false;
      }
      const t0 = Date.now();
      const page = t.page;
      const errorsBefore = pageErrors.length;
      const violationsBefore = violations.length;
      consoleErrors.length = 0;
      t.notes.length = 0;
      try {
        await watched(j.run(t), t, JOURNEY_IDLE_MS, label);
        const uncaught = pageErrors.slice(errorsBefore);
        if (uncaught.length > 0) throw new Error(`uncaught error(s) in the page: ${uncaught.join(" | ")}`);
        // Reports arrive as events: let every frame run the tasks queued so far before judging.
        await settleFrames(page);
        const csp = [...new Set(violations.slice(violationsBefore))];
        if (csp.length > 0) throw new Error(`Content-Security-Policy violation(s): ${csp.join(" | ")}`);
        passed++;
        failedInARow = 0;
        if (publish && profileLabel === "web") promoteScreenshots(staging, SCREENSHOTS);
        else fs.rmSync(staging, { recursive: true, force: true });
        console.log(`  ok   ${label} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        for (const n of t.notes) console.log(`       figure: ${n}`);
        return true;
      } catch (err) {
        failed++;
        failedInARow++;
        fs.rmSync(staging, { recursive: true, force: true });
        const message = err instanceof Error ? err.message : String(err);
        console.log(`  FAIL ${label} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n       ${message.split("\n").join("\n       ")}`);
        for (const line of consoleErrors.slice(-5)) console.log(`       console: ${line.slice(0, 500)}`);
        try {
          fs.mkdirSync(FAILURES, { recursive: true });
          const shot = path.join(FAILURES, `${label.replace(/[^a-z0-9]+/gi, "-")}.png`);
          await page.screenshot({ path: shot });
          console.log(`       screenshot: ${path.relative(root, shot)}`);
        } catch {
          // The page may be gone; the message above is what matters.
        }
        return false;
      }
    };
    const record = (profileLabel: string, j: Journey, ok: boolean) => {
      const row = table.get(j.name) ?? new Map<string, string>();
      row.set(profileLabel, ok ? "ok" : "FAIL");
      table.set(j.name, row);
    };
    for (const j of journeys) {
      const ok = await runJourney(j, t, "web");
      if (core.includes(j)) record("web", j, ok);
    }
    // The core journeys again on each other platform profile: fresh services, a fresh browser context.
    for (const profileId of extraProfiles) {
      for (const url of [service.url, otherService.url]) await fetch(`${url}/__control/reset`, { method: "POST", headers: CONTROL });
      const ctx = await newContext();
      await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: files.origin });
      // The policy holds on every profile's pages too.
      await collectViolations(ctx);
      ctx.on("request", (request) => {
        const url = request.url();
        if (!ours.some((o) => url.startsWith(o)) && !url.startsWith("data:") && !url.startsWith("blob:")) foreign.push(url);
      });
      const p2 = await ctx.newPage();
      p2.setDefaultTimeout(PLAYWRIGHT_TIMEOUT_MS);
      p2.on("pageerror", (err) => pageErrors.push(err.message));
      p2.on("console", (msg) => {
        if (msg.type() === "error" || msg.type() === "warning") consoleErrors.push(`[${msg.type()}] ${msg.text()}`);
      });
      const t2 = new E2E(p2, service.url, otherService.url, files.origin, staging, startExtraService);
      await p2.goto(`${files.origin}/preview.html?profile=${profileId}&paneWidth=320`);
      for (const j of core) record(profileId, j, await runJourney(j, t2, profileId));
      await ctx.close();
    }
    console.log(`e2e: Content-Security-Policy enforced on every page; ${violations.length} violation(s) across the run`);
    const audited = new Set(t.audits.map((a) => a.screen));
    const bad = t.audits.filter((a) => a.violations.length > 0).length;
    console.log(`e2e: accessibility (axe-core ${axeVersion()}): ${t.audits.length} audits of ${audited.size} screens (task pane in light and dark at 320 and 450 px, dialogs, help page); ${bad} with serious or critical violations`);
    if (foreign.length > 0) {
      failed++;
      console.log(`  FAIL no request leaves the machine\n       requested: ${[...new Set(foreign)].join(", ")}`);
    }
    await context.close();
    if (extraProfiles.length > 0) printTable(table, ["web", ...extraProfiles]);
  } finally {
    await browser?.close().catch(() => undefined);
    await files?.close().catch(() => undefined);
    await service?.close().catch(() => undefined);
    await otherService?.close().catch(() => undefined);
    for (const extra of extraServices) await extra.close().catch(() => undefined);
    for (const c of captures) await c.close().catch(() => undefined);
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  console.log(`e2e: total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

/**
 * Before the journeys: the pages really are served with the policy, and a violation really is
 * reported (an eval attempt in the task pane frame, which the policy refuses), so "no violation"
 * later means none happened, not that nothing was listening. The canary's report is then cleared.
 */
async function checkPolicyEnforced(page: import("playwright-core").Page, violations: string[]): Promise<void> {
  const header = await page.evaluate(async () => (await fetch(location.href, { cache: "no-store" })).headers.get("Content-Security-Policy"));
  if (!header || !header.includes("require-trusted-types-for 'script'")) throw new Error(`preview.html is not served with the add-in's policy (got ${header})`);
  const frame = page.frame({ name: "taskpane" });
  if (!frame) throw new Error("the task pane frame is not there");
  await frame.waitForLoadState("domcontentloaded");
  const before = violations.length;
  // In a task of the page's own: code run by the driver's evaluate itself may eval (CDP's
  // allowUnsafeEvalBlockedByCSP), so the attempt is made from a timer, as page code would.
  const evalRefused = await frame.evaluate(
    () =>
      new Promise<boolean>((resolve) =>
        setTimeout(() => {
          try {
            // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the canary: an eval the policy must refuse
            (new Function("return 1") as () => number)();
            resolve(false);
          } catch {
            resolve(true);
          }
        }, 0),
      ),
  );
  // The report is an event: wait for it (every frame's queued tasks run first), not for a while.
  for (let i = 0; i < 100 && violations.length === before; i++) await settleFrames(page);
  if (!evalRefused || violations.length === before) throw new Error(`the policy is not enforced or its violations are not collected (eval refused: ${evalRefused}, reports: ${violations.length - before})`);
  console.log(`e2e: policy enforced (canary: ${violations.slice(before).join(" | ")})`);
  violations.length = 0;
}

function axeVersion(): string {
  return (JSON.parse(fs.readFileSync(require.resolve("axe-core/package.json"), "utf8")) as { version: string }).version;
}

/** Lets every frame of the page run the tasks queued so far (events such as policy reports). */
async function settleFrames(page: import("playwright-core").Page): Promise<void> {
  for (const f of page.frames()) {
    await f.evaluate(() => new Promise<void>((r) => setTimeout(r, 0))).catch(() => undefined);
  }
}

/** The profile × journey table (also written to test-results/e2e/profiles.json for `npm test`'s summary). */
function printTable(table: Map<string, Map<string, string>>, profiles: string[]): void {
  const rows = [...table].map(([name, cells]) => [name.length > 60 ? `${name.slice(0, 57)}...` : name, ...profiles.map((p) => cells.get(p) ?? "-")]);
  const header = ["core journey", ...profiles];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  console.log(`e2e: profile × journey\n  ${line(header)}\n  ${widths.map((w) => "-".repeat(w)).join("-|-")}\n${rows.map((r) => `  ${line(r)}`).join("\n")}`);
  fs.mkdirSync(FAILURES, { recursive: true });
  fs.writeFileSync(path.join(FAILURES, "profiles.json"), JSON.stringify({ profiles, journeys: Object.fromEntries([...table].map(([n, c]) => [n, Object.fromEntries(c)])) }, null, 2));
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`e2e: FAILED before the journeys could finish: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    console.log("e2e: 0 passed, 1 failed");
    process.exit(1);
  },
);
