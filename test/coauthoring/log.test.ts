/**
 * Issue #26, hazard 9, on the two-client host: concurrent appends to the refresh log lose no entries
 * (each runtime appends to its own key of the table's log; the keys are merged when read; issue #35:
 * a co-author's whole-collection write that erased an entry is written again when the batch
 * settles), and the keys stay bounded.
 */
import { Workbook, createRequestContext } from "../../src/emulator";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import { appendRefreshLog, readRefreshLog } from "../../src/workbook/refreshLog";
import type { RefreshLogEntry } from "../../src/refresh/engine";
import { drive } from "./helpers";
import { settleSettings } from "../../src/workbook/settle";

const entry = (at: string, outcome: RefreshLogEntry["outcome"], code: string | null = null): RefreshLogEntry => ({
  at, bindingId: "b1", tableName: "ppm_financials", outcome, added: 0, changed: 0, removed: 0, strategy: null, ms: 5, cellsWritten: 0, code, fallback: null, bytesReceived: 0,
});

describe("hazard 9: the refresh log under co-authoring", () => {
  afterEach(() => jest.useRealTimers());

  it("two co-authors appending to one table's log at the same time: after convergence both entries are there, in every copy", async () => {
    jest.useFakeTimers();
    const session = new CoauthoringSession(new Workbook({}), { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    // Each append in a batch that settles (issue #35): the appends cross, and each sends its writer's
    // whole settings collection, so the later one erases the other's entry until its batch writes it again.
    const append = async (c: typeof ann, e: RefreshLogEntry, writer: string) => {
      const ctx = createRequestContext(c.workbook);
      await appendRefreshLog(ctx, e, writer);
      return settleSettings(ctx);
    };
    const settled = await drive([
      append(ann, entry("2026-02-01T08:00:00.000Z", "updated"), "ann"),
      append(ben, entry("2026-02-01T08:00:01.000Z", "failed", "table_busy"), "ben"),
      append(ann, entry("2026-02-01T08:00:02.000Z", "unchanged"), "ann"),
    ]);
    expect(settled.map((r) => r.status === "fulfilled" && r.value)).toEqual([[], [], []]);
    await jest.advanceTimersByTimeAsync(501);
    for (const c of [ann, ben]) {
      const log = await readRefreshLog(createRequestContext(c.workbook));
      expect(log.map((e) => e.outcome)).toEqual(["updated", "failed", "unchanged"]);
    }
  });

  it("keys stay bounded: an idle writer's key and the per-table key of earlier versions are folded in, nothing lost", async () => {
    const wb = new Workbook({});
    wb.setSetting("ppm.refreshLog.b1", JSON.stringify([entry("2026-01-01T08:00:00.000Z", "updated")]));
    await appendRefreshLog(createRequestContext(wb), entry("2026-01-31T08:00:00.000Z", "updated"), "old");
    await appendRefreshLog(createRequestContext(wb), entry("2026-02-01T08:00:00.000Z", "unchanged"), "new");
    expect([...wb.settings.keys()].filter((k) => k.startsWith("ppm.refreshLog"))).toEqual(["ppm.refreshLog.b1@new"]);
    expect((await readRefreshLog(createRequestContext(wb))).map((e) => e.at)).toEqual(["2026-01-01T08:00:00.000Z", "2026-01-31T08:00:00.000Z", "2026-02-01T08:00:00.000Z"]);
  });
});
