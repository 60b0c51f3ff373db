import {
  ErrorCodes,
  Workbook,
  officeJs,
  createEmulatedContext,
  createExcelNamespace,
  inspect,
  loadWorkbook,
  run,
  seed,
  serializeWorkbook,
  snapshot,
  dateSerial,
} from "../../src/emulator";

/** Microsoft's `OfficeExtension.Error`: what Excel's failures are, from the library itself. */
type ExcelError = OfficeExtension.Error;
const isExcelError = (e: unknown): e is ExcelError => e instanceof officeJs().OfficeExtension.Error;

/** Resolves to the error code a promise rejects with (fails the test if it resolves). */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isExcelError(e)) return e.code;
    throw e;
  }
  throw new Error("expected the promise to reject");
}

function codeOfSync(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isExcelError(e)) return e.code;
    throw e;
  }
  throw new Error("expected the call to throw");
}

const newWorkbook = (): Workbook => new Workbook({ currentYear: 2025 });

describe("proxy objects: load before read", () => {
  test("reading an unloaded property throws PropertyNotLoaded at once, loaded properties read after sync", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B1", [["x", 2]]);
    const context = createEmulatedContext(wb);
    const range = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B1");
    expect(codeOfSync(() => range.values)).toBe(ErrorCodes.propertyNotLoaded);
    range.load("values, address");
    // Loading is queued: still unreadable before sync.
    expect(codeOfSync(() => range.address)).toBe(ErrorCodes.propertyNotLoaded);
    await context.sync();
    expect(range.values).toEqual([["x", 2]]);
    expect(range.address).toBe("Sheet1!A1:B1");
    expect(codeOfSync(() => range.numberFormat)).toBe(ErrorCodes.propertyNotLoaded);
  });

  test("all load forms: string, array, select/expand object, property bag, no argument", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const a = context.workbook.worksheets.getItem("Sheet1").getRange("B2");
      const b = context.workbook.worksheets.getItem("Sheet1").getRange("B2");
      const c = context.workbook.worksheets.getItem("Sheet1").getRange("B2");
      const d = context.workbook.worksheets.getItem("Sheet1").getRange("B2");
      a.load(["rowIndex", "columnIndex"]);
      b.load({ select: "rowCount", expand: "worksheet" });
      c.load({ columnCount: true, worksheet: { name: true } });
      d.load();
      await context.sync();
      expect([a.rowIndex, a.columnIndex]).toEqual([1, 1]);
      expect(b.rowCount).toBe(1);
      expect(b.worksheet.name).toBe("Sheet1");
      expect(c.columnCount).toBe(1);
      expect(c.worksheet.name).toBe("Sheet1");
      expect(d.text).toEqual([[""]]);
      expect(d.valueTypes).toEqual([["Empty"]]);
    });
  });

  test("collections: items is unreadable until loaded; 'items/name' and 'name' both load item names", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.worksheets.add("Data");
      const sheets = context.workbook.worksheets;
      expect(codeOfSync(() => sheets.items)).toBe(ErrorCodes.propertyNotLoaded);
      sheets.load("items/name");
      await context.sync();
      expect(sheets.items.map((s) => s.name)).toEqual(["Sheet1", "Data"]);
      expect(codeOfSync(() => sheets.items[0].id)).toBe(ErrorCodes.propertyNotLoaded);
    });
  });

  test("isNullObject is readable only after sync; getItem of a missing sheet fails at sync with ItemNotFound", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    const missing = context.workbook.worksheets.getItemOrNullObject("Nope");
    const present = context.workbook.worksheets.getItemOrNullObject("sheet1");
    expect(codeOfSync(() => missing.isNullObject)).toBe(ErrorCodes.propertyNotLoaded);
    await context.sync();
    expect(missing.isNullObject).toBe(true);
    expect(present.isNullObject).toBe(false);
    const bad = context.workbook.worksheets.getItem("Nope");
    bad.load("name");
    expect(await codeOf(context.sync())).toBe(ErrorCodes.itemNotFound);
  });

  test("a property set locally reads back the value set (as office.js caches it), not Excel's parsed value", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const r = context.workbook.worksheets.getActiveWorksheet().getRange("A1");
      r.values = [["+1"]];
      expect(r.values).toEqual([["+1"]]);
      r.load("values");
      await context.sync();
      expect(r.values).toEqual([[1]]);
    });
  });
});

describe("nothing is applied until sync", () => {
  test("writes are queued; the model changes at sync and onChange fires once per applying sync", async () => {
    const wb = newWorkbook();
    const changes: number[] = [];
    wb.onChange(() => changes.push(wb.stats.syncCount));
    const context = createEmulatedContext(wb);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B2");
    r.values = [[1, 2], [3, 4]];
    context.workbook.worksheets.add("Second");
    expect(inspect(wb, "Sheet1!A1:B2").values).toEqual([["", ""], ["", ""]]);
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1"]);
    expect(changes).toEqual([]);
    await context.sync();
    expect(inspect(wb, "Sheet1!A1:B2").values).toEqual([[1, 2], [3, 4]]);
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1", "Second"]);
    expect(changes).toEqual([1]);
    r.load("values");
    await context.sync();
    expect(changes).toEqual([1]);
  });

  test("Excel.run flushes operations still queued when the batch ends, then its objects are dead", async () => {
    const wb = newWorkbook();
    const Excel = createExcelNamespace(wb);
    let leaked: { values: unknown[][] } | undefined;
    await Excel.run(async (context) => {
      const r = context.workbook.worksheets.getItem("Sheet1").getRange("C3");
      r.values = [["late"]];
      leaked = r;
    });
    expect(inspect(wb, "C3").values).toEqual([["late"]]);
    expect(codeOfSync(() => (leaked!.values = [["again"]]))).toBe(ErrorCodes.invalidObjectPath);
  });

  test("a failing operation stops the batch: earlier operations stay applied, later ones are not", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1").values = [["first"]];
    s.getRange("A2:B2").values = [[1, 2, 3]];
    s.getRange("A3").values = [["third"]];
    const err = (await context.sync().catch((e: unknown) => e)) as ExcelError;
    expect(err.code).toBe(ErrorCodes.invalidArgument);
    // The library names the failing statement; the host names where it failed.
    expect(err.debugInfo.errorLocation).toBe("Range.values");
    expect(err.debugInfo.statement).toMatch(/values = /);
    expect(inspect(wb, "A1:A3").values).toEqual([["first"], [""], [""]]);
  });

  test("objects cannot cross request contexts", async () => {
    const wb = newWorkbook();
    const a = createEmulatedContext(wb);
    const b = createEmulatedContext(wb);
    const range = a.workbook.worksheets.getItem("Sheet1").getRange("A1:B2");
    expect(codeOfSync(() => b.workbook.tables.add(range as never, true))).toBe("InvalidRequestContext");
  });
});

