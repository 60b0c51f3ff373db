/**
 * Maps anything the task pane can catch (service client, local query, bindings, workbook writer,
 * plain exceptions) to what the user sees: a title, what happened, what to do, and which buttons
 * to offer. Pure, so every documented code is tested in Node.
 */
import { PpmError, redactSecrets } from "../service/errors";
import { networkFailureText, UNKNOWN_CAUSES } from "../service/localNetwork";
import type { PpmErrorCode } from "../service/errors";

/** Buttons an error panel can offer. */
export type ErrorActionKind = "updateToken" | "forgetToken" | "copyDetails" | "retry" | "editConnection";

/** What an error panel shows. */
export interface ErrorView {
  /** Machine code (`unauthorized`, `not_generated`, `syntax`, ...), also the panel's `data-code`. */
  code: string;
  title: string;
  /** What happened (the service's or engine's own sentence, secrets removed). */
  message: string;
  /** What to do next. */
  action: string;
  actions: ErrorActionKind[];
  /** Text for "Copy details" (422): code, dataset key, request time; never a secret. */
  details?: string;
  /** The connection the failure belongs to (401 buttons act on exactly this one). */
  connectionId?: string;
  /**
   * More about the failure, behind a "Details" toggle (issue #25): what the platform said and, when
   * it does not say why (a browser's "Failed to fetch"), the possible causes. Never a secret.
   */
  more?: string[];
}

/** What the caller knows about where the failure happened. */
export interface ErrorContext {
  connectionId?: string;
  connectionName?: string;
  baseUrl?: string;
  datasetKey?: string;
  /** Secrets to strip from any text shown (the connection's token, record credentials). */
  secrets?: readonly string[];
  /** When the request was sent, if the error does not say (ISO). */
  requestTime?: string;
  /**
   * The failure ended a refresh of this many tables (issue #37): the action then says what the
   * refresh wrote (the info line marked, a highlight removed) instead of "nothing was changed".
   */
  refreshedTables?: number;
}

interface CodeText {
  title: string;
  action?: string;
  actions?: ErrorActionKind[];
}

/**
 * Title, action and buttons per code. Reporting codes come from the spec's error table; client codes
 * from `src/service/errors.ts`. An entry without `action` uses the error's own action.
 */
export const ERROR_TEXT: Record<PpmErrorCode, CodeText> = {
  unauthorized: {
    title: "The company token was not accepted",
    action: "The stored token for this connection is missing, wrong or expired. Update it, or forget it to stop sending it.",
    actions: ["updateToken", "forgetToken"],
  },
  bi_reporting_disabled: {
    title: "Reporting is not enabled for this company",
    action: "Datasets are available only when reporting (BI) is enabled for the company. Ask your service administrator to enable it; snapshots and records may still work.",
  },
  unknown_dataset: {
    title: "This dataset is not offered any more",
    action: "Reload the dataset list and pick a dataset it shows; the key may have been renamed or removed.",
    actions: ["retry"],
  },
  not_generated: {
    title: "No export yet",
    action: "The service has not generated this dataset yet. Retry after the next generation; the add-in never starts one.",
    actions: ["retry"],
  },
  query_string_token_rejected: {
    title: "The token was sent in the address",
    action: "The add-in never does this; if you pasted an address containing a token, remove it and use the connection's token instead.",
  },
  unsupported_odata_query_options: {
    title: "The service refused $ options",
    action: "The service accepts no $ options; they are applied locally after importing the complete table. Paste them into the local query field instead.",
  },
  invalid_cached_artifact: {
    title: "The service's stored export is unusable",
    action: "Report this to the service vendor with the dataset key and the request time (use Copy details).",
    actions: ["copyDetails", "retry"],
  },
  // The action is the error's own: it depends on what the platform said (refused, name not found, …).
  network: { title: "The service could not be reached", actions: ["retry", "editConnection"] },
  redirected: {
    title: "The environment address redirects elsewhere",
    action: "The service sent the request to another address, and the add-in does not follow redirects (the token would go with it). Edit the connection and use the address it redirects to (often https:// instead of http://, or another host name).",
    actions: ["editConnection"],
  },
  timeout: { title: "The service took too long to answer", actions: ["retry"] },
  cancelled: { title: "Cancelled", action: "Nothing was changed in the workbook." },
  malformed_body: { title: "The service's answer could not be read", actions: ["retry"] },
  schema_mismatch: { title: "The data does not match what was expected" },
  unexpected_content: {
    title: "The service answered with something else",
    action: "The answer was not this dataset's export (for example a sign-in page or a proxy's page), so nothing was written. Open the environment address in a browser to see what answers, then retry.",
    actions: ["retry"],
  },
  unexpected_not_modified: {
    title: "\"Not modified\" to a request that asked for the data",
    action: "The add-in asked for the complete data without validators, and something answered 304 Not Modified, which is only valid for a conditional request. Nothing was written. Retry; if it persists, a cache or proxy between you and the service is answering for it.",
    actions: ["retry"],
  },
  incomplete_export: {
    title: "The export arrived incomplete",
    action: "Fewer (or more) rows arrived than the service's manifest lists for this export, so nothing was written and the previous data was kept. Retry; if it persists, report it to the service vendor.",
    actions: ["retry"],
  },
  route_absent: {
    title: "Not offered by this environment",
    action: "This environment does not provide this feature, so it is hidden. Use another source or ask the administrator.",
  },
  rate_limited: { title: "Too many requests", actions: ["retry"] },
  server_error: { title: "The service had a problem", actions: ["retry"] },
  invalid_base_url: { title: "The environment address is not usable", actions: ["editConnection"] },
  invalid_custom_field: { title: "A custom field value is not valid" },
  invalid_request: { title: "The request was not sent" },
  record_credentials_missing: { title: "Record credentials are missing", actions: ["editConnection"] },
  record_not_found: { title: "Record not found" },
  forbidden: { title: "Access denied" },
  http_error: { title: "The service answered with an error", actions: ["retry"] },
};

