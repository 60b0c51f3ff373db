/**
 * Loads the bench's TypeScript the way the shipped add-in is compiled: TypeScript's own emit
 * (`ts.transpileModule`, what ts-loader does with `transpileOnly`), as CommonJS, where an export is
 * a plain property of `exports`. Used with `node --require ./bench/compiled.js` for every process
 * whose time or memory the bench measures (bench/run.ts).
 *
 * Why not tsx, which runs the bench's driver: esbuild's CommonJS output reads every export through a
 * getter (`__export`), so each call from one module into another (a date's `digitsAt`, a cell's
 * `EXCEL_MAX_CELL_CHARS`) is a getter call. A CPU profile of 45 imports of 10,000 CSV rows put
 * 6.75 ms of each import's ~90 ms in those getters (2026-11-29), a cost the production bundle,
 * whose modules webpack concatenates into one scope, does not have.
 *
 * Each file's output is cached on disk under node_modules/.cache/bench-compiled, keyed by the
 * TypeScript version, the file and its text, so a measured process loads no compiler: run
 * `node bench/compiled.js --warm` first (bench/run.ts does).
 */
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

const root = path.resolve(__dirname, "..");
const cacheDir = path.join(root, "node_modules", ".cache", "bench-compiled");
let compiler = null;

function typescript() {
  if (compiler) return compiler;
  const ts = require("typescript");
  const config = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const options = { ...parsed.options, module: ts.ModuleKind.CommonJS, sourceMap: false, inlineSourceMap: false, declaration: false, noEmit: false };
  compiler = { ts, options };
  return compiler;
}

function versionOfTypescript() {
  return JSON.parse(fs.readFileSync(require.resolve("typescript/package.json"), "utf8")).version;
}
const tsVersion = versionOfTypescript();

function compiled(filename) {
  const source = fs.readFileSync(filename, "utf8");
  const key = crypto.createHash("sha256").update(`${tsVersion}\0${filename}\0${source}`).digest("hex");
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    const { ts, options } = typescript();
    const out = ts.transpileModule(source, { compilerOptions: options, fileName: filename, reportDiagnostics: false }).outputText;
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written whole under another name, then renamed: a process reading it meanwhile sees all or nothing.
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, out);
    fs.renameSync(tmp, cached);
    return out;
  }
}

require.extensions[".ts"] = function (module, filename) {
  module._compile(compiled(filename), filename);
};

/** `--warm`: compiles every TypeScript file of src/ and bench/ into the cache. */
if (require.main === module && process.argv.includes("--warm")) {
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) compiled(p);
    }
  };
  walk(path.join(root, "src"));
  walk(path.join(root, "bench"));
}
