// Dev-only pages of the browser preview, added to the development build by webpack.config.js.
//
// preview-taskpane.html / preview-commands.html / preview-summary.html are the add-in's own
// taskpane.html / commands.html / summary.html (the ribbon command's dialog) with office.js from the CDN replaced by src/dev/office-shim.ts (the emulator's `Excel` and a small
// `Office`), so the preview runs the real task pane and ribbon-command bundles without a network.
// The pages are built from the add-in's own templates (so `webpack serve` rebuilds them when those
// change) and rewritten just before they are emitted.
"use strict";

const OFFICE_JS = /<script\b[^>]*\bsrc="[^"]*office\.js"[^>]*>\s*<\/script>/gi;

/** The page's HTML with the CDN office.js removed and a role marker for the shim. */
function rewrite(html, filename, role) {
  OFFICE_JS.lastIndex = 0;
  if (!OFFICE_JS.test(html)) throw new Error(`${filename}: expected an office.js <script> to replace in the preview`);
  OFFICE_JS.lastIndex = 0;
  return html
    .replace(OFFICE_JS, "<!-- office.js replaced by the preview's office-shim -->")
    .replace(/<html\b([^>]*)>/i, `<html$1 data-preview-role="${role}">`);
}

/**
 * @param {{ root?: string, HtmlWebpackPlugin: any }} ctx (root is accepted for symmetry; templates are relative to the build's context)
 * @returns {{ entry: Record<string, string>, plugins: any[] }}
 */
module.exports = function previewPages({ HtmlWebpackPlugin }) {
  const pages = [
    // The shared runtime: the ribbon commands' code in the task pane page, as in taskpane.html.
    { filename: "preview-taskpane.html", template: "./src/taskpane/taskpane.html", chunks: ["office-shim", "commands", "taskpane"], role: "taskpane" },
    // Separate runtimes (`?sharedRuntime=0`, platforms without SharedRuntime 1.1): the command runtime on its own.
    { filename: "preview-commands.html", template: "./src/commands/commands.html", chunks: ["office-shim", "commands"], role: "commands" },
    // The ribbon command's summary dialog (it shows only what the command sends it by messageChild).
    { filename: "preview-summary.html", template: "./src/commands/summary.html", chunks: ["office-shim", "summary"], role: "dialog" },
  ];
  const rewriter = {
    apply(compiler) {
      compiler.hooks.compilation.tap("PpmPreviewPages", (compilation) => {
        HtmlWebpackPlugin.getHooks(compilation).beforeEmit.tapAsync("PpmPreviewPages", (data, done) => {
          const page = pages.find((p) => p.filename === data.outputName);
          try {
            if (page) data.html = rewrite(data.html, page.filename, page.role);
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
};
