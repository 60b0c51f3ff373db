/** Shared by the two-client tests (issue #26). */
import { lockTiming, resetLockMemory } from "../../src/workbook/lock";
import type { OfficeLike } from "../../src/addin/runtime";
import { Workbook, createRequestContext } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { bindingDraft, finRows, finTable, TOKEN } from "../workbook/helpers";

/**
 * Every two-client test is about a workbook in the cloud (co-authoring needs one): the workbook layer
 * treats it as possibly co-authored whatever Excel's lagging flag says (issue #35), as the add-in
 * runtime does for a document with an https address (`documentMayBeShared`).
 */
lockTiming.mayBeShared = () => true;

/** The address Office reports for a workbook co-authors share (OneDrive / SharePoint). */
export const CLOUD_URL = "https://contoso.sharepoint.com/sites/finance/Shared%20Documents/Portfolio.xlsx";

/** Runs the promises while advancing jest's fake clock in small steps (the lock waits on timers). */
export async function drive<T>(promises: Array<Promise<T>>): Promise<Array<PromiseSettledResult<T>>> {
  let done = false;
  const all = Promise.allSettled(promises).then((r) => {
    done = true;
    return r;
  });
  for (let i = 0; i < 10_000 && !done; i++) await jest.advanceTimersByTimeAsync(50);
  return all;
}

/** Each test on jest's fake clock from `t0`, with the lock's per-runtime memory of lock versions reset. */
export function useFakeClock(t0: Date): void {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(t0);
    resetLockMemory();
  });
  afterEach(() => jest.useRealTimers());
}

/** The Office a runtime sees (startup behaviour recorded: the document's, shared by its co-authors). */
export function fakeOffice(startup = "Load") {
  const rec = { startup, startupCalls: [] as string[] };
  const office = {
    context: {
      requirements: { isSetSupported: () => true },
      document: { url: CLOUD_URL, addHandlerAsync: () => undefined },
    },
    addin: {
      setStartupBehavior: async (b: unknown) => {
        rec.startupCalls.push(String(b));
        rec.startup = String(b);
      },
      getStartupBehavior: async () => rec.startup,
    },
    ribbon: { requestUpdate: async () => undefined },
    StartupBehavior: { load: "Load", none: "None" },
    EventType: { DocumentSelectionChanged: "documentSelectionChanged" },
    actions: { associate: () => undefined },
    onReady: () => undefined,
  };
  return { office: office as unknown as OfficeLike, rec };
}

/** A workbook with two bound tables, b1 (financials) and b2 (budget), 5 rows each, etag `"e1"`, imported at `at`. */
export async function twoBindings(at: Date): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  for (const id of ["b1", "b2"]) {
    const t = finTable(finRows(5), { key: id === "b1" ? "financials" : "budget", etag: '"e1"' });
    await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, id), secrets: [TOKEN], now: () => at });
  }
  return wb;
}
