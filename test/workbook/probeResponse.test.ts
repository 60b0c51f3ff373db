/**
 * Each block's probe (`queueTypedProbe`: what holds a value in the rows the block fills, read in the
 * block's own request) stays under the response limit when the sheet holds something beside or below
 * the import. The emulated host answers `Range.getUsedRange` with the sheet's used rectangle met with
 * the range (the strictest reading, src/emulator/README.md), so then the probe reads back every cell
 * of the block: a table of short cells (12 small-number columns, ~2 request bytes a cell) read back
 * about five times its request and failed with ResponsePayloadSizeLimitExceeded. Blocks are now also
 * capped by that read (`rowsUnderProbe`).
 */
import { expect } from "@jest/globals";
import { Workbook, createRequestContext, inspect } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import type { Column } from "../../src/service";
import { bindingDraft, finTable, fixedNow, TOKEN } from "./helpers";
import { once, streamed, streaming } from "./streamHelpers";

/** Excel on the web's 5 MB scaled down ten times, with the writer's target under it as by default (4 of 5). */
const LIMIT = 500_000;
const TARGET = 400_000;
const ROWS = 40_000;
const COLUMNS: Column[] = Array.from({ length: 12 }, (_, c) => ({ name: `n${c}`, type: "integer" }));
const rows = () => Array.from({ length: ROWS }, (_, i) => Array.from({ length: 12 }, (_, c) => (i + c) % 10));

async function sheetWith(cells: Record<string, string>): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: LIMIT });
  const ctx = createRequestContext(wb);
  const s = ctx.workbook.worksheets.getItem("Sheet1");
  for (const [address, text] of Object.entries(cells)) s.getRange(address).values = [[text]];
  await ctx.sync();
  return wb;
}

describe("a block's probe reads back no more than a response may carry", () => {
  // Blocks of this table: capped by the probe (22 here), else by the request's bytes (10). The cap
  // costs requests only where something lies beside or below.
  it.each([
    ["a note beside the area and one far below it", { A1: "note", Z60000: "far" }, 15],
    ["a note far below the area only", { B90000: "far below" }, 15],
    ["nothing else on the sheet", {}, 0],
  ])("%s", async (_name, cells, moreBlocksThan) => {
    const wb = await sheetWith(cells);
    const table = finTable(rows(), {}, COLUMNS);
    const result = await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "B3" }, secrets: [TOKEN], now: fixedNow, targetRequestBytes: TARGET });
    expect(result.rowCount).toBe(ROWS);
    // Every request that wrote a block (the reads before it are small requests; they may be refused
    // for their response and are read again in halves, as `visitInBlocks` does) was answered.
    const { requestBytesPerSync: sent, responseBytesPerSync: received } = wb.stats;
    const blocks = sent.flatMap((bytes, i) => (bytes > 20_000 ? [received[i]] : []));
    expect(blocks.length).toBeGreaterThan(moreBlocksThan === 0 ? 5 : moreBlocksThan);
    if (moreBlocksThan === 0) expect(blocks.length).toBeLessThan(15);
    for (const bytes of blocks) expect(bytes).toBeLessThanOrEqual(LIMIT);
    expect(wb.stats.maxRequestBytes).toBeLessThanOrEqual(LIMIT);
    // The table is whole and the user's cells are where they were.
    expect(inspect(wb, `Sheet1!B5:M5`).values[0]).toEqual(rows()[0]);
    expect(inspect(wb, `Sheet1!B${4 + ROWS}:M${4 + ROWS}`).values[0]).toEqual(rows()[ROWS - 1]);
    for (const [address, text] of Object.entries(cells)) expect(inspect(wb, `Sheet1!${address}`).values[0][0]).toBe(text);
  });

  it("streamed into its own sheet: a note typed far below while it runs (after the used area was read)", async () => {
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: LIMIT });
    const type = once(wb, 6_000, (book) => void (book.worksheets.getItem("financials (json)").getRange("Z90000").values = [["note"]]));
    const r = await streamed(wb, streaming(finTable(rows(), {}, COLUMNS), { afterFlush: type.afterFlush }), { targetRequestBytes: TARGET });
    expect(type.done()).toBe(true);
    expect(r.rowCount).toBe(ROWS);
    // The note came after the last read of the used area: the next block was not capped for it, and
    // its answer (the probe read back every cell) was refused. That block was sent again, capped,
    // and so was every later one; the import completed.
    const { requestBytesPerSync: sent, responseBytesPerSync: received } = wb.stats;
    const refused = sent.flatMap((bytes, i) => (bytes > 20_000 && received[i] > LIMIT ? [i] : []));
    expect(refused).toHaveLength(1);
    expect(r.shrinks).toBe(1);
    expect(inspect(wb, "'financials (json)'!Z90000").values[0][0]).toBe("note");
    expect(inspect(wb, "'financials (json)'!A3:L3").values[0]).toEqual(rows()[0]);
    expect(inspect(wb, `'financials (json)'!A${2 + ROWS}:L${2 + ROWS}`).values[0]).toEqual(rows()[ROWS - 1]);
  });
});
