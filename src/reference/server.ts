/**
 * The reference PPM service: a real HTTP server (Node `http`, no framework) implementing every
 * endpoint, header, credential rule and error of `../shared/spec/ppm-interface.md`, with demo
 * data and switchable fault states. `npm start` embeds it; integration and browser tests talk to it.
 * It imports only `src/contract` and Node.
 *
 * REFERENCE CHOICES (where the spec says "not shown" or is silent; a client must not rely on them):
 * - Columns are `{ name, type, nullable }` with EDM type names. JSON export and OData `value` rows
 *   are objects keyed by column name. Dates `YYYY-MM-DD`; date-times ISO-8601 UTC with `Z`;
 *   JSON export: decimals JSON numbers, Int64 beyond 2^53 as JSON strings and plain digits in CSV;
 *   booleans `true`/`false` in CSV; null is JSON null / an empty CSV cell.
 * - OData JSON (the spec says "OData version is 4.0"; OData JSON Format 4.0 §3–4): every JSON
 *   response on an OData path (service root, dataset, errors) is `application/json;
 *   odata.metadata=minimal; charset=utf-8`. Edm.Int64 and Edm.Decimal are JSON numbers (all digits,
 *   also beyond 2^53), unless a JSON media range of `Accept` carries `IEEE754Compatible=true`: then
 *   both are strings and the Content-Type carries `IEEE754Compatible=true`. The two
 *   representations have different ETags, and OData dataset responses add `Accept` to `Vary`.
 *   Error bodies are the spec's (`error`, `message`, `dataset_key`/`unsupported_options`).
 *   Every CSV record, the last included, ends in CRLF. `text/csv; charset=utf-8; header=present`.
 * - Manifest: `{ api_version, company_id, datasets }`; a dataset entry is `{ key, name,
 *   schema_version, formats: ["json","csv","odata"], columns, published_schema: { published_at,
 *   custom_fields: [{ name, type: "numeric"|"text", column }], pending_changes }, links: { json, csv },
 *   artifacts: { generated_at, latest_successful_generated_at, row_count } }`. `risks` has null
 *   artifacts; `timesheets` looks generated but every dataset endpoint answers 422.
 * - `$metadata`: one entity type and entity set per dataset key (namespace `Service.Reporting`),
 *   keys on natural key columns. The service document lists `{ name, kind: "EntitySet", url }`.
 * - ETag: strong, a hash of company|dataset|format|generation|row count (and the OData number form)
 *   — differs per company, per format and per representation. Last-Modified = generated_at as an HTTP-date. Conditional GET per RFC 9110:
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
 *   404 `text/plain` `Not Found`. Wrong methods → 405 `text/plain` with `Allow`. A `Host` that does
 *   not name this machine (localhost, 127.0.0.1, [::1]) → 421 `text/plain`, for every request.
 * - CORS (cors.ts), for the allowed origins only (`allowedOrigins`, default the dev server's
 *   `https://localhost:3000` and `http://localhost:3000`): every response to one has
 *   `Access-Control-Allow-Origin` (that origin); every response has `Vary: Origin`; any OPTIONS is a
 *   preflight, answered 204 for an allowed origin (for every path, so that an absent route shows as
 *   a 404 and not as a CORS failure) with Allow-Methods, Allow-Headers and Max-Age and
 *   `Access-Control-Allow-Private-Network` when asked, and 403 without CORS headers for any other;
 *   `Access-Control-Expose-Headers` lists ETag, Last-Modified, X-Service-*, OData-Version and
 *   Retry-After unless started with `exposeHeaders: false`.
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
 * - Control hooks (loopback only, with the request header `X-PPM-Control: 1`, never from a page on
 *   an origin not allowed: 403 `control_refused`; JSON answers): POST `/__control/regenerate?company=&dataset=`
 *   (also makes `risks`/`timesheets` servable; `&changed=&added=&removed=&seed=` fractions regenerate only
 *   those rows, see README), `/__control/reset`,
 *   `/__control/fault?path=&status=&count=&retryAfter=` (429/503 carry Retry-After; `status=drop`
 *   closes the connection unanswered; `count=unlimited`; a trailing `*` in path matches a prefix),
 *   `/__control/delay?path=&ms=&chunkDelayMs=&count=`, `/__control/stop` (the port closes; the
 *   answer names a standby address whose `/__control/start` opens it again), GET `/__control/status`,
 *   `/__control/absent?groups=snapshot,record`, `/__control/reporting?company=&enabled=true|false`;
 *   GET/DELETE `/__control/requests` (method, path, redacted query, status; never header values).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { allowedOrigins as originSet, answerPreflight, applyCors, DEFAULT_ALLOWED_ORIGINS, isPreflight, localHostHeader, refuseHost, type AllowedOrigins } from "./cors";
import { CONTROL_PREFIX, controlRefusal, handleControl, isLoopback, redactQuery, type Lifecycle } from "./control";
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
  /**
   * The origins CORS answers (the pages that call the service: the add-in's dev server, the e2e
   * suite's file server, the self-test kit's page). Default {@link DEFAULT_ALLOWED_ORIGINS}.
   */
  allowedOrigins?: readonly string[];
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
  const allowed = originSet(opts.allowedOrigins ?? DEFAULT_ALLOWED_ORIGINS);

  let port = 0;
  /**
   * While stopped (`POST /__control/stop`): the service's port is closed (clients are refused, as
   * with a stopped process) and a standby listener on another loopback port answers only
   * `POST /__control/start` (and `GET /__control/status`), so the service can be started again
   * without a terminal. Its address is in the stop's answer.
   */
  let standby: { server: Server; url: string } | null = null;
  const lifecycle: Lifecycle = {
    status: () => ({ running: standby === null, ...(standby ? { start: `${standby.url}/__control/start` } : {}), faults: [...state.faults].map(([path, f]) => ({ path, status: f.status, remaining: Number.isFinite(f.remaining) ? f.remaining : "unlimited" })), delays: [...state.delays].map(([path, d]) => ({ path, ms: d.ms, chunkDelayMs: d.chunkDelayMs })) }),
    async stop() {
      if (standby) return `${standby.url}/__control/start`;
      const stand = createServer((req, res) => {
        if (!localHostHeader(req)) return refuseHost(res);
        applyCors(req, res, exposeHeaders, allowed);
        if (isPreflight(req)) return answerPreflight(req, res, allowed);
        const { path } = splitUrl(req.url);
        if (!isLoopback(req)) return sendNotFound(res);
        const refused = controlRefusal(req, allowed);
        if (refused) return sendJson(res, 403, { error: "control_refused", message: refused });
        if (path === `${CONTROL_PREFIX}status` && req.method === "GET") return sendJson(res, 200, lifecycle.status());
        if (path !== `${CONTROL_PREFIX}start` || req.method !== "POST") return sendJson(res, 503, { error: "stopped", message: `The reference service is stopped; POST ${CONTROL_PREFIX}start here to start it again.` });
        lifecycle.start().then(
          (url) => sendJson(res, 200, { ok: true, running: true, url }),
          (err: unknown) => sendJson(res, 500, { error: "start_failed", message: `Port ${port} could not be opened again: ${err instanceof Error ? err.message : String(err)}` }),
        );
      });
      await listen(stand, 0);
      standby = { server: stand, url: `http://127.0.0.1:${(stand.address() as AddressInfo).port}` };
      return `${standby.url}/__control/start`;
    },
    closeNow() {
      server.close();
      // Open keep-alive connections too: a stopped service answers nothing.
      server.closeAllConnections();
    },
    async start() {
      if (!standby) return `http://127.0.0.1:${port}`;
      await listen(server, port);
      const stand = standby.server;
      standby = null;
      // After this answer is on its way: the standby listener's last request is the start itself.
      setTimeout(() => {
        stand.close();
        stand.closeAllConnections();
      }, 100);
      return `http://127.0.0.1:${port}`;
    },
  };

  const server: Server = createServer((req, res) => {
    handle(state, { exposeHeaders, quiet, allowed }, lifecycle, req, res).catch((err: unknown) => {
      if (!quiet) console.error("reference service: internal error:", err instanceof Error ? err.message : String(err));
      if (!res.headersSent) sendJson(res, 500, { error: "internal_error", message: "The reference service failed." });
      else res.destroy();
    });
  });

  await listen(server, opts.port ?? 0);
  port = (server.address() as AddressInfo).port;
  const closeServer = (srv: Server) =>
    new Promise<void>((resolve, reject) => {
      if (!srv.listening) return resolve();
      srv.close((err) => (err ? reject(err) : resolve()));
      // Keep-alive sockets of fetch clients would otherwise hold close() open.
      srv.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      if (standby) await closeServer(standby.server);
      await closeServer(server);
    },
  };
}

/** Listens on 127.0.0.1:port (0: a free one). */
function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function handle(
  state: ServiceState,
  { exposeHeaders, quiet, allowed }: { exposeHeaders: boolean; quiet: boolean; allowed: AllowedOrigins },
  lifecycle: Lifecycle,
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

  if (!localHostHeader(req)) return refuseHost(res);
  applyCors(req, res, exposeHeaders, allowed);
  if (isPreflight(req)) return answerPreflight(req, res, allowed);
  const query = parseQuery(rawQuery);
  if (isControl) return handleControl(state, req, res, path, query, allowed, lifecycle);

  const delay = state.takeDelay(path);
  if (delay && delay.ms > 0) await waitUnlessClosed(res, delay.ms);
  if (res.destroyed) return;

  const fault = state.takeFault(path);
  if (fault?.status === "drop") {
    // No answer at all: the client sees the connection closed (a browser's "Failed to fetch").
    // Logged with status 0: nothing was sent.
    res.statusCode = 0;
    req.socket.destroy();
    return;
  }
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
