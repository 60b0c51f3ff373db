/**
 * Issue #21, items 11, 12, 14 and 15: one workbook, several runtimes. The table lock taken safely
 * against a late write, its expiry capped, a stale one cleared only as shown to the user, settings of
 * one runtime never erased by another's, and a refresh that lost its lock writing nothing more.
 */
import { Workbook, EmulatedExcelError, createEmulatedContext, createRequestContext, inspect } from "../../src/emulator";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { readRefreshLog } from "../../src/workbook/refreshLog";
import { setRefreshOnOpen } from "../../src/workbook/openFlags";
import { importTable } from "../../src/workbook/writer";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, imported, rejection, TOKEN } from "./helpers";

// Through the module object, so these tests also run (and show the defects) against a lock module
// that predates issue #21.
const { acquireTableLock, clearTableLock, lockSettingKey, LOCK_TTL_MS, readTableLock } = lockModule;
const lockTiming = lockModule.lockTiming ?? { minSettleMs: 0 };
const resetLockMemory = () => lockModule.resetLockMemory?.();
const SHEET = "financials (json)";
const T0 = new Date("2026-02-01T08:00:00Z");
const at = (ms: number) => () => new Date(T0.getTime() + ms);
const noQuery = (t: Table) => ({ table: t });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let generation = 0;
function updated(rows: CellValue[][], before?: () => Promise<void>): RefreshSource {
  return {
    fetch: async () => {
      await before?.();
      const gen = new Date(Date.UTC(2026, 1, 1, 7, 0, ++generation)).toISOString();
      return { status: "updated", table: finTable(rows, { generatedAt: gen, etag: `"${gen}"` }), validators: { etag: `"${gen}"`, generatedAt: gen } };
    },
  };
}

describe("11. taking the lock: written, waited for, read back", () => {
  const saved = lockTiming.minSettleMs;
  afterEach(() => {
    lockTiming.minSettleMs = saved;
  });

  it("two runtimes read 'free' at the same moment and one write lands 200 ms late: exactly one holds the lock", async () => {
    lockTiming.minSettleMs = 400;
    const wb = new Workbook({});
    const a = createEmulatedContext(wb);
    const b = createEmulatedContext(wb);
    // Runtime B's second request (its lock write) reaches Excel 200 ms after it was sent.
    const realSync = b.sync.bind(b);
    let n = 0;
    b.sync = async () => {
      if (++n === 2) await sleep(200);
      return realSync();
    };
    const results = await Promise.allSettled([
      acquireTableLock(a, "ppm_financials", { holder: "the task pane" }),
      acquireTableLock(b, "ppm_financials", { holder: "Refresh all on the ribbon" }),
    ]);
    const held = results.filter((r) => r.status === "fulfilled");
    expect(held).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect((refused.reason as { code: string }).code).toBe("table_busy");
  });
});

describe("12. expiry capped by the lock's own time; a stale lock cleared with confirmation", () => {
  beforeEach(() => resetLockMemory());
  const lockFrom = (acquiredAt: Date, expiresAt: Date) =>
    JSON.stringify({ owner: "gone-runtime", holder: "Refresh all on the ribbon", acquiredAt: acquiredAt.toISOString(), expiresAt: expiresAt.toISOString() });
  const YEAR = 365 * 24 * 3600_000;

  // Issue #26: a lease runs on this runtime's clock from when it first saw that lock version; another
  // runtime's dates (a year of `expiresAt`, or a clock 15 minutes off) are never compared with it.
  it("a lock claiming to hold for a year holds ten minutes from when this runtime first saw it, no longer", async () => {
    const { wb } = await imported(finRows(5));
    wb.setSetting(lockSettingKey("ppm_financials"), lockFrom(T0, new Date(T0.getTime() + YEAR)));
    const busy = await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(5 * 60_000) });
    expect(busy.failure?.code).toBe("table_busy");
    expect(busy.failure?.message).toMatch(/by Refresh all on the ribbon \(since 08:00 UTC\).*frees itself at 08:15 UTC/);
    const still = await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(LOCK_TTL_MS + 60_000) });
    expect(still.failure?.code).toBe("table_busy");
    const later = await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(5 * 60_000 + LOCK_TTL_MS + 1_000) });
    expect(later.outcome).toBe("updated");
  });

  it("a lock dated a year ahead (its runtime's clock is ahead) holds ten minutes from when this runtime first saw it", async () => {
    const { wb } = await imported(finRows(5));
    const ahead = new Date(T0.getTime() + YEAR);
    wb.setSetting(lockSettingKey("ppm_financials"), lockFrom(ahead, new Date(ahead.getTime() + LOCK_TTL_MS)));
    expect((await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(0) })).failure?.code).toBe("table_busy");
    expect((await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(LOCK_TTL_MS + 60_000) })).outcome).toBe("updated");
  });

  it("clearing a lock clears only the one the user was shown, never one another refresh took since", async () => {
    const { wb } = await imported(finRows(5));
    const key = lockSettingKey("ppm_financials");
    wb.setSetting(key, lockFrom(T0, new Date(T0.getTime() + YEAR)));
    const shown = await readTableLock(createRequestContext(wb), "ppm_financials", T0);
    expect(shown).toMatchObject({ owner: "gone-runtime", holder: "Refresh all on the ribbon", holds: true, until: "2026-02-01T08:10:00.000Z" });
    wb.setSetting(key, JSON.stringify({ owner: "newer", holder: "the task pane", acquiredAt: T0.toISOString(), expiresAt: T0.toISOString() }));
    expect(await clearTableLock(createRequestContext(wb), "ppm_financials", shown!.owner)).toBe(false);
    expect(wb.settings.has(key)).toBe(true);
    wb.setSetting(key, lockFrom(T0, new Date(T0.getTime() + YEAR)));
    expect(await clearTableLock(createRequestContext(wb), "ppm_financials", "gone-runtime")).toBe(true);
    expect(wb.settings.has(key)).toBe(false);
  });
});