/** Titles for the local query engine's codes (`src/query/errors.ts`). */
const QUERY_TITLES: Record<string, string> = {
  syntax: "The query has a syntax error",
  invalid_literal: "A value in the query is not valid",
  unknown_column: "The query names a column that does not exist",
  ambiguous_column: "A column name in the query is ambiguous",
  unknown_function: "The query uses an unknown function",
  arity: "A function in the query has the wrong number of arguments",
  type_mismatch: "The query compares values of different types",
  unsupported_option: "The query uses an option that cannot be applied locally",
  unknown_option: "The query uses an unknown option",
  not_a_query_option: "The text is not a query option",
  duplicate_option: "A query option is given twice",
  invalid_value: "A query option has an invalid value",
  invalid_query: "The stored query is not valid",
  invalid_url: "The pasted address is not valid",
  division_by_zero: "The query divides by zero",
  overflow: "A result is too large for a number in Excel",
};

/** Titles for refresh / workbook failure codes (bindings, table validation, writer). */
const WORKBOOK_TITLES: Record<string, { title: string; action: string }> = {
  binding_invalid: { title: "The table's stored link is damaged", action: "Re-import the table; the data in the sheet was left as it is." },
  binding_version: { title: "The table was linked by another add-in version", action: "Re-import the table; the data in the sheet was left as it is." },
  binding_secret: { title: "A credential almost got into the workbook", action: "Nothing was saved. Report this to the add-in's maintainers." },
  query_failed: { title: "The stored local query no longer applies", action: "Re-import the table with a query that matches the current columns." },
  row_shape: { title: "The new data is malformed", action: "Nothing was written. Retry later or report it to the service vendor." },
  bad_value: { title: "The new data has invalid values", action: "Nothing was written. Retry later or report it to the service vendor." },
  cell_too_long: {
    title: "A value is longer than an Excel cell holds",
    action: "Nothing was written. An Excel cell holds at most 32,767 characters, so trying again cannot help: leave that column out with a local $select, or ask the service vendor why the value is so long.",
  },
  too_many_rows: { title: "Too many rows for one sheet", action: "Add a local filter or top to import fewer rows." },
  too_many_columns: { title: "Too many columns for one sheet", action: "Choose fewer columns to keep." },
  duplicate_column: { title: "The data has duplicate column names", action: "Report this to the service vendor." },
  table_missing: { title: "The table is not in the workbook any more", action: "Re-import it; its link has been kept so nothing else is lost." },
  no_table_at_selection: { title: "No linked table under the selection", action: "Select a cell inside a table imported by this add-in, or use Refresh all." },
  occupied: { title: "The destination is not empty", action: "Select an empty cell with enough room, or import into a new sheet. Nothing was written." },
  name_taken: { title: "That name is already used in this workbook", action: "Choose another table name (a defined name in Formulas › Name Manager, or another table, has it). Nothing was written." },
  invalid_table: { title: "The table cannot be written", action: "Nothing was written. Choose another destination, or report the problem if it persists." },
  table_changed: { title: "The table's columns were changed in the sheet", action: "Undo the change to the column headers, or re-import the data." },
  payload_too_large: { title: "Excel refused a block of data as too large", action: "Retry; if it persists, import fewer columns or rows with a local query." },
  table_busy: {
    title: "Another refresh holds this table",
    action: "Wait for it to finish, then refresh again. If nothing is refreshing it (a window was closed while it refreshed), use Clear lock.",
  },
  lock_lost: { title: "Another refresh took over this table", action: "Nothing more was written by this refresh; the other one owns the table now. Refresh again once it has finished." },
  changed_during_refresh: {
    title: "A colleague changed the table while it refreshed",
    action: "The refresh was undone: the previous data is back, with the colleague's change where Excel kept it. Refresh again.",
  },
  settings_full: { title: "The workbook's PPM settings are full", action: "Nothing was changed. Remove tables you no longer refresh, then try again." },
  no_changes: { title: "The changes cannot be shown", action: "Nothing was changed in the sheet. The next refresh that brings new data records its changes again." },
  write_failed: { title: "Writing to the sheet failed", action: "Retry. The previous data was restored where possible; the info line above the table says what happened." },
  no_connection: {
    title: "No connection on this device for this table",
    action: "Add a connection to the table's environment and company with your own token (Connect tab), test it, then refresh again.",
  },
};

