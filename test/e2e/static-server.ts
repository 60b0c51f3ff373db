/**
 * A tiny static file server for the built add-in (the e2e suite's stand-in for the webpack dev
 * server): GET/HEAD only, files under one root, nothing else. Listens on 127.0.0.1, port 0. Pages
 * carry the add-in's Content-Security-Policy as a header, as the dev server sends it.
 */
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import type { AddressInfo } from "net";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const csp = require("../../scripts/csp.js") as { contentSecurityPolicy: (o?: { connect?: string[] }) => string };

/** The policy the pages are served with: the production one (it allows the loopback services). */
export const CSP = csp.contentSecurityPolicy();

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".xml": "application/xml",
  ".ico": "image/x-icon",
};

export interface StaticServer {
  /** Origin as the browser should use it, e.g. `http://localhost:41234`. */
  origin: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `dir`. The origin handed out uses the host name `localhost` so that it differs from the
 * reference service's `127.0.0.1` origin even apart from the port: the task pane must pass CORS.
 */
export async function startStaticServer(dir: string): Promise<StaticServer> {
  const rootDir = path.resolve(dir);
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (pathname.endsWith("/")) pathname += "index.html";
    const file = path.resolve(rootDir, "." + pathname);
    if (!file.startsWith(rootDir + path.sep)) {
      res.writeHead(403).end();
      return;
    }
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
        return;
      }
      res.writeHead(200, {
        "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream",
        "Cache-Control": "no-store",
        "Content-Length": body.length,
        // Every page under the add-in's policy, as the dev server sends it (scripts/csp.js): the
        // suite runs with it enforced and fails a journey on any violation (main.ts).
        ...(path.extname(file) === ".html" ? { "Content-Security-Policy": CSP } : {}),
      });
      res.end(req.method === "HEAD" ? undefined : body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://localhost:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
