/**
 * The two Office entry points register themselves: the task pane mounts on `Office.onReady`, the
 * ribbon runtime associates `refreshAll` and `refreshTable` (the manifest's FunctionNames). Loaded with a fake `Office`.
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

  it("the ribbon runtime associates refreshAll and refreshTable, the manifest's function names", () => {
    const ready: Array<() => void> = [];
    const associated = new Map<string, unknown>();
    g.Office = { onReady: (cb: () => void) => ready.push(cb), actions: { associate: (name: string, fn: unknown) => associated.set(name, fn) } };
    jest.isolateModules(() => {
      jest.requireActual("../../src/commands/commands");
    });
    expect(ready).toHaveLength(1);
    ready[0]();
    expect([...associated.keys()]).toEqual(["refreshAll", "refreshTable"]);
    const manifest = fs.readFileSync(path.join(__dirname, "../../manifest.xml"), "utf8");
    for (const name of associated.keys()) {
      expect(typeof associated.get(name)).toBe("function");
      expect(manifest).toContain(`<FunctionName>${name}</FunctionName>`);
    }
  });
});

/**
 * The shared runtime's manifest (issue 17): the documented shape of "Configure your Office Add-in
 * to use a shared runtime" — `<Runtimes>` first in the Workbook host, the same resid for the
 * runtime, the function file and the task pane, one task pane (no TaskpaneId), and no
 * SharedRuntime requirement (the add-in must still install where it is missing).
 */
describe("manifest: shared runtime", () => {
  const manifest = fs.readFileSync(path.join(__dirname, "../../manifest.xml"), "utf8");
  it("declares one long-lived runtime on the task pane page, used by the function file and the pane", () => {
    expect(manifest).toMatch(/<Host xsi:type="Workbook">\s*(<!--[\s\S]*?-->\s*)?<Runtimes>\s*<Runtime resid="Taskpane.Url" lifetime="long"\/>\s*<\/Runtimes>\s*(<!--[\s\S]*?-->\s*)?(<AllFormFactors>[\s\S]*?<\/AllFormFactors>\s*)?<DesktopFormFactor>/);
    expect(manifest).toContain('<FunctionFile resid="Taskpane.Url"/>');
    expect(manifest).toContain('<SourceLocation resid="Taskpane.Url"/>');
    expect(manifest).not.toContain("<TaskpaneId>");
    expect(manifest).not.toMatch(/<Set Name="SharedRuntime"/);
    expect(manifest).toMatch(/<bt:Url id="Taskpane.Url" DefaultValue="https:\/\/localhost:3000\/taskpane.html"\/>/);
  });
});