function isQueryError(e: unknown): e is { name: string; code: string; message: string; position?: number } {
  return !!e && typeof e === "object" && (e as { name?: unknown }).name === "QueryError" && typeof (e as { code?: unknown }).code === "string";
}

/** Builds the text "Copy details" puts on the clipboard. Contains no secret by construction. */
export function errorDetails(fields: Record<string, string | number | undefined | null>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
}

/** `message` without a leading `title: ` (any case); the message itself when it does not open so. */
function withoutTitle(message: string, title: string): string {
  const prefix = `${title}: `;
  if (!message.toLowerCase().startsWith(prefix.toLowerCase())) return message;
  return message.slice(prefix.length);
}

/**
 * The on-screen form of any thrown value.
 *
 * @example
 * ```ts
 * catch (e) { showError(panel, describeError(e, { connectionId: conn.id, datasetKey: "financials", secrets })); }
 * ```
 */
export function describeError(err: unknown, ctx: ErrorContext = {}): ErrorView {
  const secrets = ctx.secrets ?? [];
  const clean = (s: string) => redactSecrets(s, secrets);
  const base = { ...(ctx.connectionId ? { connectionId: ctx.connectionId } : {}) };

  if (err instanceof PpmError || (isNamed(err, "PpmError") && typeof (err as PpmError).code === "string")) {
    const e = err as PpmError;
    const text = ERROR_TEXT[e.code] ?? { title: "Something went wrong" };
    const view: ErrorView = {
      ...base,
      code: e.code,
      title: text.title,
      // A message that opens with the title (the CLI's "No export yet: …", which has no title line)
      // is shown without it under the title, so the pane does not say it twice.
      message: clean(withoutTitle(e.message, text.title) || text.title),
      action: clean(text.action ?? e.action ?? "Retry; if it persists, report it."),
      actions: [...(text.actions ?? [])],
    };
    if (e.code === "unsupported_odata_query_options" && e.unsupportedOptions?.length) {
      view.message = clean(`${e.message} (refused: ${e.unsupportedOptions.join(", ")})`);
    }
    if (e.code === "invalid_cached_artifact") {
      view.details = clean(
        errorDetails({
          error: e.code,
          status: e.status ?? 422,
          dataset_key: e.datasetKey ?? ctx.datasetKey,
          request_time: e.requestTime ?? ctx.requestTime,
          environment: ctx.baseUrl,
          message: e.message,
        }),
      );
    }
    if (e.code === "unauthorized" && !ctx.connectionId) view.actions = [];
    if (e.code === "network") {
      const more = networkMore(e);
      if (more.length) view.more = more.map(clean);
      // A failure read back from a binding has lost its action: the one for a failure the browser did not explain.
      if (e.details?.stored === true && /does not say why/.test(e.message)) view.action = networkFailureText("unknown", "", "", undefined).action;
    }
    const transient = transientAction(e);
    if (transient) view.action = clean(transient);
    return view;
  }

  if (isQueryError(err)) {
    return {
      ...base,
      code: err.code,
      title: QUERY_TITLES[err.code] ?? "The query is not valid",
      message: clean(err.message),
      action: "Correct the query; nothing was imported.",
      actions: [],
    };
  }

  const code = codeOf(err);
  if (code && WORKBOOK_TITLES[code]) {
    const t = WORKBOOK_TITLES[code];
    // A stored query that no longer applies, a value no cell can hold, or changes that cannot be shown fail the same way every time.
    const final = code === "query_failed" || code === "cell_too_long" || code === "no_changes";
    return { ...base, code, title: t.title, message: clean(messageOf(err) || t.title), action: t.action, actions: final ? [] : ["retry"] };
  }
  if (code === "cancelled" || isNamed(err, "AbortError")) {
    return { ...base, code: "cancelled", title: "Cancelled", message: "The operation was cancelled.", action: "Nothing was changed in the workbook.", actions: [] };
  }
  if (isNamed(err, "ConnectionInputError")) {
    return { ...base, code: "invalid_input", title: "Check the connection details", message: clean(messageOf(err)), action: "Correct the highlighted field.", actions: [] };
  }
  if (isOfficeError(err)) {
    const e = err as { code: string; message: string };
    return {
      ...base,
      code: `excel_${e.code}`,
      title: "Excel could not complete the change",
      message: clean(e.message || e.code),
      action: "Nothing half-written was kept. Check that the sheet is not protected or being edited, then retry.",
      actions: ["retry"],
    };
  }
  return {
    ...base,
    code: code ?? "unexpected",
    title: "Something went wrong",
    message: clean(messageOf(err) || "Unknown error."),
    action: "Retry; if it keeps happening, report it with what you were doing.",
    actions: ["retry"],
  };
}

