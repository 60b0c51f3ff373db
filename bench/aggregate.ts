/**
 * The `aggregate` scenario, run in its own Node process by `bench/run.ts` so its peak RSS is its own.
 * Prints one JSON line. Usage:
 *   tsx bench/aggregate.ts <serviceUrl> <reps> [--baseline-only]
 *
 * Summary: `financials` (12 columns) streamed from the reference service through `$apply` grouping to
 * about 10,000 groups (901 cost centres incl. null × 12 periods), with `fetchDataset({ sink })`: the
 * raw rows are never kept. Baseline (`--baseline-only`, a process of its own): the same fetch and
 * the same streaming JSON parse and typing, into a sink that only counts rows; so the ratio is what
 * aggregation adds to fetching and parsing.
 */
import { createQuerySink, parseQuery } from "../src/query";
import { PpmClient } from "../src/service";
import type { TableSink } from "../src/table/sink";

const TOKEN = "demo-acme-token"; // the reference service's documented demo token
const KEY = "financials";
export const AGGREGATE_QUERY =
  "$apply=groupby((cost_center_code,period_number),aggregate(budget with sum as budget_total,actual_cost with sum as actual_total,variance_pct with average as variance_avg,external_ref with max as last_ref,$count as rows))";

const [url, repsArg, ...flags] = process.argv.slice(2);
const reps = Number(repsArg);

const settle = () => new Promise((r) => setTimeout(r, 50));

function countingSink(): TableSink & { rows: number } {
  const s = {
    rows: 0,
    begin() {},
    row() {
      s.rows++;
    },
    end: () => ({ columns: [], rows: [] }),
  };
  return s;
}

/** Wall time, and this process's CPU time (user + system): the latter barely moves with other load. */
async function once(baseline: boolean): Promise<{ ms: number; cpuMs: number; sourceRows: number; resultRows: number; columns: number }> {
  const client = new PpmClient({ id: "bench", name: "bench", baseUrl: url, token: TOKEN }, { timeoutMs: 30 * 60_000 });
  let received = 0;
  await settle();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const cpuMs = () => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
  };
  if (baseline) {
    const sink = countingSink();
    const r = await client.fetchDataset(KEY, { format: "json", conditional: false, sink });
    if (r.status !== "updated") throw new Error("expected data");
    return { ms: performance.now() - t0, cpuMs: cpuMs(), sourceRows: sink.rows, resultRows: 0, columns: 0 };
  }
  const sink = createQuerySink(parseQuery(AGGREGATE_QUERY));
  const r = await client.fetchDataset(KEY, { format: "json", conditional: false, sink, onProgress: (n) => void (received = n) });
  if (r.status !== "updated") throw new Error("expected data");
  return { ms: performance.now() - t0, cpuMs: cpuMs(), sourceRows: received, resultRows: r.table.rows.length, columns: r.table.columns.length };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(): Promise<void> {
  const baseline = flags.includes("--baseline-only");
  const startRssBytes = process.memoryUsage().rss;
  const runs: Awaited<ReturnType<typeof once>>[] = [];
  for (let i = 0; i < reps; i++) {
    global.gc?.();
    runs.push(await once(baseline));
  }
  const last = runs[runs.length - 1];
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  const ms = median(runs.map((r) => r.ms));
  const cpuMs = median(runs.map((r) => r.cpuMs));
  console.log(
    JSON.stringify(
      baseline
        ? { aggBaselineMs: ms, aggBaselineCpuMs: cpuMs, aggBaselineRows: last.sourceRows, aggBaselinePeakRssBytes: peakRssBytes, aggBaselineStartRssBytes: startRssBytes }
        : { aggMs: ms, aggCpuMs: cpuMs, aggSourceRows: last.sourceRows, aggGroups: last.resultRows, aggColumns: last.columns, aggPeakRssBytes: peakRssBytes, aggStartRssBytes: startRssBytes },
    ),
  );
}

if (require.main === module) main().catch((e) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