describe("request and response payload limits (5 MB per sync)", () => {
  const bigRows = (rows: number, width: number): string[][] =>
    Array.from({ length: rows }, (_, i) => Array.from({ length: 10 }, (_, j) => `${i}-${j}-`.padEnd(width, "x")));

  test("a request over 5 MB is rejected with RequestPayloadSizeLimitExceeded and applies nothing of the batch", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("Z1").values = [["small write in the same batch"]];
    context.workbook.settings.add("k", 1);
    s.getRange("A1:J1000").values = bigRows(1000, 560); // about 5.6 MB of strings
    const err = await context.sync().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(officeJs().OfficeExtension.Error);
    expect((err as ExcelError).code).toBe("RequestPayloadSizeLimitExceeded");
    expect(inspect(wb, "Z1").values).toEqual([[""]]);
    expect(inspect(wb, "A1").values).toEqual([[""]]);
    expect(wb.settings.size).toBe(0);
    expect(wb.stats.rejectedSyncs).toBe(1);
    expect(wb.stats.maxRequestBytes).toBeGreaterThan(5 * 1024 * 1024);
    // The same data in two halves fits.
    const data = bigRows(1000, 560);
    s.getRange("A1:J500").values = data.slice(0, 500);
    await context.sync();
    s.getRange("A501:J1000").values = data.slice(500);
    await context.sync();
    expect(inspect(wb, "J1000").values).toEqual([[data[999][9]]]);
    expect(wb.stats.requestBytesPerSync.slice(-2).every((b) => b < 5 * 1024 * 1024)).toBe(true);
    expect(wb.stats.cellsWritten).toBe(10_000);
  });

  test("loading more than 5 MB in one sync fails with ResponsePayloadSizeLimitExceeded and delivers nothing", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:J1000", bigRows(1000, 560));
    const context = createEmulatedContext(wb);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:J1000");
    r.load("values");
    expect(await codeOf(context.sync())).toBe("ResponsePayloadSizeLimitExceeded");
    expect(codeOfSync(() => r.values)).toBe(ErrorCodes.propertyNotLoaded);
    const half = context.workbook.worksheets.getItem("Sheet1").getRange("A1:J500");
    half.load("values");
    await context.sync();
    expect(half.values).toHaveLength(500);
  });
});

