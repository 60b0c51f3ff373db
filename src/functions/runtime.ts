/**
 * The worksheet functions' side of the shared runtime (issue #28): what each PPM function does when
 * Excel calls it, over the runtime's one connection store and one {@link FormulaData} cache. Office
 * is reached only through the dependencies given (`functions.ts` passes `CustomFunctions.Error`,
 * the pane's connection store and Excel reads), so this is tested in Node with fakes.
 *
 * Every function is a streaming function: it sets its result when its data is there (Excel shows
 * `#BUSY!` until then), and again whenever a revalidation brings a new generation of a dataset it
 * used (or changes whether it is stale). A cancelled invocation (the formula was deleted or changed)
 * stops listening.
 */
import type { BindingOrigin } from "../addin/refreshSummary";
import type { ConnectionSummary } from "../addin/connectionStore";
import { formulaConsentMessage, type ConsentConnection, type FormulaConsent } from "../addin/formulaConsent";
import type { Binding } from "../refresh/binding";
import type { Connection } from "../service/connection";
import { findView, type ViewsDocument } from "../views/views";
import { pickConnection } from "./connection";
import type { DatasetEntry, FormulaData } from "./data";
import { asFunctionError, asOfText, FunctionError, lookupValue, readOptions, runQuery, type ExcelErrorValue } from "./logic";

/** The part of `CustomFunctions.StreamingInvocation` the functions use. */

/** What a formula blocked until Allow shows while its data loads after Allow (issue #37, item 2). */
export const LOADING_AFTER_ALLOW = "Loading: PPM formulas are allowed in this workbook on this device; the value follows when the data is here.";
export interface Invocation {
  setResult(value: unknown): void;
  onCanceled?: () => void;
}

export interface FunctionsDeps {
  data: FormulaData;
  connections(): ConnectionSummary[];
  connection(id: string): Connection | null;
  /** The workbook's bound tables (environment, company, table name, generation, failure). */
  bindings(): Promise<Binding[]>;
  /** The workbook's saved views. */
  views(): Promise<ViewsDocument>;
  /** Excel's error value for a cell (`new CustomFunctions.Error(code, message)` in Excel). */
  error(code: ExcelErrorValue, message: string): unknown;
  /** This device's permission for PPM formulas in this document, per connection: nothing is fetched without it. */
  consent: Pick<FormulaConsent, "allowed" | "block">;
  now?: () => Date;
}

/** A formula stopped before any request: this device has not allowed PPM formulas to use this connection in this document. */
class ConsentNeeded extends FunctionError {
  constructor(
    readonly connection: ConsentConnection,
    name: string,
  ) {
    super("#N/A", formulaConsentMessage(name));
  }
}

/** How long one read of the workbook's bindings and views serves the formulas of a recalculation. */
export const WORKBOOK_READ_TTL_MS = 2_000;

export class FunctionsRuntime {
  private bindingsRead: { at: number; value: Promise<Binding[]> } | null = null;
  private viewsRead: { at: number; value: Promise<ViewsDocument> } | null = null;
  /** Invocations whose result is read from the workbook (PPM.ASOF, PPM.VIEW): run again when it changes. */
  private readonly workbookReaders = new Set<() => void>();

  constructor(private readonly deps: FunctionsDeps) {}

  /** One Excel read of the bindings for all the formulas of a recalculation. */
  private bindings(): Promise<Binding[]> {
    const now = Date.now();
    if (!this.bindingsRead || now - this.bindingsRead.at > WORKBOOK_READ_TTL_MS) {
      const value = this.deps.bindings();
      value.catch(() => (this.bindingsRead = null));
      this.bindingsRead = { at: now, value };
    }
    return this.bindingsRead.value;
  }

  private views(): Promise<ViewsDocument> {
    const now = Date.now();
    if (!this.viewsRead || now - this.viewsRead.at > WORKBOOK_READ_TTL_MS) {
      const value = this.deps.views();
      value.catch(() => (this.viewsRead = null));
      this.viewsRead = { at: now, value };
    }
    return this.viewsRead.value;
  }

  /**
   * The workbook's bindings or views changed (a refresh ended, a table was imported, a view saved):
   * forget the reads, and run again every formula whose result came from them. Without this a
   * `PPM.ASOF("ppm_financials")` typed before a refresh kept the first generation's time for good
   * (issue #37): its table's binding is in the workbook, not in a dataset a revalidation updates.
   */
  workbookChanged(): void {
    this.bindingsRead = null;
    this.viewsRead = null;
    for (const rerun of [...this.workbookReaders]) rerun();
  }

  private async connectionFor(arg: unknown): Promise<Connection> {
    let origins: BindingOrigin[] = [];
    if (typeof arg !== "string" || arg.trim() === "") {
      try {
        origins = (await this.bindings()).map((b) => ({ connectionId: b.connectionId, environment: b.environment, companyId: b.companyId }));
      } catch {
        origins = []; // bindings unreadable: fall back to this device's only connection
      }
    }
    const summary = pickConnection(this.deps.connections(), arg, origins);
    const conn = this.deps.connection(summary.id);
    if (!conn || conn.token === "") throw new FunctionError("#N/A", `The connection "${summary.name}" has no token on this device. Open the PPM pane and use Update token.`);
    // Checked on every call, before any request, for this connection: a workbook from someone else
    // reads nothing until allowed, and an allowed workbook reads nothing with another connection.
    const who: ConsentConnection = { id: summary.id, baseUrl: summary.baseUrl, label: `${summary.name} (${environmentName(summary.baseUrl)})` };
    if (!(await this.deps.consent.allowed(who))) throw new ConsentNeeded(who, summary.name);
    return conn;
  }

