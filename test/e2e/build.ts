/**
 * Builds the add-in in development mode (task pane, commands and the browser preview) into a
 * temporary directory with the repository's own webpack.config.js, so the suite tests exactly what
 * `npm start` serves, and never touches ./dist.
 */
import * as fs from "fs";
import * as path from "path";

export interface BuildResult {
  dir: string;
  /** Bytes of each emitted .js asset, for the run's summary. */
  assets: Record<string, number>;
  ms: number;
}

export async function buildAddin(root: string, outDir: string, serviceUrl: string): Promise<BuildResult> {
  const started = Date.now();
  // The config reads these while it is being built (DefinePlugin's default service URL).
  process.env.PPM_SERVICE_URL = serviceUrl;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const webpack = require(path.join(root, "node_modules", "webpack")) as typeof import("webpack");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const makeConfig = require(path.join(root, "webpack.config.js")) as (
    env: unknown,
    options: { mode: string },
  ) => Promise<import("webpack").Configuration>;
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const config = await makeConfig({}, { mode: "development" });
    config.mode = "development";
    config.output = { ...config.output, path: outDir };
    // Source maps cost build time and the journeys never read them.
    config.devtool = false;
    const compiler = webpack(config);
    if (!compiler) throw new Error("webpack did not create a compiler");
    const stats = await new Promise<import("webpack").Stats>((resolve, reject) => {
      compiler.run((err, s) => {
        // Closing releases the compiler's caches and file handles before the browser starts.
        compiler.close(() => {
          if (err || !s) reject(err ?? new Error("webpack returned no stats"));
          else resolve(s);
        });
      });
    });
    if (stats.hasErrors()) {
      const info = stats.toJson({ all: false, errors: true });
      const text = (info.errors ?? []).map((e) => e.message).join("\n\n");
      throw new Error(`webpack build failed:\n${text}`);
    }
  } finally {
    process.chdir(cwd);
  }
  const assets: Record<string, number> = {};
  for (const name of fs.readdirSync(outDir)) {
    if (name.endsWith(".js")) assets[name] = fs.statSync(path.join(outDir, name)).size;
  }
  return { dir: outDir, assets, ms: Date.now() - started };
}
