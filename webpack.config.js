// Builds the task pane, the ribbon-command runtime and (development only) the browser preview.
// Development URLs live in one place (urlDev); the production build rewrites them in the copied
// manifest to ADDIN_BASE_URL, the way the Office add-in template does, so nobody edits the manifest
// by hand for a release.
const path = require("path");
const fs = require("fs");
const webpack = require("webpack");
const HtmlWebpackPlugin = require("html-webpack-plugin");
const CopyWebpackPlugin = require("copy-webpack-plugin");
const CustomFunctionsMetadataPlugin = require("custom-functions-metadata-plugin");
const { contentSecurityPolicy, withCspMeta, TRUSTED_TYPES_POLICIES } = require("./scripts/csp.js");

const pkg = require("./package.json");
const devPort = Number(process.env.PPM_DEV_PORT || pkg.config.dev_server_port);
const urlDev = "https://localhost:3000/";

/** A configuration error webpack-cli prints as one readable message, without a stack trace. */
function configError(message) {
  const err = new Error(message);
  err.stack = `Error: ${message}`;
  return err;
}

/**
 * Production base URL of the add-in's static files (must be https, must end with /). There is no
 * default: a manifest pointing at a placeholder host installs fine and then shows a blank pane, so
 * a build without ADDIN_BASE_URL fails before compiling.
 */
function prodBaseUrl() {
  const raw = (process.env.ADDIN_BASE_URL || "").trim();
  const example = "ADDIN_BASE_URL=https://addins.example.com/ppm/ npm run build";
  if (!raw) {
    throw configError(
      `ADDIN_BASE_URL is not set. A production build writes it into dist/manifest.xml as the address the add-in's files are hosted at; set it to that https address, e.g. ${example}`,
    );
  }
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw configError(`ADDIN_BASE_URL is not a URL: '${raw}'. Set it to the https address dist/ is hosted at, e.g. ${example}`);
  }
  if (url.protocol !== "https:") throw configError(`ADDIN_BASE_URL must be https (Office loads add-ins only over https): '${raw}'`);
  return url.href.endsWith("/") ? url.href : url.href + "/";
}

/**
 * Tries to get trusted development certificates (office-addin-dev-certs). Where they cannot be
 * installed (e.g. Linux without sudo, CI), the dev server falls back to http on localhost and
 * says so; Excel itself needs https, the browser preview does not.
 */
async function devServerHttps() {
  if (process.env.PPM_DEV_HTTP === "1") return { https: null, reason: "PPM_DEV_HTTP=1" };
  try {
    const devCerts = require("office-addin-dev-certs");
    const options = await Promise.race([
      devCerts.getHttpsServerOptions(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), 20000)),
    ]);
    return { https: options, reason: null };
  } catch (err) {
    return { https: null, reason: String((err && err.message) || err).split("\n")[0] };
  }
}

/**
 * Prints the task pane's bundle sizes after a build: what the pane loads first (the `taskpane`
 * entry's files) and the chunks it loads on demand, raw and gzipped, so a size regression is seen
 * at build time.
 */
class BundleSizePlugin {
  apply(compiler) {
    compiler.hooks.afterEmit.tap("BundleSizePlugin", (compilation) => {
      const zlib = require("zlib");
      const size = (file) => {
        // Sources are released after emit; the emitted files are what a browser downloads anyway.
        const buf = fs.readFileSync(path.join(compilation.outputOptions.path, file));
        return { raw: buf.length, gz: zlib.gzipSync(buf, { level: 9 }).length };
      };
      const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
      const js = (f) => f.endsWith(".js");
      const entry = compilation.entrypoints.get("taskpane");
      if (!entry) return;
      // What taskpane.html loads first: the commands' entry (shared runtime) and the pane's.
      const commandsEntry = compilation.entrypoints.get("commands");
      // …and the worksheet functions' entry (it associates the functions; their engine is on demand).
      const functionsEntry = compilation.entrypoints.get("functions");
      const initial = [...new Set([...(commandsEntry ? commandsEntry.getFiles() : []), ...(functionsEntry ? functionsEntry.getFiles() : []), ...entry.getFiles()])].filter(js);
      const sum = (files) => files.map(size).reduce((a, b) => ({ raw: a.raw + b.raw, gz: a.gz + b.gz }), { raw: 0, gz: 0 });
      const first = sum(initial);
      const lines = [`[bundle] task pane page initial (pane + ribbon commands + worksheet functions): ${kb(first.raw)} (${kb(first.gz)} gzipped) — ${initial.join(", ")}`];
      const lazy = new Set();
      for (const e of [commandsEntry, functionsEntry, entry]) if (e) for (const chunk of e.chunks) for (const c of chunk.getAllAsyncChunks()) for (const f of c.files) if (js(f)) lazy.add(f);
      for (const f of [...lazy].sort()) {
        const s = size(f);
        lines.push(`[bundle]   on demand: ${f} ${kb(s.raw)} (${kb(s.gz)} gzipped)`);
      }
      if (commandsEntry) {
        const c = sum(commandsEntry.getFiles().filter(js));
        lines.push(`[bundle] ribbon commands alone (commands.html, separate runtimes): ${kb(c.raw)} (${kb(c.gz)} gzipped)`);
      }
      console.log(lines.join("\n"));
    });
  }
}

