/**
 * `npm run bench:delta [-- --json] [-- --rows 200000] [-- --runs 5]`
 *
 * Delta planner benchmark (pure, no Excel): a 200,000 × 12 table keyed by `Id`, edited in several
 * ways; prints the planning time (median), the strategy chosen, cellsWritten against a full
 * rewrite's cells, and the cost estimate. Budgets checked and printed (not asserted in a test):
 * - 1 % changed + 0.1 % added + 0.1 % removed: planned well under a second, a delta, and
 *   cellsWritten ≤ 5 % of a full rewrite;
 * - every row changed: a full rewrite (so it costs exactly a full rewrite, ≤ 1.1×).
 * With --json the last stdout line is one JSON object with every figure.
 */
import { applyPlan, planDelta, DEFAULT_COST_MODEL, DELTA_MAX_COST_RATIO, type DeltaPlan } from "../src/refresh/delta";
import type { CellValue, Column } from "../src/table/model";
import { mulberry32 } from "./random";

const args = process.argv.slice(2);
const asJson = args.includes("--json");
const argValue = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROWS = Number(argValue("--rows") ?? 200_000);
const RUNS = Number(argValue("--runs") ?? 5);

const columns: Column[] = [
  { name: "Id", type: "text" },
  { name: "Name", type: "text" },
  { name: "Status", type: "text" },
  { name: "Region", type: "text" },
  { name: "Budget", type: "decimal" },
  { name: "Actual", type: "decimal" },
  { name: "Score", type: "integer" },
  { name: "Start", type: "date" },
  { name: "Updated", type: "datetime" },
  { name: "Active", type: "boolean" },
  { name: "Owner", type: "text" },
  { name: "Cost Center Code", type: "text" },
];

const rnd = mulberry32(7);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const BASE = Date.UTC(2023, 0, 1);

function makeRow(id: number): CellValue[] {
  const day = Math.floor(rnd() * 1000);
  return [
    `PRJ-${String(id).padStart(7, "0")}`,
    pick(["ka", "lo", "mi", "ne"]) + pick(["ru", "ta", "zo", "be"]),
    pick(["Open", "Closed", "On Hold"]),
    pick(["EMEA", "APAC", "AMER"]),
    Math.round(rnd() * 100_000_00) / 100,
    Math.round(rnd() * 100_000_00) / 100,
    Math.floor(rnd() * 100),
    new Date(BASE + day * 86_400_000).toISOString().slice(0, 10),
    new Date(BASE + Math.floor(rnd() * 1e8) * 1000).toISOString(),
    rnd() < 0.5,
    pick(["Dana", "Fox", "Zoë"]),
    "00" + (100 + Math.floor(rnd() * 900)),
  ];
}

/** What the reference service's regeneration changes in a row: the actual cost, the score and the update time. */
function changeRow(r: CellValue[]): CellValue[] {
  const out = [...r];
  out[5] = (out[5] as number) + 1;
  out[6] = ((out[6] as number) + 1) % 100;
  out[8] = new Date(Date.parse(out[8] as string) + 86_400_000).toISOString();
  return out;
}

const old: CellValue[][] = Array.from({ length: ROWS }, (_, i) => makeRow(i));

/** A new export: `changed`, `added`, `removed` fractions of the rows, added rows at random positions; optional swaps. */
function edit(changed: number, added: number, removed: number, swaps = 0): CellValue[][] {
  const r = mulberry32(99);
  const next: CellValue[][] = [];
  let nextId = ROWS;
  for (const row of old) {
    if (r() < added) next.push(makeRow(nextId++));
    if (r() < removed) continue;
    next.push(r() < changed ? changeRow(row) : row);
  }
  for (let s = 0; s < swaps; s++) {
    const a = Math.floor(r() * next.length);
    const b = Math.floor(r() * next.length);
    [next[a], next[b]] = [next[b], next[a]];
  }
  return next;
}

interface Figure {
  scenario: string;
  rows: number;
  planMsMedian: number;
  planCpuMsMedian: number;
  strategy: DeltaPlan["strategy"];
  cause: string | null;
  added: number;
  changed: number;
  removed: number;
  cellsWritten: number;
  fullRewriteCells: number;
  cellsRatio: number;
  costRatio: number;
  exact: boolean;
}

