/**
 * Platform profiles: which Excel the emulated host plays. Each profile names the client file Office
 * loads on that platform (from `@microsoft/office-js/dist`), the requirement sets Microsoft's support
 * tables list for it, its payload limits and whether it has a shared runtime.
 *
 * Sources (learn.microsoft.com/javascript/api/requirement-sets, the tables of minimum builds):
 * - ExcelApi: "Excel JavaScript API requirement sets" — 1.20 on the web, Windows (Microsoft 365,
 *   Version 2509) and Mac (16.100); Office 2021 (volume-licensed perpetual, LTSC) stops at 1.14
 *   (Version 2108). ExcelApiOnline: Excel on the web only. ExcelApiDesktop 1.1: Windows Version 2509,
 *   Mac 16.102, not on the web.
 * - SharedRuntime: "Shared runtime requirement sets" — 1.2 on the web, Windows (2108) and Mac (16.52);
 *   1.1 only in Excel 2021 volume-licensed (Version 2108).
 * - RibbonApi: "Ribbon API requirement sets" — 1.2 on the web, Windows (2102), Mac (16.53) and
 *   Office 2021 volume-licensed (2108).
 * - DialogApi: "Dialog API requirement sets" — 1.2 everywhere here (Office 2021: Version 2005).
 * - CustomFunctionsRuntime: "Custom Functions requirement sets" — 1.5 on the web, Windows (2504), Mac
 *   (16.96); 1.3 in Office 2021 volume-licensed.
 * - AddinCommands: "Add-in commands requirement sets" — 1.1 on all four (1.3 is PowerPoint only).
 * - The 5 MB request and response limits are Excel on the web's ("Resource limits and performance
 *   optimization for Office Add-ins": "Excel on the web has a payload size limit for requests and
 *   responses of 5MB"); the desktop hosts have none documented.
 *
 * Sets the library asks about that have no public table: `DelayForCellEdit` (the library's gate for
 * `Excel.RunOptions.delayForCellEdit`, documented with ExcelApi 1.11, so present on all four);
 * `RichApiRuntime`, `RichApiRuntimeFlag`, `ExcelApiUndo` and the like are answered "no", so the
 * library takes its documented fallbacks (`retrieve()` as a Query, `set()` as property writes).
 */

/** Profile ids. `web` is the default: its limits are the strictest. */
export type ProfileId = "web" | "windows" | "mac" | "windows-2021";

export const PROFILE_IDS: readonly ProfileId[] = ["web", "windows", "mac", "windows-2021"];

export interface PlatformProfile {
  readonly id: ProfileId;
  /** How the pane and the test table name it. */
  readonly name: string;
  /** The Excel client file Office loads on this platform (`@microsoft/office-js/dist/<file>`). */
  readonly clientFile: string;
  /** `Office.context.platform` / `diagnostics.platform` (`Office.PlatformType`). */
  readonly officePlatform: "OfficeOnline" | "PC" | "Mac";
  /** `Office.context.diagnostics.version` the profile reports (the documented minimum build it stands for). */
  readonly version: string;
  /** Requirement set → the highest version supported (case-insensitive names, as Office compares them). */
  readonly requirementSets: Readonly<Record<string, string>>;
  /** Request and response limit in bytes, or null where the platform documents none. */
  readonly payloadLimitBytes: number | null;
  /** Whether the add-in's parts can share one JavaScript runtime (SharedRuntime 1.1). */
  readonly sharedRuntime: boolean;
}

const FIVE_MB = 5 * 1024 * 1024;

