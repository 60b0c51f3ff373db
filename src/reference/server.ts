/**
 * The reference PPM service: a real HTTP server (Node `http`, no framework) implementing every
 * endpoint, header, credential rule and error of `../shared/spec/ppm-interface.md`, with demo
 * data and switchable fault states. `npm start` embeds it; integration and browser tests talk to it.
 * It imports only `src/contract` and Node.
 *
 * REFERENCE CHOICES (where the spec says "not shown" or is silent; a client must not rely on them):
 * - Columns are `{ name, type, nullable }` with EDM type names. JSON export and OData `value` rows
 *   are objects keyed by column name. Dates `YYYY-MM-DD`; date-times ISO-8601 UTC with `Z`;
 *   decimals JSON numbers; Int64 beyond 2^53 as JSON strings (IEEE754Compatible convention) and
 *   plain digits in CSV; booleans `true`/`false` in CSV; null is JSON null / an empty CSV cell.
 *   Every CSV record, the last included, ends in CRLF. `text/csv; charset=utf-8; header=present`.
 * - Manifest: `{ api_version, company_id, datasets }`; a dataset entry is `{ key, name,
 *   schema_version, formats: ["json","csv","odata"], columns, published_schema: { published_at,
 *   custom_fields: [{ name, type: "numeric"|"text", column }], pending_changes }, links: { json, csv },
 *   artifacts: { generated_at, latest_successful_generated_at, row_count } }`. `risks` has null
 *   artifacts; `timesheets` looks generated but every dataset endpoint answers 422.
 * - `$metadata`: one entity type and entity set per dataset key (namespace `Service.Reporting`),
 *   keys on natural key columns. The service document lists `{ name, kind: "EntitySet", url }`.
 * - ETag: strong, a hash of company|dataset|format|generation|row count — differs per company and
 *   per format. Last-Modified = generated_at as an HTTP-date. Conditional GET per RFC 9110:
 *   If-None-Match (list, `*`, weak comparison) wins over If-Modified-Since; a match is 304 with no
 *   body but with ETag, Last-Modified, Cache-Control and the X-Service-* headers. Only dataset
 *   responses (OData dataset, JSON, CSV) carry validators, and `Vary: Origin, Company-Api-Token,
 *   Authorization` so a browser cache never serves one company's export to another.
 * - Order of checks on reporting requests: unknown route → plain-text 404; `Company-Api-Token`
 *   query parameter (any letter case) → 400 query_string_token_rejected; credentials by precedence
 *   header > `company_api_token` query parameter > Basic (user `company_api_token`), where the first
 *   form present decides (an empty value counts as absent) → 401 unauthorized; reporting disabled →
 *   403 bi_reporting_disabled; any `$`-prefixed query option after percent-decoding → 400
 *   unsupported_odata_query_options listing all distinct names in order; then dataset lookup
 *   (unknown_dataset / not_generated / invalid_cached_artifact). Record headers are ignored.
 *   `$` options are rejected on every reporting path, `$metadata` and the manifest included.
 *   No `WWW-Authenticate` challenge on 401 (a browser would show its own login dialog).
 * - Unknown routes, paths of an absent group, and control paths from a non-loopback peer →
 *   404 `text/plain` `Not Found`. Wrong methods → 405 `text/plain` with `Allow`.
 * - CORS: every response has `Access-Control-Allow-Origin` (the request's Origin, else `*`) and
 *   `Vary: Origin`; any OPTIONS is a preflight answered 204 (for every path, so that an absent
 *   route shows as a 404 and not as a CORS failure) with Allow-Methods, Allow-Headers and Max-Age;
 *   `Access-Control-Allow-Private-Network` when asked; `Access-Control-Expose-Headers` lists ETag,
 *   Last-Modified, X-Service-*, OData-Version and Retry-After unless started with
 *   `exposeHeaders: false`.
 * - Snapshots: `Company-Api-Token` header (401 JSON `{ error: "unauthorized", message }`); globex
 *   works. List rows: `project_token`, `project_name`, `project_type`, `status`, `start_date` and
 *   custom fields as display-name keys. Resource rows add `resource_name`, `project_token` and
 *   `project_name` (null on non_project_work rows) and null NPT fields on project_work rows; globex
 *   has no team hierarchy, so its rows have no `resource_team`. Project scores cover Active projects.
 * - Records: `api-auth` + `api-token` + `api-secret` must all match (401 JSON). GET/PUT name the
 *   target by `record-token` (400 `missing_record_token`, 404 `record_not_found`). POST body
 *   `{ project_name?, custom_fields? }` → 201 record; PUT `{ project_name?, custom_fields? }` → 200.
 *   A numeric value breaking `NUMERIC_CUSTOM_FIELD`, or any non-string value → 400
 *   `{ error: "invalid_custom_field", message, field, value }`; unknown name → 400
 *   `{ error: "unknown_custom_field", message, field }`; bad JSON → 400 `invalid_json`; nothing of a
 *   rejected request is saved. Saved numeric values are normalised ("12,5" → "12.5", "+7" → "7").
 * - Control hooks (loopback only, JSON answers): POST `/__control/regenerate?company=&dataset=`
 *   (also makes `risks`/`timesheets` servable; `&changed=&added=&removed=&seed=` fractions regenerate only
 *   those rows, see README), `/__control/reset`,
 *   `/__control/fault?path=&status=&count=&retryAfter=` (429/503 carry Retry-After; a trailing `*`
 *   in path matches a prefix), `/__control/delay?path=&ms=&chunkDelayMs=&count=`,
 *   `/__control/absent?groups=snapshot,record`, `/__control/reporting?company=&enabled=true|false`;
 *   GET/DELETE `/__control/requests` (method, path, redacted query, status; never header values).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerPreflight, applyCors, isPreflight } from "./cors";
import { CONTROL_PREFIX, handleControl, redactQuery } from "./control";
import { parseQuery, sendJson, sendMethodNotAllowed, sendNotFound, splitUrl, waitUnlessClosed } from "./http";
import { handleRecord, matchRecordRoute } from "./records";
import { handleReporting, matchReportingRoute } from "./reporting";
import { handleSnapshot, matchSnapshotRoute } from "./snapshots";
import { DATASETS, datasetByKey } from "./data";
import { ROUTE_GROUPS, ServiceState, type RouteGroup } from "./state";

export interface ReferenceServiceOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Row counts per dataset key, e.g. `{ financials: 200000 }` for benchmarks. */
  datasetRows?: Record<string, number>;
  /** Route groups that answer as absent (plain 404) from the start. */
  absentGroups?: RouteGroup[];
  /** false simulates a deployment whose CORS does not expose the validator and X-Service-* headers. */
  exposeHeaders?: boolean;
  /** When false, logs one line per request (method, path, status; never query or headers). Default true. */
  quiet?: boolean;
}

