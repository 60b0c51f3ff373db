/**
 * The tree's one-way import rules, checked on the source text:
 * - the add-in (src/ minus src/reference and src/dev) never imports the reference service,
 *   dev-only host code or tests;
 * - the reference service imports only the shared contract (src/contract) and node/npm modules;
 * - pure logic folders use no Office, Excel or DOM globals (tsconfig.core.json enforces the types;
 *   this catches `any`-typed escapes too);
 * - only src/service/request.ts calls the global `fetch`, so its `$`-option and credential guard
 *   cannot be bypassed.
 */
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

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
const addinFiles = allSrc.filter((f) => !["reference", "dev", "emulator"].includes(folderOf(f)));
const referenceFiles = allSrc.filter((f) => folderOf(f) === "reference");
const pureFolders = ["contract", "table", "service", "query", "refresh", "records"];

/** Code that runs in the task pane's webview or the ribbon runtime: no Node-only globals or modules. */
const browserFolders = ["contract", "table", "service", "query", "refresh", "workbook", "addin", "taskpane", "commands", "records"];
const nodeOnlyFiles = ["src/service/node.ts"];

describe("import boundaries", () => {
  it("finds the source tree", () => {
    expect(addinFiles.length).toBeGreaterThan(3);
  });

  it("the add-in never imports the reference service, dev-only code or tests", () => {
    const offenders = addinFiles.flatMap((f) =>
      relativeImports(f)
        .filter((t) => t.startsWith("src/reference") || t.startsWith("src/dev") || t.startsWith("src/emulator") || t.startsWith("test/"))
        .map((t) => `${path.relative(root, f)} -> ${t}`)
    );
    expect(offenders).toEqual([]);
  });

  it("the reference service imports only the shared contract", () => {
    const offenders = referenceFiles.flatMap((f) =>
      relativeImports(f)
        .filter((t) => !t.startsWith("src/reference") && !t.startsWith("src/contract"))
        .map((t) => `${path.relative(root, f)} -> ${t}`)
    );
    expect(offenders).toEqual([]);
  });

  it("pure logic uses no Office, Excel or DOM globals", () => {
    const globals = /\b(Office|Excel|OfficeExtension|document|window|localStorage)\s*\./;
    expect(codeLinesMatching(allSrc.filter((f) => pureFolders.includes(folderOf(f))), globals)).toEqual([]);
  });

  it("browser code uses no Node-only globals or modules", () => {
    const nodeOnly = /\b(Buffer|process|__dirname|__filename)\s*\.|\bfrom\s+["'](fs|path|os|crypto|http|https|net|child_process|stream|zlib|url|util)["']|\brequire\(/;
    const browserFiles = allSrc.filter((f) => browserFolders.includes(folderOf(f)) && !nodeOnlyFiles.includes(path.relative(root, f).split(path.sep).join("/")));
    expect(codeLinesMatching(browserFiles, nodeOnly)).toEqual([]);
  });
});

/** `file:line` of every line (line comments and doc-comment lines left out) that matches `pattern`. */
function codeLinesMatching(files: string[], pattern: RegExp): string[] {
  return files.flatMap((f) =>
    fs
      .readFileSync(f, "utf8")
      .split("\n")
      .map((line, i) => ({ line: line.replace(/\/\/.*$/, ""), i }))
      .filter(({ line }) => !/^\s*\*/.test(line) && pattern.test(line))
      .map(({ i }) => `${path.relative(root, f)}:${i + 1}`)
  );
}

/** Objects through which the global `fetch` is reachable as a property. */
const GLOBAL_OBJECTS = new Set(["globalThis", "window", "self", "global"]);

/**
 * Lines of `code` that call the global `fetch`: `fetch(`, `globalThis.fetch(`, `window.fetch(`
 * (also via `?.`, `!`, parentheses or `.call`/`.apply`/`.bind`). Method calls on other objects
 * (`source.fetch(`), method and property declarations named `fetch`, `typeof fetch`, comments and
 * strings are not calls of the global.
 */
function globalFetchCalls(code: string, fileName = "file.ts"): number[] {
  const sf = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const unwrap = (e: ts.Expression): ts.Expression => {
    while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAsExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
    return e;
  };
  const isGlobalFetch = (e: ts.Expression): boolean => {
    e = unwrap(e);
    if (ts.isIdentifier(e)) return e.text === "fetch";
    if (ts.isPropertyAccessExpression(e)) return e.name.text === "fetch" && ts.isIdentifier(unwrap(e.expression)) && GLOBAL_OBJECTS.has((unwrap(e.expression) as ts.Identifier).text);
    if (ts.isElementAccessExpression(e)) {
      const obj = unwrap(e.expression);
      return ts.isStringLiteralLike(e.argumentExpression) && e.argumentExpression.text === "fetch" && ts.isIdentifier(obj) && GLOBAL_OBJECTS.has(obj.text);
    }
    return false;
  };
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      let callee = unwrap(node.expression);
      // fetch.call(...), fetch.apply(...), fetch.bind(...)(...)
      if (ts.isPropertyAccessExpression(callee) && ["call", "apply", "bind"].includes(callee.name.text)) callee = callee.expression;
      if (isGlobalFetch(callee)) lines.push(sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return lines;
}

describe("network access", () => {
  it("recognises calls of the global fetch and nothing else", () => {
    const calls = [
      `fetch("https://x.example/a");`,
      `const r = await fetch(url, init);`,
      `globalThis.fetch("/a");`,
      `window.fetch("/a");`,
      `self.fetch?.("/a");`,
      `(fetch)("/a");`,
      `fetch.call(undefined, "/a");`,
      `const run = () => window["fetch"]("/a");`,
    ];
    for (const c of calls) expect({ c, lines: globalFetchCalls(c) }).toEqual({ c, lines: [1] });
    const notCalls = [
      `source.fetch(binding, request);`,
      `await this.fetch("/a");`,
      `from.fetch(options.source, {});`,
      `base.fetch?.(s, r);`,
      `type F = typeof fetch;`,
      `const f: typeof fetch = x;`,
      `interface S { fetch(source: string): Promise<void>; }`,
      `const s = { async fetch(source: string) { return source; } };`,
      `class C { fetch(a: string) { return a; } }`,
      `// fetch("/a") in a comment`,
      `/* window.fetch("/a") */`,
      `const t = "fetch('/a')";`,
      `prefetch("/a");`,
      `refetch("/a");`,
    ];
    for (const c of notCalls) expect({ c, lines: globalFetchCalls(c) }).toEqual({ c, lines: [] });
  });

  it("only src/service/request.ts calls the global fetch (the request builder's guards cannot be bypassed)", () => {
    const checked = allSrc.filter((f) => !["reference", "dev", "cli"].includes(folderOf(f)));
    expect(checked.some((f) => path.relative(root, f).split(path.sep).join("/") === "src/addin/engine.ts")).toBe(true);
    const callers = checked
      .filter((f) => globalFetchCalls(fs.readFileSync(f, "utf8"), f).length > 0)
      .map((f) => path.relative(root, f).split(path.sep).join("/"));
    expect(callers).toEqual(["src/service/request.ts"]);
  });

  it("would catch a new caller (src/addin/engine.ts with a direct fetch)", () => {
    const engine = path.join(src, "addin", "engine.ts");
    const text = fs.readFileSync(engine, "utf8");
    expect(globalFetchCalls(text, engine)).toEqual([]);
    const tampered = `${text}\nexport async function sneaky(): Promise<Response> {\n  return fetch("https://example.com/api/bi/v1/x?$top=1");\n}\n`;
    expect(globalFetchCalls(tampered, engine)).toHaveLength(1);
  });
});
