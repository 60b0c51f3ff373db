/**
 * The test server the self-test page reports to: Microsoft's `office-addin-test-server` (https on
 * localhost:4201; `GET /ping`, `POST /results?data=…`, read with `getTestResults()`), plus one route
 * of ours, `POST /transcript`, for the transcript: `/results` takes its data in the URL, which a
 * transcript of a few megabytes cannot travel in (Node refuses request heads over 16 KB).
 *
 * Certificates: against real Excel the server uses the trusted development certificates, as
 * `office-addin-test-server` always does (`office-addin-dev-certs`, the same ones `npm start` uses
 * for the task pane). Against the emulated host (`--host emulated`, headless Chromium told to accept
 * it) it gets a throwaway certificate made in memory, so nothing is installed in the machine's trust
 * store and no `sudo` is asked for.
 */
import * as fs from "fs";
import * as path from "path";
import type { IncomingMessage, ServerResponse } from "http";

interface MicrosoftTestServer {
  startTestServer(mochaTest?: boolean): Promise<boolean>;
  stopTestServer(): Promise<boolean>;
  getTestResults(): Promise<unknown>;
}

export interface KitServer {
  readonly port: number;
  /** Resolves with the results the page posted (`sendTestResults`). */
  results(): Promise<unknown>;
  /** The transcript text the page posted, or null. */
  transcript(): string | null;
  /**
   * Serves the files of `dir` under `/site/` with the add-in's Content-Security-Policy (the emulated
   * route's self-test page: one server, the page and the test server on one origin). Returns the base URL.
   */
  serveDirectory(dir: string): string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml", ".xml": "application/xml", ".json": "application/json" };

/** Max transcript size taken (a full run on the emulated host is about 1.5 MB). */
const MAX_TRANSCRIPT_BYTES = 200 * 1024 * 1024;

async function throwawayCertificate(): Promise<{ key: string; cert: string }> {
  // mkcert is what office-addin-dev-certs makes its certificates with (a dependency of it).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mkcert = require(require.resolve("mkcert", { paths: [path.dirname(require.resolve("office-addin-dev-certs"))] })) as typeof import("mkcert");
  const ca = await mkcert.createCA({ organization: "PPM self-test (throwaway)", countryCode: "US", state: "-", locality: "-", validity: 1 });
  return mkcert.createCert({ domains: ["localhost", "127.0.0.1"], validity: 1, ca });
}

export async function startKitServer(port: number, options: { throwawayCertificate: boolean }): Promise<KitServer> {
  const serverDir = path.dirname(require.resolve("office-addin-test-server/package.json"));
  if (options.throwawayCertificate) {
    const certificate = await throwawayCertificate();
    // The test server asks office-addin-dev-certs for its https options; here they are the throwaway ones.
    const certsLib = path.join(path.dirname(require.resolve("office-addin-dev-certs", { paths: [serverDir] })), "httpsServerOptions.js");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const certs = require(certsLib) as { getHttpsServerOptions: () => Promise<unknown> };
    certs.getHttpsServerOptions = () => Promise.resolve(certificate);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TestServer } = require("office-addin-test-server") as { TestServer: new (port: number) => MicrosoftTestServer & { resultsPromise?: Promise<unknown> } };
  const server = new TestServer(port);
  // Its constructor makes a rejected "no results yet" promise; without a handler Node would stop on it.
  server.resultsPromise?.catch(() => undefined);
  await server.startTestServer();
  // Port 0 asks the system for a free one (the emulated route): the one it got.
  const address = (server as unknown as { server?: { address(): { port: number } | string | null } }).server?.address();
  const actualPort = address && typeof address === "object" ? address.port : port;
  let transcript: string | null = null;
  // The express app of the test server (after its own cors() middleware, so the route gets CORS too).
  type Handler = (req: IncomingMessage & { params?: Record<string, string> }, res: ServerResponse) => void;
  const app = (server as unknown as { app: { post(route: string, handler: Handler): void; get(route: RegExp, handler: Handler): void } }).app;
  app.post("/transcript", (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_TRANSCRIPT_BYTES) chunks.push(c);
    });
    req.on("end", () => {
      if (size > MAX_TRANSCRIPT_BYTES) {
        res.statusCode = 413;
        res.end("transcript too large");
        return;
      }
      transcript = Buffer.concat(chunks).toString("utf8");
      res.statusCode = 200;
      res.end("saved");
    });
  });
  let site: string | null = null;
  app.get(/^\/site\/(.*)$/, (req, res) => {
    const rel = decodeURIComponent(req.params?.[0] ?? "");
    const file = site ? path.resolve(site, rel) : null;
    if (!site || !file || !file.startsWith(site + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.statusCode = 404;
      res.end("not found");
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const csp = require(path.join(__dirname, "..", "..", "..", "scripts", "csp.js")) as { contentSecurityPolicy: () => string };
    res.setHeader("Content-Type", TYPES[path.extname(file)] ?? "application/octet-stream");
    res.setHeader("Content-Security-Policy", csp.contentSecurityPolicy());
    res.setHeader("Cache-Control", "no-store");
    res.end(fs.readFileSync(file));
  });
  return {
    port: actualPort,
    results: () => server.getTestResults(),
    transcript: () => transcript,
    serveDirectory: (dir) => {
      site = path.resolve(dir);
      return `https://localhost:${actualPort}/site/`;
    },
    close: async () => void (await server.stopTestServer()),
  };
}