describe("range writes", () => {
  test("dimension mismatch throws InvalidArgument; a scalar or 1x1 array fills the range", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1:B2").values = [[1, 2]];
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
    s.getRange("A1:B2").numberFormat = [["0"], ["0"]];
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
    s.getRange("A1:B2").formulas = [["=1", "=2", "=3"], ["=4", "=5", "=6"]];
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
    s.getRange("A1:B2").values = [[7]];
    s.getRange("C1:C2").values = "z" as never;
    await context.sync();
    expect(inspect(wb, "A1:C2").values).toEqual([[7, 7, "z"], [7, 7, "z"]]);
  });

  test("null leaves a cell unchanged, '' clears it; invalid values are rejected whole", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:C1", [["a", "b", "c"]]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("A1:C1").values = [[null, "", "C"]] as never;
      context.workbook.worksheets.getItem("Sheet1").getRange("A1:C1").numberFormat = [[null, null, "0.00"]] as never;
    });
    expect(inspect(wb, "A1:C1").values).toEqual([["a", "", "C"]]);
    expect(inspect(wb, "A1:C1").numberFormat).toEqual([["General", "General", "0.00"]]);
    for (const bad of [{ a: 1 }, [1], "x".repeat(32768)]) {
      const err = await run(wb, async (context) => {
        context.workbook.worksheets.getItem("Sheet1").getRange("A1:B1").values = [["new", bad]] as never;
        await context.sync();
      }).catch((e: unknown) => e);
      expect((err as ExcelError).code).toBe(ErrorCodes.invalidArgument);
      expect(inspect(wb, "A1").values).toEqual([["a"]]);
    }
  });

  test("undefined, NaN and Infinity reach Excel as null (cell unchanged): the library's JSON; Dates arrive as ISO text", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:D1", [["keep1", "keep2", "keep3", "old"]]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("A1:D1").values = [[undefined, NaN, -Infinity, new Date(Date.UTC(2025, 0, 31))]] as never;
    });
    expect(inspect(wb, "A1:D1").values).toEqual([["keep1", "keep2", "keep3", "2025-01-31T00:00:00.000Z"]]);
    expect(inspect(wb, "D1").valueTypes).toEqual([["String"]]);
  });

  test("ranges of more than five million cells cannot be read or written cell by cell (RangeExceedsLimit)", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("A:E").load("values");
    expect(await codeOf(context.sync())).toBe("RangeExceedsLimit");
    context.workbook.worksheets.getItem("Sheet1").getRange().numberFormat = [["@"]];
    expect(await codeOf(context.sync())).toBe("RangeExceedsLimit");
    context.workbook.worksheets.getItem("Sheet1").getRange().clear();
    const col = context.workbook.worksheets.getItem("Sheet1").getRange("B:B");
    col.load("address");
    await context.sync();
    expect(col.address).toBe("Sheet1!B:B");
  });

  const typed: Array<[string, unknown, string, string]> = [
    // input, value as General, valueType as General, number format Excel applies
    ["=SUM(A1)", 0, "Double", "General"],
    ["+1", 1, "Double", "General"],
    ["-2", -2, "Double", "General"],
    ["@x", "#NAME?", "Error", "General"],
    ["00123", 123, "Double", "General"],
    ["1/2", dateSerial(2025, 1, 2), "Double", "d-mmm"],
    ["1E5", 100000, "Double", "0.00E+00"],
    ["TRUE", true, "Boolean", "General"],
    ["false", false, "Boolean", "General"],
    ["12%", 0.12, "Double", "0%"],
    ["2025-01-31", dateSerial(2025, 1, 31), "Double", "m/d/yyyy"], // office-js #229: ISO text gets the default date format
    ["'abc", "abc", "String", "General"],
    ["'00123", "00123", "String", "General"],
    ["1,234", 1234, "Double", "#,##0"],
    ["12345678901234567890", 12345678901234500000, "Double", "General"],
    ["#N/A", "#N/A", "Error", "General"],
    ["plain text", "plain text", "String", "General"],
  ];

  test.each(typed)("typed input %p in a General cell", async (input, value, valueType, format) => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("B2").values = [[input]];
    });
    const got = inspect(wb, "B2");
    expect(got.values[0][0]).toBe(value);
    expect(got.valueTypes[0][0]).toBe(valueType);
    expect(got.numberFormat[0][0]).toBe(format);
  });

  test.each(typed)("typed input %p in a text (@) cell stays exactly as given", async (input) => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const r = context.workbook.worksheets.getItem("Sheet1").getRange("B2");
      r.numberFormat = [["@"]];
      r.values = [[input]];
    });
    const got = inspect(wb, "B2");
    expect(got.values[0][0]).toBe(input);
    expect(got.valueTypes[0][0]).toBe("String");
    expect(got.formulas[0][0]).toBe(input);
    expect(got.numberFormat[0][0]).toBe("@");
  });

  test("the text format must come first: set after the values, Excel has already parsed them", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1");
      r.values = [["00123"]];
      r.numberFormat = [["@"]];
    });
    expect(inspect(wb, "A1").values).toEqual([[123]]);
  });

  test("formulas are stored and evaluated; '=...' via values is a formula; numbers and booleans stay as given", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      s.getRange("A1:A3").values = [[2], [true], ["=A1*10"]];
      s.getRange("B1:B2").formulas = [["=SUM(A1,A3)"], ["7"]];
      s.getRange("A1").values = [[5]];
    });
    const got = inspect(wb, "A1:B3");
    expect(got.formulas).toEqual([[5, "=SUM(A1,A3)"], [true, 7], ["=A1*10", ""]]);
    expect(got.values).toEqual([[5, 55], [true, 7], [50, ""]]);
    expect(got.valueTypes[1]).toEqual(["Boolean", "Double"]);
  });

  test("text renders number formats", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:F1");
      r.numberFormat = [["0.00", "#,##0.00", "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss", "0%", "General"]];
      const day = dateSerial(2025, 3, 9)!;
      r.values = [[3.14159, 1234567.891, day, day + 0.5, 0.256, 1 / 3]];
    });
    expect(inspect(wb, "A1:F1").text).toEqual([["3.14", "1,234,567.89", "2025-03-09", "2025-03-09 12:00:00", "26%", "0.333333333"]]);
  });

  test("clear(applyTo) clears contents, formats or both", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:C1");
      r.numberFormat = [["0.0", "0.0", "0.0"]];
      r.values = [[1, 2, 3]];
    });
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      s.getRange("A1").clear("Contents");
      s.getRange("B1").clear("Formats");
      s.getRange("C1").clear();
    });
    const got = inspect(wb, "A1:C1");
    expect(got.values).toEqual([["", 2, ""]]);
    expect(got.numberFormat).toEqual([["0.0", "General", "General"]]);
  });
});

describe("grid limits and addresses", () => {
  test("addresses beyond XFD / row 1,048,576 and derived ranges leaving the grid throw InvalidArgument", async () => {
    const wb = newWorkbook();
    const attempts: Array<(s: Excel.Worksheet) => { load(p: string): unknown }> = [
      (s) => s.getRange("XFE1"),
      (s) => s.getRange("A1048577"),
      (s) => s.getRangeByIndexes(1_048_575, 0, 2, 1),
      (s) => s.getRangeByIndexes(0, 16_383, 1, 2),
      (s) => s.getRange("A1").getOffsetRange(-1, 0),
      (s) => s.getRange("XFD1").getResizedRange(0, 1),
      (s) => s.getRange("A1").getCell(1_048_576, 0),
    ];
    for (const make of attempts) {
      const context = createEmulatedContext(wb);
      make(context.workbook.worksheets.getItem("Sheet1")).load("address");
      expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
    }
    const context = createEmulatedContext(wb);
    const s = context.workbook.worksheets.getItem("Sheet1");
    const corner = s.getRange("XFD1048576");
    const col = s.getRange("B:C");
    const cell = s.getRange("B2:D4").getCell(5, 5);
    corner.load("address, rowIndex, columnIndex");
    col.load("address, rowCount");
    cell.load("address");
    await context.sync();
    expect([corner.address, corner.rowIndex, corner.columnIndex]).toEqual(["Sheet1!XFD1048576", 1_048_575, 16_383]);
    expect([col.address, col.rowCount]).toEqual(["Sheet1!B:C", 1_048_576]);
    expect(cell.address).toBe("Sheet1!G7");
  });

  test("sheet names needing quotes are quoted in addresses and accepted in getRange/tables.add", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.worksheets.add("My Sheet");
      await context.sync();
      const t = context.workbook.tables.add("'My Sheet'!B2:C3", true);
      const r = t.getRange();
      r.load("address");
      await context.sync();
      expect(r.address).toBe("'My Sheet'!B2:C3");
    });
  });

  test("worksheet names follow Excel's rules", async () => {
    const wb = newWorkbook();
    for (const [name, code] of [
      ["a/b", ErrorCodes.invalidArgument],
      ["x".repeat(32), ErrorCodes.invalidArgument],
      ["'quoted'", ErrorCodes.invalidArgument],
      ["history", ErrorCodes.invalidArgument],
      ["SHEET1", ErrorCodes.itemAlreadyExists],
    ] as const) {
      const context = createEmulatedContext(wb);
      context.workbook.worksheets.add(name);
      expect(await codeOf(context.sync())).toBe(code);
    }
    expect(wb.sheets).toHaveLength(1);
  });

  test("used range, with and without formatting-only cells; OrNullObject on an empty sheet", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      const empty = s.getUsedRangeOrNullObject(true);
      await context.sync();
      expect(empty.isNullObject).toBe(true);
      s.getRange("B2:C3").values = [[1, 2], [3, 4]];
      s.getRange("E9").numberFormat = [["0.00"]];
      const all = s.getUsedRangeOrNullObject();
      const valuesOnly = s.getUsedRangeOrNullObject(true);
      all.load("address");
      valuesOnly.load("address");
      await context.sync();
      expect(all.address).toBe("Sheet1!B2:E9");
      expect(valuesOnly.address).toBe("Sheet1!B2:C3");
    });
  });
});

