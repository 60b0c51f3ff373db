/**
 * "Paste an OData URL": a user's existing OData / Power Query link carries `$` options the service
 * rejects. Split it into the clean request (no `$` options, no credentials) and the local query.
 */
import { PATHS, type SnapshotEndpoint } from "../contract/contract";
import { QueryError } from "./errors";
import { decodeComponent, queryFromPairs, splitParams, systemOptionName, type LocalQuery } from "./options";

/** What a pasted URL asks for. */
export interface SplitUrl {
  /**
   * The URL to request: query options (`$filter`, and OData 4.01's `filter` without `$`) and
   * credentials removed, other parameters kept in order.
   */
  url: string;
  /** The query options, to evaluate locally. */
  query: LocalQuery;
  /**
   * True when a credential was dropped: a `company_api_token`, `api_token`, `token`,
   * `access_token` (or `api_secret`, `record_token`) parameter, in any case and with `-` or `_`,
   * or user:password in the address. The token is never kept, logged or shown.
   */
  removedCredentials: boolean;
  /** Everything before `/api/` (scheme, host, any path prefix), for absolute service URLs. */
  baseUrl?: string;
  /** Set when the path is a reporting dataset path. */
  dataset?: { key: string; format: "odata" | "json" | "csv" };
  /** Set when the path is a snapshot path. */
  snapshot?: SnapshotEndpoint;
}

// The same names the request builder refuses to send (src/service/request.ts): a pasted Power Query
// or browser link may carry the token under any of the common spellings, not only the service's own.
const CREDENTIAL_PARAMS = new Set(["company_api_token", "api_token", "token", "access_token", "api_secret", "api_auth", "record_token"]);

/** True when a query parameter name carries a credential (case-insensitive, `-` and `_` alike). */
export function isCredentialParam(name: string): boolean {
  return CREDENTIAL_PARAMS.has(name.trim().toLowerCase().replace(/-/g, "_"));
}

/** Splits a pasted service URL. Throws {@link QueryError} (`invalid_url`, or any option error). */
export function splitODataUrl(input: string): SplitUrl {
  const text = input.trim();
  const hashAt = text.indexOf("#");
  const beforeHash = hashAt < 0 ? text : text.slice(0, hashAt);
  const fragment = hashAt < 0 ? "" : text.slice(hashAt);
  const qAt = beforeHash.indexOf("?");
  let base = qAt < 0 ? beforeHash : beforeHash.slice(0, qAt);
  const qs = qAt < 0 ? "" : beforeHash.slice(qAt + 1);

  let parsed: URL;
  try {
    // Relative service paths (`/api/bi/v1/x?...`) are accepted too.
    parsed = new URL(base, "http://relative.invalid");
  } catch {
    // Never echo the address: it may carry a token.
    throw new QueryError({ code: "invalid_url", detail: "the pasted address is not a valid URL" });
  }
  if (base === "" || /\s/.test(base)) {
    throw new QueryError({ code: "invalid_url", detail: "the pasted address is not a valid URL" });
  }
  let removedCredentials = false;
  if (parsed.username !== "" || parsed.password !== "") {
    base = base.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, "$1");
    removedCredentials = true;
  }

  const kept: string[] = [];
  const options: [string, string][] = [];
  for (const part of splitParams(qs)) {
    const eq = part.indexOf("=");
    const name = decodeComponent(eq < 0 ? part : part.slice(0, eq)).trim();
    if (isCredentialParam(name)) {
      removedCredentials = true;
      continue;
    }
    // OData 4.01 system query options may omit the `$` (`filter=`, `top=`): local too, never sent.
    if (name.startsWith("$") || systemOptionName(name) !== undefined) {
      if (eq < 0) {
        throw new QueryError({ code: "invalid_value", option: name, detail: "expected '=' and a value after the option name" });
      }
      options.push([decodeComponent(part.slice(0, eq)), decodeComponent(part.slice(eq + 1))]);
      continue;
    }
    kept.push(part);
  }
  const query = queryFromPairs(options);
  const url = base + (kept.length ? "?" + kept.join("&") : "") + fragment;
  const result: SplitUrl = { url, query, removedCredentials };
  Object.assign(result, classifyPath(base, parsed.pathname));
  return result;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Recognises the service's paths, allowing a prefix before `/api/` (hosted under a sub-path). */
function classifyPath(base: string, pathname: string): Pick<SplitUrl, "baseUrl" | "dataset" | "snapshot"> {
  const apiAt = pathname.indexOf("/api/");
  if (apiAt < 0) return {};
  const tail = pathname.slice(apiAt).replace(/\/+$/, "");
  const out: Pick<SplitUrl, "baseUrl" | "dataset" | "snapshot"> = {};
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(base);
  if (scheme) {
    const rawApiAt = base.indexOf("/api/", scheme[0].length);
    if (rawApiAt >= 0) out.baseUrl = base.slice(0, rawApiAt);
  }
  let m = /^\/api\/bi\/odata\/v1\/([^/]+)$/.exec(tail);
  if (m && m[1] !== "$metadata" && m[1] !== "%24metadata") {
    out.dataset = { key: safeDecode(m[1]), format: "odata" };
    return out;
  }
  m = /^\/api\/bi\/v1\/([^/]+)\.csv$/.exec(tail);
  if (m) {
    out.dataset = { key: safeDecode(m[1]), format: "csv" };
    return out;
  }
  m = /^\/api\/bi\/v1\/([^/]+)$/.exec(tail);
  if (m && m[1] !== "manifest") {
    out.dataset = { key: safeDecode(m[1]), format: "json" };
    return out;
  }
  for (const [name, path] of Object.entries(PATHS.snapshot)) {
    if (tail === path) out.snapshot = name as SnapshotEndpoint;
  }
  return out;
}