/**
 * 5xx, 429, timeouts and unreachable services: say what the add-in already did (the client retries
 * idempotent requests on 429/502/503/504 and network errors, but not after a timeout, which has
 * already cost the whole wait) and what the user can do, instead of a bare "retry".
 */
function transientAction(e: PpmError): string | null {
  const tried = e.attempts && e.attempts > 1 ? `The add-in already sent the request ${e.attempts} times, waiting longer each time. ` : "";
  const stored = e.details?.stored === true;
  const status = e.status ? ` (${e.status})` : "";
  switch (e.code) {
    case "server_error":
      return `${tried || (stored ? "" : "The request was not repeated automatically. ")}The service reported a temporary problem${status}. Wait a minute, then choose Retry; if it keeps failing, the service may be down or under maintenance: ask your service administrator. Nothing in the workbook was changed.`;
    case "rate_limited":
      return `${tried}The service asked the add-in to slow down${status}${e.retryAfterSeconds !== undefined ? ` for ${e.retryAfterSeconds} s` : ""}. Wait that long, then choose Retry; refreshing fewer tables at once helps. Nothing in the workbook was changed.`;
    case "timeout":
      if (e.details?.phase === "body") return null; // the stalled-body action is more specific
      return `${tried || "The request was not repeated automatically, because it had already waited the full time. "}Choose Retry; if it keeps timing out, check the network, or import fewer or smaller tables. Nothing in the workbook was changed.`;
    case "http_error":
      return e.status !== undefined && e.status >= 500
        ? `${tried}The service answered with an error${status}. Wait a minute, then choose Retry; if it keeps failing, report it to the service vendor. Nothing in the workbook was changed.`
        : null;
    case "network":
      return tried ? `${tried}${e.action}` : null;
    default:
      return null;
  }
}

