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
  | "redirected"
  | "timeout"
  | "cancelled"
  | "malformed_body"
  | "schema_mismatch"
  | "unexpected_content"
  | "unexpected_not_modified"
  | "incomplete_export"
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
  /** How many times the request was sent before giving up (set when it was retried). */
  attempts?: number;
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
  /** Requests sent before giving up; set by the client when it retried (so the message can say so). */
  attempts?: number;

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
    if (init.attempts !== undefined) this.attempts = init.attempts;
  }

  /** Plain JSON (for logs, the CLI's `--json` output and task-pane diagnostics). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, message: this.message, action: this.action };
    for (const k of ["status", "datasetKey", "requestTime", "unsupportedOptions", "retryAfterSeconds", "path", "details", "attempts"] as const) {
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
  unsupported_odata_query_options: "Remove every $ option from the address; filter locally after importing the complete table.",
  invalid_cached_artifact: "Report this to the service vendor with the dataset key and the request time.",
  network: "Check the network connection and the environment address, then retry.",
  redirected: "Check the environment address: use the address the environment redirects to as the connection's address.",
  timeout: "Retry; if it keeps timing out, check the network or raise the timeout.",
  cancelled: "Nothing to do: the request was cancelled.",
  malformed_body: "Report this to the service vendor: the response could not be read.",
  schema_mismatch: "Report this to the service vendor: the response does not match the documented shape.",
  unexpected_content: "Retry; if it persists, something between you and the service (a sign-in page, a proxy) answers for it: ask the network administrator or the service vendor. Nothing was written.",
  unexpected_not_modified: "Retry; if it persists, a cache or proxy between you and the service answers for it: ask the network administrator. Nothing was written.",
  incomplete_export: "Retry; if the export keeps arriving short, report it to the service vendor with the dataset key. Nothing was written.",
  route_absent: "This environment does not offer this feature; use another source or ask the administrator.",
  rate_limited: "Wait a moment and retry.",
  server_error: "Retry later; if it persists, report it to the service vendor.",
  invalid_base_url: "Enter the environment address as https://host (http only for localhost), without credentials or query.",
  invalid_custom_field: "Correct the custom field value: optional sign, digits, at most two decimals with a point or a comma.",
  invalid_request: "Correct the request; it was refused before anything was sent.",
  record_credentials_missing: "Add the api-auth and api-secret record credentials to this connection.",
  record_not_found: "Check the project token; the record may have been removed.",
  forbidden: "Ask the service administrator for access.",
  http_error: "Retry; if it persists, report it to the service vendor.",
};

/** Text put in place of a secret. */
export const REDACTED = "[redacted]";

/**
 * Shortest part of a secret (or of one of its encoded forms) that is redacted on its own. A server
 * or a parser may quote a cut-off piece of a token (JSON.parse's error snippet shows ~10 characters),
 * and 8 characters of a token are already a large part of its entropy.
 */
export const MIN_SECRET_FRAGMENT = 8;

