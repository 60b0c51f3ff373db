/**
 * Transcripts: the emulated host's own (test/transcripts/, recorded in the preview by
 * `npm run test:excel -- --host emulated`) replay with 0 differences, so a change to the host that
 * alters an answer is seen; a deliberately altered transcript shows exactly its alterations; a
 * scrubbed transcript holds none of the original values or sheet names and still replays.
 */
import * as fs from "fs";
import * as path from "path";
import { mulberry32 } from "../../bench/random";
import { readTranscriptFile } from "../../src/selftest/cli/hostReplay";
import { replayOnEmulatedHost } from "../../src/selftest/cli/replayHost";
import { formatReplay } from "../../src/selftest/core/replay";
import { scrubTranscript } from "../../src/selftest/core/scrub";
import { parseTranscript, serializeTranscript, type RecordedExchange, type Transcript } from "../../src/selftest/core/transcript";

const DIR = path.join(__dirname, "..", "transcripts");
const FILES = fs.readdirSync(DIR).filter((f) => /\.json(\.gz)?$/.test(f));
const EMULATED = path.join(DIR, "emulated-web.json.gz");

type Body = { Results?: Array<{ ActionId: number; Value: unknown }>; Error?: { Code: string } };
type Request = { Actions: Array<{ Id: number; ActionType: number; Name: string; ArgumentInfo?: { Arguments?: unknown[] } }> };

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const exchanges = (t: Transcript): Array<{ scenario: string; index: number; x: RecordedExchange }> =>
  t.scenarios.flatMap((s) => s.exchanges.map((x, i) => ({ scenario: s.name, index: i + 1, x })));

it("test/transcripts holds the emulated host's own transcript, recorded in the preview", () => {
  expect(FILES).toContain("emulated-web.json.gz");
  const t = readTranscriptFile(EMULATED);
  expect(t.host).toMatchObject({ emulated: true, profile: "web", platform: "OfficeOnline" });
  expect(t.scrubbed).toBe(false);
  expect(t.scenarios.map((s) => s.name)).toEqual(expect.arrayContaining(["import: financials (JSON)", "write-back: an edited custom field is saved"]));
});

