/**
 * Refresh on open (issue 17): which tables refresh when the workbook opens, keeping Office's
 * document-scoped startup behaviour in step with the flags, and the run itself.
 *
 * Office side ("Run code in your Office Add-in when the document opens",
 * learn.microsoft.com/office/dev/add-ins/develop/run-code-on-document-open): with a shared runtime,
 * `Office.addin.setStartupBehavior(Office.StartupBehavior.load)` makes Office load the add-in
 * (without showing its pane) the next time THIS document opens, and its `Office.onReady` code runs;
 * `none` undoes it. It is asynchronous, document-scoped, and only takes effect after the add-in has
 * been opened once on the document by hand (which setting a flag in the pane is).
 *
 * Nothing here blocks: failures are recorded in each binding (`lastFailure`, the stale mark of
 * issue 15 shows them) and summarised once; a missing connection, or one whose token was forgotten,
 * is one quiet note for all tables, sends nothing and writes nothing to the workbook.
 *
 * Consent (issue #22 item 6): a workbook says which environment and company its tables come from,
 * and anyone can write that. So the first automatic refresh of a workbook whose flags were not set
 * on this device waits for the user: nothing is sent until they agree in the pane, and the answer
 * is remembered on this device ({@link openConsentKey}). Setting or clearing a flag in the pane on
 * this device counts as agreeing for the workbook as it then is.
 */
import type { Binding } from "../refresh/binding";
import type { RefreshReport } from "../refresh/engine";
import type { Connection } from "../service/connection";
import { sha256Hex } from "../service/hash";
import type { LockHolder, RefreshLock } from "./refreshLock";

/** `Office.StartupBehavior` values as office.js has them at run time. */
export type StartupBehavior = "Load" | "None";

/** The slice of `Office.addin` used here (SharedRuntime 1.1). */
export interface StartupApi {
  setStartupBehavior(behavior: StartupBehavior): Promise<void>;
  /** `StartupBehavior` values, or another string a newer Office may add. */
  getStartupBehavior(): Promise<string>;
}

export type StartupSync = "load" | "none" | "unchanged" | "unsupported";

/**
 * Sets the startup behaviour to `load` when any table is flagged and back to `none` when none is.
 * Asks first, so an unchanged state costs no write (and no "document changed" for the user).
 */
export async function syncStartupBehavior(api: StartupApi | null, anyFlagged: boolean): Promise<StartupSync> {
  if (!api) return "unsupported";
  const want: StartupBehavior = anyFlagged ? "Load" : "None";
  let current: string | null = null;
  try {
    current = await api.getStartupBehavior();
  } catch {
    current = null; // unknown: set it anyway
  }
  if (current !== null && current.toLowerCase() === want.toLowerCase()) return "unchanged";
  await api.setStartupBehavior(want);
  return anyFlagged ? "load" : "none";
}

/**
 * Flagged tables this device cannot refresh, grouped by environment and company: no connection
 * for them (`no_connection`), or a connection whose token was forgotten (`no_token`, with its id so
 * the pane can offer "Update token"). Nothing is sent for them.
 */
export interface MissingConnection {
  environment: string;
  companyId: string | null;
  tables: string[];
  reason?: "no_connection" | "no_token";
  connectionId?: string;
}

/** A flagged table the refresh on open would fetch, and where from (for the consent question). */
export interface OpenTable {
  tableName: string;
  environment: string;
  companyId: string | null;
}

export type OpenRefreshOutcome =
  | { state: "none" }
  | { state: "busy"; flagged: number; holder: LockHolder }
  /** Waiting for the user: this device never agreed to refresh this workbook on open. Nothing was sent. */
  | { state: "consent"; flagged: number; tables: OpenTable[]; missing: MissingConnection[] }
  /** The user said no on this device: nothing is sent when this workbook opens. */
  | { state: "declined"; flagged: number; tables: OpenTable[]; missing: MissingConnection[] }
  | { state: "done"; flagged: number; reports: RefreshReport[]; missing: MissingConnection[] };

/** What this device answered for a workbook's refresh on open; null when it was never asked. */
export type OpenConsent = "allow" | "deny" | null;

export interface OpenRefreshDeps {
  listBindings(): Promise<{ bindings: Binding[] }>;
  /** This device's connection for a bound table, or null (see `resolveConnectionId`). */
  connectionFor(binding: Binding): Connection | null;
  /** One conditional refresh (`Engine.refreshOne`): one request when the export is unchanged. */
  refreshOne(binding: Binding, connection: Connection): Promise<RefreshReport>;
  lock: RefreshLock;
  /** This device's answer for the workbook with these flagged tables (see {@link openConsentKey}); omitted: allowed. */
  consent?(flagged: readonly Binding[]): OpenConsent;
}

/**
 * Refreshes the flagged tables, one after another, holding the runtime's lock. Tables without a
 * connection on this device, or whose connection has no token, are skipped, untouched, and listed
 * in `missing`. When the others would be fetched but this device never agreed for this workbook,
 * nothing is sent: the outcome is `consent` (ask) or `declined`.
 */
