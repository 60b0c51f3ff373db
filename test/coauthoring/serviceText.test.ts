/**
 * Security review (2026-11-30) on the two-client host: with co-authors a failed refresh puts the old
 * cells back from what it read (`formulas`, no rollback copy). The formulas getter cannot tell a text
 * `=CONCAT(…)` (a service's value in a text column) from a formula (office-js #6687), and the restore
 * gives every row the first body row's format: a user who formatted just that first cell General made
 * the restore write the service's text as a live formula ("pwned" in every copy). Now the columns
 * holding such a text are read as values too, and the text goes back as text.
 */
import { createRequestContext, EmulatedExcelError, Workbook } from "../../src/emulator";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import type { WorkbookModel } from "../../src/emulator/model";
import { refreshTable } from "../../src/workbook/refresh";
import { importTable } from "../../src/workbook/writer";
import type { CellValue } from "../../src/table/model";
import { bindingDraft, finRows, finTable, keyedSource, TOKEN } from "../workbook/helpers";
import { drive, useFakeClock } from "./helpers";

const T0 = new Date("2026-02-01T08:00:00Z");
const noQuery = <T>(t: T) => ({ table: t });
const EVIL = '=CONCAT("pw","ned")';
const OLD: CellValue[][] = finRows(40);
OLD[2][1] = EVIL; // the service's text in the text column "name"

/** Row 3's name cell in a copy: [value, value type, formula]. */
function nameCell(wb: WorkbookModel): [unknown, string, unknown] {
  const t = wb.tables.find((x) => x.name === "ppm_financials")!;
  const sheet = wb.requireSheetId(t.sheetId);
  const rect = wb.bodyRect(t);
  return [wb.readValues(sheet, rect)[2][1], wb.readValueTypes(sheet, rect)[2][1], wb.readFormulas(sheet, rect)[2][1]];
}

describe("a service's formula-like text stays text when a co-authored refresh fails and restores", () => {
  useFakeClock(T0);

  for (const firstFormat of ["General", "@"]) {
    it(`the first body cell of the text column formatted ${firstFormat}`, async () => {
      const wb = new Workbook({ currentYear: 2025 });
      const t = finTable(OLD);
      const ctx = createRequestContext(wb);
      await importTable(ctx, t, { binding: bindingDraft(t), secrets: [TOKEN], now: () => T0 });
      ctx.workbook.tables.getItem("ppm_financials").getDataBodyRange().getCell(0, 1).numberFormat = [[firstFormat]];
      await ctx.sync();
      expect(nameCell(wb)).toEqual([EVIL, "String", EVIL]);

      const session = new CoauthoringSession(wb);
      const ann = session.addClient({ name: "Ann" });
      const ben = session.addClient({ name: "Ben" });
      const first = [...finRows(1, 900)[0]];
      first[0] = 9_001;
      // Excel refuses the commit (the info line's write, after every cell was written): the refresh restores.
      let written = 0;
      ann.workbook.faultInjector = (op) => (op.op === "set values" && /!A1$/.test(op.path) && ++written === 2 ? new EmulatedExcelError("GeneralException", "refused at the commit") : null);
      const [r] = await drive([refreshTable(createRequestContext(ann.workbook), "b1", keyedSource([first, ...OLD], "2026-02-01T07:00:03Z"), { applyQuery: noQuery, now: () => ann.now(), delta: false })]);
      ann.workbook.faultInjector = null;
      await session.settled();
      expect(r.status === "fulfilled" && r.value.failure?.message).toMatch(/previous data was restored/);
      // Text in every copy (before the fix: "pwned", a formula). In a General cell Excel keeps it
      // quote-prefixed, which the formulas getter does not show (office-js #6687).
      for (const copy of [session.document, ann.workbook, ben.workbook]) expect(nameCell(copy)).toEqual([EVIL, "String", EVIL]);
    });
  }
});