export interface ReferenceService {
  /** Base URL, e.g. `http://127.0.0.1:4100` (no trailing slash). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a reference service bound to 127.0.0.1 only. */
export async function startReferenceService(opts: ReferenceServiceOptions = {}): Promise<ReferenceService> {
  for (const [key, n] of Object.entries(opts.datasetRows ?? {})) {
    if (!datasetByKey(key)) throw new Error(`datasetRows: '${key}' is not a demo dataset (known: ${DATASETS.map((d) => d.key).join(", ")})`);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`datasetRows: '${key}' needs a whole number of rows >= 0, got ${n}`);
  }
  for (const g of opts.absentGroups ?? []) {
    if (!ROUTE_GROUPS.includes(g)) throw new Error(`absentGroups: '${String(g)}' is not one of ${ROUTE_GROUPS.join(", ")}`);
  }
  const state = new ServiceState(opts.datasetRows ?? {}, opts.absentGroups ?? []);
  const exposeHeaders = opts.exposeHeaders ?? true;
  const quiet = opts.quiet ?? true;

  const server: Server = createServer((req, res) => {
    handle(state, exposeHeaders, quiet, req, res).catch((err: unknown) => {
      if (!quiet) console.error("reference service: internal error:", err instanceof Error ? err.message : String(err));
      if (!res.headersSent) sendJson(res, 500, { error: "internal_error", message: "The reference service failed." });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets of fetch clients would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

async function handle(
  state: ServiceState,
  exposeHeaders: boolean,
  quiet: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = Date.now();
  const { path, query: rawQuery } = splitUrl(req.url);
  const method = req.method ?? "GET";
  const isControl = path.startsWith(CONTROL_PREFIX);
  // "close" rather than "finish": requests the client abandoned are logged too.
  res.on("close", () => {
    const complete = res.writableFinished;
    if (!isControl) {
      state.log({ at: new Date(started).toISOString(), method, path, query: redactQuery(rawQuery), status: res.statusCode, complete });
    }
    if (!quiet) console.log(`${method} ${path} ${res.statusCode}${complete ? "" : " (aborted)"} ${Date.now() - started}ms`);
  });

  applyCors(req, res, exposeHeaders);
  if (isPreflight(req)) return answerPreflight(req, res);
  const query = parseQuery(rawQuery);
  if (isControl) return handleControl(state, req, res, path, query);

  const delay = state.takeDelay(path);
  if (delay && delay.ms > 0) await waitUnlessClosed(res, delay.ms);
  if (res.destroyed) return;

  const fault = state.takeFault(path);
  if (fault) {
    const headers: Record<string, string> = {};
    if (fault.status === 429 || fault.status === 503) headers["Retry-After"] = String(fault.retryAfter);
    const error = fault.status === 429 ? "rate_limited" : fault.status === 503 ? "service_unavailable" : "injected_fault";
    return sendJson(res, fault.status, { error, message: `Injected fault (HTTP ${fault.status}).` }, headers);
  }

  const reporting = matchReportingRoute(path);
  if (reporting && !state.absent.has("reporting")) {
    if (method !== "GET" && method !== "HEAD") return sendMethodNotAllowed(res, "GET");
    return handleReporting({ state, chunkDelayMs: delay?.chunkDelayMs ?? 0 }, req, res, reporting, query);
  }
  const snapshot = matchSnapshotRoute(path);
  if (snapshot && !state.absent.has("snapshot")) return handleSnapshot(state, req, res, snapshot);
  const record = matchRecordRoute(path);
  if (record && !state.absent.has("record")) return handleRecord(state, req, res, record);
  return sendNotFound(res);
}