/**
 * The production build's pages carry the Content-Security-Policy as a <meta> tag (static hosting
 * often cannot set headers; the README gives admins the header too). Development pages get it as a
 * header from the dev server instead (a header and a meta tag would both apply).
 */
class CspMetaPlugin {
  constructor(policy) {
    this.policy = policy;
  }
  apply(compiler) {
    compiler.hooks.compilation.tap("CspMetaPlugin", (compilation) => {
      HtmlWebpackPlugin.getHooks(compilation).beforeEmit.tapAsync("CspMetaPlugin", (data, done) => {
        try {
          data.html = withCspMeta(data.html, this.policy);
          done(null, data);
        } catch (err) {
          done(new Error(`${data.outputName}: ${err.message}`));
        }
      });
    });
  }
}

/** connect-src additions for development: the reference service (and PPM_SERVICE_URL's origin). */
function devConnectSources() {
  const out = [`http://localhost:${pkg.config.service_port}`];
  try {
    if (process.env.PPM_SERVICE_URL) out.push(new URL(process.env.PPM_SERVICE_URL).origin);
  } catch {
    // Not a URL: the pane refuses it as an environment address anyway.
  }
  return out;
}

module.exports = async (env, options) => {
  const dev = options.mode !== "production";
  // Checked before anything compiles, so a release build without it fails in a second, not after
  // a full build (the manifest transform below would only reach it at emit time).
  const prodBase = dev ? null : prodBaseUrl();
  const withPreview = dev && fs.existsSync(path.resolve(__dirname, "src/dev/preview.ts"));
  const entry = {
    commands: "./src/commands/commands.ts",
    // The ribbon commands' summary dialog (summary.html): it shows what the command sends it.
    summary: "./src/commands/summary.ts",
    // taskpane.html loads both (shared runtime): the pane's bundle leaves out what the commands'
    // bundle already brings (store, runtime, summaries) instead of carrying a second copy.
    taskpane: { import: "./src/taskpane/taskpane.ts", dependOn: "commands" },
    // The PPM worksheet functions, in the same shared runtime (taskpane.html; manifest CustomFunctions).
    functions: { import: "./src/functions/functions.ts", dependOn: "commands" },
  };
  if (withPreview) entry.preview = "./src/dev/preview.ts";
  // The self-test variant's page (npm run test:excel, src/selftest): development builds only.
  if (dev) entry.selftest = "./src/selftest/page.ts";

  const plugins = [
    // functions.json (the custom functions' metadata) generated at build time from the JSDoc of
    // src/functions/functions.ts; the plugin also appends the CustomFunctions.associate calls to it.
    new CustomFunctionsMetadataPlugin({ output: "functions.json", input: "./src/functions/functions.ts" }),
    new webpack.DefinePlugin({
      // Where the task pane points a new connection by default. Development: the embedded
      // reference service. Production: empty, the user types their environment's URL.
      __PPM_DEFAULT_SERVICE_URL__: JSON.stringify(
        dev ? process.env.PPM_SERVICE_URL || `http://localhost:${pkg.config.service_port}` : process.env.PPM_SERVICE_URL || ""
      ),
      __PPM_VERSION__: JSON.stringify(pkg.version),
    }),
    // One shared runtime (manifest <Runtimes>, FunctionFile = Taskpane.Url): the ribbon commands'
    // code runs in taskpane.html next to the pane, as Microsoft's "Configure your Office Add-in to use
    // a shared runtime" does it. Commands first, so their functions are associated before the pane
    // mounts. commands.html stays for the browser preview's separate-runtime mode (src/dev).
    new HtmlWebpackPlugin({ filename: "taskpane.html", template: "./src/taskpane/taskpane.html", chunks: ["commands", "functions", "taskpane"], chunksSortMode: "manual" }),
    new HtmlWebpackPlugin({ filename: "commands.html", template: "./src/commands/commands.html", chunks: ["commands"] }),
    // The ribbon commands' summary dialog (src/commands/refreshAll.ts, summary.ts).
    new HtmlWebpackPlugin({ filename: "summary.html", template: "./src/commands/summary.html", chunks: ["summary"] }),
    // The manifest's SupportUrl: static, no script (a page of the build so that it gets the policy too).
    new HtmlWebpackPlugin({ filename: "help.html", template: "./src/taskpane/help.html", chunks: [] }),
    new CopyWebpackPlugin({
      patterns: [
        { from: "assets/*", to: "assets/[name][ext][query]" },
        { from: "src/taskpane/taskpane.css", to: "taskpane.css" },
        { from: "src/taskpane/help.css", to: "help.css" },
        { from: "src/commands/summary.css", to: "summary.css" },
        // The Trusted Types "default" policy, loaded before Office.js by every page that loads it.
        { from: "src/commands/trusted-types.js", to: "trusted-types.js" },
        {
          from: "manifest*.xml",
          to: "[name][ext]",
          transform(content) {
            // Full URLs first, then the bare origin (AppDomain) with the production origin.
            // Development on another port (`npm start -- --port N`) serves a manifest for that port,
            // so it can be sideloaded from https://localhost:N/manifest.xml.
            const target = dev ? `https://localhost:${devPort}/` : prodBase;
            if (target === urlDev) return content;
            return content.toString().split(urlDev).join(target).split(new URL(urlDev).origin).join(new URL(target).origin);
          },
        },
      ],
    }),
  ];
  if (!dev) plugins.push(new BundleSizePlugin(), new CspMetaPlugin(contentSecurityPolicy()));
  if (dev) plugins.push(new HtmlWebpackPlugin({ filename: "selftest.html", template: "./src/selftest/selftest.html", chunks: ["selftest"] }));
  if (withPreview) {
    plugins.push(new HtmlWebpackPlugin({ filename: "preview.html", template: "./src/dev/preview.html", chunks: ["preview"] }));
    plugins.push(new CopyWebpackPlugin({ patterns: [{ from: "src/dev/preview.css", to: "preview.css" }] }));
    // The preview's copies of taskpane.html / commands.html that load src/dev/office-shim.ts instead of the CDN.
    const previewPages = require("./src/dev/webpack.preview.js")({ root: __dirname, HtmlWebpackPlugin });
    Object.assign(entry, previewPages.entry);
    plugins.push(...previewPages.plugins);
    // Microsoft's Excel client library (the pinned @microsoft/office-js) for the preview's pages.
    plugins.push(new CopyWebpackPlugin({ patterns: previewPages.copyPatterns }));
  }

  const config = {
    devtool: dev ? "source-map" : false,
    entry,
    // Chunks are loaded through a Trusted Types policy of their own (the pages require Trusted Types).
    output: { path: path.resolve(__dirname, "dist"), filename: "[name].js", clean: true, trustedTypes: { policyName: TRUSTED_TYPES_POLICIES.webpack, onPolicyCreationFailure: "stop" } },
    resolve: { extensions: [".ts", ".js"] },
    module: {
      rules: [
        // ES module output for webpack only (tsc/jest stay CommonJS): webpack needs to see `import()`
        // to split the task pane's heavy engine into its own chunk, and ES imports tree-shake.
        { test: /\.ts$/, exclude: /node_modules/, use: { loader: "ts-loader", options: { transpileOnly: true, compilerOptions: { module: "es2020" } } } },
      ],
    },
    plugins,
    // Two entries on one page (taskpane.html) must share ONE module registry, or each would get its
    // own copy of src/addin/runtime.ts and the pane and the ribbon would hold two engines and two
    // locks (webpack: "optimization.runtimeChunk: 'single'" for several entry points on a page).
    optimization: { runtimeChunk: "single" },
    performance: { hints: false },
    stats: "errors-warnings",
    // The copy of manifest*.xml makes the repository's root a watched context, so every file written
    // under it rebuilt the pane (issue #37, new-user run: README step 6's `ppm export … --out
    // exports/fin.csv` while `npm start` runs printed one more "compiled successfully"). What the CLI,
    // the tests and git write is not a source of the pane. Each folder is named itself too: creating or
    // deleting `exports/` changes the root's listing, which a `**/exports/**` glob does not cover
    // (new-user trial, 2026-11-30: step 6's first run, which makes the folder, still rebuilt).
    watchOptions: {
      ignored: ["node_modules", ".git", "exports", "test-results", "dist", ".ppm-cache"].flatMap((d) => [`**/${d}`, `**/${d}/**`]),
    },
    // `npm start` is quiet unless given --verbose (PPM_VERBOSE): the dev server's info lines ("wait
    // until bundle finished: /taskpane.html" for every request during a build) are left out.
    infrastructureLogging: { level: process.env.PPM_VERBOSE === "1" ? "info" : "warn" },
    devServer: {
      port: devPort,
      host: "localhost",
      headers: {
        "Access-Control-Allow-Origin": "*",
        // The policy the production pages carry as a meta tag, plus the reference service (scripts/csp.js).
        "Content-Security-Policy": contentSecurityPolicy({ connect: devConnectSources() }),
        // `npm start` announces the dev server only when this answer carries the id it chose, so
        // another program on the same port is never reported as the task pane (scripts/start.js).
        ...(process.env.PPM_LAUNCH_ID ? { "X-PPM-Launch-Id": process.env.PPM_LAUNCH_ID } : {}),
      },
      static: false,
      client: false,
      hot: false,
      liveReload: false,
      setupMiddlewares(middlewares, devServer) {
        // http://localhost:3000/ is what people type; send them to the page that works without Excel.
        const home = withPreview ? "/preview.html" : "/taskpane.html";
        devServer.app.get("/", (_req, res) => res.redirect(302, home));
        return middlewares;
      },
    },
  };
  if (dev && process.argv.some((a) => a === "serve")) {
    const { https, reason } = await devServerHttps();
    if (https) config.devServer.server = { type: "https", options: https };
    else {
      config.devServer.server = "http";
      console.warn(`[webpack] dev certificates unavailable (${reason}); serving over http://localhost:${devPort}.`);
    }
  }
  return config;
};
