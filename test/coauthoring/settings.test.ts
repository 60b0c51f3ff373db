/**
 * Issue #35 on the two-client host: a settings write sends the writer's whole collection, so a
 * colleague's concurrent settings write (made before Ann's key reached his copy) erases Ann's key or
 * puts its older value back. The add-in's outcome stays correct:
 * - the lock Ann just wrote vanishes before her read-back: she takes it again (nobody held the table)
 *   and her refresh is the table's one result; the colleague's own key survives;
 * - right after Ann's commit the colleague's write puts the old binding and Ann's released lock back:
 *   Ann's batch settles (waits the co-authoring window, reads back, writes again), so every copy ends
 *   with Ann's binding, no lock and the colleague's flag;
 * - if Ann's runtime dies before it settles, the marker that came back with the old settings is not
 *   trusted: the table's info line shows no unfinished refresh, so the next start restores nothing.
 */
import { Workbook, createRequestContext, inspect } from "../../src/emulator";
import { CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { setRefreshOnOpen } from "../../src/workbook/openFlags";
import { settleSettings } from "../../src/workbook/settle";
import { markerKey, recoverInterruptedRefreshes } from "../../src/workbook/recovery";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { finRows, finTable } from "../workbook/helpers";
import { drive, twoBindings, useFakeClock } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const SHEET = "financials (json)";
const LOCK = lockModule.lockSettingKey("ppm_financials");
const noQuery = (t: Table) => ({ table: t });
function source(rows: CellValue[][], etag: string): RefreshSource {
  return { fetch: async () => ({ status: "updated", table: finTable(rows, { generatedAt: T0.toISOString(), etag }), validators: { etag, generatedAt: T0.toISOString() } }) };
}

const startWorkbook = () => twoBindings(T0);

/** The setting writes a client's requests made (what each request meant to write, in service order). */
const writesOf = (session: CoauthoringSession, c: CoauthorClient, key: string) =>
  session.changes().filter((x) => x.origin === c.id).flatMap((x) => x.settings.filter(([k]) => k === key));

/** Ben ticks b2's "refresh on open" in a batch of his own that settles, as the add-in does. */
async function benTicks(ben: CoauthorClient): Promise<void> {
  const ctx = createRequestContext(ben.workbook);
  await setRefreshOnOpen(ctx, "b2", true);
  await settleSettings(ctx);
}

/**
 * Ann's refresh of b1 on a context that calls `onSync` after each request (its number, and whether
 * that request removed the refresh marker: the commit). `slowMs`: the writes after the marker's
 * request take that long (the marker reaches co-authors before the commit).
 */
function annRefresh(ann: CoauthorClient, onSync: (n: number, committed: boolean) => void, settle: boolean, slowMs = 0) {
  const ctx = createRequestContext(ann.workbook);
  const plain = ctx.sync.bind(ctx);
  let n = 0;
  let marked = false;
  (ctx as { sync: () => Promise<void> }).sync = async () => {
    await plain();
    // Live: the marker before the commit (which turns it into its committed form, `"done":1`).
    const now = ann.workbook.settings.has(markerKey("b1")) && !ann.workbook.settings.get(markerKey("b1"))!.includes('\\"done\\":1');
    if (now && !marked && slowMs > 0) await new Promise((r) => setTimeout(r, slowMs));
    onSync(++n, marked && !now);
    marked ||= now;
  };
  return { ctx, run: refreshTable(ctx, "b1", source(finRows(6, 40), '"ann"'), { applyQuery: noQuery, now: () => ann.now(), holder: "Ann", delta: false, settle }) };
}

/**
 * Ann refreshes b1 (d = `d`; her batch settles or not; her writes after the marker take `slowMs`) and
 * Ben ticks b2's flag d/2 after her commit, from a copy that has not received it. `ticked()`: his tick.
 */
async function tickAfterCommit(d: number, settle: boolean, slowMs = 0) {
  const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
  const ann = session.addClient({ name: "Ann" });
  const ben = session.addClient({ name: "Ben" });
  let tick: Promise<void> | null = null;
  const { run } = annRefresh(ann, (_n, committed) => {
    if (committed && !tick) tick = new Promise<void>((r) => setTimeout(r, d / 2)).then(() => benTicks(ben));
  }, settle, slowMs);
  const ticked = (): Promise<void> => {
    expect(tick).not.toBeNull();
    return tick ?? Promise.resolve();
  };
  return { session, ann, ben, run, ticked };
}

async function everyCopy(session: CoauthoringSession, check: (wb: Workbook) => Promise<void>): Promise<void> {
  for (const wb of [session.document, ...session.clients.map((c) => c.workbook)]) await check(wb);
}

/**
 * Ben ticks b2's flag d/2 after Ann wrote her lock, from a copy that has not received it, so his
 * whole-collection write erases it; Ann's refresh of b1 must still be the table's one result and his
 * flag survive (checked here). `lateJoin`: Ann's runtime was open alone for longer than the flag's lag
 * before Ben joined (she takes the short wait, issue #35) and her writes after the marker take 3 d,
 * so the erasure reaches her while she holds the lock.
 */
async function benErasesAnnsLock(d: number, lateJoin: boolean) {
  const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
  const ann = session.addClient({ name: "Ann" });
  if (lateJoin) await jest.advanceTimersByTimeAsync(lockModule.lockTiming.flagLagMs + 1);
  const ben = session.addClient({ name: "Ben" });
  let ticked: Promise<void> | null = null;
  const { run } = annRefresh(ann, (n) => {
    // Ann's second request wrote her lock; Ben ticks before it reaches his copy.
    if (n === 2 && !ticked) ticked = new Promise<void>((r) => setTimeout(r, d / 2)).then(() => benTicks(ben));
  }, true, lateJoin ? 3 * d : 0);
  const [r] = await drive([run]);
  await drive([ticked ?? Promise.resolve()]);
  await jest.advanceTimersByTimeAsync(d + 1);
  await session.settled();
  const report = (r as PromiseFulfilledResult<Awaited<typeof run>>).value;
  expect(report.failure?.message ?? report.outcome).toBe("updated");
  await everyCopy(session, async (wb) => {
    const { bindings } = await readBindings(createRequestContext(wb));
    expect(bindings.find((b) => b.id === "b1")!.validators.etag).toBe('"ann"');
    expect(bindings.find((b) => b.id === "b2")!.refreshOnOpen).toBe(true);
    expect(wb.settings.has(LOCK)).toBe(false);
    expect(inspect(wb, `'${SHEET}'!B3`).values[0][0]).toBe(finRows(6, 40)[0][1]);
  });
  return { session, ann };
}

describe("issue #35: a colleague's concurrent settings write erases or reverts a key; the outcome stays correct", () => {
  useFakeClock(T0);

  for (const d of [500, 5_000]) {
    it(`d = ${d} ms: Ben's flag tick erases the lock Ann just wrote; she takes it again, refreshes, and his flag survives`, async () => {
      const { session, ann } = await benErasesAnnsLock(d, false);
      // Ben's tick took the lock out of the document: Ann wrote her lock twice, then released it.
      expect(writesOf(session, ann, LOCK).map(([, v]) => (v === null ? "deleted" : "written"))).toEqual(["written", "written", "deleted"]);
    });

    it(`d = ${d} ms: Ann alone for longer than the flag's lag takes her lock with the short wait; Ben, just joined, erases it with a stale write during her refresh; she writes it again and her refresh is the table's result`, async () => {
      const { session, ann } = await benErasesAnnsLock(d, true);
      // Her lock vanished from her copy while she held it, and she wrote it again.
      const annLock = writesOf(session, ann, LOCK).map(([, v]) => (v === null ? "deleted" : "written"));
      expect(annLock[0]).toBe("written");
      expect(annLock.filter((x) => x === "written").length).toBeGreaterThanOrEqual(2);
      expect(annLock[annLock.length - 1]).toBe("deleted");
    });

    it(`d = ${d} ms: right after Ann's commit Ben's write puts the old binding and her lock back; her batch settles and every copy ends with her binding, no lock and his flag`, async () => {
      const { session, ben, run, ticked } = await tickAfterCommit(d, true);
      const [r] = await drive([run]);
      await drive([ticked()]);
      await jest.advanceTimersByTimeAsync(d + 1);
      await session.settled();
      expect((r as PromiseFulfilledResult<Awaited<typeof run>>).value.outcome).toBe("updated");
      // Ben's write did revert them (the document held the old binding for a while).
      const reverted = session.changes().some((c) => c.origin === ben.id && c.settingsWhole?.some(([k, v]) => k === "ppm.binding.b1" && (JSON.parse(JSON.parse(v) as string) as { validators: { etag?: string } }).validators.etag === '"e1"'));
      expect(reverted).toBe(true);
      await everyCopy(session, async (wb) => {
        const b1 = (await readBindings(createRequestContext(wb))).bindings.find((b) => b.id === "b1")!;
        expect(b1.validators.etag).toBe('"ann"');
        expect(b1.rowCount).toBe(6);
        expect((await readBindings(createRequestContext(wb))).bindings.find((b) => b.id === "b2")!.refreshOnOpen).toBe(true);
        expect(wb.settings.has(LOCK)).toBe(false);
        expect(wb.settings.has(markerKey("b1"))).toBe(false);
      });
    });

    it(`d = ${d} ms: Ann's runtime dies before it settles; the marker Ben's stale write put back restores nothing at the next start`, async () => {
      // Ann's writes take longer than d after her marker, so Ben's copy has the marker but not her commit.
      const { session, ann, ben, run, ticked } = await tickAfterCommit(d, false, d + 100);
      const [r] = await drive([run]);
      expect((r as PromiseFulfilledResult<Awaited<typeof run>>).value.outcome).toBe("updated");
      // Ann's runtime is gone: nothing of hers settles.
      ann.close();
      await drive([ticked()]);
      await jest.advanceTimersByTimeAsync(d + 1);
      await session.settled();
      // Ben's stale copy put the marker (and the lock, and the old binding) back in the document.
      expect(ben.workbook.settings.has(markerKey("b1"))).toBe(true);
      const data = inspect(ben.workbook, `'${SHEET}'!A3:B8`).values;
      expect(data[0][1]).toBe(finRows(6, 40)[0][1]);
      // The lock came back too: a start leaves the table alone while it holds (a lease from when this
      // runtime first saw it), then finds the marker: the info line shows no unfinished refresh.
      const [early] = await drive([recoverInterruptedRefreshes(createRequestContext(ben.workbook), { now: () => ben.now() })]);
      expect(early.status === "fulfilled" ? early.value.map((x) => x.outcome) : ["rejected"]).toEqual(["skipped"]);
      await jest.advanceTimersByTimeAsync(11 * 60_000);
      const [found] = await drive([recoverInterruptedRefreshes(createRequestContext(ben.workbook), { now: () => ben.now() })]);
      expect(found.status === "fulfilled" ? found.value.map((x) => x.outcome) : ["rejected"]).toEqual(["cleared"]);
      expect(inspect(ben.workbook, `'${SHEET}'!A3:B8`).values).toEqual(data);
      expect(String(inspect(ben.workbook, `'${SHEET}'!A1`).values[0][0])).toMatch(/refreshed/);
      expect(ben.workbook.settings.has(markerKey("b1"))).toBe(false);
    });
  }
});
