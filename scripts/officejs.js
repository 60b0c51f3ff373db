// Microsoft's Excel client library (@microsoft/office-js, pinned in package.json) for Node: the file
// Office loads on a platform, compiled once per process and run in a realm (a jest test file's
// global, or this process's own for scripts such as the bench). The library is a browser script: it
// needs `window` and `self` (the realm's global object) and `navigator`, which Node realms lack, so
// they are defined first, as a browser has them. Nothing of the library is changed.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const DIST = path.join(path.dirname(require.resolve("@microsoft/office-js/package.json")), "dist");

/** Compiled scripts by file name: each is read and compiled once per process (a jest worker). */
const compiled = new Map();

/** The path of a client file (`excel-web-16.00.js`); PPM_OFFICEJS_DEBUG=1 takes its readable `.debug.js` twin. */
function clientFilePath(file) {
  if (!/^excel-[a-z0-9.-]+\.js$/.test(file)) throw new Error(`Not an Excel client file of @microsoft/office-js: '${file}'.`);
  const name = process.env.PPM_OFFICEJS_DEBUG === "1" ? file.replace(/\.js$/, ".debug.js") : file;
  return path.join(DIST, name);
}

function script(file) {
  const p = clientFilePath(file);
  let s = compiled.get(p);
  if (!s) {
    s = new vm.Script(fs.readFileSync(p, "utf8"), { filename: p });
    compiled.set(p, s);
  }
  return s;
}

/** The browser globals the library reads, on a realm's global object. */
function prepareRealm(global) {
  if (global.window === undefined) global.window = global;
  if (global.self === undefined) global.self = global;
  if (global.navigator === undefined) global.navigator = { userAgent: "Mozilla/5.0 (Node.js; emulated Excel host)", language: "en-US" };
}

/** Defines `__ppmLoadOfficeJs` (and the realm's profile) on a realm whose code runs with `run(script)`. */
function installLoader(global, run, profile) {
  if (profile) global.__ppmExcelProfile = profile;
  global.__ppmLoadOfficeJs = (file) => {
    prepareRealm(global);
    run(script(file));
  };
}

/** For Node scripts (tsx): the library loads into this process's own realm on first use. */
function installInThisRealm(options = {}) {
  installLoader(globalThis, (s) => s.runInThisContext(), options.profile || process.env.PPM_EXCEL_PROFILE || undefined);
}

module.exports = { DIST, clientFilePath, prepareRealm, installLoader, installInThisRealm, script };
