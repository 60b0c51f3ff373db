/**
 * `npm run bench [-- --json] [-- --sizes 10000,50000,200000] [-- --reps 3] [-- --only import|whole-sheet|aggregate|delta|limits] [-- --no-whole-sheet]
 *   [-- --aggregate-rows 2000000] [-- --aggregate-reps 3]`
 *
 * Import benchmark: reference service on loopback → service client (fetch, parse, validate) → typing
 * → workbook writer → workbook emulator, against a baseline in the same process (fetch + JSON.parse
 * of the same body; fetch + papaparse of the same CSV). Not a timed test: it prints figures and the
 * budget checks; with `--json` the last stdout line is one JSON object with every figure.
 *
 * The reference service runs as a CHILD process (one per row count), and every scenario runs in its
 * own child process too, so the server's CPU and memory never count in a scenario's time or peak RSS.
 *
 * `aggregate` scenario (bench/aggregate.ts): 2,000,000 rows × 12 columns streamed from the reference
 * service through `$apply` to ~10,000 groups, against a fetch + streaming parse baseline of the same
 * export; its peak RSS is set beside the 200,000-row import's, to show memory does not grow with the
 * raw row count.
 */
import { spawn, execFileSync, type ChildProcess } from "child_process";
import * as os from "os";
import * as path from "path";

const root = path.resolve(__dirname, "..");
const args = process.argv.slice(2);
const asJson = args.includes("--json");
const argValue = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const sizes = (argValue("--sizes") ?? "10000,50000,200000").split(",").map(Number);
const reps = Number(argValue("--reps") ?? 3);
const only = argValue("--only");
const aggregateRows = Number(argValue("--aggregate-rows") ?? 2_000_000);
/**
 * Pairs of (summary, baseline) runs of the aggregate scenario, interleaved; the checks use the median
 * of the pairs' ratios. One pair moved the CPU ratio between 0.84× and 1.53× on a quiet 2-core
 * machine (2026-11-26), each process alone ~25 s: three pairs keep one slow pair from deciding.
 */
const aggregateReps = Number(argValue("--aggregate-reps") ?? 3);
const AGG_TIME_BUDGET = 1.5;
const IMPORT_REFERENCE_ROWS = 200_000;
/** Runs (each its own process) whose median is a whole sheet's peak RSS. */
const WHOLE_SHEET_PEAK_RUNS = 3;
/** A whole sheet: Excel's 1,048,576 rows less the info line and the header (issue #38). */
const WHOLE_SHEET_ROWS = 1_048_574;
const wholeSheet = !args.includes("--no-whole-sheet");
const MB = 1024 * 1024;
const REQUEST_LIMIT = 5 * MB;
const SYNC_BUDGET_BYTES = 4 * MB;
/** The writer's first value block (src/workbook/blocks.ts FIRST_BLOCK_ROWS). */
const FIRST_BLOCK_ROWS = 5_000;

const log = (line = "") => console.log(line);
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const pad = (s: string, n: number) => s.padStart(n);
/** The one-, five- and fifteen-minute load averages (how busy the machine was: issue #38). */
const loadText = () => os.loadavg().map((l) => fmt(l, 2)).join(" / ");
/** Progress goes to stderr so stdout is the table (and, with --json, the JSON line last). */
const progress = (line: string) => console.error(line);

async function startService(rows: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--require", "tsx/cjs", "src/reference/main.ts", "--port", "0", "--dataset-rows", `financials=${rows}`, "--quiet"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`reference service exited (${code}) before listening`)));
  });
  child.stdout.resume();
  return { url, child };
}

async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

interface Scenario {
  rows: number;
  columns: number;
  format: "json" | "csv";
  bodyBytes: number;
  baselineMs: number;
  /** Fetch + parse + one JSON.stringify of the table's values (issue #24 item 2's second baseline). */
  baselineSendMs: number;
  endToEndMs: number;
  fetchParseMs: number;
  writeMs: number;
  emulatorMs: number;
  syncs: number;
  totalRequestBytes: number;
  /** Bytes sent to Excel (requests) and received from it (responses) by the import. */
  requestBytes: number;
  responseBytes: number;
  maxRequestBytes: number;
  rejectedSyncs: number;
  peakRssBytes: number;
  startRssBytes: number;
  unchangedRefresh?: { ms: number; outcome: string; requests: number; cellsWritten: number; requestBytes: number; responseBytes: number };
  /** A refresh changing every row of the imported table (bench/scenario.ts fullChangeRefresh). */
  fullChangeRefresh?: { ms: number; outcome: string; syncs: number; requestBytes: number; responseBytes: number; importRequestBytes: number; importResponseBytes: number };
  /** The same import into a null workbook (bench/sink.ts), measured in its own process. */
  sinkMs: number;
  /** The null-workbook import and its baselines, interleaved in one process (bench/scenario.ts pairedOnly). */
  pairedSinkMs: number;
  pairedBaselineMs: number;
  pairedBaselineSendMs: number;
  sinkPeakRssBytes: number;
  sinkStartRssBytes: number;
  /** The baseline alone in its own process (bench/scenario.ts --baseline-only). */
  baselinePeakRssBytes: number;
  baselineStartRssBytes: number;
  /** Issue #38: the same interleaved runs on the CPU clock (this process's user + system time). */
  baselineCpuMs: number;
  endToEndCpuMs: number;
  /** Each interleaved pair's own ratio (import ÷ the baseline run just before it), wall and CPU. */
  endToEndRatios: number[];
  endToEndCpuRatios: number[];
  pairedSinkCpuMs: number;
  pairedBaselineCpuMs: number;
  pairedBaselineSendCpuMs: number;
  pairedRatios: { wall: number[]; cpu: number[]; wallSend: number[]; cpuSend: number[] };
  /** CPU ms of the floor's steps at 200,000 rows (bench/scenario.ts floorOnly; issue #38). */
  floorTextCpuMs?: number;
  floorBytesCpuMs?: number;
  floorParseCpuMs?: number;
  floorStringifyCpuMs?: number;
  floorStreamedCpuMs?: number;
  /** One-minute load average before and after the scenario's processes ran. */
  loadBefore: number;
  loadAfter: number;
}

