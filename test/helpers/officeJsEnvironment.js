// Jest's Node environment plus Microsoft's Excel client library on demand. The emulator
// (src/emulator/library.ts) calls `__ppmLoadOfficeJs(clientFile)` the first time a test uses Excel;
// the library then runs in the test file's own realm, as it runs in a task pane's window, so its
// objects, promises and errors are the test's own (instanceof works as in Excel). The file is read and
// compiled once per jest worker (scripts/officejs.js keeps the compiled script); running it in a test
// file's realm costs about 30 ms. PPM_EXCEL_PROFILE chooses the platform profile (web by default).
"use strict";
const { TestEnvironment } = require("jest-environment-node");
const { installLoader } = require("../../scripts/officejs");

class OfficeJsEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    installLoader(this.global, (script) => script.runInContext(this.getVmContext()), process.env.PPM_EXCEL_PROFILE || "web");
  }
}

module.exports = OfficeJsEnvironment;
