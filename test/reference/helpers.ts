/** Shared helpers for the reference service's contract tests (real HTTP on loopback). */
import { startReferenceService, type ReferenceService, type ReferenceServiceOptions } from "../../src/reference/server";

export const ACME_TOKEN = "demo-acme-token";
export const GLOBEX_TOKEN = "demo-globex-token";
export const ACME_RECORD_HEADERS = { "api-auth": "demo-api-auth", "api-token": ACME_TOKEN, "api-secret": "demo-api-secret" };

export function acme(extra: Record<string, string> = {}): Record<string, string> {
  return { "Company-Api-Token": ACME_TOKEN, ...extra };
}

export function basic(user: string, password: string): string {
  return "Basic " + Buffer.from(`${user}:${password}`, "utf8").toString("base64");
}

/** Starts a quiet service on an ephemeral port; call the returned `close` in afterAll. */
export async function start(opts: ReferenceServiceOptions = {}): Promise<ReferenceService> {
  return startReferenceService({ port: 0, quiet: true, ...opts });
}

export async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(base + path, { headers });
}

export async function control(base: string, pathAndQuery: string, method = "POST"): Promise<unknown> {
  const res = await fetch(base + "/__control/" + pathAndQuery, { method });
  if (!res.ok) throw new Error(`control ${pathAndQuery} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

export async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`expected JSON, got ${res.status}: ${text.slice(0, 200)}`);
  }
}
