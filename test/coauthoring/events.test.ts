/**
 * Issue #26, hazard 9: Excel's settings-changed event on the two-client host. Microsoft's library
 * registers `Excel.SettingCollection.onSettingsChanged` through the Common API's
 * `Office.context.document.settings.addHandlerAsync(Office.EventType.SettingsChanged, …)`; the
 * emulator answers that (src/emulator/library.ts) and the co-authoring host raises the event when a
 * co-author's settings change reaches this copy, and for this client's own change (the stricter
 * reading), only on the web profile and only while co-authors are present (Office.SettingsChangedEventArgs).
 * Then the add-in's listener (`watchSettings`, what the Refresh tab registers) is called by the event
 * — a co-author taking a table's lock or changing a binding — well before the pane's 15 s poll, and
 * what the pane then reads names the new holder.
 */
import { Workbook, createExcelNamespace, createRequestContext, setDefaultWorkbook } from "../../src/emulator";
import { COLLAB_FLAG_DELAY_MS, CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import { collaboration, Engine, watchSettings } from "../../src/addin/engine";
import { acquireTableLock, resetLockMemory } from "../../src/workbook/lock";
import { setRefreshOnOpen } from "../../src/workbook/openFlags";
import { importTable } from "../../src/workbook/writer";
import { collabWatch, COLLAB_POLL_MS, holderText, latestOnly } from "../../src/taskpane/collabWatch";
import { bindingDraft, finRows, finTable, TOKEN } from "../workbook/helpers";
import { drive } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
/** The Refresh tab's poll while co-authoring (src/taskpane/collabWatch.ts). */
const POLL_MS = COLLAB_POLL_MS;

async function startWorkbook(platform?: "web" | "windows"): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025, ...(platform ? { platform } : {}) });
  const t = finTable(finRows(5));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
  return wb;
}

/** Registers a handler with Microsoft's library in `client`'s runtime: `settings.onSettingsChanged.add`. */
async function listen(client: CoauthorClient, calls: number[]): Promise<void> {
  setDefaultWorkbook(client.workbook); // this realm's Office document is the listening client's copy
  await (createExcelNamespace(client.workbook) as unknown as typeof Excel).run(async (context) => {
    context.workbook.settings.onSettingsChanged.add(async (args) => {
      expect(args.settings).toBeDefined();
      calls.push(Date.now());
    });
    await context.sync();
  });
}

/** One request of `client`'s runtime that stores a setting. */
async function addSetting(client: CoauthorClient, key: string, value: unknown): Promise<void> {
  const context = createRequestContext(client.workbook);
  context.workbook.settings.add(key, value);
  await context.sync();
}

/** A session of Ann and Ben (d = `delayMs`) over the start workbook. */
async function annAndBen(delayMs: number, platform?: "windows") {
  const session = new CoauthoringSession(await startWorkbook(platform), { delayMs, ...(platform ? { workbook: { platform } } : {}) });
  return { session, ann: session.addClient({ name: "Ann" }), ben: session.addClient({ name: "Ben" }) };
}

/** Every test: jest's fake clock at T0, and this realm's Excel and Office document put back after it. */
const g = globalThis as unknown as { Excel?: unknown };
const savedExcel = g.Excel;
beforeEach(() => {
  jest.useFakeTimers();
  jest.setSystemTime(T0);
  resetLockMemory();
});
afterEach(() => {
  g.Excel = savedExcel;
  setDefaultWorkbook(null);
  jest.useRealTimers();
});

