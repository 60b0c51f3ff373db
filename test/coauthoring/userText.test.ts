/**
 * Issue #34, item 4, on the two-client host: with co-authors a refresh writes the user's own cells
 * itself (no rollback copy inside Excel), from what it read. The formulas getter drops a quote prefix
 * (office-js #6687), so a note typed as `'00123`, `'1/2` or `'=x` read back as `00123`, `1/2`, `=x`
 * and came back, once its record moved to another row, as the number 123, a date and a live formula.
 * Now it stays the text it was, beside its record, in every copy; also when the refresh fails and the
 * old rows are put back. Seen failing before #34 (123, 46024, #NAME?).
 */
import { createRequestContext, EmulatedExcelError, Workbook } from "../../src/emulator";
import type { WorkbookModel } from "../../src/emulator/model";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import { refreshTable } from "../../src/workbook/refresh";
import { importTable } from "../../src/workbook/writer";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, keyedSource, TOKEN } from "../workbook/helpers";
import { drive, useFakeClock } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const noQuery = <T>(t: T) => ({ table: t });
const OLD = finRows(40);
/** Typed into the note column (General), quote-prefixed: the text Excel keeps. */
const NOTES: Record<number, string> = { 5: "'00123", 6: "'1/2", 7: "'=x", 8: "plain note" };
const SHOWN: Record<number, string> = { 5: "00123", 6: "1/2", 7: "=x", 8: "plain note" };

const keyed = (rows: CellValue[][], generation: number): RefreshSource => keyedSource(rows, new Date(Date.UTC(2026, 1, 1, 7, 0, generation)).toISOString());

async function startWorkbook(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(OLD);
  const ctx = createRequestContext(wb);
  await importTable(ctx, t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
  const lo = ctx.workbook.tables.getItem("ppm_financials");
  lo.columns.add(undefined, undefined, "note");
  await ctx.sync();
  // The user types the notes (the column is General): Excel keeps each as text, the quote as its prefix.
  const body = lo.getDataBodyRange();
  for (const [id, note] of Object.entries(NOTES)) body.getCell(Number(id) - 1, 8).values = [[note]];
  await ctx.sync();
  return wb;
}

/** Each record's note as the copy holds it: [id, value, value type, formula]. */
function notes(wb: WorkbookModel): Array<[string, unknown, string, unknown]> {
  const t = wb.tables.find((x) => x.name === "ppm_financials")!;
  const sheet = wb.requireSheetId(t.sheetId);
  const rect = wb.bodyRect(t);
  const values = wb.readValues(sheet, rect);
  const types = wb.readValueTypes(sheet, rect);
  const formulas = wb.readFormulas(sheet, rect);
  return values.flatMap((r, i) => (r[8] !== "" ? [[String(r[0]), r[8], types[i][8], formulas[i][8]] as [string, unknown, string, unknown]] : []));
}

const expected = Object.entries(SHOWN).map(([id, text]) => [id, text, "String", text]);

describe("quote-prefixed notes stay text when their records move under co-authoring", () => {
  useFakeClock(T0);

  for (const delta of [true, false]) {
    it(`a new record first: every record moves one row down, its note with it, still text (${delta ? "delta allowed" : "full rewrite"})`, async () => {
      const start = await startWorkbook();
      expect(notes(start)).toEqual(expected);
      const session = new CoauthoringSession(start);
      const ann = session.addClient({ name: "Ann" });
      const ben = session.addClient({ name: "Ben" });
      const first = [...finRows(1, 900)[0]];
      first[0] = 9_001;
      const rows = [first, ...OLD.map((r, i) => (i === 20 ? [r[0], "renamed", ...r.slice(2)] : r))];
      const [r] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", keyed(rows, 2), { applyQuery: noQuery, now: () => ann.now(), delta })]);
      await session.settled();
      expect(r.status === "fulfilled" && r.value.outcome).toBe("updated");
      for (const wb of [session.document, ann.workbook, ben.workbook]) expect(notes(wb)).toEqual(expected);
      // Each moved: record 5 is now on the sixth body row.
      const t = session.document.tables.find((x) => x.name === "ppm_financials")!;
      const body = session.document.readValues(session.document.requireSheetId(t.sheetId), session.document.bodyRect(t));
      expect(body[5].slice(0, 1).concat(body[5][8])).toEqual(["5", "00123"]);
    });
  }

  it("a refresh that fails after moving them puts the notes back as text at their old rows", async () => {
    const session = new CoauthoringSession(await startWorkbook());
    const ann = session.addClient({ name: "Ann" });
    session.addClient({ name: "Ben" });
    const first = [...finRows(1, 900)[0]];
    first[0] = 9_001;
    const rows = [first, ...OLD];
    // Excel refuses the commit (the info line's write, after every cell was written): the refresh restores.
    let written = 0;
    ann.workbook.faultInjector = (op) => (op.op === "set values" && /!A1$/.test(op.path) && ++written === 2 ? new EmulatedExcelError("GeneralException", "refused at the commit") : null);
    const [r] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", keyed(rows, 3), { applyQuery: noQuery, now: () => ann.now(), delta: false })]);
    ann.workbook.faultInjector = null;
    await session.settled();
    expect(r.status === "fulfilled" && r.value.failure?.message).toMatch(/previous data was restored/);
    expect(notes(session.document)).toEqual(expected);
    const t = session.document.tables.find((x) => x.name === "ppm_financials")!;
    const body = session.document.readValues(session.document.requireSheetId(t.sheetId), session.document.bodyRect(t));
    expect([body[4][0], body[4][8]]).toEqual(["5", "00123"]);
  });
});
