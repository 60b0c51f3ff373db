/**
 * The add-in's one runtime (issue 17): the objects the task pane, the ribbon's commands and the
 * refresh on open share — one connection store, one engine, one refresh lock, one ribbon state.
 *
 * With the shared runtime (manifest `<Runtimes>`, SharedRuntime 1.1) taskpane.html carries both the
 * pane and the commands (webpack puts both entries on that page with one module registry), so
 * `addinRuntime()` returns the same object to both. Where SharedRuntime 1.1 is missing (of the
 * platforms with the manifest's ExcelApi 1.13, only Excel on iPad; see the "Shared runtime
 * requirement sets" page), Office
 * runs the function file in a runtime of its own; each runtime then has its own instance, as before
 * issue 17, and the workbook lock of issue 10 (B9) is what keeps them apart.
 *
 * Detected at run time, not required in the manifest: `<Set Name="SharedRuntime">` in
 * `<Requirements>` would stop the add-in from installing at all where it is missing.
 */
import type { Binding } from "../refresh/binding";
import type { RefreshReport } from "../refresh/engine";
import type { Connection } from "../service/connection";
import { ensureDocumentId, readDocumentId } from "../workbook/documentId";
import { ConnectionStore, deviceStorage, type StorageLike } from "./connectionStore";
import type { Engine } from "./engine";
import type { RecoveredTable } from "../workbook/recovery";
import { runExcel } from "./excelRun";
import { FormulaConsent, type DocumentIdAccess } from "./formulaConsent";
import { resolveConnectionId } from "./refreshSummary";
import { RefreshLock, type LockHolder } from "./refreshLock";
import { RibbonState, type RibbonApi } from "./ribbonState";
import { OPEN_CONSENT_PREFIX, openConsentKey, refreshFlaggedTables, syncStartupBehavior, type OpenConsent, type OpenRefreshOutcome, type StartupApi, type StartupSync } from "./startup";

/** The members of the `Office` global the runtime reads (office.js, or the preview's shim). */
export interface OfficeLike {
  context?: {
    partitionKey?: string;
    requirements?: { isSetSupported(name: string, minVersion?: string): boolean };
    document?: {
      /** The document's address (`Office.context.document.url`); null or absent when Office has none. */
      url?: string | null;
      addHandlerAsync?(eventType: string, handler: (event: unknown) => void, callback?: (result: { status: unknown }) => void): void;
    };
  };
  addin?: { setStartupBehavior?(behavior: unknown): Promise<void>; getStartupBehavior?(): Promise<unknown> };
  ribbon?: { requestUpdate?(input: unknown): Promise<void> };
  StartupBehavior?: { load: unknown; none: unknown };
  EventType?: { DocumentSelectionChanged?: string };
}

export interface RuntimeOptions {
  office: OfficeLike | undefined;
  storage: StorageLike;
  /** False when the device blocks storage (connections last for this runtime only). */
  persistent?: boolean;
  loadEngine: () => Promise<Engine>;
  /** The document's id in its settings, for formula consent (issue #36); without it answers last one runtime. */
  documentId?: DocumentIdAccess;
  onError?: (where: string, e: unknown) => void;
}

/** What the task pane uses of the runtime (kept small, so the pane's tests can fake it). */
export interface PaneRuntime {
  readonly id: string;
  readonly shared: boolean;
  readonly lock: RefreshLock;
  /** Whether Office can be asked to load the add-in with this document. */
  readonly startupSupported: boolean;
  syncStartup(anyFlagged: boolean): Promise<StartupSync>;
  /** Sets a table's "Refresh when this workbook opens" and keeps the startup behaviour in step. */
  setRefreshOnOpen(bindingId: string, on: boolean): Promise<FlagChange>;
  /** The outcome of the refresh on open (now if it already ran, then on every later run). */
  onOpenRefresh(listener: (outcome: OpenRefreshOutcome) => void): () => void;
  /**
   * The user's answer to "refresh this workbook's tables when it opens, on this device?" (issue #22):
   * remembered on this device; yes runs the refresh on open now.
   */
  answerOpenConsent(allow: boolean): Promise<OpenRefreshOutcome>;
  /** The workbook's bindings changed (import, delete): the ribbon's "Refresh this table" may change. */
  bindingsChanged(): void;
  /**
   * The workbook's tables or saved views changed (an import, a view saved or deleted): the PPM
   * formulas that read them (`PPM.ASOF` of a table, `PPM.VIEW`) are run again. A refresh says so
   * itself when it releases the lock.
   */
  workbookChanged?(): void;
  /** Whether PPM formulas may fetch in this document on this device; the pane asks (see formulaConsent.ts). */
  readonly formulaConsent?: FormulaConsent;
}

