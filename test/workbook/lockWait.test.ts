/**
 * Issue #35: what the co-authoring wait costs a user who is alone. Wherever the document may be
 * co-authored (a workbook in the cloud) a lock used to wait the co-authoring bound (2 × 5 s) before its
 * read-back on every refresh, because Excel's collaboration flag lags. Now it waits that long only when
 * the flag cannot be trusted (this runtime started, or co-authors were last seen, less than the flag's
 * lag ago) or someone else is seen (another owner's lock on the table, a lock erased before its
 * read-back); a solo user otherwise waits what a local file waits (decision: src/workbook/README.md,
 * "What the co-authoring wait costs").
 *
 * Deterministic: the timers a refresh starts (jest's fake clock), counted with their delays, never wall time.
 */
import { createRequestContext, type Workbook } from "../../src/emulator";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import type { Table } from "../../src/table/model";
import { finRows, imported, keyedSource } from "./helpers";

const { lockTiming, lockSettingKey, resetLockMemory } = lockModule;
const T0 = new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
let generation = 0;

/** The delays (ms) of the timers of 100 ms or more that `work` started: the lock's (and settle's) waits. */
async function waitsOf<T>(work: () => Promise<T>): Promise<{ result: T; waits: number[] }> {
  const waits: number[] = [];
  const fake = global.setTimeout;
  const spy = jest.spyOn(global, "setTimeout").mockImplementation(((fn: () => void, ms?: number) => {
    if ((ms ?? 0) >= 100) waits.push(ms ?? 0);
    return fake(fn, ms);
  }));
  let done = false;
  const p = work().finally(() => (done = true));
  for (let i = 0; i < 10_000 && !done; i++) await jest.advanceTimersByTimeAsync(50);
  spy.mockRestore();
  return { result: await p, waits };
}

/** One refresh of b1 as the add-in's engine makes it (the settle runs after the report is handed back). */
async function refreshOnce(wb: Workbook, settle = false) {
  return waitsOf(() => refreshTable(createRequestContext(wb), "b1", keyedSource(finRows(6, ++generation)), { applyQuery: noQuery, delta: false, holder: "the task pane", settle }));
}

describe("issue #35: the co-authoring wait, only when it is needed", () => {
  const savedShared = lockTiming.mayBeShared;
  const savedFloor = lockTiming.minSettleMs;
  beforeEach(() => {
    // The product's floor of the short wait (test/helpers/setup.ts sets it to 0 for other suites).
    lockTiming.minSettleMs = 250;
    jest.useFakeTimers();
    jest.setSystemTime(T0);
    resetLockMemory();
  });
  afterEach(() => {
    lockTiming.mayBeShared = savedShared;
    lockTiming.minSettleMs = savedFloor;
    jest.useRealTimers();
  });
  const bound = () => 2 * lockTiming.propagationMs;

  it("a solo user on OneDrive, pane open longer than the flag's lag: each refresh waits what a local file waits (one 250 ms wait, 0 ms added; was 10,000 ms)", async () => {
    const { wb } = await imported(finRows(5));
    // The same three refreshes on a local file, then on a workbook in the cloud.
    const perRefresh: Record<string, number[][]> = {};
    for (const where of ["local", "cloud"] as const) {
      lockTiming.mayBeShared = () => where === "cloud";
      resetLockMemory();
      await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs + 1);
      perRefresh[where] = [];
      for (let i = 0; i < 3; i++) {
        const { result, waits } = await refreshOnce(wb);
        expect(result.outcome).toBe("updated");
        perRefresh[where].push(waits);
      }
    }
    expect(perRefresh.local).toEqual([[250], [250], [250]]);
    // Added wait per refresh for the solo user in the cloud: none.
    expect(perRefresh.cloud).toEqual(perRefresh.local);
    expect(perRefresh.cloud.flat().filter((ms) => ms >= lockTiming.propagationMs)).toHaveLength(0);
  });

  it("the settle of a solo user's refresh in the cloud runs after the report (engine): one wait of the bound, off the user's path", async () => {
    lockTiming.mayBeShared = () => true;
    const { wb } = await imported(finRows(5));
    await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs + 1);
    const { waits } = await refreshOnce(wb, true);
    // The lock's short wait, then the settle's one wait (the engine hands the report back before it).
    expect(waits).toEqual([250, bound()]);
  });

  it("a runtime started less than the flag's lag ago waits the co-authoring bound (a colleague may have just joined); after the lag, not", async () => {
    lockTiming.mayBeShared = () => true;
    const { wb } = await imported(finRows(5));
    resetLockMemory();
    const first = await refreshOnce(wb);
    expect(first.waits).toEqual([bound()]);
    await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs);
    expect((await refreshOnce(wb)).waits).toEqual([250]);
  });

  it("co-authors seen less than the flag's lag ago: the bound again (the flag lags on the way out too)", async () => {
    lockTiming.mayBeShared = () => true;
    const { wb } = await imported(finRows(5));
    await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs + 1);
    lockModule.noteCoauthors();
    expect((await refreshOnce(wb)).waits).toEqual([bound()]);
    await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs);
    expect((await refreshOnce(wb)).waits).toEqual([250]);
  });

  it("contended: another owner's lock on the table (expired, left by a closed window) makes the lock wait the bound", async () => {
    lockTiming.mayBeShared = () => true;
    const { wb } = await imported(finRows(5));
    await jest.advanceTimersByTimeAsync(lockTiming.flagLagMs + 1);
    const old = new Date(T0.getTime() - 3_600_000).toISOString();
    wb.settings.set(lockSettingKey("ppm_financials"), JSON.stringify(JSON.stringify({ owner: "oOther", holder: "another window", acquiredAt: old, renewedAt: old, expiresAt: old })));
    // Seen now for the first time (its lease runs from then by this runtime's clock), then run out.
    await lockModule.readTableLock(createRequestContext(wb), "ppm_financials");
    await jest.advanceTimersByTimeAsync(lockModule.LOCK_TTL_MS + 1);
    expect((await refreshOnce(wb)).waits).toEqual([bound()]);
  });

  it("a local file never waits the bound, whatever was seen", async () => {
    lockTiming.mayBeShared = () => false;
    const { wb } = await imported(finRows(5));
    lockModule.noteCoauthors();
    expect((await refreshOnce(wb, true)).waits).toEqual([250]);
  });
});
