/**
 * The one request builder and sender. Every call the client makes goes through {@link buildUrl}
 * and {@link Transport.send}, so the rules hold for all of them:
 * - no `$`-prefixed query option is ever sent (the service rejects them; local filtering is a
 *   separate capability), also not in percent-encoded form;
 * - no credential is ever put into an address;
 * - timeouts, cancellation and bounded retries (idempotent GETs only) apply uniformly;
 * - every failure becomes a {@link PpmError} whose text has been scrubbed of secrets.
 */
import { currentPageOrigin, networkCause, networkFailureText, UNKNOWN_CAUSES } from "./localNetwork";
import { ErrorBodySchema, HEADERS, REPORTING_ERRORS, BASIC_USER, type ReportingErrorCode } from "../contract/contract";
import { type Connection, connectionSecrets, normalizeBaseUrl } from "./connection";
import { PpmError, type PpmErrorCode, type PpmErrorInit, base64Utf8, redactDeep, redactSecrets, utcMinutes } from "./errors";
import type { Validators } from "./validators";
import { jsonTooDeepAt } from "./dataset";

/** Endpoint group of a request; decides credentials and how a bare 404 is read. */
export type EndpointGroup = "reporting" | "snapshot" | "record";

/** Query parameter names that would carry a credential. Compared case-insensitively, `-`/`_` folded. */
const CREDENTIAL_PARAMS = new Set(["company_api_token", "company-api-token", "api_token", "api-token", "api_secret", "api-secret", "api_auth", "api-auth", "token", "access_token", "record_token", "record-token"]);

/**
 * Builds a request URL from a base URL, a path and optional query parameters.
 *
 * @throws PpmError `invalid_request` when any query option starts with `$` (literally or as
 *   `%24`), when a credential parameter is present, or when the path smuggles a query string.
 */
export function buildUrl(baseUrl: string, path: string, query?: Record<string, string> | URLSearchParams): string {
  const base = normalizeBaseUrl(baseUrl);
  if (!path.startsWith("/")) throw new PpmError("invalid_request", "Request paths must start with '/'.");
  const url = `${base}${path}${serializeQuery(query)}`;
  assertSafeUrl(url);
  return url;
}

function serializeQuery(query?: Record<string, string> | URLSearchParams): string {
  if (!query) return "";
  const params = query instanceof URLSearchParams ? query : new URLSearchParams(Object.entries(query));
  const s = params.toString();
  return s ? `?${s}` : "";
}

/**
 * Refuses a URL whose query carries a `$` option or a credential, whatever the encoding.
 * Exported so tests (and any future code path) can check a URL without sending it.
 */
export function assertSafeUrl(url: string): void {
  const q = url.indexOf("?");
  if (q < 0) return;
  const rawQuery = url.slice(q + 1).split("#")[0];
  const dollar: string[] = [];
  for (const pair of rawQuery.split(/[&;]/)) {
    if (!pair) continue;
    const rawName = pair.split("=")[0];
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, " "));
    } catch {
      name = rawName;
    }
    const trimmed = name.trim();
    if (trimmed.startsWith("$") || /^\s*%24/i.test(rawName) || /^%24/i.test(trimmed)) dollar.push(trimmed.startsWith("$") ? trimmed : `$${trimmed.replace(/^%24/i, "")}`);
    else if (CREDENTIAL_PARAMS.has(trimmed.toLowerCase())) {
      throw new PpmError("invalid_request", "Refused to send a credential in the address; credentials go in headers only.", {
        action: "Remove the credential from the address; the add-in sends the token in a header.",
      });
    }
  }
  if (dollar.length > 0) {
    throw new PpmError("invalid_request", `Refused to send query options the service rejects: ${dollar.join(", ")}. The service only serves complete tables.`, {
      unsupportedOptions: dollar,
      action: "Import the complete table and apply the query locally instead.",
    });
  }
}

