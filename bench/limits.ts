/**
 * Issue #21, "Must show": refresh and write-back of a 60,000 × 8 wide-text table and a 4,200 × 60
 * projects snapshot against Excel on the web's 5 MB request and response limits (the workbook
 * emulator enforces them), printing the largest request and response of every step.
 *   tsx bench/limits.ts [--json]     (`npm run bench -- --only limits` runs it in a child process)
 * The jest suite runs the same steps at a tenth of the size against a tenth of the limit
 * (test/workbook/largeTables.test.ts); these are the full sizes.
 */
import "./officejs";
import { Workbook, createRequestContext } from "../src/emulator";
import { draftBinding } from "../src/refresh/binding";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import { readTableCells, selectedRecord } from "../src/workbook/writeback";
import type { RefreshSource } from "../src/refresh/source";
import type { CellValue, Column, Table } from "../src/table/model";

const LIMIT = 5 * 1024 * 1024;

function projects(rows: number, columns: number, seed = 0): Table {
  const cols: Column[] = [{ name: "project_token", type: "text" }, { name: "name", type: "text" }];
  for (let c = 2; c < columns; c++) cols.push({ name: `Custom Field ${c}`, type: "text" });
  const data: CellValue[][] = Array.from({ length: rows }, (_, r) => [`pt_acme_${String(r).padStart(6, "0")}`, `Project ${r} ${seed}`, ...Array.from({ length: columns - 2 }, (_, c) => `value ${r}-${c} ${"x".repeat(8)}`)]);
  return { columns: cols, rows: data, meta: { key: "projects", kind: "snapshot", format: "json", schemaVersion: null, generatedAt: null, etag: `"s${seed}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" } };
}

function wideText(rows: number, from = 0, seed = 0): Table {
  const cols: Column[] = [{ name: "row_id", type: "integer" }, ...Array.from({ length: 7 }, (_, i) => ({ name: `text_${i + 1}`, type: "text" as const }))];
  const data: CellValue[][] = Array.from({ length: rows }, (_, r) => [from + r + 1, ...Array.from({ length: 7 }, (_, c) => `${String(from + r).padStart(7, "0")}:${c}:${seed} ${"lorem ipsum ".repeat(8)}`)]);
  return { columns: cols, rows: data, meta: { key: "wide", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: `2026-01-0${seed + 1}T00:00:00Z`, etag: `"w${seed}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" } };
}

const answer = (t: Table, key: string[]): RefreshSource => ({
  fetch: () => Promise.resolve({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt ?? `x${t.meta.etag}` }, key: { candidates: [key], origin: "metadata", reason: "bench key" } }),
});

async function importInto(wb: Workbook, table: Table, id: string) {
  const source = table.meta.kind === "snapshot" ? { kind: "snapshot" as const, endpoint: "projects" as const } : { kind: "dataset" as const, key: table.meta.key, format: "json" as const };
  const binding = draftBinding({ id, connectionId: "c1", environment: "http://127.0.0.1:4100", companyId: "acme", source, columns: table.columns, schemaVersion: table.meta.schemaVersion, validators: { etag: table.meta.etag, generatedAt: table.meta.generatedAt } });
  return importTable(createRequestContext(wb), table, { binding });
}

interface Step {
  step: string;
  maxRequestBytes: number;
  maxResponseBytes: number;
  refused: number;
  syncs: number;
  ms: number;
}

