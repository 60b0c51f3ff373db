/**
 * Test hooks under `/__control/...`: outside the spec's paths. They switch the service between
 * states a client must cope with (new export, faults, slowness, absent route groups, reporting
 * on/off) and show a credential-free request log.
 *
 * Who may use them (issue #36): a loopback peer (this machine), addressing this machine (`Host`,
 * checked for every request in server.ts), with the request header `X-PPM-Control: 1`, and not from
 * a web page on an origin the service does not allow. A browser adds no custom header to a
 * cross-origin request without a preflight, and the preflight is refused for every origin but the
 * add-in's (cors.ts): so a page elsewhere, which the local browser would otherwise happily send as a
 * loopback peer, cannot reach them at all, not even "blind" (a form post or a no-cors fetch).
 * `curl -X POST -H 'X-PPM-Control: 1' http://127.0.0.1:4100/__control/reset` still works.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CONTROL_HEADER, CONTROL_HEADER_VALUE } from "./controlHeader";
import { foreignOrigin, type AllowedOrigins } from "./cors";
import { companyById, datasetByKey } from "./data";
import { sendJson, sendNotFound, type QueryParam } from "./http";
import { ROUTE_GROUPS, type RouteGroup, type ServiceState } from "./state";

export const CONTROL_PREFIX = "/__control/";

export { CONTROL_HEADER, CONTROL_HEADER_VALUE } from "./controlHeader";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/** Whether the peer is this machine (control hooks answer nobody else). */
export function isLoopback(req: IncomingMessage): boolean {
  return LOOPBACK.has(req.socket.remoteAddress ?? "");
}

function param(query: readonly QueryParam[], name: string): string | undefined {
  return query.find((p) => p.name === name)?.value;
}

function intParam(query: readonly QueryParam[], name: string, fallback: number): number | undefined {
  const v = param(query, name);
  if (v === undefined || v === "") return fallback;
  return /^\d+$/.test(v) ? Number(v) : undefined;
}