describe("tables", () => {
  test("add over a filled range: first row are headers; empty and duplicate headers are renamed", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:D2", [["Name", "", "name", 2024], ["a", 1, 2, 3]]);
    await run(wb, async (context) => {
      const t = context.workbook.worksheets.getItem("Sheet1").tables.add("A1:D2", true);
      t.load("name, id");
      t.columns.load("items/name, count");
      t.rows.load("count");
      await context.sync();
      expect(t.name).toBe("Table1");
      expect(t.columns.items.map((c) => c.name)).toEqual(["Name", "Column2", "name2", "2024"]);
      expect(t.columns.count).toBe(4);
      expect(t.rows.count).toBe(1);
    });
    expect(inspect(wb, "A1:D1").values).toEqual([["Name", "Column2", "name2", "2024"]]);
    expect(inspect(wb, "D1").valueTypes).toEqual([["String"]]);
  });

  test("table names follow Excel's rules and are unique case-insensitively (with defined names)", async () => {
    const wb = newWorkbook();
    wb.addDefinedName("Budget");
    await run(wb, async (context) => {
      context.workbook.tables.add("A1:B3", true);
      context.workbook.tables.add("D1:E3", true);
    });
    const cases: Array<[string, string]> = [
      ["My Table", ErrorCodes.invalidArgument],
      ["1abc", ErrorCodes.invalidArgument],
      ["A1", ErrorCodes.invalidArgument],
      ["XFD1048576", ErrorCodes.invalidArgument],
      ["R1C1", ErrorCodes.invalidArgument],
      ["r", ErrorCodes.invalidArgument],
      ["C", ErrorCodes.invalidArgument],
      ["a-b", ErrorCodes.invalidArgument],
      ["", ErrorCodes.invalidArgument],
      ["x".repeat(256), ErrorCodes.invalidArgument],
      ["TABLE2", ErrorCodes.itemAlreadyExists],
      ["budget", ErrorCodes.itemAlreadyExists],
    ];
    for (const [name, code] of cases) {
      const context = createEmulatedContext(wb);
      context.workbook.tables.getItem("Table1").name = name;
      expect([name, await codeOf(context.sync())]).toEqual([name, code]);
    }
    for (const ok of ["_x", "\\back", "Proj.2025", "ABCD1", "Ünïcode", "table1", "x".repeat(255)]) {
      await run(wb, async (context) => {
        context.workbook.tables.getItemAt(0).name = ok;
      });
      expect(wb.tables[0].name).toBe(ok);
    }
  });

  test("tables cannot overlap (InvalidOperation)", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.tables.add("B2:D5", true);
    });
    const context = createEmulatedContext(wb);
    context.workbook.tables.add("D5:F8", true);
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidOperation);
    expect(wb.tables).toHaveLength(1);
  });

  test("resize keeps name and id, extends calculated columns, enforces header row and overlap rules", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:C3", [["Item", "Qty", "Double"], ["a", 1, null], ["b", 2, null]]);
    const before = await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:C3", true);
      t.name = "Items";
      t.columns.getItem("Double").getDataBodyRange().formulas = [["=[@Qty]*2"]] as never;
      t.load("id");
      await context.sync();
      return t.id;
    });
    expect(inspect(wb, "C2:C3").values).toEqual([[2], [4]]);
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      s.getRange("A4:B5").values = [["c", 3], ["d", 4]];
      const t = context.workbook.tables.getItem("Items");
      t.resize(s.getRange("A1:C5"));
      const body = t.getDataBodyRange();
      t.load("name, id");
      body.load("address, values, formulas");
      await context.sync();
      expect([t.name, t.id]).toEqual(["Items", before]);
      expect(body.address).toBe("Sheet1!A2:C5");
      expect(body.formulas.map((r: unknown[]) => r[2])).toEqual(["=[@Qty]*2", "=[@Qty]*2", "=[@Qty]*2", "=[@Qty]*2"]);
      expect(body.values.map((r: unknown[]) => r[2])).toEqual([2, 4, 6, 8]);
    });
    for (const [target, code] of [
      ["A2:C6", ErrorCodes.invalidArgument], // header row moved
      ["E1:F4", ErrorCodes.invalidArgument], // no overlap with the old range
      ["A1:C1", ErrorCodes.invalidArgument], // no data row
      ["XFD1:XFD2", ErrorCodes.invalidArgument],
    ] as const) {
      const context = createEmulatedContext(wb);
      context.workbook.tables.getItem("Items").resize(target);
      expect([target, await codeOf(context.sync())]).toEqual([target, code]);
    }
    await run(wb, async (context) => {
      context.workbook.tables.add("E1:F3", true);
    });
    const context = createEmulatedContext(wb);
    context.workbook.tables.getItem("Items").resize("A1:E5");
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidOperation);
  });

  test("A1-style calculated columns shift their relative references per row", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B2", [["N", "Twice"], [5, "=A2*2"]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B2", true);
      context.workbook.worksheets.getItem("Sheet1").getRange("A3:A4").values = [[6], [7]];
      t.resize("A1:B4");
    });
    expect(inspect(wb, "B2:B4").formulas).toEqual([["=A2*2"], ["=A3*2"], ["=A4*2"]]);
    expect(inspect(wb, "B2:B4").values).toEqual([[10], [12], [14]]);
  });

  test("a column of mixed formulas is not calculated and new rows stay empty", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B3", [["N", "F"], [1, "=A2+1"], [2, "=A3+100"]]);
    await run(wb, async (context) => {
      context.workbook.tables.add("A1:B3", true).resize("A1:B4");
    });
    expect(inspect(wb, "B4").formulas).toEqual([[""]]);
  });

  test("header, body and column ranges; column names follow header edits; columns.add", async () => {
    const wb = newWorkbook();
    seed(wb, "B2:C4", [["A", "B"], [1, 2], [3, 4]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("Sheet1!B2:C4", true);
      const header = t.getHeaderRowRange();
      const col = t.columns.getItemAt(1).getDataBodyRange();
      header.load("address");
      col.load("address, values");
      await context.sync();
      expect(header.address).toBe("Sheet1!B2:C2");
      expect(col.address).toBe("Sheet1!C3:C4");
      expect(col.values).toEqual([[2], [4]]);
      context.workbook.worksheets.getItem("Sheet1").getRange("C2").values = [[""]];
      t.columns.add(undefined, [["New"], [5], [6]]);
      t.columns.add(0, undefined, "First");
      const names = t.columns.load("items/name");
      const missing = t.columns.getItemOrNullObject("nope");
      await context.sync();
      expect(names.items.map((c) => c.name)).toEqual(["First", "A", "Column2", "New"]);
      expect(missing.isNullObject).toBe(true);
    });
    expect(inspect(wb, "B2:E4").values).toEqual([["First", "A", "Column2", "New"], ["", 1, 2, 5], ["", 3, 4, 6]]);
  });

  test("rows.add inserts rows in bulk, extends calculated columns and is counted", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B2", [["N", "Sq"], [2, "=[@N]*[@N]"]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B2", true);
      t.rows.add(undefined, [[3, null], [4, null]] as never);
    });
    expect(inspect(wb, "A2:B4").values).toEqual([[2, 4], [3, 9], [4, 16]]);
    expect(wb.stats.rowsAddCalls).toBe(1);
  });

  test("sort.apply sorts the body and reapply re-sorts new data by the stored state", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B4", [["Name", "Score"], ["b", 2], ["c", 3], ["a", 1]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B4", true);
      t.sort.apply([{ key: 1, ascending: false }]);
    });
    expect(inspect(wb, "A2:A4").values).toEqual([["c"], ["b"], ["a"]]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("A2:B4").values = [["x", 10], ["y", 30], ["z", 20]];
      const t = context.workbook.tables.getItem("Table1");
      t.sort.reapply();
      t.sort.load("fields");
      await context.sync();
      expect(t.sort.fields).toEqual([{ key: 1, ascending: false }]);
    });
    expect(inspect(wb, "A2:B4").values).toEqual([["y", 30], ["z", 20], ["x", 10]]);
    expect(snapshot(wb).sheets[0].tables[0].sort).toEqual({ fields: [{ key: 1, ascending: false }], matchCase: false });
  });

  test("autoFilter criteria hide rows; reapply evaluates them against new data", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B4", [["Name", "Score"], ["a", 1], ["b", 5], ["c", 9]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B4", true);
      t.autoFilter.apply(t.getRange(), 1, { filterOn: "Custom", criterion1: ">4" });
    });
    expect(snapshot(wb).sheets[0].hiddenRows).toEqual([1]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("B2:B4").values = [[10], [0], [3]];
      context.workbook.tables.getItem("Table1").autoFilter.reapply();
    });
    expect(snapshot(wb).sheets[0].hiddenRows).toEqual([2, 3]);
  });

  test("showTotals adds a totals row below the body; delete clears, convertToRange keeps the cells", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B3", [["K", "V"], ["a", 1], ["b", 2]]);
    seed(wb, "E1:F2", [["K", "V"], ["x", 1]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B3", true);
      t.showTotals = true;
      const body = t.getDataBodyRange();
      const all = t.getRange();
      t.rows.load("count");
      body.load("address");
      all.load("address");
      await context.sync();
      expect([body.address, all.address, t.rows.count]).toEqual(["Sheet1!A2:B3", "Sheet1!A1:B4", 2]);
      const other = context.workbook.tables.add("E1:F2", true);
      const range = other.convertToRange();
      range.load("address");
      t.delete();
      await context.sync();
      expect(range.address).toBe("Sheet1!E1:F2");
    });
    expect(wb.tables).toHaveLength(0);
    expect(inspect(wb, "A1:B4").values.flat().every((v) => v === "")).toBe(true);
    expect(inspect(wb, "E1:F2").values).toEqual([["K", "V"], ["x", 1]]);
  });
});