const B64_PAD = /=+$/;
const toUrlSafe = (b64: string) => b64.replace(/\+/g, "-").replace(/\//g, "_");

/** Base64 of `bytes`. */
function base64Bytes(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/**
 * The part of the Base64 text of `bytes` that is the same wherever they sit in a longer encoded
 * text: encoded after `offset` other bytes, the first group (when offset > 0) and a partial last
 * group depend on the neighbouring bytes, the groups in between do not.
 */
function base64Core(bytes: Uint8Array, offset: 0 | 1 | 2): string {
  const padded = new Uint8Array(offset + bytes.length);
  padded.set(bytes, offset);
  let b64 = base64Bytes(padded).replace(B64_PAD, "");
  if (offset > 0) b64 = b64.slice(4);
  const partialTail = (offset + bytes.length) % 3 !== 0;
  if (partialTail) b64 = b64.slice(0, Math.max(0, b64.length - ((offset + bytes.length) % 3) - 1));
  return b64;
}

/**
 * Every form in which `secret` can show up in text a service or a platform sends back: as is;
 * percent-encoded (URL component form, `+` for spaces, and every byte as `%XX` in upper and lower
 * case); Base64 and Base64url, with and without padding, of the secret alone and of the Basic
 * credential `company_api_token:secret`; and the position-independent core of its Base64 and
 * Base64url text at each of the three byte alignments (a token inside a longer encoded value).
 */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, "+")]);
  const bytes = new TextEncoder().encode(secret);
  let pct = "";
  for (const b of bytes) pct += `%${b.toString(16).padStart(2, "0").toUpperCase()}`;
  forms.add(pct);
  forms.add(pct.toLowerCase());
  for (const text of [secret, `company_api_token:${secret}`]) {
    const b64 = base64Utf8(text);
    for (const f of [b64, b64.replace(B64_PAD, ""), toUrlSafe(b64), toUrlSafe(b64).replace(B64_PAD, "")]) forms.add(f);
  }
  for (const offset of [0, 1, 2] as const) {
    const core = base64Core(bytes, offset);
    if (core.length >= MIN_SECRET_FRAGMENT) {
      forms.add(core);
      forms.add(toUrlSafe(core));
    }
  }
  forms.delete("");
  return [...forms];
}

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`: the secret in any of the
 * forms of {@link secretForms}, and any run of {@link MIN_SECRET_FRAGMENT} or more characters taken
 * from the secret or from one of those forms. Empty secrets are ignored. Overlapping and adjacent
 * matches become one `[redacted]`.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined | null>): string {
  if (!text) return text;
  const whole = new Set<string>();
  const windows = new Set<string>();
  const forms: string[] = [];
  for (const s of secrets) {
    if (!s) continue;
    for (const f of secretForms(s)) {
      forms.push(f);
      if (f.length < MIN_SECRET_FRAGMENT) whole.add(f);
      else for (let i = 0; i + MIN_SECRET_FRAGMENT <= f.length; i++) windows.add(f.slice(i, i + MIN_SECRET_FRAGMENT));
    }
  }
  if (whole.size === 0 && windows.size === 0) return text;
  const hidden = new Uint8Array(text.length);
  let any = false;
  for (const f of whole) {
    for (let at = text.indexOf(f); at >= 0; at = text.indexOf(f, at + 1)) {
      hidden.fill(1, at, at + f.length);
      any = true;
    }
  }
  // A text clipped with "…" (the add-in's clip marker) may end inside a secret: the piece before the
  // marker can be shorter than the window and escape it (security review, 2026-11-30). A run of 3 or
  // more characters right before "…" that begins a secret's form is hidden too.
  for (let at = text.indexOf("…"); at >= 0; at = text.indexOf("…", at + 1)) {
    for (const f of forms) {
      for (let k = Math.min(MIN_SECRET_FRAGMENT - 1, f.length, at); k >= 3; k--) {
        if (text.startsWith(f.slice(0, k), at - k)) {
          hidden.fill(1, at - k, at);
          any = true;
          break;
        }
      }
    }
  }
  if (windows.size > 0) {
    const starts = new Set<number>();
    for (const w of windows) starts.add(w.charCodeAt(0));
    for (let i = 0; i + MIN_SECRET_FRAGMENT <= text.length; i++) {
      if (starts.has(text.charCodeAt(i)) && windows.has(text.slice(i, i + MIN_SECRET_FRAGMENT))) {
        hidden.fill(1, i, i + MIN_SECRET_FRAGMENT);
        any = true;
      }
    }
  }
  if (!any) return text;
  let out = "";
  for (let i = 0; i < text.length; ) {
    if (hidden[i]) {
      out += REDACTED;
      while (i < text.length && hidden[i]) i++;
    } else {
      const from = i;
      while (i < text.length && !hidden[i]) i++;
      out += text.slice(from, i);
    }
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
  return base64Bytes(new TextEncoder().encode(s));
}

/** `2026-01-15T06:00:41.123Z` → `2026-01-15 06:00 UTC`, the form every date takes in messages; other text as is. */
export function utcMinutes(iso: string | null | undefined): string {
  if (!iso) return "an unknown time";
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}
