/**
 * The self-test kit's scenarios on the emulated host, in Node: the same code the self-test page runs
 * in real Excel and in the preview (`npm run test:excel -- --host emulated`), over real HTTP to the
 * reference service, with the bridge recorder on. Also: the kit never touches a workbook it did not
 * create, and the transcript it records replays on the emulated host with 0 differences.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, answerRequest, createExcelNamespace, officeJs, seed, serializeWorkbook } from "../../src/emulator";
import { runKit, SCENARIOS, SELFTEST_MARK, SETUP } from "../../src/selftest/scenarios";
import { BridgeRecorder } from "../../src/selftest/recorder";
import { replayTranscript, formatReplay } from "../../src/selftest/core/replay";
import { TRANSCRIPT_FORMAT, TRANSCRIPT_VERSION, type Transcript } from "../../src/selftest/core/transcript";
import { CONTROL } from "../helpers/control";

let service: ReferenceService;
const g = globalThis as unknown as { Excel?: unknown };
const saved = g.Excel;

beforeAll(async () => {
  service = await startReferenceService({ port: 0, quiet: true });
  officeJs(); // the library and its bridge in this realm, before the recorder wraps the bridge
});
afterAll(async () => {
  g.Excel = saved;
  await service.close();
});

describe("the kit never touches a workbook it did not create", () => {
  it("refuses a workbook with the user's data: nothing written, not one write request sent", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    seed(wb, "A1:B2", [["Budget", 100], ["Forecast", 120]]);
    g.Excel = createExcelNamespace(wb);
    const before = serializeWorkbook(wb);
    const recorder = new BridgeRecorder();
    const uninstall = recorder.install();
    try {
      const out = await runKit({ serviceUrl: service.url }, { begin: (n) => recorder.begin(n), end: () => recorder.end() });
      expect(out.refused).toMatch(/not a new one .*cells on "Sheet1".*changed nothing/);
      expect(out.results.every((r) => r.status === "not run")).toBe(true);
    } finally {
      uninstall();
    }
    expect(serializeWorkbook(wb)).toBe(before);
    // Only reads crossed the bridge: no SetProperty (4), and no method but the library's bookkeeping and reads.
    const actions = recorder.scenarios[0].exchanges.flatMap((x) => (x.request.body as { Actions: Array<{ ActionType: number; Name: string }> }).Actions);
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((a) => a.ActionType === 4)).toEqual([]);
    expect(actions.filter((a) => a.ActionType === 3 && !/^_(Keep|Remove)/.test(a.Name)).map((a) => a.Name)).toEqual([]);
    // Nothing was asked of the service either.
    const log = (await (await fetch(`${service.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: unknown[] };
    expect(log.requests).toEqual([]);
  });

  it.each([
    ["another add-in's settings", /add-in settings/, (context: Excel.RequestContext) => void context.workbook.settings.add("someone.else", "kept")],
    ["a defined name", /1 defined name/, (context: Excel.RequestContext) => void context.workbook.names.add("Rate", "=0.2")],
    ["a table on a second sheet", /1 table/, (context: Excel.RequestContext) => {
      const sheet = context.workbook.worksheets.add("Data");
      sheet.getRange("A1:B2").values = [["k", "v"], ["a", 1]];
      sheet.tables.add("Data!A1:B2", true);
    }],
  ])("refuses a workbook holding only %s: nothing changes", async (_what, reason, prepare) => {
    const wb = new Workbook({ currentYear: 2025 });
    g.Excel = createExcelNamespace(wb);
    await (g.Excel as typeof Excel).run(async (context) => {
      prepare(context);
      await context.sync();
    });
    const before = serializeWorkbook(wb);
    const out = await runKit({ serviceUrl: service.url });
    expect(out.refused).toMatch(/not a new one \(it has /);
    expect(out.refused).toMatch(reason);
    expect(serializeWorkbook(wb)).toBe(before);
  });
});

describe("the scenarios on the emulated host", () => {
  it("pass in a new workbook, and their transcript replays with 0 differences", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    g.Excel = createExcelNamespace(wb);
    const recorder = new BridgeRecorder();
    const uninstall = recorder.install();
    let out: Awaited<ReturnType<typeof runKit>>;
    try {
      out = await runKit({ serviceUrl: service.url }, { begin: (n) => recorder.begin(n), end: () => recorder.end(), syncs: () => recorder.syncs });
    } finally {
      uninstall();
    }
    const failed = out.results.filter((r) => r.status === "failed");
    expect(failed).toEqual([]);
    expect(out.results.map((r) => r.status)).toEqual(SCENARIOS.map((s) => (s.skip ? "skipped" : "passed")));
    expect(out.results.filter((r) => r.status === "passed").every((r) => r.syncs > 0)).toBe(true);
    // The kit marked the workbook as its own.
    expect(serializeWorkbook(wb)).toContain(SELFTEST_MARK);

    const transcript: Transcript = {
      format: TRANSCRIPT_FORMAT,
      version: TRANSCRIPT_VERSION,
      recordedAt: new Date().toISOString(),
      host: { platform: "OfficeOnline", version: "emulated", emulated: true, profile: "web" },
      workbook: { sheets: ["Sheet1"] },
      scrubbed: false,
      scenarios: recorder.scenarios,
    };
    // The transcript starts with the check for a new workbook: it replays on a new workbook.
    expect(recorder.scenarios[0].name).toBe(SETUP);
    const replayWb = new Workbook({ currentYear: 2025 });
    const report = await replayTranscript(transcript, (r) => answerRequest(replayWb, r));
    expect(formatReplay(report)).toMatch(/, 0 differences/);
    expect(report.exchanges).toBeGreaterThan(100);
  }, 120_000);
});
