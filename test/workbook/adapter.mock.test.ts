/**
 * The Office adapter against office-addin-mock: checks the load → sync → read order and the exact
 * calls each helper makes. (Behaviour over whole imports/refreshes is tested against the emulator.)
 */
// office-addin-mock only needs the host enum of office-addin-manifest, whose dependency tree ships
// ESM that Jest's CommonJS runtime cannot load; the enum is stubbed with its real values.
jest.mock("office-addin-manifest", () => ({
  OfficeApp: { Excel: "excel", OneNote: "onenote", Outlook: "outlook", PowerPoint: "powerpoint", Project: "project", Word: "word" },
}));
import { OfficeMockObject } from "office-addin-mock";
import { findOccupiedCell, prepareCalculation } from "../../src/workbook/sheet";
import { saveBinding, deleteBinding } from "../../src/workbook/bindingStore";
import { makeBinding } from "../refresh/fixtures";

type Ctx = Excel.RequestContext;

/**
 * Excel lets `isNullObject` be read after a sync without `load`; office-addin-mock treats it as an
 * ordinary property, so the mock's copy is marked loaded up front (the real order is still checked
 * for every other property).
 */
function preloadIsNullObject(obj: OfficeMockObject): void {
  obj.load("isNullObject");
  void obj.sync();
}

describe("prepareCalculation", () => {
  it("never touches the application's calculation mode and never suspends API calculation (issue #34: the user's mode decides)", async () => {
    const calls: string[] = [];
    const mock = new OfficeMockObject({
      application: {
        calculationMode: "Automatic",
        suspendScreenUpdatingUntilNextSync() { calls.push("screen"); },
        suspendApiCalculationUntilNextSync() { calls.push("api"); },
      },
    }) as unknown as Ctx & { application: { calculationMode: string } };
    const calc = prepareCalculation(mock);
    const guard = calc.start();
    guard.restore();
    await mock.sync();
    mock.application.load("calculationMode");
    await mock.sync();
    expect(mock.application.calculationMode).toBe("Automatic");
    expect(calls).toEqual(["screen"]);
  });
});

describe("findOccupiedCell", () => {
  function sheetWith(used: { rowIndex: number; columnIndex: number; rowCount: number; columnCount: number } | null, formulas: string[][] = []) {
    const asked: number[][] = [];
    const mock = new OfficeMockObject({
      sheet: {
        usedRange: used ? { ...used, isNullObject: false } : { isNullObject: true, rowIndex: 0, columnIndex: 0, rowCount: 0, columnCount: 0 },
        getUsedRangeOrNullObject(this: { usedRange: unknown }) { return this.usedRange; },
        cells: { formulas },
        getRangeByIndexes(this: { cells: unknown }, r: number, c: number, rc: number, cc: number) { asked.push([r, c, rc, cc]); return this.cells; },
      },
    }) as unknown as Ctx & { sheet: Excel.Worksheet };
    preloadIsNullObject((mock.sheet as unknown as { usedRange: OfficeMockObject }).usedRange);
    return { ctx: mock, sheet: mock.sheet, asked };
  }

  it("answers from the used range alone when it does not overlap", async () => {
    const { ctx, sheet, asked } = sheetWith({ rowIndex: 0, columnIndex: 0, rowCount: 5, columnCount: 3 });
    expect(await findOccupiedCell(ctx, sheet, { row: 5, column: 0, rowCount: 10, columnCount: 3 })).toBeNull();
    expect(asked).toEqual([]);
  });

  it("treats a sheet with no used range as empty", async () => {
    const { ctx, sheet } = sheetWith(null);
    expect(await findOccupiedCell(ctx, sheet, { row: 0, column: 0, rowCount: 10, columnCount: 3 })).toBeNull();
  });

  it("loads formulas of the overlap only and names the first occupied cell", async () => {
    const { ctx, sheet, asked } = sheetWith({ rowIndex: 0, columnIndex: 0, rowCount: 8, columnCount: 3 }, [["", "", ""], ["", "=A1", ""]]);
    expect(await findOccupiedCell(ctx, sheet, { row: 6, column: 0, rowCount: 10, columnCount: 3 })).toBe("B8");
    expect(asked).toEqual([[6, 0, 2, 3]]);
  });
});

describe("binding store", () => {
  it("stores bindings as JSON under ppm.binding.<id> and refuses a token", async () => {
    const added: [string, unknown][] = [];
    // A hand-made context: office-addin-mock cannot load collection item paths ("items/key") that the
    // settings budget check reads first.
    const loads: string[] = [];
    const mock = {
      workbook: { settings: { items: [{ key: "other.addin", value: "x" }], load(p: string) { loads.push(p); }, add(k: string, v: unknown) { added.push([k, v]); } } },
      sync: async () => undefined,
    } as unknown as Ctx;
    const b = makeBinding();
    await saveBinding(mock, b, ["demo-acme-token"]);
    expect(added).toHaveLength(1);
    expect(added[0][0]).toBe("ppm.binding.b1");
    expect(JSON.parse(added[0][1] as string)).toEqual(b);
    await expect(saveBinding(mock, { ...b, lastFailure: { at: "t", code: "x", message: "demo-acme-token" } }, ["demo-acme-token"])).rejects.toThrow(/credential/);
    expect(added).toHaveLength(1);
    expect(loads[0]).toBe("items/key,items/value");
  });

  it("deletes only an existing binding", async () => {
    let deleted = 0;
    const mock = new OfficeMockObject({
      workbook: {
        settings: {
          item: { isNullObject: false, delete() { deleted++; } },
          none: { isNullObject: true },
          getItemOrNullObject(k: string) { return k === "ppm.binding.b1" ? this.item : this.none; },
        },
      },
    }) as unknown as Ctx;
    const settings = (mock as unknown as { workbook: { settings: { item: OfficeMockObject; none: OfficeMockObject } } }).workbook.settings;
    preloadIsNullObject(settings.item);
    preloadIsNullObject(settings.none);
    expect(await deleteBinding(mock, "b1")).toBe(true);
    expect(await deleteBinding(mock, "zz")).toBe(false);
    expect(deleted).toBe(1);
  });
});