/** What changing a table's flag did: the stored binding, how many are flagged, what Office was asked. */
export type FlagChange =
  | { state: "saved"; binding: Binding; flagged: number; startup: StartupSync }
  | { state: "busy"; holder: LockHolder };

let counter = 0;

/**
 * Whether a workbook at this address may be co-authored (issue #35). Co-authoring needs the
 * workbook "stored in OneDrive, OneDrive for Business, or SharePoint Online" ("Coauthoring in Excel
 * add-ins"), whose documents Office addresses by an https URL (`Office.context.document.url`; Excel
 * on the web always has one). A local path, or no address (a new workbook never saved), cannot be
 * co-authored; the address is read at each use, so a workbook saved to the cloud meanwhile counts.
 */
export function documentMayBeShared(url: string | null): boolean {
  return url !== null && /^https?:\/\//i.test(url);
}

/** Who refreshes on open, as another runtime finding the table locked is told. */
export const OPEN_HOLDER = "the refresh when this workbook opened";
/** Who refreshes from the ribbon's "Refresh this table". */
export const RIBBON_TABLE_HOLDER = "Refresh this table on the ribbon";

export class AddinRuntime implements PaneRuntime {
  /** Distinguishes runtimes (the tests and the preview show the pane and the ribbon share one). */
  readonly id: string;
  readonly shared: boolean;
  readonly lock = new RefreshLock();
  readonly ribbon: RibbonState;
  readonly store: ConnectionStore;
  readonly persistent: boolean;
  readonly formulaConsent: FormulaConsent;
  private enginePromise: Promise<Engine> | null = null;
  /** What this runtime's start found of interrupted refreshes (`recovery.ts`): restored, marked, skipped, failed or ignored tables. */
  recovery: RecoveredTable[] = [];
  private outcome: OpenRefreshOutcome | null = null;
  private openRun: Promise<OpenRefreshOutcome> | null = null;
  private readonly openListeners = new Set<(o: OpenRefreshOutcome) => void>();
  private selectionRun: Promise<void> | null = null;
  private readonly workbookListeners = new Set<() => void>();
  private selectionAgain = false;
  private tracking = false;

  constructor(private readonly opts: RuntimeOptions) {
    this.id = `rt${Date.now().toString(36)}${(counter++).toString(36)}`;
    const office = opts.office;
    const supports = (name: string) => {
      try {
        return office?.context?.requirements?.isSetSupported(name, "1.1") === true;
      } catch {
        return false;
      }
    };
    this.shared = supports("SharedRuntime");
    this.persistent = opts.persistent ?? true;
    this.store = new ConnectionStore(opts.storage, { partitionKey: office?.context?.partitionKey });
    this.formulaConsent = new FormulaConsent({ storage: opts.storage, key: (name) => this.store.key(name), documentUrl: () => this.documentUrl(), documentId: opts.documentId, onError: opts.onError });
    const ribbon = office?.ribbon;
    const api: RibbonApi | null =
      this.shared && supports("RibbonApi") && typeof ribbon?.requestUpdate === "function"
        ? { requestUpdate: (input) => ribbon.requestUpdate!(input) }
        : null;
    this.ribbon = new RibbonState(api, (e) => this.opts.onError?.("ribbon", e));
    this.lock.onChange((holder) => {
      void this.ribbon.set({ busy: holder !== null });
      // A refresh can add, move or drop tables: look at the selection again once it is over, and
      // tell the formulas that read the bindings (PPM.ASOF of a table).
      if (!holder) {
        this.bindingsChanged();
        this.workbookChanged();
      }
    });
  }

