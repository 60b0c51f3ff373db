/**
 * The production build's pages carry the Content-Security-Policy (issue #22): a real
 * `webpack --mode production` build (minification off, to spare the shared machine; the pages are
 * the same), then every HTML page of dist/ is read.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { Configuration, Stats } from "webpack";

const root = path.resolve(__dirname, "..", "..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const csp = require(path.join(root, "scripts/csp.js")) as {
  contentSecurityPolicy: (o?: { connect?: string[] }) => string;
  inlineContent: (html: string) => string[];
  withCspMeta: (html: string, policy: string) => string;
};

let out: string;
let pages: Record<string, string>;

beforeAll(async () => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-prod-"));
  const saved = { base: process.env.ADDIN_BASE_URL, service: process.env.PPM_SERVICE_URL };
  process.env.ADDIN_BASE_URL = "https://addins.example.com/ppm/";
  delete process.env.PPM_SERVICE_URL;
  const cwd = process.cwd();
  process.chdir(root);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const webpack = require(path.join(root, "node_modules", "webpack")) as typeof import("webpack");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const makeConfig = require(path.join(root, "webpack.config.js")) as (env: unknown, options: { mode: string }) => Promise<Configuration>;
    const config = await makeConfig({}, { mode: "production" });
    config.mode = "production";
    config.output = { ...config.output, path: out };
    config.optimization = { ...config.optimization, minimize: false };
    config.plugins = (config.plugins ?? []).filter((p) => p?.constructor?.name !== "BundleSizePlugin");
    const compiler = webpack(config);
    if (!compiler) throw new Error("webpack did not create a compiler");
    const stats = await new Promise<Stats>((resolve, reject) => compiler.run((err, s) => compiler.close(() => (err || !s ? reject(err ?? new Error("no stats")) : resolve(s)))));
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
  } finally {
    process.chdir(cwd);
    if (saved.base === undefined) delete process.env.ADDIN_BASE_URL;
    else process.env.ADDIN_BASE_URL = saved.base;
    if (saved.service !== undefined) process.env.PPM_SERVICE_URL = saved.service;
  }
  pages = Object.fromEntries(
    fs
      .readdirSync(out)
      .filter((f) => f.endsWith(".html"))
      .map((f) => [f, fs.readFileSync(path.join(out, f), "utf8")]),
  );
}, 300_000);

afterAll(() => {
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

const metaOf = (html: string): string | null => /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1].replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, "&") ?? null;

describe("the production build's pages carry the Content-Security-Policy", () => {
  it("every page of the build, and only the add-in's pages (no preview)", () => {
    expect(Object.keys(pages).sort()).toEqual(["commands.html", "help.html", "summary.html", "taskpane.html"]);
  });

  it("as a meta tag, before anything it governs, with the documented policy", () => {
    const policy = csp.contentSecurityPolicy();
    for (const [name, html] of Object.entries(pages)) {
      expect({ name, policy: metaOf(html) }).toEqual({ name, policy });
      const at = html.indexOf('http-equiv="Content-Security-Policy"');
      for (const tag of ["<script", "<link", "<style"]) {
        const first = html.indexOf(tag);
        if (first >= 0) expect({ name, tag, before: at < first }).toEqual({ name, tag, before: true });
      }
    }
    for (const directive of ["default-src 'none'", "script-src 'self' https://appsforoffice.microsoft.com", "style-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'none'", "require-trusted-types-for 'script'", "trusted-types default ppm-webpack fast-html"]) {
      expect(policy).toContain(directive);
    }
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|unsafe-hashes|(^|\s)\*(\s|;|$)/);
  });

  it("no inline script, style, style attribute or event handler on any page", () => {
    for (const [name, html] of Object.entries(pages)) expect({ name, inline: csp.inlineContent(html) }).toEqual({ name, inline: [] });
  });

  it("pages that load Office.js load the Trusted Types default policy first; the summary page shows nothing of its address", () => {
    for (const name of ["taskpane.html", "commands.html", "summary.html"]) {
      const html = pages[name];
      const tt = html.indexOf('src="trusted-types.js"');
      const office = html.indexOf("appsforoffice.microsoft.com/lib/1/hosted/office.js");
      expect({ name, tt: tt >= 0, first: tt < office }).toEqual({ name, tt: true, first: true });
    }
    expect(fs.existsSync(path.join(out, "trusted-types.js"))).toBe(true);
    expect(pages["summary.html"]).not.toMatch(/location\.search|URLSearchParams/);
    // The help page is static: no script at all.
    expect(pages["help.html"]).not.toMatch(/<script/);
    expect(fs.readFileSync(path.join(out, "summary.js"), "utf8")).not.toMatch(/location\.search|URLSearchParams/);
  });

  it("webpack loads chunks through its own Trusted Types policy", () => {
    const runtime = fs.readFileSync(path.join(out, "runtime.js"), "utf8");
    expect(runtime).toContain('createPolicy("ppm-webpack"');
  });

  it("the meta tag helper refuses a page without a head or with a policy already", () => {
    expect(() => csp.withCspMeta("<p>x</p>", "default-src 'none'")).toThrow(/no <head>/);
    expect(() => csp.withCspMeta('<head><meta http-equiv="Content-Security-Policy" content="x"></head>', "y")).toThrow(/already/);
    expect(csp.inlineContent('<div style="color:red" onclick="x()"><script>alert(1)</script><style>p{}</style>')).toHaveLength(4);
  });
});
