/**
 * Issue #26, refresh on open in a co-authoring session: the open path claims each flagged table's
 * lock before fetching (`Engine.refreshOne(…, { claim: true })`, the call `AddinRuntime` makes per
 * flagged table), and that claim waits out the co-authoring bound (2 × `lockTiming.propagationMs`)
 * before it reads the lock back. The refresh it then runs passes the claim on (`lockOwner`) and must
 * REUSE it — one read-back, no second write and no second wait — while a lock that changed hands
 * meanwhile is still refused. Measured on the two-client host with jest's fake clock: the simulated
 * time one flagged table takes on the open path.
 */
import { Workbook, createExcelNamespace, createRequestContext } from "../../src/emulator";
import { CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import { Engine } from "../../src/addin/engine";
import * as lockModule from "../../src/workbook/lock";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import type { RefreshSource } from "../../src/refresh/source";
import type { Connection } from "../../src/service/connection";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, TOKEN } from "../workbook/helpers";
import { AddinRuntime } from "../../src/addin/runtime";
import { MemoryStorage } from "../helpers/memoryStorage";
import { drive, fakeOffice } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const CONNECTION: Connection = { id: "conn-1", name: "Acme", baseUrl: "http://127.0.0.1:4100", token: TOKEN };

let generation = 0;
/** A source that always has new data (no network: the fake clock drives everything). */
function source(rows: CellValue[][]): RefreshSource & { calls: number } {
  const s = {
    calls: 0,
    fetch: async () => {
      s.calls++;
      const gen = new Date(Date.UTC(2026, 1, 1, 7, 0, ++generation)).toISOString();
      return { status: "updated" as const, table: finTable(rows, { generatedAt: gen, etag: `"${gen}"` }), validators: { etag: `"${gen}"`, generatedAt: gen } };
    },
  };
  return s;
}

/** The add-in's engine with the service replaced by `src` (everything else is the real open path). */
class OfflineEngine extends Engine {
  constructor(private readonly src: RefreshSource) {
    super();
  }
  override source(): RefreshSource {
    return this.src;
  }
}

async function startWorkbook(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(5));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
  return wb;
}