  /** See {@link PaneRuntime.workbookChanged}. */
  workbookChanged(): void {
    for (const l of [...this.workbookListeners]) l();
  }

  /** Calls `listener` whenever the workbook's tables or views changed (the worksheet functions listen). */
  onWorkbookChanged(listener: () => void): () => void {
    this.workbookListeners.add(listener);
    return () => this.workbookListeners.delete(listener);
  }

  /** The one engine of this runtime (its chunk loaded on first use). */
  engine(): Promise<Engine> {
    this.enginePromise ??= this.opts
      .loadEngine()
      .then((engine) => {
        // Issue #35: only a workbook in the cloud can be co-authored (see documentMayBeShared).
        if (typeof engine.setDocumentSharing === "function") engine.setDocumentSharing(() => documentMayBeShared(this.documentUrl()));
        return engine;
      })
      .catch((e) => {
        this.enginePromise = null; // a failed chunk load (offline) can be retried
        throw e;
      });
    return this.enginePromise;
  }

  get startupSupported(): boolean {
    return this.startupApi() !== null;
  }

  private startupApi(): StartupApi | null {
    const office = this.opts.office;
    const addin = office?.addin;
    if (!this.shared || typeof addin?.setStartupBehavior !== "function" || typeof addin.getStartupBehavior !== "function") return null;
    const values = office?.StartupBehavior ?? { load: "Load", none: "None" };
    return {
      setStartupBehavior: (b) => addin.setStartupBehavior!(b === "Load" ? values.load : values.none),
      getStartupBehavior: async () => String(await addin.getStartupBehavior!()),
    };
  }

  syncStartup(anyFlagged: boolean): Promise<StartupSync> {
    return syncStartupBehavior(this.startupApi(), anyFlagged);
  }

  /**
   * Stores the flag in the binding (holding the lock, so a refresh running now cannot write back
   * the binding it read before), then asks Office to load the add-in with this document when the
   * first table is flagged and to stop when the last one is cleared. A refused startup change is
   * thrown after the flag is saved (the flag is the user's choice; Office's side can be retried).
   */
  async setRefreshOnOpen(bindingId: string, on: boolean): Promise<FlagChange> {
    const engine = await this.engine();
    const ran = await this.lock.run("pane", "Saving the refresh-on-open setting", async () => {
      const result = await engine.setRefreshOnOpen(bindingId, on, this.store.allSecrets());
      // A flag set or cleared here, by this device's user: the workbook as it now is may refresh on open here.
      try {
        const { bindings } = await engine.listBindings();
        this.recordOpenConsent(bindings.filter((b) => b.refreshOnOpen === true), "allow");
      } catch (e) {
        this.opts.onError?.("refresh-on-open consent", e);
      }
      return result;
    });
    if (!ran.ran) return { state: "busy", holder: ran.holder };
    const startup = await this.syncStartup(ran.value.flagged > 0);
    return { state: "saved", binding: ran.value.binding, flagged: ran.value.flagged, startup };
  }

  /** The document's address as Office reports it (null when it has none, e.g. a new workbook). */
  private documentUrl(): string | null {
    try {
      const url = this.opts.office?.context?.document?.url;
      return typeof url === "string" && url !== "" ? url : null;
    } catch {
      return null;
    }
  }

  private consentStorageKey(flagged: readonly Binding[]): string {
    return this.store.key(OPEN_CONSENT_PREFIX + openConsentKey(this.documentUrl(), flagged));
  }

  /** This device's answer for the workbook with these flagged tables; null when it was never asked. */
  openConsent(flagged: readonly Binding[]): OpenConsent {
    try {
      const text = this.opts.storage.getItem(this.consentStorageKey(flagged));
      const stored: unknown = text ? JSON.parse(text) : null;
      const v = stored && typeof stored === "object" ? (stored as Record<string, unknown>)["answer"] : null;
      return v === "allow" || v === "deny" ? v : null;
    } catch {
      return null;
    }
  }

