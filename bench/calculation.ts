/**
 * Issue #21, item 10: does suspending API calculation while a refresh writes still pay, now that the
 * refresh asks for one calculation at its end? The emulator's eager calculation (Excel's Automatic
 * mode: every formula recalculated after each batch that changed cells) counts the formulas a
 * refresh makes Excel recalculate, with suspension (each write request suspends it; one
 * `application.calculate` in the commit) and without (every write request recalculates).
 *   tsx bench/calculation.ts [rows] [--json]
 * The workbook: a table with a calculated column of the user's (one formula per row) and three
 * formulas on another sheet over the table's columns.
 */
import "./officejs";
import { Workbook, createEmulatedContext, createRequestContext, officeJs } from "../src/emulator";
import { draftBinding } from "../src/refresh/binding";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import type { RefreshSource } from "../src/refresh/source";
import type { CellValue, Column, Table } from "../src/table/model";

const ROWS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 50_000);
const COLUMNS: Column[] = [
  { name: "Id", type: "integer" }, { name: "Name", type: "text" }, { name: "Amount", type: "decimal" }, { name: "Hours", type: "integer" },
  { name: "Start", type: "date" }, { name: "Phase", type: "text" },
];
const row = (i: number, v: number): CellValue[] => [i + 1, `Project ${i} v${v}`, Math.round((i * 13.7 + v) * 100) / 100, (i + v) % 500, `2025-${String((i % 12) + 1).padStart(2, "0")}-01`, ["Plan", "Build", "Run"][(i + v) % 3]];
const table = (v: number): Table => ({
  columns: COLUMNS,
  rows: Array.from({ length: ROWS }, (_, i) => row(i, v)),
  meta: { key: "calc", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: `2026-01-0${v + 1}T00:00:00Z`, etag: `"c${v}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" },
});
const source = (t: Table): RefreshSource => ({ fetch: () => Promise.resolve({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt }, key: null }) });

/**
 * Office's requirement check as the add-in reads it (`apiSupported`): ExcelApi 1.6 present or not.
 * The library's own `Office.context.requirements` (answered from the realm's profile) is wrapped,
 * not replaced.
 */
type Requirements = { isSetSupported(name: string, v?: string): boolean };
let realCheck: Requirements["isSetSupported"] | null = null;
function withExcelApi16(present: boolean): void {
  const req = (officeJs().Office as unknown as { context: { requirements: Requirements } }).context.requirements;
  realCheck ??= req.isSetSupported.bind(req);
  const check = realCheck;
  req.isSetSupported = (name: string, v?: string) => (present || !(name === "ExcelApi" && v === "1.6")) && check(name, v);
}

async function run(suspend: boolean) {
  withExcelApi16(true);
  const wb = new Workbook({ currentYear: 2026, eagerCalculation: true });
  const t0 = table(0);
  await importTable(createRequestContext(wb), t0, { binding: draftBinding({ id: "bc", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "calc", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }) });
  const ctx = createEmulatedContext(wb);
  ctx.workbook.tables.getItem("ppm_calc").columns.add(undefined, undefined, "Double").getDataBodyRange().formulas = [["=[@Amount]*2"]];
  const report = ctx.workbook.worksheets.add("Report");
  report.getRange("A1:A3").formulas = [["=SUM(ppm_calc[Amount])"], ["=AVERAGE(ppm_calc[Hours])"], ["=MAX(ppm_calc[Double])"]];
  await ctx.sync();
  withExcelApi16(suspend);
  const before = { evals: wb.stats.formulaEvaluations ?? 0, syncs: wb.stats.syncCount, calcs: wb.stats.calculateCalls ?? 0 };
  const t = performance.now();
  const r = await refreshTable(createRequestContext(wb), "bc", source(table(1)), { applyQuery: (x) => ({ table: x }), delta: false });
  const ms = Math.round(performance.now() - t);
  if (r.outcome !== "updated") throw new Error(r.failure?.message);
  return { suspend, ms, formulaEvaluations: (wb.stats.formulaEvaluations ?? 0) - before.evals, syncs: wb.stats.syncCount - before.syncs, calculateCalls: (wb.stats.calculateCalls ?? 0) - before.calcs, formulas: ROWS + 3 };
}

async function main(): Promise<void> {
  const on = await run(true);
  const off = await run(false);
  const out = { rows: ROWS, suspended: on, notSuspended: off, evaluationRatio: off.formulaEvaluations / Math.max(1, on.formulaEvaluations) };
  if (process.argv.includes("--json")) console.log(JSON.stringify(out));
  else {
    console.log(`Full rewrite of ${ROWS.toLocaleString("en-US")} rows under ${on.formulas.toLocaleString("en-US")} formulas that depend on the table (eager calculation, as Excel's Automatic mode):`);
    for (const x of [on, off]) console.log(`  ${x.suspend ? "suspended per write request, one calculate at the end" : "not suspended                              "}: ${x.formulaEvaluations.toLocaleString("en-US")} formula evaluations, ${x.syncs} requests, ${x.ms.toLocaleString("en-US")} ms`);
    console.log(`  without suspension: ${out.evaluationRatio.toFixed(1)}× the formula evaluations`);
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
