/**
 * CORS as a deployment serving a task pane on another origin needs it: every response allows the
 * calling origin, preflights are answered for every path (a failed preflight would hide a plain
 * 404 from the client as a network error), and the headers the add-in must read are exposed.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export const ALLOWED_METHODS = "GET, POST, PUT, OPTIONS";

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

/** Sets the CORS headers every response carries. */
export function applyCors(req: IncomingMessage, res: ServerResponse, exposeHeaders: boolean): void {
  const origin = req.headers.origin;
  res.setHeader("Access-Control-Allow-Origin", typeof origin === "string" && origin !== "" ? origin : "*");
  res.setHeader("Vary", "Origin");
  if (exposeHeaders) res.setHeader("Access-Control-Expose-Headers", EXPOSED_RESPONSE_HEADERS.join(", "));
}

/** Whether the request is a CORS preflight. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS";
}

/** Answers a preflight: 204 with the allowed methods and request headers. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
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
