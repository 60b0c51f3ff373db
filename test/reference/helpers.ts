/** Shared helpers for the reference service's contract tests (real HTTP on loopback). */
import type { ColumnDef } from "../../src/contract/contract";
import { startReferenceService, type ReferenceService, type ReferenceServiceOptions } from "../../src/reference/server";
import type { RequestLogEntry } from "../../src/reference/state";
import { CONTROL } from "../helpers/control";

/** One row of a list, export or OData body, as the tests read it. */
export type Row = Record<string, unknown>;
/** A service error body: `error`, `message`, and the extra fields some codes carry. */
export interface ErrorReply {
  error: string;
  message: string;
  field?: string;
  value?: unknown;
  dataset_key?: string;
  unsupported_options?: string[];
}
/** A JSON export body. */
export interface ExportReply {
  dataset_key: string;
  schema_version: string | number;
  generated_at: string;
  row_count: number;
  columns: ColumnDef[];
  rows: Row[];
}
/** An OData collection body. */
export interface ODataReply {
  "@odata.context": string;
  value: Row[];
}
/** `POST /__control/regenerate`. */
export interface RegenerateReply {
  company: string;
  dataset: string;
  generation: number;
  generated_at: string;
  row_count: number;
}
/** `GET /__control/requests`. */
export interface RequestLogReply {
  requests: RequestLogEntry[];
}

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

/** Calls a control hook; `T` is the shape the test expects of its JSON answer (not checked). */
export async function control<T = Row>(base: string, pathAndQuery: string, method = "POST"): Promise<T> {
  const res = await fetch(base + "/__control/" + pathAndQuery, { method, headers: CONTROL });
  if (!res.ok) throw new Error(`control ${pathAndQuery} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** The body as JSON; `T` is the shape the test expects (not checked: the test's assertions do that). */
export async function json<T = Row>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected JSON, got ${res.status}: ${text.slice(0, 200)}`);
  }
}
