/**
 * Shared helpers of the service-client integration tests: the reference service's control hooks,
 * demo connections and a fetch wrapper that records what was sent.
 */
import type { Connection } from "../../src/service";
import { PpmError } from "../../src/service";
import { CONTROL } from "../helpers/control";

export const ACME_TOKEN = "demo-acme-token";
export const GLOBEX_TOKEN = "demo-globex-token";
export const ACME_API_AUTH = "demo-api-auth";
export const ACME_API_SECRET = "demo-api-secret";

export function acme(baseUrl: string, extra: Partial<Connection> = {}): Connection {
  return { id: "acme", name: "Acme", baseUrl, token: ACME_TOKEN, apiAuth: ACME_API_AUTH, apiSecret: ACME_API_SECRET, ...extra };
}

export function globex(baseUrl: string, extra: Partial<Connection> = {}): Connection {
  return { id: "globex", name: "Globex", baseUrl, token: GLOBEX_TOKEN, apiAuth: "demo-globex-api-auth", apiSecret: "demo-globex-api-secret", ...extra };
}

/** POSTs a control action of the reference service (`regenerate?company=acme&dataset=financials`, ...). */
export async function control(baseUrl: string, action: string): Promise<unknown> {
  const r = await fetch(`${baseUrl}/__control/${action}`, { method: "POST", headers: CONTROL });
  if (!r.ok) throw new Error(`control ${action} failed: ${r.status} ${await r.text()}`);
  return r.json();
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  status: number;
}

export async function requestLog(baseUrl: string): Promise<LoggedRequest[]> {
  const r = await fetch(`${baseUrl}/__control/requests`, { headers: CONTROL });
  const body = (await r.json()) as { requests: LoggedRequest[] };
  return body.requests.filter((q) => !q.path.startsWith("/__control/"));
}

export async function clearLog(baseUrl: string): Promise<void> {
  await fetch(`${baseUrl}/__control/requests`, { method: "DELETE", headers: CONTROL });
}

/** The URL a `fetch` was called with, whichever of its input forms was used. */
export function urlOf(input: string | URL | Request): string {
  return typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
}

/** A fetch that records each request's URL and headers, optionally rewriting responses. */
export function recordingFetch(rewrite?: (url: string, res: Response) => Response | Promise<Response>) {
  const sent: Array<{ url: string; method: string; headers: Record<string, string> }> = [];
  const f: typeof fetch = async (input, init) => {
    const url = urlOf(input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    sent.push({ url, method: init?.method ?? "GET", headers });
    const res = await fetch(input, init);
    return rewrite ? rewrite(url, res) : res;
  };
  return { fetch: f, sent };
}

/** Copies a response without the headers a browser would hide when CORS does not expose them. */
export function hideValidatorHeaders(res: Response): Response {
  const h = new Headers();
  // CORS-safelisted response headers stay readable; Last-Modified is one of them, but a stricter
  // proxy may drop it too, which is the case the generation-time fallback exists for.
  for (const name of ["content-type", "cache-control", "content-language", "expires", "pragma"]) {
    const v = res.headers.get(name);
    if (v !== null) h.set(name, v);
  }
  return new Response(res.status === 304 ? null : res.body, { status: res.status, statusText: res.statusText, headers: h });
}

/** Every error captured by {@link expectPpmError}, for the token-redaction sweep. */
export const capturedErrors: PpmError[] = [];

/** Awaits a rejection, checks it is a PpmError with `code`, captures and returns it. */
export async function expectPpmError(p: Promise<unknown>, code: string): Promise<PpmError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof PpmError)) throw new Error(`expected PpmError ${code}, got ${caught === undefined ? "success" : caught instanceof Error ? String(caught) : JSON.stringify(caught)}`);
  capturedErrors.push(caught);
  expect(caught.code).toBe(code);
  expect(caught.message.length).toBeGreaterThan(0);
  expect(caught.action.length).toBeGreaterThan(0);
  return caught;
}

/** All the text an error exposes: message, action, JSON, string form and stack. */
export function errorTexts(e: PpmError): string {
  return [e.message, e.action, JSON.stringify(e.toJSON()), String(e), e.stack ?? ""].join("\n");
}

/** `bytes` as a stream of `size`-byte chunks (the last one shorter). */
export function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}
