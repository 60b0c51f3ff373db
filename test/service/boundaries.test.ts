/**
 * Structural guarantees of the service client that a behavioural test cannot cover for code
 * paths that do not exist yet: one request builder, and nothing Node-only reachable from the
 * browser bundle.
 */
import * as fs from "node:fs";
import * as path from "node:path";

const DIR = path.resolve(__dirname, "../../src/service");
const files = fs.readdirSync(DIR).filter((f) => f.endsWith(".ts"));
const source = (f: string) => fs.readFileSync(path.join(DIR, f), "utf8");

describe("service client structure", () => {
  it("only the request module calls fetch, so every request goes through the $-refusing builder", () => {
    const callers = files.filter((f) => /\bfetch\s*\(/.test(source(f).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")));
    expect(callers).toEqual(["request.ts"]);
    expect(source("request.ts")).toMatch(/const url = buildUrl\(/);
  });

  it("no module reachable from index.ts imports Node built-ins, Office or the DOM", () => {
    const index = source("index.ts");
    expect(index).not.toMatch(/["']\.\/node["']/);
    for (const f of files.filter((f) => f !== "node.ts")) {
      const text = source(f);
      expect({ f, node: /from\s+["']node:|require\(["'](fs|path|stream|http|crypto)/.test(text) }).toEqual({ f, node: false });
      expect({ f, dom: /\b(document|window|Office|Excel)\./.test(text) }).toEqual({ f, dom: false });
    }
  });
});
