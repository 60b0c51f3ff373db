import { deriveTableName, deriveSheetName, sheetLabel, isValidTableName, isValidSheetName, a1, parseCell, columnLetters } from "../../src/workbook/names";

describe("table names", () => {
  it("are derived from the key, valid, and de-duplicated case-insensitively", () => {
    expect(deriveTableName("financials", [])).toBe("ppm_financials");
    expect(deriveTableName("financials", ["PPM_FINANCIALS"])).toBe("ppm_financials_2");
    expect(deriveTableName("financials", ["ppm_financials", "ppm_financials_2"])).toBe("ppm_financials_3");
    expect(deriveTableName("project resources/2024", [])).toBe("ppm_project_resources_2024");
    for (const key of ["a b", "1abc", "é", "projectResources", "x".repeat(400)]) expect(isValidTableName(deriveTableName(key, []))).toBe(true);
  });

  it("follow Excel's rules", () => {
    for (const bad of ["", "1abc", "A1", "R1C1", "R", "c", "has space", "x".repeat(256), "a-b"]) expect([bad, isValidTableName(bad)]).toEqual([bad, false]);
    for (const good of ["ppm_x", "_x", "Table1.2", "ABCD1"]) expect([good, isValidTableName(good)]).toEqual([good, true]);
  });
});

describe("sheet names", () => {
  it("are valid and unique", () => {
    expect(deriveSheetName("financials", [])).toBe("financials");
    expect(deriveSheetName("financials", ["Financials"])).toBe("financials 2");
    expect(deriveSheetName("a/b:c", [])).toBe("a_b_c");
    expect(deriveSheetName("history", [])).toBe("History data");
    const long = deriveSheetName("x".repeat(40), ["x".repeat(31)]);
    expect(long.length).toBeLessThanOrEqual(31);
    expect(isValidSheetName(long)).toBe(true);
    expect(isValidSheetName("a[b]")).toBe(false);
  });
});

describe("addresses", () => {
  it("round-trip between indexes and A1", () => {
    expect(columnLetters(0)).toBe("A");
    expect(columnLetters(25)).toBe("Z");
    expect(columnLetters(26)).toBe("AA");
    expect(columnLetters(16383)).toBe("XFD");
    expect(a1(0, 0)).toBe("A1");
    expect(a1(1, 0, 3, 12)).toBe("A2:L4");
    expect(parseCell("Sheet1!$C$7")).toEqual({ row: 6, column: 2 });
    expect(() => parseCell("nope")).toThrow(/not a cell address/);
  });
});

describe("sheet labels", () => {
  it("carry the source and its form, as the pane words them", () => {
    expect(sheetLabel({ kind: "dataset", key: "financials", format: "csv" })).toBe("financials (csv)");
    expect(sheetLabel({ kind: "snapshot", endpoint: "projects" })).toBe("projects (snapshot)");
    expect(deriveSheetName(sheetLabel({ kind: "dataset", key: "financials", format: "csv" }), ["financials (csv)"])).toBe("financials (csv) 2");
  });
});
