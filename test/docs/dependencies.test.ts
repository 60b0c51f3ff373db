/**
 * docs/dependencies.md agrees with package.json (issue #37, item 10: the README listed
 * `office-addin-debugging` as a dev dependency, then said it was not one): every package in
 * package.json is named there, marked "(dev)" exactly when it is a dev dependency, and no sentence
 * calls a package of package.json "not a dependency".
 */
import * as fs from "fs";
import * as path from "path";

const root = path.resolve(__dirname, "..", "..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const doc = fs.readFileSync(path.join(root, "docs", "dependencies.md"), "utf8");

/** The table's rows: the packages named in the first cell, and whether it says "(dev)". */
function rows(): Array<{ names: string[]; dev: boolean; cell: string }> {
  return doc
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .map((l) => {
      const cell = l.split("|")[1];
      return { names: [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]), dev: /\(dev\)|, dev\)/.test(cell), cell };
    });
}

describe("docs/dependencies.md and package.json", () => {
  it("names every dependency and dev dependency in its table", () => {
    const named = new Set(rows().flatMap((r) => r.names));
    const missing = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].filter((n) => !named.has(n));
    expect(missing).toEqual([]);
  });

  it("never says a package of package.json is not a dependency", () => {
    const all = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
    const denied = [...doc.matchAll(/[Nn]ot a dependency:?\s*`([^`]+)`/g)].map((m) => m[1]).filter((n) => all.includes(n));
    expect(denied).toEqual([]);
  });

  it("marks a package '(dev)' only when it is a dev dependency", () => {
    const wrong = rows()
      .filter((r) => r.dev)
      .flatMap((r) => r.names.filter((n) => n in pkg.dependencies).map((n) => `${n}: marked (dev) but a runtime dependency`));
    expect(wrong).toEqual([]);
  });
});
