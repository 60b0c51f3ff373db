/**
 * Issue #24 item 3: a delta refresh reads back only the blocks Excel's checksums say moved, and never
 * keeps what the user typed over. Each case: the same table imported into two workbooks, the same user
 * edit in both, then a 1 % delta refresh in one and a full rewrite in the other: the tables must be
 * equal cell for cell (values and formulas), and the delta must have read far less than the table.
 * Seen failing with the verification switched off (every block's proposal accepted without comparing
 * checksums): the typed value, the cleared cell, the formula with the same value, the last block's edit
 * and the wrong fingerprint all stayed; the typed-back value cannot fail (the cell holds the same).
 */
import { rowHashSheetName } from "../../src/workbook/delta";
import { Workbook, createRequestContext, inspect, seed } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { draftBinding } from "../../src/refresh/binding";
import { checksumFormula, checkSheetName, predictChecksum } from "../../src/workbook/checksums";
import { COLUMNS, onePercentChanged, row, sourceOf, tableMaker } from "../../bench/deltaScenario";
import type { CellValue } from "../../src/table/model";
import { planColumns } from "../../src/workbook/cells";
import { typedRows } from "../../src/workbook/writer";
import { rowHash } from "../../src/refresh/rowHash";

const ROWS = 650;
const SHEET = "'financials (json)'";
const sum = (a: readonly number[]) => a.reduce((x, y) => x + y, 0);

type Edit = (wb: Workbook) => void;

/** Imports gen 1 into two workbooks, applies `edit` to both, refreshes one as a delta and one in full. */
async function run(edit: Edit): Promise<{ delta: Workbook; full: Workbook; strategy: string | undefined; responseBytes: number; importBytes: number }> {
  const table = tableMaker();
  const gen1 = Array.from({ length: ROWS }, (_, i) => row(i + 1, 1));
  const gen2: CellValue[][] = onePercentChanged(gen1, ROWS + 1);
  const books = [new Workbook({ currentYear: 2025 }), new Workbook({ currentYear: 2025 })];
  let strategy: string | undefined;
  let responseBytes = 0;
  let importBytes = 0;
  const t1 = table(gen1);
  const t2 = table(gen2);
  for (const [i, wb] of books.entries()) {
    const ctx = createRequestContext(wb);
    await importTable(ctx, t1, { binding: draftBinding({ id: "ck", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }) });
    importBytes = sum(wb.stats.requestBytesPerSync);
    edit(wb);
    const before = sum(wb.stats.responseBytesPerSync);
    const r = await refreshTable(ctx, "ck", sourceOf(t2), { delta: i === 0, now: () => new Date("2026-01-02T08:00:00Z") });
    expect(r.outcome).toBe("updated");
    if (i === 0) {
      strategy = r.delta?.strategy;
      responseBytes = sum(wb.stats.responseBytesPerSync) - before;
    }
  }
  return { delta: books[0], full: books[1], strategy, responseBytes, importBytes };
}

/** The table's area (header at row 2, data columns A:L) and the rows below it. */
const AREA = `${SHEET}!A1:L${ROWS + 10}`;

async function expectEqualToFullRewrite(edit: Edit): Promise<void> {
  const { delta, full, strategy, responseBytes, importBytes } = await run(edit);
  expect(strategy).toBe("delta");
  expect(inspect(delta, AREA).formulas).toEqual(inspect(full, AREA).formulas);
  expect(inspect(delta, AREA).valueTypes).toEqual(inspect(full, AREA).valueTypes);
  // Only the edited block and the changed rows were read, not the table (its import sent importBytes;
  // reading it back as formulas costs about as much).
  expect(responseBytes).toBeLessThan(importBytes / 2);
}

const at = (cell: string) => `${SHEET}!${cell}`;
const write = (wb: Workbook, cell: string, v: unknown, prop: "values" | "formulas" = "values") => {
  const { sheet, rect } = wb.resolveAddress(at(cell), wb.activeSheet());
  if (prop === "values") wb.writeValues(sheet, rect, [[v]]);
  else {
    // A formula goes in only once the cell is no longer text-formatted (the user changed the format first).
    wb.writeNumberFormat(sheet, rect, [["General"]]);
    wb.writeFormulas(sheet, rect, [[v]]);
  }
};

test("a value typed over a data cell of an unchanged record is rewritten by the delta", async () => {
  // Row 12 (record 10) is the same in both exports; its Name cell is typed over.
  await expectEqualToFullRewrite((wb) => seed(wb, at("B12"), [["typed by the user"]]));
});

test("a cleared data cell is rewritten", async () => {
  await expectEqualToFullRewrite((wb) => write(wb, "D20", ""));
});

test("a formula typed over a data cell, even one showing the same value, is replaced by the value", async () => {
  await expectEqualToFullRewrite((wb) => {
    const v = inspect(wb, at("B30")).values[0][0];
    write(wb, "B30", `="${String(v)}"`, "formulas");
    expect(inspect(wb, at("B30")).values[0][0]).toBe(v);
  });
});

