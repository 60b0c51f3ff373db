/**
 * Record endpoints: GET/POST/PUT `/api/v1/project` and `/api/v1/proposal`. Records live in memory
 * per company; changes show in later record and snapshot reads.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HEADERS, PATHS } from "../contract/contract";
import type { CompanyDef, RecordData, RecordKindName } from "./data";
import { resolveRecordCompany } from "./auth";
import { recordView, validateCustomFields, type FieldError } from "./customFields";
import { BodyTooLargeError, readBody, sendJson, sendMethodNotAllowed } from "./http";
import type { ServiceState } from "./state";

/** Which record kind a path addresses, if it is a record path. */
export function matchRecordRoute(path: string): RecordKindName | undefined {
  if (path === PATHS.record.project) return "project";
  if (path === PATHS.record.proposal) return "proposal";
  return undefined;
}

function recordToken(req: IncomingMessage): string | undefined {
  const v = req.headers[HEADERS.recordToken];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === "" ? undefined : s.trim();
}

type BodyResult = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; error: FieldError };

async function readJsonObject(req: IncomingMessage): Promise<BodyResult> {
  let text: string;
  try {
    text = await readBody(req);
  } catch (e) {
    if (e instanceof BodyTooLargeError) return { ok: false, status: 413, error: { error: "payload_too_large", message: e.message } };
    throw e;
  }
  if (text.trim() === "") return { ok: true, body: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, status: 400, error: { error: "invalid_json", message: "The request body is not valid JSON." } };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, status: 400, error: { error: "invalid_body", message: "The request body must be a JSON object." } };
  }
  return { ok: true, body: parsed as Record<string, unknown> };
}

type RecordChanges =
  | { ok: true; name: string | undefined; values: Record<string, string> }
  | { ok: false; status: number; error: FieldError };

/**
 * Reads and checks a POST/PUT body: a JSON object whose optional `project_name` is a non-empty string
 * and whose optional `custom_fields` pass {@link validateCustomFields}. Nothing is saved here.
 */
async function readRecordChanges(req: IncomingMessage, company: CompanyDef): Promise<RecordChanges> {
  const body = await readJsonObject(req);
  if (!body.ok) return body;
  const name = body.body.project_name;
  if (name !== undefined && (typeof name !== "string" || name.trim() === "")) {
    return { ok: false, status: 400, error: { error: "invalid_body", message: "project_name must be a non-empty string." } };
  }
  let values: Record<string, string> = {};
  if (body.body.custom_fields !== undefined) {
    const checked = validateCustomFields(company, body.body.custom_fields);
    if (!checked.ok) return { ok: false, status: 400, error: checked.body };
    values = checked.values;
  }
  return { ok: true, name: name, values };
}

/** Answers GET/POST/PUT on a record path (auth, targeting by `record-token`, validation, save). */
export async function handleRecord(
  state: ServiceState,
  req: IncomingMessage,
  res: ServerResponse,
  kind: RecordKindName,
): Promise<void> {
  const method = req.method ?? "GET";
  if (method !== "GET" && method !== "POST" && method !== "PUT" && method !== "HEAD") {
    return sendMethodNotAllowed(res, "GET, POST, PUT");
  }
  const company = resolveRecordCompany(req);
  if (!company) {
    return sendJson(res, 401, {
      error: "unauthorized",
      message: `The ${HEADERS.apiAuth}, ${HEADERS.apiToken} and ${HEADERS.apiSecret} headers are missing or not valid.`,
    });
  }
  const store = state.recordsOf(company.id, kind);

  if (method === "POST") {
    const changes = await readRecordChanges(req, company);
    if (!changes.ok) return sendJson(res, changes.status, changes.error);
    const { name, values } = changes;
    const custom: Record<string, string | null> = {};
    for (const f of company.customFields) custom[f.name] = values[f.name] ?? null;
    const rec: RecordData = {
      project_token: state.newRecordToken(company.id, kind),
      project_name: name ?? (kind === "project" ? "Untitled project" : "Untitled proposal"),
      project_type: "Standard",
      status: kind === "project" ? "Active" : "Draft",
      start_date: new Date().toISOString().slice(0, 10),
      custom,
    };
    store.set(rec.project_token, rec);
    return sendJson(res, 201, recordView(company, rec));
  }

  const token = recordToken(req);
  if (token === undefined) {
    return sendJson(res, 400, { error: "missing_record_token", message: `The ${HEADERS.recordToken} header names the target record and is required.` });
  }
  const rec = store.get(token);
  if (!rec) return sendJson(res, 404, { error: "record_not_found", message: `No ${kind} with that ${HEADERS.recordToken}.` });
  if (method === "GET" || method === "HEAD") return sendJson(res, 200, recordView(company, rec));

  const changes = await readRecordChanges(req, company);
  if (!changes.ok) return sendJson(res, changes.status, changes.error);
  const { name, values } = changes;
  // Only now, with every value valid, is anything saved.
  if (typeof name === "string") rec.project_name = name;
  Object.assign(rec.custom, values);
  return sendJson(res, 200, recordView(company, rec));
}
