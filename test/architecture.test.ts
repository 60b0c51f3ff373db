/**
 * The tree's one-way import rules, checked on the source text:
 * - the add-in (src/ minus src/reference and src/dev) never imports the reference service,
 *   dev-only host code or tests;
 * - the reference service imports only the shared contract (src/spec) and node/npm modules;
 * - pure logic folders use no Office, Excel or DOM globals (tsconfig.core.json enforces the types;
 *   this catches `any`-typed escapes too).
 */
import * as fs from "fs";
import * as path from "path";

const root = path.resolve(__dirname, "..");
const src = path.join(root, "src");

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : /\.ts$/.test(e.name) ? [p] : [];
  });
}

/** Resolved repo-relative targets of relative imports/requires in a file. */
function relativeImports(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
  return specs
    .filter((s) => s.startsWith("."))
    .map((s) => path.relative(root, path.resolve(path.dirname(file), s)).split(path.sep).join("/"));
}

const folderOf = (file: string) => path.relative(src, file).split(path.sep)[0];
const allSrc = walk(src);
const addinFiles = allSrc.filter((f) => !["reference", "dev"].includes(folderOf(f)));
const referenceFiles = allSrc.filter((f) => folderOf(f) === "reference");
const pureFolders = ["spec", "table", "service", "query", "refresh", "records"];

/** Code that runs in the task pane's webview or the ribbon runtime: no Node-only globals or modules. */
const browserFolders = ["spec", "table", "service", "query", "refresh", "workbook", "taskpane", "commands", "records"];
const nodeOnlyFiles = ["src/service/node.ts"];

describe("import boundaries", () => {
  it("finds the source tree", () => {
    expect(addinFiles.length).toBeGreaterThan(3);
  });

  it("the add-in never imports the reference service, dev-only code or tests", () => {
    const offenders = addinFiles.flatMap((f) =>
      relativeImports(f)
        .filter((t) => t.startsWith("src/reference") || t.startsWith("src/dev") || t.startsWith("test/"))
        .map((t) => `${path.relative(root, f)} -> ${t}`)
    );
    expect(offenders).toEqual([]);
  });

  it("the reference service imports only the shared contract", () => {
    const offenders = referenceFiles.flatMap((f) =>
      relativeImports(f)
        .filter((t) => !t.startsWith("src/reference") && !t.startsWith("src/spec"))
        .map((t) => `${path.relative(root, f)} -> ${t}`)
    );
    expect(offenders).toEqual([]);
  });

  it("pure logic uses no Office, Excel or DOM globals", () => {
    const globals = /\b(Office|Excel|OfficeExtension|document|window|localStorage)\s*\./;
    const offenders = allSrc
      .filter((f) => pureFolders.includes(folderOf(f)))
      .flatMap((f) =>
        fs
          .readFileSync(f, "utf8")
          .split("\n")
          .map((line, i) => ({ line: line.replace(/\/\/.*$/, ""), i }))
          .filter(({ line }) => !/^\s*\*/.test(line) && globals.test(line))
          .map(({ i }) => `${path.relative(root, f)}:${i + 1}`)
      );
    expect(offenders).toEqual([]);
  });

  it("browser code uses no Node-only globals or modules", () => {
    const nodeOnly = /\b(Buffer|process|__dirname|__filename)\s*\.|\bfrom\s+["'](fs|path|os|crypto|http|https|net|child_process|stream|zlib|url|util)["']|\brequire\(/;
    const offenders = allSrc
      .filter((f) => browserFolders.includes(folderOf(f)) && !nodeOnlyFiles.includes(path.relative(root, f).split(path.sep).join("/")))
      .flatMap((f) =>
        fs
          .readFileSync(f, "utf8")
          .split("\n")
          .map((line, i) => ({ line: line.replace(/\/\/.*$/, ""), i }))
          .filter(({ line }) => !/^\s*\*/.test(line) && nodeOnly.test(line))
          .map(({ i }) => `${path.relative(root, f)}:${i + 1}`)
      );
    expect(offenders).toEqual([]);
  });
});
