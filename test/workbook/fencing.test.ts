/**
 * Issue #34, item 6: a write that a lost lock must not make cannot land. A refresh's write request
 * stalls (it was sent, Excel has not run it yet) past the lock's lease; a second refresh takes the
 * table over and writes its export; then the stalled request reaches Excel. Before #34 it landed over
 * the new data (rows of one export beside rows of the other, the binding naming the second). Now every
 * write request begins with the lock's fence (src/workbook/lock.ts, "Fencing"), which the takeover
 * deleted: Excel runs none of it. Also the lock's own rules that survived a deliberate breakage
 * (issue #34, item 7): renewal at half the lease, and a renewal being a new lock version.
 */
import { Workbook, createRequestContext, inspect } from "../../src/emulator";
import { acquireTableLock, clearTableLock, fenceSettingKey, lockSettingKey, lockTiming, LOCK_TTL_MS, parseLock, readTableLock, resetLockMemory } from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { importTable } from "../../src/workbook/writer";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, keyedSource, TOKEN } from "./helpers";

const T0 = Date.parse("2026-03-01T08:00:00Z");
const SHEET = "financials (json)";
const ROWS = 120;
const noQuery = <T>(t: T) => ({ table: t });

const keyed = (rows: CellValue[][], generation: number): RefreshSource => keyedSource(rows, new Date(Date.UTC(2026, 2, 1, 7, 0, generation)).toISOString());

/** What the table shows: every data cell of its body (values), and the info line. */
function tableState(wb: Workbook): { info: string; body: unknown[][] } {
  const t = wb.tables.find((x) => x.name === "ppm_financials")!;
  const body = wb.readValues(wb.requireSheetId(t.sheetId), wb.bodyRect(t)).map((r) => r.slice(0, 8));
  return { info: String(inspect(wb, `'${SHEET}'!A1`).values[0][0]), body };
}

async function imported(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(ROWS));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => new Date(T0) });
  return wb;
}

const A_ROWS = finRows(ROWS, 100);
const B_ROWS = finRows(ROWS, 200);

/**
 * Refresh A (full rewrite in small requests) whose `stallAt`-th request is held back before it
 * reaches Excel until `release()`; null: not held. Returns its report promise and, once it is held,
 * `stalled` resolves.
 */
function refreshA(wb: Workbook, stallAt: number | null) {
  const ctx = createRequestContext(wb);
  const plain = ctx.sync.bind(ctx);
  let n = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let onStall!: () => void;
  const stalled = new Promise<void>((r) => (onStall = r));
  (ctx as { sync: () => Promise<void> }).sync = async () => {
    if (++n === stallAt) {
      onStall();
      await gate;
    }
    await plain();
  };
  const report = refreshTable(ctx, "b1", keyed(A_ROWS, 1), { applyQuery: noQuery, now: () => new Date(T0), holder: "refresh A", delta: false, targetRequestBytes: 3_000 });
  return { report, release, stalled, syncs: () => n };
}

/** The request of refresh A that writes its second block of values (found on an identical workbook). */
async function secondValueBlock(): Promise<number> {
  const wb = await imported();
  let writes = 0;
  let at = 0;
  const a = refreshA(wb, null);
  wb.faultInjector = (op) => {
    if (op.op === "set values" && /!A\d+:H\d+$/.test(op.path) && !/!A1$/.test(op.path) && ++writes === 2 && at === 0) at = a.syncs();
    return null;
  };
  expect((await a.report).outcome).toBe("updated");
  wb.faultInjector = null;
  expect(at).toBeGreaterThan(0);
  return at;
}

