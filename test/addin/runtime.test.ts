/**
 * The shared runtime (issue 17) over real HTTP (reference service on 127.0.0.1) into the workbook
 * emulator, with a fake `Office` that records what Office was asked: startup behaviour, ribbon
 * updates, selection handlers and associated commands.
 */
import { AddinRuntime, RIBBON_TABLE_HOLDER, type OfficeLike } from "../../src/addin/runtime";
import { createEngine } from "../../src/addin/engine";
import { missingConnectionNote } from "../../src/addin/startup";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, EmulatedExcelError, createExcelNamespace, createRequestContext, inspect, loadWorkbook, serializeWorkbook, toWorkbookFile } from "../../src/emulator";
import { refreshTable } from "../../src/workbook/refresh";
import { readTableLock } from "../../src/workbook/lock";
import { sourceFromClient } from "../../src/refresh/source";
import { MemoryStorage } from "../helpers/memoryStorage";
import { fakeDialogUi, waitFor } from "../helpers/fakeDialog";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";

interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

/** A fake `Office` with the shared runtime (or without it), recording what the add-in asked. */
function fakeOffice(opts: { shared: boolean; startup?: string }) {
  // The ribbon commands' summary dialog (DialogApi 1.2: the page gets its text by messageChild).
  const dialog = fakeDialogUi("dialog");
  const rec = {
    startup: opts.startup ?? "None",
    startupCalls: [] as string[],
    ribbon: [] as Array<Record<string, boolean>>,
    selectionHandlers: [] as Array<(e: unknown) => void>,
    associated: new Map<string, (event: { completed(): void }) => void>(),
    ready: [] as Array<() => void>,
    dialog,
    /** The summaries the commands' dialogs showed (not their "working" state), in order. */
    get messages(): string[] {
      return dialog.shown().filter((m) => m.state !== "working").map((m) => m.text);
    },
  };
  const office = {
    context: {
      requirements: { isSetSupported: (name: string) => opts.shared || !["SharedRuntime", "RibbonApi"].includes(name) },
      document: { addHandlerAsync: (_type: string, handler: (e: unknown) => void) => rec.selectionHandlers.push(handler) },
      ui: dialog.ui,
    },
    addin: {
      setStartupBehavior: async (b: unknown) => {
        rec.startupCalls.push(String(b));
        rec.startup = String(b);
      },
      getStartupBehavior: async () => rec.startup,
    },
    ribbon: {
      requestUpdate: async (u: { tabs: Array<{ groups: Array<{ controls: Array<{ id: string; enabled: boolean }> }> }> }) => {
        rec.ribbon.push(Object.fromEntries(u.tabs[0].groups[0].controls.map((c) => [c.id, c.enabled])));
      },
    },
    StartupBehavior: { load: "Load", none: "None" },
    EventType: { DocumentSelectionChanged: "documentSelectionChanged" },
    actions: { associate: (name: string, fn: (event: { completed(): void }) => void) => rec.associated.set(name, fn) },
    onReady: (cb: () => void) => rec.ready.push(cb),
  };
  return { office, rec };
}

