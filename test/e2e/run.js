#!/usr/bin/env node
// Browser end-to-end suite: `npm test` runs this after jest, `npm run test:e2e` runs it alone.
//
// This file stays plain Node on purpose: it must be able to say "skipped, and why" on a machine
// without a browser before anything TypeScript is loaded. The journeys themselves are TypeScript
// (test/e2e/main.ts), run through tsx so they are type-checked with the rest of the tree.
//
// Browser: PPM_E2E_BROWSER (a path) wins; otherwise the usual Chromium / Chrome / Edge locations.
// No browser: with CI=true that is a failure (CI installs Debian's `chromium`); elsewhere the e2e
// part is skipped with a clear line and exit code 0, so `npm test` still means something.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");

const root = path.resolve(__dirname, "..", "..");

const CANDIDATES = {
  linux: [
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/opt/google/chrome/chrome",
    "/usr/bin/microsoft-edge",
    "/opt/microsoft/msedge/msedge",
  ],
  darwin: [
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
  ],
  win32: [
    path.join(process.env["PROGRAMFILES"] || "C:\\Program Files", "Google\\Chrome\\Application\\chrome.exe"),
    path.join(process.env["PROGRAMFILES(X86)"] || "C:\\Program Files (x86)", "Google\\Chrome\\Application\\chrome.exe"),
    path.join(process.env["PROGRAMFILES(X86)"] || "C:\\Program Files (x86)", "Microsoft\\Edge\\Application\\msedge.exe"),
    path.join(process.env["PROGRAMFILES"] || "C:\\Program Files", "Microsoft\\Edge\\Application\\msedge.exe"),
  ],
};

function findBrowser() {
  const explicit = process.env.PPM_E2E_BROWSER;
  if (explicit) {
    if (fs.existsSync(explicit)) return { path: explicit, tried: [explicit] };
    return { path: null, tried: [explicit], explicit: true };
  }
  const list = CANDIDATES[process.platform] || CANDIDATES.linux;
  const found = list.find((p) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  return { path: found || null, tried: list };
}

function main() {
  const ci = /^(1|true|yes)$/i.test(process.env.CI || "");
  const browser = findBrowser();
  if (!browser.path) {
    const why =
      `no Chromium, Chrome or Edge found (looked at: ${browser.tried.join(", ")}). ` +
      "Install Debian's `chromium` package, or set PPM_E2E_BROWSER to a Chromium-based browser.";
    if (ci || browser.explicit) {
      console.error(`e2e: FAILED: ${why}`);
      process.exit(1);
    }
    console.log(`e2e: SKIPPED, the browser journeys did not run: ${why}`);
    process.exit(0);
  }
  const tsxCli = require.resolve("tsx/cli", { paths: [root] });
  const child = spawn(process.execPath, [tsxCli, path.join(__dirname, "main.ts"), ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, PPM_E2E_BROWSER: browser.path },
  });
  const forward = (sig) => child.kill(sig);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("exit", (code, signal) => {
    if (signal) console.error(`e2e: FAILED: the journey runner was stopped by ${signal}`);
    process.exit(code === null ? 1 : code);
  });
}

main();
