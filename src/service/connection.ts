/**
 * Connections: which environment, which company, with which credentials.
 *
 * A connection's identity for caching purposes ({@link environmentKey}, {@link connectionScope})
 * never contains a secret, so it can be written into workbooks, file names and logs.
 */
import { PpmError } from "./errors";
import { sha256Hex } from "./hash";

/** One environment + company, with the credentials the add-in holds for it. */
export interface Connection {
  /** Stable local id (chosen by whoever stores connections). */
  id: string;
  /** Display name, e.g. "Acme (EU)". */
  name: string;
  /** Environment base URL, e.g. `https://eu.example.com`. Normalise with {@link normalizeBaseUrl}. */
  baseUrl: string;
  /** Company API token (reporting `Company-Api-Token`, record `api-token`). Secret. */
  token: string;
  /** Record credential `api-auth` (record endpoints only). */
  apiAuth?: string;
  /** Record credential `api-secret` (record endpoints only). Secret. */
  apiSecret?: string;
  /** Reporting authentication form. Default `header`; the query-parameter form is never used. */
  authMode?: "header" | "basic";
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Validates and normalises an environment base URL: https (http only for localhost/127.0.0.1),
 * no credentials, no query or fragment; lower-case scheme and host, default port dropped,
 * trailing slashes removed. A path prefix (for deployments behind a gateway) is kept.
 *
 * @throws PpmError `invalid_base_url` with a message saying what is wrong.
 */
export function normalizeBaseUrl(url: string): string {
  const raw = typeof url === "string" ? url.trim() : "";
  const fail = (why: string): never => {
    throw new PpmError("invalid_base_url", `The environment address is not usable: ${why}.`);
  };
  if (!raw) fail("it is empty");
  // `localhost:4310` parses as the scheme "localhost:"; say what is missing instead.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    // Echoed only when it is a plain host[:port][/path]: anything else may hold a pasted secret.
    const plain = /^[A-Za-z0-9.-]+(?::\d+)?(?:\/[A-Za-z0-9._~/-]*)?$/.test(raw);
    const host = raw.replace(/[/?#].*$/, "").replace(/:\d+$/, "").toLowerCase();
    const scheme = LOCAL_HOSTS.has(host) ? "http" : "https";
    fail(plain ? `it has no scheme: write ${scheme}://${raw}` : "it is not an absolute address such as https://host.example.com");
  }
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return fail("it is not an absolute address such as https://host.example.com");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") fail(`the scheme must be https (got ${u.protocol.replace(":", "")})`);
  if (u.protocol === "http:" && !LOCAL_HOSTS.has(u.hostname)) fail("it must use https (plain http is only allowed for localhost)");
  // Deliberately vague: echoing the user part could echo a pasted token.
  if (u.username || u.password) fail("it must not contain a user name or password");
  if (u.search || raw.includes("?")) fail("it must not contain a query string");
  if (u.hash || raw.includes("#")) fail("it must not contain a fragment");
  const path = u.pathname.replace(/\/+$/, "");
  // The service's own paths are added by the client; an address that already ends in one (a
  // copied API address) would be asked for /api/bi/v1/api/bi/v1/manifest.
  const api = /^(.*?)(\/api\/(?:bi|snapshot|v1)(?:\/.*)?)$/i.exec(path);
  if (api) fail(`it ends with ${api[2]}, a path the add-in adds itself: use ${u.protocol}//${u.host}${api[1]}`);
  return `${u.protocol}//${u.host}${path}`;
}

/** Non-secret identity of an environment: its normalised base URL. */
export function environmentKey(baseUrl: string): string {
  return normalizeBaseUrl(baseUrl);
}

/** Short, non-reversible fingerprint of a secret (first 16 hex digits of its SHA-256). */
export function secretFingerprint(secret: string): string {
  return sha256Hex(`ppm-token-fingerprint:${secret}`).slice(0, 16);
}

/**
 * Stable non-secret scope of a connection: environment + company. The company id is known once the
 * manifest has been read; before that (or when reporting is unavailable) a fingerprint of the
 * token stands in for it. Caches keyed by scope never mix two companies or two environments.
 */
export function connectionScope(conn: Pick<Connection, "baseUrl" | "token">, companyId?: string | number | null): string {
  const env = environmentKey(conn.baseUrl);
  const company = companyId !== undefined && companyId !== null && String(companyId) !== "" ? `company:${companyId}` : `token:${secretFingerprint(conn.token)}`;
  return `${env}|${company}`;
}

/** The secrets of a connection, for {@link redactSecrets}. */
export function connectionSecrets(conn: Pick<Connection, "token" | "apiSecret" | "apiAuth">): string[] {
  return [conn.token, conn.apiSecret, conn.apiAuth].filter((s): s is string => typeof s === "string" && s.length > 0);
}