describe("shared runtime against the reference service", () => {
  let service: ReferenceService;
  const g = globalThis as unknown as { Excel?: unknown };
  const savedExcel = g.Excel;
  let wb: InstanceType<typeof Workbook>;
  let storage: MemoryStorage;

  const control = (path: string, method = "POST") => fetch(`${service.url}/__control/${path}`, { method, headers: CONTROL }).then((r) => r.json() as Promise<unknown>);
  const requests = async (): Promise<LoggedRequest[]> => ((await control("requests", "GET")) as { requests: LoggedRequest[] }).requests;
  const exportsOf = (log: LoggedRequest[], dataset: string) => log.filter((r) => r.method === "GET" && r.path.startsWith(`/api/bi/v1/${dataset}`));

  function runtime(office: OfficeLike, store = storage): AddinRuntime {
    return new AddinRuntime({ office, storage: store, loadEngine: async () => createEngine() });
  }

  /** A workbook with two bound tables (financials, resource_allocations) imported with the acme token. */
  async function importTwo(rt: AddinRuntime): Promise<{ financials: string; allocations: string }> {
    rt.store.save({ name: "Acme", baseUrl: service.url, token: TOKEN });
    const conn = rt.store.connection(rt.store.list()[0].id)!;
    const engine = await rt.engine();
    const base = { connection: conn, companyId: "acme", query: null, destination: { kind: "newSheet" } as const, signal: new AbortController().signal, secrets: rt.store.allSecrets(), onProgress: () => undefined };
    await engine.importSource({ ...base, source: { kind: "dataset", key: "financials", format: "json" } });
    await engine.importSource({ ...base, source: { kind: "dataset", key: "resource_allocations", format: "json" } });
    const { bindings } = await engine.listBindings();
    const id = (key: string) => bindings.find((b) => b.source.kind === "dataset" && b.source.key === key)!.id;
    return { financials: id("financials"), allocations: id("resource_allocations") };
  }

  /** "Closes" the workbook and opens the saved file again (a new workbook object from the file text). */
  function reopen(): string {
    const file = serializeWorkbook(wb);
    wb = loadWorkbook(file);
    g.Excel = createExcelNamespace(wb);
    return file;
  }

  /** Selects a cell as the user would (through the same `Excel` namespace). */
  async function select(sheetName: string, address: string, create = false): Promise<void> {
    await (g.Excel as { run<T>(fn: (ctx: Excel.RequestContext) => Promise<T>): Promise<T> }).run(async (ctx) => {
      const sheet = create ? ctx.workbook.worksheets.add(sheetName) : ctx.workbook.worksheets.getItem(sheetName);
      sheet.activate();
      sheet.getRange(address).select();
      await ctx.sync();
    });
  }

  beforeAll(async () => {
    service = await startReferenceService({ port: 0, quiet: true });
  });
  afterAll(async () => {
    g.Excel = savedExcel;
    await service.close();
  });
  beforeEach(async () => {
    await control("reset");
    wb = new Workbook({});
    g.Excel = createExcelNamespace(wb);
    storage = new MemoryStorage();
  });

  it("startup behaviour is set to load when the first table is flagged and back to none when the last one is cleared", async () => {
    const { office, rec } = fakeOffice({ shared: true });
    const rt = runtime(office);
    expect(rt.shared).toBe(true);
    expect(rt.startupSupported).toBe(true);
    const ids = await importTwo(rt);

    const first = await rt.setRefreshOnOpen(ids.financials, true);
    expect(first).toMatchObject({ state: "saved", flagged: 1, startup: "load" });
    expect(rec.startupCalls).toEqual(["Load"]);
    const second = await rt.setRefreshOnOpen(ids.allocations, true);
    expect(second).toMatchObject({ state: "saved", flagged: 2, startup: "unchanged" });
    const oneLeft = await rt.setRefreshOnOpen(ids.financials, false);
    expect(oneLeft).toMatchObject({ state: "saved", flagged: 1, startup: "unchanged" });
    expect(rec.startupCalls).toEqual(["Load"]);
    const none = await rt.setRefreshOnOpen(ids.allocations, false);
    expect(none).toMatchObject({ state: "saved", flagged: 0, startup: "none" });
    expect(rec.startupCalls).toEqual(["Load", "None"]);

    // The flag is a workbook setting of its own (issue #21: a refresh storing its binding never
    // erases it), travels with the file, and holds no token.
    await rt.setRefreshOnOpen(ids.allocations, true);
    const file = serializeWorkbook(wb);
    expect(file).not.toContain(TOKEN);
    const settings = (JSON.parse(file) as { settings: Array<[string, string]> }).settings;
    expect(settings.filter(([k]) => k.startsWith("ppm.open.")).map(([k, v]) => [k, v])).toEqual([
      [`ppm.open.${ids.financials}`, "false"],
      [`ppm.open.${ids.allocations}`, "true"],
    ]);
  });

  it("without SharedRuntime the flag is still stored, and Office is not asked (separate runtimes)", async () => {
    const { office, rec } = fakeOffice({ shared: false });
    const rt = runtime(office);
    expect(rt.shared).toBe(false);
    expect(rt.startupSupported).toBe(false);
    const ids = await importTwo(rt);
    await expect(rt.setRefreshOnOpen(ids.financials, true)).resolves.toMatchObject({ state: "saved", flagged: 1, startup: "unsupported" });
    expect(rec.startupCalls).toEqual([]);
    await expect(rt.start()).resolves.toEqual({ state: "none" });
  });

  it("on open, flagged tables refresh with one conditional request each, the others are not asked", async () => {
    const { office } = fakeOffice({ shared: true });
    const ids = await importTwo(runtime(office));
    await runtime(office).setRefreshOnOpen(ids.financials, true);

    // Unchanged export: one request, answered 304, nothing written.
    reopen();
    await control("requests", "DELETE");
    const { office: office2, rec: rec2 } = fakeOffice({ shared: true, startup: "Load" });
    const writesBefore = wb.stats.cellsWritten;
    const outcome = await runtime(office2).start();
    expect(outcome).toMatchObject({ state: "done", flagged: 1, missing: [] });
    if (outcome.state !== "done") throw new Error("unreachable");
    expect(outcome.reports.map((r) => [r.tableName, r.outcome])).toEqual([["ppm_financials", "unchanged"]]);
    let log = await requests();
    expect(exportsOf(log, "financials").map((r) => r.status)).toEqual([304]);
    expect(exportsOf(log, "resource_allocations")).toEqual([]);
    expect(wb.stats.cellsWritten - writesBefore).toBe(0);
    expect(rec2.startupCalls).toEqual([]); // already "Load": nothing to change

    // Regenerated export: the flagged table is rewritten (one request, 200), the other stays.
    await control("regenerate?company=acme&dataset=financials");
    await control("regenerate?company=acme&dataset=resource_allocations");
    reopen();
    await control("requests", "DELETE");
    const again = await runtime(fakeOffice({ shared: true, startup: "Load" }).office).start();
    if (again.state !== "done") throw new Error(`expected a run, got ${again.state}`);
    expect(again.reports.map((r) => [r.tableName, r.outcome])).toEqual([["ppm_financials", "updated"]]);
    log = await requests();
    expect(exportsOf(log, "financials").map((r) => r.status)).toEqual([200]);
    expect(exportsOf(log, "resource_allocations")).toEqual([]);
  });

  it("a failure on open is recorded in the binding (stale), never thrown", async () => {
    const { office } = fakeOffice({ shared: true });
    const ids = await importTwo(runtime(office));
    await runtime(office).setRefreshOnOpen(ids.allocations, true);
    await control(`fault?path=${encodeURIComponent("/api/bi/v1/resource_allocations")}&status=500&count=10`);
    reopen();
    const rt = runtime(fakeOffice({ shared: true, startup: "Load" }).office);
    const outcome = await rt.start();
    if (outcome.state !== "done") throw new Error(`expected a run, got ${outcome.state}`);
    expect(outcome.reports.map((r) => r.outcome)).toEqual(["failed"]);
    const { bindings } = await (await rt.engine()).listBindings();
    const b = bindings.find((x) => x.id === ids.allocations)!;
    expect(b.lastFailure).not.toBeNull();
    expect(b.refreshOnOpen).toBe(true);
    expect(JSON.stringify(b)).not.toContain(TOKEN);
  });

  it("issue #26: the runtime's start puts back a table whose refresh died mid-write (Excel reloaded the add-in) and removes what it left", async () => {
    const { office } = fakeOffice({ shared: true });
    const ids = await importTwo(runtime(office));
    const cell = (a: string) => inspect(wb, a).values[0][0];
    const sheet = (await runtime(office).engine().then((e) => e.listBindings())).bindings.find((b) => b.id === ids.financials)!.sheetName;
    const before = cell(`'${sheet}'!B3`);
    // A refresh 11 minutes ago (its lock has run out) whose runtime died half way through its writes.
    // From its first value write into the body on, none of its requests reaches Excel (nor its restore).
    let dying = false;
    wb.faultInjector = (op) => {
      dying ||= op.op === "set values" && op.path.startsWith(`'${sheet}'!`) && !op.path.endsWith("!A1");
      return dying ? new Error("the runtime is gone") : null;
    };
    await control("regenerate?company=acme&dataset=financials");
    const rt = runtime(office);
    const dead = await refreshTable(createRequestContext(wb), ids.financials, sourceFromClient((await rt.engine()).client(rt.store.connection(rt.store.list()[0].id)!)), { applyQuery: (t) => ({ table: t }), delta: false, now: () => new Date(Date.now() - 11 * 60_000) }).catch(() => null);
    wb.faultInjector = null;
    expect(dead?.outcome).not.toBe("updated");
    expect(String(cell(`'${sheet}'!A1`))).toMatch(/DATA INCOMPLETE/);
    const copyCells = () => toWorkbookFile(wb).sheets.filter((s) => s.name.startsWith("ppm_rb_")).reduce((n, s) => n + s.cells.length, 0);
    expect(copyCells()).toBeGreaterThan(0);
    // A lock's lease runs from the moment a runtime first sees it (lock.ts): this process saw the dead
    // refresh's lock 11 minutes ago, so at this start it has run out.
    const tableName = (await runtime(office).engine().then((e) => e.listBindings())).bindings.find((b) => b.id === ids.financials)!.tableName;
    expect((await readTableLock(createRequestContext(wb), tableName, new Date(Date.now() - 11 * 60_000)))?.holds).toBe(true);
    reopen();
    await runtime(fakeOffice({ shared: true, startup: "Load" }).office).start();
    expect(String(cell(`'${sheet}'!A1`))).toMatch(/interrupted.*previous data was restored/);
    expect(cell(`'${sheet}'!B3`)).toBe(before);
    expect(copyCells()).toBe(0);
    expect([...wb.settings.keys()].filter((k) => k.startsWith("ppm.refreshing.") || k.startsWith("ppm.lock."))).toEqual([]);
  });

  it("issue #21, item 17: an Excel error while refreshing one flagged table does not stop the others; each is attempted and reported", async () => {
    const { office } = fakeOffice({ shared: true });
    const ids = await importTwo(runtime(office));
    await runtime(office).setRefreshOnOpen(ids.financials, true);
    await runtime(office).setRefreshOnOpen(ids.allocations, true);
    await control("regenerate?company=acme&dataset=financials");
    await control("regenerate?company=acme&dataset=resource_allocations");
    reopen();
    // The fifth read of the settings is the first table's refresh reading its binding (after the
    // recovery of interrupted refreshes at start, the open path's list, and its claim of the table
    // re-reading the bindings, issue #26): it fails. (No ribbon: nothing else reads the settings meanwhile.)
    const { ribbon: _ribbon, ...noRibbon } = fakeOffice({ shared: true, startup: "Load" }).office;
    void _ribbon;
    let loads = 0;
    wb.faultInjector = (op) => (op.path === "settings" && op.op === "load" && ++loads === 5 ? new EmulatedExcelError("GeneralException", "An internal error has occurred.") : null);
    const outcome = await runtime(noRibbon).start();
    wb.faultInjector = null;
    if (outcome.state !== "done") throw new Error(`expected a run, got ${outcome.state}`);
    expect(outcome.reports.map((r) => [r.tableName, r.outcome])).toEqual([
      ["ppm_financials", "failed"],
      ["ppm_resource_allocations", "updated"],
    ]);
    expect(outcome.reports[0].failure?.code).toBe("GeneralException");
  });

  it("issue #21, item 13: the lock names who holds it — the ribbon's Refresh this table, the refresh on open — not the task pane", async () => {
    const { office } = fakeOffice({ shared: false });
    const ids = await importTwo(runtime(office));
    await runtime(office).setRefreshOnOpen(ids.financials, true);
    const holders: string[] = [];
    wb.faultInjector = (op) => {
      const [key, value] = op.args as [unknown, unknown];
      if (op.op === "add" && typeof key === "string" && key.startsWith("ppm.lock.")) holders.push((JSON.parse(String(value)) as { holder: string }).holder);
      return null;
    };
    const rt = runtime(office);
    const b = (await (await rt.engine()).listBindings()).bindings.find((x) => x.id === ids.financials)!;
    await control("regenerate?company=acme&dataset=financials");
    expect((await rt.refreshBinding(b, new Date(), RIBBON_TABLE_HOLDER)).outcome).toBe("updated");
    await control("regenerate?company=acme&dataset=financials");
    reopen();
    wb.faultInjector = (op) => {
      const [key, value] = op.args as [unknown, unknown];
      if (op.op === "add" && typeof key === "string" && key.startsWith("ppm.lock.")) holders.push((JSON.parse(String(value)) as { holder: string }).holder);
      return null;
    };
    const outcome = await runtime(fakeOffice({ shared: true, startup: "Load" }).office).start();
    wb.faultInjector = null;
    expect(outcome).toMatchObject({ state: "done", flagged: 1 });
    expect([...new Set(holders)]).toEqual(["Refresh this table on the ribbon", "the refresh when this workbook opened"]);
  });

  it("opened on a device without a connection: one note for all flagged tables, nothing requested or written", async () => {
    const { office } = fakeOffice({ shared: true });
    const ids = await importTwo(runtime(office));
    await runtime(office).setRefreshOnOpen(ids.financials, true);
    await runtime(office).setRefreshOnOpen(ids.allocations, true);
    const file = reopen();
    await control("requests", "DELETE");
    const otherDevice = new MemoryStorage();
    const outcome = await runtime(fakeOffice({ shared: true, startup: "Load" }).office, otherDevice).start();
    if (outcome.state !== "done") throw new Error(`expected a run, got ${outcome.state}`);
    expect(outcome.reports).toEqual([]);
    expect(outcome.missing).toEqual([{ environment: service.url, companyId: "acme", tables: ["ppm_financials", "ppm_resource_allocations"], reason: "no_connection" }]);
    expect(missingConnectionNote(outcome.missing)).toBe(
      `2 tables in this workbook refresh when it opens, but this device has no connection for ${service.url} (company acme). Nothing was sent. The data shown is from the last refresh; add a connection with your own token to refresh it.`,
    );
    expect((await requests()).filter((r) => r.path.startsWith("/api/"))).toEqual([]);
    expect(serializeWorkbook(wb)).toBe(file);
  });

  it("#21 item 16: a forgotten token sends nothing on open, marks no table failed, and shows the one quiet note", async () => {
    const { office } = fakeOffice({ shared: true });
    const rt0 = runtime(office);
    const ids = await importTwo(rt0);
    await rt0.setRefreshOnOpen(ids.financials, true);
    await rt0.setRefreshOnOpen(ids.allocations, true);
    const connId = rt0.store.list()[0].id;
    rt0.store.forgetToken(connId);
    const file = reopen();
    await control("requests", "DELETE");
    const rt = runtime(fakeOffice({ shared: true, startup: "Load" }).office);
    const outcome = await rt.start();
    if (outcome.state !== "done") throw new Error(`expected a run, got ${outcome.state}`);
    expect(outcome.reports).toEqual([]);
    expect(outcome.missing).toEqual([{ environment: service.url, companyId: "acme", tables: ["ppm_financials", "ppm_resource_allocations"], reason: "no_token", connectionId: connId }]);
    expect(missingConnectionNote(outcome.missing)).toBe(
      `2 tables in this workbook refresh when it opens, but the connection for ${service.url} (company acme) has no token on this device. Nothing was sent. The data shown is from the last refresh; update the connection's token to refresh it.`,
    );
    // Nothing sent (no request without credentials, no 401s), nothing written, no table stamped "Not refreshed".
    expect((await requests()).filter((r) => r.path.startsWith("/api/"))).toEqual([]);
    expect(serializeWorkbook(wb)).toBe(file);
    const { bindings } = await (await rt.engine()).listBindings();
    expect(bindings.map((b) => b.lastFailure)).toEqual([null, null]);
  });

  describe("consent before the first automatic refresh of a workbook not flagged on this device (#22 item 6)", () => {
    /** Device A imports and flags; returns a reopened workbook and device B's storage with its own acme connection. */
    async function flaggedElsewhere(): Promise<{ ids: { financials: string; allocations: string }; deviceB: MemoryStorage }> {
      const rtA = runtime(fakeOffice({ shared: true }).office);
      const ids = await importTwo(rtA);
      await rtA.setRefreshOnOpen(ids.financials, true);
      const deviceB = new MemoryStorage();
      const rtB0 = runtime(fakeOffice({ shared: true }).office, deviceB);
      const c = rtB0.store.save({ name: "My acme", baseUrl: service.url, token: TOKEN });
      rtB0.store.setCompanyId(c.id, "acme");
      reopen();
      await control("requests", "DELETE");
      return { ids, deviceB };
    }

    it("asks first and sends nothing until the user agrees; then refreshes, and remembers the answer on the device", async () => {
      const { deviceB } = await flaggedElsewhere();
      const file = serializeWorkbook(wb);
      const rt = runtime(fakeOffice({ shared: true, startup: "Load" }).office, deviceB);
      const seen: string[] = [];
      rt.onOpenRefresh((o) => seen.push(o.state));
      const outcome = await rt.start();
      expect(outcome).toMatchObject({ state: "consent", flagged: 1, tables: [{ tableName: "ppm_financials", environment: service.url, companyId: "acme" }] });
      expect((await requests()).filter((r) => r.path.startsWith("/api/"))).toEqual([]);
      expect(serializeWorkbook(wb)).toBe(file);
      // The user agrees in the pane: the refresh runs now, with one conditional request.
      const after = await rt.answerOpenConsent(true);
      expect(after.state).toBe("done");
      if (after.state !== "done") throw new Error("unreachable");
      expect(after.reports.map((r) => [r.tableName, r.outcome])).toEqual([["ppm_financials", "unchanged"]]);
      expect(exportsOf(await requests(), "financials").map((r) => r.status)).toEqual([304]);
      expect(seen).toEqual(["consent", "done"]);
      // Opened again on this device: no question, it refreshes.
      reopen();
      const again = await runtime(fakeOffice({ shared: true, startup: "Load" }).office, deviceB).start();
      expect(again.state).toBe("done");
      // What is stored is an answer under a hashed key: no table name, address or token.
      const stored = [...deviceB.map.entries()].filter(([k]) => k.includes("openConsent"));
      expect(stored).toHaveLength(1);
      expect(JSON.stringify(stored)).not.toMatch(/financials|127\.0\.0\.1|demo-acme-token/);
    });

    it("a 'no' is remembered: nothing is sent on later openings either, until the user says yes", async () => {
      const { deviceB } = await flaggedElsewhere();
      const rt = runtime(fakeOffice({ shared: true, startup: "Load" }).office, deviceB);
      expect((await rt.start()).state).toBe("consent");
      expect((await rt.answerOpenConsent(false)).state).toBe("declined");
      reopen();
      const later = runtime(fakeOffice({ shared: true, startup: "Load" }).office, deviceB);
      expect((await later.start()).state).toBe("declined");
      expect((await requests()).filter((r) => r.path.startsWith("/api/"))).toEqual([]);
      expect((await later.answerOpenConsent(true)).state).toBe("done");
      expect(exportsOf(await requests(), "financials")).toHaveLength(1);
    });

    it("another document address, or a table flagged elsewhere later, is asked about again", async () => {
      const { ids, deviceB } = await flaggedElsewhere();
      const at = (url: string | null) => {
        const f = fakeOffice({ shared: true, startup: "Load" });
        (f.office.context.document as { url?: string | null }).url = url;
        return runtime(f.office, deviceB);
      };
      const first = at("https://contoso.sharepoint.com/report.xlsx");
      expect((await first.start()).state).toBe("consent");
      await first.answerOpenConsent(true);
      reopen();
      expect((await at("https://contoso.sharepoint.com/report.xlsx").start()).state).toBe("done");
      reopen();
      // The same tables in a file at another address (a copy someone sent): asked again.
      expect((await at("https://evil.example.net/copy.xlsx").start()).state).toBe("consent");
      // Device A flags a second table: this device has not seen that workbook yet.
      await runtime(fakeOffice({ shared: true }).office).setRefreshOnOpen(ids.allocations, true);
      reopen();
      await control("requests", "DELETE");
      expect((await at("https://contoso.sharepoint.com/report.xlsx").start()).state).toBe("consent");
      expect((await requests()).filter((r) => r.path.startsWith("/api/"))).toEqual([]);
    });

    it("flags set in the pane on this device count as agreement: the existing journey of reopening refreshes without a question", async () => {
      const { office } = fakeOffice({ shared: true });
      const ids = await importTwo(runtime(office));
      await runtime(office).setRefreshOnOpen(ids.financials, true);
      reopen();
      expect((await runtime(fakeOffice({ shared: true, startup: "Load" }).office).start()).state).toBe("done");
    });
  });

  it("the ribbon follows the selection: Refresh this table is enabled only inside a bound table", async () => {
    const { office, rec } = fakeOffice({ shared: true });
    const rt = runtime(office);
    await importTwo(rt);
    // An empty sheet selected: not in a table.
    await select("Notes", "B2", true);
    await rt.start();
    await rt.idle();
    expect(rec.selectionHandlers).toHaveLength(1);
    expect(rt.ribbon.intended).toEqual({ refreshAll: true, refreshTable: false });
    expect(rec.ribbon.at(-1)).toEqual({ "PPM.RefreshAll": true, "PPM.RefreshTable": false });

    await select("financials (json)", "B5");
    rec.selectionHandlers[0]({ type: "documentSelectionChanged" });
    await rt.idle();
    expect(rec.ribbon.at(-1)).toEqual({ "PPM.RefreshAll": true, "PPM.RefreshTable": true });

    // While a refresh holds the lock, both are disabled; afterwards they come back.
    const release = rt.lock.tryAcquire("pane", "Refreshing ppm_financials…")!;
    await Promise.resolve();
    await rt.ribbon.set({});
    expect(rec.ribbon.at(-1)).toEqual({ "PPM.RefreshAll": false, "PPM.RefreshTable": false });
    release();
    await rt.ribbon.set({});
    await rt.idle();
    expect(rec.ribbon.at(-1)).toEqual({ "PPM.RefreshAll": true, "PPM.RefreshTable": true });
  });

  it("with the shared runtime, the ribbon's commands and the pane hold ONE runtime: one engine, one lock", async () => {
    const { office, rec } = fakeOffice({ shared: true });
    const g2 = globalThis as unknown as { Office?: unknown; window?: unknown };
    const saved = { Office: g2.Office, window: g2.window };
    g2.Office = office;
    g2.window = { localStorage: storage, location: { href: "https://addin.example.com/taskpane.html" } };
    try {
      let runtimeModule!: typeof import("../../src/addin/runtime");
      await jest.isolateModulesAsync(async () => {
        // taskpane.html's two bundles, in one module registry (webpack runtimeChunk "single").
        await import("../../src/commands/commands");
        runtimeModule = await import("../../src/addin/runtime");
      });
      rec.ready.forEach((cb) => cb());
      expect([...rec.associated.keys()].sort()).toEqual(["refreshAll", "refreshTable"]);
      // What taskpane.ts takes (mountApp's store, loadEngine and the runJob lock):
      const pane = runtimeModule.addinRuntime();
      expect(runtimeModule.addinRuntime()).toBe(pane);
      expect(pane.shared).toBe(true);
      await importTwo(pane);
      const engine = await pane.engine();
      const originalRefreshAll = engine.refreshAll.bind(engine);
      const refreshAll = jest.spyOn(engine, "refreshAll");
      const refreshOne = jest.spyOn(engine, "refreshOne");
      // Runs a command, waits for its summary to reach the dialog's page, then closes the dialog as the user would.
      const invoke = async (name: string) => {
        const before = rec.messages.length;
        await new Promise<void>((resolve) => rec.associated.get(name)!({ completed: () => resolve() }));
        await waitFor(() => rec.messages.length > before);
        for (const d of rec.dialog.dialogs) if (!d.closed) d.clickClose();
      };

      // The pane's refresh holds the lock: the ribbon's Refresh all is refused, and shown disabled.
      const release = pane.lock.tryAcquire("pane", "Refreshing all tables…")!;
      await pane.ribbon.set({});
      expect(rec.ribbon.at(-1)).toMatchObject({ "PPM.RefreshAll": false });
      await invoke("refreshAll");
      expect(rec.messages.at(-1)).toBe("Refresh all could not run: A refresh started in the task pane is still running (Refreshing all tables…). Try again when it has finished.");
      expect(refreshAll).not.toHaveBeenCalled();
      release();

      // Free again: the ribbon's command runs on the pane's engine instance, holding the same lock.
      let holderDuringRun: string | undefined;
      refreshAll.mockImplementationOnce((...args) => {
        holderDuringRun = pane.lock.holder?.owner;
        return originalRefreshAll(...args);
      });
      await invoke("refreshAll");
      expect(refreshAll).toHaveBeenCalledTimes(1);
      expect(holderDuringRun).toBe("ribbon");
      expect(rec.messages.at(-1)).toMatch(/^0 updated, 2 unchanged, 0 failed/);
      expect(pane.lock.busy).toBe(false);

      // "Refresh this table" on the table under the selection, same engine.
      await select("financials (json)", "C4");
      await invoke("refreshTable");
      expect(refreshOne).toHaveBeenCalledTimes(1);
      expect(rec.messages.at(-1)).toMatch(/^0 updated, 1 unchanged, 0 failed/);
    } finally {
      g2.Office = saved.Office;
      g2.window = saved.window;
    }
  });
});