/**
 * The "Details" of a network failure: what the platform said and, when it gives no reason (a
 * browser), the possible causes. A failure read back from a binding keeps only its message, whose
 * wording says whether the cause was known.
 */
function networkMore(e: PpmError): string[] {
  const d = e.details ?? {};
  const detail = typeof d.detail === "string" ? d.detail : null;
  const unknown = d.cause === "unknown" || (d.cause === undefined && /does not say why/.test(e.message));
  const lines: string[] = [];
  if (detail) lines.push(`${unknown ? "The browser said" : "The system said"}: ${detail}`);
  if (unknown) lines.push("Possible causes:", ...UNKNOWN_CAUSES.map((c) => `• ${c}`));
  return lines;
}

function isNamed(e: unknown, name: string): boolean {
  return !!e && typeof e === "object" && (e as { name?: unknown }).name === name;
}

function codeOf(e: unknown): string | null {
  const c = e && typeof e === "object" ? (e as { code?: unknown }).code : undefined;
  return typeof c === "string" && c ? c : null;
}

function messageOf(e: unknown): string {
  if (typeof e === "string") return e;
  const m = e && typeof e === "object" ? (e as { message?: unknown }).message : undefined;
  return typeof m === "string" ? m : "";
}

/** office.js errors are `OfficeExtension.Error` (name "RichApi.Error") with a string code. */
function isOfficeError(e: unknown): boolean {
  return isNamed(e, "RichApi.Error") || isNamed(e, "OfficeExtension.Error");
}

/** Failures after which a refresh leaves the table's info line alone (src/refresh/engine.ts: cancelled, another runtime's table). */
const NOT_MARKED = new Set(["cancelled", "table_busy", "lock_lost", "no_connection"]);

/**
 * The view of a refresh's failure, saying what the refresh did to the workbook (issue #37): the
 * data is kept, but the info line above each table now starts with "⚠ Not refreshed" and the
 * highlight of its last changes was removed (src/workbook/refresh.ts, `writeStaleMark`). The error
 * texts were written for an import, where "Nothing in the workbook was changed" is true; after a
 * refresh it was not.
 * @param tables how many tables failed this way (the sentence is about one table or several).
 */
export function refreshFailureView(view: ErrorView, tables = 1): ErrorView {
  const note = refreshFailureNote(view.code, tables);
  if (note === null) return view;
  const said = view.action
    .replace(/\s*(Nothing in the workbook was changed|Nothing was changed in the workbook|Nothing was written)\.\s*/g, " ")
    .replace(/, so nothing was written and the previous data was kept\./, ", so the previous data was kept.")
    .replace(/, so nothing was written\./, ".")
    .trim();
  return { ...view, action: `${said} ${note}`.trim() };
}

/** What a failed refresh wrote, for `tables` tables that failed with `code`; null when it wrote nothing (see {@link refreshFailureView}). */
export function refreshFailureNote(code: string, tables = 1): string | null {
  if (NOT_MARKED.has(code)) return null;
  return tables === 1
    ? "The table keeps its data; its info line now starts with “⚠ Not refreshed”, and a Show changes highlight, if any, was removed."
    : `The ${tables} tables keep their data; their info lines now start with “⚠ Not refreshed”, and Show changes highlights, if any, were removed.`;
}

/** The on-screen form of a stored failure record (a binding's `lastFailure`, a refresh report line). */
export function describeFailure(failure: { code: string; message: string }, ctx: ErrorContext = {}): ErrorView {
  const view = Object.prototype.hasOwnProperty.call(ERROR_TEXT, failure.code)
    ? // Only the code and the message were kept: how often the request was sent is not known, so
      // nothing is said about it (`stored`).
      describeError(new PpmError(failure.code as PpmErrorCode, failure.message, { details: { stored: true } }), ctx)
    : describeError(Object.assign(new Error(failure.message), { code: failure.code }), ctx);
  return ctx.refreshedTables !== undefined ? refreshFailureView(view, ctx.refreshedTables) : view;
}