describe("14. settings written by one runtime never erase another's", () => {
  it("ticking 'Refresh when this workbook opens' while another runtime refreshes that table keeps the flag", async () => {
    const { wb } = await imported(finRows(5));
    // The pane (its own context) ticks the flag while the ribbon's refresh is downloading.
    const pane = createRequestContext(wb);
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(7), async () => void (await setRefreshOnOpen(pane, "b1", true))), { applyQuery: noQuery, now: at(0), holder: "Refresh all on the ribbon" });
    expect(report.outcome).toBe("updated");
    const stored = (await readBindings(createRequestContext(wb))).bindings[0];
    expect(stored).toMatchObject({ refreshOnOpen: true, rowCount: 7 });
  });

  it("a refresh refused because another runtime holds the table writes nothing of the binding (the other refresh stores its own)", async () => {
    const { wb } = await imported(finRows(5));
    wb.setSetting(lockSettingKey("ppm_financials"), JSON.stringify({ owner: "ribbon", holder: "Refresh all on the ribbon", acquiredAt: T0.toISOString(), expiresAt: new Date(T0.getTime() + LOCK_TTL_MS).toISOString() }));
    const stored = wb.settings.get("ppm.binding.b1");
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(6)), { applyQuery: noQuery, now: at(60_000) });
    expect(report.failure?.code).toBe("table_busy");
    expect(wb.settings.get("ppm.binding.b1")).toBe(stored);
  });

  it("two runtimes refreshing two tables at once each keep their refresh log entry", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    for (const id of ["b1", "b2"]) {
      const t = finTable(finRows(5), { key: id === "b1" ? "financials" : "budget" });
      await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, id), secrets: [TOKEN] });
    }
    await Promise.all(["b1", "b2"].map((id) => refreshTable(createRequestContext(wb), id, updated(finRows(6)), { applyQuery: noQuery, now: at(0) })));
    const log = await readRefreshLog(createRequestContext(wb));
    expect(log.map((e) => e.bindingId).sort()).toEqual(["b1", "b2"]);
  });
});

describe("15. a refresh that outlives its lock writes nothing more", () => {
  it("once another runtime owns the table, the refresh stops before its next write block and restores nothing over it", async () => {
    const { wb } = await imported(finRows(400));
    const key = lockSettingKey("ppm_financials");
    let blocks = 0;
    let takenOver = false;
    let writesAfter = 0;
    wb.faultInjector = (op) => {
      if (takenOver && (op.op === "set values" || op.op === "copyFrom" || op.op === "set numberFormat" || op.op === "resize")) writesAfter++;
      if (!takenOver && op.op === "set values" && /!A\d+:H\d+$/.test(op.path) && ++blocks === 2) {
        // The refresh stalled past its lock's time; another runtime took the table over.
        takenOver = true;
        wb.setSetting(key, JSON.stringify({ owner: "other-runtime", holder: "another window", acquiredAt: T0.toISOString(), expiresAt: new Date(T0.getTime() + LOCK_TTL_MS).toISOString() }));
      }
      return null;
    };
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(400, 9)), { applyQuery: noQuery, now: at(0), targetRequestBytes: 20_000, delta: false });
    wb.faultInjector = null;
    expect(takenOver).toBe(true);
    expect(report.failure?.code).toBe("lock_lost");
    expect(report.failure?.message).toMatch(/another window took over the table/);
    expect(writesAfter).toBe(0);
    // The other runtime's lock is left alone.
    expect(JSON.parse(wb.getSetting(key) as string) as { owner: string }).toMatchObject({ owner: "other-runtime" });
    expect(inspect(wb, `'${SHEET}'!B3`).values[0][0]).toBe("Project 9");
  });

  it("a refresh's ownership is read with its requests: no extra request while it holds the lock", async () => {
    const { wb } = await imported(finRows(50));
    const context = createRequestContext(wb);
    const lock = await acquireTableLock(context, "ppm_financials", { holder: "the task pane" });
    const syncs = wb.stats.syncCount;
    await lock.ensure();
    expect(wb.stats.syncCount).toBe(syncs);
    wb.setSetting(lockSettingKey("ppm_financials"), JSON.stringify({ owner: "x", holder: "another window", acquiredAt: T0.toISOString(), expiresAt: T0.toISOString() }));
    lock.context.workbook.worksheets.getItem(SHEET).getRange("Z1").load("values");
    await lock.context.sync();
    expect((await rejection(lock.ensure())).code).toBe("lock_lost");
    await lock.release();
    expect(wb.settings.has(lockSettingKey("ppm_financials"))).toBe(true);
  });

  it("an injected failure of the lock's own read-back is a clear failure, nothing written", async () => {
    const { wb } = await imported(finRows(5));
    let loads = 0;
    wb.faultInjector = (op) => (op.op === "load" && op.path.includes("ppm.lock.") && ++loads === 2 ? new EmulatedExcelError("GeneralException", "injected") : null);
    const before = inspect(wb, `'${SHEET}'!A3:H7`).values;
    const report = await refreshTable(createRequestContext(wb), "b1", updated(finRows(5, 3)), { applyQuery: noQuery, now: at(0) });
    wb.faultInjector = null;
    expect(report.outcome).toBe("failed");
    expect(inspect(wb, `'${SHEET}'!A3:H7`).values).toEqual(before);
  });
});
