#!/usr/bin/env node
// `npm start`: the reference service (demo data) + the webpack dev server for the task pane,
// side by side, on two origins (so CORS is exercised exactly as in a real deployment).
// Prints the URLs, the demo credentials and how to sideload manifest.xml. Ctrl+C stops both.
"use strict";
const { spawn } = require("child_process");
const path = require("path");
const pkg = require("../package.json");

const root = path.resolve(__dirname, "..");
const bin = (name) => path.join(root, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);
const servicePort = Number(process.env.PPM_SERVICE_PORT || pkg.config.service_port);
const devPort = Number(process.env.PPM_DEV_PORT || pkg.config.dev_server_port);
const serviceUrl = `http://localhost:${servicePort}`;

const children = [];
function run(name, cmd, args, env) {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = (line) => `[${name}] ${line}`;
  const pipe = (stream, out) => {
    let buf = "";
    stream.on("data", (d) => {
      buf += d.toString();
      const lines = buf.split(/\r?\n/);
      buf = lines.pop();
      for (const l of lines) if (l.trim()) out.write(prefix(l) + "\n");
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${name} exited (${signal || code}); stopping.`);
      stop(code || 1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code) {
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  setTimeout(() => process.exit(code), 300);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

function answersHttps(port) {
  return new Promise((resolve) => {
    const req = require("https").get({ host: "localhost", port, path: "/taskpane.html", rejectUnauthorized: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
  });
}

async function waitFor(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      await fetch(url);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return false;
}

(async () => {
  run("service", bin("tsx"), ["src/reference/main.ts", "--port", String(servicePort)]);
  run("addin", bin("webpack"), ["serve", "--mode", "development", "--port", String(devPort)], {
    PPM_SERVICE_URL: process.env.PPM_SERVICE_URL || serviceUrl,
  });
  const serviceUp = await waitFor(`${serviceUrl}/__control/requests`, 30000);
  // The dev server picks https or http itself (see webpack.config.js); find out which one answers.
  // https is probed without certificate checks: Node does not read the OS store the dev CA goes into.
  let addinUrl = null;
  const end = Date.now() + 90000;
  while (!addinUrl && Date.now() < end) {
    if (await answersHttps(devPort)) addinUrl = `https://localhost:${devPort}`;
    else if (await waitFor(`http://localhost:${devPort}/taskpane.html`, 250)) addinUrl = `http://localhost:${devPort}`;
    else await new Promise((r) => setTimeout(r, 500));
  }
  const lines = [
    "",
    "PPM for Excel — development",
    `  Reference service : ${serviceUp ? serviceUrl : "(not reachable — see [service] lines above)"}`,
    `  Task pane         : ${addinUrl ? `${addinUrl}/taskpane.html` : "(not reachable — see [addin] lines above)"}`,
    addinUrl ? `  Browser preview   : ${addinUrl}/preview.html  (task pane + emulated workbook, no Excel needed)` : null,
    "",
    "  Demo companies (reference service):",
    "    acme   token demo-acme-token    reporting enabled; record credentials api-auth demo-api-auth, api-secret demo-api-secret",
    "    globex token demo-globex-token  reporting disabled (403 bi_reporting_disabled)",
    "",
    addinUrl && addinUrl.startsWith("http:")
      ? "  NOTE: serving over http (no trusted dev certificate could be installed here). Excel requires https:\n" +
        "        run `npx office-addin-dev-certs install` on a machine where you can, then `npm start` again.\n" +
        "        The browser preview works over http."
      : null,
    "  Sideload into Excel:",
    "    Excel on the web : Home > Add-ins > More add-ins > My add-ins > Upload My Add-in > manifest.xml",
    "    Windows / Mac    : `npx office-addin-debugging start manifest.xml desktop` (or Insert > My Add-ins > Upload)",
    "  Then: Data tab > Portfolio > Open.  Ctrl+C stops both servers.",
    "",
  ];
  console.log(lines.filter((l) => l !== null).join("\n"));
})();
