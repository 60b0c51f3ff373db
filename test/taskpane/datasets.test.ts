import {
  EMPTY_NOTE,
  NO_EXPORT_NOTE,
  datasetState,
  datasetView,
  filterDatasets,
  formatAbsolute,
  formatRelative,
  importFormats,
  type DatasetEntryLike,
  importedText,
} from "../../src/taskpane/datasets";

const now = new Date("2026-11-21T12:00:00Z");

function entry(over: Partial<DatasetEntryLike> & { artifacts?: DatasetEntryLike["artifacts"] }): DatasetEntryLike {
  return {
    key: "financials",
    name: "Financials",
    schema_version: "3",
    formats: ["json", "csv", "odata"],
    artifacts: { generated_at: "2026-11-21T11:57:00Z", latest_successful_generated_at: "2026-11-21T11:57:00Z", row_count: 1234 },
    ...over,
  };
}

describe("dataset state", () => {
  it("follows the spec: null generation time or null row count = no usable export; 0 rows is valid", () => {
    expect(datasetState(entry({}))).toBe("ready");
    expect(datasetState(entry({ artifacts: { latest_successful_generated_at: null, row_count: 10 } }))).toBe("no_export");
    expect(datasetState(entry({ artifacts: { latest_successful_generated_at: "2026-11-21T11:00:00Z", row_count: null } }))).toBe("no_export");
    expect(datasetState(entry({ artifacts: { latest_successful_generated_at: "2026-11-21T11:00:00Z", row_count: 0 } }))).toBe("empty");
  });

  it("prefers the client's own status when it gives one", () => {
    expect(datasetState(entry({ status: "no_export" }))).toBe("no_export");
  });
});

describe("dataset view", () => {
  it("renders a ready dataset with counts, times and formats", () => {
    const v = datasetView(entry({}), now);
    expect(v).toMatchObject({
      key: "financials",
      name: "Financials",
      schemaVersion: "3",
      state: "ready",
      rowCount: 1234,
      rowsText: "1,234 rows",
      generatedAt: "2026-11-21T11:57:00Z",
      generatedRelative: "3 minutes ago",
      generatedAbsolute: "2026-11-21 11:57 UTC",
      formatsText: "json, csv, odata",
      note: "",
      importable: true,
    });
  });

  it("a never-generated dataset is disabled with the retry note", () => {
    const v = datasetView(entry({ key: "risks", name: undefined, artifacts: { latest_successful_generated_at: null, row_count: null } }), now);
    expect(v).toMatchObject({ name: "risks", state: "no_export", importable: false, note: NO_EXPORT_NOTE, rowsText: "—", generatedRelative: "no export yet" });
    expect(NO_EXPORT_NOTE).toBe("retry after the service's next generation (the add-in never starts one)");
  });

  it("a zero-row dataset is importable and says 0 rows", () => {
    const v = datasetView(entry({ key: "milestones", artifacts: { latest_successful_generated_at: "2026-11-20T12:00:00Z", row_count: 0 } }), now);
    expect(v).toMatchObject({ state: "empty", importable: true, rowsText: "0 rows", note: EMPTY_NOTE, generatedRelative: "1 day ago" });
  });

  it("says 1 row, not 1 rows", () => {
    expect(datasetView(entry({ artifacts: { latest_successful_generated_at: "2026-11-21T11:00:00Z", row_count: 1 } }), now).rowsText).toBe("1 row");
  });
});

describe("time formatting", () => {
  it.each([
    ["2026-11-21T11:59:50Z", "just now"],
    ["2026-11-21T11:59:00Z", "1 minute ago"],
    ["2026-11-21T10:00:00Z", "2 hours ago"],
    ["2026-11-14T12:00:00Z", "7 days ago"],
    ["2026-08-21T12:00:00Z", "3 months ago"],
    ["2024-11-21T12:00:00Z", "2 years ago"],
    ["2026-11-21T14:00:00Z", "in 2 hours"],
  ])("%s is %s", (iso, text) => {
    expect(formatRelative(iso, now)).toBe(text);
  });

  it("returns empty text for missing or malformed times instead of NaN", () => {
    expect(formatRelative(null, now)).toBe("");
    expect(formatRelative("yesterday", now)).toBe("");
    expect(formatAbsolute("garbage")).toBe("");
  });

  it("absolute time reads like the info line: minutes, in UTC, labelled", () => {
    expect(formatAbsolute("2026-01-15T06:00:59Z")).toBe("2026-01-15 06:00 UTC");
    expect(formatAbsolute("2026-01-01T02:30:00+05:30")).toBe("2025-12-31 21:00 UTC");
  });
});

describe("search and formats", () => {
  const list = [
    { key: "financials", name: "Financials" },
    { key: "resource_allocations", name: "Resource allocations" },
    { key: "risks", name: "Risk register" },
  ];
  it("matches key or name, case-insensitively, keeping order", () => {
    expect(filterDatasets(list, "RES").map((d) => d.key)).toEqual(["resource_allocations"]);
    expect(filterDatasets(list, "register").map((d) => d.key)).toEqual(["risks"]);
    expect(filterDatasets(list, "  ").length).toBe(3);
    expect(filterDatasets(list, "nothing")).toEqual([]);
  });

  it("offers known formats only, JSON when none is named", () => {
    expect(importFormats(["CSV", "json", "parquet"])).toEqual(["json", "csv"]);
    expect(importFormats([])).toEqual(["json"]);
  });
});

describe("the line after an import (issue #37: dataset and snapshot lines were worded differently)", () => {
  it("says the same for a dataset, a snapshot and a view: rows, what, sheet › table", () => {
    expect(importedText({ what: "financials", rowCount: 120, sheetName: "financials (json)", tableName: "ppm_financials" })).toBe("Imported 120 rows of financials into financials (json) › ppm_financials.");
    expect(importedText({ what: "Projects", rowCount: 1, sheetName: "projects (snapshot)", tableName: "ppm_projects", warnings: ["A note."] })).toBe("Imported 1 row of Projects into projects (snapshot) › ppm_projects. A note.");
    expect(importedText({ what: "view Top", rowCount: 7, fetchedRows: 120, sheetName: "financials (json) 2", tableName: "ppm_financials_2" })).toBe("Imported 7 rows of view Top into financials (json) 2 › ppm_financials_2 (120 received, local query applied).");
  });
});