describe("the settings-changed event on the two-client host", () => {
  it("a co-author's settings change fires it once it reaches this copy (after d, not before); this client's own change fires it too", async () => {
    const { ann, ben } = await annAndBen(2_000);
    const calls: number[] = [];
    await listen(ann, calls);
    await addSetting(ben, "ppm.test", "from Ben");
    await jest.advanceTimersByTimeAsync(1_999);
    expect(calls).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([T0.getTime() + 2_000]);
    // A change of cells only (no setting) raises nothing.
    const bctx = createRequestContext(ben.workbook);
    bctx.workbook.worksheets.getItem("financials (json)").getRange("Z1").values = [["x"]];
    await bctx.sync();
    await jest.advanceTimersByTimeAsync(2_000);
    expect(calls).toHaveLength(1);
    // Ann's own settings change: raised in her copy too (Microsoft does not say; the stricter reading).
    await addSetting(ann, "ppm.test2", "from Ann");
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
  });

  it("registration succeeds everywhere; the event never fires without co-authors, nor on desktop Excel", async () => {
    const alone = new CoauthoringSession(await startWorkbook(), { delayMs: 0 });
    const ann = alone.addClient({ name: "Ann" });
    const calls: number[] = [];
    await listen(ann, calls);
    await addSetting(ann, "ppm.test", "alone");
    await jest.advanceTimersByTimeAsync(100);
    expect(calls).toEqual([]);

    const { ann: dAnn, ben: dBen } = await annAndBen(0, "windows");
    const dCalls: number[] = [];
    await listen(dAnn, dCalls);
    await addSetting(dBen, "ppm.test", "desktop");
    await jest.advanceTimersByTimeAsync(100);
    expect(dAnn.workbook.settings.get("ppm.test")).toBe(JSON.stringify("desktop"));
    expect(dCalls).toEqual([]);
  });

  it("an older write arriving late changes nothing in this copy and raises nothing", async () => {
    const { ann, ben } = await annAndBen(1_000);
    const calls: number[] = [];
    await addSetting(ben, "ppm.k", "Ben's, older");
    await addSetting(ann, "ppm.k", "Ann's, newer");
    await listen(ann, calls);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(ann.workbook.settings.get("ppm.k")).toBe(JSON.stringify("Ann's, newer"));
    expect(calls).toEqual([]);
  });
});

