/**
 * Issue #35: the self-test kit's `probes` scenario on the emulated host. Its answers are in the
 * transcript (Excel's responses, and the `probes` section); a transcript whose host answered a probe
 * differently shows that difference in `host:replay`; the settings-merge probe runs only with two
 * clients (and, on the two-client host, finds the whole-collection writes the host emulates).
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, answerRequest, createRequestContext, officeJs } from "../../src/emulator";
import { CoauthoringSession } from "../../src/emulator/coauthoring";
import { SCENARIOS } from "../../src/selftest/scenarios";
import { recordKit } from "./helpers";
import { PROBE_COLUMNS, PROBE_ROWS, PROBE_VALUES, probeSettingsMerge } from "../../src/selftest/probes";
import { formatReplay, replayTranscript } from "../../src/selftest/core/replay";
import { parseTranscript, serializeTranscript, type Transcript } from "../../src/selftest/core/transcript";

let service: ReferenceService;
const g = globalThis as unknown as { Excel?: unknown };
const saved = g.Excel;
const PROBES = SCENARIOS.find((s) => s.name.startsWith("probes"))!;

beforeAll(async () => {
  service = await startReferenceService({ port: 0, quiet: true });
  officeJs();
});
afterAll(async () => {
  g.Excel = saved;
  await service.close();
});

/** The probes scenario alone in a new emulated workbook, recorded: its results and transcript. */
const recordProbes = () => recordKit(service.url, [PROBES]);

describe("the probes scenario on the emulated host", () => {
  let run: Awaited<ReturnType<typeof recordProbes>>;
  beforeAll(async () => {
    run = await recordProbes();
  }, 120_000);

  it("passes and records every answer in the transcript's probes section", () => {
    expect(run.out.results.map((r) => [r.name, r.status])).toEqual([[PROBES.name, "passed"]]);
    const p = run.transcript.probes!;
    expect(p["locale.1234.5 as #,##0.00"]).toBe("1,234.50");
    expect(String(p["textjoin.text"]).split("|")).toHaveLength(PROBE_VALUES.length);
    expect(p["textjoin.matches prediction"]).toBe(true);
    expect(p["isformula.range mask"]).toBe(10);
    expect(p["isformula.per cell"]).toBe(true);
    // The emulated host's strict reading of getUsedRange (src/emulator/README.md), which sizes the writer's blocks.
    expect(p["usedrange.empty C6:D8 inside A1:E12"]).toBe("C6:D8");
    expect(p["usedrange.met with the sheet's"]).toBe(true);
    expect(p["checksums.rows × columns"]).toBe(`${PROBE_ROWS} × ${PROBE_COLUMNS}`);
    expect(typeof p["checksums.full recalculation ms"]).toBe("number");
    expect(p["checksums.first block"]).toBe(p["checksums.first block predicted"]);
    expect(p["settings.merge"]).toBe("skipped");
    expect(p["settings.merge detail"]).toMatch(/nobody else is editing this workbook/);
    // The transcript file keeps the section, and reads back.
    expect(parseTranscript(serializeTranscript(run.transcript)).probes).toEqual(p);
  });

  it("cleans up: the kit's workbook holds no probe sheet, checksum sheet or probe setting afterwards", () => {
    expect(run.wb.sheets.map((s) => s.name)).toEqual(["Sheet1"]);
    expect([...run.wb.settings.keys()].filter((k) => k.includes("probe"))).toEqual([]);
  });

  it("replays with 0 differences, and host:replay lists the recorded answers", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const again = await replayTranscript(run.transcript, (r) => answerRequest(wb, r));
    expect(again.differences).toEqual([]);
    expect(formatReplay(again)).toMatch(/probe {3}textjoin\.text: ".*" \(recorded\)/);
  }, 60_000);

  it("an answer another host gave differently shows as a difference of the probe scenario", async () => {
    const t = JSON.parse(JSON.stringify(run.transcript)) as Transcript;
    // The TEXTJOIN text as a German Excel would write it: a decimal comma.
    const probe = t.scenarios.find((s) => s.name === PROBES.name)!;
    let changed = 0;
    for (const x of probe.exchanges) {
      if (x.answer.kind !== "response") continue;
      const body = x.answer.body as { Results?: Array<{ Value: unknown }> };
      for (const r of body.Results ?? []) {
        const v = r.Value as { Values?: unknown[][] } | null;
        if (v?.Values && typeof v.Values[0][0] === "string" && v.Values[0][0].startsWith("1.5|")) {
          v.Values[0][0] = v.Values[0][0].replace("1.5|-0.25", "1,5|-0,25");
          changed++;
        }
      }
    }
    expect(changed).toBe(1);
    const wb = new Workbook({ currentYear: 2025 });
    const report = await replayTranscript(t, (r) => answerRequest(wb, r));
    expect(report.differences).toEqual([expect.objectContaining({ scenario: PROBES.name, kind: "value", recorded: expect.stringMatching(/^1,5\|-0,25\|/) as string, replayed: expect.stringMatching(/^1\.5\|-0\.25\|/) as string })]);
    expect(formatReplay(report)).toMatch(/value {3}probes: answers only real Excel can give #\d+ .*Values\[0\]\[0\]: recorded "1,5\|-0,25/);
  }, 60_000);
});

describe("the settings-merge probe", () => {
  afterEach(() => jest.useRealTimers());

  it("one client: skipped, with the reason", async () => {
    const wb = new Workbook({});
    const out = await probeSettingsMerge((work) => work(createRequestContext(wb)), { id: "a" });
    expect(out.verdict).toBe("skipped");
    expect(out.detail).toMatch(/getIsActiveCollabSession is false/);
  });

  it("two clients on the two-client host (whole-collection writes, d = 2 s): a co-author's key vanishes while both write", async () => {
    jest.useFakeTimers();
    const session = new CoauthoringSession(null, { delayMs: 2_000, collabFlagDelayMs: 0 });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    const probe = (c: typeof ann, id: string) => probeSettingsMerge((work) => work(createRequestContext(c.workbook)), { id, seconds: 10, settleSeconds: 5 });
    const both = Promise.all([probe(ann, "ann"), probe(ben, "ben")]);
    for (let i = 0; i < 100; i++) await jest.advanceTimersByTimeAsync(500);
    const [a, b] = await both;
    // The client whose writes land last never sees the other's key (its own collection always wins in
    // its copy): inconclusive there; the other saw its own key vanish. Never "per key".
    expect([a.verdict, b.verdict].sort()).toEqual(["inconclusive", "whole collection"]);
    expect([a, b].find((x) => x.verdict === "whole collection")!.detail).toMatch(/vanished while both clients wrote/);
    await jest.advanceTimersByTimeAsync(5_000);
    // Each deleted its own key at the end.
    expect([...session.document.settings.keys()].filter((k) => k.startsWith("ppm.selftest.probe."))).toEqual([]);
  });
});
