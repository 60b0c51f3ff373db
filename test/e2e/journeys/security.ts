/**
 * Issue #36 in real Chromium, each in a browser context of its own (nothing here touches the
 * preview's page or its state):
 *
 * 1. A web page on another origin cannot drive the reference service: its `/__control` request with
 *    the control header dies in the refused preflight, its "blind" ones (a `no-cors` fetch, a form
 *    post) arrive without the header and are refused, it cannot read data; a page that rebinds its
 *    own host name to 127.0.0.1 gets 421. The add-in's own origin can (the same call succeeds).
 * 2. Microsoft's own host files (`excel-web-16.00.js`, `excel-win32-16.01.js`, as Office loads them)
 *    under the add-in's Content-Security-Policy with Trusted Types: their start-up parse of the
 *    host's token (`DOMParser.parseFromString`) and the untrusted-host notice, counted with the
 *    shipped default policy (src/commands/trusted-types.js) and with one that only has
 *    `createScriptURL` (as before #36).
 */
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import type { AddressInfo } from "net";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { check, checkEqual, type E2E, type Journey } from "../harness";

const root = path.resolve(__dirname, "..", "..", "..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const csp = require("../../../scripts/csp.js") as { contentSecurityPolicy: () => string };
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic"];

/** A page server on another origin (`http://localhost:<port>`: not one the service allows). */
async function foreignSite(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!doctype html><title>another site</title><p>another site</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** The outcome of a fetch made by page code: the status, or the error a page sees. */
type Outcome = { status: number; type: string } | { error: string };

const FAULT_PATH = "/api/x-issue-36";

async function faultStands(t: E2E): Promise<boolean> {
  const status = (await t.control("status", {}, "GET")) as { faults?: Array<{ path: string }> };
  return (status.faults ?? []).some((f) => f.path === FAULT_PATH);
}

export const foreignPageCannotDriveService: Journey = {
  name: "security: a page on another origin cannot drive the reference service, a DNS-rebound one neither; the add-in's origin can (#36)",
  async run(t) {
    const browser = t.page.context().browser();
    if (!browser) throw new Error("no browser");
    const site = await foreignSite();
    let ctx: BrowserContext | null = null;
    let rebinding: Browser | null = null;
    try {
      // A standing fault the control call below would clear: whether it is gone shows whether a call got through.
      await t.control("fault", { path: FAULT_PATH, status: 503, count: "unlimited" });
      const clear = `${t.serviceUrl}/__control/fault?path=${encodeURIComponent(FAULT_PATH)}&count=0`;
      ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(`${site.origin}/`);
      // Each call as page code makes it (no helper functions inside: the page gets only this text).
      const outcomes = await page.evaluate(
        async ({ clear, service }) => {
          const [withHeader, blind, status, data, dataByQuery] = await Promise.all(
            [
              fetch(clear, { method: "POST", headers: { "X-PPM-Control": "1" } }),
              fetch(clear, { method: "POST", mode: "no-cors" }),
              fetch(`${service}/__control/status`),
              fetch(`${service}/api/bi/v1/manifest`, { headers: { "Company-Api-Token": "demo-acme-token" } }),
              fetch(`${service}/api/bi/v1/manifest?company_api_token=demo-acme-token`),
            ].map((p) => p.then((r): Outcome => ({ status: r.status, type: r.type }), (e: unknown): Outcome => ({ error: String(e) }))),
          );
          return { withHeader, blind, status, data, dataByQuery };
        },
        { clear, service: t.serviceUrl },
      );
      // First what reached the service: the blind post, had it been taken, would have cleared the fault.
      check(await faultStands(t), "the fault is still there after the page's calls: none of them got through");
      check("error" in outcomes.withHeader && /Failed to fetch/.test(outcomes.withHeader.error), `the control call with its header fails in the page (preflight refused): ${JSON.stringify(outcomes.withHeader)}`);
      checkEqual(outcomes.blind, { status: 0, type: "opaque" }, "the blind no-cors post is sent, and the page learns nothing");
      check("error" in outcomes.status, `the page cannot read the control status: ${JSON.stringify(outcomes.status)}`);
      check("error" in outcomes.data && "error" in outcomes.dataByQuery, `the page cannot read data: ${JSON.stringify([outcomes.data, outcomes.dataByQuery])}`);
      // A form post (a top-level navigation, no preflight, no header): the service refuses it.
      await page.evaluate((action) => {
        const form = document.createElement("form");
        form.method = "post";
        form.action = action;
        document.body.append(form);
        form.submit();
      }, `${t.serviceUrl}/__control/stop`);
      await page.waitForURL(/__control\/stop/);
      check((await page.textContent("body"))?.includes("control_refused"), "the form post to /__control/stop is refused");
      check(await faultStands(t), "the fault is still there: no call from the other origin got through");
      await t.control("status", {}, "GET"); // the service still runs (the form did not stop it)

      // DNS rebinding: a browser that resolves an attacker's name to 127.0.0.1; the page is then
      // same-origin with the service (no CORS at all), and the service refuses its Host.
      const port = new URL(t.serviceUrl).port;
      rebinding = await chromium.launch({ executablePath: process.env.PPM_E2E_BROWSER, headless: true, args: [...FLAGS, "--host-resolver-rules=MAP rebind.attacker.test 127.0.0.1"] });
      const rebound = await (await rebinding.newContext()).newPage();
      const nav = await rebound.goto(`http://rebind.attacker.test:${port}/api/bi/v1/manifest`);
      checkEqual(nav?.status(), 421, "the rebound page's own load");
      const sameOrigin = await rebound.evaluate(async (p) => (await fetch(p, { method: "POST", headers: { "X-PPM-Control": "1" } })).status, `/__control/fault?path=${encodeURIComponent(FAULT_PATH)}&count=0`);
      checkEqual(sameOrigin, 421, "the rebound page's same-origin control call");
      check(await faultStands(t), "the fault is still there after the rebound page's call");

      // The add-in's own origin (the e2e file server, as the dev server under npm start): the same call works.
      const ours = await ctx.newPage();
      await ours.goto(`${t.origin}/no-such-page-issue-36`);
      const allowed = await ours.evaluate(async (url) => (await fetch(url, { method: "POST", headers: { "X-PPM-Control": "1" } })).status, clear);
      checkEqual(allowed, 200, "the same control call from the add-in's origin");
      check(!(await faultStands(t)), "the add-in's call cleared the fault");
      t.note(`from ${site.origin}: control call with header failed in preflight, blind no-cors post and form post refused (403), data unreadable; rebound host: 421; from ${t.origin}: 200`);
    } finally {
      await t.control("fault", { path: FAULT_PATH, count: 0 }).catch(() => undefined);
      await ctx?.close();
      await rebinding?.close();
      await site.close();
    }
  },
};

/** The page Office's host file runs in: the add-in's policy as a header, the policy file, the host file, its strings, the driver. */
function hostPage(policyFile: string, hostFile: string): string {
  return [
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>host file under the policy</title>",
    `<script src="/__issue36/${policyFile}"></script>`,
    `<script src="/office-js/${hostFile}"></script>`,
    '<script src="/__issue36/office_strings.js"></script>',
    '<script src="/__issue36/driver.js"></script>',
    "</head><body><p>host file</p></body></html>",
  ].join("\n");
}

/**
 * Drives the host file's own start-up code where it meets Trusted Types: `OSF.AppTelemetry.initialize`
 * with the host's token (`?token=`), which parses it with DOMParser, and (Excel on the web's file)
 * the untrusted-host check, which writes its notice with innerHTML. office.js (the CDN loader, not
 * loaded here) would have set the few loader members these read; they are set to its values.
 */
const DRIVER = `
"use strict";
window.__issue36 = { violations: [], steps: [] };
document.addEventListener("securitypolicyviolation", function (e) { window.__issue36.violations.push(e.effectiveDirective + " " + e.sample); });
function step(name, f) { try { window.__issue36.steps.push([name, "ok", String(f())]); } catch (e) { window.__issue36.steps.push([name, "threw", String(e)]); } }
OSF.ConstantNames = OSF.ConstantNames || { FileVersion: "16.0.15407.10000", DefaultLocale: "en-us" };
OSF.HostInfoFlags = OSF.HostInfoFlags || { SharedApp: 1, CustomFunction: 2, ProtectedDocDisable: 4, ExperimentJsEnabled: 8, PublicAddin: 16 };
OSF._OfficeAppFactory = OSF._OfficeAppFactory || { getHostInfo: function () { return { flags: 0, hostPlatform: "web", hostType: "excel", hostLocale: "en-US", isDialog: false }; }, getLoadScriptHelper: function () { return { getOfficeJsBasePath: function () { return ""; } }; } };
var token = new URLSearchParams(location.search).get("token") || "";
step("telemetry", function () {
  OSF.AppTelemetry.initialize(new OSF.OfficeAppContext("addin-id", "Excel", "16.0", "en-US", "en-US", "https://contoso.sharepoint.com/book.xlsx", "ReadWrite", null, 0, 0, token, "corr", "inst", false, false, 1, null, "", "16.0.1"));
  return "initialized";
});
window.addEventListener("load", function () {
  if (typeof OSF.InitializationHelper.prototype.checkReceiverOriginAndRun !== "function") {
    window.__issue36.steps.push(["notice", "none in this host file"]);
    window.__issue36.done = true;
    return;
  }
  step("notice", function () {
    var helper = Object.create(OSF.InitializationHelper.prototype);
    helper._webAppState = { id: 1, clientEndPoint: { _targetUrl: "https://untrusted-host.example/book", _hostTrustCheckStatus: 0, _checkStatusLogged: true } };
    helper._hostInfo = { hostType: "excel", hostPlatform: "web", hostLocale: "en-US" };
    helper.checkReceiverOriginAndRun(function () { window.__issue36.steps.push(["ran in an untrusted host"]); });
    return document.body.textContent;
  });
  window.__issue36.done = true;
});
`;

interface HostRun {
  violations: string[];
  steps: string[][];
}

export const hostFilesUnderPolicy: Journey = {
  name: "security: Microsoft's host files (excel-web-16.00.js, excel-win32-16.01.js) under the add-in's policy: Trusted Types violations counted (#36)",
  async run(t) {
    const browser = t.page.context().browser();
    if (!browser) throw new Error("no browser");
    const shipped = fs.readFileSync(path.join(root, "src", "commands", "trusted-types.js"), "utf8");
    // The policy as it was before #36: script URLs only.
    const scriptUrlOnly = shipped.replace(", createHTML: officeHtml", "");
    check(scriptUrlOnly !== shipped && !/createHTML:/.test(scriptUrlOnly), "the script-URL-only variant of the policy could be made");
    const strings = fs.readFileSync(require.resolve("@microsoft/office-js/dist/en-us/office_strings.js"), "utf8");
    const ctx = await browser.newContext();
    try {
      await ctx.route(`${t.origin}/__issue36/**`, async (route) => {
        const url = new URL(route.request().url());
        const name = url.pathname.slice("/__issue36/".length);
        const js = (body: string) => route.fulfill({ status: 200, headers: { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-store" }, body });
        if (name === "driver.js") return js(DRIVER);
        if (name === "office_strings.js") return js(strings);
        if (name === "policy-shipped.js") return js(shipped);
        if (name === "policy-script-url-only.js") return js(scriptUrlOnly);
        const m = /^(web|win32)-(shipped|script-url-only)\.html$/.exec(name);
        if (!m) return route.fulfill({ status: 404, body: "" });
        const hostFile = m[1] === "web" ? "excel-web-16.00.js" : "excel-win32-16.01.js";
        return route.fulfill({ status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": csp.contentSecurityPolicy(), "Cache-Control": "no-store" }, body: hostPage(`policy-${m[2]}.js`, hostFile) });
      });
      const load = async (host: "web" | "win32", policy: "shipped" | "script-url-only", token: string, expectViolation = false): Promise<HostRun> => {
        const page = await ctx.newPage();
        try {
          const errors: string[] = [];
          page.on("pageerror", (e) => errors.push(e.message));
          const console: string[] = [];
          page.on("console", (m) => console.push(m.text()));
          await page.goto(`${t.origin}/__issue36/${host}-${policy}.html?token=${encodeURIComponent(token)}`);
          await page.waitForFunction(() => (window as unknown as { __issue36?: { done?: boolean } }).__issue36?.done === true, undefined, { timeout: 10_000 }).catch(async () => {
            throw new Error(`${host}, ${policy}: the host file's page did not finish (errors: ${errors.join(" | ")}; console: ${console.join(" | ")}; body: ${await page.textContent("body")})`);
          });
          // Violation reports are queued tasks: where one is expected, wait for it (a starved renderer delivers late);
          // elsewhere give a late one 500 ms to show.
          await page
            .waitForFunction(() => (window as unknown as { __issue36: HostRun }).__issue36.violations.length > 0, undefined, { timeout: expectViolation ? 10_000 : 500 })
            .catch(() => undefined);
          const run = await page.evaluate(() => (window as unknown as { __issue36: HostRun }).__issue36);
          check(errors.length === 0, `${host}, ${policy}: uncaught page errors ${errors.join(" | ")}`);
          return run;
        } finally {
          await page.close();
        }
      };
      const TOKEN = encodeURIComponent('<t aid="WA104381234" pid="{1A2B}" cid="8c1f0e" oid="00000000-0000-0000-0000-000000000001" ts="1"/>');
      const MARKUP = encodeURIComponent('<img src="x" onerror="alert(1)">');
      const counts: string[] = [];
      for (const host of ["web", "win32"] as const) {
        const file = host === "web" ? "excel-web-16.00.js" : "excel-win32-16.01.js";
        const before = await load(host, "script-url-only", "", true);
        const empty = await load(host, "shipped", "");
        const token = await load(host, "shipped", decodeURIComponent(TOKEN));
        const markup = await load(host, "shipped", decodeURIComponent(MARKUP), true);
        // Office's start-up runs through in every case (it catches a refused parse itself).
        for (const [what, r] of [["before", before], ["empty token", empty], ["token", token], ["markup", markup]] as const) {
          checkEqual(r.steps.find((s) => s[0] === "telemetry"), ["telemetry", "ok", "initialized"], `${file}, ${what}: start-up telemetry`);
        }
        checkEqual(empty.violations, [], `${file} with the shipped policy, empty token (a sideloaded add-in): violations`);
        checkEqual(token.violations, [], `${file} with the shipped policy, a <t …/> token: violations`);
        checkEqual(markup.violations, ["require-trusted-types-for DOMParser parseFromString|<img src=\"x\" onerror=\"alert(1)\">"], `${file}: a token with other markup is refused and reported`);
        check(before.violations.some((v) => v.startsWith("require-trusted-types-for DOMParser parseFromString")), `${file} without createHTML reports its parse: ${JSON.stringify(before.violations)}`);
        if (host === "web") {
          const notice = empty.steps.find((s) => s[0] === "notice");
          check(notice?.[1] === "ok" && notice[2].includes("This add-in has been disabled to help keep you safe"), `the untrusted-host notice shows under the shipped policy: ${JSON.stringify(notice)}`);
          const noticeBefore = before.steps.find((s) => s[0] === "notice");
          check(noticeBefore?.[1] === "threw", `without createHTML the notice throws: ${JSON.stringify(noticeBefore)}`);
        }
        counts.push(`${file}: ${before.violations.length} violation(s) per load with a script-URL-only policy (${before.violations.map((v) => v.split("|")[0]).join("; ")}), ${empty.violations.length} with the shipped one (empty token), ${token.violations.length} (<t …/> token)`);
      }
      for (const c of counts) t.note(c);
    } finally {
      await ctx.close();
    }
  },
};
