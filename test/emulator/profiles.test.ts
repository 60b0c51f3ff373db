/**
 * Platform profiles: the requirement sets Microsoft's support tables list for each platform, answered
 * by `Office.context.requirements.isSetSupported`; a call outside the profile fails as in Excel (the
 * library's own ApiNotFound, before anything is sent); the 5 MB limits only on the web.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { PROFILE_IDS, Workbook, createRequestContext, currentProfile, inspect, officeJs, profile, profileSupports, seed, setCurrentProfile } from "../../src/emulator";

type Requirements = { isSetSupported(name: string, version?: string): boolean };
const requirements = (): Requirements => (officeJs().Office as { context: { requirements: Requirements } }).context.requirements;

/** Runs `f` with this realm playing another profile (the library asks at each call). */
function asProfile<T>(id: (typeof PROFILE_IDS)[number], f: () => T): T {
  const saved = currentProfile();
  setCurrentProfile(id);
  try {
    return f();
  } finally {
    setCurrentProfile(saved);
  }
}

describe("requirement sets per profile (learn.microsoft.com requirement-set tables)", () => {
  it.each([
    ["web", "ExcelApi", "1.20", true],
    ["web", "ExcelApiOnline", "1.1", true],
    ["web", "ExcelApiDesktop", "1.1", false],
    ["windows", "ExcelApi", "1.20", true],
    ["windows", "ExcelApiOnline", "1.1", false],
    ["mac", "SharedRuntime", "1.2", true],
    ["windows-2021", "ExcelApi", "1.14", true],
    ["windows-2021", "ExcelApi", "1.15", false],
    ["windows-2021", "SharedRuntime", "1.1", true],
    ["windows-2021", "SharedRuntime", "1.2", false],
    ["windows-2021", "CustomFunctionsRuntime", "1.4", false],
    ["windows-2021", "RibbonApi", "1.2", true],
    ["windows-2021", "DialogApi", "1.2", true],
  ] as const)("%s: %s %s → %s", (id, set, version, expected) => {
    expect(profileSupports(profile(id), set, version)).toBe(expected);
    expect(asProfile(id, () => requirements().isSetSupported(set, version))).toBe(expected);
  });

  it("compares versions as numbers and names without case (1.10 is above 1.9)", () => {
    const p = profile("windows-2021");
    expect(profileSupports(p, "excelapi", "1.9")).toBe(true);
    expect(profileSupports(p, "ExcelApi", "1.10")).toBe(true);
    expect(profileSupports(p, "ExcelApi")).toBe(true);
    expect(profileSupports(p, "NoSuchSet")).toBe(false);
  });

  it("each profile names the client file Office loads there; the 5 MB limit only on the web", () => {
    expect(PROFILE_IDS.map((id) => [id, profile(id).clientFile, profile(id).payloadLimitBytes])).toEqual([
      ["web", "excel-web-16.00.js", 5 * 1024 * 1024],
      ["windows", "excel-win32-16.01.js", null],
      ["mac", "excel-mac-16.00.js", null],
      ["windows-2021", "excel-win32-16.01.js", null],
    ]);
    expect(new Workbook({ platform: "web" }).payloadLimitBytes).toBe(5 * 1024 * 1024);
    expect(new Workbook({ platform: "mac" }).payloadLimitBytes).toBe(Number.POSITIVE_INFINITY);
    expect(() => profile("ipad")).toThrow(/Unknown platform profile 'ipad'/);
  });
});

describe("a call outside the profile fails as Excel does", () => {
  // The library's own ApiNotFound check is never switched on in this version (it reads a flag it
  // never sets), so, as in Excel, the host refuses the member: ApiNotFound at that action.
  it.each(["web", "windows"] as const)("deleteRowsAt (ExcelApiOnline in this library) works on the web; on Windows the host refuses it (%s)", async (platform) => {
    {
      const wb = new Workbook({ platform });
      seed(wb, "A1:A3", [["k"], [1], [2]]);
      const context = createRequestContext(wb);
      const t = context.workbook.worksheets.getItem("Sheet1").tables.add("A1:A3", true);
      await context.sync();
      t.rows.deleteRowsAt(0, 1);
      if (platform === "web") {
        await context.sync();
        expect(inspect(wb, "A2").values).toEqual([[2]]);
      } else {
        const err = (await context.sync().catch((e: unknown) => e)) as OfficeExtension.Error;
        expect(err).toBeInstanceOf(officeJs().OfficeExtension.Error);
        expect(err.code).toBe("ApiNotFound");
        expect(err.message).toMatch(/could not be found.*TableRowCollection\.deleteRowsAt is ExcelApiOnline 1\.1; Excel on Windows \(Microsoft 365\) has no ExcelApiOnline/);
        expect(err.debugInfo.errorLocation).toBe("TableRowCollection.deleteRowsAt");
        expect(inspect(wb, "A2").values).toEqual([[1]]);
      }
    }
  });

  it("an ExcelApi 1.15 member is refused on Excel 2021 (1.14) before anything else is looked at", async () => {
    const call = async (platform: "windows" | "windows-2021") => {
      const context = createRequestContext(new Workbook({ platform }));
      (context.workbook.worksheets.getItem("Sheet1").getRange("A1") as unknown as { getSurroundingDataRegion(): { load(p: string): void } }).getSurroundingDataRegion().load("address");
      return ((await context.sync().catch((e: unknown) => e)) as OfficeExtension.Error).code;
    };
    expect(await call("windows-2021")).toBe("ApiNotFound");
    // On Microsoft 365 the member exists; the emulated host just does not model it.
    expect(await call("windows")).toBe("GeneralException");
  });

  it("api-sets.ts is the pinned library's own table (scripts/api-sets.js --check)", () => {
    const out = spawnSync(process.execPath, [path.join(__dirname, "../../scripts/api-sets.js"), "--check"], { encoding: "utf8" });
    expect(out.stderr).toBe("");
    expect(out.status).toBe(0);
  });
});
