/**
 * The origin `npm start` serves the task pane from, for `ppm doctor`'s default CORS check (issue
 * #25, point 3). What the launcher serves is decided when it starts: the dev server asks
 * office-addin-dev-certs for a trusted localhost certificate, which installs a certificate
 * authority on first use and needs admin rights for that (sudo on Linux); when it cannot, the dev
 * server serves http. The certificate FILES may exist even then (they are generated before the
 * installation fails), so their presence proves nothing. In order, the answer is:
 *
 * 1. **what the running dev server answers with**: `npm start`'s dev server on that port, probed
 *    over https and http, recognised by its `X-PPM-Launch-Id` header; when nothing answers there
 *    (and the port is not PPM_DEV_PORT's), on the port `npm start` last served (`--port`);
 * 2. **what `npm start` served when it last ran**: the launcher records the origin it announced
 *    (`dev-server.json` in `PPM_STATE_DIR`, default `node_modules/.cache/ppm`);
 * 3. **what it would serve**: http with `PPM_DEV_HTTP=1`; https when the localhost certificate and
 *    key are there and the certificate authority is installed in the system's trust store; else http.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";

/** Where the launcher records what it served (shared with scripts/start.js). */
export function stateDir(env: Record<string, string | undefined>): string {
  return env.PPM_STATE_DIR || path.resolve(__dirname, "../../node_modules/.cache/ppm");
}

/** The launcher's record of the dev server it announced. */
export interface DevServerRecord {
  origin: string;
  /** ISO time the launcher announced it. */
  at: string;
  /** Why it serves http, as the dev server said (certificates unavailable: …), when it does. */
  httpReason?: string;
}

export interface DevOrigin {
  origin: string;
  why: string;
  /** Which rule answered. */
  source: "running" | "last-run" | "predicted" | "env";
}

export interface DevOriginDeps {
  home?: string;
  /** Whether office-addin-dev-certs' certificate authority is in the system's trust store; null: cannot tell. */
  caInstalled?: () => boolean | null;
  /** Probes localhost:port; resolves with the scheme `npm start`'s dev server answers with, or null. */
  probe?: (port: number) => Promise<{ scheme: "https" | "http"; launched: boolean } | null>;
}

/** Port of the dev server in package.json's `config` (what `npm start` uses without PPM_DEV_PORT). */
function configuredDevPort(): number {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")) as { config?: { dev_server_port?: unknown } };
    const port = Number(pkg.config?.dev_server_port);
    if (Number.isInteger(port) && port > 0) return port;
  } catch {
    // Installed without its package.json: the documented default.
  }
  return 3000;
}

