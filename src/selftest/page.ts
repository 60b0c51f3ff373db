/**
 * The self-test page (`selftest.html`, the self-test variant's task pane; `preview-selftest.html` in
 * the preview). Once Office is ready it wraps the request bridge (every request and answer go into
 * the transcript), runs the workbook scenarios in this workbook — only if it is a new one — and posts
 * the transcript and the results to the kit's test server (cli/testServer.ts, on
 * `https://localhost:<testServerPort>`), each with the run's nonce from this page's address: the
 * server takes posts with it only (issue #36).
 *
 * Query parameters: `service` (the reference service, default http://localhost:4100),
 * `testServerPort` (default 4201), `nonce` (this run's, put there by `npm run test:excel`),
 * `profile` (the preview's platform profile).
 */
import { BridgeRecorder } from "./recorder";
import { runKit, sheetNames } from "./scenarios";
import { TRANSCRIPT_FORMAT, TRANSCRIPT_VERSION, serializeTranscript, type Transcript } from "./core/transcript";
import type { ScenarioResult, SelfTestReport } from "./core/report";

const params = new URLSearchParams(location.search);
const serviceUrl = params.get("service") ?? "http://localhost:4100";
const port = Number(params.get("testServerPort") ?? "4201");
const nonce = params.get("nonce") ?? "";

/** Posts to the test server with this run's nonce; true when it took the post. */
async function post(route: "transcript" | "results", body: string): Promise<boolean> {
  try {
    const r = await fetch(`https://localhost:${port}/${route}`, { method: "POST", body, headers: { "Content-Type": "application/json", "X-PPM-Kit-Nonce": nonce }, cache: "no-store" });
    return r.ok;
  } catch {
    return false;
  }
}

function setStatus(text: string, state: string): void {
  const el = document.getElementById("status");
  if (!el) return;
  el.textContent = text;
  el.dataset.state = state;
}

function addRow(r: ScenarioResult): void {
  const body = document.querySelector("#results tbody");
  if (!body) return;
  const tr = document.createElement("tr");
  tr.dataset.status = r.status;
  for (const text of [r.name, r.status === "passed" ? `passed (${(r.ms / 1000).toFixed(1)} s, ${r.syncs} syncs)` : r.status, r.detail]) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.appendChild(td);
  }
  body.appendChild(tr);
}

async function main(): Promise<void> {
  await Office.onReady();
  const diagnostics = Office.context.diagnostics as unknown as { platform?: string; version?: string } | undefined;
  const emulated = typeof (window as { __ppmPreviewWorkbook?: unknown }).__ppmPreviewWorkbook === "object";
  const host = {
    platform: String(diagnostics?.platform ?? "unknown"),
    version: String(diagnostics?.version ?? "unknown"),
    emulated,
    ...(emulated ? { profile: params.get("profile") ?? "web" } : {}),
  };
  const recorder = new BridgeRecorder();
  recorder.install();
  setStatus("Running the scenarios in this new workbook…", "running");
  const sheets = await sheetNames();
  let report: SelfTestReport;
  try {
    const out = await runKit({ serviceUrl }, { begin: (n) => recorder.begin(n), end: () => recorder.end(), syncs: () => recorder.syncs, onResult: addRow });
    report = { kit: "ppm-selftest", host, ...(out.refused ? { refused: out.refused } : {}), scenarios: out.results };
  } catch (e) {
    report = { kit: "ppm-selftest", host, refused: `The kit could not start: ${e instanceof Error ? e.message : String(e)}`, scenarios: [] };
  }
  const transcript: Transcript = { format: TRANSCRIPT_FORMAT, version: TRANSCRIPT_VERSION, recordedAt: new Date().toISOString(), host, workbook: { sheets }, scrubbed: false, scenarios: recorder.scenarios };
  // The transcript first (the command waits for the results, then saves the transcript it has).
  const saved = await post("transcript", serializeTranscript(transcript));
  const sent = await post("results", JSON.stringify(report));
  const failed = report.scenarios.filter((s) => s.status === "failed").length;
  const summary = report.refused ?? `${report.scenarios.filter((s) => s.status === "passed").length} passed, ${failed} failed.`;
  setStatus(`${summary} ${sent ? "Results sent to the test server" : `The test server (https://localhost:${port}) did not take the results`}${saved ? ", with the transcript." : "."}`, report.refused || failed ? "failed" : "passed");
}

void main();