  private recordOpenConsent(flagged: readonly Binding[], answer: "allow" | "deny"): void {
    if (flagged.length === 0) return;
    try {
      this.opts.storage.setItem(this.consentStorageKey(flagged), JSON.stringify({ answer, at: new Date().toISOString() }));
    } catch (e) {
      // Storage full or blocked: the answer holds for this runtime only; asked again next time.
      this.opts.onError?.("refresh-on-open consent", e);
    }
  }

  /** The flagged tables the last refresh on open saw (what a consent answer is about). */
  private lastFlagged: Binding[] = [];

  async answerOpenConsent(allow: boolean): Promise<OpenRefreshOutcome> {
    const flagged = this.lastFlagged;
    this.recordOpenConsent(flagged, allow ? "allow" : "deny");
    if (!allow) {
      const previous = this.outcome;
      const outcome: OpenRefreshOutcome =
        previous && (previous.state === "consent" || previous.state === "declined")
          ? { ...previous, state: "declined" }
          : { state: "declined", flagged: flagged.length, tables: [], missing: [] };
      this.publishOpenOutcome(outcome);
      return outcome;
    }
    // Yes: the refresh on open runs now (and on every later opening of this workbook here).
    await this.openRun;
    this.openRun = this.runOpenRefresh();
    return this.openRun;
  }

  private publishOpenOutcome(outcome: OpenRefreshOutcome): void {
    this.outcome = outcome;
    for (const l of [...this.openListeners]) l(outcome);
  }

  onOpenRefresh(listener: (outcome: OpenRefreshOutcome) => void): () => void {
    this.openListeners.add(listener);
    if (this.outcome) listener(this.outcome);
    return () => this.openListeners.delete(listener);
  }

  /**
   * Everything the shared runtime does when it starts (in `Office.onReady`, with the pane possibly
   * hidden): follow the selection for the ribbon, refresh the flagged tables, and bring the
   * startup behaviour in line with the flags. Runs once per runtime; never throws.
   */
  start(): Promise<OpenRefreshOutcome> {
    if (!this.shared) return Promise.resolve({ state: "none" });
    this.trackSelection();
    this.openRun ??= this.runOpenRefresh();
    return this.openRun;
  }

  private async runOpenRefresh(): Promise<OpenRefreshOutcome> {
    let outcome: OpenRefreshOutcome;
    let anyFlagged = false;
    try {
      const engine = await this.engine();
      // Issue #26: a refresh that died mid-write (Excel reloaded the add-in) is put back before anything else.
      if (typeof engine.recoverInterrupted === "function") {
        this.recovery = await engine.recoverInterrupted();
        // Issue #35: a marker recovery ignored (planted, damaged or stale) is said once, here; it is removed.
        for (const r of this.recovery) if (r.outcome === "ignored" || r.outcome === "failed") this.opts.onError?.("recovery", new Error(r.message ?? r.outcome));
      }
      outcome = await refreshFlaggedTables({
        listBindings: async () => {
          const stored = await engine.listBindings();
          this.lastFlagged = stored.bindings.filter((b) => b.refreshOnOpen === true);
          anyFlagged = this.lastFlagged.length > 0;
          return stored;
        },
        connectionFor: (b) => this.connectionFor(b),
        // Never throws (Engine.refreshOne reports every error as a failed table), so one table's Excel
        // error never stops the tables after it (issue #21, item 17).
        // `claim`: the table's lock is taken before anything is fetched, so co-authors opening the
        // workbook together refresh each flagged table once (issue #26, hazard 7).
        refreshOne: (b, conn) => engine.refreshOne(b.id, conn, { secrets: this.store.allSecrets(), holder: OPEN_HOLDER, binding: b, claim: true }),
        lock: this.lock,
        consent: (flagged) => this.openConsent(flagged),
      });
    } catch (e) {
      this.opts.onError?.("refresh on open", e);
      outcome = { state: "none" };
    }
    // The open path only ever turns refresh on open ON (issue #26, hazard 7): a copy that does not
    // show a flag yet (a co-author's tick still on its way) must not turn it off for the document.
    // Only the user clearing the last flag in the pane sets `none` (setRefreshOnOpen).
    if (anyFlagged) {
      try {
        await this.syncStartup(true);
      } catch (e) {
        this.opts.onError?.("startup behaviour", e);
      }
    }
    this.publishOpenOutcome(outcome);
    return outcome;
  }

