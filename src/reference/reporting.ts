/**
 * The reporting (BI) endpoints: OData service document, `$metadata`, OData dataset, manifest,
 * JSON export and CSV export. Read-only; they never start a generation.
 *
 * Order of checks (REFERENCE CHOICE, see server.ts): unknown route → plain 404;
 * `Company-Api-Token` query parameter → 400; credentials → 401; reporting disabled → 403;
 * `$` options → 400; dataset lookup → 404/404/422; conditional GET → 304; 200.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  DATASET_CACHE_CONTROL,
  HEADERS,
  ODATA_CONTEXT_PREFIX,
  PATHS,
  REPORTING_ERRORS,
  type ReportingErrorCode,
} from "../contract/contract";
import { DATASETS, datasetByKey, type CompanyDef, type DatasetDef, type RawCell } from "./data";
import { hasQueryStringCompanyToken, resolveReportingCompany } from "./auth";
import { csvLine } from "./csv";
import { csdlDocument, serviceDocument } from "./metadata";
import { sendJson, sendText, streamBody, type QueryParam } from "./http";
import { etagFor, type ArtifactState, type ServiceState } from "./state";
import { evaluateConditional } from "./conditional";

export type ReportingRoute =
  | { kind: "serviceDocument" }
  | { kind: "metadata" }
  | { kind: "manifest" }
  | { kind: "dataset"; format: "odata" | "json" | "csv"; key: string };

/** The API version the manifest reports. */
export const API_VERSION = "1.0";

function decodeSegment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Maps a path to a reporting route, or undefined when the path is not a reporting route at all. */
export function matchReportingRoute(path: string): ReportingRoute | undefined {
  if (path === PATHS.odataRoot || path === PATHS.odataRoot + "/") return { kind: "serviceDocument" };
  if (path === PATHS.manifest) return { kind: "manifest" };
  const odataPrefix = PATHS.odataRoot + "/";
  if (path.startsWith(odataPrefix)) {
    const rest = path.slice(odataPrefix.length);
    if (rest.includes("/")) return undefined;
    const key = decodeSegment(rest);
    if (key === undefined || key === "") return undefined;
    if (key === "$metadata") return { kind: "metadata" };
    return { kind: "dataset", format: "odata", key };
  }
  const exportPrefix = "/api/bi/v1/";
  if (path.startsWith(exportPrefix)) {
    const rest = path.slice(exportPrefix.length);
    if (rest.includes("/")) return undefined;
    const seg = decodeSegment(rest);
    if (seg === undefined || seg === "") return undefined;
    if (seg.endsWith(".csv") && seg.length > 4) return { kind: "dataset", format: "csv", key: seg.slice(0, -4) };
    return { kind: "dataset", format: "json", key: seg };
  }
  return undefined;
}

/** A reporting error: `{ error, message, dataset_key?, unsupported_options? }` with the code's status. */
export function sendReportingError(
  res: ServerResponse,
  code: ReportingErrorCode,
  message: string,
  extra: { dataset_key?: string; unsupported_options?: string[] } = {},
  contentType?: string,
): void {
  // The body is the spec's error body on every route; only its media type follows the route.
  sendJson(res, REPORTING_ERRORS[code], { error: code, message, ...extra }, contentType ? { "Content-Type": contentType } : {});
}

/**
 * OData JSON Format 4.0 §3.2 (IEEE754Compatible): true when a media range of `Accept` that admits
 * JSON carries `IEEE754Compatible=true` (parameter name and value case-insensitive). Then Edm.Int64
 * and Edm.Decimal values travel as strings; otherwise as JSON numbers.
 */
export function wantsIeee754Compatible(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((p) => p.trim().toLowerCase());
    if (type !== "application/json" && type !== "application/*" && type !== "*/*") return false;
    return params.some((p) => p.replace(/\s*=\s*/, "=") === "ieee754compatible=true");
  });
}

/** Content-Type of every OData JSON response (OData JSON Format 4.0 §3.1, §3.2). */
export function odataJsonType(ieee754: boolean): string {
  return `application/json; odata.metadata=minimal${ieee754 ? "; IEEE754Compatible=true" : ""}; charset=utf-8`;
}

/** Distinct `$`-prefixed option names (after percent-decoding), in order of appearance. */
export function dollarOptions(query: readonly QueryParam[]): string[] {
  const seen: string[] = [];
  for (const p of query) if (p.name.startsWith("$") && !seen.includes(p.name)) seen.push(p.name);
  return seen;
}

