#!/usr/bin/env node
// `npm run sideload`: loads the add-in into desktop Excel with Microsoft's own tool,
// office-addin-debugging (as the Office add-in template's `npm start` does), against the task pane
// `npm start` serves. It says plainly what it cannot do: no desktop Excel here (Linux, or not
// installed), the dev server not running, or serving http (Excel loads add-ins over https only).
//
//   npm run sideload                 # the manifest for the dev server's port (package.json config, or PPM_DEV_PORT)
//   npm run sideload -- --port 3001  # the manifest for another port (as `npm start -- --port 3001`)
//   npm run sideload -- --stop       # removes the sideloaded add-in again
//   npm run sideload -- --help
"use strict";
const { spawnSync, spawn } = require("child_process");
const fs = require("fs");
const http = require("http");
const https = require("https");
const os = require("os");
const path = require("path");
const pkg = require("../package.json");

const root = path.resolve(__dirname, "..");
const MANIFEST_PORT = 3000; // manifest.xml points at https://localhost:3000/

const HELP = `Usage: npm run sideload [-- --port N] [-- --stop]

Sideloads the add-in into desktop Excel (Windows or Mac) with office-addin-debugging, Microsoft's
tool from the Office add-in template, using the manifest for the dev server's port. Start the task
pane first with \`npm start\` (in another terminal); Excel loads add-ins over https only.

Options:
  --port N   the dev server's port (default ${pkg.config.dev_server_port}; env PPM_DEV_PORT), as given to npm start
  --stop     remove the sideloaded add-in from desktop Excel
  -h, --help print this help

Excel on the web (any system, Linux included): Home > Add-ins > More add-ins > My add-ins >
Upload My Add-in, and choose the manifest this command names (its absolute path).

Exit status: 0 sideloaded (or removed); 1 it could not be done now (npm start not running, or
serving http); 2 a usage error, or no desktop Excel on this computer (as \`npm run test:excel\`).
`;

function fail(message, code = 1) {
  console.error(`npm run sideload: ${message}`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = { port: Number(process.env.PPM_DEV_PORT || pkg.config.dev_server_port), stop: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") opts.help = true;
    else if (a === "--stop") opts.stop = true;
    else if (a === "--port" || a.startsWith("--port=")) {
      const v = a.includes("=") ? a.slice(7) : argv[++i];
      if (!/^\d+$/.test(String(v)) || Number(v) < 1 || Number(v) > 65535) fail(`--port must be a port number from 1 to 65535, got '${v ?? ""}'`, 2);
      opts.port = Number(v);
    } else fail(`unknown option '${a}' (see npm run sideload -- --help)`, 2);
  }
  return opts;
}

/** The manifest for `port`: the repository's for 3000, else a copy rewritten as the dev server rewrites it (webpack.config.js). */
function manifestFor(port) {
  const repo = path.join(root, "manifest.xml");
  if (port === MANIFEST_PORT) return repo;
  const dir = process.env.PPM_STATE_DIR || path.join(root, "node_modules", ".cache", "ppm");
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `manifest-${port}.xml`);
  const from = `https://localhost:${MANIFEST_PORT}`;
  fs.writeFileSync(out, fs.readFileSync(repo, "utf8").split(from).join(`https://localhost:${port}`));
  return out;
}

/** What answers on localhost:port: "https", "http" or null. */
function probe(port) {
  const one = (mod, scheme) =>
    new Promise((resolve) => {
      const req = mod.get({ host: "localhost", port, path: "/taskpane.html", timeout: 2000, rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(scheme);
      });
      req.on("error", () => resolve(null));
      req.on("timeout", () => req.destroy());
    });
  return one(https, "https").then((s) => s || one(http, "http"));
}

/** Where desktop Excel is, or null with the reason it is not there. */
function desktopExcel() {
  if (process.platform === "darwin") {
    const apps = ["/Applications/Microsoft Excel.app", path.join(os.homedir(), "Applications", "Microsoft Excel.app")];
    const found = apps.find((a) => fs.existsSync(a));
    return found ? { found } : { why: "Microsoft Excel is not installed in /Applications on this Mac" };
  }
  if (process.platform === "win32") {
    for (const hive of ["HKLM", "HKCU"]) {
      const r = spawnSync("reg", ["query", `${hive}\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\App Paths\\excel.exe`, "/ve"], { encoding: "utf8" });
      if (r.status === 0) return { found: (r.stdout.match(/REG_SZ\s+(.+)/) || [])[1] || "excel.exe" };
    }
    return { why: "Excel is not installed on this PC (no excel.exe registered)" };
  }
  return { why: `there is no desktop Excel for ${process.platform === "linux" ? "Linux" : process.platform}` };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) return void process.stdout.write(HELP);
  // The absolute path: what a user pastes into Excel's upload dialog, and the same from any folder
  // (issue #37: a path relative to the working directory was printed when it was shorter).
  const manifest = path.resolve(manifestFor(opts.port));
  const web = `Excel on the web instead: Home > Add-ins > More add-ins > My add-ins > Upload My Add-in > ${manifest}`;
  const startCmd = `npm start${opts.port === pkg.config.dev_server_port ? "" : ` -- --port ${opts.port}`}`;

  const excel = desktopExcel();
  if (!excel.found) {
    if (opts.stop) fail(`${excel.why}, so there is nothing to remove.`, 2);
    // Excel on the web loads the pane from this machine too: say whether it could, now.
    const scheme = await probe(opts.port);
    const now =
      scheme === "https"
        ? `npm start serves https on port ${opts.port}, so that works now.`
        : scheme === "http"
          ? `But npm start serves http on port ${opts.port}, and Excel loads add-ins over https only: run \`npx office-addin-dev-certs install\` where you have admin rights and restart npm start first.\n  Without Excel: the browser preview, http://localhost:${opts.port}/preview.html`
          : `Start the task pane first: ${startCmd} (in another terminal); Excel loads it over https only.`;
    // Status 2, as `npm run test:excel` without Excel: nothing failed, this machine cannot do it.
    fail(`${excel.why}, so nothing was sideloaded.\n  ${web}\n  ${now}`, 2);
  }

  if (!opts.stop) {
    const scheme = await probe(opts.port);
    if (!scheme) fail(`nothing answers on https://localhost:${opts.port}. Start the task pane first: ${startCmd} (in another terminal), then npm run sideload again.`);
    if (scheme === "http") {
      fail(
        `npm start serves http on port ${opts.port} (it said why when it started), and Excel loads add-ins over https only: the pane would stay blank.\n` +
          "  Run `npx office-addin-dev-certs install` where you have admin rights, restart npm start, then npm run sideload again.",
      );
    }
  }

  // Microsoft's tool: registers the manifest (Windows: the developer registry key; Mac: the wef
  // folder) and opens Excel with the add-in, or removes it again with --stop.
  const cli = require.resolve("office-addin-debugging/cli.js", { paths: [root] });
  const args = opts.stop
    ? [cli, "stop", manifest, "desktop"]
    : [cli, "start", manifest, "desktop", "--app", "excel", "--no-debug", "--dev-server-port", String(opts.port)];
  console.log(`${opts.stop ? "Removing" : "Sideloading"} ${manifest} ${opts.stop ? "from" : "into"} desktop Excel (${excel.found}) with office-addin-debugging…`);
  const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
  child.on("exit", (code) => {
    if (code === 0 && !opts.stop) console.log("Done: Excel opens with the add-in; find it on the Data tab > Portfolio > Open. `npm run sideload -- --stop` removes it.");
    process.exit(code ?? 1);
  });
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
