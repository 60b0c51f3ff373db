/**
 * Issue #26, hazard 9, on the two-client host: what the pane shows about co-authoring — whether
 * others are editing (`getIsActiveCollabSession`) and who holds a table, as far as this copy of the
 * settings tells (the Refresh tab's note and "Being refreshed by …" line read `engine.collaboration()`).
 */
import { Workbook, createExcelNamespace, createRequestContext } from "../../src/emulator";
import { COLLAB_FLAG_DELAY_MS, CoauthoringSession } from "../../src/emulator/coauthoring";
import { collaboration, watchSettings } from "../../src/addin/engine";
import { acquireTableLock, resetLockMemory } from "../../src/workbook/lock";
import { importTable } from "../../src/workbook/writer";
import { bindingDraft, finRows, finTable, TOKEN } from "../workbook/helpers";

describe("visible state under co-authoring", () => {
  const g = globalThis as unknown as { Excel?: unknown };
  const saved = g.Excel;
  afterEach(() => {
    g.Excel = saved;
    jest.useRealTimers();
  });

  it("the pane's reading says co-authoring is active and names who holds a table once the lock reached this copy", async () => {
    jest.useFakeTimers();
    resetLockMemory();
    const start = new Workbook({ currentYear: 2025 });
    const t = finTable(finRows(5));
    await importTable(createRequestContext(start), t, { binding: bindingDraft(t), secrets: [TOKEN] });
    const session = new CoauthoringSession(start, { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    g.Excel = createExcelNamespace(ann.workbook);
    expect(await collaboration()).toEqual({ active: false, holders: {} });
    const ben = session.addClient({ name: "Ben" });
    // Excel's flag lags the session (issue #35): the pane's note follows it.
    expect((await collaboration()).active).toBe(false);
    await jest.advanceTimersByTimeAsync(COLLAB_FLAG_DELAY_MS);
    expect((await collaboration()).active).toBe(true);
    const taking = acquireTableLock(createRequestContext(ben.workbook), "ppm_financials", { holder: "Ben's task pane" });
    await jest.advanceTimersByTimeAsync(20_000);
    await taking;
    expect((await collaboration()).holders).toEqual({ b1: { holder: "Ben's task pane", since: expect.any(String) as string } });
    ben.close();
    expect((await collaboration()).active).toBe(true);
    await jest.advanceTimersByTimeAsync(COLLAB_FLAG_DELAY_MS);
    expect((await collaboration()).active).toBe(false);
  });

  it("watching the settings never throws: a host without the event resolves to null (the pane then polls while co-authoring)", async () => {
    const session = new CoauthoringSession();
    const ann = session.addClient();
    g.Excel = createExcelNamespace(ann.workbook);
    const stop = await watchSettings(() => undefined);
    expect(stop === null || typeof stop === "function").toBe(true);
  });
});
