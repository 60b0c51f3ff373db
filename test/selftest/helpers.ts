/** Shared by the self-test kit's tests. */
import { Workbook, createExcelNamespace } from "../../src/emulator";
import { runKit, SCENARIOS, type Scenario } from "../../src/selftest/scenarios";
import { BridgeRecorder } from "../../src/selftest/recorder";
import { TRANSCRIPT_FORMAT, TRANSCRIPT_VERSION, type Transcript } from "../../src/selftest/core/transcript";

/**
 * Runs the kit's `scenarios` in a new emulated workbook (this realm's `Excel`, the bridge recorded),
 * as the self-test page does: its results and the transcript the page would post.
 */
export async function recordKit(serviceUrl: string, scenarios: readonly Scenario[] = SCENARIOS): Promise<{ wb: Workbook; out: Awaited<ReturnType<typeof runKit>>; transcript: Transcript }> {
  const wb = new Workbook({ currentYear: 2025 });
  (globalThis as { Excel?: unknown }).Excel = createExcelNamespace(wb);
  const recorder = new BridgeRecorder();
  const uninstall = recorder.install();
  let out: Awaited<ReturnType<typeof runKit>>;
  try {
    out = await runKit({ serviceUrl }, { begin: (n) => recorder.begin(n), end: () => recorder.end(), syncs: () => recorder.syncs }, scenarios);
  } finally {
    uninstall();
  }
  const transcript: Transcript = {
    format: TRANSCRIPT_FORMAT,
    version: TRANSCRIPT_VERSION,
    recordedAt: new Date().toISOString(),
    host: { platform: "OfficeOnline", version: "emulated", emulated: true, profile: "web" },
    workbook: { sheets: ["Sheet1"] },
    scrubbed: false,
    scenarios: recorder.scenarios,
    ...(out.probes ? { probes: out.probes } : {}),
  };
  return { wb, out, transcript };
}
