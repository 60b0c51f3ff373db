/**
 * What the add-in needs from the Excel it runs in, feature by feature, and what is missing there
 * (`Office.context.requirements.isSetSupported`). The manifest requires only the floor (ExcelApi
 * 1.13, test/workbook/floor.test.ts); the rest is detected at run time, so where a set is missing
 * the pane says which feature does not work and why, instead of failing when it is used.
 */

/** A feature of the add-in and the requirement set it needs. */
export interface Capability {
  readonly feature: string;
  readonly set: string;
  readonly version: string;
}

export const CAPABILITIES: readonly Capability[] = [
  { feature: "importing and refreshing tables", set: "ExcelApi", version: "1.13" },
  { feature: "the ribbon's Refresh all summary dialog", set: "DialogApi", version: "1.1" },
  { feature: "the ribbon following refreshes (buttons greyed while one runs)", set: "RibbonApi", version: "1.1" },
  { feature: "refreshing tables when the workbook opens", set: "SharedRuntime", version: "1.1" },
];

type Requirements = { isSetSupported(name: string, minVersion?: string): boolean } | undefined;

/** The capabilities this Excel lacks (none when it cannot be asked: the documented APIs are assumed). */
export function missingCapabilities(requirements: Requirements): Capability[] {
  if (!requirements) return [];
  return CAPABILITIES.filter((c) => {
    try {
      return !requirements.isSetSupported(c.set, c.version);
    } catch {
      return true;
    }
  });
}

/** One sentence for the pane naming what does not work here and the set it needs; null when nothing is missing. */
export function describeMissing(missing: readonly Capability[]): string | null {
  if (missing.length === 0) return null;
  const parts = missing.map((c) => `${c.feature} (needs ${c.set} ${c.version})`);
  return `This Excel lacks what some features need: ${parts.join("; ")}. Those features are off here; the rest works.`;
}