describe("refresh on open in a co-authoring session waits once per flagged table", () => {
  const g = globalThis as unknown as { Excel?: unknown };
  const savedExcel = g.Excel;
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(T0);
    lockModule.resetLockMemory();
  });
  afterEach(() => {
    g.Excel = savedExcel;
    jest.useRealTimers();
  });

  async function openPath(client: CoauthorClient, src: RefreshSource) {
    g.Excel = createExcelNamespace(client.workbook);
    const engine = new OfflineEngine(src);
    const binding = (await engine.listBindings()).bindings[0];
    const started = Date.now();
    const [r] = await drive([engine.refreshOne(binding.id, CONNECTION, { secrets: [TOKEN], holder: "Refresh on open", binding, claim: true })]);
    return { report: (r as PromiseFulfilledResult<Awaited<ReturnType<Engine["refreshOne"]>>>).value, elapsed: Date.now() - started };
  }

  it("one flagged table: the claim's wait (2 × the propagation bound) and no second one before the write", async () => {
    const session = new CoauthoringSession(await startWorkbook(), { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    session.addClient({ name: "Ben" });
    const src = source(finRows(6, 100));
    const { report, elapsed } = await openPath(ann, src);
    expect(report.outcome).toBe("updated");
    expect(src.calls).toBe(1);
    const bound = 2 * lockModule.lockTiming.propagationMs;
    // Before the fix: the claim waited 10 s, then the refresh took the lock again and waited 10 s more (≈ 20 s).
    expect(elapsed).toBeGreaterThanOrEqual(bound);
    expect(elapsed).toBeLessThan(bound + lockModule.lockTiming.maxSettleMs);
    // The claim is released at the end, in every copy.
    await jest.advanceTimersByTimeAsync(501);
    for (const wb of [session.document, ...session.clients.map((c) => c.workbook)]) expect(wb.settings.has(lockModule.lockSettingKey("ppm_financials"))).toBe(false);
  });

  it("the runtime's open path (AddinRuntime.start), two flagged tables: one co-authoring wait per table", async () => {
    // Two tables imported and flagged on this device (single workbook), then opened by Ann with Ben present.
    const wb = new Workbook({ currentYear: 2025 });
    for (const [id, name] of [["b1", "ppm_fin_a"], ["b2", "ppm_fin_b"]]) {
      const t = finTable(finRows(5));
      await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, id), tableName: name, secrets: [TOKEN], now: () => T0 });
    }
    const src = source(finRows(6, 100));
    const storage = new MemoryStorage();
    g.Excel = createExcelNamespace(wb);
    const first = new AddinRuntime({ office: fakeOffice().office, storage, loadEngine: async () => new OfflineEngine(src) });
    const conn = first.store.save({ name: "Acme", baseUrl: CONNECTION.baseUrl, token: TOKEN });
    first.store.setCompanyId(conn.id, "acme");
    for (const id of ["b1", "b2"]) {
      const [flag] = await drive([first.setRefreshOnOpen(id, true)]);
      expect((flag as PromiseFulfilledResult<{ state: string }>).value.state).toBe("saved");
    }
    const session = new CoauthoringSession(wb, { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    session.addClient({ name: "Ben" });
    g.Excel = createExcelNamespace(ann.workbook);
    const rt = new AddinRuntime({ office: fakeOffice().office, storage, loadEngine: async () => new OfflineEngine(src) });
    const started = Date.now();
    const [opened] = await drive([rt.start()]);
    const elapsed = Date.now() - started;
    const outcome = (opened as PromiseFulfilledResult<Awaited<ReturnType<AddinRuntime["start"]>>>).value;
    expect(outcome.state).toBe("done");
    expect(outcome.state === "done" ? outcome.reports.map((r) => r.outcome) : []).toEqual(["updated", "updated"]);
    expect(src.calls).toBe(2);
    const bound = 2 * lockModule.lockTiming.propagationMs;
    // Per flagged table: the claim's one wait (before: ≈ 2 × bound, i.e. ≈ 40 s for the two).
    expect(elapsed / 2).toBeGreaterThanOrEqual(bound);
    expect(elapsed / 2).toBeLessThan(bound + lockModule.lockTiming.maxSettleMs);
  });

  it("a refresh passed a claimed lock reuses it without a wait, and is refused once the lock changed hands", async () => {
    const session = new CoauthoringSession(await startWorkbook(), { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    session.addClient({ name: "Ben" });
    const ctx = createRequestContext(ann.workbook);
    const [claimed] = await drive([lockModule.acquireTableLock(ctx, "ppm_financials", { holder: "Refresh on open" })]);
    const claim = (claimed as PromiseFulfilledResult<lockModule.TableLock>).value;
    const key = lockModule.lockSettingKey("ppm_financials");
    const stored = ann.workbook.settings.get(key);
    expect(stored).toBeDefined();

    // Reused: no wait at all (not even the single-runtime settle), no new lock version written.
    lockModule.lockTiming.minSettleMs = 250;
    try {
      const started = Date.now();
      const [r] = await drive([refreshTable(ctx, "b1", source(finRows(6, 100)), { applyQuery: (t) => ({ table: t }), holder: "Refresh on open", lockOwner: claim.owner, delta: false, settle: false })]);
      expect((r as PromiseFulfilledResult<{ outcome: string }>).value.outcome).toBe("updated");
      expect(Date.now() - started).toBeLessThan(lockModule.lockTiming.minSettleMs);
      // Still the claim's own lock (the refresh neither rewrote nor released it: the claimer releases).
      expect(ann.workbook.settings.get(key)).toBe(stored);
    } finally {
      lockModule.lockTiming.minSettleMs = 0;
    }

    // The lock changed hands (a co-author's lock won in Ann's copy): refused, nothing written.
    const ben = JSON.stringify({ owner: "ben-1", holder: "Ben's task pane", acquiredAt: T0.toISOString(), renewedAt: T0.toISOString(), expiresAt: T0.toISOString() });
    ann.workbook.setSetting(key, ben);
    const [busy] = await drive([refreshTable(ctx, "b1", source(finRows(7, 200)), { applyQuery: (t) => ({ table: t }), lockOwner: claim.owner, delta: false })]);
    expect((busy as PromiseFulfilledResult<{ failure?: { code: string } }>).value.failure?.code).toBe("table_busy");
    expect(ann.workbook.getSetting(key)).toBe(ben);

    // The lock was cleared meanwhile: refused as lost, and not silently taken again.
    ann.workbook.deleteSetting(key);
    const [lost] = await drive([refreshTable(ctx, "b1", source(finRows(7, 200)), { applyQuery: (t) => ({ table: t }), lockOwner: claim.owner, delta: false })]);
    expect((lost as PromiseFulfilledResult<{ failure?: { code: string } }>).value.failure?.code).toBe("lock_lost");
    expect(ann.workbook.settings.has(key)).toBe(false);
  });
});