export async function refreshFlaggedTables(deps: OpenRefreshDeps): Promise<OpenRefreshOutcome> {
  const { bindings } = await deps.listBindings();
  const flagged = bindings.filter((b) => b.refreshOnOpen === true);
  if (flagged.length === 0) return { state: "none" };
  const runnable: Array<[Binding, Connection]> = [];
  const missing = new Map<string, MissingConnection>();
  for (const b of flagged) {
    const conn = deps.connectionFor(b);
    // A forgotten token is a missing connection too: a request without credentials can only be refused.
    if (conn && conn.token) {
      runnable.push([b, conn]);
      continue;
    }
    const reason = conn ? "no_token" : "no_connection";
    const key = JSON.stringify([reason, b.environment.replace(/\/+$/, "").toLowerCase(), b.companyId]);
    const entry = missing.get(key) ?? { environment: b.environment, companyId: b.companyId, tables: [], reason, ...(conn ? { connectionId: conn.id } : {}) };
    entry.tables.push(b.tableName);
    missing.set(key, entry);
  }
  const missingList = [...missing.values()];
  if (runnable.length === 0) return { state: "done", flagged: flagged.length, reports: [], missing: missingList };
  const answer = deps.consent ? deps.consent(flagged) : "allow";
  if (answer !== "allow") {
    const tables = runnable.map(([b]) => ({ tableName: b.tableName, environment: b.environment, companyId: b.companyId }));
    return { state: answer === "deny" ? "declined" : "consent", flagged: flagged.length, tables, missing: missingList };
  }
  const label = runnable.length === 1 ? `Refreshing ${runnable[0][0].tableName} on open…` : `Refreshing ${runnable.length} tables on open…`;
  const res = await deps.lock.run("open", label, async () => {
    const reports: RefreshReport[] = [];
    for (const [b, conn] of runnable) reports.push(await deps.refreshOne(b, conn));
    return reports;
  });
  if (!res.ran) return { state: "busy", flagged: flagged.length, holder: res.holder };
  return { state: "done", flagged: flagged.length, reports: res.value, missing: missingList };
}

/**
 * The one quiet note for flagged tables this device cannot refresh (no token is named or shown):
 * no connection for their environment and company, or a connection whose token was forgotten.
 */
export function missingConnectionNote(missing: readonly MissingConnection[]): string | null {
  if (missing.length === 0) return null;
  const tables = missing.reduce((n, m) => n + m.tables.length, 0);
  const place = (m: MissingConnection) => (m.companyId ? `${m.environment} (company ${m.companyId})` : m.environment);
  const none = missing.filter((m) => m.reason !== "no_token");
  const noToken = missing.filter((m) => m.reason === "no_token");
  const what = tables === 1 ? "1 table in this workbook refreshes" : `${tables} tables in this workbook refresh`;
  const why = [
    none.length > 0 ? `this device has no connection for ${none.map(place).join(", ")}` : null,
    noToken.length > 0 ? `the connection for ${noToken.map(place).join(", ")} has no token on this device` : null,
  ].filter((x) => x !== null);
  const fix = none.length > 0 ? "add a connection with your own token to refresh it" : "update the connection's token to refresh it";
  return `${what} when it opens, but ${why.join(", and ")}. Nothing was sent. The data shown is from the last refresh; ${fix}.`;
}

/** Storage key prefix (after the partition prefix) of this device's answers for refresh on open. */
export const OPEN_CONSENT_PREFIX = "ppm.v1.openConsent.";

/**
 * Names a workbook's refresh on open for this device's answer: the document's address
 * (`Office.context.document.url`, null when Office has none) and, for each flagged table, its
 * binding id, environment, company and source. A workbook from someone else (another address, or
 * other tables, environments or companies) gets another key, so it is asked about; a table flagged
 * elsewhere later changes the key too, and this device is asked again. Only a hash is stored.
 */
export function openConsentKey(documentUrl: string | null | undefined, flagged: readonly Binding[]): string {
  const tables = flagged
    .map((b) => [b.id, b.environment.trim().replace(/\/+$/, "").toLowerCase(), b.companyId ?? "", JSON.stringify(b.source)])
    .sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : 1));
  return sha256Hex(JSON.stringify(["ppm-open-consent-v1", documentUrl ?? "", tables])).slice(0, 32);
}

/** The consent question's text: which tables, from where, and what agreeing does. */
export function openConsentText(tables: readonly OpenTable[]): string {
  const names = tables.map((t) => t.tableName).join(", ");
  const places = [...new Set(tables.map((t) => (t.companyId ? `${t.environment} (company ${t.companyId})` : t.environment)))].join(", ");
  const what = tables.length === 1 ? `1 table (${names}) refreshes` : `${tables.length} tables (${names}) refresh`;
  return `This workbook asks that ${what} from ${places} when it opens. It was set up on another device or by someone else, so nothing has been sent. Refresh with your connection on this device, now and whenever this workbook opens?`;
}
