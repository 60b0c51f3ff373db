/**
 * The kit's test server: what the self-test page reports to (https, `POST /results` and
 * `POST /transcript`), and, on the emulated route, what serves the page itself (`/site/…`).
 *
 * Who may post (issue #36, finding 2). Microsoft's `office-addin-test-server`, which this replaced,
 * listens on every interface with `Access-Control-Allow-Origin: *` and takes any post: a page or a
 * machine anywhere could hand the command a forged table and transcript. This server:
 * - listens on 127.0.0.1 only, and answers only requests addressed to `localhost`/`127.0.0.1` (`Host`);
 * - takes a post only with this run's nonce (128 random bits the command puts in the page's address,
 *   `?nonce=…`; the page sends it back in the `X-PPM-Kit-Nonce` header; compared in constant time);
 * - answers CORS for the page's origin only (`https://localhost:3000`, the dev server, in Excel; its
 *   own origin on the emulated route), so a page elsewhere cannot even send the header (its preflight
 *   is refused), and refuses any post that carries another `Origin`;
 * - takes the first report and the first transcript only (409 after);
 * - caps what it keeps: a transcript at MAX_TRANSCRIPT_BYTES (16 MiB; a full run measures 1.8 MB),
 *   a report at 1 MiB; a larger body is refused with 413 as soon as it passes the cap (the rest is
 *   dropped as it arrives, and the connection cut past another cap's worth).
 *
 * Certificates: against real Excel the trusted development certificates (`office-addin-dev-certs`,
 * the ones `npm start` uses for the task pane). Against the emulated host (`--host emulated`,
 * headless Chromium told to accept it) a throwaway certificate made in memory, so nothing is
 * installed in the machine's trust store and no `sudo` is asked for.
 */
import { randomBytes, timingSafeEqual } from "crypto";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import type { AddressInfo } from "net";
import type { IncomingMessage, ServerResponse } from "http";
import { MAX_TRANSCRIPT_BYTES } from "../core/transcript";

/** The header the page sends the run's nonce in. */
export const NONCE_HEADER = "X-PPM-Kit-Nonce";
/** The most a report may hold (a report is a few kilobytes: one line per scenario). */
export const MAX_REPORT_BYTES = 1024 * 1024;

export interface KitServer {
  readonly port: number;
  /** `https://localhost:<port>`. */
  readonly origin: string;
  /** This run's nonce: the page's address carries it (`?nonce=`), and every post must. */
  readonly nonce: string;
  /** Resolves with the first report the page posted (JSON, not yet checked: `parseReport`). */
  results(): Promise<unknown>;
  /** The first transcript text the page posted, or null. */
  transcript(): string | null;
  /**
   * Serves the files of `dir` under `/site/` with the add-in's Content-Security-Policy (the emulated
   * route's self-test page: one server, the page and the test server on one origin). Returns the base URL.
   */
  serveDirectory(dir: string): string;
  close(): Promise<void>;
}

export interface KitServerOptions {
  /** A certificate made for this run (the emulated route) instead of the development certificates. */
  throwawayCertificate: boolean;
  /**
   * The origin of the self-test page, the only one CORS answers. Default: this server's own
   * (the emulated route serves the page itself); in Excel, the dev server's `https://localhost:3000`.
   */
  pageOrigin?: string;
  /** The nonce (tests); default 128 random bits. */
  nonce?: string;
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml", ".xml": "application/xml", ".json": "application/json" };

async function throwawayCertificate(): Promise<{ key: string; cert: string }> {
  // mkcert is what office-addin-dev-certs makes its certificates with (a dependency of it).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mkcert = require(require.resolve("mkcert", { paths: [path.dirname(require.resolve("office-addin-dev-certs"))] })) as typeof import("mkcert");
  const ca = await mkcert.createCA({ organization: "PPM self-test (throwaway)", countryCode: "US", state: "-", locality: "-", validity: 1 });
  return mkcert.createCert({ domains: ["localhost", "127.0.0.1"], validity: 1, ca });
}

async function developmentCertificate(): Promise<https.ServerOptions> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const certs = require("office-addin-dev-certs") as { getHttpsServerOptions: () => Promise<https.ServerOptions> };
  return certs.getHttpsServerOptions();
}

const LOCAL_HOST = /^(localhost|127\.0\.0\.1)(:\d{1,5})?$/i;

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "Content-Length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/**
 * Reads a body of at most `max` bytes; null when it was larger. Then 413 is sent at once and nothing
 * more is kept: the rest of the body is read and dropped (so the sender sees the answer rather than
 * a reset), and past another `max` bytes the connection is cut.
 */
