#!/usr/bin/env node
// `ppm` command: runs the TypeScript CLI through tsx's CommonJS loader (no build step needed).
require("tsx/cjs");
require("../src/cli/main.ts").main(process.argv.slice(2));
