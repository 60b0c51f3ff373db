/**
 * Credential checks of the three endpoint groups. Reporting accepts three credential forms with a
 * fixed precedence; snapshots use the `Company-Api-Token` header; records use the three record
 * headers. Token values never leave this module except as the resolved company.
 */
import type { IncomingMessage } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { BASIC_USER, HEADERS, TOKEN_QUERY_PARAM } from "../contract/contract";
import { COMPANIES, type CompanyDef } from "./data";
import type { QueryParam } from "./http";

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === "" ? undefined : s;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

export function companyByToken(token: string): CompanyDef | undefined {
  return COMPANIES.find((c) => sameSecret(c.token, token));
}

/** Whether the query carries a parameter named `Company-Api-Token` in any letter case. */
export function hasQueryStringCompanyToken(query: readonly QueryParam[]): boolean {
  const banned = HEADERS.companyToken.toLowerCase();
  return query.some((p) => p.name.toLowerCase() === banned);
}

/** Which credential form a reporting request was resolved from. */
export type CredentialSource = "header" | "query" | "basic";

/**
 * Resolves the reporting credential by precedence: `Company-Api-Token` header, then the
 * `company_api_token` query parameter, then Basic with user `company_api_token`. The first form
 * present decides; a wrong value there is not rescued by a later form. Undefined = 401.
 */
export function resolveReportingCompany(
  req: IncomingMessage,
  query: readonly QueryParam[],
): { company: CompanyDef; source: CredentialSource } | undefined {
  const fromHeader = header(req, HEADERS.companyToken);
  if (fromHeader !== undefined) {
    const company = companyByToken(fromHeader);
    return company ? { company, source: "header" } : undefined;
  }
  const fromQuery = query.find((p) => p.name === TOKEN_QUERY_PARAM);
  if (fromQuery !== undefined && fromQuery.value !== "") {
    const company = companyByToken(fromQuery.value);
    return company ? { company, source: "query" } : undefined;
  }
  const authz = header(req, "authorization");
  if (authz !== undefined) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authz);
    if (!m) return undefined;
    const decoded = Buffer.from(m[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return undefined;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    if (user !== BASIC_USER) return undefined;
    const company = companyByToken(password);
    return company ? { company, source: "basic" } : undefined;
  }
  return undefined;
}

/** Snapshot endpoints: the `Company-Api-Token` header only. */
export function resolveSnapshotCompany(req: IncomingMessage): CompanyDef | undefined {
  const token = header(req, HEADERS.companyToken);
  return token === undefined ? undefined : companyByToken(token);
}

/** Record endpoints: `api-auth`, `api-token` and `api-secret` must all belong to one company. */
export function resolveRecordCompany(req: IncomingMessage): CompanyDef | undefined {
  const auth = header(req, HEADERS.apiAuth);
  const token = header(req, HEADERS.apiToken);
  const secret = header(req, HEADERS.apiSecret);
  if (auth === undefined || token === undefined || secret === undefined) return undefined;
  const company = companyByToken(token);
  if (!company) return undefined;
  return sameSecret(company.recordAuth, auth) && sameSecret(company.recordSecret, secret) ? company : undefined;
}
