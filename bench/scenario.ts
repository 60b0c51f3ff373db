/**
 * One benchmark scenario, run in its own Node process by `bench/run.ts` so its peak RSS is its own.
 * Prints one JSON line with the figures. Usage:
 *   tsx bench/scenario.ts <serviceUrl> <rows> <json|csv> <reps> [--refresh]
 */
import Papa from "papaparse";
import { PATHS, HEADERS } from "../src/contract/contract";
import { PpmClient } from "../src/service";
import { draftBinding } from "../src/refresh/binding";
import { sourceFromClient } from "../src/refresh/source";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import type { RefreshSource } from "../src/refresh/source";
import { benchWorkbook, statsOf } from "./emulator";
import { sinkContext } from "./sink";

const TOKEN = "demo-acme-token"; // the reference service's documented demo token
const KEY = "financials";

// argv: url, rows (unused here), format, repetitions, flags.
const [url, , formatArg, repsArg, ...flags] = process.argv.slice(2);
const format = formatArg as "json" | "csv";
const reps = Number(repsArg);

/**
 * Lets timers and socket events run before a measured step: after a long synchronous write, an idle
 * keep-alive socket the server has closed would otherwise be reused and fail.
 */
const settle = () => new Promise((r) => setTimeout(r, 50));

async function baseline(): Promise<{ ms: number; bytes: number }> {
  await settle();
  const t0 = performance.now();
  const res = await fetch(url + (format === "json" ? PATHS.exportJson(KEY) : PATHS.exportCsv(KEY)), { headers: { [HEADERS.companyToken]: TOKEN } });
  if (!res.ok) throw new Error(`baseline GET answered ${res.status}`);
  const text = await res.text();
  const parsed: unknown = format === "json" ? JSON.parse(text) : Papa.parse(text, { skipEmptyLines: true }).data;
  const ms = performance.now() - t0;
  if (!parsed) throw new Error("nothing parsed");
  return { ms, bytes: Buffer.byteLength(text, "utf8") };
}

async function endToEnd() {
  let requests = 0;
  const client = new PpmClient({ id: "bench", name: "bench", baseUrl: url, token: TOKEN }, { onRequest: () => void requests++ });
  const { wb, context } = benchWorkbook();
  await settle();
  const t0 = performance.now();
  const r = await client.fetchDataset(KEY, { format, conditional: false });
  if (r.status !== "updated") throw new Error("expected data");
  const tFetched = performance.now();
  const imported = await importTable(context, r.table, {
    binding: draftBinding({
      id: "bench1", connectionId: "bench", environment: url, companyId: "acme", source: { kind: "dataset", key: KEY, format },
      columns: r.table.columns, schemaVersion: r.table.meta.schemaVersion, validators: r.validators,
    }),
    secrets: [TOKEN],
  });
  const ms = performance.now() - t0;
  const s = statsOf(wb);
  // The emulated Excel's own time (the host answering); the library's serialisation is the add-in's.
  const emulatorMs = s.hostMs;
  return { ms, fetchParseMs: tFetched - t0, writeMs: ms - (tFetched - t0), emulatorMs, rows: imported.rowCount, columns: r.table.columns.length, s, client, wb, context, requestsBefore: () => requests };
}

/** The same import into a null workbook: the add-in's own cost with nothing behind the API. */
async function endToEndSink(): Promise<number> {
  const client = new PpmClient({ id: "bench", name: "bench", baseUrl: url, token: TOKEN });
  const { context } = sinkContext();
  await settle();
  const t0 = performance.now();
  const r = await client.fetchDataset(KEY, { format, conditional: false });
  if (r.status !== "updated") throw new Error("expected data");
  await importTable(context, r.table, {
    binding: draftBinding({
      id: "bench2", connectionId: "bench", environment: url, companyId: "acme", source: { kind: "dataset", key: KEY, format },
      columns: r.table.columns, schemaVersion: r.table.meta.schemaVersion, validators: r.validators,
    }),
  });
  return performance.now() - t0;
}

/**
 * A refresh in which every row changes: the table just imported, each row replaced by the next one
 * (the last by the first), written over the imported table. Bytes both ways are compared with the
 * import's: the rollback copy stays inside Excel, so nothing of the old table is read back.
 */