function child(argv: string[], script = "bench/scenario.ts", nodeFlags: string[] = []): Record<string, unknown> {
  const out = execFileSync(process.execPath, ["--expose-gc", ...nodeFlags, "--require", "tsx/cjs", script, ...argv], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 * MB,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(out.trim().split("\n").pop()!) as Record<string, unknown>;
}

/**
 * Runs per figure for a table of `rows`: `--reps` (default 3), five times that up to 10,000 rows.
 * There a run takes ~0.1 s and the fixed costs dominate: three runs moved the CSV import's ratio
 * between 1.59× and 1.97× (budget 2.0×) from one quiet run to the next (2026-11-25/26), and nine
 * (three times) between 1.82× and 2.26× (2026-11-29): the import's runs are bimodal there (one in
 * three follows a full garbage collection and takes ~1.3× the others), so a median of nine still
 * moved with how many slow runs it drew. Fifteen runs cost ~3 s more per form.
 */
function repsFor(rows: number): number {
  return rows <= 10_000 ? reps * 5 : reps;
}

/**
 * Interleaved pairs for the add-in's own import (`--paired`): at least five, so that one pair the
 * machine slowed on one side cannot move the median (issue #38: the budgets must hold beside one
 * busy process per core).
 */
function pairsFor(rows: number): number {
  return Math.max(5, repsFor(rows));
}

function runScenario(url: string, rows: number, format: "json" | "csv", refresh: boolean): Scenario {
  const n = String(repsFor(rows));
  const loadBefore = os.loadavg()[0];
  const main = child([url, String(rows), format, n, ...(refresh ? ["--refresh"] : [])]);
  const sink = child([url, String(rows), format, n, "--sink"]);
  const base = child([url, String(rows), format, n, "--baseline-only"]);
  const paired = child([url, String(rows), format, String(pairsFor(rows)), "--paired"]);
  const floor = rows === IMPORT_REFERENCE_ROWS ? child([url, String(rows), format, n, "--floor"]) : {};
  return { ...main, ...sink, ...base, ...paired, ...floor, loadBefore, loadAfter: os.loadavg()[0] } as unknown as Scenario;
}

function medianOf(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A ratio's median and spread over the pairs: `1.23× (1.10–1.40, 5 pairs)`. */
function spread(ratios: readonly number[]): string {
  return `${fmt(medianOf(ratios), 2)}× (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}, ${ratios.length} pairs)`;
}


async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  log(`PPM import benchmark: ${cpu}, ${os.cpus().length} cores, ${fmt(os.totalmem() / MB / 1024, 1)} GB, Node ${process.version}, ${reps} measured runs per figure (median; ${repsFor(10_000)} up to 10,000 rows), load average ${loadText()} (1 / 5 / 15 min)`);
  const results: Scenario[] = [];
  const checks: { name: string; ok: boolean; detail: string }[] = [];
  if (only === undefined || only === "import") await importScenarios(results, checks);
  const whole = (only === undefined || only === "import" || only === "whole-sheet") && wholeSheet ? await wholeSheetScenario(results, checks) : null;
  const aggregate = only === undefined || only === "aggregate" ? await aggregateScenario(results, checks) : null;
  const deltaRefresh = only === undefined || only === "delta" ? deltaRefreshScenario(checks) : null;
  const wholeSheetDelta = (only === undefined || only === "delta" || only === "whole-sheet") && wholeSheet ? wholeSheetDeltaScenario(checks) : null;
  const coauthor = only === undefined || only === "delta" ? coauthorScenario(checks) : null;
  const limits = only === undefined || only === "limits" ? limitsScenario(checks) : null;

  if (whole) {
    log("");
    log("Issue #38 targets for a whole sheet (open: figures, not yet budget checks):");
    for (const w of whole) {
      log(`  ${fmt(w.rows)} ${w.format}: peak RSS ${fmt(w.peakRssBytes / MB)} MB; target ≤ 300 MB${w.referencePeakRssBytes ? `, and ≤ 1.25× the 200,000-row peak: ${fmt(w.peakRssBytes / w.referencePeakRssBytes, 2)}×` : ""}`);
      log(`  ${fmt(w.rows)} ${w.format}: the add-in's CPU time ÷ fetch+${w.format === "json" ? "JSON.parse" : "papaparse"}'s ${fmt(w.cpuRatio, 2)}× (one pair); target ≤ 1.0×`);
    }
  }
  log("");
  log(`Load average at the end: ${loadText()} (1 / 5 / 15 min)`);
  log("");
  log("Budget checks:");
  for (const c of checks) log(`  ${c.ok ? "PASS" : "FAIL"}  ${c.name}  (${c.detail})`);
  // Issue #24 item 1: a bench with a failing check cannot pass for green. The exit status says it
  // (1 when any check FAILs), after everything is printed, so the figures are still there to read.
  const failing = checks.filter((c) => !c.ok).length;
  log(failing === 0 ? `All ${checks.length} budget checks PASS.` : `${failing} of ${checks.length} budget checks FAIL: exit status 1.`);
  if (failing > 0) process.exitCode = 1;
  if (asJson) {
    const refresh = results.find((r) => r.unchangedRefresh)?.unchangedRefresh;
    const full = results.find((r) => r.fullChangeRefresh)?.fullChangeRefresh;
    console.log(JSON.stringify({ machine: { cpu, cores: os.cpus().length, node: process.version }, reps, scenarios: results, unchangedRefresh: refresh ?? null, fullChangeRefresh: full ?? null, growth: importGrowth, wholeSheet: whole, aggregate, deltaRefresh, wholeSheetDelta, coauthor, limits, checks }));
  }
}

/** Import ms per 1,000 rows by form, for the JSON output. */
const importGrowth: Record<string, { rows: number; msPerKRow: number }[]> = {};

interface AggregateFigures {
  rows: number;
  groups: number;
  columns: number;
  ms: number;
  baselineMs: number;
  cpuMs: number;
  baselineCpuMs: number;
  peakRssBytes: number;
  baselinePeakRssBytes: number;
  importRows: number;
  importPeakRssBytes: number;
}

/**
 * The `aggregate` scenario: a reference service with `aggregateRows` rows, the summary and its
 * baseline each in a process of their own, and the peak RSS of a 200,000-row JSON import beside it
 * (taken from the import scenarios when they ran, else measured here once).
 */
interface DeltaRefreshFigures {
  delta: { cellsWritten: number; cellsTouched: number; requestBytes: number; responseBytes: number; strategy: string; added: number; changed: number; removed: number; syncs: number; ms: number };
  fullRewrite: { cellsWritten: number; requestBytes: number; responseBytes: number };
  everyRowChanged: { requestBytes: number; strategy: string };
  /** The add-in's hidden sheets in the saved file beside the table's sheet (issue #24). */
  fileGrowth?: { tableBytes: number; fingerprintBytes: number; checksumBytes: number; ratio: number };
  /** "Show changes" on the delta's table, asked for after the refresh (not part of the refresh's cost). */
  showChanges: { requestBytes: number; responseBytes: number; syncs: number; ms: number };
  cellsRatio: number;
  requestBytesRatio: number;
  everyRowChangedRatio: number;
}

/** Issue #15: delta refresh vs a full rewrite of the same 200,000 × 12 table (own process, no service). */
function deltaRefreshScenario(checks: { name: string; ok: boolean; detail: string }[]): DeltaRefreshFigures {
  progress("  running deltaRefresh (200,000 × 12)...");
  const d = child([String(IMPORT_REFERENCE_ROWS)], "bench/deltaRefresh.ts") as unknown as DeltaRefreshFigures;
  log("");
  log(`Delta refresh (200,000 × 12; 1 % changed, 0.1 % added, 0.1 % removed): ${d.delta.strategy}, ${fmt(d.delta.cellsWritten)} cells and ${fmt(d.delta.requestBytes / MB, 3)} MB sent vs ${fmt(d.fullRewrite.cellsWritten)} cells and ${fmt(d.fullRewrite.requestBytes / MB, 2)} MB for a full rewrite (${fmt(d.cellsRatio * 100, 2)} % / ${fmt(d.requestBytesRatio * 100, 2)} %), ${fmt(d.delta.responseBytes / MB, 2)} MB received, ${d.delta.syncs} syncs, ${fmt(d.delta.ms)} ms; every row changed: ${d.everyRowChanged.strategy}, ${fmt(d.everyRowChangedRatio, 3)}× the full rewrite's bytes`);
  log(`Show changes on that table afterwards (mask written from the change record, two highlight formats): ${fmt(d.showChanges.requestBytes / MB, 3)} MB sent, ${fmt(d.showChanges.responseBytes / MB, 3)} MB received, ${d.showChanges.syncs} syncs`);
  checks.push({ name: "deltaRefresh: cellsWritten ≤ 5 % of a full rewrite", ok: d.cellsRatio <= 0.05, detail: `${fmt(d.cellsRatio * 100, 2)} %` });
  checks.push({ name: "deltaRefresh: requestBytes ≤ 5 % of a full rewrite", ok: d.requestBytesRatio <= 0.05, detail: `${fmt(d.requestBytesRatio * 100, 2)} %` });
  // Issue #24 item 3: bytes in both directions, request and response added together.
  const bothWays = (d.delta.requestBytes + d.delta.responseBytes) / (d.fullRewrite.requestBytes + d.fullRewrite.responseBytes);
  log(`  both directions: the delta moves ${fmt((d.delta.requestBytes + d.delta.responseBytes) / MB, 2)} MB (${fmt(d.delta.requestBytes / MB, 2)} sent + ${fmt(d.delta.responseBytes / MB, 2)} received), a full rewrite ${fmt((d.fullRewrite.requestBytes + d.fullRewrite.responseBytes) / MB, 2)} MB (${fmt(d.fullRewrite.requestBytes / MB, 2)} + ${fmt(d.fullRewrite.responseBytes / MB, 2)}): ${fmt(bothWays * 100, 2)} %`);
  checks.push({ name: "deltaRefresh: request + response bytes ≤ 10 % of a full rewrite's", ok: bothWays <= 0.1, detail: `${fmt(bothWays * 100, 2)} %` });
  checks.push({ name: "deltaRefresh: every row changed ≤ 1.1× a full rewrite", ok: d.everyRowChangedRatio <= 1.1, detail: `${fmt(d.everyRowChangedRatio, 3)}×` });
  // Issue #24 item 3: the fingerprints and Excel's block checksums grow the saved file by ≤ 10 % of the table.
  if (d.fileGrowth) {
    log(`  saved file: fingerprints ${fmt(d.fileGrowth.fingerprintBytes / MB, 2)} MB + block checksums ${fmt(d.fileGrowth.checksumBytes / MB, 2)} MB beside the table's ${fmt(d.fileGrowth.tableBytes / MB, 2)} MB (${fmt(d.fileGrowth.ratio * 100, 2)} %)`);
    checks.push({ name: "deltaRefresh: the add-in's hidden sheets ≤ 10 % of the table's saved size", ok: d.fileGrowth.ratio <= 0.1, detail: `${fmt(d.fileGrowth.ratio * 100, 2)} %` });
  }
  return d;
}

/**
 * Issue #38: the same delta at a whole sheet (1,048,574 × 12), in the workbook emulator: ~6 min and
 * ~5 GB of this machine's memory (the emulator holds the workbook; the add-in's own memory is the
 * import scenarios'). Every step must complete: the emulator refuses a request over 5 MB, as Excel on
 * the web does, and the step then fails.
 */
function wholeSheetDeltaScenario(checks: { name: string; ok: boolean; detail: string }[]): DeltaRefreshFigures | null {
  progress(`  running deltaRefresh at a whole sheet (${fmt(WHOLE_SHEET_ROWS)} × 12, ~6 min)...`);
  let d: DeltaRefreshFigures;
  try {
    d = child([String(WHOLE_SHEET_ROWS)], "bench/deltaRefresh.ts", ["--max-old-space-size=8000"]) as unknown as DeltaRefreshFigures;
  } catch (e) {
    checks.push({ name: `whole sheet: a 1 % delta refresh, Show changes and a full rewrite of ${fmt(WHOLE_SHEET_ROWS)} × 12 complete (no request over 5 MB)`, ok: false, detail: e instanceof Error ? e.message.split("\n")[0] : String(e) });
    return null;
  }
  const bothWays = (d.delta.requestBytes + d.delta.responseBytes) / (d.fullRewrite.requestBytes + d.fullRewrite.responseBytes);
  log("");
  log(`Delta refresh at a whole sheet (${fmt(WHOLE_SHEET_ROWS)} × 12; 1 % changed, 0.1 % added, 0.1 % removed): ${d.delta.strategy}, ${fmt(d.delta.requestBytes / MB, 2)} MB sent + ${fmt(d.delta.responseBytes / MB, 2)} MB received, against ${fmt(d.fullRewrite.requestBytes / MB, 1)} + ${fmt(d.fullRewrite.responseBytes / MB, 2)} MB for a full rewrite (request ${fmt(d.requestBytesRatio * 100, 2)} %, both ways ${fmt(bothWays * 100, 2)} %), ${d.delta.syncs} syncs, ${fmt(d.delta.ms / 1000, 1)} s in the emulator`);
  log(`  Issue #38 target (open): both ways ≤ 2.5 % of a full rewrite's — ${fmt(bothWays * 100, 2)} %`);
  checks.push({ name: `whole sheet: a 1 % delta refresh, Show changes and a full rewrite of ${fmt(WHOLE_SHEET_ROWS)} × 12 complete (no request over 5 MB)`, ok: d.delta.strategy === "delta", detail: `${d.delta.strategy}, ${d.delta.syncs} syncs` });
  checks.push({ name: "whole sheet: deltaRefresh request + response bytes ≤ 10 % of a full rewrite's", ok: bothWays <= 0.1, detail: `${fmt(bothWays * 100, 2)} %` });
  return d;
}

interface CoauthorFigures {
  rows: number;
  columns: number;
  scenarios: Array<{ scenario: string; strategy: string; changedBytes: number; downloadedBytes: number; ratio: number; requestBytes: number; responseBytes: number }>;
}

/** Issue #26: what a refresh makes every co-author download, hidden sheets included (bench/coauthorBytes.ts, two-client host). */
function coauthorScenario(checks: { name: string; ok: boolean; detail: string }[]): CoauthorFigures {
  progress("  running coauthor (10,000 × 12, two clients)...");
  const c = child(["10000", "--json"], "bench/coauthorBytes.ts") as unknown as CoauthorFigures;
  log("");
  log(`Co-author download (${fmt(c.rows)} × ${c.columns}, two clients, the refreshing one sees co-authoring active):`);
  for (const s of c.scenarios) {
    log(`  ${s.scenario}: ${s.strategy}, ${fmt(s.downloadedBytes / MB, 3)} MB delivered to the co-author for ${fmt(s.changedBytes / MB, 3)} MB of changed cells (${fmt(s.ratio, 2)}×); the refreshing client sent ${fmt(s.requestBytes / MB, 2)} MB and received ${fmt(s.responseBytes / MB, 2)} MB`);
    checks.push({ name: `coauthor: download ≤ 1.2× the cells that change, ${s.scenario}`, ok: s.ratio <= 1.2, detail: `${fmt(s.ratio, 2)}×` });
  }
  return c;
}

interface LimitFigures {
  limit: number;
  steps: Array<{ step: string; maxRequestBytes: number; maxResponseBytes: number; refused: number; syncs: number; ms: number }>;
  largest: { request: number; response: number; refused: number };
}

/** Issue #21 "Must show": 60,000 × 8 wide text and 4,200 × 60 projects, refresh and write-back, every request and response under 5 MB. */
function limitsScenario(checks: { name: string; ok: boolean; detail: string }[]): LimitFigures {
  progress("  running limits (60,000 × 8 wide text, 4,200 × 60 projects)...");
  const f = child(["--json"], "bench/limits.ts") as unknown as LimitFigures;
  log("");
  log(`Largest request / response per step (Excel on the web: ${fmt(f.limit)} bytes each way):`);
  for (const s of f.steps) log(`  ${s.step}: ${fmt(s.maxRequestBytes)} / ${fmt(s.maxResponseBytes)} bytes, ${s.syncs} syncs, ${s.refused} refused, ${fmt(s.ms)} ms`);
  checks.push({ name: "limits: no request or response over 5 MB, none refused (60,000 × 8 and 4,200 × 60, refresh and write-back)", ok: f.largest.request <= f.limit && f.largest.response <= f.limit && f.largest.refused === 0, detail: `largest ${fmt(f.largest.request)} / ${fmt(f.largest.response)} bytes, ${f.largest.refused} refused` });
  return f;
}

async function aggregateScenario(results: Scenario[], checks: { name: string; ok: boolean; detail: string }[]): Promise<AggregateFigures> {
  let reference = results.find((r) => r.rows === IMPORT_REFERENCE_ROWS && r.format === "json");
  if (!reference) {
    progress(`  running the ${fmt(IMPORT_REFERENCE_ROWS)}-row json import (memory reference)...`);
    const { url, child: svc } = await startService(IMPORT_REFERENCE_ROWS);
    try {
      reference = child([url, String(IMPORT_REFERENCE_ROWS), "json", "1"]) as unknown as Scenario;
    } finally {
      await stopService(svc);
    }
  }
  progress(`  running aggregate over ${fmt(aggregateRows)} rows...`);
  const { url, child: svc } = await startService(aggregateRows);
  const pairs: Array<{ agg: Record<string, number>; base: Record<string, number> }> = [];
  try {
    for (let i = 0; i < Math.max(1, aggregateReps); i++) {
      pairs.push({
        agg: child([url, "1"], "bench/aggregate.ts") as Record<string, number>,
        base: child([url, "1", "--baseline-only"], "bench/aggregate.ts") as Record<string, number>,
      });
    }
  } finally {
    await stopService(svc);
  }
  // The pair whose CPU ratio is the median stands for the run (its figures are printed); the time
  // ratio is the median of the pairs' own.
  const cpuRatios = pairs.map((p) => p.agg.aggCpuMs / p.base.aggBaselineCpuMs);
  const middle = pairs[cpuRatios.indexOf(medianOf(cpuRatios))];
  const { agg, base } = middle;
  const f: AggregateFigures = {
    rows: agg.aggSourceRows,
    groups: agg.aggGroups,
    columns: agg.aggColumns,
    ms: agg.aggMs,
    baselineMs: base.aggBaselineMs,
    cpuMs: agg.aggCpuMs,
    baselineCpuMs: base.aggBaselineCpuMs,
    peakRssBytes: agg.aggPeakRssBytes,
    baselinePeakRssBytes: base.aggBaselinePeakRssBytes,
    importRows: reference.rows,
    importPeakRssBytes: reference.peakRssBytes,
  };
  const timeRatio = medianOf(pairs.map((p) => p.agg.aggMs / p.base.aggBaselineMs));
  const cpuRatio = medianOf(cpuRatios);
  const rssRatio = f.peakRssBytes / f.importPeakRssBytes;
  log("");
  log(`Aggregate: financials, ${fmt(f.rows)} rows × 12 columns streamed (json) through $apply=groupby((cost_center_code,period_number),aggregate(2 sums, average, max, $count)) → ${fmt(f.groups)} groups × ${f.columns} columns`);
  log("  baseline: the same fetch + streaming JSON parse and typing into a sink that only counts rows (own process)");
  log("  CPU: user + system time of the client process alone (the service is another process); it barely moves with other load on the machine");
  log(`  ${pairs.length} interleaved pairs (summary, baseline), each process one run; ratios are the pairs' medians (CPU ratios ${cpuRatios.map((r) => fmt(r, 2)).join(", ")})`);
  log("rows        groups  baseline ms  aggregate ms  ratio  baseline CPU ms  aggregate CPU ms  CPU ratio  peak RSS MB  baseline peak RSS MB  200k import peak RSS MB  peak RSS ÷ 200k import");
  log(
    [
      pad(fmt(f.rows), 10), pad(fmt(f.groups), 7), pad(fmt(f.baselineMs), 12), pad(fmt(f.ms), 13), pad(fmt(timeRatio, 2), 6),
      pad(fmt(f.baselineCpuMs), 16), pad(fmt(f.cpuMs), 17), pad(fmt(cpuRatio, 2), 10),
      pad(fmt(f.peakRssBytes / MB), 12), pad(fmt(f.baselinePeakRssBytes / MB), 21), pad(fmt(f.importPeakRssBytes / MB), 24), pad(fmt(rssRatio, 2), 23),
    ].join(" "),
  );
  checks.push({ name: `aggregate: ${fmt(f.rows)} rows → ${fmt(f.groups)} groups ≤ ${AGG_TIME_BUDGET}× fetch+parse baseline (wall time)`, ok: timeRatio <= AGG_TIME_BUDGET, detail: `${fmt(timeRatio, 2)}×` });
  checks.push({ name: `aggregate: client CPU time ≤ ${AGG_TIME_BUDGET}× the baseline's`, ok: cpuRatio <= AGG_TIME_BUDGET, detail: `${fmt(cpuRatio, 2)}×` });
  checks.push({
    name: `aggregate: peak RSS over ${fmt(f.rows)} rows ≤ the ${fmt(f.importRows)}-row import's (memory does not grow with the raw row count)`,
    ok: rssRatio <= 1,
    detail: `${fmt(f.peakRssBytes / MB)} MB ÷ ${fmt(f.importPeakRssBytes / MB)} MB = ${fmt(rssRatio, 2)}×`,
  });
  return f;
}

interface WholeSheetFigures {
  rows: number;
  format: "json" | "csv";
  /** The median of {@link WHOLE_SHEET_PEAK_RUNS} runs' peaks, each alone in a process. */
  peakRssBytes: number;
  /** Every run's peak, in the order they ran. */
  peakRssRuns: number[];
  syncs: number;
  maxRequestBytes: number;
  ms: number;
  cpuRatio: number;
  wallRatio: number;
  /** The same form's peak at 200,000 rows, when that size ran. */
  referencePeakRssBytes: number | null;
}

/**
 * Issue #38: a whole sheet (1,048,574 × 12) imported through Microsoft's library into the host that
 * discards the cells, JSON and CSV: one run alone in a process (its peak RSS, requests and syncs),
 * and one interleaved pair with its baseline (wall and CPU clocks). A run is ~20 s; the baseline's
 * process holds the whole 290 MB body and its parse.
 */
async function wholeSheetScenario(results: Scenario[], checks: { name: string; ok: boolean; detail: string }[]): Promise<WholeSheetFigures[]> {
  const out: WholeSheetFigures[] = [];
  const { url, child: svc } = await startService(WHOLE_SHEET_ROWS);
  try {
    for (const format of ["json", "csv"] as const) {
      progress(`  running a whole sheet (${fmt(WHOLE_SHEET_ROWS)} rows) ${format}...`);
      // A single run's peak moved by ±30 MB from one run to the next (V8 collects when its heap limit,
      // set from the last collection, is reached): the median of three processes, each printed.
      const sinks = Array.from({ length: WHOLE_SHEET_PEAK_RUNS }, () => child([url, String(WHOLE_SHEET_ROWS), format, "0", "--sink"]));
      const sink = sinks[0];
      const peaks = sinks.map((x) => x.sinkPeakRssBytes as number);
      const paired = child([url, String(WHOLE_SHEET_ROWS), format, "1", "--paired"]) as unknown as Pick<Scenario, "pairedRatios">;
      const ref = results.find((r) => r.rows === IMPORT_REFERENCE_ROWS && r.format === format);
      out.push({
        rows: WHOLE_SHEET_ROWS, format,
        peakRssBytes: medianOf(peaks), peakRssRuns: peaks, syncs: sink.sinkSyncs as number, maxRequestBytes: sink.sinkMaxRequestBytes as number, ms: sink.sinkMs as number,
        cpuRatio: medianOf(paired.pairedRatios.cpu), wallRatio: medianOf(paired.pairedRatios.wall),
        referencePeakRssBytes: ref ? ref.sinkPeakRssBytes : null,
      });
    }
  } finally {
    await stopService(svc);
  }
  log("");
  log(`A whole sheet (${fmt(WHOLE_SHEET_ROWS)} × 12) into the host that discards the cells: one run alone in a process, and one interleaved pair with its baseline:`);
  log(`form  import ms  syncs  max request MB  peak RSS MB (median of ${WHOLE_SHEET_PEAK_RUNS} processes)  ÷ its 200,000-row peak  import ÷ fetch+parse (wall)  (CPU)  each run's peak MB`);
  for (const w of out) {
    log([
      pad(w.format, 4), pad(fmt(w.ms), 10), pad(String(w.syncs), 6), pad(fmt(w.maxRequestBytes / MB, 2), 15), pad(fmt(w.peakRssBytes / MB), 42),
      pad(w.referencePeakRssBytes ? `${fmt(w.peakRssBytes / w.referencePeakRssBytes, 2)}×` : "—", 23), pad(`${fmt(w.wallRatio, 2)}×`, 28), pad(`${fmt(w.cpuRatio, 2)}×`, 6),
      `  ${w.peakRssRuns.map((x) => fmt(x / MB)).join(", ")}`,
    ].join(" "));
    checks.push({ name: `${fmt(WHOLE_SHEET_ROWS)} ${w.format}: a whole sheet imports with no request over 5 MB`, ok: w.maxRequestBytes <= REQUEST_LIMIT && w.syncs > 0, detail: `max ${fmt(w.maxRequestBytes / MB, 2)} MB, ${w.syncs} syncs` });
  }
  return out;
}

async function importScenarios(results: Scenario[], checks: { name: string; ok: boolean; detail: string }[]): Promise<void> {
  for (const rows of sizes) {
    const { url, child } = await startService(rows);
    try {
      for (const format of ["json", "csv"] as const) {
        const refresh = format === "json" && rows === Math.max(...sizes);
        progress(`  running ${fmt(rows)} rows ${format}...`);
        results.push(runScenario(url, rows, format, refresh));
      }
    } finally {
      await stopService(child);
    }
  }

  log("");
  log("rows      form  body MB  baseline ms  import ms  ratio  ratio w/o host  fetch+parse ms  add-in ms (incl. library)  host ms  syncs (budget)  max request MB  request MB  response MB  peak RSS MB (x body)  RSS growth MB (x body)");
  for (const r of results) {
    const ratio = r.endToEndMs / r.baselineMs;
    // + 4 fixed (reads, final request), + 1 for the defined-names read (issue 10, B5), + the ramp from
    // the 5,000-row first block to ~4 MB blocks (issue 10, B3: each accepted block may double).
    const rowsPerTarget = (r.rows * SYNC_BUDGET_BYTES) / r.totalRequestBytes;
    const ramp = rowsPerTarget > FIRST_BLOCK_ROWS ? Math.ceil(Math.log2(rowsPerTarget / FIRST_BLOCK_ROWS)) : 0;
    const syncBudget = Math.ceil(r.totalRequestBytes / SYNC_BUDGET_BYTES) + 5 + ramp;
    log(
      [
        pad(fmt(r.rows), 8), pad(r.format, 5), pad(fmt(r.bodyBytes / MB, 1), 8), pad(fmt(r.baselineMs), 12), pad(fmt(r.endToEndMs), 10),
        pad(fmt(ratio, 2), 6), pad(fmt((r.endToEndMs - r.emulatorMs) / r.baselineMs, 2), 15), pad(fmt(r.fetchParseMs), 15), pad(fmt(r.writeMs - r.emulatorMs), 26), pad(fmt(r.emulatorMs), 8),
        pad(`${r.syncs} (${syncBudget})`, 15), pad(fmt(r.maxRequestBytes / MB, 2), 15), pad(fmt(r.requestBytes / MB, 2), 11), pad(fmt(r.responseBytes / MB, 3), 12), pad(`${fmt(r.peakRssBytes / MB)} (${fmt(r.peakRssBytes / r.bodyBytes, 1)})`, 20),
        pad(`${fmt((r.peakRssBytes - r.startRssBytes) / MB)} (${fmt((r.peakRssBytes - r.startRssBytes) / r.bodyBytes, 1)})`, 22),
      ].join(" "),
    );
    if (r.rows === Math.max(...sizes)) {
      // The median of the interleaved pairs' own ratios (issue #38); the CPU clock's is printed with the targets below.
      checks.push({ name: `${r.format}: import ≤ 2.5× baseline`, ok: medianOf(r.endToEndRatios) <= 2.5, detail: spread(r.endToEndRatios) });
      checks.push({ name: `${r.format}: import without the host's own time (the library's included) ≤ 2.5× baseline`, ok: r.endToEndMs - r.emulatorMs <= 2.5 * r.baselineMs, detail: `${fmt((r.endToEndMs - r.emulatorMs) / r.baselineMs, 2)}×` });
      checks.push({ name: `${r.format}: writer's own time with the library's (excl. client parse and host) ≤ 2.5× baseline`, ok: (r.writeMs - r.emulatorMs) <= 2.5 * r.baselineMs, detail: `${fmt((r.writeMs - r.emulatorMs) / r.baselineMs, 2)}×` });
    }
    checks.push({ name: `${fmt(r.rows)} ${r.format}: syncs ≤ ceil(payload / 4 MB) + 5 + first-block ramp`, ok: r.syncs <= syncBudget, detail: `${r.syncs} ≤ ${syncBudget}` });
    checks.push({ name: `${fmt(r.rows)} ${r.format}: no request over 5 MB`, ok: r.maxRequestBytes <= REQUEST_LIMIT && r.rejectedSyncs === 0, detail: `max ${fmt(r.maxRequestBytes / MB, 2)} MB, ${r.rejectedSyncs} refused` });
  }

  // Issue #24 items 2 and 4: the add-in's own work, measured with Microsoft's library serialising every
  // request and a host that discards the cells (bench/sink.ts; the workbook's memory is Excel's).
  log("");
  log("The add-in's own import: the same import with Microsoft's library and a host that discards the cells (bench/sink.ts), each in its own process;");
  log("import ms = the add-in's time, the library's serialisation included, the host's answering taken out. send baseline = fetch + parse + one JSON.stringify of the table's values;");
  log("the import and both baselines run in one process of their own, interleaved (baseline, send baseline, import, …): ms are medians, ratios the median of each pair's own ratio;");
  log("CPU = user + system time of that process (the reference service is another process; its CPU counts for neither side);");
  log("peak RSS: the import alone in another process;");
  log("last column: the baseline alone (fetch + JSON.parse / papaparse of the whole body) in a process of its own:");
  log("rows      form  baseline ms  send baseline ms  import ms  ratio  ratio to send baseline  baseline CPU ms  import CPU ms  CPU ratio  CPU ratio to send  peak RSS MB (x body)  RSS growth MB (x body)  baseline alone: peak RSS MB (x body)");
  for (const r of results) {
    const p = r.pairedRatios;
    log(
      [
        pad(fmt(r.rows), 8), pad(r.format, 5), pad(fmt(r.pairedBaselineMs), 12), pad(fmt(r.pairedBaselineSendMs), 17), pad(fmt(r.pairedSinkMs), 10), pad(fmt(medianOf(p.wall), 2), 6),
        pad(fmt(medianOf(p.wallSend), 2), 23), pad(fmt(r.pairedBaselineCpuMs), 16), pad(fmt(r.pairedSinkCpuMs), 13), pad(fmt(medianOf(p.cpu), 2), 10), pad(fmt(medianOf(p.cpuSend), 2), 18),
        pad(`${fmt(r.sinkPeakRssBytes / MB)} (${fmt(r.sinkPeakRssBytes / r.bodyBytes, 1)})`, 21),
        pad(`${fmt((r.sinkPeakRssBytes - r.sinkStartRssBytes) / MB)} (${fmt((r.sinkPeakRssBytes - r.sinkStartRssBytes) / r.bodyBytes, 1)})`, 23),
        pad(`${fmt(r.baselinePeakRssBytes / MB)} (${fmt(r.baselinePeakRssBytes / r.bodyBytes, 1)})`, 37),
      ].join(" "),
    );
    log(`          spread over the pairs: ratio ${spread(p.wall)}, CPU ratio ${spread(p.cpu)}; load average ${fmt(r.loadBefore, 2)} before, ${fmt(r.loadAfter, 2)} after`);
    const largest = r.rows === Math.max(...sizes);
    const smallest = r.rows === Math.min(...sizes);
    if (largest || smallest) {
      // Issue #24 item 2: ≤ 1.5× at 200,000 rows, ≤ 2.0× at 10,000 (fixed costs weigh more there).
      const budget = r.rows >= IMPORT_REFERENCE_ROWS ? 1.5 : 2.0;
      // Wall time, the median of the interleaved pairs' own ratios (issue #38); CPU: see the targets below.
      checks.push({ name: `${fmt(r.rows)} ${r.format}: the add-in's import ≤ ${budget}× fetch+parse`, ok: medianOf(p.wall) <= budget, detail: spread(p.wall) });
    }
    if (largest) {
      checks.push({ name: `${fmt(r.rows)} ${r.format}: the add-in's import ≤ 1.3× fetch+parse+stringify`, ok: medianOf(p.wallSend) <= 1.3, detail: spread(p.wallSend) });
      checks.push({ name: `${fmt(r.rows)} ${r.format}: the add-in's peak RSS ≤ 1.0× the baseline's own`, ok: r.sinkPeakRssBytes <= r.baselinePeakRssBytes, detail: `${fmt(r.sinkPeakRssBytes / MB)} MB ÷ ${fmt(r.baselinePeakRssBytes / MB)} MB = ${fmt(r.sinkPeakRssBytes / r.baselinePeakRssBytes, 2)}×` });
    }
  }

  // Issue #38 (open): every timing budget on the CPU clock too, and the add-in's CPU time at 200,000
  // rows ≤ 0.8× fetch+JSON.parse's and ≤ 1.1× fetch+papaparse's. The wall-time checks above are
  // issue #24's budgets. On the CPU clock the baseline is cheap (the body's generation is the
  // service's, another process), so the add-in's own work shows whole: it is printed here, against
  // each target, until #38's work meets them; a target not yet met is not passed off as a check.
  log("");
  log("Issue #38 targets on the CPU clock (open: figures, not yet budget checks):");
  for (const r of results) {
    const p = r.pairedRatios;
    const largest = r.rows === Math.max(...sizes);
    if (largest) log(`  ${r.format}: emulated import ÷ baseline ${spread(r.endToEndCpuRatios)}; target ≤ 2.5×`);
    if (largest || r.rows === Math.min(...sizes)) {
      const target = r.rows === IMPORT_REFERENCE_ROWS ? (r.format === "json" ? "0.8" : "1.1") : r.rows > IMPORT_REFERENCE_ROWS ? "1.5" : "2.0";
      log(`  ${fmt(r.rows)} ${r.format}: the add-in's import ÷ fetch+${r.format === "json" ? "JSON.parse" : "papaparse"} ${spread(p.cpu)}; target ≤ ${target}×`);
    }
    if (largest) log(`  ${fmt(r.rows)} ${r.format}: ÷ fetch+parse+stringify ${spread(p.cpuSend)}; target ≤ 1.3×`);
    if (r.floorTextCpuMs !== undefined && r.floorStreamedCpuMs !== undefined && r.floorBytesCpuMs !== undefined && r.floorParseCpuMs !== undefined && r.floorStringifyCpuMs !== undefined) {
      // The floor under the CPU target: what any add-in must spend even with a parser that costs
      // nothing (read the body streamed and decoded, as the add-in does, and let Microsoft's library
      // JSON.stringify the cells). Receiving it with `text()` instead, as the baseline does, costs
      // several times more (printed beside it): that is not a floor (see floorOnly in scenario.ts).
      const base = r.floorTextCpuMs + r.floorParseCpuMs;
      log(
        `    the floor, with no parsing at all: fetch streamed and decoded + the library's stringify of the cells ÷ fetch+text+${r.format === "json" ? "JSON.parse" : "papaparse"} = ` +
          `${fmt((r.floorStreamedCpuMs + r.floorStringifyCpuMs) / base, 2)}×; received with text() instead: ${fmt((r.floorTextCpuMs + r.floorStringifyCpuMs) / base, 2)}× ` +
          `(CPU ms, medians of ${reps}: fetch+text ${fmt(r.floorTextCpuMs)}, parse ${fmt(r.floorParseCpuMs)}, stringify ${fmt(r.floorStringifyCpuMs)}, streamed ${fmt(r.floorStreamedCpuMs)}, bytes only ${fmt(r.floorBytesCpuMs)})`,
      );
    }
  }

  const refresh = results.find((r) => r.unchangedRefresh)?.unchangedRefresh;
  if (refresh) {
    log("");
    log(`Unchanged refresh (${fmt(Math.max(...sizes))} rows, json): ${fmt(refresh.ms, 1)} ms, ${refresh.requests} request(s), outcome ${refresh.outcome}, ${refresh.cellsWritten} cells written`);
    checks.push({ name: "unchanged refresh: one request, 304, zero cells", ok: refresh.requests === 1 && refresh.outcome === "unchanged" && refresh.cellsWritten === 0, detail: `${refresh.requests} request, ${refresh.cellsWritten} cells` });
  }
  const full = results.find((r) => r.fullChangeRefresh)?.fullChangeRefresh;
  if (full) {
    const moved = full.requestBytes + full.responseBytes;
    const imp = full.importRequestBytes + full.importResponseBytes;
    log(`Full-change refresh (rotated rows: ${fmt(Math.max(...sizes))} rows, json, every row moved up one place): ${fmt(full.ms)} ms, ${full.syncs} syncs, outcome ${full.outcome}, ${fmt(full.requestBytes / MB, 2)} MB sent + ${fmt(full.responseBytes / MB, 3)} MB received = ${fmt(moved / imp, 2)}× the import's ${fmt(imp / MB, 2)} MB`);
    // Issue #24 item 3: a full rewrite moves at most 1.05× the import (it was 1.2× before).
    checks.push({ name: "full-change refresh: bytes both ways ≤ 1.05× the first import's", ok: full.outcome === "updated" && moved <= 1.05 * imp, detail: `${fmt(moved / imp, 2)}×` });
  }

  const growth = importGrowth;
  log("");
  log("Growth (import ms per 1,000 rows):");
  for (const format of ["json", "csv"] as const) {
    const g = results.filter((r) => r.format === format).map((r) => ({ rows: r.rows, msPerKRow: r.endToEndMs / (r.rows / 1000) }));
    growth[format] = g;
    log(`  ${format}: ` + g.map((x) => `${fmt(x.rows)} → ${fmt(x.msPerKRow, 2)}`).join(", ") + (g.length > 1 ? `  (largest/smallest per-row cost: ${fmt(g[g.length - 1].msPerKRow / g[0].msPerKRow, 2)}×; 1.00 = linear)` : ""));
  }

}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
