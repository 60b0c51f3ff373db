/**
 * A co-authored table (no rollback copy: the old cells are kept in the runtime) that grows:
 * - the first write request's look at the rows it grows into reads only what holds values there
 *   (before, every cell's formula, value and format of the grown rows in one response: a table that
 *   grew by ~30,000 rows × 12 failed every refresh on Excel on the web's 5 MB);
 * - a failure puts those rows' number formats back (before, they kept the data columns' formats).
 */
import { createRequestContext, inspect, Workbook } from "../../src/emulator";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import type { WorkbookModel } from "../../src/emulator/model";
import { refreshTable } from "../../src/workbook/refresh";
import { importTable } from "../../src/workbook/writer";
import { bindingDraft, finRows, finTable, keyedSource, TOKEN } from "../workbook/helpers";
import { drive, useFakeClock } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const OLD = 10;
const NEW = 3_000;
const noQuery = <T>(t: T) => ({ table: t });

/** A workbook with a 10-row table on Sheet1 (header at A2) whose column D below it the user formatted as a percentage, shared by Ann and Ben. */
async function shared() {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(OLD));
  const context = createRequestContext(wb);
  await importTable(context, t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
  const sheetName = "financials (json)";
  const sheet = context.workbook.worksheets.getItem(sheetName);
  sheet.getRange(`D${OLD + 3}:D${OLD + 3 + NEW}`).numberFormat = Array.from({ length: NEW + 1 }, () => ["0.00%"]);
  await context.sync();
  const session = new CoauthoringSession(wb);
  const ann = session.addClient({ name: "Ann" });
  session.addClient({ name: "Ben" });
  return { session, ann, sheetName };
}

/** The number formats of the rows below the old table, as far as the new one reaches (A:H). */
function formats(wb: WorkbookModel, sheetName: string): unknown[][] {
  return inspect(wb, `'${sheetName}'!A${OLD + 3}:H${OLD + 3 + NEW}`).numberFormat;
}

describe("a co-authored table that grows", () => {
  useFakeClock(T0);

  // With a note beside and below the rows it grows into, the sheet's used area reaches them: under
  // the strictest reading of getUsedRange the probe then reads every cell of them, so it reads only
  // the rows whose cells fit (`growthProbed`).
  it.each([
    ["nothing else on the sheet", null],
    ["a note beside and below the rows it grows into", `Z${OLD + NEW + 20}`],
  ])("reads no more of the rows it grows into than the response target allows: %s", async (_name, note) => {
    const { session, ann, sheetName } = await shared();
    if (note) {
      const context = createRequestContext(ann.workbook);
      context.workbook.worksheets.getItem(sheetName).getRange(note).values = [["note"]];
      await context.sync();
      await session.settled();
    }
    const source = keyedSource(finRows(NEW), new Date(Date.UTC(2026, 1, 1, 7, 0, 3)).toISOString());
    const before = ann.workbook.stats.maxResponseBytes;
    const [r] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", source, { applyQuery: noQuery, now: () => ann.now(), targetResponseBytes: 40_000 })]);
    await session.settled();
    expect(r.status === "fulfilled" && r.value.outcome).toBe("updated");
    // Before: the growth's 2,990 rows × 8 cells of formulas, values and formats in the first write
    // request's response (~380 KB); with the note, until `growthProbed`, the same.
    expect(ann.workbook.stats.maxResponseBytes).toBeLessThanOrEqual(Math.max(before, 40_000 * 1.2));
    if (note) expect(inspect(ann.workbook, `'${sheetName}'!${note}`).values[0][0]).toBe("note");
  });

  it("a failure after the rows were written puts back the formats of the rows it grew into", async () => {
    const { session, ann, sheetName } = await shared();
    const was = formats(ann.workbook, sheetName);
    expect(was.some((row) => row[3] === "0.00%")).toBe(true);
    const source = keyedSource(finRows(NEW), new Date(Date.UTC(2026, 1, 1, 7, 0, 3)).toISOString());
    // A full rewrite cancelled once every row was written (the data and the formats over the grown rows): the refresh restores.
    const ac = new AbortController();
    const onProgress = (e: { rowsWritten?: number }) => {
      if (e.rowsWritten === NEW) ac.abort();
    };
    const [r] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", source, { applyQuery: noQuery, now: () => ann.now(), signal: ac.signal, onProgress, delta: false })]);
    await session.settled();
    expect(ac.signal.aborted).toBe(true);
    expect(r.status === "fulfilled" && r.value.outcome).toBe("failed");
    expect(r.status === "fulfilled" && r.value.failure?.code).toBe("cancelled");
    expect(formats(ann.workbook, sheetName)).toEqual(was);
  });
});