/** Transport options (a subset of the client's). */
export interface TransportOptions {
  fetch?: typeof fetch;
  /** Per-attempt limit in ms, covering headers and body. Default 120000. */
  timeoutMs?: number;
  /** Extra attempts for idempotent GETs on network errors, 429 and 502/503/504. Default 2. */
  retries?: number;
  /** First backoff delay in ms (doubles each attempt, capped at 8 s). Default 300. */
  retryBaseDelayMs?: number;
  /** Longest `Retry-After` the client will wait for before giving up with `rate_limited`. Default 60 s. */
  maxRetryAfterSeconds?: number;
  now?: () => Date;
  /** Called for every attempt (for diagnostics; never receives headers or secrets). */
  onRequest?: (info: { method: string; url: string; attempt: number }) => void;
  /**
   * Origin of the page the requests come from (decides whether Local Network Access can explain a
   * network failure). Default: the current page's (`location.origin`); none in Node.
   */
  pageOrigin?: string;
}

/** One request as the client describes it. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "OPTIONS";
  group: EndpointGroup;
  /** Send without credentials (probing whether a route exists; CORS preflight checks). */
  noCredentials?: boolean;
  path: string;
  query?: Record<string, string>;
  /** JSON body (POST/PUT). */
  body?: unknown;
  /** `record-token` header (record GET). */
  recordToken?: string;
  /** Conditional validators to send. */
  validators?: Validators;
  accept?: string;
  signal?: AbortSignal;
  /** Dataset key, for error messages. */
  datasetKey?: string;
  /** Whether the body carried `custom_fields` (a record 400 is then most likely about them). */
  hasCustomFields?: boolean;
  /** Extra headers (e.g. `Origin` for the CORS check). Never credentials. */
  extraHeaders?: Record<string, string>;
}

/** What the consumer of a response gets, with the time the request was sent. */
export interface SentRequest {
  response: Response;
  requestTime: string;
  /** Aborted when the call times out or is cancelled; body readers should honour it. */
  signal: AbortSignal;
  /**
   * Stops the call's clock while `work` runs (issue #38): a consumer that writes what it read to
   * Excel as the body arrives pauses reading meanwhile, and that time is Excel's, not the service's.
   * The timeout measures the service alone: every millisecond of the budget still goes to
   * receiving the body, so a stalled or trickling body is refused as before. Cancellation is not
   * paused. Optional so test doubles of a sent request need not provide it.
   */
  hold?: <T>(work: () => Promise<T>) => Promise<T>;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A redirect that `redirect: "manual"` handed back instead of following: a browser's
 * "opaqueredirect" response (status 0), or a 3xx with a Location (Node). 304 is not a redirect.
 */
function isRedirect(response: Response): boolean {
  if (response.type === "opaqueredirect") return true;
  return response.status >= 300 && response.status < 400 && response.status !== 304 && response.headers.has("Location");
}

/**
 * Sends requests for one connection. `send` resolves with the consumer's result for 2xx and 304
 * responses and throws a {@link PpmError} for everything else.
 */
export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryAfterSeconds: number;
  private readonly now: () => Date;
  private readonly secrets: string[];

  constructor(
    private readonly conn: Connection,
    private readonly opts: TransportOptions = {},
  ) {
    this.baseUrl = normalizeBaseUrl(conn.baseUrl);
    // Bound: a detached `fetch` loses its `this` in some browsers.
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.retries = Math.max(0, opts.retries ?? 2);
    this.retryBaseDelayMs = opts.retryBaseDelayMs ?? 300;
    this.maxRetryAfterSeconds = opts.maxRetryAfterSeconds ?? 60;
    this.now = opts.now ?? (() => new Date());
    this.secrets = connectionSecrets(conn);
  }