/** A fraction 0…1 in plain decimal notation; absent = 0; undefined when malformed. */
function fractionParam(query: readonly QueryParam[], name: string): number | undefined {
  const v = param(query, name);
  if (v === undefined || v === "") return 0;
  if (!/^(?:0|1|0?\.\d+|1\.0*)$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 0 && n <= 1 ? n : undefined;
}

function bad(res: ServerResponse, message: string): void {
  sendJson(res, 400, { error: "bad_request", message });
}

/** Stopping and starting the service itself (its listener lives in server.ts). */
export interface Lifecycle {
  /** Running or stopped, the standing faults and delays (for the preview's toolbar). */
  status(): Record<string, unknown>;
  /** Opens the standby listener; resolves with its `POST .../__control/start` address. */
  stop(): Promise<string>;
  /** Closes the service's port and every open connection (after the stop's answer was sent). */
  closeNow(): void;
  /** Listens on the service's port again; resolves with the service's address. */
  start(): Promise<string>;
}

/**
 * Why a control request is refused (403), or null: from a page on an origin the service does not
 * allow, or without the control header. A non-loopback peer gets a plain 404 before this.
 */
export function controlRefusal(req: IncomingMessage, allowed: AllowedOrigins): string | null {
  if (foreignOrigin(req, allowed)) return `Control hooks do not answer pages on ${String(req.headers.origin)}.`;
  if (req.headers[CONTROL_HEADER.toLowerCase()] !== CONTROL_HEADER_VALUE) {
    return `Control hooks need the request header ${CONTROL_HEADER}: ${CONTROL_HEADER_VALUE} (curl -X POST -H '${CONTROL_HEADER}: ${CONTROL_HEADER_VALUE}' …).`;
  }
  return null;
}

/** Answers a `/__control/...` request; unknown actions and non-loopback peers get a plain 404, refused ones 403. */
export async function handleControl(
  state: ServiceState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: readonly QueryParam[],
  allowed: AllowedOrigins,
  lifecycle?: Lifecycle,
): Promise<void> {
  if (!isLoopback(req)) return sendNotFound(res);
  const refused = controlRefusal(req, allowed);
  if (refused) return sendJson(res, 403, { error: "control_refused", message: refused });
  const action = path.slice(CONTROL_PREFIX.length);
  const method = req.method ?? "GET";

  if (action === "requests") {
    if (method === "GET") return sendJson(res, 200, { requests: state.requestLog });
    if (method === "DELETE") {
      state.requestLog = [];
      return sendJson(res, 200, { ok: true });
    }
    return bad(res, "use GET or DELETE");
  }
  if (action === "status" && method === "GET" && lifecycle) return sendJson(res, 200, lifecycle.status());
  if (method !== "POST") return bad(res, "control actions other than requests and status are POST");

  switch (action) {
    case "stop": {
      if (!lifecycle) return sendNotFound(res);
      const start = await lifecycle.stop();
      // The port closes once this answer has gone out: until `start`, connections are refused.
      res.on("finish", () => setImmediate(() => lifecycle.closeNow()));
      return sendJson(res, 200, { ok: true, running: false, start, message: `Stopped: connections to this port are refused until POST ${start}` });
    }
    case "start":
      // Already running (the standby listener answers the start of a stopped service).
      return sendJson(res, 200, { ok: true, running: true });
    case "reset":
      state.reset();
      return sendJson(res, 200, { ok: true });
    case "regenerate": {
      const company = companyById(param(query, "company") ?? "");
      const ds = datasetByKey(param(query, "dataset") ?? "");
      if (!company || !ds) return bad(res, "company and dataset must name a demo company and a listed dataset");
      const fractions = {
        changed: fractionParam(query, "changed"),
        added: fractionParam(query, "added"),
        removed: fractionParam(query, "removed"),
      };
      // Or exact numbers of rows (the preview's toolbar): changedRows=2&addedRows=1&removedRows=1.
      const rowCounts = {
        changed: intParam(query, "changedRows", 0),
        added: intParam(query, "addedRows", 0),
        removed: intParam(query, "removedRows", 0),
      };
      const seed = intParam(query, "seed", 1);
      const bads = Object.entries(fractions).filter(([, v]) => v === undefined).map(([k]) => k);
      if (bads.length > 0) return bad(res, `${bads.join(", ")} must be a fraction from 0 to 1 (e.g. 0.01)`);
      const badRows = Object.entries(rowCounts).filter(([, v]) => v === undefined).map(([k]) => `${k}Rows`);
      if (badRows.length > 0) return bad(res, `${badRows.join(", ")} must be a whole number of rows`);
      if (seed === undefined || seed > 0xffffffff) return bad(res, "seed must be a whole number from 0 to 4294967295");
      const inRows = ["changedRows", "addedRows", "removedRows"].some((k) => param(query, k) !== undefined);
      const partial = inRows || ["changed", "added", "removed"].some((k) => param(query, k) !== undefined);
      if (inRows && ["changed", "added", "removed"].some((k) => param(query, k) !== undefined)) {
        return bad(res, "give fractions (changed, added, removed) or numbers of rows (changedRows, addedRows, removedRows), not both");
      }
      if (!partial) {
        const a = state.regenerate(company.id, ds.key);
        return sendJson(res, 200, {
          company: company.id,
          dataset: ds.key,
          generation: a.generation,
          generated_at: a.generatedAt,
          row_count: a.rowCount,
        });
      }
      const { artifact: a, counts } = state.regeneratePartly(
        company.id,
        ds.key,
        inRows
          ? { changed: rowCounts.changed ?? 0, added: rowCounts.added ?? 0, removed: rowCounts.removed ?? 0, seed, inRows: true }
          : { changed: fractions.changed ?? 0, added: fractions.added ?? 0, removed: fractions.removed ?? 0, seed },
      );
      return sendJson(res, 200, {
        company: company.id,
        dataset: ds.key,
        generation: a.generation,
        generated_at: a.generatedAt,
        row_count: a.rowCount,
        seed,
        changed: counts.changed,
        added: counts.added,
        removed: counts.removed,
      });
    }
    case "fault": {
      const target = param(query, "path");
      // `status=drop`: the connection is closed without an answer (an unreachable service, as a client sees it).
      const status = param(query, "status") === "drop" ? "drop" : intParam(query, "status", 503);
      const count = param(query, "count") === "unlimited" ? Infinity : intParam(query, "count", 1);
      const retryAfter = intParam(query, "retryAfter", 1);
      if (!target || !target.startsWith("/")) return bad(res, "path must be an absolute path (a trailing * matches a prefix)");
      if (status === undefined || (status !== "drop" && (status < 400 || status > 599))) return bad(res, "status must be 400-599, or drop");
      if (count === undefined || retryAfter === undefined) return bad(res, "count (a whole number or unlimited) and retryAfter must be whole numbers");
      if (count === 0) state.faults.delete(target);
      else state.faults.set(target, { status, remaining: count, retryAfter });
      return sendJson(res, 200, { ok: true, path: target, status, count: Number.isFinite(count) ? count : "unlimited", retryAfter });
    }
    case "delay": {
      const target = param(query, "path");
      const ms = intParam(query, "ms", 0);
      const chunkDelayMs = intParam(query, "chunkDelayMs", 0);
      const count = param(query, "count") === undefined || param(query, "count") === "unlimited" ? Infinity : intParam(query, "count", 1);
      if (!target || !target.startsWith("/")) return bad(res, "path must be an absolute path (a trailing * matches a prefix)");
      if (ms === undefined || chunkDelayMs === undefined || count === undefined) {
        return bad(res, "ms, chunkDelayMs and count must be whole numbers");
      }
      if ((ms === 0 && chunkDelayMs === 0) || count === 0) state.delays.delete(target);
      else state.delays.set(target, { ms, chunkDelayMs, remaining: count });
      return sendJson(res, 200, { ok: true, path: target, ms, chunkDelayMs, count: Number.isFinite(count) ? count : null });
    }
    case "absent": {
      const raw = param(query, "groups") ?? "";
      const groups = raw.split(",").map((g) => g.trim()).filter((g) => g !== "");
      const unknown = groups.filter((g) => !ROUTE_GROUPS.includes(g as RouteGroup));
      if (unknown.length > 0) return bad(res, `unknown groups: ${unknown.join(", ")} (known: ${ROUTE_GROUPS.join(", ")})`);
      state.absent = new Set(groups as RouteGroup[]);
      return sendJson(res, 200, { ok: true, absent: [...state.absent] });
    }
    case "reporting": {
      const company = companyById(param(query, "company") ?? "");
      const enabled = param(query, "enabled");
      if (!company || (enabled !== "true" && enabled !== "false")) return bad(res, "company must name a demo company and enabled must be true or false");
      state.reportingEnabled.set(company.id, enabled === "true");
      return sendJson(res, 200, { ok: true, company: company.id, enabled: enabled === "true" });
    }
    default:
      return sendNotFound(res);
  }
}

const SECRET_PARAM = /token|secret|auth|password/i;

/** The query string for the request log, with any credential-like parameter value replaced. */
export function redactQuery(raw: string): string {
  if (raw === "") return "";
  return raw
    .split("&")
    .map((part) => {
      const eq = part.indexOf("=");
      const rawName = eq < 0 ? part : part.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, " "));
      } catch {
        // keep the raw name for the check
      }
      return SECRET_PARAM.test(name) ? `${rawName}=REDACTED` : part;
    })
    .join("&");
}