/** The origin `npm start` serves (see the module comment for the rules, in order). */
export async function devServerOrigin(env: Record<string, string | undefined>, deps: DevOriginDeps = {}): Promise<DevOrigin> {
  const fromEnv = env.PPM_DEV_PORT !== undefined && /^\d+$/.test(env.PPM_DEV_PORT) ? Number(env.PPM_DEV_PORT) : undefined;
  const port = fromEnv ?? configuredDevPort();
  const portWhy = fromEnv !== undefined ? "port from PPM_DEV_PORT" : `port ${port} from package.json`;

  const probe = deps.probe ?? probeDevServer;
  const running = await probe(port);
  if (running?.launched) {
    return { origin: `${running.scheme}://localhost:${port}`, source: "running", why: `npm start is running on port ${port} and serves ${running.scheme}` };
  }

  const record = readRecord(env);
  // `npm start -- --port 3001` (the README's remedy for a busy port) records the port it served; when
  // nothing runs on the configured port, the one running there is the dev server meant (new-user
  // trial, 2026-11-30: doctor checked :3000 and blamed the environment). An explicit PPM_DEV_PORT wins.
  const recordUrl = record ? new URL(record.origin) : null;
  // An origin on its scheme's default port has no port in its URL (`https://localhost:443`).
  const recordPort = recordUrl ? Number(recordUrl.port || (recordUrl.protocol === "https:" ? 443 : 80)) : NaN;
  if (fromEnv === undefined && record && recordPort !== port) {
    const there = await probe(recordPort);
    if (there?.launched) {
      return { origin: `${there.scheme}://localhost:${recordPort}`, source: "running", why: `npm start is running on port ${recordPort} (its last start) and serves ${there.scheme}` };
    }
  }
  if (record && new URL(record.origin).port === String(port)) {
    const scheme = new URL(record.origin).protocol.replace(":", "");
    const reason = scheme === "http" && record.httpReason ? `: ${record.httpReason}` : "";
    return { origin: record.origin, source: "last-run", why: `what npm start served when it last ran (${record.at.slice(0, 16).replace("T", " ")} UTC), ${scheme}${reason}` };
  }

  if (env.PPM_DEV_HTTP === "1") return { origin: `http://localhost:${port}`, source: "env", why: `${portWhy}, http because PPM_DEV_HTTP=1` };
  const home = deps.home ?? env.HOME ?? os.homedir();
  const dir = path.join(home, ".office-addin-dev-certs");
  const files = ["localhost.crt", "localhost.key", "ca.crt"].every((f) => fs.existsSync(path.join(dir, f)));
  const trusted = files ? (deps.caInstalled ?? caInstalled)() : false;
  if (files && trusted) {
    return { origin: `https://localhost:${port}`, source: "predicted", why: `${portWhy}; npm start serves https: the development certificate is installed and trusted` };
  }
  const because =
    files && trusted === null
      ? "whether the development certificate authority is trusted here cannot be checked, and npm start serves https only when it is"
      : files
        ? "the development certificate authority is not installed in this system's trust store (npm start tries to install it, which needs admin rights; where that fails it serves http)"
        : "no development certificate yet (npm start tries to install one, which needs admin rights; where that fails it serves http)";
  return { origin: `http://localhost:${port}`, source: "predicted", why: `${portWhy}; http: ${because}` };
}

function readRecord(env: Record<string, string | undefined>): DevServerRecord | null {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(stateDir(env), "dev-server.json"), "utf8")) as Partial<DevServerRecord>;
    if (typeof raw.origin !== "string" || !/^https?:\/\/localhost:\d+$/.test(raw.origin) || typeof raw.at !== "string") return null;
    return { origin: raw.origin, at: raw.at, ...(typeof raw.httpReason === "string" ? { httpReason: raw.httpReason.slice(0, 300) } : {}) };
  } catch {
    return null;
  }
}

/**
 * Whether office-addin-dev-certs' certificate authority is installed where it installs it: on
 * Linux the files its install script copies; elsewhere its own read-only check (a keychain or
 * certificate-store query), when the package is there. null: cannot tell.
 */
function caInstalled(): boolean | null {
  if (process.platform === "linux") {
    return ["/usr/local/share/ca-certificates/office-addin-dev-certs/ca.crt", "/etc/ca-certificates/trust-source/anchors/office-addin-dev-certs-ca.crt"].some((f) => fs.existsSync(f));
  }
  try {
    // A development dependency: absent where only the CLI is installed.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const certs = require("office-addin-dev-certs/lib/verify") as { isCaCertificateInstalled(): boolean };
    return certs.isCaCertificateInstalled();
  } catch {
    return null;
  }
}

/** GET /taskpane.html on localhost:port over https (any certificate) then http; who answers, and whether it is `npm start`'s. */
function probeDevServer(port: number): Promise<{ scheme: "https" | "http"; launched: boolean } | null> {
  const one = (scheme: "https" | "http") =>
    new Promise<{ scheme: "https" | "http"; launched: boolean } | null>((resolve) => {
      const mod = scheme === "https" ? https : http;
      const req = mod.get({ host: "localhost", port, path: "/taskpane.html", timeout: 1500, rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve({ scheme, launched: typeof res.headers["x-ppm-launch-id"] === "string" && res.headers["x-ppm-launch-id"] !== "" });
      });
      req.on("error", () => resolve(null));
      req.on("timeout", () => req.destroy());
    });
  return one("https").then((r) => r ?? one("http"));
}
