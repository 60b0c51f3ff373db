// Dev-only pages of the browser preview, added to the development build by webpack.config.js.
//
// preview-taskpane.html / preview-commands.html / preview-summary.html are the add-in's own
// taskpane.html / commands.html / summary.html (the ribbon command's dialog) with office.js from the
// CDN replaced by Microsoft's Excel client library for the platform, from the project's own files
// (`office-js/<client file>`, copied from node_modules/@microsoft/office-js/dist at build time), then
// src/dev/office-shim.ts (the Common API shim and the emulated host the library's requests reach).
// So the preview runs the real task pane and ribbon-command bundles on Microsoft's `Excel` without a
// network. One page per platform profile (`preview-taskpane.mac.html`, …; the web's has no suffix),
// because the client file is a plain <script src>: no inline script, no script built at run time, as
// a strict Content-Security-Policy requires. The pages are built from the add-in's own templates (so
// `webpack serve` rebuilds them when those change) and rewritten just before they are emitted.
"use strict";

const OFFICE_JS = /<script\b[^>]*\bsrc="[^"]*office\.js"[^>]*>\s*<\/script>/gi;

/** The platform profiles of src/emulator/profiles.ts and the client file Office loads on each. */
const PROFILES = [
  { id: "web", clientFile: "excel-web-16.00.js" },
  { id: "windows", clientFile: "excel-win32-16.01.js" },
  { id: "mac", clientFile: "excel-mac-16.00.js" },
  { id: "windows-2021", clientFile: "excel-win32-16.01.js" },
];

/** The page's file name for a profile: `preview-taskpane.html` on the web, `preview-taskpane.mac.html` on the Mac. */
function pageFor(base, profileId) {
  return profileId === "web" ? base : base.replace(/\.html$/, `.${profileId}.html`);
}

/** The page's HTML with the CDN office.js replaced by the profile's client library, and a role marker for the shim. */
function rewrite(html, filename, role, clientFile) {
  OFFICE_JS.lastIndex = 0;
  if (!OFFICE_JS.test(html)) throw new Error(`${filename}: expected an office.js <script> to replace in the preview`);
  OFFICE_JS.lastIndex = 0;
  return html
    .replace(OFFICE_JS, `<!-- office.js: Microsoft's Excel client library for this platform, from the project's own files --><script src="office-js/${clientFile}"></script>`)
    .replace(/<html\b([^>]*)>/i, `<html$1 data-preview-role="${role}">`);
}

/**
 * @param {{ root?: string, HtmlWebpackPlugin: any }} ctx (root is accepted for symmetry; templates are relative to the build's context)
 * @returns {{ entry: Record<string, string>, plugins: any[] }}
 */
module.exports = previewPages;
module.exports.PROFILES = PROFILES;
module.exports.pageFor = pageFor;

function previewPages({ HtmlWebpackPlugin }) {
  const pages = PROFILES.flatMap((p) => [
    // The shared runtime: the ribbon commands' code in the task pane page, as in taskpane.html.
    { filename: pageFor("preview-taskpane.html", p.id), template: "./src/taskpane/taskpane.html", chunks: ["office-shim", "commands", "functions", "taskpane"], role: "taskpane", clientFile: p.clientFile },
    // Separate runtimes (`?sharedRuntime=0`, platforms without SharedRuntime 1.1): the command runtime on its own.
    { filename: pageFor("preview-commands.html", p.id), template: "./src/commands/commands.html", chunks: ["office-shim", "commands"], role: "commands", clientFile: p.clientFile },
    // The ribbon command's summary dialog (it shows only what the command sends it by messageChild).
    { filename: pageFor("preview-summary.html", p.id), template: "./src/commands/summary.html", chunks: ["office-shim", "summary"], role: "dialog", clientFile: p.clientFile },
    // The self-test kit's page (src/selftest, `npm run test:excel -- --host emulated`) on the emulated host.
    { filename: pageFor("preview-selftest.html", p.id), template: "./src/selftest/selftest.html", chunks: ["office-shim", "selftest"], role: "taskpane", clientFile: p.clientFile },
  ]);
  const rewriter = {
    apply(compiler) {
      compiler.hooks.compilation.tap("PpmPreviewPages", (compilation) => {
        HtmlWebpackPlugin.getHooks(compilation).beforeEmit.tapAsync("PpmPreviewPages", (data, done) => {
          const page = pages.find((p) => p.filename === data.outputName);
          try {
            if (page) data.html = rewrite(data.html, page.filename, page.role, page.clientFile);
            done(null, data);
          } catch (err) {
            done(err);
          }
        });
      });
    },
  };
  return {
    entry: { "office-shim": "./src/dev/office-shim.ts" },
    /** Copy patterns for the client files (webpack.config.js adds them to its CopyWebpackPlugin). */
    copyPatterns: [...new Set(PROFILES.map((p) => p.clientFile))].map((file) => ({
      from: require.resolve(`@microsoft/office-js/dist/${file}`),
      to: `office-js/${file}`,
    })),
    plugins: [
      ...pages.map(
        (p) =>
          new HtmlWebpackPlugin({
            filename: p.filename,
            template: p.template,
            chunks: p.chunks,
            // The shim must define Office/Excel before the add-in bundle runs.
            chunksSortMode: "manual",
          }),
      ),
      rewriter,
    ],
  };
}
