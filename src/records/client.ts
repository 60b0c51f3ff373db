/**
 * The slice of the service client (`src/service`) the records features use, stated structurally so
 * records logic is tested with fakes and does not depend on the client's internals; plus helpers
 * to read the client's errors and the connection's record credentials.
 */
import type { RecordKind, SnapshotEndpoint } from "../contract/contract";
import type { PpmClient } from "../service/client";
import type { Table } from "../table/model";
import { customFieldsFromManifest, type CustomFieldMeta } from "./fields";

/** A record as the service shows it: documented `project_token`, custom fields as display-name keys, other fields as they come. */
export type RecordData = Record<string, unknown>;

/** Body of a create/update. Only `custom_fields` is documented; other fields (e.g. `project_name`) pass through. */
export interface RecordBody {
  custom_fields?: Record<string, string>;
  [field: string]: unknown;
}

export interface RecordCallOptions {
  signal?: AbortSignal;
}

/** What records need from the service client. */
export interface RecordsClient {
  getRecord(kind: RecordKind, token: string, options?: RecordCallOptions): Promise<RecordData>;
  createRecord(kind: RecordKind, body: RecordBody, options?: RecordCallOptions): Promise<RecordData>;
  updateRecord(kind: RecordKind, token: string, body: RecordBody, options?: RecordCallOptions): Promise<RecordData>;
}

/** A failure of a record call, reduced to what the records UI shows. */
export interface RecordErrorInfo {
  message: string;
  /** What to do next, when the client says. */
  action?: string;
  code?: string;
  status?: number;
  /** The custom field the service blamed, when its answer names one. */
  field?: string;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * Reads any thrown value into {@link RecordErrorInfo}. The record endpoints' error body is not shown
 * by the spec; when the service names a field (the reference service sends `field`, REFERENCE CHOICE)
 * it is picked up from the error's details (`details.field`, `details.body.field`, or the first key
 * of `details.fields`/`details.errors` maps), so the form can show it next to that field.
 */
export function describeRecordError(e: unknown): RecordErrorInfo {
  if (!(e instanceof Error)) return { message: String(e) };
  const err = e as Error & { code?: unknown; status?: unknown; action?: unknown; details?: unknown };
  const out: RecordErrorInfo = { message: err.message };
  const code = str(err.code);
  if (code) out.code = code;
  if (typeof err.status === "number") out.status = err.status;
  const action = str(err.action);
  if (action) out.action = action;
  const d = (err.details ?? {}) as Record<string, unknown>;
  const body = (d.body && typeof d.body === "object" ? d.body : {}) as Record<string, unknown>;
  const field = str(d.field) ?? str(body.field) ?? firstKey(d.fields) ?? firstKey(body.fields) ?? firstKey(d.errors) ?? firstKey(body.errors);
  if (field) out.field = field;
  const serverMessage = str(d.serverMessage) ?? str(body.message);
  if (serverMessage && !out.message.includes(serverMessage)) out.message = `${out.message} ${serverMessage}`;
  return out;
}

function firstKey(v: unknown): string | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  return Object.keys(v)[0];
}

/**
 * What is missing for the record endpoints (`api-auth`, `api-secret`, the company token), or null
 * when the connection has everything. The text says what to do, never echoes a credential.
 */
export function recordCredentialsProblem(conn: { token?: string; apiAuth?: string; apiSecret?: string } | null | undefined): string | null {
  if (!conn) return "No connection is set up. Add a connection with the company API token and the record credentials (api-auth and api-secret) in the PPM pane's Connect tab.";
  const missing: string[] = [];
  if (!conn.token) missing.push("the company API token");
  if (!conn.apiAuth) missing.push("api-auth");
  if (!conn.apiSecret) missing.push("api-secret");
  if (missing.length === 0) return null;
  return `Opening, creating and updating records needs ${joinList(missing)} on this connection. Add ${missing.length === 1 ? "it" : "them"} in the Connect tab (edit the connection); your service administrator issues the record credentials.`;
}

function joinList(items: string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** The record kind behind a projects/proposals snapshot endpoint, or null for other sources. */
export function recordKindOfSnapshot(endpoint: string): RecordKind | null {
  if (endpoint === "projects") return "project";
  if (endpoint === "proposals") return "proposal";
  return null;
}

/** A records client plus the snapshot and manifest reads write-back needs. */
export interface RecordsService extends RecordsClient {
  fetchSnapshot(endpoint: SnapshotEndpoint, options?: RecordCallOptions): Promise<Table>;
  /** The company's custom fields from the manifest (throws when it cannot be read). */
  customFields(options?: RecordCallOptions): Promise<CustomFieldMeta[]>;
}

/**
 * Adapts the service client (`src/service`) to {@link RecordsService}. Record results are reduced to
 * the record as the service sent it; numeric checks before sending are the client's (from the
 * manifest) and ours (from the preview), so a bad value never leaves the add-in.
 */
export function recordsServiceFrom(client: Pick<PpmClient, "getRecord" | "createRecord" | "updateRecord" | "fetchSnapshot" | "manifest">): RecordsService {
  return {
    getRecord: async (kind, token, o) => (await client.getRecord(kind, token, { signal: o?.signal })).record,
    createRecord: async (kind, body, o) => (await client.createRecord(kind, body, { signal: o?.signal })).record,
    updateRecord: async (kind, token, body, o) => (await client.updateRecord(kind, token, body, { signal: o?.signal })).record,
    fetchSnapshot: (endpoint, o) => client.fetchSnapshot(endpoint, { signal: o?.signal }),
    customFields: async (o) => customFieldsFromManifest(await client.manifest({ signal: o?.signal })),
  };
}