async function measured(wb: Workbook, steps: Step[], step: string, work: () => Promise<void>): Promise<void> {
  Object.assign(wb.stats, { maxRequestBytes: 0, maxResponseBytes: 0, rejectedSyncs: 0 });
  const syncs = wb.stats.syncCount;
  const t = performance.now();
  await work();
  steps.push({ step, maxRequestBytes: wb.stats.maxRequestBytes, maxResponseBytes: wb.stats.maxResponseBytes, refused: wb.stats.rejectedSyncs, syncs: wb.stats.syncCount - syncs, ms: Math.round(performance.now() - t) });
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function main(): Promise<void> {
  const steps: Step[] = [];
  {
    const wb = new Workbook({ currentYear: 2026, platform: "web" });
    const t0 = wideText(60_000);
    let name = "";
    await measured(wb, steps, "60,000 × 8 wide text: import", async () => void (name = (await importInto(wb, t0, "bwide")).tableName));
    const grown: Table = { ...wideText(80_000, 0, 1), rows: [...t0.rows, ...wideText(20_000, 60_000).rows] };
    await measured(wb, steps, "… refresh adding 20,000 rows (delta)", async () => {
      const r = await refreshTable(createRequestContext(wb), "bwide", answer(grown, ["row_id"]), { applyQuery: (t) => ({ table: t }) });
      check(r.outcome === "updated" && r.delta?.strategy === "delta", `delta: ${r.outcome} ${r.delta?.strategy} ${r.failure?.message ?? ""}`);
    });
    await measured(wb, steps, "… refresh, every row changed (full rewrite)", async () => {
      const r = await refreshTable(createRequestContext(wb), "bwide", answer(wideText(80_000, 0, 2), ["row_id"]), { applyQuery: (t) => ({ table: t }), delta: false });
      check(r.outcome === "updated", `full: ${r.failure?.message ?? ""}`);
    });
    await measured(wb, steps, "… write-back read (80,000 × 8)", async () => {
      check((await readTableCells(createRequestContext(wb), name)).rows.length === 80_000, "write-back read");
    });
  }
  {
    const wb = new Workbook({ currentYear: 2026, platform: "web" });
    let name = "";
    let sheet = "";
    await measured(wb, steps, "4,200 × 60 projects snapshot: import", async () => {
      const r = await importInto(wb, projects(4_200, 60), "bproj");
      name = r.tableName;
      sheet = r.sheetName;
    });
    const changed = projects(4_200, 60);
    changed.rows[17][5] = "changed";
    changed.meta.etag = '"s9"';
    await measured(wb, steps, "… refresh, one cell changed (delta)", async () => {
      const r = await refreshTable(createRequestContext(wb), "bproj", answer(changed, ["project_token"]), { applyQuery: (t) => ({ table: t }) });
      check(r.delta?.strategy === "delta", `delta: ${r.outcome} ${r.failure?.message ?? ""}`);
    });
    await measured(wb, steps, "… refresh, every row changed (full rewrite)", async () => {
      const r = await refreshTable(createRequestContext(wb), "bproj", answer(projects(4_200, 60, 5), ["project_token"]), { applyQuery: (t) => ({ table: t }), delta: false });
      check(r.outcome === "updated", `full: ${r.failure?.message ?? ""}`);
    });
    await measured(wb, steps, "… write-back read (values + valueTypes, 5.45 MB at once)", async () => {
      check((await readTableCells(createRequestContext(wb), name, ["Custom Field 7"])).rows.length === 4_200, "write-back read");
    });
    await measured(wb, steps, "… record under the selection", async () => {
      wb.select(`'${sheet}'!B4000`);
      check((await selectedRecord(createRequestContext(wb))).record?.projectToken === "pt_acme_003997", "record at selection");
    });
  }
  const largest = { request: Math.max(...steps.map((s) => s.maxRequestBytes)), response: Math.max(...steps.map((s) => s.maxResponseBytes)), refused: steps.reduce((n, s) => n + s.refused, 0) };
  if (process.argv.includes("--json")) console.log(JSON.stringify({ limit: LIMIT, steps, largest }));
  else {
    console.log(`Largest request / response per step (Excel on the web: ${LIMIT.toLocaleString("en-US")} bytes each way):`);
    for (const s of steps) console.log(`  ${s.step}: ${s.maxRequestBytes.toLocaleString("en-US")} / ${s.maxResponseBytes.toLocaleString("en-US")} bytes, ${s.syncs} syncs, ${s.refused} refused, ${s.ms.toLocaleString("en-US")} ms`);
    console.log(`  largest: ${largest.request.toLocaleString("en-US")} / ${largest.response.toLocaleString("en-US")} bytes, ${largest.refused} refused`);
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
