/**
 * What the pane says is missing on a platform: nothing on the four platform profiles (each has every
 * set the add-in uses); the feature and its set where one is missing.
 */
import { CAPABILITIES, describeMissing, missingCapabilities } from "../../src/addin/platform";
import { PROFILE_IDS, profile, profileSupports, type PlatformProfile } from "../../src/emulator";

const requirementsOf = (p: PlatformProfile) => ({ isSetSupported: (name: string, v?: string) => profileSupports(p, name, v) });

describe("platform capabilities", () => {
  it.each(PROFILE_IDS)("%s has everything the add-in uses", (id) => {
    expect(missingCapabilities(requirementsOf(profile(id)))).toEqual([]);
  });

  it("names the feature and the set where one is missing (Excel without the shared runtime and the ribbon API)", () => {
    const ipadLike: PlatformProfile = { ...profile("web"), requirementSets: { ExcelApi: "1.20", DialogApi: "1.2" } };
    const missing = missingCapabilities(requirementsOf(ipadLike));
    expect(missing.map((c) => `${c.set} ${c.version}`)).toEqual(["RibbonApi 1.1", "SharedRuntime 1.1"]);
    expect(describeMissing(missing)).toBe(
      "This Excel lacks what some features need: the ribbon following refreshes (buttons greyed while one runs) (needs RibbonApi 1.1); refreshing tables when the workbook opens (needs SharedRuntime 1.1). Those features are off here; the rest works.",
    );
  });

  it("below the manifest's floor it says so too; a host that cannot be asked is assumed to have the documented APIs", () => {
    const old: PlatformProfile = { ...profile("windows-2021"), requirementSets: { ExcelApi: "1.12", DialogApi: "1.1", RibbonApi: "1.2", SharedRuntime: "1.1" } };
    expect(describeMissing(missingCapabilities(requirementsOf(old)))).toMatch(/importing and refreshing tables \(needs ExcelApi 1\.13\)/);
    expect(missingCapabilities(undefined)).toEqual([]);
    expect(missingCapabilities({ isSetSupported: () => { throw new Error("no host"); } })).toEqual(CAPABILITIES);
    expect(describeMissing([])).toBeNull();
  });
});
