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
import { Workbook, createRequestContext } from "../src/emulator";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import { readBindings } from "../src/workbook/bindingStore";
import { showChanges } from "../src/workbook/changes";
import { draftBinding } from "../src/refresh/binding";
import type { RefreshSource } from "../src/refresh/source";
import type { CellValue, Column, Table } from "../src/table/model";

const ROWS = Number(process.argv[2] ?? 200_000);
const COLUMNS: Column[] = [
  { name: "Id", type: "integer" }, { name: "Name", type: "text" }, { name: "Code", type: "text" }, { name: "Amount", type: "decimal" },
  { name: "Hours", type: "integer" }, { name: "Start", type: "date" }, { name: "Updated", type: "datetime" }, { name: "Active", type: "boolean" },
  { name: "Owner", type: "text" }, { name: "Budget", type: "decimal" }, { name: "Phase", type: "text" }, { name: "Score", type: "integer" },
];

function row(id: number, v: number): CellValue[] {
  return [id, `Project ${id} v${v}`, `C${(id * 7) % 10000}`, Math.round(id * 13.7 + v) / 100, (id + v) % 500,
    `2025-${String((id % 12) + 1).padStart(2, "0")}-${String((id % 28) + 1).padStart(2, "0")}`, `2026-01-${String((v % 28) + 1).padStart(2, "0")}T10:00:00Z`,
    id % 3 === 0, `owner${id % 97}`, id * 3 + v, ["Plan", "Build", "Run"][id % 3], (id * v) % 100];
}

let gen = 0;
const table = (rows: CellValue[][]): Table => {
  gen++;
  const at = `2026-01-01T00:00:${String(gen).padStart(2, "0")}Z`;
  return { columns: COLUMNS, rows, meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: at, etag: `"g${gen}"`, lastModified: null, fetchedAt: at } };
};
const source = (t: Table): RefreshSource => ({
  fetch: () => Promise.resolve({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt }, key: { candidates: [["Id"]], origin: "metadata", reason: "the key $metadata declares" } }),
});

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
      cellsWritten: wb.stats.cellsWritten - before.cells,
      // The rollback copy (Range.copyFrom inside Excel, issue #10), the same for both strategies.
      cellsCopied: wb.stats.cellsCopied - before.copied,
      requestBytes: sum(wb.stats.requestBytesPerSync) - before.req,
      responseBytes: sum(wb.stats.responseBytesPerSync) - before.res, syncs: wb.stats.syncCount - before.syncs,
    };
  };
  const everyRowChanged = await measure(table(t0.rows.map((r, i) => row(i + 1, 1))), true);
  // 1 % changed (one cell each: a status edit), 0.1 % removed, 0.1 % added (spread over the table).
  const prev = t0.rows.map((r, i) => row(i + 1, 1));
  const next: CellValue[][] = [];
  let added = 0;
  for (let i = 0; i < prev.length; i++) {
    if (i % 1000 === 500) continue; // removed
    const r = prev[i];
    next.push(i % 100 === 7 ? [...r.slice(0, 10), r[10] === "Run" ? "Plan" : "Run", r[11]] : r);
    if (i % 1000 === 900) next.push(row(ROWS + 1 + added++, 2));
  }
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
  const out = {
    rows: ROWS, columns: COLUMNS.length,
    delta, everyRowChanged, fullRewrite, showChanges: show,
    cellsRatio: delta.cellsWritten / fullRewrite.cellsWritten,
    requestBytesRatio: delta.requestBytes / fullRewrite.requestBytes,
    everyRowChangedRatio: everyRowChanged.requestBytes / fullRewrite.requestBytes,
  };
  console.log(JSON.stringify(out));
}
const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
main().catch((e) => { console.error(e); process.exit(1); });