test("a value typed over and typed back leaves nothing to rewrite, and the result is still the full rewrite's", async () => {
  await expectEqualToFullRewrite((wb) => {
    const v = inspect(wb, at("J40")).values[0][0];
    write(wb, "J40", 123456);
    write(wb, "J40", v);
  });
});

test("an error value in a data cell makes its block's checksum an error: the block is read and rewritten (issue #34, item 7)", async () => {
  await expectEqualToFullRewrite((wb) => {
    write(wb, "D50", "=1/0", "formulas");
    expect(inspect(wb, at("D50")).values[0][0]).toBe("#DIV/0!");
  });
});

test("a character outside the BMP typed into a data cell (MID splits it: an error) is read and rewritten (issue #34, item 7)", async () => {
  await expectEqualToFullRewrite((wb) => write(wb, "B60", "typed \u{1F600} here"));
});

test("an edit in the last, partial block is rewritten", async () => {
  await expectEqualToFullRewrite((wb) => write(wb, `D${ROWS + 1}`, 999));
});

test("the checksum sheet is very hidden, one formula per block, the last block partial", async () => {
  const { delta } = await run(() => undefined);
  const name = checkSheetName("ck");
  const sheet = delta.sheetByName(name)!;
  expect(sheet.visibility).toBe("VeryHidden");
  const state = JSON.parse(String(inspect(delta, `'${name}'!A2`).values[0][0])) as { r: number; n: number; g: { rows: number } };
  // The refreshed table: one record removed (gen 2 of the scenario at 650 rows).
  const rows = state.g.rows;
  expect(rows).toBe(ROWS - 1);
  const r = state.r;
  const blocks = Math.ceil(rows / r);
  expect(state.n).toBe(blocks);
  expect(rows % r).not.toBe(0);
  const f = inspect(delta, `'${name}'!B1:B${blocks + 1}`).formulas.map((x) => x[0]);
  expect(f[blocks]).toBe("");
  expect(f[blocks - 1]).toBe(checksumFormula({ sheet: "financials (json)", top: 2, left: 0, width: 12, rows }, (blocks - 1) * r, rows - (blocks - 1) * r));
  // Header on sheet row 2, so the last data row is sheet row rows + 2.
  expect(String(f[blocks - 1])).toContain(`$L$${rows + 2},`);
  expect(inspect(delta, `'${name}'!B1:B${blocks}`).values.every((v) => typeof v[0] === "number")).toBe(true);
});

test("the checksum predicted from the rows equals the one Excel calculates, and any cell changed changes it", async () => {
  const { delta } = await run(() => undefined);
  const name = checkSheetName("ck");
  const state = JSON.parse(String(inspect(delta, `'${name}'!A2`).values[0][0])) as { r: number; g: { sheet: string; top: number; left: number; width: number; rows: number } };
  const body = inspect(delta, `${SHEET}!A3:L${2 + state.r}`).values as unknown[][];
  const excel = inspect(delta, `'${name}'!B1`).values[0][0];
  expect(predictChecksum(state.g, 0, body)).toBe(excel);
  const changed = body.map((r) => [...r]);
  changed[5][3] = (changed[5][3] as number) + 0.01;
  expect(predictChecksum(state.g, 0, changed)).not.toBe(excel);
  const swapped = body.map((r) => [...r]);
  [swapped[1][1], swapped[2][1]] = [swapped[2][1], swapped[1][1]];
  expect(predictChecksum(state.g, 0, swapped)).not.toBe(excel);
  // A number as text is another checksum (ISTEXT), as is the same block one row lower (ROW).
  const asText = body.map((r) => [...r]);
  asText[0][0] = String(asText[0][0]);
  expect(predictChecksum(state.g, 0, asText)).not.toBe(excel);
  expect(predictChecksum(state.g, 1, body)).not.toBe(excel);
});

test("a fingerprint that proposes the wrong row is caught by the checksum: the block is read and the result is the full rewrite's", async () => {
  // The stored fingerprint of record 8 (row index 7, which the next export changes) is replaced by the
  // fingerprint of its NEW content, as a collision of short fingerprints would make it look: the
  // alignment then proposes that the old row already holds the new one. Excel's checksum of its block
  // does not match that proposal, so the block is read back and the changed cell is written.
  const t = tableMaker()(Array.from({ length: ROWS }, (_, i) => row(i + 1, 1)));
  const next = onePercentChanged(t.rows, ROWS + 1);
  const plans = planColumns(t);
  const newHash = rowHash(typedRows({ ...t, rows: next }, plans).get(7, 8)[0]);
  await expectEqualToFullRewrite((wb) => {
    // The binding's own fingerprint sheet (issue #26): its id in A1, the state in A2, the base from A3.
    const name = rowHashSheetName("ck");
    const store = wb.sheetByName(name)!;
    expect(inspect(wb, `'${name}'!A1`).values[0][0]).toBe("ck");
    const cell = `'${name}'!A3`;
    const base = String(inspect(wb, cell).values[0][0]);
    const at = 1 + 7 * 7;
    expect(base.slice(at, at + 7)).not.toBe(newHash);
    const { rect } = wb.resolveAddress(cell, store);
    wb.writeValues(store, rect, [[base.slice(0, at) + newHash + base.slice(at + 7)]]);
  });
});