describe("the add-in listens: a co-author's lock or binding change reaches the pane's reading before any poll", () => {
  it("Ben takes the table's lock: Ann's listener is called by the event d after his write, and the holder line names Ben", async () => {
    const d = 500;
    const { session, ann, ben } = await annAndBen(d);
    g.Excel = createExcelNamespace(ann.workbook);
    setDefaultWorkbook(ann.workbook);
    const seen: Array<{ at: number; holder: string | null }> = [];
    const stop = await watchSettings(() => {
      void collaboration().then((c) => seen.push({ at: Date.now(), holder: c.holders.b1 ? holderText(c.holders.b1, new Date()) : null }));
    });
    expect(typeof stop).toBe("function");
    const [lock] = await drive([acquireTableLock(createRequestContext(ben.workbook), "ppm_financials", { holder: "Ben's task pane" })]);
    expect(lock.status).toBe("fulfilled");
    const written = session.changes().find((c) => c.origin === ben.id && c.settings.some(([k]) => k === "ppm.lock.ppm_financials"))!;
    expect(written).toBeDefined();
    // The first reading that names Ben came from the event, long before the 15 s poll.
    const first = seen.find((s) => s.holder !== null);
    expect(first).toBeDefined();
    expect(first!.at - T0.getTime()).toBeLessThan(POLL_MS);
    expect(first!.at - T0.getTime()).toBeLessThanOrEqual(d + 100);
    expect(first!.holder).toMatch(/^Being refreshed by Ben's task pane since /);
    // Stopped (the library unregisters through removeHandlerAsync): a later change calls nothing.
    stop!();
    await jest.advanceTimersByTimeAsync(0);
    const count = seen.length;
    await addSetting(ben, "ppm.after", "stopped");
    await jest.advanceTimersByTimeAsync(d + 100);
    expect(ann.workbook.settings.has("ppm.after")).toBe(true);
    expect(seen).toHaveLength(count);
  });

  it("the Refresh tab's watch (collabWatch, as the pane wires it): Ben's lock reaches Ann's holder line by the event, before the poll's first tick", async () => {
    const d = 500;
    const { ann, ben } = await annAndBen(d);
    // Excel's collaboration flag lags (issue #35): the poll starts once it says co-authors are here.
    await jest.advanceTimersByTimeAsync(COLLAB_FLAG_DELAY_MS);
    const t1 = Date.now();
    g.Excel = createExcelNamespace(ann.workbook);
    setDefaultWorkbook(ann.workbook);
    /** What the pane's list shows, each time it is read: [time, holder lines]. */
    const view: Array<{ at: number; lines: string[] }> = [];
    const watcher = collabWatch({
      engine: async () => new Engine(),
      // The pane's loadTables: reads the list and the collaboration state, renders the holder lines.
      reload: async () => {
        const c = await watcher.read();
        view.push({ at: Date.now(), lines: Object.values(c.holders).map((x) => holderText(x, new Date())) });
      },
      hidden: () => false,
    });
    // The tab is shown: one reading, the listener registered, the poll started (co-authoring is active).
    await watcher.watch();
    const c0 = await watcher.read();
    expect(c0.active).toBe(true);
    expect(watcher.polling).toBe(true);
    const [lock] = await drive([acquireTableLock(createRequestContext(ben.workbook), "ppm_financials", { holder: "Ben's task pane" })]);
    expect(lock.status).toBe("fulfilled");
    expect(Date.now() - t1).toBeLessThan(POLL_MS); // the poll has not ticked yet
    const shown = view.find((v) => v.lines.length > 0);
    expect(shown).toEqual({ at: t1 + d, lines: ["Being refreshed by Ben's task pane since just now"] });
    // Ben leaves: the next reading stops the poll.
    ben.close();
    await jest.advanceTimersByTimeAsync(COLLAB_FLAG_DELAY_MS);
    await watcher.read();
    expect(watcher.polling).toBe(false);
  });

  it("Ben turns a table's refresh on open on: Ann's listener is called and the list she reads shows the flag", async () => {
    const d = 500;
    const { ann, ben } = await annAndBen(d);
    g.Excel = createExcelNamespace(ann.workbook);
    setDefaultWorkbook(ann.workbook);
    const engine = new Engine();
    expect((await engine.listBindings()).bindings[0].refreshOnOpen ?? false).toBe(false);
    const flags: Array<{ at: number; flag: boolean }> = [];
    await watchSettings(() => {
      void engine.listBindings().then((s) => flags.push({ at: Date.now(), flag: s.bindings[0].refreshOnOpen === true }));
    });
    await setRefreshOnOpen(createRequestContext(ben.workbook), "b1", true, [TOKEN]);
    await jest.advanceTimersByTimeAsync(d);
    await jest.advanceTimersByTimeAsync(0);
    expect(flags.length).toBeGreaterThan(0);
    expect(flags[flags.length - 1]).toEqual({ at: T0.getTime() + d, flag: true });
  });
});

describe("the pane's reading on a burst of events (latestOnly)", () => {
  it("a burst while a reading runs makes exactly one more reading, and every caller waits for one that started after its call", async () => {
    let runs = 0;
    let state = 0;
    const seen: number[] = [];
    const read = latestOnly(async () => {
      runs++;
      const at = state;
      await new Promise((r) => setTimeout(r, 100));
      seen.push(at);
    });
    const first = read();
    state = 1;
    const burst = Array.from({ length: 10 }, () => read());
    state = 2; // the workbook changed again during the burst: the second reading sees it
    await jest.advanceTimersByTimeAsync(250);
    await Promise.all([first, ...burst]);
    expect(runs).toBe(2);
    expect(seen).toEqual([0, 2]);
    // Quiet again: the next event reads at once.
    const next = read();
    await jest.advanceTimersByTimeAsync(100);
    await next;
    expect(runs).toBe(3);
  });

  it("Ben's whole refresh-sized burst of settings writes reaches Ann as events that the pane merges into few readings", async () => {
    const { ann, ben } = await annAndBen(500);
    setDefaultWorkbook(ann.workbook);
    let events = 0;
    let readings = 0;
    const read = latestOnly(async () => {
      readings++;
      await new Promise((r) => setTimeout(r, 200));
    });
    await (createExcelNamespace(ann.workbook) as unknown as typeof Excel).run(async (context) => {
      context.workbook.settings.onSettingsChanged.add(async () => {
        events++;
        void read();
      });
      await context.sync();
    });
    for (let i = 0; i < 20; i++) {
      await addSetting(ben, `ppm.burst.${i}`, i);
      await jest.advanceTimersByTimeAsync(10);
    }
    await jest.advanceTimersByTimeAsync(2_000);
    expect(events).toBe(20);
    expect(readings).toBeLessThanOrEqual(3);
    expect(readings).toBeGreaterThanOrEqual(1);
  });
});
