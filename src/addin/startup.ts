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
 * issue 15 shows them) and summarised once; a missing connection is one quiet note for all tables,
 * and writes nothing to the workbook.
 */
import type { Binding } from "../refresh/binding";
import type { RefreshReport } from "../refresh/engine";
import type { Connection } from "../service/connection";
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

/** Flagged tables this device has no connection for, grouped by environment and company. */
export interface MissingConnection {
  environment: string;
  companyId: string | null;
  tables: string[];
}

export type OpenRefreshOutcome =
  | { state: "none" }
  | { state: "busy"; flagged: number; holder: LockHolder }
  | { state: "done"; flagged: number; reports: RefreshReport[]; missing: MissingConnection[] };

export interface OpenRefreshDeps {
  listBindings(): Promise<{ bindings: Binding[] }>;
  /** This device's connection for a bound table, or null (see `resolveConnectionId`). */
  connectionFor(binding: Binding): Connection | null;
  /** One conditional refresh (`Engine.refreshOne`): one request when the export is unchanged. */
  refreshOne(binding: Binding, connection: Connection): Promise<RefreshReport>;
  lock: RefreshLock;
}

/**
 * Refreshes the flagged tables, one after another, holding the runtime's lock. Tables without a
 * connection on this device are skipped, untouched, and listed in `missing`.
 */
export async function refreshFlaggedTables(deps: OpenRefreshDeps): Promise<OpenRefreshOutcome> {
  const { bindings } = await deps.listBindings();
  const flagged = bindings.filter((b) => b.refreshOnOpen === true);
  if (flagged.length === 0) return { state: "none" };
  const label = flagged.length === 1 ? `Refreshing ${flagged[0].tableName} on open…` : `Refreshing ${flagged.length} tables on open…`;
  const res = await deps.lock.run("open", label, async () => {
    const reports: RefreshReport[] = [];
    const missing = new Map<string, MissingConnection>();
    for (const b of flagged) {
      const conn = deps.connectionFor(b);
      if (!conn) {
        const key = JSON.stringify([b.environment.replace(/\/+$/, "").toLowerCase(), b.companyId]);
        const entry = missing.get(key) ?? { environment: b.environment, companyId: b.companyId, tables: [] };
        entry.tables.push(b.tableName);
        missing.set(key, entry);
        continue;
      }
      reports.push(await deps.refreshOne(b, conn));
    }
    return { reports, missing: [...missing.values()] };
  });
  if (!res.ran) return { state: "busy", flagged: flagged.length, holder: res.holder };
  return { state: "done", flagged: flagged.length, ...res.value };
}

/** The one quiet note for flagged tables this device cannot refresh (no token is named or shown). */
export function missingConnectionNote(missing: readonly MissingConnection[]): string | null {
  if (missing.length === 0) return null;
  const tables = missing.reduce((n, m) => n + m.tables.length, 0);
  const where = missing.map((m) => (m.companyId ? `${m.environment} (company ${m.companyId})` : m.environment)).join(", ");
  const what = tables === 1 ? "1 table in this workbook refreshes" : `${tables} tables in this workbook refresh`;
  return `${what} when it opens, but this device has no connection for ${where}. The data shown is from the last refresh; add a connection with your own token to refresh it.`;
}
