#!/usr/bin/env node
// `npm start`: the reference service (demo data) + the webpack dev server for the task pane,
// side by side, on two origins (so CORS is exercised exactly as in a real deployment).
// Prints the URLs, the demo credentials and how to sideload manifest.xml. Ctrl+C stops both.
//
// It announces a server only once it is known to be its own: the service by the "listening on"
// line its own child prints, the dev server by a per-run id it sends back in a header (see
// webpack.config.js). Both ports are checked before anything starts, so a program already on
// 3000 or 4100 is named as a conflict instead of being shown as the task pane. `npm start -- --help`
// lists the options.
"use strict";
const { spawn } = require("child_process");
const crypto = require("crypto");
const net = require("net");
const path = require("path");
const pkg = require("../package.json");

const root = path.resolve(__dirname, "..");
const DEFAULT_DEV_PORT = pkg.config.dev_server_port;
const DEFAULT_SERVICE_PORT = pkg.config.service_port;
/** The service is restarted after an unexpected exit unless it has exited this often within RESTART_WINDOW_MS. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
const RESTART_DELAY_MS = 1000;
const SERVICE_READY_MS = 30_000;
// The first webpack build of the pane takes a while on a small machine.
const DEV_SERVER_READY_MS = 180_000;
const LAUNCH_ID_HEADER = "x-ppm-launch-id";

const HELP = `Usage: npm start [-- OPTIONS]

Starts the PPM reference service (demo data) and the webpack dev server of the task pane, and
prints their addresses once both answer. Ctrl+C stops both.

Options:
  --port N           port of the task pane dev server (default ${DEFAULT_DEV_PORT}; env PPM_DEV_PORT)
  --service-port N   port of the reference service (default ${DEFAULT_SERVICE_PORT}; env PPM_SERVICE_PORT)
  --verbose          also print every request the reference service answers and webpack's
                     progress lines (quiet by default: errors, warnings and restarts only)
  -h, --help         print this help and exit

A flag wins over its environment variable. Other environment variables:
  PPM_SERVICE_URL    environment address new connections are pre-filled with
                     (default: the reference service started here)
  PPM_DEV_HTTP=1     serve the task pane over http without trying dev certificates

Excel: \`npm run sideload\` (another terminal) loads the add-in into desktop Excel on Windows or Mac;
with another --port, \`npm run sideload -- --port N\`. Excel on the web: upload manifest.xml (it points
at https://localhost:${DEFAULT_DEV_PORT}), or for another port the one the dev server serves,
https://localhost:N/manifest.xml. Excel loads add-ins over https only.

For the launcher's own tests:
  --test-dev-server FILE   run \`node FILE\` instead of the webpack dev server (it gets
                           PPM_DEV_PORT and PPM_LAUNCH_ID and must send PPM_LAUNCH_ID back
                           in an X-PPM-Launch-Id header)
`;

class UsageError extends Error {}

function parsePort(value, name) {
  if (value === undefined || !/^\d+$/.test(String(value).trim()) || Number(value) < 1 || Number(value) > 65535) {
    throw new UsageError(`${name} must be a port number from 1 to 65535, got '${value === undefined ? "" : value}'`);
  }
  return Number(value);
}

/** Flags, then environment, then package.json's "config". */
function parseArgs(argv, env) {
  const opts = {
    help: false,
    devPort: env.PPM_DEV_PORT ? parsePort(env.PPM_DEV_PORT, "PPM_DEV_PORT") : DEFAULT_DEV_PORT,
    servicePort: env.PPM_SERVICE_PORT ? parsePort(env.PPM_SERVICE_PORT, "PPM_SERVICE_PORT") : DEFAULT_SERVICE_PORT,
    testDevServer: null,
    verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf("=");
    const flag = argv[i].startsWith("--") && eq > 0 ? argv[i].slice(0, eq) : argv[i];
    const inline = flag !== argv[i] ? argv[i].slice(eq + 1) : undefined;
    const value = () => {
      if (inline !== undefined) return inline;
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "-h":
      case "--help":
        opts.help = true;
        break;
      case "--port":
        opts.devPort = parsePort(value(), "--port");
        break;
      case "--service-port":
        opts.servicePort = parsePort(value(), "--service-port");
        break;
      case "--verbose":
        opts.verbose = true;
        break;
      case "--test-dev-server":
        opts.testDevServer = path.resolve(value());
        break;
      default:
        throw new UsageError(`unknown option '${argv[i]}'`);
    }
  }
  if (!opts.help && opts.devPort === opts.servicePort) {
    throw new UsageError(`the dev server and the reference service cannot share port ${opts.devPort}; choose two ports`);
  }
  return opts;
}

