/**
 * Issue #26, hazard 1, on the two-client host: two co-authors never both hold a table's lock. Each
 * reads back only its own copy of the settings, so the lock is held off until it has been seen
 * unchanged for longer than the propagation bound (there and back), and its lease is measured on the
 * reader's own clock from when it first saw that lock version, so a ±15-minute skew never takes a
 * live lock.
 */
import { Workbook, createRequestContext } from "../../src/emulator";
import { CoauthoringSession, type CoauthorClient } from "../../src/emulator/coauthoring";
import * as lockModule from "../../src/workbook/lock";
import { refreshTable } from "../../src/workbook/refresh";
import { importTable } from "../../src/workbook/writer";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, TOKEN } from "../workbook/helpers";
import { drive } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const SHEET = "financials (json)";
const noQuery = (t: Table) => ({ table: t });
let generation = 0;
function source(rows: CellValue[][]): RefreshSource {
  return {
    fetch: async () => {
      const gen = new Date(Date.UTC(2026, 1, 1, 7, 0, ++generation)).toISOString();
      return { status: "updated", table: finTable(rows, { generatedAt: gen, etag: `"${gen}"` }), validators: { etag: `"${gen}"`, generatedAt: gen } };
    },
  };
}

async function startWorkbook(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(5));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
  return wb;
}


/** The sheet ids of the table's sheet in every copy (the same id everywhere). */
function sheetId(session: CoauthoringSession): string {
  return session.document.sheets.find((s) => s.name === SHEET)!.id;
}

/** Cells (or the sheet) a client changed on the table's sheet, as the service recorded them. */
function cellsWrittenBy(session: CoauthoringSession, client: CoauthorClient): number {
  const id = sheetId(session);
  return session
    .changes()
    .filter((c) => c.origin === client.id)
    .reduce((n, c) => n + (c.cells.get(id)?.length ?? 0) + (c.sheets.has(id) ? 1 : 0), 0);
}

/** The table's body as a copy holds it. */
function body(wb: Workbook): unknown[][] {
  const t = wb.tables.find((x) => x.name === "ppm_financials")!;
  return wb.readValues(wb.requireSheetId(t.sheetId), wb.bodyRect(t));
}

describe("hazard 1: both co-authors refresh one table", () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(T0);
    lockModule.resetLockMemory?.();
  });
  afterEach(() => jest.useRealTimers());

  for (const d of [0, 500, 5_000]) {
    for (const lag of d === 0 ? [0] : [0, d / 2, d - 50]) {
      it(`d = ${d} ms, the second starts ${lag} ms later: the table ends as exactly one client's result; the other writes no cell and refuses clearly`, async () => {
        const session = new CoauthoringSession(await startWorkbook(), { delayMs: d });
        const ann = session.addClient({ name: "Ann" });
        const ben = session.addClient({ name: "Ben" });
        const annRows = finRows(6, 100);
        const benRows = finRows(7, 200);
        const run = (c: CoauthorClient, rows: CellValue[][]) =>
          refreshTable(createRequestContext(c.workbook), "b1", source(rows), { applyQuery: noQuery, now: () => c.now(), holder: c.name, delta: false });
        const later = async () => {
          if (lag > 0) await new Promise((r) => setTimeout(r, lag));
          return run(ben, benRows);
        };
        const [a, b] = await drive([run(ann, annRows), later()]);
        await jest.advanceTimersByTimeAsync(d + 1);
        expect(a.status).toBe("fulfilled");
        expect(b.status).toBe("fulfilled");
        const reports = [a, b].map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof run>>>).value);
        const winners = reports.filter((r) => r.outcome === "updated");
        expect(winners).toHaveLength(1);
        const loserIndex = reports[0].outcome === "updated" ? 1 : 0;
        const loser = [ann, ben][loserIndex];
        expect(["table_busy", "lock_lost"]).toContain(reports[loserIndex].failure?.code);
        expect(reports[loserIndex].failure?.message).toMatch(/refresh/i);
        expect(cellsWrittenBy(session, loser)).toBe(0);
        expect(loser.reloads + [ann, ben][1 - loserIndex].reloads).toBe(0);
        const winnerRows = loserIndex === 1 ? annRows : benRows;
        for (const wb of [session.document, ann.workbook, ben.workbook]) {
          expect(body(wb).map((r) => r[1])).toEqual(winnerRows.map((r) => r[1]));
        }
      });
    }
  }
});

describe("hazard 1: a ±15-minute clock skew never takes a live lock", () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(T0);
    lockModule.resetLockMemory?.();
  });
  afterEach(() => jest.useRealTimers());

  for (const [holderOffset, otherOffset] of [
    [-15, 15],
    [15, -15],
  ]) {
    it(`the holder's clock ${holderOffset} min, the other's ${otherOffset} min: the other is refused while the holder is alive`, async () => {
      const session = new CoauthoringSession(await startWorkbook(), { delayMs: 500 });
      const holder = session.addClient({ name: "Ann", clockOffsetMs: holderOffset * 60_000 });
      const other = session.addClient({ name: "Ben", clockOffsetMs: otherOffset * 60_000 });
      const [held] = await drive([lockModule.acquireTableLock(createRequestContext(holder.workbook), "ppm_financials", { holder: "Ann", now: () => holder.now() })]);
      expect(held.status).toBe("fulfilled");
      await jest.advanceTimersByTimeAsync(1_000);
      const [r] = await drive([refreshTable(createRequestContext(other.workbook), "b1", source(finRows(9, 300)), { applyQuery: noQuery, now: () => other.now(), holder: "Ben" })]);
      expect((r as PromiseFulfilledResult<{ failure?: { code: string } }>).value.failure?.code).toBe("table_busy");
      expect(cellsWrittenBy(session, other)).toBe(0);
      // Still refused eight minutes later (the holder is alive: within its lease by the other's own clock).
      await jest.advanceTimersByTimeAsync(8 * 60_000);
      const [r2] = await drive([refreshTable(createRequestContext(other.workbook), "b1", source(finRows(9, 300)), { applyQuery: noQuery, now: () => other.now(), holder: "Ben" })]);
      expect((r2 as PromiseFulfilledResult<{ failure?: { code: string } }>).value.failure?.code).toBe("table_busy");
    });
  }
});