/** What reporting handlers need from the server: state and the slow-streaming pause. */
export interface ReportingContext {
  state: ServiceState;
  chunkDelayMs: number;
}

/** Answers a request on a reporting route, checks in the documented order. */
export async function handleReporting(
  ctx: ReportingContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: ReportingRoute,
  query: readonly QueryParam[],
): Promise<void> {
  const odata = route.kind === "serviceDocument" || route.kind === "metadata" || (route.kind === "dataset" && route.format === "odata");
  if (odata) res.setHeader(HEADERS.odataVersion, "4.0");
  const ieee754 = odata && wantsIeee754Compatible(req.headers.accept);
  // Every JSON answer on an OData route is OData JSON (errors keep the spec's body).
  const jsonType = odata ? odataJsonType(ieee754) : undefined;
  const fail = (code: ReportingErrorCode, message: string, extra: { dataset_key?: string; unsupported_options?: string[] } = {}) =>
    sendReportingError(res, code, message, extra, jsonType);

  if (hasQueryStringCompanyToken(query)) {
    return fail(
      "query_string_token_rejected",
      `${HEADERS.companyToken} must not be sent in the query string; use the ${HEADERS.companyToken} header or Basic authentication.`,
    );
  }
  const resolved = resolveReportingCompany(req, query);
  if (!resolved) {
    // No WWW-Authenticate challenge: it would make a browser pop up its own login dialog.
    return fail("unauthorized", "Credentials are missing or not valid for this company and environment.");
  }
  const company = resolved.company;
  if (!ctx.state.reportingEnabled.get(company.id)) {
    return fail("bi_reporting_disabled", "Reporting is not enabled for this company.");
  }
  const dollars = dollarOptions(query);
  if (dollars.length > 0) {
    return fail(
      "unsupported_odata_query_options",
      `System query options are not supported; import the complete table and filter locally. Rejected: ${dollars.join(", ")}.`,
      { unsupported_options: dollars },
    );
  }

  switch (route.kind) {
    case "serviceDocument":
      return sendJson(res, 200, serviceDocument(DATASETS), { "Content-Type": odataJsonType(ieee754) });
    case "metadata":
      return sendText(res, 200, csdlDocument(DATASETS), "application/xml; charset=utf-8");
    case "manifest":
      return sendJson(res, 200, manifest(ctx.state, company));
    case "dataset":
      return serveDataset(ctx, req, res, company, route.key, route.format, ieee754, fail);
  }
}

function manifest(state: ServiceState, company: CompanyDef): unknown {
  return {
    api_version: API_VERSION,
    company_id: company.id,
    datasets: DATASETS.map((ds) => {
      const a = state.artifact(company.id, ds.key);
      const usable = a.latestSuccessfulAt !== null;
      return {
        key: ds.key,
        name: ds.name,
        schema_version: ds.schemaVersion,
        formats: ["json", "csv", "odata"],
        columns: ds.columns,
        published_schema: {
          published_at: ds.publishedAt,
          custom_fields: ds.customFields.map((f) => ({ name: f.name, type: f.type, column: f.column })),
          pending_changes: ds.pendingChanges,
        },
        links: { json: PATHS.exportJson(ds.key), csv: PATHS.exportCsv(ds.key) },
        artifacts: {
          generated_at: a.generatedAt,
          latest_successful_generated_at: a.latestSuccessfulAt,
          row_count: usable ? a.rowCount : null,
        },
      };
    }),
  };
}