async function fullChangeRefresh(run: Awaited<ReturnType<typeof endToEnd>>) {
  const r = await run.client.fetchDataset(KEY, { format, conditional: false });
  if (r.status !== "updated") throw new Error("expected data");
  const rows = r.table.rows;
  const rotated = { ...r.table, rows: rows.map((_, i) => rows[(i + 1) % rows.length]), meta: { ...r.table.meta, generatedAt: "2099-01-01T00:00:00Z" } };
  const source: RefreshSource = { fetch: () => Promise.resolve({ status: "updated", table: rotated, validators: { generatedAt: "2099-01-01T00:00:00Z" } }) };
  const before = statsOf(run.wb);
  const t0 = performance.now();
  const report = await refreshTable(run.context, "bench1", source, { secrets: [TOKEN] });
  const ms = performance.now() - t0;
  const after = statsOf(run.wb);
  return {
    ms,
    outcome: report.outcome,
    syncs: after.syncCount - before.syncCount,
    requestBytes: after.totalRequestBytes - before.totalRequestBytes,
    responseBytes: after.totalResponseBytes - before.totalResponseBytes,
    importRequestBytes: run.s.totalRequestBytes,
    importResponseBytes: run.s.totalResponseBytes,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(): Promise<void> {
  if (flags.includes("--sink")) return sinkOnly();
  if (flags.includes("--baseline-only")) return baselineOnly();
  // RSS of this process with every module loaded and nothing fetched: Node + tsx + the code itself.
  const startRssBytes = process.memoryUsage().rss;
  // Warm-up: JIT and sockets, not measured.
  await baseline();
  await endToEnd();
  const base: number[] = [];
  const e2e: number[] = [];
  const fetchParse: number[] = [];
  const write: number[] = [];
  const emu: number[] = [];
  let last: Awaited<ReturnType<typeof endToEnd>> | null = null;
  let bodyBytes = 0;
  for (let i = 0; i < reps; i++) {
    global.gc?.();
    const b = await baseline();
    base.push(b.ms);
    bodyBytes = b.bytes;
    last = null;
    global.gc?.();
    last = await endToEnd();
    e2e.push(last.ms);
    fetchParse.push(last.fetchParseMs);
    write.push(last.writeMs);
    emu.push(last.emulatorMs);
  }
  const run = last!;

  const out: Record<string, unknown> = {
    rows: run.rows,
    columns: run.columns,
    format,
    bodyBytes,
    baselineMs: median(base),
    endToEndMs: median(e2e),
    fetchParseMs: median(fetchParse),
    writeMs: median(write),
    emulatorMs: median(emu),
    syncs: run.s.syncCount,
    totalRequestBytes: run.s.totalRequestBytes,
    // Bytes moved between the add-in and Excel, both directions (what Excel on the web carries over HTTP).
    requestBytes: run.s.totalRequestBytes,
    responseBytes: run.s.totalResponseBytes,
    maxRequestBytes: run.s.maxRequestBytes,
    rejectedSyncs: run.s.rejectedSyncs,
  };
  if (flags.includes("--refresh")) {
    const before = run.requestsBefore();
    const cellsBefore = run.s.cellsWritten;
    await settle();
    const t0 = performance.now();
    const report = await refreshTable(run.context, "bench1", sourceFromClient(run.client), { secrets: [TOKEN] });
    const after = statsOf(run.wb);
    out.unchangedRefresh = {
      ms: performance.now() - t0,
      outcome: report.outcome,
      requests: run.requestsBefore() - before,
      cellsWritten: after.cellsWritten - cellsBefore,
      requestBytes: after.totalRequestBytes - run.s.totalRequestBytes,
      responseBytes: after.totalResponseBytes - run.s.totalResponseBytes,
    };
    out.fullChangeRefresh = await fullChangeRefresh(run);
  }
  out.peakRssBytes = process.resourceUsage().maxRSS * 1024;
  out.startRssBytes = startRssBytes;
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack : String(e), (e as { cause?: unknown })?.cause);
  process.exit(1);
});

/** `--sink`: a separate process measuring only the null-workbook import, so its peak RSS is its own. */
async function sinkOnly(): Promise<void> {
  const startRssBytes = process.memoryUsage().rss;
  await endToEndSink();
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    global.gc?.();
    ms.push(await endToEndSink());
  }
  console.log(JSON.stringify({ sinkMs: median(ms), sinkPeakRssBytes: process.resourceUsage().maxRSS * 1024, sinkStartRssBytes: startRssBytes }));
}

/**
 * `--baseline-only`: the baseline (fetch + JSON.parse / papaparse) alone in a process, so its own
 * peak RSS can be set beside the import's: the floor any reader of the whole body sits on.
 */
async function baselineOnly(): Promise<void> {
  const startRssBytes = process.memoryUsage().rss;
  await baseline();
  for (let i = 0; i < reps; i++) {
    global.gc?.();
    await baseline();
  }
  console.log(JSON.stringify({ baselinePeakRssBytes: process.resourceUsage().maxRSS * 1024, baselineStartRssBytes: startRssBytes }));
}