function readBody(req: IncomingMessage, res: ServerResponse, max: number, cors: Record<string, string>): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    const tooLarge = () => {
      send(res, 413, `too large: at most ${max} bytes`, { ...cors, Connection: "close" });
      let dropped = 0;
      req.on("data", (c: Buffer) => {
        dropped += c.length;
        if (dropped > max) req.destroy();
      });
      req.resume();
      resolve(null);
    };
    if (Number.isFinite(declared) && declared > max) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > max) {
        done = true;
        tooLarge();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on("error", (e) => {
      if (!done) reject(e);
    });
  });
}

export async function startKitServer(port: number, options: KitServerOptions): Promise<KitServer> {
  const tls = options.throwawayCertificate ? await throwawayCertificate() : await developmentCertificate();
  const nonce = options.nonce ?? randomBytes(16).toString("hex");
  const nonceBytes = Buffer.from(nonce, "utf8");
  let pageOrigin = options.pageOrigin ?? "";
  let transcript: string | null = null;
  let reported = false;
  let resolveResults!: (v: unknown) => void;
  const results = new Promise<unknown>((r) => (resolveResults = r));
  let site: string | null = null;

  const nonceOk = (req: IncomingMessage): boolean => {
    const given = req.headers[NONCE_HEADER.toLowerCase()];
    if (typeof given !== "string") return false;
    const bytes = Buffer.from(given, "utf8");
    return bytes.length === nonceBytes.length && timingSafeEqual(bytes, nonceBytes);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!LOCAL_HOST.test(req.headers.host ?? "")) return send(res, 421, "this server answers requests to localhost only");
    const origin = req.headers.origin;
    const fromPage = typeof origin === "string" && origin === pageOrigin;
    const cors: Record<string, string> = fromPage ? { "Access-Control-Allow-Origin": pageOrigin, Vary: "Origin" } : { Vary: "Origin" };
    const url = new URL(req.url ?? "/", "https://localhost");
    if (req.method === "OPTIONS") {
      if (!fromPage) return send(res, 403, "", { Vary: "Origin" });
      res.writeHead(204, { ...cors, "Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": `${NONCE_HEADER}, Content-Type`, "Access-Control-Max-Age": "600", "Content-Length": "0" });
      return void res.end();
    }
    if (req.method === "GET" && url.pathname.startsWith("/site/")) return serveSite(url.pathname.slice("/site/".length), res);
    if (req.method !== "POST" || (url.pathname !== "/results" && url.pathname !== "/transcript")) return send(res, 404, "not found", cors);
    // A post from a page on another origin (with or without a nonce it could not have) is refused;
    // one without Origin (not a browser) still needs the nonce.
    if (typeof origin === "string" && !fromPage) return send(res, 403, "this server takes posts from the self-test page only");
    if (!nonceOk(req)) return send(res, 403, "not this run's self-test page (no or wrong nonce)", cors);
    if (url.pathname === "/transcript") {
      if (transcript !== null) return send(res, 409, "this run has its transcript already", cors);
      const body = await readBody(req, res, MAX_TRANSCRIPT_BYTES, cors);
      if (body === null) return;
      if (transcript !== null) return send(res, 409, "this run has its transcript already", cors);
      transcript = body.toString("utf8");
      return send(res, 200, "saved", cors);
    }
    if (reported) return send(res, 409, "this run has its report already", cors);
    const body = await readBody(req, res, MAX_REPORT_BYTES, cors);
    if (body === null) return;
    let report: unknown;
    try {
      report = JSON.parse(body.toString("utf8"));
    } catch {
      return send(res, 400, "the report is not JSON", cors);
    }
    if (reported) return send(res, 409, "this run has its report already", cors);
    reported = true;
    resolveResults(report);
    return send(res, 200, "saved", cors);
  };

  const serveSite = (rel: string, res: ServerResponse): void => {
    let file: string | null = null;
    try {
      file = site ? path.resolve(site, decodeURIComponent(rel)) : null;
    } catch {
      file = null;
    }
    if (!site || !file || !file.startsWith(site + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) return send(res, 404, "not found");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const csp = require(path.join(__dirname, "..", "..", "..", "scripts", "csp.js")) as { contentSecurityPolicy: () => string };
    const body = fs.readFileSync(file);
    res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream", "Content-Security-Policy": csp.contentSecurityPolicy(), "Cache-Control": "no-store", "Content-Length": String(body.length) });
    res.end(body);
  };

  const server = https.createServer(tls, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, "the test server failed");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  const origin = `https://localhost:${actualPort}`;
  if (!pageOrigin) pageOrigin = origin;
  return {
    port: actualPort,
    origin,
    nonce,
    results: () => results,
    transcript: () => transcript,
    serveDirectory: (dir) => {
      site = path.resolve(dir);
      return `${origin}/site/`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
