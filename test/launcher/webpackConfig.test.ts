/**
 * webpack.config.js: a production build refuses to run without ADDIN_BASE_URL (the manifest would
 * otherwise point at a placeholder host), and the dev server sends http://localhost:3000/ to the
 * browser preview. Both are checked without compiling anything.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import type { Configuration } from "webpack";
import type { Middleware } from "webpack-dev-server";

const root = path.resolve(__dirname, "..", "..");

type MakeConfig = (env: unknown, options: { mode: string }) => Promise<Configuration>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const makeConfig = require(path.join(root, "webpack.config.js")) as MakeConfig;

async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(vars)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("production build and ADDIN_BASE_URL", () => {
  it("the config refuses a production build without ADDIN_BASE_URL and names it", async () => {
    await withEnv({ ADDIN_BASE_URL: undefined }, async () => {
      await expect(makeConfig({}, { mode: "production" })).rejects.toThrow(/^ADDIN_BASE_URL is not set\..*ADDIN_BASE_URL=https:\/\//);
    });
    await withEnv({ ADDIN_BASE_URL: "   " }, async () => {
      await expect(makeConfig({}, { mode: "production" })).rejects.toThrow(/ADDIN_BASE_URL is not set/);
    });
  });

  it("the config refuses an ADDIN_BASE_URL that is not an https URL", async () => {
    await withEnv({ ADDIN_BASE_URL: "http://addins.example.com/ppm/" }, async () => {
      await expect(makeConfig({}, { mode: "production" })).rejects.toThrow(/ADDIN_BASE_URL must be https/);
    });
    await withEnv({ ADDIN_BASE_URL: "addins.example.com" }, async () => {
      await expect(makeConfig({}, { mode: "production" })).rejects.toThrow(/ADDIN_BASE_URL is not a URL: 'addins.example.com'/);
    });
  });

  it("the dev server does not rebuild for what the CLI, the tests and git write (issue #37: README step 6's export rebuilt the pane)", async () => {
    const ignored = (await withEnv({ ADDIN_BASE_URL: undefined }, () => makeConfig({}, { mode: "development" }))).watchOptions?.ignored;
    expect(ignored).toEqual(expect.arrayContaining(["**/exports/**", "**/test-results/**", "**/.git/**", "**/node_modules/**"]));
  });

  it("the config builds with an https ADDIN_BASE_URL, and development needs none", async () => {
    await withEnv({ ADDIN_BASE_URL: "https://addins.example.com/ppm/" }, async () => {
      expect((await makeConfig({}, { mode: "production" })).entry).toHaveProperty("taskpane");
    });
    await withEnv({ ADDIN_BASE_URL: undefined }, async () => {
      expect((await makeConfig({}, { mode: "development" })).entry).toHaveProperty("taskpane");
    });
  });

  it("`webpack --mode production` (npm run build) without it exits non-zero with that message and writes nothing", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-build-"));
    fs.rmdirSync(out);
    const env = { ...process.env };
    delete env.ADDIN_BASE_URL;
    const cli = require.resolve("webpack-cli/bin/cli.js", { paths: [root] });
    const child = spawn(process.execPath, [cli, "--mode", "production", "--output-path", out], { cwd: root, env });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    expect(code).not.toBe(0);
    expect(output).toContain("ADDIN_BASE_URL is not set");
    // One readable line, not a stack trace.
    expect(output).not.toMatch(/^\s+at /m);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe("dev server: http://localhost:3000/ leads to the browser preview", () => {
  it("redirects / to /preview.html and leaves other paths alone", async () => {
    const config = await makeConfig({}, { mode: "development" });
    const setup = config.devServer?.setupMiddlewares;
    if (!setup) throw new Error("devServer.setupMiddlewares is missing");
    // The same express the dev server runs on.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const express = require(require.resolve("express", { paths: [path.dirname(require.resolve("webpack-dev-server", { paths: [root] }))] })) as typeof import("express");
    const app = express();
    const middlewares: Middleware[] = [];
    const returned = setup(middlewares, { app } as unknown as Parameters<typeof setup>[1]);
    expect(returned).toBe(middlewares);
    app.use((_req, res) => res.status(404).end());
    const server = await new Promise<http.Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    const port = (server.address() as import("net").AddressInfo).port;
    const head = (p: string): Promise<{ status: number; location: string | undefined }> =>
      new Promise((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path: p }, (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, location: res.headers.location });
          })
          .on("error", reject);
      });
    try {
      expect(await head("/")).toEqual({ status: 302, location: "/preview.html" });
      expect(await head("/taskpane.html")).toEqual({ status: 404, location: undefined });
      expect(await head("/help.html")).toEqual({ status: 404, location: undefined });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("dev server: the add-in's Content-Security-Policy as a header (issue #22)", () => {
  it("sends the production policy with the reference service (and PPM_SERVICE_URL's origin) added to connect-src", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const csp = require(path.join(root, "scripts/csp.js")) as { contentSecurityPolicy: (o?: { connect?: string[] }) => string };
    await withEnv({ PPM_SERVICE_URL: "https://eu.ppm.example.com/base" }, async () => {
      const config = await makeConfig({}, { mode: "development" });
      const headers = config.devServer?.headers as Record<string, string> | undefined;
      const policy = headers?.["Content-Security-Policy"] ?? "";
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const pkg = require(path.join(root, "package.json")) as { config: { service_port: number } };
      expect(policy).toBe(csp.contentSecurityPolicy({ connect: [`http://localhost:${pkg.config.service_port}`, "https://eu.ppm.example.com"] }));
      expect(policy).toContain("require-trusted-types-for 'script'");
      expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/);
    });
  });
});