  /** This device's connection for a bound table (the same rule as every refresh). */
  connectionFor(binding: Binding): Connection | null {
    const id = resolveConnectionId(binding, this.store.list());
    return id ? this.store.connection(id) : null;
  }

  /**
   * Refreshes one table with this device's connection; a report says so when there is none.
   * @param holder who refreshes, named to another runtime that finds the table locked (issue #21, item 13).
   */
  async refreshBinding(binding: Binding, now: Date = new Date(), holder = "the task pane"): Promise<RefreshReport> {
    const conn = this.connectionFor(binding);
    if (!conn) {
      return {
        bindingId: binding.id,
        tableName: binding.tableName,
        outcome: "failed",
        rowCount: binding.rowCount,
        failure: { at: now.toISOString(), code: "no_connection", message: `No connection on this device for ${binding.environment}${binding.companyId ? ` (company ${binding.companyId})` : ""}.` },
        warnings: [],
        binding,
      };
    }
    const engine = await this.engine();
    return engine.refreshOne(binding.id, conn, { secrets: this.store.allSecrets(), holder, binding });
  }

  /** Follows the selection (DocumentSelectionChanged) so "Refresh this table" is enabled only on a table. */
  trackSelection(): void {
    if (this.tracking || !this.ribbon.supported) return;
    const doc = this.opts.office?.context?.document;
    if (typeof doc?.addHandlerAsync !== "function") return;
    this.tracking = true;
    const type = this.opts.office?.EventType?.DocumentSelectionChanged ?? "documentSelectionChanged";
    doc.addHandlerAsync(type, () => this.bindingsChanged());
    this.bindingsChanged();
  }

  /** Looks up the table under the selection again (coalesced: one lookup at a time, the last wins). */
  bindingsChanged(): void {
    if (!this.ribbon.supported) return;
    if (this.selectionRun) {
      this.selectionAgain = true;
      return;
    }
    const lookUp = async (): Promise<void> => {
      do {
        this.selectionAgain = false;
        let inTable = false;
        try {
          const engine = await this.engine();
          inTable = (await engine.bindingAtSelection()) !== null;
        } catch (e) {
          this.opts.onError?.("selection", e);
        }
        await this.ribbon.set({ tableAtSelection: inTable });
      } while (this.selectionAgain);
    };
    this.selectionRun = lookUp().finally(() => {
      this.selectionRun = null;
    });
  }

  /** Resolves when the selection lookups queued so far are done (tests, the preview). */
  async idle(): Promise<void> {
    while (this.selectionRun) await this.selectionRun;
  }
}

let instance: AddinRuntime | null = null;

/** The runtime of this JavaScript realm, created on first use (after `Office.onReady`). */
export function addinRuntime(): AddinRuntime {
  if (!instance) {
    const office = typeof Office === "undefined" ? undefined : (Office as unknown as OfficeLike);
    const { storage, persistent } = deviceStorage(() => window.localStorage);
    instance = new AddinRuntime({
      office,
      storage,
      persistent,
      loadEngine: () => import(/* webpackChunkName: "engine" */ "./engine").then((m) => m.createEngine()),
      documentId: {
        read: () => runExcel((context) => readDocumentId(context)),
        ensure: () => runExcel((context) => ensureDocumentId(context)),
      },
      onError: (where, e) => console.warn(`PPM for Excel (${where}):`, e instanceof Error ? e.message : e),
    });
  }
  return instance;
}
