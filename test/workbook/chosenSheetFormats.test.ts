/**
 * A failed import into a sheet the user chose leaves that area's number formats as they were
 * (`formatImage.ts`). Before, the clean-up cleared only the contents: the header row and the text
 * columns stayed `@`, so a number the user typed there afterwards became text, and a column the user
 * had formatted (a percentage, a currency) lost its format.
 */
import { expect } from "@jest/globals";
import { Workbook, createRequestContext, inspect, snapshot, EmulatedExcelError } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { readBindings } from "../../src/workbook/bindingStore";
import { RESTORE_OPERATIONS_PER_REQUEST } from "../../src/workbook/formatImage";
import { bindingDraft, finRows, finTable, fixedNow, TOKEN } from "./helpers";

const ROWS = 1_000;
/** The import's area at B3 (the info line, the header and the rows, eight columns: B:I) and a margin around it. */
const AROUND = `Sheet1!A1:J${3 + ROWS + 4}`;

/** A user's sheet: whole columns formatted (D as a percentage, F as a currency), a few cells of their own, a varied block. */
async function userSheet(varied = false): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const ctx = createRequestContext(wb);
  const s = ctx.workbook.worksheets.getItem("Sheet1");
  s.getRange("D1:D2000").numberFormat = Array.from({ length: 2000 }, () => ["0.00%"]);
  s.getRange("F1:F2000").numberFormat = Array.from({ length: 2000 }, () => ['"$"#,##0.00']);
  s.getRange("B10:C12").numberFormat = [["0.0", "yyyy-mm-dd"], ["0.0", "yyyy-mm-dd"], ["@", "@"]];
  s.getRange("A1").values = [["user's note"]];
  if (varied) {
    // A format that changes every row in columns G and H: one run a cell, more than one restore request.
    s.getRange(`G3:H${3 + ROWS + 1}`).numberFormat = Array.from({ length: ROWS + 2 }, (_, i) => (i % 2 ? ["0", "0.00"] : ["0.00", "0"]));
  }
  await ctx.sync();
  return wb;
}

function state(wb: Workbook, address = AROUND) {
  const r = inspect(wb, address);
  return { values: r.values, numberFormat: r.numberFormat };
}

async function importInto(wb: Workbook, maxFormatRuns?: number): Promise<unknown> {
  const table = finTable(finRows(ROWS));
  return importTable(createRequestContext(wb), table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "B3" }, secrets: [TOKEN], now: fixedNow, targetRequestBytes: 15_000, maxFormatRuns });
}