describe("a stalled write released after a takeover changes no cell", () => {
  const saved = lockTiming.minSettleMs;
  beforeEach(() => {
    lockTiming.minSettleMs = 0;
    resetLockMemory();
  });
  afterEach(() => {
    lockTiming.minSettleMs = saved;
  });

  it("refresh B takes the table over past A's lease and writes its export; A's held request then reaches Excel and is refused whole: the table is B's export, complete", async () => {
    const k = await secondValueBlock();
    resetLockMemory();
    const wb = await imported();
    const a = refreshA(wb, k);
    await a.stalled;
    // A wrote its first block; its lease runs out (by B's runtime's clock, which saw the lock at once) while its next request hangs.
    expect(tableState(wb).info).toMatch(/DATA INCOMPLETE/);
    const held = await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0));
    expect(held?.holds).toBe(true);
    const b = await refreshTable(createRequestContext(wb), "b1", keyed(B_ROWS, 2), { applyQuery: noQuery, now: () => new Date(T0 + LOCK_TTL_MS + 60_000), holder: "refresh B", delta: false });
    expect([b.outcome, b.failure?.message]).toEqual(["updated", undefined]);
    const afterB = tableState(wb);
    expect(afterB.body.map((r) => r[1])).toEqual(B_ROWS.map((r) => r[1]));
    expect(afterB.info).not.toMatch(/INCOMPLETE/);
    // A's fence went with the takeover.
    expect(wb.settings.has(fenceSettingKey(held!.owner))).toBe(false);
    a.release();
    const ra = await a.report;
    expect(ra.outcome).toBe("failed");
    expect(ra.failure?.code).toBe("lock_lost");
    expect(ra.failure?.message).toMatch(/refresh B took over the table|lock was cleared/);
    // Not one cell changed by A's late request: the table is B's export, whole.
    expect(tableState(wb)).toEqual(afterB);
    expect(wb.settings.has("ppm.refreshing.b1")).toBe(false);
    // The binding names B's export, and A's refresh wrote no status over it.
    const binding = JSON.parse(wb.getSetting("ppm.binding.b1") as string) as { validators: { generatedAt: string }; rowCount: number };
    expect(binding.validators.generatedAt).toBe(new Date(Date.UTC(2026, 2, 1, 7, 0, 2)).toISOString());
  }, 60_000);

  it("a co-author's stale settings write puts A's lock and fence back during B's takeover wait (whole-collection settings, #35): B backs off before writing a cell, A's held request lands and A completes: one export, whole", async () => {
    const k = await secondValueBlock();
    resetLockMemory();
    const wb = await imported();
    const a = refreshA(wb, k);
    await a.stalled;
    // B's runtime sees A's lock at T0 (its lease runs from then, by B's clock).
    const held = (await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0)))!;
    // A co-author's copy as it stood now (A's lock, A's fence, A's refresh marker): its next settings write sends it whole.
    const stale = new Map(wb.settings);
    const before = tableState(wb);
    const ctx = createRequestContext(wb);
    const plain = ctx.sync.bind(ctx);
    let replaced = false;
    (ctx as { sync: () => Promise<void> }).sync = async () => {
      await plain();
      const lock = parseLock(wb.getSetting(lockSettingKey("ppm_financials")));
      if (!replaced && lock && lock.owner !== held.owner) {
        // B's takeover landed (A's fence revoked, B's lock and fence written); the stale collection arrives before B reads back.
        expect(wb.settings.has(fenceSettingKey(held.owner))).toBe(false);
        replaced = true;
        wb.settings.clear();
        for (const [key, v] of stale) wb.settings.set(key, v);
      }
    };
    const b = await refreshTable(ctx, "b1", keyed(B_ROWS, 2), { applyQuery: noQuery, now: () => new Date(T0 + LOCK_TTL_MS + 60_000), holder: "refresh B", delta: false });
    expect(replaced).toBe(true);
    expect([b.outcome, b.failure?.code]).toEqual(["failed", "table_busy"]);
    // B wrote nothing: its read-back found A's lock, before any write request.
    expect(tableState(wb)).toEqual(before);
    expect(wb.settings.has(fenceSettingKey(held.owner))).toBe(true);
    a.release();
    const ra = await a.report;
    expect([ra.outcome, ra.failure?.message]).toEqual(["updated", undefined]);
    const after = tableState(wb);
    expect(after.body.map((r) => r[1])).toEqual(A_ROWS.map((r) => r[1]));
    expect(after.info).not.toMatch(/INCOMPLETE/);
    const binding = JSON.parse(wb.getSetting("ppm.binding.b1") as string) as { validators: { generatedAt: string } };
    expect(binding.validators.generatedAt).toBe(new Date(Date.UTC(2026, 2, 1, 7, 0, 1)).toISOString());
  }, 60_000);

  it("a user clears the lock of a refresh whose request hangs: the request is refused when it arrives, the table stays marked INCOMPLETE and the next refresh puts it right", async () => {
    const k = await secondValueBlock();
    resetLockMemory();
    const wb = await imported();
    const a = refreshA(wb, k);
    await a.stalled;
    const shown = await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0));
    expect(shown?.holder).toBe("refresh A");
    expect(await clearTableLock(createRequestContext(wb), "ppm_financials", shown!.owner)).toBe(true);
    expect(wb.settings.has(fenceSettingKey(shown!.owner))).toBe(false);
    const before = tableState(wb);
    a.release();
    const ra = await a.report;
    expect(ra.failure?.code).toBe("lock_lost");
    // Nothing of the refused request landed; the table is marked, not left looking complete.
    const after = tableState(wb);
    expect(after).toEqual(before);
    expect(after.info).toMatch(/DATA INCOMPLETE/);
    expect(wb.settings.has("ppm.refreshing.b1")).toBe(true);
    // The next refresh recovers the dead one's table first, then writes its own export whole.
    const c = await refreshTable(createRequestContext(wb), "b1", keyed(B_ROWS, 3), { applyQuery: noQuery, now: () => new Date(T0 + 60_000), holder: "refresh C" });
    expect(c.outcome).toBe("updated");
    expect(tableState(wb).body.map((r) => r[1])).toEqual(B_ROWS.map((r) => r[1]));
    expect(tableState(wb).info).not.toMatch(/INCOMPLETE/);
    expect(wb.settings.has("ppm.refreshing.b1")).toBe(false);
  }, 60_000);
});

