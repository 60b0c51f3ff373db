/* eslint-disable no-undef */
// Dev-only pages of the browser preview, added to the development build by webpack.config.js.
//
// preview-taskpane.html / preview-commands.html are the add-in's own taskpane.html / commands.html
// with office.js from the CDN replaced by src/dev/office-shim.ts (the emulator's `Excel` and a small
// `Office`), so the preview runs the real task pane and ribbon-command bundles without a network.
"use strict";
const fs = require("fs");
const path = require("path");

const OFFICE_JS = /<script\b[^>]*\bsrc="[^"]*office\.js"[^>]*>\s*<\/script>/gi;

/** The add-in page's HTML with the CDN office.js removed and a role marker for the shim. */
function withoutOfficeJs(file, role) {
  return () => {
    const html = fs.readFileSync(file, "utf8");
    if (!OFFICE_JS.test(html)) throw new Error(`${file}: expected an office.js <script> to replace in the preview`);
    OFFICE_JS.lastIndex = 0;
    return html
      .replace(OFFICE_JS, "<!-- office.js replaced by the preview's office-shim -->")
      .replace(/<html\b([^>]*)>/i, `<html$1 data-preview-role="${role}">`);
  };
}

/**
 * @param {{ root: string, HtmlWebpackPlugin: any }} ctx
 * @returns {{ entry: Record<string, string>, plugins: any[] }}
 */
module.exports = function previewPages({ root, HtmlWebpackPlugin }) {
  const page = (filename, template, chunks, role) =>
    new HtmlWebpackPlugin({
      filename,
      templateContent: withoutOfficeJs(path.join(root, template), role),
      chunks,
      // The shim must define Office/Excel before the add-in bundle runs.
      chunksSortMode: "manual",
    });
  return {
    entry: { "office-shim": "./src/dev/office-shim.ts" },
    plugins: [
      page("preview-taskpane.html", "src/taskpane/taskpane.html", ["office-shim", "taskpane"], "taskpane"),
      page("preview-commands.html", "src/commands/commands.html", ["office-shim", "commands"], "commands"),
    ],
  };
};
