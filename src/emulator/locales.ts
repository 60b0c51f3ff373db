/**
 * Locale profiles of the emulated host (issue #34): what changes when the same workbook is open in an
 * Excel whose culture is not en-US. Only what the add-in can observe through the API is modelled:
 *
 * - **Number text inside formulas** (`&`, `CONCAT`, `TEXTJOIN`): a number turned into text takes the
 *   decimal separator Excel uses for numbers (`Application.decimalSeparator`, "the string used as the
 *   decimal separator for numeric values. This is based on the local Excel settings",
 *   learn.microsoft.com/javascript/api/excel/excel.application, ExcelApi 1.11; in de-DE and fr-FR a
 *   comma). No digit grouping is inserted (the conversion writes the General form, at most 15
 *   significant digits: values.ts `numberText`). The well-known way to find that separator from a
 *   formula is exactly this conversion: the second character of `1.1&""` (fixuser.com, "Convert number
 *   to text representation with specific decimal separator in Excel").
 * - **Logical values as text**: Excel names TRUE and FALSE in its language (support.microsoft.com
 *   de-de "WAHR" / "FALSCH" and fr-fr "VRAI" / "FAUX", the TRUE and FALSE function pages), and a
 *   logical value joined into text is written under that name.
 * - **The separators Excel reports**: `Application.decimalSeparator`, `thousandsSeparator`,
 *   `useSystemSeparators` (ExcelApi 1.11) and `Application.cultureInfo` (`name` in the documented
 *   lower-case form "zh-cn" / "en-us", `numberFormat.numberDecimalSeparator` and
 *   `numberGroupSeparator`, "based on current system settings"). A workbook may be given its own
 *   separators (Excel Options, "Use system separators" off: `Application.UseSystemSeparators`,
 *   learn.microsoft.com/office/vba/api/excel.application.usesystemseparators): then the application's
 *   separators differ from the culture's, and number text follows the application's.
 *
 * Not locale-dependent, and kept as en-US in every profile: formulas written and read through
 * `Range.formulas` (the API's formulas are always in English, `formulasLocal` is the localized form),
 * and strings written through `Range.values` — the API parses those locale-neutrally (docs,
 * Excel.Range.values: "Locale-shaped strings (such as the date "19-8-2025" in nl-NL or fr-FR, format
 * DD-MM-YYYY) are stored as text instead of as dates"). Not modelled: `Range.text` and number formats
 * in other locales (the display), localized error names.
 */

export type LocaleId = "en-US" | "de-DE" | "fr-FR";

export interface LocaleProfile {
  id: LocaleId;
  /** `cultureInfo.name`, in the documented form ("en-us"). */
  cultureName: string;
  decimalSeparator: string;
  /** Digit grouping. fr-FR: U+202F NARROW NO-BREAK SPACE, the CLDR French grouping separator Windows 10 took over (angular/angular #37905 reports the CLDR change); nothing of the add-in depends on it. */
  thousandsSeparator: string;
  trueText: string;
  falseText: string;
}

export const LOCALES: Readonly<Record<LocaleId, LocaleProfile>> = {
  "en-US": { id: "en-US", cultureName: "en-us", decimalSeparator: ".", thousandsSeparator: ",", trueText: "TRUE", falseText: "FALSE" },
  "de-DE": { id: "de-DE", cultureName: "de-de", decimalSeparator: ",", thousandsSeparator: ".", trueText: "WAHR", falseText: "FALSCH" },
  "fr-FR": { id: "fr-FR", cultureName: "fr-fr", decimalSeparator: ",", thousandsSeparator: "\u202f", trueText: "VRAI", falseText: "FAUX" },
};

/** The culture's separators, or the workbook's own when Excel's "Use system separators" is off. */
export interface LocaleSettings {
  profile: LocaleProfile;
  /** What Excel uses for numbers (`Application.decimalSeparator`). */
  decimalSeparator: string;
  thousandsSeparator: string;
  useSystemSeparators: boolean;
}

export function localeSettings(id: LocaleId = "en-US", own?: { decimalSeparator?: string; thousandsSeparator?: string }): LocaleSettings {
  const profile = LOCALES[id];
  if (!profile) throw new Error(`Unknown locale profile ${String(id)} (known: ${Object.keys(LOCALES).join(", ")}).`);
  const custom = own?.decimalSeparator !== undefined || own?.thousandsSeparator !== undefined;
  return {
    profile,
    decimalSeparator: own?.decimalSeparator ?? profile.decimalSeparator,
    thousandsSeparator: own?.thousandsSeparator ?? profile.thousandsSeparator,
    useSystemSeparators: !custom,
  };
}
