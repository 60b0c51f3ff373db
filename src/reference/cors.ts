/**
 * CORS as a deployment serving a task pane on another origin needs it, for exactly the origins the
 * add-in is served from, and no other (issue #36): a web page on any other origin cannot read an
 * answer, and a request that needs a preflight (every credential header, the control hooks' header)
 * is never sent from it.
 *
 * - The allowed origins are the add-in's: by default the dev server's (`npm start`, the browser
 *   preview on the same server), `https://localhost:3000` and `http://localhost:3000`; `npm start --
 *   --port N` passes its own, the e2e suite and the self-test kit pass the origins they serve pages
 *   from (`allowedOrigins`, `--allow-origin`).
 * - An allowed origin gets `Access-Control-Allow-Origin` (itself) on every response, and preflights
 *   answered for every path (a failed preflight would hide a plain 404 from the client as a network
 *   error), with the headers the add-in must read exposed. Any other origin gets no CORS header, and
 *   its preflights are refused (403), Private Network Access ones included.
 * - Every request must name this machine in `Host` (`localhost`, `127.0.0.1`, `[::1]`): a page that
 *   rebinds its own host name to 127.0.0.1 is same-origin to itself, which CORS cannot stop; its
 *   requests carry its own name in `Host` and are refused (421).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CONTROL_HEADER } from "./controlHeader";

export const ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS";

export const ALLOWED_REQUEST_HEADERS = [
  "Company-Api-Token",
  "Authorization",
  "If-None-Match",
  "If-Modified-Since",
  "record-token",
  "api-auth",
  "api-token",
  "api-secret",
  "Content-Type",
  // The control hooks' header (controlHeader.ts), for the browser preview's toolbar.
  CONTROL_HEADER,
] as const;

export const EXPOSED_RESPONSE_HEADERS = [
  "ETag",
  "Last-Modified",
  "X-Service-Dataset-Key",
  "X-Service-Schema-Version",
  "X-Service-Generated-At",
  "OData-Version",
  "Retry-After",
] as const;

/** The dev server's origins (`npm start`, port 3000 as in package.json's `config.dev_server_port`). */
export const DEFAULT_ALLOWED_ORIGINS: readonly string[] = ["https://localhost:3000", "http://localhost:3000"];

/** The origins CORS answers, as browsers send them in `Origin` (scheme://host[:port], lower case). */
export type AllowedOrigins = ReadonlySet<string>;

/**
 * The set of allowed origins; throws on anything that is not an http(s) origin (a path, `*`, `null`).
 * `--allow-origin https://LocalHost:3000/` is the same as `https://localhost:3000`.
 */
export function allowedOrigins(origins: readonly string[]): AllowedOrigins {
  return new Set(
    origins.map((o) => {
      let u: URL;
      try {
        u = new URL(o);
      } catch {
        throw new Error(`'${o}' is not an origin (scheme://host[:port])`);
      }
      if ((u.protocol !== "https:" && u.protocol !== "http:") || (u.pathname !== "/" && u.pathname !== "") || u.search || u.hash || u.username || u.password) {
        throw new Error(`'${o}' is not an http(s) origin (scheme://host[:port], nothing after it)`);
      }
      return u.origin;
    }),
  );
}

/** The request's `Origin` when it is one of `allowed`, else null (no Origin, or another one). */
export function allowedOrigin(req: IncomingMessage, allowed: AllowedOrigins): string | null {
  const origin = req.headers.origin;
  return typeof origin === "string" && allowed.has(origin) ? origin : null;
}

/** Whether the request carries an `Origin` that is not allowed (a web page on another origin). */
export function foreignOrigin(req: IncomingMessage, allowed: AllowedOrigins): boolean {
  const origin = req.headers.origin;
  return typeof origin === "string" && origin !== "" && !allowed.has(origin);
}

/** Sets the CORS headers of a response: only for an allowed origin. */
export function applyCors(req: IncomingMessage, res: ServerResponse, exposeHeaders: boolean, allowed: AllowedOrigins): void {
  res.setHeader("Vary", "Origin");
  const origin = allowedOrigin(req, allowed);
  if (origin === null) return;
  res.setHeader("Access-Control-Allow-Origin", origin);
  if (exposeHeaders) res.setHeader("Access-Control-Expose-Headers", EXPOSED_RESPONSE_HEADERS.join(", "));
}

/** Whether the request is a CORS preflight. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS";
}

/**
 * Answers a preflight: 204 with the allowed methods and request headers for an allowed origin
 * (and Private Network Access when asked); 403 without any CORS header for every other origin, so
 * the browser never sends the request.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, allowed: AllowedOrigins): void {
  if (allowedOrigin(req, allowed) === null) {
    res.writeHead(403, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": "0" });
    res.end();
    return;
  }
  // Chrome's Private Network Access asks before a public page may call a loopback service.
  if (req.headers["access-control-request-private-network"] === "true") {
    res.setHeader("Access-Control-Allow-Private-Network", "true");
  }
  res.writeHead(204, {
    "Access-Control-Allow-Methods": ALLOWED_METHODS,
    "Access-Control-Allow-Headers": ALLOWED_REQUEST_HEADERS.join(", "),
    "Access-Control-Max-Age": "600",
    "Content-Length": "0",
  });
  res.end();
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether `Host` names this machine (any port): a DNS-rebound page sends its own name. */
export function localHostHeader(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (typeof host !== "string") return false;
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d{1,5})?$/.exec(host.trim().toLowerCase());
  return m !== null && LOCAL_HOSTS.has(m[1]);
}

/** 421 Misdirected Request: this service answers only to this machine's names. */
export function refuseHost(res: ServerResponse): void {
  const body = "Misdirected Request: this service answers only requests addressed to localhost, 127.0.0.1 or [::1].";
  res.writeHead(421, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)) });
  res.end(body);
}