  /**
   * Runs `compute` now and whenever a dataset it read changes; sets each result (or Excel error)
   * on the invocation until it is cancelled.
   */
  private stream(invocation: Invocation, compute: (read: (conn: Connection, dataset: string) => Promise<DatasetEntry>) => Promise<unknown>, readsWorkbook = false): void {
    const subscriptions = new Map<string, () => void>();
    let cancelled = false;
    let waiting: (() => void) | null = null;
    let seq = 0;
    const run = async (): Promise<void> => {
      const mine = ++seq;
      let result: unknown;
      try {
        result = await compute(async (conn, dataset) => {
          const k = `${conn.id}\u0000${dataset}`;
          if (!subscriptions.has(k)) subscriptions.set(k, this.deps.data.subscribe(conn, dataset, () => void run()));
          return this.deps.data.get(conn, dataset);
        });
      } catch (e) {
        const fe = asFunctionError(e);
        result = this.deps.error(fe.code, fe.message);
        // Blocked: run again when the user allows PPM formulas in the pane (one wait per invocation).
        if (e instanceof ConsentNeeded && !cancelled && mine === seq) {
          if (await this.deps.consent.allowed(e.connection)) return void run(); // allowed meanwhile
          if (cancelled || mine !== seq) return;
          waiting?.();
          waiting = this.deps.consent.block(e.connection, () => {
            waiting = null;
            // Allowed: the question's message is no longer true while the data loads (issue #37,
            // item 2). Only Excel can show #BUSY!, for a call of its own, and the one way to make it
            // call again, Application.calculate, recalculates every open workbook, which the add-in
            // never does (issue #34): the cell says it is loading until the value comes.
            if (!cancelled && mine === seq) invocation.setResult(this.deps.error("#N/A", LOADING_AFTER_ALLOW));
            void run();
          });
        }
      }
      if (!cancelled && mine === seq) invocation.setResult(result);
    };
    const rerun = (): void => void run();
    if (readsWorkbook) this.workbookReaders.add(rerun);
    invocation.onCanceled = () => {
      cancelled = true;
      waiting?.();
      waiting = null;
      for (const off of subscriptions.values()) off();
      subscriptions.clear();
      this.workbookReaders.delete(rerun);
    };
    void run();
  }

  value(dataset: unknown, key: unknown, column: unknown, connection: unknown, invocation: Invocation): void {
    this.stream(invocation, async (read) => {
      const conn = await this.connectionFor(connection);
      return lookupValue(await read(conn, datasetKey(dataset)), key, column);
    });
  }

  query(dataset: unknown, options: unknown, connection: unknown, invocation: Invocation): void {
    this.stream(invocation, async (read) => {
      const query = readOptions(options); // a bad query costs no request
      const conn = await this.connectionFor(connection);
      return runQuery(await read(conn, datasetKey(dataset)), query, this.deps.now?.());
    });
  }

  view(name: unknown, connection: unknown, invocation: Invocation): void {
    this.stream(invocation, async (read) => {
      if (typeof name !== "string" || name.trim() === "") throw new FunctionError("#VALUE!", "Give the name of a saved view (PPM pane › Views).");
      const doc = await this.views();
      const v = findView(doc, name);
      if (!v) throw new FunctionError("#N/A", `This workbook has no view named "${name.trim()}"${doc.views.length ? ` (it has: ${doc.views.map((x) => x.name).join(", ")})` : ""}.`);
      const conn = await this.connectionFor(connection);
      return runQuery(await read(conn, v.dataset), v.query, this.deps.now?.());
    }, true);
  }

  asOf(target: unknown, connection: unknown, invocation: Invocation): void {
    this.stream(invocation, async (read) => {
      if (typeof target !== "string" || target.trim() === "") throw new FunctionError("#VALUE!", "Give a PPM table's name or a dataset key.");
      const name = target.trim();
      let bindings: Binding[] = [];
      try {
        bindings = await this.bindings();
      } catch {
        bindings = [];
      }
      const b = bindings.find((x) => x.tableName.toLowerCase() === name.toLowerCase());
      if (b) {
        const stale = b.lastFailure ? `the last refresh failed: ${b.lastFailure.message}` : null;
        return asOfText(b.validators.generatedAt ?? b.lastRefreshAt, stale);
      }
      const conn = await this.connectionFor(connection);
      const entry = await read(conn, name);
      return asOfText(entry.table.meta.generatedAt, entry.staleReason);
    }, true);
  }
}

/** A connection's address as the consent question names it: no credentials, query or fragment. */
function environmentName(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return "an environment with an invalid address";
  }
}

function datasetKey(dataset: unknown): string {
  if (typeof dataset !== "string" || dataset.trim() === "") throw new FunctionError("#VALUE!", "Give a dataset key, e.g. \"financials\" (PPM pane › Datasets).");
  return dataset.trim();
}
