/**
 * A server on another origin that records every request it gets, headers included: what a host
 * an attacker controls would see (issue #22). It allows every CORS preflight, the worst case, so
 * whatever the browser would send does arrive. Its answer to other requests is set per test:
 * a 404 by default, or a redirect carrying CORS headers (so the browser hands the redirect to the
 * add-in instead of a bare network error).
 */
import * as http from "http";
import type { AddressInfo } from "net";

export interface CapturedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

export interface CaptureServer {
  /** `http://127.0.0.1:<port>`: another origin than the add-in and the reference services. */
  url: string;
  requests: CapturedRequest[];
  /** How it answers from now on: "404", or a 302 to `location`. */
  answer(mode: { kind: "404" } | { kind: "redirect"; location: string }): void;
  close(): Promise<void>;
}

export async function startCaptureServer(): Promise<CaptureServer> {
  const requests: CapturedRequest[] = [];
  let mode: { kind: "404" } | { kind: "redirect"; location: string } = { kind: "404" };
  const server = http.createServer((req, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : String(v ?? "");
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers });
    const cors = {
      "Access-Control-Allow-Origin": req.headers.origin ?? "*",
      "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
      "Access-Control-Allow-Methods": "GET, POST, PUT, OPTIONS",
      "Access-Control-Expose-Headers": "Location",
    };
    if (req.method === "OPTIONS") {
      res.writeHead(204, cors).end();
      return;
    }
    if (mode.kind === "redirect") {
      res.writeHead(302, { ...cors, Location: mode.location }).end();
      return;
    }
    res.writeHead(404, { ...cors, "Content-Type": "text/plain" }).end("not here");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (m) => {
      mode = m;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
