/**
 * The emulated host calculates custom functions (issue #28; src/emulator/custom-functions.ts): the
 * registered function is called with the formula's arguments (an omitted optional one as null) and
 * an invocation, `#BUSY!` shows until it answers, streamed results update the cell, a matrix spills,
 * `#SPILL!` when something blocks it, errors carry their message, a changed formula cancels.
 * Formulas are written and read through Microsoft's library.
 */
import { Workbook, createRequestContext, inspect, seed } from "../../src/emulator";
import type { HostInvocation } from "../../src/emulator/custom-functions";

const METADATA = {
  functions: [
    { id: "ECHO", name: "ECHO", parameters: [{ name: "a" }, { name: "b", optional: true }], options: { stream: true } },
    { id: "GRID", name: "GRID", parameters: [{ name: "rows" }, { name: "cols" }], result: { dimensionality: "matrix" as const } },
    { id: "FAIL", name: "FAIL", parameters: [] },
  ],
};

function setup() {
  const wb = new Workbook({ currentYear: 2025, platform: "web" });
  const calls: Array<{ args: unknown[]; inv: HostInvocation }> = [];
  wb.customFunctions.register("ppm", METADATA);
  wb.customFunctions.associate("ECHO", (...args: unknown[]) => {
    const inv = args.pop() as HostInvocation;
    calls.push({ args, inv });
  });
  wb.customFunctions.associate("GRID", (rows: unknown, cols: unknown) =>
    Promise.resolve(Array.from({ length: Number(rows) }, (_, r) => Array.from({ length: Number(cols) }, (_, c) => r * 10 + c))),
  );
  wb.customFunctions.associate("FAIL", () => {
    throw new Error("boom");
  });
  return { wb, calls };
}

async function write(wb: InstanceType<typeof Workbook>, address: string, formulas: string[][]): Promise<void> {
  const context = createRequestContext(wb);
  context.workbook.worksheets.getItem("Sheet1").getRange(address).formulas = formulas;
  await context.sync();
}

async function read(wb: InstanceType<typeof Workbook>, address: string): Promise<unknown[][]> {
  const context = createRequestContext(wb);
  const r = context.workbook.worksheets.getItem("Sheet1").getRange(address);
  r.load("values");
  await context.sync();
  return r.values;
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("custom functions in the emulated host", () => {
  it("#BUSY! until the streaming function sets a result; each result updates the cell; optional arguments are null", async () => {
    const { wb, calls } = setup();
    await write(wb, "A1", [["=PPM.ECHO(\"x\")"]]);
    expect(await read(wb, "A1")).toEqual([["#BUSY!"]]);
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0].args).toEqual(["x", null]);
    expect(calls[0].inv.address).toBe("Sheet1!A1");
    calls[0].inv.setResult(41);
    expect(await read(wb, "A1")).toEqual([[41]]);
    calls[0].inv.setResult(42);
    expect(await read(wb, "A1")).toEqual([[42]]);
    // Recalculating does not call the function again for the same arguments.
    await write(wb, "B1", [["=A1+1"]]);
    expect(await read(wb, "B1")).toEqual([[43]]);
    await tick();
    expect(calls).toHaveLength(1);
  });

  /** A1 holds =PPM.ECHO(1), invoked once; `cancelled()` counts that invocation's cancellations. */
  async function echoInA1() {
    const { wb, calls } = setup();
    await write(wb, "A1", [["=PPM.ECHO(1)"]]);
    await read(wb, "A1");
    await tick();
    let count = 0;
    calls[0].inv.onCanceled = () => count++;
    return { wb, calls, cancelled: () => count };
  }

  it("a changed formula cancels the previous invocation (onCanceled) and starts a new one", async () => {
    const { wb, calls, cancelled } = await echoInA1();
    await write(wb, "A1", [["=PPM.ECHO(2)"]]);
    await read(wb, "A1");
    await tick();
    expect(cancelled()).toBe(1);
    expect(calls.map((c) => c.args[0])).toEqual([1, 2]);
    calls[0].inv.setResult("late"); // a cancelled invocation's result is ignored
    expect(await read(wb, "A1")).toEqual([["#BUSY!"]]);
  });

  it("a full calculation (Ctrl+Alt+F9) cancels every invocation and calls the function anew: #BUSY! until it answers; Recalculate does not", async () => {
    const { wb, calls, cancelled } = await echoInA1();
    calls[0].inv.setResult({ code: "#N/A", message: "waiting" });
    const calculate = async (type: string) => {
      const context = createRequestContext(wb);
      context.workbook.application.calculate(type as Excel.CalculationType);
      await context.sync();
    };
    await calculate("Recalculate");
    await tick();
    expect([calls.length, cancelled(), (await read(wb, "A1"))[0][0]]).toEqual([1, 0, "#N/A"]);
    await calculate("Full");
    expect(await read(wb, "A1")).toEqual([["#BUSY!"]]);
    await tick();
    expect([calls.length, cancelled()]).toEqual([2, 1]);
    calls[0].inv.setResult("late"); // the cancelled invocation's result is ignored
    expect(await read(wb, "A1")).toEqual([["#BUSY!"]]);
    calls[1].inv.setResult(7);
    expect(await read(wb, "A1")).toEqual([[7]]);
  });

  it("a CustomFunctions.Error shows its code, with its message kept for the error indicator; an exception is #VALUE!", async () => {
    const { wb, calls } = setup();
    await write(wb, "A1:B1", [["=PPM.ECHO(1)", "=PPM.FAIL()"]]);
    await read(wb, "A1:B1");
    await tick();
    calls[0].inv.setResult({ code: "#N/A", message: "No row of \"projects\" has project_token = x." });
    expect(await read(wb, "A1:B1")).toEqual([["#N/A", "#VALUE!"]]);
    expect(inspect(wb, "A1").values).toEqual([["#N/A"]]);
    expect(wb.valueAt(wb.sheetByName("Sheet1")!, 0, 0)).toEqual({ error: "#N/A", message: "No row of \"projects\" has project_token = x." });
  });

  it("a matrix spills from its cell; a value in the way makes #SPILL!, and clearing it lets the array spill", async () => {
    const { wb } = setup();
    await write(wb, "A1", [["=PPM.GRID(2,3)"]]);
    await read(wb, "A1");
    await tick();
    expect(await read(wb, "A1:C2")).toEqual([[0, 1, 2], [10, 11, 12]]);
    seed(wb, "E5", [["in the way"]]);
    await write(wb, "D4", [["=PPM.GRID(2,2)"]]);
    await read(wb, "D4");
    await tick();
    expect(await read(wb, "D4:E5")).toEqual([["#SPILL!", ""], ["", "in the way"]]);
    await write(wb, "E5", [[""]]);
    expect(await read(wb, "D4:E5")).toEqual([[0, 1], [10, 11]]);
  });

  it("unknown names stay #NAME?; too few arguments is #VALUE!; an error argument passes through uncalled", async () => {
    const { wb, calls } = setup();
    await write(wb, "A1:C1", [["=PPM.NOPE(1)", "=PPM.ECHO()", "=PPM.ECHO(1/0)"]]);
    await read(wb, "A1:C1");
    await tick();
    expect(await read(wb, "A1:C1")).toEqual([["#NAME?", "#VALUE!", "#DIV/0!"]]);
    expect(calls).toHaveLength(0);
  });
});
