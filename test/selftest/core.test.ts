/**
 * The kit's pure logic: placeholders, transcript validation, the replay's id mapping, the scenario
 * table, the self-test manifest, and the command's own decisions (which host, exit status 2 without
 * Excel).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { spawnSync } from "child_process";
import { RankMaps, Scrubber, shapeOf } from "../../src/selftest/core/scrub";
import { parseTranscript, TRANSCRIPT_FORMAT, type Transcript } from "../../src/selftest/core/transcript";
import { mapIds, mapRequestIds, replayTranscript, type HostReply } from "../../src/selftest/core/replay";
import { formatTable, parseReport, reportPassed, type SelfTestReport } from "../../src/selftest/core/report";
import { selfTestManifest, SELFTEST_ADDIN_ID, SELFTEST_NAME } from "../../src/selftest/core/manifest";
import { findDesktopExcel, parseArgs } from "../../src/selftest/cli/testExcel";

const root = path.resolve(__dirname, "..", "..");

describe("placeholders", () => {
  it("keep the shape: letters x/X by case, digits 1, the rest as it is", () => {
    expect(shapeOf("Acme Corp, 00420")).toBe("Xxxx Xxxx, 11111");
    expect(shapeOf("Zürich – Œuvre 1,234.5")).toBe("Xxxxxx – Xxxxx 1,111.1");
  });

  it("are consistent and never shared by two texts (ignoring case, as Excel names are)", () => {
    const s = new Scrubber();
    const a = s.text("Budget");
    expect(s.text("Budget")).toBe(a);
    const b = s.text("Actual");
    const c = s.text("budget");
    expect(new Set([a.toLowerCase(), b.toLowerCase(), c.toLowerCase()]).size).toBe(3);
    expect([a, b, c].every((p) => p.length === 6)).toBe(true);
    expect(s.text("")).toBe("");
    expect(s.text("TRUE")).toBe("TRUE");
    expect(s.text("#N/A")).toBe("#N/A");
  });

  it("map numbers per column by a random rank order: equal stays equal within a column, nothing else (#36)", () => {
    const ranks = new RankMaps();
    const xs = [-3, 0, 1, 2.5, 45000.25, 1, -0];
    for (const x of xs) ranks.collect(x, 0);
    for (const x of [2026, 2027, 1]) ranks.collect(x, 1);
    const distinct = [-3, 0, 1, 2.5, 45000.25];
    const mapped = distinct.map((x) => ranks.map(x, 0));
    // Distinct whole numbers from 1 on, one per distinct number; equal where the original is equal (-0 is 0).
    expect(new Set(mapped).size).toBe(distinct.length);
    expect(mapped.every((y) => Number.isInteger(y) && y >= 1)).toBe(true);
    expect(ranks.map(1, 0)).toBe(mapped[2]);
    expect(ranks.map(-0, 0)).toBe(ranks.map(0, 0));
    // Another column has a map of its own.
    expect(new Set([2026, 2027, 1].map((x) => ranks.map(x, 1))).size).toBe(3);
    expect(() => ranks.map(42, 0)).toThrow(/did not see/);
    // The values are random gaps added up, dealt out in a random order: with draws that keep the
    // order the values are the gaps alone; with draws that reverse it, so is the order.
    const keep = new RankMaps(() => 0.999);
    for (const x of [1, 2, 1000, 1e9]) keep.collect(x, 0);
    expect([1, 2, 1000, 1e9].map((x) => keep.map(x, 0))).toEqual([1000, 2000, 3000, 4000]);
    const flip = new RankMaps(() => 0);
    for (const x of [1, 2, 1000, 1e9]) flip.collect(x, 0);
    expect([1, 2, 1000, 1e9].map((x) => flip.map(x, 0))).toEqual([2, 3, 4, 1]);
  });

  it("map formulas' text literals, sheet names and structured references, keeping functions and references", () => {
    const s = new Scrubber();
    const budget = s.text("budget");
    const sheet = s.text("My data");
    expect(s.formula("=[@budget]*2")).toBe(`=[@${budget}]*2`);
    expect(s.formula("=SUM('My data'!A1:A9)&\"secret\"")).toBe(`=SUM('${sheet}'!A1:A9)&"${s.text("secret")}"`);
    expect(s.formula("=fin_json[[#This Row],[budget]]")).toBe(`=${s.text("fin_json")}[[#This Row],[${budget}]]`);
    expect(s.address("'My data'!A1:B2")).toBe(`'${sheet}'!A1:B2`);
    expect(s.address("Sheet1!A1, Sheet1!C3")).toBe(`${s.text("Sheet1")}!A1, ${s.text("Sheet1")}!C3`);
    expect(s.address("A1:B2")).toBe("A1:B2");
  });
});

const minimal = (over: Partial<Transcript> = {}): Transcript => ({
  format: TRANSCRIPT_FORMAT,
  version: 1,
  recordedAt: "2026-01-01T00:00:00Z",
  host: { platform: "PC", version: "16.0.1", emulated: false },
  workbook: { sheets: ["Sheet1"] },
  scrubbed: false,
  scenarios: [],
  ...over,
});

describe("transcripts", () => {
  it("refuses what is not one, saying what is wrong", () => {
    expect(() => parseTranscript("not json")).toThrow(/not JSON/);
    expect(() => parseTranscript("{}")).toThrow(/"format"/);
    expect(() => parseTranscript(JSON.stringify({ ...minimal(), version: 9 }))).toThrow(/version 9/);
    expect(() => parseTranscript(JSON.stringify(minimal({ scenarios: [{ name: "a", exchanges: [{ request: { body: {}, flags: 0 }, answer: { kind: "maybe" } }] }] as never })))).toThrow(/exchange 1: the answer/);
    expect(parseTranscript(JSON.stringify(minimal())).host.platform).toBe("PC");
  });

  it("replay maps the ids the host chose (Excel's {…} ids) instead of reporting them, and sends later requests with the host's own", async () => {
    const t = minimal({
      scenarios: [
        {
          name: "ids",
          exchanges: [
            { request: { body: { Actions: [] }, flags: 0 }, answer: { kind: "response", body: { Results: [{ ActionId: 1, Value: { _Id: "{00000000-0001-0000-0000-000000000000}", Name: "Sheet1" } }] } } },
            { request: { body: { Actions: [], ObjectPaths: { 1: { ArgumentInfo: { Arguments: ["{00000000-0001-0000-0000-000000000000}"] } } } }, flags: 0 }, answer: { kind: "response", body: { Results: [{ ActionId: 2, Value: 1 }] } } },
          ],
        },
      ],
    });
    const sent: string[] = [];
    const host = (r: { body: string }): HostReply => {
      sent.push(r.body);
      return sent.length === 1 ? { kind: "response", body: JSON.stringify({ Results: [{ ActionId: 1, Value: { _Id: "sheet-7", Name: "Sheet1" } }] }) } : { kind: "response", body: JSON.stringify({ Results: [{ ActionId: 2, Value: 1 }] }) };
    };
    const report = await replayTranscript(t, host);
    expect(report.differences).toEqual([]);
    expect(report.mappedIds).toBe(1);
    expect(sent[1]).toContain('"sheet-7"');
    expect(mapIds({ a: ["x", { b: "x" }] }, new Map([["x", "y"]]))).toEqual({ a: ["y", { b: "y" }] });
    // Never in values written to cells: "1" is a table id in Excel and a value too.
    const write = { Actions: [{ ActionType: 4, Name: "Values", ArgumentInfo: { Arguments: [[["1"]]] } }], ObjectPaths: { 5: { ObjectPathType: 5, ArgumentInfo: { Arguments: ["1"] } }, 6: { ObjectPathType: 6, Name: "1" } } };
    expect(mapRequestIds(write, new Map([["1", "{t-1}"]]))).toEqual({ ...write, ObjectPaths: { 5: { ObjectPathType: 5, ArgumentInfo: { Arguments: ["{t-1}"] } }, 6: { ObjectPathType: 6, Name: "{t-1}" } } });
  });
});

describe("the scenario table", () => {
  const real: SelfTestReport = {
    kit: "ppm-selftest",
    host: { platform: "PC", version: "16.0.18000", emulated: false },
    scenarios: [
      { name: "import", status: "passed", ms: 1500, syncs: 10, detail: "120 rows" },
      { name: "functions", status: "skipped", ms: 0, syncs: 0, detail: "not built yet" },
    ],
  };
  const emulated: SelfTestReport = { ...real, host: { platform: "OfficeOnline", version: "x", emulated: true, profile: "web" }, scenarios: [{ ...real.scenarios[0], status: "failed", detail: "cells differ" }, real.scenarios[1]] };

  it("puts a real-Excel run and an emulated one side by side", () => {
    const text = formatTable(real, emulated);
    expect(text).toMatch(/scenario\s+\| Excel PC 16\.0\.18000\s+\| emulated \(web\)\s+\| detail/);
    expect(text).toMatch(/import\s+\| ok 1\.5 s, 10 syncs\s+\| FAILED/);
    expect(text).toMatch(/functions\s+\| SKIPPED\s+\| SKIPPED/);
    expect(text).toContain("emulated (web): 0 passed, 1 failed, 1 skipped, 0 not run");
  });

  it("prints a long detail whole: its end is often what says why (issue #37)", () => {
    const detail = `${"the table after the refresh differs from a full rewrite in ".repeat(3)}cell C12: 1,234.50 instead of 1234.5`;
    const text = formatTable({ ...real, scenarios: [{ ...real.scenarios[0], status: "failed", detail }] });
    expect(text).toContain(detail);
    expect(Math.max(...text.split("\n").slice(1, 2).map((l) => l.length))).toBeLessThan(200); // the rule under the header stays short
  });

  it("passes only when nothing failed and the kit ran", () => {
    expect(reportPassed(real)).toBe(true);
    expect(reportPassed(emulated)).toBe(false);
    expect(reportPassed({ ...real, refused: "not a new workbook" })).toBe(false);
    expect(reportPassed({ ...real, scenarios: [] })).toBe(false);
    expect(() => parseReport({ kit: "other" })).toThrow(/not a self-test report/);
    expect(parseReport(JSON.parse(JSON.stringify(real)))).toEqual(real);
  });
});

describe("the self-test variant's manifest", () => {
  const source = fs.readFileSync(path.join(root, "manifest.xml"), "utf8");
  const variant = selfTestManifest(source, "https://localhost:3001");

  it("has its own id and name, a plain task pane on selftest.html, and no ribbon", () => {
    expect(variant).toContain(`<Id>${SELFTEST_ADDIN_ID}</Id>`);
    expect(variant).not.toContain(/<Id>([^<]*)<\/Id>/.exec(source)![1]);
    expect(variant).toContain(`<DisplayName DefaultValue="${SELFTEST_NAME}"/>`);
    expect(variant).toContain('<SourceLocation DefaultValue="https://localhost:3001/selftest.html"/>');
    expect(variant).not.toContain("VersionOverrides");
    expect(variant).not.toContain("localhost:3000");
  });

  const xmllint = spawnSync("xmllint", ["--version"]).status === 0;
  const schema = path.join(root, "..", "shared", "schemas", "office-addin-manifest", "OfficeAppManifestV1_1.xsd");
  (xmllint && fs.existsSync(schema) ? it : it.skip)("validates against the manifest schema (xmllint, offline)", () => {
    // Also with this run's nonce and ports in the page's address (issue #36), its & escaped.
    for (const text of [variant, selfTestManifest(source, "https://localhost:3000", { testServerPort: "4201", nonce: "ab".repeat(16), service: "http://localhost:4100" })]) {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ppm-manifest-")), "manifest-selftest.xml");
      fs.writeFileSync(file, text);
      const r = spawnSync("xmllint", ["--noout", "--nonet", "--schema", schema, file], { encoding: "utf8" });
      expect(r.stderr).toContain("validates");
      expect(r.status).toBe(0);
    }
  });
});

describe("npm run test:excel", () => {
  it("finds desktop Excel only where it is", () => {
    expect(findDesktopExcel("linux", () => true).path).toBeNull();
    expect(findDesktopExcel("darwin", (p) => p === "/Applications/Microsoft Excel.app").path).toBe("/Applications/Microsoft Excel.app");
    expect(findDesktopExcel("darwin", () => false).path).toBeNull();
    const env = { ProgramFiles: "C:\\Program Files" };
    expect(findDesktopExcel("win32", (p) => p === "C:\\Program Files\\Microsoft Office\\root\\Office16\\EXCEL.EXE", env).path).toBe("C:\\Program Files\\Microsoft Office\\root\\Office16\\EXCEL.EXE");
    expect(findDesktopExcel("win32", () => false, env).path).toBeNull();
  });

  it("reads its options and refuses unknown ones", () => {
    expect(parseArgs([])).toMatchObject({ host: "excel", profile: "web", scrub: false, testServerPort: null });
    expect(parseArgs(["--host", "emulated", "--profile=mac", "--scrub", "--save-transcript", "t.json"])).toMatchObject({ host: "emulated", profile: "mac", scrub: true, saveTranscript: "t.json" });
    expect(() => parseArgs(["--host", "excell"])).toThrow(/excel, web or emulated/);
    expect(() => parseArgs(["--timeout", "soon"])).toThrow(/whole number/);
    expect(() => parseArgs(["--frobnicate"])).toThrow(/unknown option/);
    expect(parseArgs(["--help"])).toBe("help");
  });

  (process.platform === "linux" ? it : it.skip)("without Excel, ends with a clear message and exit status 2, naming the web route", () => {
    const tsx = require.resolve("tsx/cli", { paths: [root] });
    const r = spawnSync(process.execPath, [tsx, path.join(root, "src", "selftest", "cli", "testExcel.ts")], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/no desktop Excel on this computer/);
    expect(r.stdout).toMatch(/Nothing was started and no workbook was opened/);
    expect(r.stdout).toMatch(/Excel on the web:[\s\S]*--host web[\s\S]*Upload My Add-in[\s\S]*manifest-selftest\.xml/);
    expect(r.stdout).toMatch(/--host emulated/);
  }, 60_000);
});