describe("the lock's fence and lease", () => {
  beforeEach(() => resetLockMemory());
  const sleep = () => Promise.resolve();

  it("taking a lock writes its fence; releasing it removes both; a lost race leaves no fence", async () => {
    const wb = new Workbook({});
    const lock = await acquireTableLock(createRequestContext(wb), "T1", { sleep });
    expect(wb.settings.has(fenceSettingKey(lock.owner))).toBe(true);
    await lock.release();
    expect(wb.settings.has(lockSettingKey("T1"))).toBe(false);
    expect(wb.settings.has(fenceSettingKey(lock.owner))).toBe(false);
    // Someone else's lock lands between this acquisition's write and its read-back.
    let loser = "";
    const ctx = createRequestContext(wb);
    const plain = ctx.sync.bind(ctx);
    let n = 0;
    (ctx as { sync: () => Promise<void> }).sync = async () => {
      await plain();
      if (++n === 2) {
        loser = parseLock(wb.getSetting(lockSettingKey("T1")))!.owner;
        wb.setSetting(lockSettingKey("T1"), JSON.stringify({ owner: "other", holder: "x", acquiredAt: new Date(T0).toISOString(), expiresAt: new Date(T0).toISOString() }));
      }
    };
    await expect(acquireTableLock(ctx, "T1", { sleep })).rejects.toMatchObject({ code: "table_busy" });
    expect(wb.settings.has(fenceSettingKey(loser))).toBe(false);
  });

  it("a write request led by the fence runs while the lock is this holder's, and is refused whole (lock_lost) once the fence is gone", async () => {
    const wb = new Workbook({});
    const lock = await acquireTableLock(createRequestContext(wb), "T1", { sleep });
    const sheet = lock.context.workbook.worksheets.getItem("Sheet1");
    await lock.ensureFenced();
    sheet.getRange("A1").values = [["mine"]];
    await lock.context.sync();
    expect(inspect(wb, "A1").values[0][0]).toBe("mine");
    // Another runtime takes the table over: it deletes this owner's fence with its own lock.
    wb.deleteSetting(fenceSettingKey(lock.owner));
    wb.setSetting(lockSettingKey("T1"), JSON.stringify({ owner: "newer", holder: "the task pane", acquiredAt: new Date(T0).toISOString(), expiresAt: new Date(T0).toISOString() }));
    lock.fence();
    sheet.getRange("A1:A2").values = [["late"], ["late"]];
    const e = await lock.context.sync().then(() => null, (x: unknown) => x as { code?: string; message?: string });
    expect(e?.code).toBe("lock_lost");
    expect(e?.message).toMatch(/the task pane took over/);
    expect(inspect(wb, "A1:A2").values).toEqual([["mine"], [""]]);
    expect(lock.lost).toBe(true);
  });

  it("a long refresh renews its lock once half the lease is used (not only when it ran out)", async () => {
    const wb = new Workbook({});
    let t = T0;
    const lock = await acquireTableLock(createRequestContext(wb), "T1", { sleep, now: () => new Date(t) });
    const stored = () => parseLock(wb.getSetting(lockSettingKey("T1")))!;
    const first = stored().renewedAt;
    t = T0 + LOCK_TTL_MS * 0.4;
    await lock.ensure();
    expect(stored().renewedAt).toBe(first);
    t = T0 + LOCK_TTL_MS * 0.6;
    await lock.ensure();
    expect(stored().renewedAt).toBe(new Date(t).toISOString());
    expect(Date.parse(stored().expiresAt)).toBe(t + LOCK_TTL_MS);
  });

  it("a renewal is a new lock version: another runtime measures the lease from when it first saw the renewal, so a live refresh is never taken over", async () => {
    const wb = new Workbook({});
    let tA = T0;
    const a = await acquireTableLock(createRequestContext(wb), "T1", { sleep, now: () => new Date(tA), holder: "refresh A" });
    // Runtime B (another realm: its own memory of lock versions) sees A's lock at T0.
    resetLockMemory();
    const tryB = (at: number) => acquireTableLock(createRequestContext(wb), "T1", { sleep, now: () => new Date(at), holder: "refresh B" });
    await expect(tryB(T0)).rejects.toMatchObject({ code: "table_busy" });
    // A renews at 0.6 of its lease; B sees the renewed lock at 0.7.
    tA = T0 + LOCK_TTL_MS * 0.6;
    await a.ensure();
    await expect(tryB(T0 + LOCK_TTL_MS * 0.7)).rejects.toMatchObject({ code: "table_busy" });
    // 1.1 leases after B first saw A's first version, but only 0.4 after it saw the renewal: still A's.
    await expect(tryB(T0 + LOCK_TTL_MS * 1.1)).rejects.toMatchObject({ code: "table_busy" });
    expect(parseLock(wb.getSetting(lockSettingKey("T1")))!.holder).toBe("refresh A");
    // A lease after B saw the renewal (and A renewing no more: its runtime died), B takes it.
    const b = await tryB(T0 + LOCK_TTL_MS * 1.71);
    expect(b.owner).not.toBe(a.owner);
    expect(wb.settings.has(fenceSettingKey(a.owner))).toBe(false);
  });
});
