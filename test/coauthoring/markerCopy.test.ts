/**
 * Issue #34, item 7 (a breakage the tests let through): a refresh's marker names a rollback copy only
 * when the refresh made one. A table refreshed alone first keeps its (empty) rollback sheet; a later
 * refresh with co-authors makes no copy. Killed mid-write, it must be recovered as "marked" (the table
 * said INCOMPLETE), never "restored" from that empty sheet, which would blank the table. With the
 * marker always naming the rollback sheet, recovery emptied the table's body.
 */
import { Workbook, createRequestContext, toWorkbookFile } from "../../src/emulator";
import type { WorkbookModel } from "../../src/emulator/model";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { recoverInterruptedRefreshes } from "../../src/workbook/recovery";
import { importTable } from "../../src/workbook/writer";
import type { CellValue, Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, fixedNow, keyedSource, TOKEN } from "../workbook/helpers";
import { drive, useFakeClock } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const SHEET = "financials (json)";
const noQuery = (t: Table) => ({ table: t });

/** Values of the table's data cells (rows below the header), by row. */
function body(wb: WorkbookModel): unknown[][] {
  const sheet = toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!;
  const rows: unknown[][] = [];
  for (const c of sheet.cells) if (c.r >= 2 && c.c < 8) (rows[c.r - 2] ??= [])[c.c] = c.v;
  return rows;
}
function info(wb: WorkbookModel): string {
  const v = toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!.cells.find((c) => c.r === 0 && c.c === 0)?.v;
  return typeof v === "string" ? v : "";
}

/** Imported and refreshed once alone: the table's rollback sheet exists, its copy cleared. */
async function refreshedAlone(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(30));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, "b1"), secrets: [TOKEN], now: fixedNow });
  const r = await refreshTable(createRequestContext(wb), "b1", keyedSource(finRows(30, 1)), { applyQuery: noQuery, now: () => T0 });
  expect(r.outcome).toBe("updated");
  expect(wb.sheets.some((s) => s.name.startsWith("ppm_rb_"))).toBe(true);
  return wb;
}

describe("a co-authored refresh killed mid-write after an earlier solo refresh", () => {
  useFakeClock(T0);

  it("is recovered as marked, never restored from the empty rollback sheet: the table keeps its rows", async () => {
    const rows: CellValue[][] = finRows(30, 2).map((r, i) => (i % 3 === 0 ? [r[0], `Renamed ${i}`, ...r.slice(2)] : r));
    // How many requests the co-authored refresh makes undisturbed.
    const probe = new CoauthoringSession(await refreshedAlone());
    const pctx = createRequestContext(probe.addClient().workbook);
    probe.addClient();
    let requests = 0;
    const plain = pctx.sync.bind(pctx);
    (pctx as { sync: () => Promise<void> }).sync = () => (requests++, plain());
    await drive([refreshTable(pctx, "b1", keyedSource(rows), { applyQuery: noQuery, now: () => T0, delta: false })]);
    let marked = 0;
    for (let k = 2; k < requests; k++) {
      lockModule.resetLockMemory();
      jest.setSystemTime(T0);
      const session = new CoauthoringSession(await refreshedAlone());
      const ann = session.addClient({ name: "Ann" });
      session.addClient({ name: "Ben" });
      ann.reloadAtRequest(k);
      await drive([refreshTable(createRequestContext(ann.workbook), "b1", keyedSource(rows), { applyQuery: noQuery, now: () => ann.now(), delta: false })]);
      await session.settled();
      // This runtime sees the dead refresh's lock now; its lease runs out ten minutes later.
      await drive([recoverInterruptedRefreshes(createRequestContext(ann.workbook), { now: () => ann.now() })]);
      await jest.advanceTimersByTimeAsync(11 * 60_000);
      const [late] = await drive([recoverInterruptedRefreshes(createRequestContext(ann.workbook), { now: () => ann.now() })]);
      await session.settled();
      const outcomes = late.status === "fulfilled" ? late.value.map((x) => x.outcome) : [];
      expect([k, outcomes.includes("restored")]).toEqual([k, false]);
      if (outcomes.includes("marked")) {
        marked++;
        expect(info(session.document)).toMatch(/INCOMPLETE/);
      }
      // Whatever happened, the table still holds 30 records, each with its id.
      expect([k, body(session.document).filter((r) => typeof r[0] === "string" && r[0] !== "").length]).toEqual([k, 30]);
    }
    expect(marked).toBeGreaterThan(0);
  }, 120_000);
});