  /** Scrubs this connection's secrets from text. */
  redact(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** Builds a PpmError with every text field redacted. */
  error(code: PpmErrorCode, message: string, init: PpmErrorInit = {}): PpmError {
    const safe: PpmErrorInit = { ...init };
    if (safe.action) safe.action = this.redact(safe.action);
    // These two can come from a service's error body (`dataset_key`, `unsupported_options`).
    if (safe.datasetKey) safe.datasetKey = this.redact(safe.datasetKey);
    if (safe.unsupportedOptions) safe.unsupportedOptions = safe.unsupportedOptions.map((o) => this.redact(o));
    if (safe.details) safe.details = redactDeep(safe.details, this.secrets);
    if (safe.path) safe.path = this.redact(safe.path);
    return new PpmError(code, this.redact(message), safe);
  }

  /** Human label of the environment (its host), for messages. */
  get environmentLabel(): string {
    try {
      return new URL(this.baseUrl).host;
    } catch {
      return this.baseUrl;
    }
  }

  /** Builds the headers of a request: credentials for the group, conditionals, content type. */
  private headers(spec: RequestSpec): Record<string, string> {
    const h: Record<string, string> = { Accept: spec.accept ?? "application/json", ...(spec.extraHeaders ?? {}) };
    if (spec.noCredentials) {
      /* Deliberately anonymous. */
    } else if (spec.group === "record") {
      if (!this.conn.apiAuth || !this.conn.apiSecret) {
        throw this.error("record_credentials_missing", `The connection "${this.conn.name}" has no record credentials (api-auth and api-secret).`);
      }
      h[HEADERS.apiAuth] = this.conn.apiAuth;
      h[HEADERS.apiToken] = this.conn.token;
      h[HEADERS.apiSecret] = this.conn.apiSecret;
      if (spec.recordToken !== undefined) h[HEADERS.recordToken] = spec.recordToken;
    } else if (spec.group === "reporting" && this.conn.authMode === "basic") {
      h.Authorization = `Basic ${base64Utf8(`${BASIC_USER}:${this.conn.token}`)}`;
    } else {
      h[HEADERS.companyToken] = this.conn.token;
    }
    if (spec.validators?.etag) h["If-None-Match"] = spec.validators.etag;
    if (spec.validators?.lastModified) h["If-Modified-Since"] = spec.validators.lastModified;
    if (spec.body !== undefined) h["Content-Type"] = "application/json";
    return h;
  }

  /**
   * Sends `spec` and hands a 2xx/304 response to `consume` (within the same timeout and
   * cancellation scope). Retries idempotent GETs on network errors, 429 and 502/503/504.
   */
  async send<T>(spec: RequestSpec, consume: (sent: SentRequest) => Promise<T>): Promise<T> {
    const url = buildUrl(this.baseUrl, spec.path, spec.query);
    const headers = this.headers(spec);
    const idempotent = spec.method === "GET" || spec.method === "OPTIONS";
    const maxAttempts = idempotent ? 1 + this.retries : 1;
    let lastError: PpmError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (spec.signal?.aborted) throw this.cancelled(spec);
      const result = await this.attempt(spec, url, headers, attempt, consume);
      if (result.ok) return result.value;
      lastError = result.error;
      if (!result.retryable || attempt === maxAttempts) {
        // The pane says "tried 3 times" rather than leaving the user to retry at once by hand.
        if (attempt > 1) lastError.attempts = attempt;
        throw lastError;
      }
      const waitMs = result.retryAfterMs ?? Math.min(8000, this.retryBaseDelayMs * 2 ** (attempt - 1));
      await this.sleep(waitMs, spec);
    }
    throw lastError ?? this.error("http_error", "The request failed.");
  }

  private cancelled(spec: RequestSpec): PpmError {
    return this.error("cancelled", `The request${spec.datasetKey ? ` for "${spec.datasetKey}"` : ""} was cancelled.`, { datasetKey: spec.datasetKey });
  }

