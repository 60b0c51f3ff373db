/**
 * Issue #15 bench: a delta refresh against a full rewrite of the same 200,000 × 12 table in the
 * workbook emulator (request bytes = the bodies Microsoft's library sends to Excel, `wb.stats`).
 *   tsx bench/deltaRefresh.ts [rows]      → one JSON line (used by `npm run bench` as `deltaRefresh`)
 * Steps in one workbook: import; refresh with every row changed (delta allowed → must fall back to a
 * full rewrite: `everyRowChanged`); refresh with 1 % changed, 0.1 % added, 0.1 % removed (`delta`);
 * "Show changes" on that delta's table (`showChanges`: the mask written from the change record and
 * the two highlight formats); refresh with every row changed and deltas switched off (`fullRewrite`,
 * the baseline).
 */
import "./officejs";
import { Workbook, createRequestContext, toWorkbookFile } from "../src/emulator";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import { readBindings } from "../src/workbook/bindingStore";
import { showChanges } from "../src/workbook/changes";
import { draftBinding } from "../src/refresh/binding";
import type { CellValue, Table } from "../src/table/model";
// One generator for this bench and the budget tests (test/workbook/budgets.test.ts runs it at 2,000 rows).
import { COLUMNS, onePercentChanged, row, sourceOf as source, tableMaker } from "./deltaScenario";

const ROWS = Number(process.argv[2] ?? 200_000);
const table: (rows: CellValue[][]) => Table = tableMaker();

async function main() {
  const wb = new Workbook({ currentYear: 2025 });
  const ctx = createRequestContext(wb);
  const t0 = table(Array.from({ length: ROWS }, (_, i) => row(i + 1, 0)));
  await importTable(ctx, t0, { binding: draftBinding({ id: "bench", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }) });
  const measure = async (t: Table, delta: boolean) => {
    const before = { req: sum(wb.stats.requestBytesPerSync), res: sum(wb.stats.responseBytesPerSync), cells: wb.stats.cellsWritten, copied: wb.stats.cellsCopied, syncs: wb.stats.syncCount };
    const t1 = performance.now();
    const r = await refreshTable(ctx, "bench", source(t), { delta });
    if (r.outcome !== "updated") throw new Error(`refresh ${r.outcome}: ${r.failure?.message}`);
    return {
      ms: Math.round(performance.now() - t1), strategy: r.delta?.strategy, reason: r.delta?.reason,
      added: r.delta?.added, changed: r.delta?.changed, removed: r.delta?.removed,
      // Cells whose values crossed the network (the refresh's own count); `cellsTouched` also counts the
      // number formats set over whole columns in one small operation each (issue #21: every write path).
      cellsWritten: r.delta?.cellsWritten ?? 0,
      cellsTouched: wb.stats.cellsWritten - before.cells,
      // The rollback copy (Range.copyFrom inside Excel, issue #10), the same for both strategies.
      cellsCopied: wb.stats.cellsCopied - before.copied,
      requestBytes: sum(wb.stats.requestBytesPerSync) - before.req,
      responseBytes: sum(wb.stats.responseBytesPerSync) - before.res, syncs: wb.stats.syncCount - before.syncs,
    };
  };
  const everyRowChanged = await measure(table(t0.rows.map((r, i) => row(i + 1, 1))), true);
  // 1 % changed (one cell each: a status edit), 0.1 % removed, 0.1 % added (spread over the table).
  const prev = t0.rows.map((r, i) => row(i + 1, 1));
  const next = onePercentChanged(prev, ROWS + 1);
  const delta = await measure(table(next), true);
  const before = { req: sum(wb.stats.requestBytesPerSync), res: sum(wb.stats.responseBytesPerSync), syncs: wb.stats.syncCount };
  const t2 = performance.now();
  const bench = (await readBindings(ctx)).bindings.find((b) => b.id === "bench")!;
  const shown = await showChanges(ctx, bench);
  const show = {
    ms: Math.round(performance.now() - t2), shown: shown.shown,
    requestBytes: sum(wb.stats.requestBytesPerSync) - before.req, responseBytes: sum(wb.stats.responseBytesPerSync) - before.res, syncs: wb.stats.syncCount - before.syncs,
  };
  const fullRewrite = await measure(table(next.map((r) => row(r[0] as number, 3))), false);
  // Issue #24: what the add-in's own hidden sheets add to the saved file (the fingerprints on
  // ppm_rh_…, the block checksums on ppm_c_…, and any other ppm_ sheet: the kept rollback sheet
  // ppm_rb_… is empty after a refresh), as a share of the table's sheet, both measured as the
  // emulator's saved form of their cells (JSON; an .xlsx compresses the table's repetitive text better
  // than fingerprints, so this is a lower bound there).
  const sheets = toWorkbookFile(wb).sheets.map((sh) => ({ name: sh.name, bytes: jsonLength(sh.cells) }));
  const tableSheet = sheets.find((sh) => sh.name.startsWith("financials"))!;
  const fingerprintBytes = sheets.filter((sh) => sh.name.startsWith("ppm_rh_")).reduce((a, sh) => a + sh.bytes, 0);
  const checksumBytes = sheets.filter((sh) => sh.name.startsWith("ppm_c_")).reduce((a, sh) => a + sh.bytes, 0);
  const otherBytes = sheets.filter((sh) => sh.name.startsWith("ppm_") && !sh.name.startsWith("ppm_rh_") && !sh.name.startsWith("ppm_c_")).reduce((a, sh) => a + sh.bytes, 0);
  const fileGrowth = { tableBytes: tableSheet.bytes, fingerprintBytes, checksumBytes, otherBytes, ratio: (fingerprintBytes + checksumBytes + otherBytes) / tableSheet.bytes };
  const out = {
    rows: ROWS, columns: COLUMNS.length,
    delta, everyRowChanged, fullRewrite, showChanges: show, fileGrowth,
    bothWaysRatio: (delta.requestBytes + delta.responseBytes) / (fullRewrite.requestBytes + fullRewrite.responseBytes),
    cellsRatio: delta.cellsWritten / fullRewrite.cellsWritten,
    requestBytesRatio: delta.requestBytes / fullRewrite.requestBytes,
    everyRowChangedRatio: everyRowChanged.requestBytes / fullRewrite.requestBytes,
  };
  console.log(JSON.stringify(out));
}
const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
/**
 * `JSON.stringify(value).length` without building the text when `value` is an array (a whole sheet's
 * cells are over V8's longest string): each element is measured alone, plus brackets and commas.
 */
function jsonLength(value: unknown): number {
  if (!Array.isArray(value)) return JSON.stringify(value)?.length ?? 0;
  return 2 + Math.max(0, value.length - 1) + sum(value.map((v: unknown) => (v === undefined ? 4 : jsonLength(v))));
}
main().catch((e) => { console.error(e); process.exit(1); });
