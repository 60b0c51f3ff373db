/**
 * The self-test variant's manifest, made from the add-in's own `manifest.xml`: its own id and name
 * (so it sits next to the real add-in, never in its place), a plain task pane on `selftest.html`
 * (no ribbon, no shared runtime: nothing of it runs unless its pane is open), on the dev server's
 * origin. Pure text transformation: no Office, no DOM.
 */

/** The self-test variant's add-in id (fixed, so a second run replaces the first sideload). */
export const SELFTEST_ADDIN_ID = "2c9e4b71-6d3a-4e8f-b5c0-7a1d9e3f6b24";
export const SELFTEST_NAME = "PPM for Excel (self-test)";

/**
 * @param query parameters of the self-test page's address (issue #36: this run's `nonce`, without
 *   which the kit's server takes nothing from the page; the test server's port), XML-escaped.
 */
export function selfTestManifest(manifest: string, origin = "https://localhost:3000", query: Readonly<Record<string, string>> = {}): string {
  const base = origin.replace(/\/+$/, "");
  const qs = new URLSearchParams(query).toString();
  const page = `${base}/selftest.html${qs ? `?${qs.replace(/&/g, "&amp;")}` : ""}`;
  let out = manifest;
  const replace = (re: RegExp, text: string, what: string) => {
    if (!re.test(out)) throw new Error(`manifest.xml has no ${what}; the self-test manifest cannot be made from it.`);
    out = out.replace(re, text);
  };
  replace(/<Id>[^<]*<\/Id>/, `<Id>${SELFTEST_ADDIN_ID}</Id>`, "<Id>");
  replace(/<DisplayName DefaultValue="[^"]*"\s*\/>/, `<DisplayName DefaultValue="${SELFTEST_NAME}"/>`, "<DisplayName>");
  replace(/<Description DefaultValue="[^"]*"\s*\/>/, '<Description DefaultValue="Runs the PPM add-in\'s workbook scenarios in a new workbook and reports the results to the test server on this computer."/>', "<Description>");
  replace(/(<DefaultSettings>\s*<SourceLocation DefaultValue=")[^"]*("\s*\/>)/, `$1${page}$2`, "<SourceLocation>");
  // A plain task pane: the ribbon, its commands and the shared runtime belong to the real add-in.
  out = out.replace(/\s*<VersionOverrides\b[\s\S]*<\/VersionOverrides>/, "");
  return out.split("https://localhost:3000").join(base);
}