const PROFILES: Readonly<Record<ProfileId, PlatformProfile>> = {
  web: {
    id: "web",
    name: "Excel on the web",
    clientFile: "excel-web-16.00.js",
    officePlatform: "OfficeOnline",
    version: "16.0 (web)",
    requirementSets: {
      ExcelApi: "1.20",
      ExcelApiOnline: "1.1",
      SharedRuntime: "1.2",
      RibbonApi: "1.2",
      DialogApi: "1.2",
      CustomFunctionsRuntime: "1.5",
      AddinCommands: "1.1",
      DelayForCellEdit: "1.1",
    },
    payloadLimitBytes: FIVE_MB,
    sharedRuntime: true,
  },
  windows: {
    id: "windows",
    name: "Excel on Windows (Microsoft 365)",
    clientFile: "excel-win32-16.01.js",
    officePlatform: "PC",
    version: "16.0.19231.20156 (Version 2509)",
    requirementSets: {
      ExcelApi: "1.20",
      ExcelApiDesktop: "1.1",
      SharedRuntime: "1.2",
      RibbonApi: "1.2",
      DialogApi: "1.2",
      CustomFunctionsRuntime: "1.5",
      AddinCommands: "1.1",
      DelayForCellEdit: "1.1",
    },
    payloadLimitBytes: null,
    sharedRuntime: true,
  },
  mac: {
    id: "mac",
    name: "Excel on Mac",
    clientFile: "excel-mac-16.00.js",
    officePlatform: "Mac",
    version: "16.102",
    requirementSets: {
      ExcelApi: "1.20",
      ExcelApiDesktop: "1.1",
      SharedRuntime: "1.2",
      RibbonApi: "1.2",
      DialogApi: "1.2",
      CustomFunctionsRuntime: "1.5",
      AddinCommands: "1.1",
      DelayForCellEdit: "1.1",
    },
    payloadLimitBytes: null,
    sharedRuntime: true,
  },
  "windows-2021": {
    id: "windows-2021",
    name: "Excel 2021 on Windows (volume-licensed, LTSC)",
    clientFile: "excel-win32-16.01.js",
    officePlatform: "PC",
    version: "16.0.14332.20011 (Version 2108)",
    requirementSets: {
      ExcelApi: "1.14",
      SharedRuntime: "1.1",
      RibbonApi: "1.2",
      DialogApi: "1.2",
      CustomFunctionsRuntime: "1.3",
      AddinCommands: "1.1",
      DelayForCellEdit: "1.1",
    },
    payloadLimitBytes: null,
    sharedRuntime: true,
  },
};

export function isProfileId(v: unknown): v is ProfileId {
  return typeof v === "string" && (PROFILE_IDS as readonly string[]).includes(v);
}

/** The profile with this id; an unknown id is an error (a typo must not silently test the web). */
export function profile(id: string): PlatformProfile {
  if (!isProfileId(id)) throw new Error(`Unknown platform profile '${String(id)}'; one of: ${PROFILE_IDS.join(", ")}.`);
  return PROFILES[id];
}

function versionParts(v: string): number[] {
  return v.split(".").map((p) => Number.parseInt(p, 10) || 0);
}

/**
 * `Office.context.requirements.isSetSupported(name, minVersion)` as the profile answers it: the set is
 * listed and its highest version is at least `minVersion` (missing version: any). Names compare
 * case-insensitively and versions as numbers ("1.10" is above "1.9"), as Office's own check does.
 */
export function profileSupports(p: PlatformProfile, name: string, minVersion?: string | number): boolean {
  if (typeof name !== "string") return false;
  const key = Object.keys(p.requirementSets).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return false;
  if (minVersion === undefined || minVersion === null || minVersion === "") return true;
  const have = versionParts(p.requirementSets[key]);
  const want = versionParts(String(minVersion));
  for (let i = 0; i < Math.max(have.length, want.length); i++) {
    const a = have[i] ?? 0;
    const b = want[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** The requirement sets a profile lacks out of `needs` (name → minimum version), as "Name 1.2" texts. */
export function missingSets(p: PlatformProfile, needs: Readonly<Record<string, string>>): string[] {
  return Object.entries(needs)
    .filter(([name, v]) => !profileSupports(p, name, v))
    .map(([name, v]) => `${name} ${v}`);
}

/**
 * The profile this JavaScript realm plays: the client file its library was loaded from and the
 * default of every new workbook. Set with `setCurrentProfile` (the preview reads `?profile=`, Node
 * runs read `PPM_EXCEL_PROFILE` through their loader); `web` otherwise. A test may set a profile of
 * its own (another set of requirement sets) to find the floor the add-in needs.
 */
export function currentProfile(): PlatformProfile {
  const v = (globalThis as { __ppmExcelProfile?: unknown }).__ppmExcelProfile;
  if (isProfileId(v)) return PROFILES[v];
  if (typeof v === "object" && v !== null && isProfileId((v as PlatformProfile).id)) return v as PlatformProfile;
  return PROFILES.web;
}

export function currentProfileId(): ProfileId {
  return currentProfile().id;
}

export function setCurrentProfile(p: ProfileId | PlatformProfile): void {
  if (typeof p === "string") profile(p);
  (globalThis as { __ppmExcelProfile?: unknown }).__ppmExcelProfile = p;
}
