#!/usr/bin/env node
// `npm test`: the whole suite, on every platform profile (src/emulator/profiles.ts), ending with a
// profile × journey table.
//
//   1. type checks (tsconfig.json and tsconfig.core.json);
//   2. jest, every suite, on the web profile (Excel on the web: excel-web-16.00.js, 5 MB limits);
//   3. jest, the workbook integration tests (test/workbook), again on Windows (Microsoft 365), Mac and
//      Excel 2021 volume-licensed: each loads that platform's client file and answers with its
//      requirement sets and limits (PPM_EXCEL_PROFILE);
//   4. the browser journeys: all of them on the web profile, the core ones again on the other three
//      (`test/e2e/run.js --profiles=…`);
//   5. the table: per profile, the workbook integration tests and each core journey.
// Exits 1 when anything failed. Each step runs even when an earlier one failed, so one run shows all.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

const root = path.resolve(__dirname, "..");
const results = path.join(root, "test-results", "profiles");
const PROFILES = ["web", "windows", "mac", "windows-2021"];
const OTHERS = PROFILES.filter((p) => p !== "web");
const bin = (name) => path.join(root, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);

function step(title, cmd, args, env = {}) {
  console.log(`\n=== ${title}`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  const ok = r.status === 0;
  console.log(`=== ${title}: ${ok ? "passed" : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return ok;
}

/** Passed / total of the test/workbook suites in a jest JSON report; null when there is none. */
function workbookCounts(file) {
  if (!fs.existsSync(file)) return null;
  const report = JSON.parse(fs.readFileSync(file, "utf8"));
  let passed = 0;
  let total = 0;
  for (const suite of report.testResults ?? []) {
    if (!/[\\/]test[\\/]workbook[\\/]/.test(suite.name)) continue;
    for (const a of suite.assertionResults ?? []) {
      total++;
      if (a.status === "passed") passed++;
    }
    // A suite that failed to run (syntax, import) has no assertions: count it as one failure.
    if ((suite.assertionResults ?? []).length === 0 && suite.status === "failed") total++;
  }
  return { passed, total };
}

function main() {
  fs.rmSync(results, { recursive: true, force: true });
  fs.mkdirSync(results, { recursive: true });
  let ok = true;
  ok = step("type check", "npm", ["run", "--silent", "typecheck"]) && ok;
  ok = step("jest (web profile, every suite)", bin("jest"), ["--json", `--outputFile=${path.join(results, "jest-web.json")}`], { PPM_EXCEL_PROFILE: "web" }) && ok;
  for (const p of OTHERS) {
    ok = step(`jest (${p} profile, test/workbook)`, bin("jest"), ["test/workbook", "--json", `--outputFile=${path.join(results, `jest-${p}.json`)}`], { PPM_EXCEL_PROFILE: p }) && ok;
  }
  const profileFile = path.join(root, "test-results", "e2e", "profiles.json");
  fs.rmSync(profileFile, { force: true });
  const e2eOk = step("browser journeys (all on web, core ones on every profile)", process.execPath, [path.join(root, "test", "e2e", "run.js"), `--profiles=${OTHERS.join(",")}`]);
  ok = e2eOk && ok;

  // The table.
  const journeys = fs.existsSync(profileFile) ? JSON.parse(fs.readFileSync(profileFile, "utf8")).journeys : null;
  const rows = [["workbook integration tests (jest)", ...PROFILES.map((p) => {
    const c = workbookCounts(path.join(results, `jest-${p}.json`));
    return c ? `${c.passed === c.total ? "ok" : "FAIL"} ${c.passed}/${c.total}` : "-";
  })]];
  if (journeys) {
    for (const [name, cells] of Object.entries(journeys)) rows.push([name.length > 60 ? `${name.slice(0, 57)}...` : name, ...PROFILES.map((p) => cells[p] ?? "-")]);
  } else rows.push(["browser journeys", ...PROFILES.map(() => "not run (see above)")]);
  const header = ["", ...PROFILES];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  console.log(`\n=== profile × journey\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("-|-")}\n${rows.map(line).join("\n")}`);
  console.log(`\nnpm test: ${ok ? "passed" : "FAILED"}`);
  return ok ? 0 : 1;
}

process.exit(main());