function measure(scenario: string, next: CellValue[][]): Figure {
  const oldT = { columns, rows: old };
  const newT = { columns, rows: next };
  const times: number[] = [];
  // CPU time too: on a shared machine the wall time mostly measures the other jobs.
  const cpu: number[] = [];
  // One untimed run first: JIT warm-up and the garbage of building the scenario stay out of the figure.
  let plan: DeltaPlan = planDelta(oldT, newT, ["Id"]);
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    plan = planDelta(oldT, newT, ["Id"]);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  // The invariant once more at full size: the plan applied to the old rows is the new table.
  const applied = applyPlan(oldT, plan);
  const exact = applied.rows.length === next.length && applied.rows.every((row, i) => row.every((v, c) => Object.is(v, next[i][c])));
  const cellsWritten = plan.strategy === "full" ? plan.cost.fullRewriteCells : plan.cost.cellsWritten;
  return {
    scenario,
    rows: ROWS,
    planMsMedian: Math.round(times[Math.floor(times.length / 2)] * 10) / 10,
    planCpuMsMedian: Math.round(cpu[Math.floor(cpu.length / 2)] * 10) / 10,
    strategy: plan.strategy,
    cause: plan.strategy === "full" ? plan.cause : null,
    added: plan.counts.added,
    changed: plan.counts.changed,
    removed: plan.counts.removed,
    cellsWritten,
    fullRewriteCells: plan.cost.fullRewriteCells,
    cellsRatio: Math.round((cellsWritten / plan.cost.fullRewriteCells) * 10000) / 10000,
    costRatio: Math.round(plan.cost.ratio * 10000) / 10000,
    exact,
  };
}

const figures: Figure[] = [
  measure("1% changed, 0.1% added, 0.1% removed", edit(0.01, 0.001, 0.001)),
  measure("10% changed", edit(0.1, 0, 0)),
  measure("25% changed", edit(0.25, 0, 0)),
  measure("every row changed", edit(1, 0, 0)),
  measure("1% changed + 10 rows swapped (reorder)", edit(0.01, 0, 0, 10)),
];

const log = (s = "") => console.log(s);
log(`Delta planner, ${ROWS.toLocaleString("en-US")} × ${columns.length}, key Id, median of ${RUNS} runs; cost model ${JSON.stringify(DEFAULT_COST_MODEL)}, delta when cost ≤ ${DELTA_MAX_COST_RATIO} × full`);
log("scenario                                   plan ms (cpu ms)  strategy        added  changed  removed  cellsWritten / full       cells   cost  exact");
for (const f of figures) {
  log(
    `${f.scenario.padEnd(42)} ${String(f.planMsMedian).padStart(7)} (${String(f.planCpuMsMedian).padStart(6)})  ${(f.strategy + (f.cause ? ` (${f.cause})` : "")).padEnd(14)} ${String(f.added).padStart(6)} ${String(f.changed).padStart(8)} ${String(f.removed).padStart(8)}  ${String(f.cellsWritten).padStart(9)} / ${String(f.fullRewriteCells).padEnd(9)}  ${(f.cellsRatio * 100).toFixed(2).padStart(6)}% ${f.costRatio.toFixed(3).padStart(6)}  ${f.exact}`,
  );
}
const target = figures[0];
const all = figures[3];
const checks = {
  targetPlannedUnderOneSecond: target.planMsMedian < 1000,
  targetIsDelta: target.strategy === "delta",
  targetCellsAtMost5Percent: target.cellsRatio <= 0.05,
  everyRowChangedIsFullRewrite: all.strategy === "full",
  everyRowChangedWithin1_1xFull: all.cellsWritten <= 1.1 * all.fullRewriteCells,
  allPlansExact: figures.every((f) => f.exact),
};
log();
for (const [k, v] of Object.entries(checks)) log(`${v ? "ok  " : "FAIL"} ${k}`);
if (asJson) log(JSON.stringify({ deltaPlanner: { rows: ROWS, columns: columns.length, runs: RUNS, costModel: DEFAULT_COST_MODEL, maxCostRatio: DELTA_MAX_COST_RATIO, figures, checks } }));
if (!Object.values(checks).every(Boolean)) process.exitCode = 1;