  private sleep(ms: number, spec: RequestSpec): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.cancelled(spec));
      };
      const timer = setTimeout(() => {
        spec.signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      spec.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private async attempt<T>(
    spec: RequestSpec,
    url: string,
    headers: Record<string, string>,
    attempt: number,
    consume: (sent: SentRequest) => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false; error: PpmError; retryable: boolean; retryAfterMs?: number }> {
    const controller = new AbortController();
    let timedOut = false;
    const expire = () => {
      timedOut = true;
      controller.abort();
    };
    let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(expire, this.timeoutMs);
    // The clock runs only while the service is being waited for (see `SentRequest.hold`).
    let budgetMs = this.timeoutMs;
    let runningSince = Date.now();
    let holds = 0;
    const hold = async <T>(work: () => Promise<T>): Promise<T> => {
      if (holds++ === 0 && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
        budgetMs -= Date.now() - runningSince;
      }
      try {
        return await work();
      } finally {
        if (--holds === 0 && !timedOut && !controller.signal.aborted) {
          runningSince = Date.now();
          timer = setTimeout(expire, Math.max(0, budgetMs));
        }
      }
    };
    const onAbort = () => controller.abort();
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    const requestTime = this.now().toISOString();
    // Set once the status and headers are in: a timeout after that is a body that stalled or
    // trickled (slowloris), which is a different failure from a service that never answered.
    let bodyBytes: number | null = null;
    const classifyAbort = (): PpmError | undefined => {
      if (timedOut) {
        const seconds = this.timeoutMs < 10_000 ? Math.round(this.timeoutMs / 100) / 10 : Math.round(this.timeoutMs / 1000);
        if (bodyBytes !== null) {
          return this.error(
            "timeout",
            `The service answered ${spec.method} ${spec.path} but the body stalled: ${formatBytes(bodyBytes)} received in ${seconds} s, and the rest did not arrive.`,
            {
              datasetKey: spec.datasetKey,
              requestTime,
              details: { phase: "body", bytesReceived: bodyBytes, timeoutSeconds: seconds },
              action: "Retry; if the body keeps stalling, a slow link or a proxy is holding it back: check the network path, or raise the timeout for very large exports.",
            },
          );
        }
        return this.error("timeout", `The service did not answer within ${seconds} s (${spec.method} ${spec.path}).`, {
          datasetKey: spec.datasetKey,
          requestTime,
          details: { phase: "headers", timeoutSeconds: seconds },
        });
      }
      if (spec.signal?.aborted) return this.cancelled(spec);
      return undefined;
    };
    try {
      this.opts.onRequest?.({ method: spec.method, url, attempt });
      let response: Response;
      try {
        // `cache` is missing from Node's RequestInit typings but honoured by browsers (and accepted by Node).
        const init: RequestInit & { cache?: string } = {
          method: spec.method,
          headers,
          body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
          signal: controller.signal,
          // A 304 only reaches script when the request bypasses the HTTP cache.
          cache: "no-store",
          credentials: "omit",
          // A redirect would carry the Company-Api-Token header to wherever it points (only
          // Authorization is stripped cross-origin), so redirects are never followed. "manual"
          // rather than "error": the redirect itself then comes back (Node: the 3xx answer; a
          // browser: an "opaqueredirect" response, when the redirect answer passes CORS) and is
          // named as a redirect, instead of a "Failed to fetch" that looks like a network fault.
          redirect: "manual",
        };
        response = await this.fetchImpl(url, init);
      } catch (e) {
        const aborted = classifyAbort();
        // A timeout already cost the full budget; retrying would multiply the wait, so it is reported.
        if (aborted) return { ok: false, error: aborted, retryable: false };
        const detail = errorDetail(e);
        if (/redirect/i.test(detail)) return { ok: false, retryable: false, error: this.redirected(spec, requestTime, null) };
        // Said as exactly as the platform tells: Node names the system error, a browser does not.
        const cause = networkCause(e);
        const pageOrigin = "pageOrigin" in this.opts ? this.opts.pageOrigin : currentPageOrigin();
        const text = networkFailureText(cause, this.environmentLabel, url, pageOrigin);
        return {
          ok: false,
          // A certificate or a non-TLS answer is the same a second later; a refused connection may
          // be a service restarting (the launcher restarts it within a second), so it is retried.
          retryable: cause !== "certificate" && cause !== "not_tls",
          error: this.error("network", text.message, {
            datasetKey: spec.datasetKey,
            requestTime,
            action: text.action,
            details: { cause, detail, ...(cause === "unknown" && !text.lna ? { possibleCauses: UNKNOWN_CAUSES } : {}), ...(text.lna ? { localNetworkAccess: true } : {}) },
          }),
        };
      }
      if (isRedirect(response)) {
        // Not followed, not retried: the same address would redirect again.
        void response.body?.cancel().catch(() => undefined);
        return { ok: false, retryable: false, error: this.redirected(spec, requestTime, response.headers.get("Location")) };
      }
      bodyBytes = 0;
      if (response.ok && response.body && typeof TransformStream === "function" && typeof response.body.pipeThrough === "function") {
        // Counts what arrives, for the stalled-body message; the bytes pass through unchanged.
        const counter = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            bodyBytes = (bodyBytes ?? 0) + chunk.byteLength;
            controller.enqueue(chunk);
          },
        });
        response = new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
      }
      if (response.ok || response.status === 304) {
        try {
          return { ok: true, value: await consume({ response, requestTime, signal: controller.signal, hold }) };
        } catch (e) {
          const aborted = classifyAbort();
          if (aborted) return { ok: false, error: aborted, retryable: false };
          if (e instanceof PpmError) return { ok: false, error: e, retryable: false };
          // The stack or a string limit ran out on what arrived: a body that cannot be read, not a
          // network fault (retrying would read the same body).
          if (e instanceof RangeError) {
            return { ok: false, retryable: false, error: this.error("malformed_body", `The response of ${spec.method} ${spec.path} could not be read (${errorDetail(e)}).`, { datasetKey: spec.datasetKey, requestTime }) };
          }
          const detail = errorDetail(e);
          return { ok: false, retryable: false, error: this.error("network", `The response from ${this.environmentLabel} was interrupted (${detail}).`, { datasetKey: spec.datasetKey, requestTime }) };
        }
      }
      let error: PpmError;
      try {
        error = await this.httpError(spec, response, requestTime);
      } catch (e) {
        const aborted = classifyAbort();
        if (aborted) return { ok: false, error: aborted, retryable: false };
        throw e;
      }
      const retryable = RETRY_STATUSES.has(response.status) && error.code !== "rate_limited" ? true : error.code === "rate_limited";
      let retryAfterMs: number | undefined;
      if (error.retryAfterSeconds !== undefined) {
        if (error.retryAfterSeconds > this.maxRetryAfterSeconds) return { ok: false, error, retryable: false };
        retryAfterMs = error.retryAfterSeconds * 1000;
      }
      return { ok: false, error, retryable, retryAfterMs };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      // A hold still running (a consumer that failed mid-write) must not re-arm the clock.
      holds = Number.POSITIVE_INFINITY;
      spec.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Turns a non-2xx, non-304 response into the matching PpmError. */
  /**
   * A redirect, named as one: where it points when the answer says so (only the origin, and only
   * a URL; a browser hides the target of a cross-origin redirect), and what to do. No retry and no
   * network or browser-policy advice: nothing was blocked, the service sent the request elsewhere.
   */
  private redirected(spec: RequestSpec, requestTime: string, location: string | null): PpmError {
    let where = "";
    if (location) {
      try {
        where = ` to ${new URL(location, this.baseUrl).origin}`;
      } catch {
        where = "";
      }
    }
    return this.error(
      "redirected",
      `${this.environmentLabel} answered ${spec.method} ${spec.path} with a redirect${where}, which the add-in does not follow: it would carry the company token to another address.`,
      {
        datasetKey: spec.datasetKey,
        requestTime,
        action: "Check the environment address: use the address the environment redirects to (often https:// instead of http://, or another host name) as the connection's address.",
      },
    );
  }

  private async httpError(spec: RequestSpec, response: Response, requestTime: string): Promise<PpmError> {
    const status = response.status;
    const text = await readLimited(response, 64 * 1024);
    let body: unknown;
    try {
      // An error body nested too deep is treated as no JSON (its details are redacted recursively).
      body = text && jsonTooDeepAt(text) < 0 ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    // Redacted BEFORE anything is clipped: a cut inside a token echoed back would leave a piece of it
    // shorter than the redaction's window (security review, 2026-11-30: up to 7 characters survived).
    body = redactDeep(body, this.secrets);
    const parsed = ErrorBodySchema.safeParse(body);
    const errBody = parsed.success ? parsed.data : undefined;
    const isJsonObject = !!body && typeof body === "object" && !Array.isArray(body);
    // Service text is quoted only as far as needed to explain the failure (see clipService).
    const rawMessage = errBody?.message ?? (isJsonObject && typeof (body as Record<string, unknown>).message === "string" ? String((body as Record<string, unknown>).message) : undefined);
    const serverMessage = rawMessage === undefined ? undefined : clipText(rawMessage, SERVICE_TEXT_LIMIT);
    const datasetKey = errBody?.dataset_key !== undefined ? clipText(errBody.dataset_key, 100) : spec.datasetKey;
    const env = this.environmentLabel;
    const company = this.conn.name;
    const where = `${spec.method} ${spec.path}`;
    const base: PpmErrorInit = { status, datasetKey, requestTime, details: errBody ? clipService({ ...errBody }) : isJsonObject ? { body: clipService(body) } : undefined };
    const known = errBody && errBody.error in REPORTING_ERRORS ? (errBody.error as ReportingErrorCode) : undefined;
    const retryAfterSeconds = parseRetryAfter(response.headers.get("Retry-After"), this.now());

    if (status === 401 || known === "unauthorized") {
      return this.error("unauthorized", `The service refused the credentials for ${company} on ${env} (401).`, {
        ...base,
        action: `Update or clear the stored token for ${company} on ${env}.`,
      });
    }
    if (known === "bi_reporting_disabled") {
      return this.error("bi_reporting_disabled", `Reporting is not enabled for ${company} on ${env}.`, {
        ...base,
        action: `Ask the service administrator to enable reporting (BI) for ${company}, or use the snapshot sources.`,
      });
    }
    if (known === "unknown_dataset") {
      return this.error("unknown_dataset", `The dataset "${datasetKey ?? "?"}" is not offered by ${env}.`, base);
    }
    if (known === "not_generated") {
      return this.error("not_generated", `No export yet: ${env} has not generated the dataset "${datasetKey ?? "?"}".`, base);
    }
    if (known === "query_string_token_rejected") {
      return this.error("query_string_token_rejected", "The service rejected a token sent in the address.", base);
    }
    if (known === "unsupported_odata_query_options") {
      const opts = (errBody?.unsupported_options ?? []).slice(0, 20).map((o) => clipText(o, 60));
      return this.error("unsupported_odata_query_options", `The service rejected the query options ${opts.join(", ") || "(unnamed)"}.`, {
        ...base,
        unsupportedOptions: opts,
      });
    }
    if (known === "invalid_cached_artifact") {
      return this.error("invalid_cached_artifact", `The cached export of "${datasetKey ?? "?"}" on ${env} is unusable (requested at ${utcMinutes(requestTime)}).`, {
        ...base,
        action: `Report this to the service vendor, quoting dataset key "${datasetKey ?? "?"}" and request time ${requestTime}.`,
      });
    }
    if (status === 403) {
      return this.error("forbidden", `The service refused access to ${where} for ${company} (403)${serverMessage ? `: ${serverMessage}` : ""}.`, base);
    }
    if (status === 404) {
      if (spec.group === "record" && isJsonObject) {
        return this.error("record_not_found", `The ${spec.path.split("/").pop()} was not found${serverMessage ? `: ${serverMessage}` : ""}.`, base);
      }
      return this.error("route_absent", `This environment (${env}) does not offer ${spec.path} (404 without a service error body).`, {
        ...base,
        action: "This feature is not available in this environment; hide it or ask the administrator.",
      });
    }
    if (status === 400 && spec.group === "record") {
      const aboutCustom = spec.hasCustomFields && /custom|numeric|decimal/i.test(text);
      return this.error(aboutCustom ? "invalid_custom_field" : "invalid_request", `The service rejected the ${spec.method === "POST" ? "new" : "changed"} record (400)${serverMessage ? `: ${serverMessage}` : ""}.`, base);
    }
    if (status === 429) {
      return this.error("rate_limited", `The service is rate limiting requests (429)${retryAfterSeconds !== undefined ? `; retry after ${retryAfterSeconds} s` : ""}.`, {
        ...base,
        retryAfterSeconds,
      });
    }
    if (status >= 500) {
      // "The service had a problem" is the pane's title; the message says what came back, once.
      const phrase = ({ 500: "internal error", 502: "bad gateway", 503: "service unavailable", 504: "gateway timeout" } as Record<number, string>)[status];
      return this.error("server_error", `The service answered HTTP ${status}${phrase ? ` (${phrase})` : ""} to ${where}.`, { ...base, retryAfterSeconds });
    }
    return this.error("http_error", `The service answered HTTP ${status} on ${where}${serverMessage ? `: ${serverMessage}` : ""}.`, base);
  }
}

/** Most characters of one piece of service text that an error quotes. */
const SERVICE_TEXT_LIMIT = 200;

function clipText(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}…`;
}

/**
 * A bounded copy of a JSON value from an error body, for `details`: strings clipped, at most 20
 * entries per list or object, 3 levels deep. An error body is the service's (or a proxy's) text and
 * may be large or hostile; details exist to identify the failure, not to archive the body.
 */
function clipService<T>(value: T, depth = 0): T {
  if (typeof value === "string") return clipText(value, SERVICE_TEXT_LIMIT) as unknown as T;
  if (value === null || typeof value !== "object") return value;
  if (depth >= 3) return (Array.isArray(value) ? "[…]" : "{…}") as unknown as T;
  if (Array.isArray(value)) return (value as unknown[]).slice(0, 20).map((v) => clipService(v, depth + 1)) as unknown as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 20)) out[clipText(k, 60)] = clipService(v, depth + 1);
  return out as T;
}

/** A byte count for people: `512 bytes`, `12.3 KB`, `4.5 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? "" : "s"}`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Message of an error and of its cause. Duck-typed: platform errors may come from another realm. */
function errorDetail(e: unknown): string {
  const msg = (x: unknown) => (x && typeof x === "object" && typeof (x as { message?: unknown }).message === "string" ? (x as { message: string }).message : undefined);
  const own = msg(e) ?? String(e);
  const cause = msg(e && typeof e === "object" ? (e as { cause?: unknown }).cause : undefined);
  return cause ? `${own}: ${cause}` : own;
}

/** Reads at most `limit` characters of a body (error bodies are small; a hostile one must not be). */
async function readLimited(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let out = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
      if (out.length >= limit) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch {
    /* A broken error body still leaves the status to report. */
  }
  return out.slice(0, limit);
}

/** Parses `Retry-After` (seconds or an HTTP date) into whole seconds. */
export function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, Math.ceil((t - now.getTime()) / 1000));
}