async function serveDataset(
  ctx: ReportingContext,
  req: IncomingMessage,
  res: ServerResponse,
  company: CompanyDef,
  key: string,
  format: "odata" | "json" | "csv",
  ieee754: boolean,
  fail: (code: ReportingErrorCode, message: string, extra?: { dataset_key?: string; unsupported_options?: string[] }) => void,
): Promise<void> {
  const ds = datasetByKey(key);
  if (!ds) {
    return fail("unknown_dataset", `Dataset '${key}' is not listed for this company.`, { dataset_key: key });
  }
  const a = ctx.state.artifact(company.id, ds.key);
  if (a.status === "not_generated" || a.generatedAt === null) {
    return fail("not_generated", `Dataset '${key}' has no successful export yet.`, { dataset_key: key });
  }
  if (a.status === "invalid_cached_artifact") {
    return fail(
      "invalid_cached_artifact",
      `The cached export of dataset '${key}' is unusable. Report the dataset key and request time.`,
      { dataset_key: key },
    );
  }

  const etag = etagFor(company, ds, format, a, format === "odata" && ieee754 ? "IEEE754Compatible" : "");
  const lastModified = new Date(a.generatedAt).toUTCString();
  res.setHeader(HEADERS.datasetKey, ds.key);
  res.setHeader(HEADERS.schemaVersion, ds.schemaVersion);
  res.setHeader(HEADERS.generatedAt, a.generatedAt);
  res.setHeader("ETag", etag);
  res.setHeader("Last-Modified", lastModified);
  res.setHeader("Cache-Control", DATASET_CACHE_CONTROL);
  // The body depends on the credential: a browser cache must never hand one company's export to another.
  res.setHeader("Vary", format === "odata" ? "Origin, Company-Api-Token, Authorization, Accept" : "Origin, Company-Api-Token, Authorization");

  if (evaluateConditional(req, etag, Date.parse(a.generatedAt)) === "not_modified") {
    res.writeHead(304);
    res.end();
    return;
  }

  const contentType =
    format === "csv"
      ? "text/csv; charset=utf-8; header=present"
      : format === "odata"
        ? odataJsonType(ieee754)
        : "application/json; charset=utf-8";
  res.writeHead(200, { "Content-Type": contentType });
  if (req.method === "HEAD") {
    // Nothing would be sent; do not generate a possibly huge body for nothing.
    res.end();
    return;
  }
  const pieces = format === "csv" ? csvPieces(ds, company, a) : jsonPieces(ds, company, a, format, ieee754);
  await streamBody(res, pieces, ctx.chunkDelayMs);
}

/** The export's rows, generated one at a time. */
export function* datasetRows(ds: DatasetDef, company: CompanyDef, a: ArtifactState): Generator<RawCell[]> {
  const gen = { companyId: company.id, companySeed: company.seed, generation: a.generation };
  if (!a.rows) {
    for (let i = 0; i < a.rowCount; i++) yield ds.row(i, gen);
    return;
  }
  const { ids, versions } = a.rows;
  for (let i = 0; i < ids.length; i++) yield ds.row(ids[i], { ...gen, generation: versions[i] });
}

/**
 * How numbers are written: the JSON export (the service's own format) writes integers a double
 * cannot hold as strings; OData JSON (Format 4.0 §3.2) writes Edm.Int64 and Edm.Decimal as JSON
 * numbers, or all of them as strings when the client asked for IEEE754Compatible=true.
 */
type NumberForm = "export" | "odata" | "odata-ieee754";

function jsonValue(v: RawCell, form: NumberForm, asString: boolean): string {
  if (v === null) return "null";
  if (form === "odata-ieee754" && asString && (typeof v === "bigint" || typeof v === "number")) return `"${String(v)}"`;
  if (typeof v === "bigint") {
    if (form !== "export") return v.toString();
    const safe = v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER);
    return safe ? v.toString() : `"${v.toString()}"`;
  }
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`non-finite number in export: ${v}`);
    return String(v);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  return JSON.stringify(v);
}

function* jsonPieces(ds: DatasetDef, company: CompanyDef, a: ArtifactState, format: "json" | "odata", ieee754 = false): Generator<string> {
  const form: NumberForm = format === "json" ? "export" : ieee754 ? "odata-ieee754" : "odata";
  const asString = ds.columns.map((c) => c.type === "Edm.Int64" || c.type === "Edm.Decimal");
  if (format === "json") {
    yield "{" +
      `"dataset_key":${JSON.stringify(ds.key)},` +
      `"schema_version":${JSON.stringify(ds.schemaVersion)},` +
      `"generated_at":${JSON.stringify(a.generatedAt)},` +
      `"row_count":${a.rowCount},` +
      `"columns":${JSON.stringify(ds.columns)},` +
      `"rows":[`;
  } else {
    yield `{"@odata.context":${JSON.stringify(ODATA_CONTEXT_PREFIX + ds.key)},"value":[`;
  }
  const keys = ds.columns.map((c) => JSON.stringify(c.name) + ":");
  let first = true;
  for (const row of datasetRows(ds, company, a)) {
    let s = first ? "{" : ",{";
    first = false;
    for (let c = 0; c < keys.length; c++) {
      if (c > 0) s += ",";
      s += keys[c] + jsonValue(row[c], form, asString[c]);
    }
    yield s + "}";
  }
  yield "]}";
}

function* csvPieces(ds: DatasetDef, company: CompanyDef, a: ArtifactState): Generator<string> {
  yield csvLine(ds.columns.map((c) => c.name));
  for (const row of datasetRows(ds, company, a)) yield csvLine(row);
}