describe("workbook file: settings and round trip", () => {
  test("settings travel with the file; saving and loading keeps cells, tables and settings", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.add("Data");
      s.getRange("A1:B2").numberFormat = [["@", "0.00"], ["@", "0.00"]];
      s.getRange("A1:B2").values = [["Code", "Cost"], ["007", 1.5]];
      s.tables.add("A1:B2", true).name = "Costs";
      context.workbook.settings.add("ppm.bindings", { tables: [{ name: "Costs", dataset: "projects" }] });
      context.workbook.settings.add("transient", true);
      await context.sync();
      context.workbook.settings.getItem("transient").delete();
    });
    const file = serializeWorkbook(wb);
    const reopened = loadWorkbook(file);
    expect(inspect(reopened, "Data!A1:B2").values).toEqual([["Code", "Cost"], ["007", 1.5]]);
    expect(inspect(reopened, "Data!A2").numberFormat).toEqual([["@"]]);
    await run(reopened, async (context) => {
      const setting = context.workbook.settings.getItem("ppm.bindings");
      const gone = context.workbook.settings.getItemOrNullObject("transient");
      const t = context.workbook.tables.getItem("costs");
      const all = context.workbook.settings;
      setting.load("value");
      all.load("items/key");
      t.load("name");
      await context.sync();
      expect(setting.value).toEqual({ tables: [{ name: "Costs", dataset: "projects" }] });
      expect(gone.isNullObject).toBe(true);
      expect(all.items.map((i) => i.key)).toEqual(["ppm.bindings"]);
      expect(t.name).toBe("Costs");
      // New objects get fresh ids after reopening.
      const added = context.workbook.tables.add("Data!D1:E2", true);
      added.load("id");
      await context.sync();
      expect(reopened.tables.map((x) => x.id).filter((id) => id === added.id)).toHaveLength(1);
    });
    expect(serializeWorkbook(loadWorkbook(serializeWorkbook(reopened)))).toBe(serializeWorkbook(reopened));
  });

  test("a token never written to the workbook is not in the saved file; one written is found", async () => {
    const wb = newWorkbook();
    const token = "tok_9f8e7d6c5b4a";
    await run(wb, async (context) => {
      context.workbook.settings.add("ppm.connection", { baseUrl: "https://ppm.example" });
    });
    expect(serializeWorkbook(wb)).not.toContain(token);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [[token]];
    });
    expect(serializeWorkbook(wb)).toContain(token);
  });

  test("setting values must be JSON; getItem of a missing key is ItemNotFound; bad files give a clear error", async () => {
    const wb = newWorkbook();
    const a = createEmulatedContext(wb);
    // The library itself turns a setting's value into JSON (dates as its own date form) before queuing it:
    // a function has no JSON, so `add` throws at once and nothing is sent.
    expect(() => a.workbook.settings.add("fn", () => 1)).toThrow(SyntaxError);
    await a.sync();
    expect(wb.settings.has("fn")).toBe(false);
    const b = createEmulatedContext(wb);
    b.workbook.settings.getItem("missing").load("value");
    expect(await codeOf(b.sync())).toBe(ErrorCodes.itemNotFound);
    expect(() => loadWorkbook("not json")).toThrow(/Not an emulated workbook file/);
    expect(() => loadWorkbook(JSON.stringify({ format: "emulated-excel-workbook", version: 1, sheets: [{ id: "x" }] }))).toThrow(
      /sheet entry is malformed/,
    );
  });
});

