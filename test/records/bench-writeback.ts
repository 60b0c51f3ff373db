/**
 * Write-back figures (not a test: prints numbers, asserts nothing about speed).
 * Run: npx tsx test/records/bench-writeback.ts
 *
 * Measures, for tables of growing size: building the import record, its stored size, and the diff
 * of a sheet with 1% of custom-field cells edited against the record and the service rows.
 */
import { buildBaseline, serializeBaseline, BASELINE_MAX_CELLS, type SheetTable } from "../../src/records/baseline";
import { diffWriteback, indexServiceRows } from "../../src/records/diff";
import type { SheetValue } from "../../src/records/values";

const FIELDS = [
  { name: "Budget Contingency", numeric: true },
  { name: "Sponsor", numeric: false },
  { name: "Cost Center Code", numeric: false },
];
const COLUMNS = ["project_token", "project_name", "project_type", "status", "start_date", "Budget Contingency", "Sponsor", "Cost Center Code"];

function sheetOf(rows: number): SheetTable {
  const out: SheetValue[][] = [];
  for (let i = 0; i < rows; i++) out.push([`pt_${i}`, `Project ${i}`, "IT", "Active", 45000 + (i % 300), String((i * 37) % 100000 / 4), `Sponsor ${i % 50}`, `00${400 + (i % 100)}`]);
  return { columns: [...COLUMNS], rows: out, firstSheetRow: 3 };
}

function time<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const r = f();
  return [r, performance.now() - t0];
}

for (const rows of [100, 1_000, 6_000, 20_000]) {
  const sheet = sheetOf(rows);
  const [baseline, tBuild] = time(() => buildBaseline(sheet, { bindingId: "b", tableName: "T", etag: "e", tokenColumn: "project_token" }));
  const bytes = serializeBaseline(baseline).length;
  const service = indexServiceRows(COLUMNS.map((name) => ({ name })), sheet.rows);
  const edited = { ...sheet, rows: sheet.rows.map((r, i) => (i % 100 === 0 ? r.map((v, c) => (c === 5 ? "12,5" : v)) : r)) };
  const [diff, tDiff] = time(() => diffWriteback({ sheet: edited, fields: FIELDS, baseline, service }));
  console.log(
    `${String(rows).padStart(6)} rows × ${COLUMNS.length} cols: record ${baseline.tooLarge ? "TOO LARGE (service mode)" : `${(bytes / 1024).toFixed(1)} KiB`}` +
      ` built in ${tBuild.toFixed(1)} ms; diff (${diff.mode}) found ${diff.changes.length} changes in ${tDiff.toFixed(1)} ms`,
  );
}
console.log(`bound: ${BASELINE_MAX_CELLS} cells`);