describe("a failed import into a chosen sheet puts the area's number formats back", () => {
  it("a clean import reads the formats once and changes them as an import does", async () => {
    const before = state(await userSheet());
    const wb = await userSheet();
    await importInto(wb);
    // The import itself writes its formats: the header is text, the percentage column is not kept.
    expect(inspect(wb, "Sheet1!B4").numberFormat[0][0]).toBe("@");
    expect(state(wb).numberFormat).not.toEqual(before.numberFormat);
    // Outside the area, nothing moved.
    expect(state(wb, "Sheet1!A1:A20")).toEqual(state(await userSheet(), "Sheet1!A1:A20"));
  });

  it.each([
    ["whole columns and a few cells", false],
    ["a format that changes every row (more than one restore request)", true],
  ])("Excel failing at each request (first action, last action, request lost; retried or not): %s", async (_name, varied) => {
    const before = state(await userSheet(varied));
    if (varied) expect(2 * (ROWS + 2)).toBeGreaterThan(RESTORE_OPERATIONS_PER_REQUEST);
    // A clean run: the operations each request carries.
    const clean = await userSheet(varied);
    const perRequest: number[] = [];
    const start = clean.stats.syncCount;
    clean.faultInjector = () => {
      const k = clean.stats.syncCount;
      perRequest[k] = (perRequest[k] ?? 0) + 1;
      return null;
    };
    await importInto(clean);
    clean.faultInjector = null;
    const requests = clean.stats.syncCount;
    expect(requests - start).toBeGreaterThan(8);
    const outcomes: Record<string, number> = {};
    let restored = 0;
    for (let k = start + 1; k <= requests; k++) {
      const ops = perRequest[k] ?? 0;
      if (ops === 0) continue;
      // A GeneralException is retried in halves (`syncOrSplit`), so it mostly ends imported; an
      // InvalidOperation is thrown at once, so every write request's failure reaches the clean-up.
      for (const mode of ["first", "last", "lost", "refused first", "refused last"] as const) {
        const wb = await userSheet(varied);
        const base = wb.stats.syncCount;
        expect(base).toBe(start);
        let seen = 0;
        let failed = false;
        wb.faultInjector = () => {
          if (failed || wb.stats.syncCount !== k) return null;
          const at = seen++;
          if (at !== (mode === "first" || mode === "refused first" ? 0 : ops - 1)) return null;
          failed = true;
          if (mode === "lost") return new Error(`request ${k} lost`);
          return new EmulatedExcelError(mode.startsWith("refused") ? "InvalidOperation" : "GeneralException", `injected failure in request ${k} (${mode} action)`);
        };
        const outcome = await importInto(wb).then(
          () => "imported",
          (e: { code?: string }) => e.code ?? "error",
        );
        wb.faultInjector = null;
        const where = `request ${k - start} of ${requests - start}, ${mode} action: ${outcome}`;
        expect([where, failed]).toEqual([where, true]);
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        if (outcome === "imported") {
          expect([where, snapshot(wb).sheets[0].tables.length]).toEqual([where, 1]);
          continue;
        }
        expect([where, snapshot(wb).sheets[0].tables]).toEqual([where, []]);
        expect([where, (await readBindings(createRequestContext(wb))).bindings]).toEqual([where, []]);
        const after = state(wb);
        const info = String(inspect(wb, "Sheet1!B3").values[0][0]);
        if (info === "") {
          // Failed before anything was written (the reads, or the first write request refused whole).
          expect([where, after]).toEqual([where, before]);
          continue;
        }
        // Written, then cleaned up: the failure's message at the anchor, every other value and every format as before.
        expect([where, info]).toEqual([where, expect.stringMatching(/^PPM · ⚠ import of dataset .* failed/)]);
        const values = after.values.map((row, r) => row.map((v, c) => (r === 2 && c === 1 ? before.values[r][c] : v)));
        expect([where, values]).toEqual([where, before.values]);
        expect([where, after.numberFormat]).toEqual([where, before.numberFormat]);
        restored++;
      }
    }
    expect(Object.keys(outcomes).sort()).toEqual(["imported", "write_failed"]);
    // Every write request before the commit, refused, reached the clean-up (19 requests: 7 reads, 10 writes before the commit).
    expect(restored).toBeGreaterThanOrEqual(20);
  }, 300_000);

  it("the area the failed import leaves takes a number the user types as a number", async () => {
    const wb = await userSheet();
    wb.faultInjector = (op) => (/^add$/i.test(op.op) && /tables$/i.test(op.path) ? new EmulatedExcelError("GeneralException", "no table") : null);
    await expect(importInto(wb)).rejects.toMatchObject({ code: "write_failed" });
    wb.faultInjector = null;
    const context = createRequestContext(wb);
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    sheet.getRange("C4").values = [["123"]];
    await context.sync();
    const typed = sheet.getRange("C4");
    typed.load("values,numberFormat");
    await context.sync();
    expect(typed.values[0][0]).toBe(123);
    expect(typed.numberFormat[0][0]).toBe("General");
  });

  it("an area whose formats change more often than can be kept is refused before anything is written", async () => {
    const before = state(await userSheet(true));
    const wb = await userSheet(true);
    // 2,004 runs in G:H alone, over a limit of 1,000.
    await expect(importInto(wb, 1_000)).rejects.toMatchObject({ code: "occupied", message: expect.stringMatching(/^The cells' number formats in B3:I1004 on "Sheet1" change more than 1,000 times; .*Clear Formats/) });
    expect(state(wb)).toEqual(before);
    // The limit counts runs, not cells: whole-column formats over the same area import.
    await expect(importInto(await userSheet(false), 1_000)).resolves.toMatchObject({ rowCount: ROWS });
  });

  it("a value the user types into the area during the import stops it, and is kept (put back when the request that found it went over it)", async () => {
    // The user types into a row the import has not reached, before each write request in turn.
    const clean = await userSheet();
    const start = clean.stats.syncCount;
    await importInto(clean);
    const requests = clean.stats.syncCount - start;
    let stopped = 0;
    for (let k = 1; k <= requests; k++) {
      const wb = await userSheet();
      const context = createRequestContext(wb);
      const plain = context.sync.bind(context);
      let n = 0;
      let typedAt = -1;
      (context as { sync: () => Promise<void> }).sync = async () => {
        if (++n === k) {
          const user = createRequestContext(wb);
          user.workbook.worksheets.getItem("Sheet1").getRange(`E${3 + ROWS}`).values = [["typed by the user"]];
          await user.sync();
          typedAt = n;
        }
        await plain();
      };
      const table = finTable(finRows(ROWS));
      const outcome = await importTable(context, table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "B3" }, secrets: [TOKEN], now: fixedNow, targetRequestBytes: 15_000 }).then(
        () => "imported",
        (e: { code?: string }) => e.code ?? "error",
      );
      expect(typedAt).toBe(k);
      const cell = inspect(wb, `Sheet1!E${3 + ROWS}`).values[0][0];
      if (outcome === "imported") {
        // Typed after the import wrote that row: the user's edit of the table, as any later edit.
        expect([k, cell]).toEqual([k, "typed by the user"]);
        expect([k, snapshot(wb).sheets[0].tables.length]).toEqual([k, 1]);
        continue;
      }
      expect([k, outcome]).toEqual([k, "occupied"]);
      expect([k, cell]).toEqual([k, "typed by the user"]);
      // Nothing else of the import is left: the area is empty but for the anchor's message (when
      // anything was written) and the user's cell.
      const left = inspect(wb, `Sheet1!B4:I${4 + ROWS}`).values.flat().filter((v) => v !== "");
      expect([k, left]).toEqual([k, ["typed by the user"]]);
      expect([k, snapshot(wb).sheets[0].tables]).toEqual([k, []]);
      stopped++;
    }
    // Typed before the area was checked (refused, nothing written), and before each write request
    // (after its block was checked: the block's own request reads it first, and it is put back).
    expect(stopped).toBeGreaterThan(5);
  });
});