describe("application and selection", () => {
  test("calculationMode loads and sets; manual mode leaves formulas stale until calculate()", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B1", [[1, "=A1+1"]]);
    await run(wb, async (context) => {
      context.application.load("calculationMode");
      await context.sync();
      expect(context.application.calculationMode).toBe("Automatic");
      context.application.calculationMode = "Manual";
    });
    expect(inspect(wb, "B1").values).toEqual([[2]]);
    seed(wb, "A1", [[10]]);
    expect(inspect(wb, "B1").values).toEqual([[2]]);
    await run(wb, async (context) => {
      context.application.calculate("Full");
    });
    expect(inspect(wb, "B1").values).toEqual([[11]]);
  });

  test("suspend calls are counted and do not stop writes", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.application.suspendApiCalculationUntilNextSync();
      context.application.suspendScreenUpdatingUntilNextSync();
      context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [[1]];
    });
    expect(wb.stats.suspendCalculationCalls).toBe(1);
    expect(wb.stats.suspendScreenUpdatingCalls).toBe(1);
    expect(wb.calculationSuspended).toBe(false);
    expect(inspect(wb, "A1").values).toEqual([[1]]);
  });

  test("getSelectedRange and getActiveCell follow the user's selection", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.worksheets.add("Other");
    });
    wb.select("Other!C3:D5");
    await run(wb, async (context) => {
      const sel = context.workbook.getSelectedRange();
      const cell = context.workbook.getActiveCell();
      const active = context.workbook.worksheets.getActiveWorksheet();
      sel.load("address");
      cell.load("address");
      active.load("name");
      await context.sync();
      expect([sel.address, cell.address, active.name]).toEqual(["Other!C3:D5", "Other!C3", "Other"]);
    });
  });
});

