/**
 * What a new user's terminal shows (issue #37, items 18 and 19), run as the README says and
 * rendered as a page for the screenshot `44-terminal`: `npm start` is quiet (no line per service
 * request, no webpack progress lines; the dev server is the launcher's test stub, a webpack build
 * takes a minute), the walkthrough's export lands in the ignored `exports/` folder, and `npm run
 * sideload` without desktop Excel names the manifest by its absolute path and exits with status 2.
 */
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { check, checkEqual, type E2E, type Journey } from "../harness";
import { ACME_TOKEN } from "./connections";
import { freePort } from "../../helpers/freePort";
import { CONTROL } from "../../helpers/control";

const ROOT = path.resolve(__dirname, "..", "..", "..");

function run(args: string[], input?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: `${stdout}${stderr}` }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** `npm start` with the launcher's test stub for the dev server: its whole output once it is ready and has answered one request. */
async function quietStart(t: E2E): Promise<string> {
  const [dev, svc] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ["scripts/start.js", "--port", String(dev), "--service-port", String(svc), "--test-dev-server", "test/launcher/devServerStub.js"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once("exit", r));
  try {
    await t.until("npm start to say it is ready", () => out.includes("Ctrl+C stops both servers."));
    // A walk through the pane makes requests; quiet, none of them is printed.
    const answered = await fetch(`http://127.0.0.1:${svc}/api/bi/v1/manifest`, { headers: { "Company-Api-Token": ACME_TOKEN } });
    checkEqual(answered.status, 200, "the launcher's service answers");
    checkEqual((await fetch(`http://127.0.0.1:${svc}/__control/status`, { headers: CONTROL })).status, 200, "the launcher's service answers a control request");
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
  // The ports are the run's own (free ones), as the launcher says them; the checkout's path and the pids are shortened.
  return out.replaceAll(ROOT, "~/ppm-excel").replace(/\(pid \d+\)/g, "(pid …)");
}

export const terminal: Journey = {
  name: "terminal: npm start is quiet, the walkthrough's export is not tracked, sideload names the absolute manifest and exits 2 without Excel",
  async run(t) {
    const start = await quietStart(t);
    check(!/\[service\] (GET|POST|OPTIONS) /.test(start), `npm start printed no line per request (${start})`);
    check(!/wait until bundle finished/.test(start), "no webpack progress lines");
    check(start.includes("npm start -- --verbose"), "it says how to see them");

    // README step 6 (the token on standard input), into a file of its own there: a user's own
    // exports/fin.csv is never overwritten by a test.
    const name = `fin-e2e-${process.pid}.csv`;
    const exported = path.join(ROOT, "exports", name);
    const step6 = await run(["bin/ppm.js", "export", "financials", "--env", t.serviceUrl, "--token-stdin", "--out", `exports/${name}`, "--mkdir"], `${ACME_TOKEN}\n`);
    let ignored: string;
    try {
      checkEqual(step6.code, 0, `the walkthrough's export (${step6.out})`);
      check(fs.statSync(exported).size > 0, `exports/${name} was written`);
      const git = await new Promise<{ code: number }>((resolve) => execFile("git", ["check-ignore", "-q", `exports/${name}`], { cwd: ROOT }, (err) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 128) : 0 })));
      if (git.code === 128 || !fs.existsSync(path.join(ROOT, ".git"))) {
        // Not a git checkout (an unpacked archive): the ignore rule is what can be checked.
        check(/^exports\/$/m.test(fs.readFileSync(path.join(ROOT, ".gitignore"), "utf8")), ".gitignore ignores exports/");
        ignored = "(not a git checkout: .gitignore lists exports/)";
      } else {
        checkEqual(git.code, 0, `git check-ignore exports/${name} (0: ignored)`);
        ignored = `$ git check-ignore exports/${name} && echo ignored\nignored`;
      }
    } finally {
      fs.rmSync(exported, { force: true });
      try {
        fs.rmdirSync(path.dirname(exported));
      } catch {
        /* the folder held something of the user's: left */
      }
    }

    let sideload = "";
    if (process.platform === "linux") {
      const s = await run(["scripts/sideload.js"]);
      checkEqual(s.code, 2, `npm run sideload without desktop Excel (${s.out})`);
      check(s.out.includes(`Upload My Add-in > ${path.join(ROOT, "manifest.xml")}`), `the manifest by its absolute path (${s.out})`);
      sideload = `$ npm run sideload\n${s.out.replaceAll(ROOT, "~/ppm-excel")}(exit status ${s.code})`;
    } else {
      // Here there may be a desktop Excel: the journey never sideloads into a contributor's Excel.
      sideload = `$ npm run sideload\n(not run on ${process.platform}: this computer may have desktop Excel)`;
      t.note(`npm run sideload not run on ${process.platform}`);
    }

    const text = [`$ npm start\n${start}`, `$ npm run ppm -- export financials --env http://localhost:4100 --token-stdin --out exports/${name} --mkdir\n${step6.out.replaceAll(t.serviceUrl, "http://localhost:4100")}${ignored}`, sideload].join("\n\n");
    const page = await t.page.context().newPage();
    try {
      await page.setViewportSize({ width: 1100, height: 860 });
      const escape = (s: string) => s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c] ?? c);
      await page.setContent(
        `<!doctype html><html lang="en"><title>terminal</title><body style="margin:0;background:#1e1e1e"><pre style="margin:0;padding:12px 16px;color:#d4d4d4;font:12px/1.45 Consolas,'DejaVu Sans Mono',monospace;white-space:pre-wrap">${escape(text)}</pre></body></html>`,
      );
      await page.screenshot({ path: t.screenshotPath("44-terminal"), fullPage: true });
    } finally {
      await page.close();
    }
  },
};
