/**
 * The tree's import rules, checked on the source text:
 * - no import cycle anywhere in src/, between files, counting `import type` too: a type-only cycle
 *   costs nothing at run time but still ties two layers into one;
 * - the floors: each folder imports only itself and folders on lower floors (never a sibling on its
 *   own floor), from `contract`/`table` at the bottom up to `taskpane`/`commands` on top;
 * - `cli`, `reference`, `dev` and `emulator` stand apart: the add-in never imports them, the
 *   reference service imports only the contract, the emulator imports nothing, the dev preview
 *   only the emulator, the CLI only the pure floors; src/ and bench/ never import test/;
 * - pure logic folders use no Office, Excel or DOM globals (tsconfig.core.json enforces the types;
 *   this catches `any`-typed escapes too);
 * - only src/service/request.ts calls the global `fetch`, so its `$`-option and credential guard
 *   cannot be bypassed.
 */
import * as fs from "fs";
import * as os from "os";
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

const rel = (file: string): string => path.relative(root, file).split(path.sep).join("/");

/**
 * Repo-relative `.ts` targets of a file's relative imports: `import`, `import type`, `export … from`,
 * `import()` and `require()`. Imports of non-TypeScript assets (`.css`, `.html`) are not edges; an
 * extension-less import that resolves to no `.ts` file fails loudly rather than hiding an edge.
 */
function relativeImports(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((s) => s.startsWith("."))
    .flatMap((s) => {
      const base = path.resolve(path.dirname(file), s);
      const hit = [`${base}.ts`, path.join(base, "index.ts"), base].find((c) => c.endsWith(".ts") && fs.existsSync(c));
      if (hit) return [rel(hit)];
      if (path.extname(s) !== "" && !/\.[jt]s$/.test(s)) return [];
      throw new Error(`${rel(file)}: cannot resolve import "${s}"`);
    });
}

/** Import graph: file → files it imports (repo-relative paths). */
type Graph = ReadonlyMap<string, readonly string[]>;

function importGraph(files: readonly string[]): Graph {
  return new Map(files.map((f) => [rel(f), [...new Set(relativeImports(f))]]));
}

/**
 * Every import cycle of `graph`, one per strongly connected component with more than one file (or a
 * file importing itself), as the sorted files of that component (Tarjan's algorithm, iterative so a
 * long chain cannot overflow the stack).
 */
function findCycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const targets = graph.get(top.node) ?? [];
      if (top.edge < targets.length) {
        const t = targets[top.edge++];
        if (!index.has(t)) {
          index.set(t, next);
          low.set(t, next++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, edge: 0 });
        } else if (onStack.has(t)) low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let n: string;
      do {
        n = stack.pop()!;
        onStack.delete(n);
        component.push(n);
      } while (n !== top.node);
      if (component.length > 1 || targets.includes(top.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}

/**
 * The floors, bottom first. A folder imports only itself and the folders of lower floors; two
 * folders on one floor never import each other (e.g. the pane and the ribbon).
 */
const FLOORS: readonly (readonly string[])[] = [["contract", "table"], ["service", "query"], ["refresh", "records", "views"], ["workbook"], ["addin"], ["taskpane", "commands", "functions"]];
/** Folders apart from the add-in, and what each may import besides itself. */
const APART: Readonly<Record<string, readonly string[]>> = {
  reference: ["contract"],
  emulator: [],
  dev: ["emulator"],
  cli: ["contract", "table", "service", "query", "refresh", "records", "views"],
  // Ambient declarations only (the Fluent UI entry points the pane loads): nothing to import.
  types: [],
  // The self-test kit (issue #27): runs the add-in's own code in Excel or on the emulated host, with
  // the reference service; nothing imports it.
  selftest: ["contract", "table", "service", "query", "refresh", "records", "workbook", "addin", "emulator", "reference"],
};
const floorOf = new Map(FLOORS.flatMap((folders, level) => folders.map((f) => [f, level] as const)));

/** `src/<folder>/…` → folder; anything else (bench/, test/) → null. */
const srcFolder = (file: string): string | null => (file.startsWith("src/") ? file.split("/")[1] : null);

/** Imports of `graph` that break the floors or the separation of the folders apart, as `from -> to`. */
function layerViolations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = srcFolder(from);
    for (const to of targets) {
      const b = srcFolder(to);
      if (a === null || b === null || a === b) continue;
      const allowed = a in APART ? APART[a].includes(b) : floorOf.has(b) && floorOf.get(b)! < floorOf.get(a)!;
      if (!allowed) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

const folderOf = (file: string) => path.relative(src, file).split(path.sep)[0];
const allSrc = walk(src);
const srcGraph = importGraph(allSrc);
const pureFolders = ["contract", "table", "service", "query", "refresh", "records", "views"];

/** Code that runs in the task pane's webview or the ribbon runtime: no Node-only globals or modules. */
const browserFolders = ["contract", "table", "service", "query", "refresh", "workbook", "addin", "taskpane", "commands", "records", "views", "functions"];
const nodeOnlyFiles = ["src/service/node.ts"];

describe("import graph", () => {
  it("finds the source tree and its imports", () => {
    expect(allSrc.length).toBeGreaterThan(50);
    expect(srcGraph.get("src/addin/engine.ts")).toEqual(expect.arrayContaining(["src/service/client.ts"]));
    // `import type` is an edge too.
    expect(relativeImports(path.join(src, "taskpane", "recordsHost.ts"))).toEqual(["src/service/connection.ts"]);
  });

  it("has no import cycle in src/ (type-only imports included)", () => {
    expect(findCycles(srcGraph)).toEqual([]);
  });

  it("finds a cycle added on purpose, and only that one", () => {
    expect(findCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", []]]))).toEqual([]);
    expect(findCycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
    expect(findCycles(new Map([["a", ["a"]]]))).toEqual([["a"]]);
    // The real tree plus one upward import: the contract importing the task pane's shell.
    const tampered = new Map(srcGraph);
    tampered.set("src/contract/contract.ts", [...(srcGraph.get("src/contract/contract.ts") ?? []), "src/taskpane/app.ts"]);
    const cycles = findCycles(tampered);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toEqual(expect.arrayContaining(["src/contract/contract.ts", "src/taskpane/app.ts"]));
    // The emulator's formula evaluator and model once imported each other (types only); found too.
    const typeOnly = new Map(srcGraph);
    typeOnly.set("src/emulator/formula.ts", [...(srcGraph.get("src/emulator/formula.ts") ?? []), "src/emulator/model.ts"]);
    expect(findCycles(typeOnly)).toEqual([["src/emulator/formula.ts", "src/emulator/model.ts"]]);
  });

  it("finds a cycle written in files (a temporary folder, `import type` only)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-cycle-"));
    try {
      fs.writeFileSync(path.join(dir, "a.ts"), `import type { B } from "./b";\nexport interface A { b?: B }\n`);
      fs.writeFileSync(path.join(dir, "b.ts"), `import type { A } from "./a";\nexport interface B { a?: A }\n`);
      fs.writeFileSync(path.join(dir, "c.ts"), `export { type A } from "./a";\n`);
      const cycles = findCycles(importGraph(walk(dir)));
      expect(cycles.map((c) => c.map((f) => path.basename(f)))).toEqual([["a.ts", "b.ts"]]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("floors", () => {
  it("every src/ folder has a floor or stands apart", () => {
    const folders = fs.readdirSync(src, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => !floorOf.has(f) && !(f in APART))).toEqual([]);
  });

  it("each folder imports only itself and lower floors; the folders apart only what they may", () => {
    expect(layerViolations(srcGraph)).toEqual([]);
  });

  it("catches an upward, a sideways and an apart import", () => {
    const g = new Map([
      ["src/service/client.ts", ["src/workbook/writer.ts"]],
      ["src/taskpane/app.ts", ["src/commands/commands.ts", "src/addin/engine.ts", "src/taskpane/dom.ts"]],
      ["src/addin/engine.ts", ["src/emulator/index.ts", "src/contract/contract.ts"]],
      ["src/reference/server.ts", ["src/service/client.ts", "src/contract/contract.ts"]],
    ]);
    expect(layerViolations(g)).toEqual([
      "src/service/client.ts -> src/workbook/writer.ts",
      "src/taskpane/app.ts -> src/commands/commands.ts",
      "src/addin/engine.ts -> src/emulator/index.ts",
      "src/reference/server.ts -> src/service/client.ts",
    ]);
  });

  it("src/ and bench/ never import test/", () => {
    const graph = importGraph([...allSrc, ...walk(path.join(root, "bench"))]);
    const offenders = [...graph].flatMap(([from, targets]) => targets.filter((t) => t.startsWith("test/")).map((t) => `${from} -> ${t}`));
    expect(offenders).toEqual([]);
  });
});

describe("globals", () => {
  it("pure logic uses no Office, Excel or DOM globals", () => {
    const globals = /\b(Office|Excel|OfficeExtension|document|window|localStorage)\s*\./;
    expect(codeLinesMatching(allSrc.filter((f) => pureFolders.includes(folderOf(f))), globals)).toEqual([]);
  });

  it("browser code uses no Node-only globals or modules", () => {
    const nodeOnly = /\b(Buffer|process|__dirname|__filename)\s*\.|\bfrom\s+["'](fs|path|os|crypto|http|https|net|child_process|stream|zlib|url|util)["']|\brequire\(/;
    const browserFiles = allSrc.filter((f) => browserFolders.includes(folderOf(f)) && !nodeOnlyFiles.includes(rel(f)));
    expect(codeLinesMatching(browserFiles, nodeOnly)).toEqual([]);
  });
});

describe("Excel is Microsoft's library, the emulator only its host (issue #23)", () => {
  /** Classes declared in a file, with the names of their methods and accessors. */
  function classes(file: string): Array<{ name: string; members: string[] }> {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
    const out: Array<{ name: string; members: string[] }> = [];
    const visit = (n: ts.Node): void => {
      if ((ts.isClassDeclaration(n) || ts.isClassExpression(n)) && n.name) {
        out.push({ name: n.name.text, members: n.members.flatMap((m) => (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? [m.name.text] : [])) });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return out;
  }

  it("no file under src/ defines imitation Excel client classes (objects with load/sync, proxies of Range, Worksheet, …)", () => {
    const clientLike = allSrc.flatMap((f) =>
      classes(f)
        .filter((c) => /Proxy$|RequestContext$|ClientObject$|ClientResult$/.test(c.name) || c.members.includes("load") || c.members.includes("sync") || c.members.includes("isNullObject"))
        .map((c) => `${rel(f)}: class ${c.name}`),
    );
    expect(clientLike).toEqual([]);
    expect(fs.existsSync(path.join(src, "emulator", "proxies.ts"))).toBe(false);
  });

  it("the host's entry is one function: the bridge reaches the host only through answerRequest", () => {
    const hostImports = (file: string) =>
      [...fs.readFileSync(file, "utf8").matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"\.\/host"/g)].flatMap((m) => m[1].split(",").map((x) => x.trim().replace(/^type\s+/, "")).filter((x) => x !== ""));
    const values = (names: string[]) => names.filter((n) => !/^(HostAnswer|HostRequest)$/.test(n));
    expect(values(hostImports(path.join(src, "emulator", "library.ts")))).toEqual(["answerRequest", "FLAG_DELAY_FOR_CELL_EDIT"]);
    // The object model behind it is the host's alone.
    const users = [...srcGraph].filter(([, targets]) => targets.includes("src/emulator/host-objects.ts")).map(([from]) => from);
    expect(users).toEqual(["src/emulator/host.ts"]);
  });

  it("the add-in's code touches only the Excel and Office globals (no OSF, OfficeExtension or emulator hooks)", () => {
    const productFolders = ["workbook", "addin", "taskpane", "commands", "records"];
    const files = allSrc.filter((f) => productFolders.includes(folderOf(f)));
    // As code (not in a string or a one-line doc comment): `OSF.…`, `OfficeExtension.…`, `__ppm…`.
    const hits = codeLinesMatching(files, /(^|[^"'\w.])(OSF|OfficeExtension)\s*\.|\b__ppm\w*/).filter((at) => {
      const [file, line] = at.split(":");
      return !/^\s*\/\*\*/.test(fs.readFileSync(path.join(root, file), "utf8").split("\n")[Number(line) - 1]);
    });
    expect(hits).toEqual([]);
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
    // The self-test kit's own calls (the reference service's /__control hooks, the test server) carry no credentials.
    const checked = allSrc.filter((f) => !["reference", "dev", "cli", "selftest"].includes(folderOf(f)));
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

describe("calculation (issue #34): the add-in calculates its own formulas only", () => {
  /**
   * `file:line` of every call that would calculate more than the add-in's own cells, or oblige it to:
   * `Application.calculate` (every open workbook, in manual mode too; recognised by its receiver or by
   * its `Excel.CalculationType` argument) and `suspendApiCalculationUntilNextSync` (after which "it is
   * the developer's responsibility to re-calc the workbook").
   */
  function applicationCalculations(file: string, text = fs.readFileSync(file, "utf8")): string[] {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const out: string[] = [];
    const visit = (n: ts.Node): void => {
      if (ts.isPropertyAccessExpression(n) && n.name.text === "suspendApiCalculationUntilNextSync") out.push(`${rel(file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === "calculate") {
        const receiver = n.expression.expression.getText(sf);
        const typed = n.arguments.some((a) => (ts.isStringLiteral(a) && /^(Recalculate|Full|FullRebuild)$/.test(a.text)) || /CalculationType/.test(a.getText(sf)));
        if (/application$/i.test(receiver) || typed) out.push(`${rel(file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return out;
  }

  it("no Application.calculate and no suspended API calculation anywhere in src/ (the emulator only answers them)", () => {
    const files = allSrc.filter((f) => folderOf(f) !== "emulator");
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((f) => applicationCalculations(f))).toEqual([]);
  });

  it("finds each form when planted (and leaves Range.calculate and Worksheet.calculate alone)", () => {
    const planted = [
      'context.application.calculate("Recalculate" as Excel.CalculationType);',
      "const app = context.application; app.calculate(Excel.CalculationType.full);",
      'x.calculate("FullRebuild");',
      "context.application.suspendApiCalculationUntilNextSync();",
      "sheet.getRange(\"B1:B9\").calculate(); sheet.calculate(false);",
    ].join("\n");
    expect(applicationCalculations(path.join(src, "planted.ts"), planted)).toEqual(["src/planted.ts:1", "src/planted.ts:2", "src/planted.ts:3", "src/planted.ts:4"]);
  });
});