describe.each(FILES)("%s", (file) => {
  it("replays on the emulated host with 0 differences", async () => {
    const t = readTranscriptFile(path.join(DIR, file));
    const report = await replayOnEmulatedHost(t);
    expect(formatReplay(report)).toMatch(/, 0 differences \(/);
    expect(report.differences).toEqual([]);
    expect(report.exchanges).toBeGreaterThan(100);
  }, 60_000);
});

describe("a deliberately altered transcript", () => {
  it("shows both alterations, one value and one error code, and nothing else", async () => {
    const t = clone(readTranscriptFile(EMULATED));
    const all = exchanges(t);
    // One value: the first cell of a Values result.
    const withValues = all.find(({ x }) => x.answer.kind === "response" && (x.answer.body as Body).Results?.some((r) => JSON.stringify(r.Value).includes('"Values":[[')));
    expect(withValues).toBeDefined();
    const result = (withValues!.x.answer as { body: Body }).body.Results!.find((r) => JSON.stringify(r.Value).includes('"Values":[['))!;
    const values = (result.Value as { Values: unknown[][] }).Values;
    const original = values[0][0];
    values[0][0] = "altered by the test";
    // One error code: ItemNotFound recorded as InvalidArgument.
    const withError = all.find(({ x }) => x.answer.kind === "response" && (x.answer.body as Body).Error?.Code === "ItemNotFound");
    expect(withError).toBeDefined();
    (withError!.x.answer as { body: Body }).body.Error!.Code = "InvalidArgument";

    const report = await replayOnEmulatedHost(t);
    expect(report.differences).toEqual([
      expect.objectContaining({ scenario: withValues!.scenario, exchange: withValues!.index, kind: "value", where: `Results[ActionId ${result.ActionId}].Value.Values[0][0]`, recorded: "altered by the test", replayed: original }),
      expect.objectContaining({ scenario: withError!.scenario, exchange: withError!.index, kind: "error", where: "Error.Code", recorded: "InvalidArgument", replayed: "ItemNotFound" }),
    ]);
    expect(formatReplay(report)).toMatch(/2 differences \(0 refusal, 1 error, 0 result, 1 value\)/);
  }, 60_000);

  it("shows a refusal that did not happen (a recorded 5103 the emulated host does not give)", async () => {
    const t = clone(readTranscriptFile(EMULATED));
    const x = t.scenarios[1].exchanges[0];
    (x as { answer: unknown }).answer = { kind: "refused", code: 5103, message: "RequestPayloadSizeLimitExceeded" };
    const report = await replayOnEmulatedHost(t);
    expect(report.differences).toEqual([expect.objectContaining({ kind: "refusal", recorded: 5103, replayed: "response", exchange: 1, scenario: t.scenarios[1].name })]);
  }, 60_000);
});

describe("scrubbing", () => {
  const original = readTranscriptFile(EMULATED);
  const scrubbed = scrubTranscript(original, () => 0.5);
  const text = serializeTranscript(scrubbed);

  /** Every text and number the workbook held or was sent as a cell value or a sheet name. */
  function originalValues(t: Transcript): { texts: Set<string>; numbers: Set<number>; sheets: Set<string> } {
    const texts = new Set<string>();
    const numbers = new Set<number>();
    const sheets = new Set<string>(t.workbook.sheets);
    const cells = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(cells);
      else if (typeof v === "string") texts.add(v);
      else if (typeof v === "number") numbers.add(v);
    };
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          if (k === "Values" || k === "Text") cells(x);
          else if (k === "Address" && typeof x === "string" && x.includes("!")) sheets.add(x.slice(0, x.lastIndexOf("!")).replace(/^'|'$/g, "").replace(/''/g, "'"));
          else walk(x);
        }
    };
    for (const { x } of exchanges(t)) {
      // Sheet names the add-in sent: worksheets.add(name), worksheets.getItem(name).
      const paths = (x.request.body as { ObjectPaths?: Record<string, { Name: string; ParentObjectPathId?: number; ArgumentInfo?: { Arguments?: unknown[] } }> }).ObjectPaths ?? {};
      for (const p of Object.values(paths)) {
        const parent = p.ParentObjectPathId === undefined ? undefined : paths[String(p.ParentObjectPathId)];
        const name = p.ArgumentInfo?.Arguments?.[0];
        if (parent?.Name === "Worksheets" && /^(Add|GetItem|GetItemOrNullObject)$/.test(p.Name) && typeof name === "string" && !/^\{/.test(name)) sheets.add(name);
      }
      for (const a of (x.request.body as Request).Actions) if (a.ActionType === 4 && (a.Name === "Values" || a.Name === "Text")) cells(a.ArgumentInfo?.Arguments?.[0]);
      if (x.answer.kind === "response") walk(x.answer.body);
    }
    return { texts, numbers, sheets };
  }

  it("leaves none of the original cell values or sheet names in the transcript", () => {
    const { texts, numbers, sheets } = originalValues(original);
    // The demo data's telling values are there to be hidden.
    expect([...texts]).toEqual(expect.arrayContaining(["=SUM(A1:A9)", "00123"]));
    expect([...sheets]).toEqual(expect.arrayContaining(["financials (json)", "Sheet1"]));
    // Texts of 3+ characters: not anywhere in the file as a text (a value, a name, an argument, a key),
    // nor inside another text. Shorter ones and TRUE/FALSE are kept or may occur by chance in
    // placeholders (`x1`); numbers are checked as values (a number's digits may occur inside another).
    const strings = new Set<string>();
    for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"/g)) strings.add(JSON.parse(`"${m[1]}"`) as string);
    // Not data: the kit's own scenario names and the ids Excel chose (`{00000007-0001-…}`).
    for (const sc of scrubbed.scenarios) strings.delete(sc.name);
    for (const x of strings) if (/^\{[0-9a-f-]+\}$/i.test(x)) strings.delete(x);
    const leakedTexts = [...texts].filter((s) => s.length >= 3 && !/^(true|false)$/i.test(s) && !/^[xX1\W_]+$/.test(s) && [...strings].some((x) => x.includes(s)));
    expect(leakedTexts).toEqual([]);
    const leakedSheets = [...sheets].filter((s) => [...strings].some((x) => x.includes(s)));
    expect(leakedSheets).toEqual([]);
    const after = originalValues(scrubbed);
    const leakedNumbers = [...numbers].filter((n) => after.numbers.has(n));
    expect(leakedNumbers).toEqual([]);
    expect(texts.size).toBeGreaterThan(200);
    expect(numbers.size).toBeGreaterThan(500);
  });

  /**
   * Every number of a `Values` block, with its scrubbed counterpart, per column position: the two
   * transcripts have the same shape, so they are walked side by side.
   */
  function numberPairs(a: unknown, b: unknown, out = new Map<number, Array<[number, number]>>()): Map<number, Array<[number, number]>> {
    if (Array.isArray(a) && Array.isArray(b)) a.forEach((x, i) => numberPairs(x, b[i], out));
    else if (a && typeof a === "object" && b && typeof b === "object") {
      for (const [k, x] of Object.entries(a)) {
        const y = (b as Record<string, unknown>)[k];
        if (k === "Values" && Array.isArray(x) && Array.isArray(y)) {
          x.forEach((row: unknown, i) => {
            if (!Array.isArray(row)) return;
            row.forEach((c: unknown, j) => {
              const d = ((y[i] as unknown[]) ?? [])[j];
              if (typeof c === "number" && typeof d === "number") (out.get(j) ?? out.set(j, []).get(j)!).push([c, d]);
            });
          });
        } else numberPairs(x, y, out);
      }
    }
    return out;
  }

  /** The least-squares line x ≈ a·y + b through `pairs` ([x, y]). */
  function fit(pairs: Array<[number, number]>): (y: number) => number {
    const n = pairs.length;
    const my = pairs.reduce((s, [, y]) => s + y, 0) / n;
    const mx = pairs.reduce((s, [x]) => s + x, 0) / n;
    const syy = pairs.reduce((s, [, y]) => s + (y - my) ** 2, 0);
    const sxy = pairs.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
    const a = syy === 0 ? 0 : sxy / syy;
    return (y) => a * (y - my) + mx;
  }

  /**
   * How many of a column's distinct numbers `line` gives back: nearer to the number than to any
   * other number of the column (so rounding to the column's own numbers would name it).
   */
  function recovered(pairs: Array<[number, number]>, line: (y: number) => number): number {
    const byX = new Map(pairs);
    const xs = [...byX.keys()].sort((a, b) => a - b);
    return xs.filter((x, i) => Math.abs(line(byX.get(x)!) - x) < Math.min(i > 0 ? x - xs[i - 1] : Infinity, i < xs.length - 1 ? xs[i + 1] - x : Infinity) / 2).length;
  }

  it("finding 7: no linear fit gives the numbers back, not even the best one per column, nor one learnt from a known column", () => {
    for (const seed of [1, 2, 3]) {
      const s = scrubTranscript(original, mulberry32(seed)); // seeded: the same scrub every run
      const columns = [...numberPairs(original.scenarios, s.scenarios)].map(([j, pairs]) => ({ j, pairs, distinct: new Set(pairs.map(([x]) => x)).size }));
      const rich = columns.filter((c) => c.distinct >= 20);
      expect(rich.length).toBeGreaterThanOrEqual(5); // budgets, costs, ids, variances, serial dates…
      // No more than chance names (a line through a column's numbers is nearest to one or two of
      // them whatever the map); before #36 a line gave back every one.
      const chance = (c: { distinct: number }) => Math.max(3, c.distinct * 0.02);
      // The attack of the finding: a column whose values are known (the fiscal years, few and
      // guessable) gives the map, and the map gives every other number.
      const known = columns.filter((c) => c.distinct >= 2).sort((a, b) => a.distinct - b.distinct)[0];
      const learnt = fit(known.pairs);
      for (const c of rich.filter((r) => r.j !== known.j)) expect([seed, c.j, recovered(c.pairs, learnt) <= chance(c)]).toEqual([seed, c.j, true]);
      // Nor the best line for a column, fitted on all its true pairs.
      for (const c of rich) expect([seed, c.j, recovered(c.pairs, fit(c.pairs)) <= chance(c)]).toEqual([seed, c.j, true]);
      // What survives: equality within a column (the same number, the same placeholder).
      for (const c of columns) {
        const seen = new Map<number, number>();
        for (const [x, y] of c.pairs) expect(seen.get(x) ?? seen.set(x, y).get(x)).toBe(y);
      }
    }
  });

  it("a scrubbed transcript with one cell's type altered shows that column's difference", async () => {
    const t = clone(scrubbed);
    const hit = exchanges(t).find(({ x }) => x.answer.kind === "response" && JSON.stringify(x.answer.body).includes('"Values":[[') && (x.answer.body as Body).Results?.some((r) => typeof (r.Value as { Values?: unknown[][] })?.Values?.[1]?.[3] === "number"));
    expect(hit).toBeDefined();
    const r = (hit!.x.answer as { body: Body }).body.Results!.find((v) => typeof (v.Value as { Values?: unknown[][] })?.Values?.[1]?.[3] === "number")!;
    (r.Value as { Values: unknown[][] }).Values[1][3] = "text now";
    const report = await replayOnEmulatedHost(t);
    expect(report.differences).toEqual([expect.objectContaining({ kind: "value", where: expect.stringMatching(/\.Values\[\*\]\[3\]$/) as unknown })]);
  }, 60_000);

  it("keeps the shape: same-shaped placeholders, the same number of requests, formats and error codes", () => {
    expect(scrubbed.scrubbed).toBe(true);
    expect(scrubbed.workbook.sheets).toEqual(["Xxxxx1"]);
    expect(text).toContain("xxxxxxxxxx (xxxx)"); // "financials (json)"
    expect(text).toContain("=XXX(X1:X1)"); // the formula-looking text "=SUM(A1:A9)", a value
    expect(text).toContain("yyyy-mm-dd"); // number formats stay
    expect(text).toMatch(/"Code":"ItemNotFound"/);
    expect(scrubbed.scenarios.map((s) => s.exchanges.length)).toEqual(original.scenarios.map((s) => s.exchanges.length));
    // It reads back as a transcript.
    expect(parseTranscript(text).scrubbed).toBe(true);
  });

  it("still replays on the emulated host with 0 differences (values compared by type)", async () => {
    const report = await replayOnEmulatedHost(parseTranscript(text));
    expect(report.differences).toEqual([]);
    expect(report.exchanges).toBe(original.scenarios.reduce((n, s) => n + s.exchanges.length, 0));
  }, 60_000);

  it("a scrubbed, altered transcript still shows the altered error code", async () => {
    const t = clone(scrubbed);
    const hit = exchanges(t).find(({ x }) => x.answer.kind === "response" && (x.answer.body as Body).Error?.Code === "InvalidArgument");
    expect(hit).toBeDefined();
    (hit!.x.answer as { body: Body }).body.Error!.Code = "GeneralException";
    const report = await replayOnEmulatedHost(t);
    expect(report.differences).toEqual([expect.objectContaining({ kind: "error", recorded: "GeneralException", replayed: "InvalidArgument" })]);
  }, 60_000);
});