describe("more of the API surface", () => {
  test("tables.add with hasHeaders=false inserts a header row and shifts the data down", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B3", [[1, 2], [3, 4], ["below", "x"]]);
    seed(wb, "C1", [["beside"]]);
    await run(wb, async (context) => {
      const t = context.workbook.tables.add("A1:B2", false);
      const r = t.getRange();
      r.load("address, values");
      await context.sync();
      expect(r.address).toBe("Sheet1!A1:B3");
      expect(r.values).toEqual([["Column1", "Column2"], [1, 2], [3, 4]]);
    });
    expect(inspect(wb, "A4:C4").values).toEqual([["below", "x", ""]]);
    expect(inspect(wb, "C1").values).toEqual([["beside"]]);
  });

  test("suspendApiCalculationUntilNextSync: that sync's changes do not recalculate dependants", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B1", [[1, "=A1*10"]]);
    expect(inspect(wb, "B1").values).toEqual([[10]]);
    await run(wb, async (context) => {
      context.application.suspendApiCalculationUntilNextSync();
      context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [[2]];
    });
    expect(inspect(wb, "B1").values).toEqual([[10]]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("C1").values = [["any later change"]];
    });
    expect(inspect(wb, "B1").values).toEqual([[20]]);
  });

  test("worksheets: rename, getItem by id, getCount, delete (never the last one), context.load", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const added = context.workbook.worksheets.add();
      context.load(added, "id, name");
      const count = context.workbook.worksheets.getCount();
      // A method's result is a ClientResult: the library's own ValueNotLoaded until the sync.
      expect(codeOfSync(() => count.value)).toBe("ValueNotLoaded");
      await context.sync();
      expect(added.name).toBe("Sheet2");
      expect(count.value).toBe(2);
      const byId = context.workbook.worksheets.getItem(added.id);
      byId.name = "Renamed";
      await context.sync();
      context.workbook.worksheets.getItem("Sheet1").delete();
      await context.sync();
      context.workbook.worksheets.getItem("Renamed").delete();
      expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidOperation);
    });
    expect(wb.sheets.map((s) => s.name)).toEqual(["Renamed"]);
  });

  test("deleting a worksheet deletes its tables; the table's client objects then fail with ItemNotFound", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.add("Temp");
      const t = s.tables.add("A1:B2", true);
      await context.sync();
      s.delete();
      await context.sync();
      t.load("name");
      expect(await codeOf(context.sync())).toBe(ErrorCodes.itemNotFound);
    });
    expect(wb.tables).toHaveLength(0);
  });

  test("settings.add replaces an existing key; setting.value can be set; getCount counts", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      context.workbook.settings.add("k", 1);
      context.workbook.settings.add("k", [1, 2]);
      context.workbook.settings.add("other", "x");
      await context.sync();
      context.workbook.settings.getItem("other").value = { nested: true };
      const count = context.workbook.settings.getCount();
      const k = context.workbook.settings.getItem("k");
      const other = context.workbook.settings.getItem("other");
      k.load("value");
      other.load("value");
      await context.sync();
      expect([count.value, k.value, other.value]).toEqual([2, [1, 2], { nested: true }]);
    });
  });

  test("worksheet.tables only sees its own tables; workbook.tables.getItem finds by name or id", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const other = context.workbook.worksheets.add("Other");
      context.workbook.tables.add("Sheet1!A1:B2", true);
      const t2 = other.tables.add("A1:B2", true);
      t2.load("id");
      await context.sync();
      const mine = context.workbook.worksheets.getItem("Sheet1").tables;
      const missing = mine.getItemOrNullObject("Table2");
      const byId = context.workbook.tables.getItem(t2.id);
      mine.load("items/name");
      byId.load("name");
      byId.worksheet.load("name");
      await context.sync();
      expect(mine.items.map((t) => t.name)).toEqual(["Table1"]);
      expect(missing.isNullObject).toBe(true);
      expect([byId.name, byId.worksheet.name]).toEqual(["Table2", "Other"]);
    });
  });

  test("getUsedRange on an empty sheet is A1; getBoundingRect and getIntersectionOrNullObject", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      const used = s.getUsedRange();
      const bound = s.getRange("B2:C3").getBoundingRect("E1");
      const inter = s.getRange("B2:C3").getIntersectionOrNullObject(s.getRange("C3:D9"));
      const none = s.getRange("B2:C3").getIntersectionOrNullObject("H8");
      used.load("address");
      bound.load("address");
      inter.load("address");
      await context.sync();
      expect([used.address, bound.address, inter.address, none.isNullObject]).toEqual(["Sheet1!A1", "Sheet1!B1:E3", "Sheet1!C3", true]);
    });
  });

  test("snapshot gives the preview cells, types, display text and table outlines", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      s.getRange("A1:C2").values = [["Name", "When", "Twice"], ["a", "2025-01-31", "=2*2"]];
      s.tables.add("A1:C2", true).name = "T";
    });
    const snap = snapshot(wb);
    expect(snap.activeSheet).toBe("Sheet1");
    const sheet = snap.sheets[0];
    expect(sheet.usedRange).toEqual({ address: "A1:C2", rowIndex: 0, columnIndex: 0, rowCount: 2, columnCount: 3 });
    expect(sheet.cells.filter((c) => c.row === 1).map((c) => [c.address, c.valueType, c.value, c.text, c.formula])).toEqual([
      ["A2", "text", "a", "a", null],
      ["B2", "number", 45688, "1/31/2025", null],
      ["C2", "formula", 4, "4", "=2*2"],
    ]);
    expect(sheet.tables).toEqual([
      expect.objectContaining({ name: "T", address: "A1:C2", headerAddress: "A1:C1", bodyAddress: "A2:C2", columns: ["Name", "When", "Twice"] }),
    ]);
  });
});

describe("calculated columns created by a write (AutoCorrect, on by default)", () => {
  test("a formula written into one cell of an otherwise empty table column fills the column", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B4", [["N", "Double"], [1, null], [2, null], [3, null]]);
    await run(wb, async (context) => {
      context.workbook.tables.add("A1:B4", true);
      await context.sync();
      context.workbook.worksheets.getItem("Sheet1").getRange("B3").values = [["=[@N]*2"]];
    });
    expect(inspect(wb, "B2:B4").values).toEqual([[2], [4], [6]]);
  });

  test("no fill when other cells of the column hold data, or when the option is off", async () => {
    for (const [options, filled] of [[{}, false], [{ autoFillCalculatedColumns: false }, false]] as const) {
      const wb = new Workbook({ currentYear: 2025, ...options });
      seed(wb, "A1:B3", [["N", "Note"], [1, "keep me"], [2, null]]);
      await run(wb, async (context) => {
        context.workbook.tables.add("A1:B3", true);
        await context.sync();
        context.workbook.worksheets.getItem("Sheet1").getRange("B3").values = [["=[@N]*2"]];
      });
      expect(inspect(wb, "B2").values).toEqual([[filled ? 2 : "keep me"]]);
    }
    const off = new Workbook({ currentYear: 2025, autoFillCalculatedColumns: false });
    seed(off, "A1:B3", [["N", "F"], [1, null], [2, null]]);
    await run(off, async (context) => {
      context.workbook.tables.add("A1:B3", true);
      await context.sync();
      context.workbook.worksheets.getItem("Sheet1").getRange("B3").values = [["=[@N]*2"]];
    });
    expect(inspect(off, "B2:B3").formulas).toEqual([[""], ["=[@N]*2"]]);
  });

  test("a request that cannot be serialised (BigInt) never leaves the library: the sync rejects, nothing is applied", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["fine"]];
    context.workbook.worksheets.getItem("Sheet1").getRange("A2").values = [[BigInt(1)]] as never;
    const before = wb.stats.syncCount;
    await expect(context.sync()).rejects.toThrow(/BigInt/);
    expect(wb.stats.syncCount).toBe(before);
    expect(inspect(wb, "A1").values).toEqual([[""]]);
  });
});

