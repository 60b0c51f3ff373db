/**
 * The one error type of the service client. Every failure a caller can see (HTTP, network,
 * parsing, validation) is a {@link PpmError} with a machine-readable `code`, a message written for
 * the person reading it and the action they should take.
 *
 * Secrets never reach an error: every message, action and detail is passed through
 * {@link redactSecrets} by the code that builds it.
 */
import type { ReportingErrorCode } from "../contract/contract";

/** Codes of the failures that are not documented reporting errors. */
export type ClientErrorCode =
  | "network"
  | "timeout"
  | "cancelled"
  | "malformed_body"
  | "schema_mismatch"
  | "route_absent"
  | "rate_limited"
  | "server_error"
  | "invalid_base_url"
  | "invalid_custom_field"
  | "invalid_request"
  | "record_credentials_missing"
  | "record_not_found"
  | "forbidden"
  | "http_error";

/** Every code a {@link PpmError} can carry: the spec's reporting error codes plus client codes. */
export type PpmErrorCode = ReportingErrorCode | ClientErrorCode;

/** Fields of a {@link PpmError} besides its code and message. */
export interface PpmErrorInit {
  status?: number;
  /** What the user should do next. Defaults to a generic action for the code. */
  action?: string;
  datasetKey?: string;
  /** ISO time the failing request was sent (reported with 422 `invalid_cached_artifact`). */
  requestTime?: string;
  unsupportedOptions?: string[];
  retryAfterSeconds?: number;
  /** Offending location inside a malformed body, e.g. `rows[3].amount` or `line 12`. */
  path?: string;
  details?: Record<string, unknown>;
}

/**
 * The client's error. `code` says what happened; `action` says what to do about it.
 *
 * @example
 * ```ts
 * try { await client.fetchDataset("financials", { format: "csv" }); }
 * catch (e) { if (e instanceof PpmError && e.code === "not_generated") showRetryLater(e.action); }
 * ```
 */
export class PpmError extends Error {
  readonly code: PpmErrorCode;
  readonly status?: number;
  readonly action: string;
  readonly datasetKey?: string;
  readonly requestTime?: string;
  readonly unsupportedOptions?: string[];
  readonly retryAfterSeconds?: number;
  readonly path?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: PpmErrorCode, message: string, init: PpmErrorInit = {}) {
    super(message);
    this.name = "PpmError";
    this.code = code;
    this.action = init.action ?? DEFAULT_ACTIONS[code];
    if (init.status !== undefined) this.status = init.status;
    if (init.datasetKey !== undefined) this.datasetKey = init.datasetKey;
    if (init.requestTime !== undefined) this.requestTime = init.requestTime;
    if (init.unsupportedOptions !== undefined) this.unsupportedOptions = init.unsupportedOptions;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
    if (init.path !== undefined) this.path = init.path;
    if (init.details !== undefined) this.details = init.details;
  }

  /** Plain JSON (for logs, the CLI's `--json` output and task-pane diagnostics). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, message: this.message, action: this.action };
    for (const k of ["status", "datasetKey", "requestTime", "unsupportedOptions", "retryAfterSeconds", "path", "details"] as const) {
      if (this[k] !== undefined) out[k] = this[k];
    }
    return out;
  }
}

/** True for a {@link PpmError}, optionally of one of the given codes. */
export function isPpmError(e: unknown, ...codes: PpmErrorCode[]): e is PpmError {
  return e instanceof PpmError && (codes.length === 0 || codes.includes(e.code));
}

const DEFAULT_ACTIONS: Record<PpmErrorCode, string> = {
  unauthorized: "Update or clear the stored company API token for this company and environment.",
  bi_reporting_disabled: "Ask the service administrator to enable reporting (BI) for this company.",
  unknown_dataset: "Pick a dataset listed in the manifest; the key may have been renamed or removed.",
  not_generated: "Retry after the service has successfully generated this dataset's export.",
  query_string_token_rejected: "Send the token in the Company-Api-Token header or with Basic authentication, never in the address.",
  unsupported_odata_query_options: "Remove every `$` option from the address; filter locally after importing the complete table.",
  invalid_cached_artifact: "Report this to the service vendor with the dataset key and the request time.",
  network: "Check the network connection and the environment address, then retry.",
  timeout: "Retry; if it keeps timing out, check the network or raise the timeout.",
  cancelled: "Nothing to do: the request was cancelled.",
  malformed_body: "Report this to the service vendor: the response could not be read.",
  schema_mismatch: "Report this to the service vendor: the response does not match the documented shape.",
  route_absent: "This environment does not offer this feature; use another source or ask the administrator.",
  rate_limited: "Wait a moment and retry.",
  server_error: "Retry later; if it persists, report it to the service vendor.",
  invalid_base_url: "Enter the environment address as https://host (http only for localhost), without credentials or query.",
  invalid_custom_field: "Correct the custom field value: optional sign, digits, at most two decimals with `.` or `,`.",
  invalid_request: "Correct the request; it was refused before anything was sent.",
  record_credentials_missing: "Add the api-auth and api-secret record credentials to this connection.",
  record_not_found: "Check the project token; the record may have been removed.",
  forbidden: "Ask the service administrator for access.",
  http_error: "Retry; if it persists, report it to the service vendor.",
};

/** Text put in place of a secret. */
export const REDACTED = "[redacted]";

/**
 * Replaces every occurrence of each secret in `text` (also its URL-encoded and Base64 forms, which
 * is how a token can leak through an address or a Basic header) with `[redacted]`.
 * Empty secrets are ignored.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined | null>): string {
  let out = text;
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(encodeURIComponent(s).replace(/%20/g, "+"));
    forms.add(base64Utf8(`company_api_token:${s}`));
  }
  // Longest first, so a secret containing another is replaced whole.
  for (const f of [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length)) {
    out = out.split(f).join(REDACTED);
  }
  return out;
}

/** Deep-redacts strings inside a JSON-like value (for error details built from server bodies). */
export function redactDeep<T>(value: T, secrets: ReadonlyArray<string | undefined | null>): T {
  if (typeof value === "string") return redactSecrets(value, secrets) as unknown as T;
  if (Array.isArray(value)) return (value as unknown[]).map((v) => redactDeep(v, secrets)) as unknown as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redactSecrets(k, secrets)] = redactDeep(v, secrets);
    return out as T;
  }
  return value;
}

/** Base64 of the UTF-8 bytes of `s`; works in browsers and Node (btoa only takes Latin-1). */
export function base64Utf8(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}