/** Resolves with the error code when binding host:port fails, null when it is free. */
function bindError(port, host) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", (err) => resolve(err.code || "error"));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

/** True when something accepts connections on host:port. */
function answers(port, host) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Why `port` cannot be used on localhost, or null. Both loopback families count: a browser may
 * resolve localhost to either, and a program on one of them would answer in our place.
 */
async function portProblem(port) {
  for (const host of ["127.0.0.1", "::1"]) {
    const code = await bindError(port, host);
    // No IPv6 loopback on this machine: nothing can be listening there either.
    if (code === "EADDRNOTAVAIL" || code === "EAFNOSUPPORT") continue;
    if (code === "EADDRINUSE") return "is already in use by another program";
    if (code === "EACCES") return "needs privileges this user does not have";
    if (code) return `cannot be opened (${code})`;
    if (await answers(port, host)) return "is already in use by another program";
  }
  return null;
}

async function nextFreePort(from, avoid) {
  for (let p = from + 1; p <= Math.min(from + 50, 65535); p++) {
    if (!avoid.includes(p) && !(await portProblem(p))) return p;
  }
  return null;
}

/** "exited with status 1" / "was stopped by signal SIGKILL": what the OS reported, nothing guessed. */
function describeExit(code, signal) {
  return signal ? `was stopped by signal ${signal}` : `exited with status ${code}`;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

const log = (line) => console.log(`[start] ${line}`);
const warn = (line) => console.error(`[start] ${line}`);

/** Spawns a child whose output is passed through line by line with a [name] prefix. */
function spawnPrefixed(name, cmd, args, env, onLine) {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const pipe = (stream, out) => {
    let buf = "";
    stream.on("data", (d) => {
      buf += d.toString();
      const lines = buf.split(/\r?\n/);
      buf = lines.pop();
      for (const l of lines) {
        if (!l.trim()) continue;
        out.write(`[${name}] ${l}\n`);
        if (onLine) onLine(l);
      }
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  return child;
}

/** Resolves with the dev server's base URL once it answers with this run's id, or null if `alive()` turns false or time runs out. */
async function waitForDevServer(port, launchId, alive, ms) {
  const probe = (mod, protocol) =>
    new Promise((resolve) => {
      const req = mod.get(
        { host: "localhost", port, path: "/taskpane.html", rejectUnauthorized: false, timeout: 2000 },
        (res) => {
          res.resume();
          resolve(res.headers[LAUNCH_ID_HEADER] === launchId ? `${protocol}://localhost:${port}` : null);
        },
      );
      req.on("error", () => resolve(null));
      req.on("timeout", () => req.destroy());
    });
  const end = Date.now() + ms;
  while (Date.now() < end && alive()) {
    // The dev server picks https or http itself (webpack.config.js). https is probed without
    // certificate checks: Node does not read the OS store the dev CA goes into.
    const url = (await probe(require("https"), "https")) || (await probe(require("http"), "http"));
    if (url) return url;
    await sleep(500);
  }
  return null;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2), process.env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`npm start: ${e.message}\nRun \`npm start -- --help\` for the options.`);
    process.exitCode = 2;
    return;
  }
  if (opts.help) {
    process.stdout.write(HELP);
    return;
  }
  const { devPort, servicePort } = opts;

  const conflicts = [];
  for (const [port, what, flag, envName] of [
    [devPort, "task pane dev server", "--port", "PPM_DEV_PORT"],
    [servicePort, "reference service", "--service-port", "PPM_SERVICE_PORT"],
  ]) {
    const problem = await portProblem(port);
    if (!problem) continue;
    const free = await nextFreePort(port, [devPort, servicePort]);
    const example = free ?? port + 1;
    conflicts.push(
      `npm start: port ${port} (${what}) ${problem}.\n` +
        `  Stop that program, or choose another port: npm start -- ${flag} ${example}  (or ${envName}=${example} npm start)` +
        (free ? `; ${free} is free.` : "."),
    );
  }
  if (conflicts.length > 0) {
    console.error(conflicts.join("\n"));
    console.error("Nothing was started.");
    process.exitCode = 1;
    return;
  }

  const serviceUrl = `http://localhost:${servicePort}`;
  const launchId = crypto.randomBytes(16).toString("hex");
  let stopping = false;
  const running = new Set();

  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    const exits = [...running].map((c) => new Promise((r) => c.once("exit", r)));
    for (const c of running) c.kill("SIGTERM");
    await Promise.race([Promise.all(exits), sleep(5000)]);
    process.exit(code);
  };
  process.on("SIGINT", () => stop(0));
  process.on("SIGTERM", () => stop(0));

  // ---- reference service: restarted after an unexpected exit, a bounded number of times.
  let serviceReady = null; // resolves true when the current instance listens, false if it exits first
  let serviceStoppedForGood = false;
  const serviceExits = [];
  let addinUrl = null;

  const startService = () => {
    let resolveReady;
    serviceReady = new Promise((r) => (resolveReady = r));
    // Run directly under node (tsx as a loader), so its exit status and signal are the service's own.
    const child = spawnPrefixed(
      "service",
      process.execPath,
      // CORS for the dev server's origins only (the task pane and the preview it serves, issue #36);
      // one line per request only with --verbose (issue #37: a walk through the preview printed 242).
      [
        "--import", "tsx", "src/reference/main.ts", "--port", String(servicePort),
        "--allow-origin", `https://localhost:${devPort}`, "--allow-origin", `http://localhost:${devPort}`,
        ...(opts.verbose ? [] : ["--quiet"]),
      ],
      {},
      (line) => {
        if (/listening on http/.test(line)) resolveReady(true);
      },
    );
    running.add(child);
    log(`reference service starting (pid ${child.pid})`);
    child.on("exit", async (code, signal) => {
      running.delete(child);
      resolveReady(false);
      // A Ctrl+C reaches every process of the terminal; give our own SIGINT handler the first word.
      await sleep(200);
      if (stopping) return;
      const now = Date.now();
      serviceExits.push(now);
      while (serviceExits.length && serviceExits[0] < now - RESTART_WINDOW_MS) serviceExits.shift();
      const what = `reference service (pid ${child.pid}) ${describeExit(code, signal)}`;
      if (serviceExits.length <= MAX_RESTARTS) {
        warn(`${what}; restarting it (restart ${serviceExits.length} of at most ${MAX_RESTARTS} within a minute).`);
        await sleep(RESTART_DELAY_MS);
        if (stopping) return;
        startService();
        if (await serviceReady) log(`reference service is back at ${serviceUrl}.`);
        return;
      }
      serviceStoppedForGood = true;
      const portNow = await portProblem(servicePort);
      warn(
        `${what}. It exited ${serviceExits.length} times within a minute, so it stays stopped` +
          (portNow ? ` (port ${servicePort} ${portNow}).` : ".") +
          `\n[start] The task pane dev server keeps running${addinUrl ? ` at ${addinUrl}` : ""}; calls to ${serviceUrl} fail until` +
          ` you run \`npm run service -- --port ${servicePort}\` in another terminal, or stop (Ctrl+C) and \`npm start\` again.`,
      );
    });
  };
  startService();

  // ---- task pane dev server: if it exits, there is nothing left to use, so everything stops.
  const devEnv = {
    PPM_SERVICE_URL: process.env.PPM_SERVICE_URL || serviceUrl,
    PPM_DEV_PORT: String(devPort),
    PPM_LAUNCH_ID: launchId,
    // webpack.config.js: the dev server's progress lines ("wait until bundle finished: …") only with --verbose.
    ...(opts.verbose ? { PPM_VERBOSE: "1" } : {}),
  };
  const devArgs = opts.testDevServer
    ? [opts.testDevServer]
    : [require.resolve("webpack-cli/bin/cli.js", { paths: [root] }), "serve", "--mode", "development", "--port", String(devPort)];
  // Why the dev server serves http, as it says it (webpack.config.js), for the record below.
  let httpReason = null;
  const devServer = spawnPrefixed("addin", process.execPath, devArgs, devEnv, (line) => {
    const m = /dev certificates unavailable \((.*)\); serving over http/.exec(line);
    if (m) httpReason = m[1];
  });
  running.add(devServer);
  log(`task pane dev server starting (pid ${devServer.pid}); its first build takes up to a minute`);
  let devServerAlive = true;
  devServer.on("exit", async (code, signal) => {
    running.delete(devServer);
    devServerAlive = false;
    await sleep(200);
    if (stopping) return;
    warn(`task pane dev server (pid ${devServer.pid}) ${describeExit(code, signal)}; stopping the reference service too. See the [addin] lines above.`);
    stop(1);
  });

  const firstServiceReady = await Promise.race([serviceReady, sleep(SERVICE_READY_MS).then(() => false)]);
  addinUrl = await waitForDevServer(devPort, launchId, () => devServerAlive && !stopping, DEV_SERVER_READY_MS);
  if (stopping || !devServerAlive) return;
  const serviceLine = firstServiceReady
    ? serviceUrl
    : serviceStoppedForGood
      ? "(stopped — see the [service] and [start] lines above)"
      : "(not answering yet — see the [service] lines above)";
  const lines = [
    "",
    "PPM for Excel — development",
    `  Reference service : ${serviceLine}`,
    `  Task pane         : ${addinUrl ? `${addinUrl}/taskpane.html` : `(no answer on port ${devPort} within ${DEV_SERVER_READY_MS / 1000} s — see the [addin] lines above)`}`,
    addinUrl ? `  Browser preview   : ${addinUrl}/preview.html  (task pane + emulated workbook, no Excel needed; ${addinUrl}/ leads there)` : null,
    addinUrl ? "                      its second bar regenerates data, makes the service fail or stops it, sets the pane's width and theme" : null,
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
    "  Sideload into Excel (it loads add-ins over https only):",
    devPort === DEFAULT_DEV_PORT || !addinUrl
      ? `    Manifest         : ${path.join(root, "manifest.xml")} (points at https://localhost:${DEFAULT_DEV_PORT})`
      : `    Manifest         : save ${addinUrl}/manifest.xml (this port's; the repository's manifest.xml points at port ${DEFAULT_DEV_PORT})`,
    `    Desktop Excel    : npm run sideload${devPort === DEFAULT_DEV_PORT ? "" : ` -- --port ${devPort}`}   (another terminal; Windows or Mac, with office-addin-debugging; it says so where there is no desktop Excel)`,
    "    Excel on the web : Home > Add-ins > More add-ins > My add-ins > Upload My Add-in > the manifest",
    "  Then: Data tab > Portfolio > Open.  Ctrl+C stops both servers.",
    opts.verbose ? null : "  Quiet: errors and warnings only. `npm start -- --verbose` also prints every service request and webpack's progress.",
    "",
  ];
  console.log(lines.filter((l) => l !== null).join("\n"));
  if (addinUrl) recordDevServer(addinUrl, httpReason);
}

/**
 * Records the origin the dev server really serves, for `ppm doctor` (src/cli/devOrigin.ts): the
 * certificate files can exist while their authority could not be installed, so only what was
 * served tells whether it is https. In PPM_STATE_DIR (default node_modules/.cache/ppm).
 */
function recordDevServer(origin, httpReason) {
  const dir = process.env.PPM_STATE_DIR || path.join(root, "node_modules", ".cache", "ppm");
  try {
    require("fs").mkdirSync(dir, { recursive: true });
    const record = { origin, at: new Date().toISOString(), ...(origin.startsWith("http:") && httpReason ? { httpReason: httpReason.slice(0, 300) } : {}) };
    require("fs").writeFileSync(path.join(dir, "dev-server.json"), JSON.stringify(record, null, 2) + "\n");
  } catch {
    // A read-only checkout: doctor then falls back to its prediction.
  }
}

main().catch((e) => {
  console.error(`npm start: ${e && e.stack ? e.stack : e}`);
  process.exitCode = 1;
});
