/**
 * Issue #26, hazard 6, on the two-client host: bindings are never written whole from a stale copy.
 * After convergence the binding holds the winner's validators and every client's refresh-on-open flag
 * change; a refusal (`table_busy`) writes no binding.
 */
import { createRequestContext } from "../../src/emulator";
import { CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { setRefreshOnOpen } from "../../src/workbook/openFlags";
import { settleSettings } from "../../src/workbook/settle";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { finRows, finTable } from "../workbook/helpers";
import { drive, twoBindings } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
function source(rows: CellValue[][], etag: string): RefreshSource {
  return { fetch: async () => ({ status: "updated", table: finTable(rows, { generatedAt: T0.toISOString(), etag }), validators: { etag, generatedAt: T0.toISOString() } }) };
}
const offline: RefreshSource = {
  fetch: async () => {
    throw Object.assign(new Error("The service could not be reached (network error)."), { code: "network" });
  },
};

const startWorkbook = () => twoBindings(T0);


const settingKeysWrittenBy = (session: CoauthoringSession, c: CoauthorClient) =>
  session.changes().filter((x) => x.origin === c.id).flatMap((x) => x.settings.map(([k]) => k));

describe("hazard 6: bindings merged, never written whole from a stale copy", () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(T0);
    lockModule.resetLockMemory?.();
  });
  afterEach(() => jest.useRealTimers());

  // Issue #35: with whole-collection settings writes, for every d (a copy is stale only when d > 0).
  for (const d of [500, 5_000]) it(`d = ${d} ms: a failed refresh in a copy that has not yet received a co-author's refresh leaves the winner's validators`, async () => {
    const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    // As the add-in's engine runs it: the report is handed back at the commit, the batch settles after (issue #35).
    const benContext = createRequestContext(ben.workbook);
    const [won] = await drive([refreshTable(benContext, "b1", source(finRows(6, 9), '"e2"'), { applyQuery: noQuery, now: () => ben.now(), holder: "Ben", settle: false })]);
    expect((won as PromiseFulfilledResult<{ outcome: string }>).value.outcome).toBe("updated");
    // Ben's binding has not reached Ann yet (his refresh handed its report back at the commit): Ann's refresh fails against her older copy.
    // Her status write sends her whole (stale) settings collection, which puts the old binding back
    // until Ben's batch settles it again (issue #35).
    const [lost] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", offline, { applyQuery: noQuery, now: () => ann.now(), holder: "Ann" }), settleSettings(benContext) as Promise<never>]);
    expect((lost as PromiseFulfilledResult<{ failure?: { code: string } }>).value.failure?.code).toBe("network");
    await jest.advanceTimersByTimeAsync(d + 1);
    for (const c of [ann, ben]) {
      const b1 = (await readBindings(createRequestContext(c.workbook))).bindings.find((b) => b.id === "b1")!;
      expect(b1.validators.etag).toBe('"e2"');
      expect(b1.rowCount).toBe(6);
      // Ann's failure was about data no longer in the sheet: it is not shown over Ben's fresh refresh.
      expect(b1.lastFailure).toBeNull();
    }
  });

  for (const d of [0, 500, 5_000]) it(`d = ${d} ms: a failure against the current version is shown to every co-author`, async () => {
    const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    await drive([refreshTable(createRequestContext(ann.workbook), "b1", offline, { applyQuery: noQuery, now: () => ann.now(), holder: "Ann" })]);
    await jest.advanceTimersByTimeAsync(d + 1);
    const b1 = (await readBindings(createRequestContext(ben.workbook))).bindings.find((b) => b.id === "b1")!;
    expect(b1.lastFailure?.code).toBe("network");
    expect(b1.validators.etag).toBe('"e1"');
  });

  for (const d of [0, 500, 5_000]) it(`d = ${d} ms: both refresh one table and each ticks a flag meanwhile: the winner's validators and both flags survive; the refusal writes no binding`, async () => {
    const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    const tick = async (c: CoauthorClient, id: string): Promise<never> => {
      const ctx = createRequestContext(c.workbook);
      await setRefreshOnOpen(ctx, id, true);
      await settleSettings(ctx);
      return undefined as never;
    };
    const run = (c: CoauthorClient, etag: string) =>
      refreshTable(createRequestContext(c.workbook), "b1", source(finRows(6, c.id * 10), etag), { applyQuery: noQuery, now: () => c.now(), holder: c.name, delta: false });
    const [a, b] = await drive([
      run(ann, '"ann"'),
      run(ben, '"ben"'),
      // Each tick in a batch of its own that settles (as the engine's runSettled does, issue #35).
      tick(ann, "b2"),
      tick(ben, "b1"),
    ]);
    await jest.advanceTimersByTimeAsync(d + 1);
    const reports = [a, b].map((r) => (r as PromiseFulfilledResult<{ outcome: string; failure?: { code: string } }>).value);
    const winner = reports[0].outcome === "updated" ? ann : ben;
    const loser = winner === ann ? ben : ann;
    expect(reports.filter((r) => r.outcome === "updated")).toHaveLength(1);
    expect(settingKeysWrittenBy(session, loser).filter((k) => k === "ppm.binding.b1" || k === "ppm.status.b1")).toEqual([]);
    for (const c of [ann, ben]) {
      const { bindings } = await readBindings(createRequestContext(c.workbook));
      const b1 = bindings.find((x) => x.id === "b1")!;
      const b2 = bindings.find((x) => x.id === "b2")!;
      expect(b1.validators.etag).toBe(winner === ann ? '"ann"' : '"ben"');
      expect(b1.refreshOnOpen).toBe(true);
      expect(b2.refreshOnOpen).toBe(true);
    }
  });
});
