// Builds the task pane, the ribbon-command runtime and (development only) the browser preview.
// Development URLs live in one place (urlDev); the production build rewrites them in the copied
// manifest to ADDIN_BASE_URL, the way the Office add-in template does, so nobody edits the manifest
// by hand for a release.
const path = require("path");
const fs = require("fs");
const webpack = require("webpack");
const HtmlWebpackPlugin = require("html-webpack-plugin");
const CopyWebpackPlugin = require("copy-webpack-plugin");

const pkg = require("./package.json");
const devPort = Number(process.env.PPM_DEV_PORT || pkg.config.dev_server_port);
const urlDev = "https://localhost:3000/";
/** Production base URL of the add-in's static files (must be https, must end with /). */
function prodBaseUrl() {
  const raw = process.env.ADDIN_BASE_URL || "https://ppm-excel.example.com/addin/";
  const url = new URL(raw);
  if (url.protocol !== "https:") throw new Error(`ADDIN_BASE_URL must be https: ${raw}`);
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
      const initial = entry.getFiles().filter(js);
      const sum = (files) => files.map(size).reduce((a, b) => ({ raw: a.raw + b.raw, gz: a.gz + b.gz }), { raw: 0, gz: 0 });
      const first = sum(initial);
      const lines = [`[bundle] task pane initial: ${kb(first.raw)} (${kb(first.gz)} gzipped) — ${initial.join(", ")}`];
      const lazy = new Set();
      for (const chunk of entry.chunks) for (const c of chunk.getAllAsyncChunks()) for (const f of c.files) if (js(f)) lazy.add(f);
      for (const f of [...lazy].sort()) {
        const s = size(f);
        lines.push(`[bundle]   on demand: ${f} ${kb(s.raw)} (${kb(s.gz)} gzipped)`);
      }
      const commands = compilation.entrypoints.get("commands");
      if (commands) {
        const c = sum(commands.getFiles().filter(js));
        lines.push(`[bundle] ribbon commands: ${kb(c.raw)} (${kb(c.gz)} gzipped)`);
      }
      console.log(lines.join("\n"));
    });
  }
}

module.exports = async (env, options) => {
  const dev = options.mode !== "production";
  const withPreview = dev && fs.existsSync(path.resolve(__dirname, "src/dev/preview.ts"));
  const entry = {
    taskpane: "./src/taskpane/taskpane.ts",
    commands: "./src/commands/commands.ts",
  };
  if (withPreview) entry.preview = "./src/dev/preview.ts";

  const plugins = [
    new webpack.DefinePlugin({
      // Where the task pane points a new connection by default. Development: the embedded
      // reference service. Production: empty, the user types their environment's URL.
      __PPM_DEFAULT_SERVICE_URL__: JSON.stringify(
        dev ? process.env.PPM_SERVICE_URL || `http://localhost:${pkg.config.service_port}` : process.env.PPM_SERVICE_URL || ""
      ),
      __PPM_VERSION__: JSON.stringify(pkg.version),
    }),
    new HtmlWebpackPlugin({ filename: "taskpane.html", template: "./src/taskpane/taskpane.html", chunks: ["taskpane"] }),
    new HtmlWebpackPlugin({ filename: "commands.html", template: "./src/commands/commands.html", chunks: ["commands"] }),
    new CopyWebpackPlugin({
      patterns: [
        { from: "assets/*", to: "assets/[name][ext][query]" },
        { from: "src/taskpane/taskpane.css", to: "taskpane.css" },
        { from: "src/taskpane/help.html", to: "help.html", noErrorOnMissing: true },
        // The ribbon "Refresh all" summary dialog (static page, see src/commands/refreshAll.ts).
        { from: "src/commands/summary.html", to: "summary.html" },
        {
          from: "manifest*.xml",
          to: "[name][ext]",
          transform(content) {
            if (dev) return content;
            // Full URLs first, then the bare origin (AppDomain) with the production origin.
            const prod = prodBaseUrl();
            return content.toString().split(urlDev).join(prod).split(new URL(urlDev).origin).join(new URL(prod).origin);
          },
        },
      ],
    }),
  ];
  if (!dev) plugins.push(new BundleSizePlugin());
  if (withPreview) {
    plugins.push(new HtmlWebpackPlugin({ filename: "preview.html", template: "./src/dev/preview.html", chunks: ["preview"] }));
    // The preview's copies of taskpane.html / commands.html that load src/dev/office-shim.ts instead of the CDN.
    const previewPages = require("./src/dev/webpack.preview.js")({ root: __dirname, HtmlWebpackPlugin });
    Object.assign(entry, previewPages.entry);
    plugins.push(...previewPages.plugins);
  }

  const config = {
    devtool: dev ? "source-map" : false,
    entry,
    output: { path: path.resolve(__dirname, "dist"), filename: "[name].js", clean: true },
    resolve: { extensions: [".ts", ".js"] },
    module: {
      rules: [
        // ES module output for webpack only (tsc/jest stay CommonJS): webpack needs to see `import()`
        // to split the task pane's heavy engine into its own chunk, and ES imports tree-shake.
        { test: /\.ts$/, exclude: /node_modules/, use: { loader: "ts-loader", options: { transpileOnly: true, compilerOptions: { module: "es2020" } } } },
      ],
    },
    plugins,
    performance: { hints: false },
    stats: "errors-warnings",
    devServer: {
      port: devPort,
      host: "localhost",
      headers: { "Access-Control-Allow-Origin": "*" },
      static: false,
      client: false,
      hot: false,
      liveReload: false,
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
