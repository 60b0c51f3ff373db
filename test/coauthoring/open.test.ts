/**
 * Issue #26, hazard 7, on the two-client host with the reference service over 127.0.0.1: two
 * co-authors opening the workbook within 1 s fetch and write each flagged table at most once, and the
 * open path never turns refresh on open off (a copy that does not show a co-author's flag yet never
 * calls `setStartupBehavior(none)`).
 *
 * Each client's runtime is an `AddinRuntime` whose `Excel.run` reaches that client's copy: the
 * global `Excel` routes by the async context the runtime runs in (`AsyncLocalStorage`), as each
 * co-author's add-in has its own `Excel`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { AddinRuntime } from "../../src/addin/runtime";
import { createEngine } from "../../src/addin/engine";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, createExcelNamespace } from "../../src/emulator";
import { CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import * as lockModule from "../../src/workbook/lock";
import { MemoryStorage } from "../helpers/memoryStorage";
import { fakeOffice } from "./helpers";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";

describe("hazard 7: refresh on open at most once across co-authors, never turned off by the open path", () => {
  let service: ReferenceService;
  const g = globalThis as unknown as { Excel?: unknown };
  const savedExcel = g.Excel;
  const savedPropagation = lockModule.lockTiming.propagationMs;
  const als = new AsyncLocalStorage<CoauthorClient>();
  let single: InstanceType<typeof Workbook>;

  const control = (path: string, method = "POST") => fetch(`${service.url}/__control/${path}`, { method, headers: CONTROL }).then((r) => r.json() as Promise<unknown>);
  const exportsOf = async (dataset: string) =>
    ((await control("requests", "GET")) as { requests: Array<{ method: string; path: string; status: number }> }).requests.filter((r) => r.method === "GET" && r.path.startsWith(`/api/bi/v1/${dataset}`));

  beforeAll(async () => {
    service = await startReferenceService({ port: 0, quiet: true });
    // Each test sets the lock's bound just above its d (the default is 5 s), so the tests run in real time.
    const routed = Object.create(createExcelNamespace(new Workbook({}))) as Record<string, unknown>;
    Object.defineProperty(routed, "run", {
      value: (...args: unknown[]) => {
        const client = als.getStore();
        const ns = createExcelNamespace(client ? client.workbook : single) as unknown as { run(...a: unknown[]): unknown };
        return ns.run(...args);
      },
    });
    g.Excel = routed;
  });
  // Each test models runtimes that have just started (the lock's "started recently" clock is the module's load otherwise:
  // past 30 s on a slow machine, the short wait applied and both clients refreshed).
  beforeEach(() => lockModule.resetLockMemory());
  afterAll(async () => {
    g.Excel = savedExcel;
    lockModule.lockTiming.propagationMs = savedPropagation;
    await service.close();
  });

  /** A workbook with financials imported and (optionally) flagged, and the storage of the device that did it. */
  async function prepared(flag: boolean): Promise<{ storage: MemoryStorage; id: string }> {
    await control("reset");
    single = new Workbook({});
    const storage = new MemoryStorage();
    const rt = new AddinRuntime({ office: fakeOffice().office, storage, loadEngine: async () => createEngine() });
    rt.store.save({ name: "Acme", baseUrl: service.url, token: TOKEN });
    const conn = rt.store.connection(rt.store.list()[0].id)!;
    const engine = await rt.engine();
    await engine.importSource({ connection: conn, companyId: "acme", query: null, destination: { kind: "newSheet" }, signal: new AbortController().signal, secrets: rt.store.allSecrets(), onProgress: () => undefined, source: { kind: "dataset", key: "financials", format: "json" } });
    const id = (await engine.listBindings()).bindings[0].id;
    if (flag) await rt.setRefreshOnOpen(id, true);
    return { storage, id };
  }

  /** A copy of a device's storage (the co-author's own device, with the same connection and answers). */
  const copyOf = (s: MemoryStorage) => {
    const c = new MemoryStorage();
    for (const [k, v] of s.map) c.map.set(k, v);
    return c;
  };

  // Real time: the lock's bound set just above d (issue #35: whole-collection settings and Excel's lagging flag, d = 0, 0.5 s, 5 s).
  for (const d of [0, 500, 5_000]) it(`d = ${d} ms: two clients opening 300 ms apart: each flagged table is fetched and written once`, async () => {
    // The bound at least d (and 600 ms, so the first client is still refreshing when the second opens).
    lockModule.lockTiming.propagationMs = Math.max(600, d + 100);
    const { storage } = await prepared(true);
    await control("regenerate?company=acme&dataset=financials");
    await control("requests", "DELETE");
    const session = new CoauthoringSession(single, { delayMs: d });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    const start = (c: CoauthorClient, s: MemoryStorage) => als.run(c, () => new AddinRuntime({ office: fakeOffice().office, storage: s, loadEngine: async () => createEngine() }).start());
    const [a, b] = await Promise.all([start(ann, copyOf(storage)), new Promise((r) => setTimeout(r, 300)).then(() => start(ben, copyOf(storage)))]);
    await session.settled();
    const fetched = await exportsOf("financials");
    expect(fetched.length).toBeLessThanOrEqual(1);
    const sheet = session.document.sheets.find((s) => s.name !== "Sheet1")!.id;
    const writers = new Set(session.changes().filter((c) => (c.cells.get(sheet)?.length ?? 0) > 0 || c.sheets.has(sheet)).map((c) => c.origin));
    expect(writers.size).toBeLessThanOrEqual(1);
    // Exactly one of them refreshed it (the data was regenerated); the other was refused before sending anything.
    expect(fetched.map((r) => r.status)).toEqual([200]);
    const outcomes = [a, b].map((o) => (o.state === "done" ? o.reports.map((r) => r.outcome === "failed" ? r.failure?.code : r.outcome) : [o.state])).flat();
    expect(outcomes.sort()).toEqual(["table_busy", "updated"]);
  }, 90_000);

  it("a client whose copy does not show a co-author's flag yet never turns refresh on open off", async () => {
    lockModule.lockTiming.propagationMs = 600;
    const { storage, id } = await prepared(false);
    const session = new CoauthoringSession(single, { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    // Ann ticks the flag (her Office turns refresh on open on); Ben's runtime starts before it reaches him.
    const annOffice = fakeOffice("None");
    await als.run(ann, () => new AddinRuntime({ office: annOffice.office, storage: copyOf(storage), loadEngine: async () => createEngine() }).setRefreshOnOpen(id, true));
    expect(annOffice.rec.startupCalls).toEqual(["Load"]);
    const benOffice = fakeOffice(annOffice.rec.startup); // the document's startup behaviour is shared
    const outcome = await als.run(ben, () => new AddinRuntime({ office: benOffice.office, storage: copyOf(storage), loadEngine: async () => createEngine() }).start());
    expect(outcome).toEqual({ state: "none" });
    expect(benOffice.rec.startupCalls).toEqual([]);
    await session.settled();
  }, 30_000);
});