describe("formula chains", () => {
  test("a 20,000-row running total evaluates when read from its end (no stack overflow)", async () => {
    const wb = newWorkbook();
    const n = 20_000;
    await run(wb, async (context) => {
      const s = context.workbook.worksheets.getItem("Sheet1");
      s.getRange(`A1:A${n}`).values = Array.from({ length: n }, () => [1]);
      s.getRange("B1").formulas = [["=A1"]];
      s.getRange(`B2:B${n}`).formulas = Array.from({ length: n - 1 }, (_, i) => [`=B${i + 1}+A${i + 2}`]);
    });
    expect(inspect(wb, `B${n}`).values).toEqual([[n]]);
    await run(wb, async (context) => {
      context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [[101]];
    });
    expect(inspect(wb, `B${n}`).values).toEqual([[n + 100]]);
  });

  test("a circular reference reads 0 instead of hanging", async () => {
    const wb = newWorkbook();
    seed(wb, "A1:B1", [["=B1+1", "=A1+1"]]);
    expect(inspect(wb, "A1:B1").valueTypes).toEqual([["Double", "Double"]]);
  });
});

describe("Excel.run variants and load errors", () => {
  test("Excel.run(object, batch) continues in the object's context; run(options, batch) makes a new one", async () => {
    const wb = newWorkbook();
    const Excel = createExcelNamespace(wb);
    // The documented pattern: an object tracked in one batch is used again by a later one.
    let context: Excel.RequestContext | undefined;
    const range = await Excel.run(async (first) => {
      context = first;
      const r = first.workbook.worksheets.getItem("Sheet1").getRange("A1");
      first.trackedObjects.add(r);
      return r;
    });
    await Excel.run(range, async (same) => {
      expect(same).toBe(context);
      range.values = [["via object"]];
    });
    expect(inspect(wb, "A1").values).toEqual([["via object"]]);
    const seen = await Excel.run({ delayForCellEdit: true }, async (fresh) => fresh);
    expect(seen).not.toBe(context);
  });

  test("loading a property that does not exist fails at sync with InvalidArgument", async () => {
    const wb = newWorkbook();
    const context = createEmulatedContext(wb);
    context.workbook.worksheets.getItem("Sheet1").getRange("A1").load("valuez");
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
    // The library sends any path; Excel refuses a navigation property the object does not have.
    context.workbook.worksheets.getItem("Sheet1").load("nope/name");
    expect(await codeOf(context.sync())).toBe(ErrorCodes.invalidArgument);
  });
});

test("as in office.js, a later load of a collection's items replaces the items of an earlier one", async () => {
  const wb = newWorkbook();
  await run(wb, async (context) => {
    const sheets = context.workbook.worksheets;
    sheets.load("items/name");
    sheets.load("items/id");
    await context.sync();
    expect(sheets.items[0].id).toMatch(/^\{/);
    expect(codeOfSync(() => sheets.items[0].name)).toBe(ErrorCodes.propertyNotLoaded);
    sheets.load("items/name, items/id");
    await context.sync();
    expect([sheets.items[0].name, typeof sheets.items[0].id]).toEqual(["Sheet1", "string"]);
  });
});

describe("Range.format.fill (solid fills and No Fill)", () => {
  test("No Fill reads as #FFFFFF with tintAndShade null; a solid fill has a number; mixed ranges read null", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const sheet = context.workbook.worksheets.getItem("Sheet1");
      const a1 = sheet.getRange("A1").format.fill;
      a1.load("color,pattern,tintAndShade");
      await context.sync();
      expect([a1.color, a1.pattern, a1.tintAndShade]).toEqual(["#FFFFFF", "None", null]);
      sheet.getRange("A1").format.fill.color = "#ffc7ce";
      sheet.getRange("B1").format.fill.color = "#FFFFFF";
      const both = sheet.getRange("A1:B1").format.fill;
      both.load("color,tintAndShade");
      const a = sheet.getRange("A1").format.fill;
      a.load("color,pattern,tintAndShade");
      const b = sheet.getRange("B1").format.fill;
      b.load("color,tintAndShade");
      await context.sync();
      expect([a.color, a.pattern, a.tintAndShade]).toEqual(["#FFC7CE", "Solid", 0]);
      // White is a fill, told apart from No Fill only by tintAndShade.
      expect([b.color, b.tintAndShade]).toEqual(["#FFFFFF", 0]);
      expect([both.color, both.tintAndShade]).toEqual([null, null]);
    });
  });

  test("clear() and clear('Formats') remove fills; named colours are refused", async () => {
    const wb = newWorkbook();
    await run(wb, async (context) => {
      const sheet = context.workbook.worksheets.getItem("Sheet1");
      sheet.getRange("A1:C1").format.fill.color = "#00B050";
      sheet.getRange("A1").format.fill.clear();
      sheet.getRange("B1").clear("Formats");
      const f = sheet.getRange("A1:B1").format.fill;
      f.load("tintAndShade");
      const c = sheet.getRange("C1").format.fill;
      c.load("color");
      await context.sync();
      expect(f.tintAndShade).toBeNull();
      expect(c.color).toBe("#00B050");
    });
    expect(
      await codeOf(
        run(wb, async (context) => {
          context.workbook.worksheets.getItem("Sheet1").getRange("A1").format.fill.color = "orange";
          await context.sync();
        }),
      ),
    ).toBe(ErrorCodes.invalidArgument);
  });
});
