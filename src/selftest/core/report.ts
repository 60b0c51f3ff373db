/**
 * What the self-test page posts to the test server, and the scenario × result table the command
 * prints. A report from real Excel and one from the emulated host have the same shape, so two runs
 * can be put side by side (`formatTable(a, b)`). Pure logic: no Office, no DOM.
 */
import { printable } from "./printable";

export type ScenarioStatus = "passed" | "failed" | "skipped" | "not run";

export interface ScenarioResult {
  readonly name: string;
  readonly status: ScenarioStatus;
  /** Wall time of the scenario, milliseconds. */
  readonly ms: number;
  /** Requests that crossed the bridge (`context.sync()` round trips). */
  readonly syncs: number;
  /** What was checked (passed), why it failed, or why it was skipped. */
  readonly detail: string;
}

export interface SelfTestReport {
  readonly kit: "ppm-selftest";
  /** `Office.context.diagnostics`: platform and version (`OfficeOnline`, `PC`, `Mac`). */
  readonly host: { readonly platform: string; readonly version: string; readonly emulated: boolean; readonly profile?: string };
  /** Set when the kit refused to run (the workbook was not one it created), with the reason. */
  readonly refused?: string;
  readonly scenarios: ScenarioResult[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const STATUSES: readonly ScenarioStatus[] = ["passed", "failed", "skipped", "not run"];

/** Reads a report as posted (untrusted: the test server takes anything); throws a plain message. */
export function parseReport(raw: unknown): SelfTestReport {
  if (!isObject(raw) || raw.kit !== "ppm-selftest") throw new Error("The test server received something that is not a self-test report.");
  const host = raw.host;
  if (!isObject(host) || typeof host.platform !== "string" || typeof host.version !== "string") throw new Error("The self-test report names no host.");
  if (!Array.isArray(raw.scenarios)) throw new Error("The self-test report has no scenarios.");
  const scenarios = raw.scenarios.map((s: unknown, i): ScenarioResult => {
    if (!isObject(s) || typeof s.name !== "string" || !STATUSES.includes(s.status as ScenarioStatus)) throw new Error(`Scenario ${i + 1} of the report is malformed.`);
    return { name: s.name, status: s.status as ScenarioStatus, ms: Number(s.ms) || 0, syncs: Number(s.syncs) || 0, detail: typeof s.detail === "string" ? s.detail : "" };
  });
  return {
    kit: "ppm-selftest",
    host: { platform: host.platform, version: host.version, emulated: host.emulated === true, ...(typeof host.profile === "string" ? { profile: host.profile } : {}) },
    ...(typeof raw.refused === "string" ? { refused: raw.refused } : {}),
    scenarios,
  };
}

/** True when nothing failed and the kit ran (skipped scenarios do not fail a run). */
export function reportPassed(r: SelfTestReport): boolean {
  return !r.refused && r.scenarios.length > 0 && r.scenarios.every((s) => s.status === "passed" || s.status === "skipped");
}

export function hostLabel(r: SelfTestReport): string {
  return printable(r.host.emulated ? `emulated (${r.host.profile ?? r.host.platform})` : `Excel ${r.host.platform} ${r.host.version}`);
}

/** Cut to `n` characters, made printable (a report is posted by a page: its text is not trusted, issue #36). */
const cut = (s: string, n: number): string => printable(s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The scenario × result table: one row per scenario, one column per report (a real-Excel run and an
 * emulated one side by side), and the detail of the first report.
 */
export function formatTable(...reports: SelfTestReport[]): string {
  const names: string[] = [];
  for (const r of reports) for (const s of r.scenarios) if (!names.includes(s.name)) names.push(s.name);
  const cell = (r: SelfTestReport, name: string): string => {
    const s = r.scenarios.find((x) => x.name === name);
    if (!s) return "-";
    return s.status === "passed" ? `ok ${(s.ms / 1000).toFixed(1)} s, ${s.syncs} syncs` : s.status.toUpperCase();
  };
  const header = ["scenario", ...reports.map(hostLabel), "detail"];
  // The detail is the last column, whole (issue #37: it was cut at 90 characters, and the end of a
  // failure's detail is often what says why); only the rule under the header stops at 90. Every cell
  // is made printable (a report is posted by a page: its text is not trusted, issue #36).
  const rows = names.map((n) => [cut(n, 90), ...reports.map((r) => cell(r, n)), printable(reports[0]?.scenarios.find((x) => x.name === n)?.detail ?? "")]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (i === header.length - 1 ? Math.min(r[i].length, 90) : r[i].length))));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ").trimEnd();
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...rows.map(line)];
  for (const r of reports) {
    const count = (st: ScenarioStatus) => r.scenarios.filter((s) => s.status === st).length;
    out.push(`${hostLabel(r)}: ${r.refused ? `REFUSED: ${printable(r.refused)}` : `${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped, ${count("not run")} not run`}`);
  }
  return out.join("\n");
}
