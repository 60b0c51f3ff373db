/**
 * The two Office entry points register themselves: the task pane mounts on `Office.onReady`, the
 * ribbon runtime associates `refreshAll` (the manifest's FunctionName). Loaded with a fake `Office`.
 */
import * as fs from "fs";
import * as path from "path";

describe("Office entry points", () => {
  const g = globalThis as unknown as { Office?: unknown };
  const saved = g.Office;
  afterEach(() => {
    g.Office = saved;
    jest.resetModules();
  });

  it("the task pane waits for Office.onReady", () => {
    const ready: Array<() => void> = [];
    g.Office = { onReady: (cb: () => void) => ready.push(cb) };
    jest.isolateModules(() => {
      jest.requireActual("../../src/taskpane/taskpane");
    });
    expect(ready).toHaveLength(1);
  });

  it("the ribbon runtime associates refreshAll, the manifest's function name", () => {
    const ready: Array<() => void> = [];
    const associated = new Map<string, unknown>();
    g.Office = { onReady: (cb: () => void) => ready.push(cb), actions: { associate: (name: string, fn: unknown) => associated.set(name, fn) } };
    jest.isolateModules(() => {
      jest.requireActual("../../src/commands/commands");
    });
    expect(ready).toHaveLength(1);
    ready[0]();
    expect([...associated.keys()]).toEqual(["refreshAll"]);
    expect(typeof associated.get("refreshAll")).toBe("function");
    const manifest = fs.readFileSync(path.join(__dirname, "../../manifest.xml"), "utf8");
    expect(manifest).toContain("<FunctionName>refreshAll</FunctionName>");
  });
});
