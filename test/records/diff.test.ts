// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import { buildBaseline, parseBaseline, serializeBaseline, baselineIsCurrent, BASELINE_MAX_CELLS, type SheetTable } from "../../src/records/baseline";
import { diffWriteback, indexServiceRows } from "../../src/records/diff";
import type { CustomFieldMeta } from "../../src/records/fields";
import type { SheetValue } from "../../src/records/values";

const FIELDS: CustomFieldMeta[] = [
  { name: "Budget Contingency", numeric: true },
  { name: "Sponsor", numeric: false },
  { name: "Cost Center Code", numeric: false },
];
const COLUMNS = ["project_token", "project_name", "Budget Contingency", "Sponsor", "Cost Center Code"];

/** The sheet as written at import (text columns as text, as the writer does for string custom fields). */
function imported(): SheetTable {
  return {
    columns: [...COLUMNS],
    firstSheetRow: 5,
    rows: [
      ["pt_1", "ERP Migration", "1500.5", "Dana Scully", "00420"],
      ["pt_2", "Warehouse", "25000", "Fox Mulder", "00123"],
      ["pt_3", "Zürich", "", "Zoë Ångström", "01000"],
      ["pt_4", "Lakehouse", "", "", "00420"],
    ],
  };
}

/** The service rows matching the import (model values: null for missing). */
function serviceRows(patch: Record<string, Record<string, unknown>> = {}) {
  const rows: unknown[][] = [
    ["pt_1", "ERP Migration", "1500.5", "Dana Scully", "00420"],
    ["pt_2", "Warehouse", "25000", "Fox Mulder", "00123"],
    ["pt_3", "Zürich", "", "Zoë Ångström", "01000"],
    ["pt_4", "Lakehouse", null, null, "00420"],
  ];
  for (const [tok, fields] of Object.entries(patch)) {
    const r = rows.find((x) => x[0] === tok)!;
    for (const [f, v] of Object.entries(fields)) r[COLUMNS.indexOf(f)] = v;
  }
  return indexServiceRows(COLUMNS.map((name) => ({ name })), rows);
}

function baselineOf(sheet: SheetTable, etag: string | null = "fp1") {
  return buildBaseline(sheet, { bindingId: "b1", tableName: "Projects", etag, tokenColumn: "project_token", now: new Date("2026-01-01T00:00:00Z") });
}

function edit(sheet: SheetTable, token: string, field: string, value: SheetValue): SheetTable {
  const copy = { ...sheet, rows: sheet.rows.map((r) => [...r]) };
  copy.rows.find((r) => r[0] === token)![sheet.columns.indexOf(field)] = value;
  return copy;
}

describe("baseline", () => {
  it("round-trips through storage and holds no cell values", () => {
    const b = baselineOf(imported());
    const json = serializeBaseline(b);
    expect(parseBaseline(json)).toEqual(b);
    expect(json).not.toContain("Dana Scully");
    expect(json).not.toContain("1500.5");
  });
  it("refuses a tampered record without echoing it", () => {
    const b = JSON.parse(serializeBaseline(baselineOf(imported()))) as { rows: Record<string, unknown> };
    b.rows.pt_1 = "x";
    expect(() => parseBaseline(JSON.stringify(b))).toThrow(/rows\.pt_1/);
    expect(() => parseBaseline("{not json")).toThrow(/not valid JSON/);
    expect(() => parseBaseline({ ...b, v: 99 })).toThrow(/invalid at "v"/);
  });
  it("is stale once the binding's content validator changed", () => {
    const b = baselineOf(imported(), "fp1");
    expect(baselineIsCurrent(b, { id: "b1", tableName: "Projects", validators: { etag: "fp1" } })).toBe(true);
    expect(baselineIsCurrent(b, { id: "b1", tableName: "Projects", validators: { etag: "fp2" } })).toBe(false);
    expect(baselineIsCurrent(b, { id: "b2", tableName: "Projects", validators: { etag: "fp1" } })).toBe(false);
  });
  it("marks tables beyond the size bound instead of recording them", () => {
    const rows = Array.from({ length: Math.ceil(BASELINE_MAX_CELLS / 4) + 1 }, (_, i) => [`pt_${i}`, "n", "1", "s", "c"] as SheetValue[]);
    const b = baselineOf({ columns: [...COLUMNS], rows });
    expect(b.tooLarge).toBe(true);
    expect(Object.keys(b.rows)).toHaveLength(0);
  });
  it("drops duplicated tokens", () => {
    const s = imported();
    s.rows.push(["pt_2", "copy", "1", "x", "y"]);
    const b = baselineOf(s);
    expect(b.duplicates).toEqual(["pt_2"]);
    expect(b.rows.pt_2).toBeUndefined();
  });
});

describe("diffWriteback in baseline mode", () => {
  const base = baselineOf(imported());

  it("reports nothing when nothing was edited", () => {
    expect(diffWriteback({ sheet: imported(), fields: FIELDS, baseline: base, service: serviceRows() })).toEqual({ mode: "baseline", changes: [], notes: [] });
  });

  it("reports only the edited cells, with old → new and validation", () => {
    let s = edit(imported(), "pt_1", "Budget Contingency", "12,5");
    s = edit(s, "pt_2", "Budget Contingency", "1,234.5");
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() });
    expect(r.changes).toEqual([
      { row: 1, sheetRow: 5, projectToken: "pt_1", field: "Budget Contingency", old: "1500.5", new: "12,5", validation: { status: "valid" } },
      { row: 2, sheetRow: 6, projectToken: "pt_2", field: "Budget Contingency", old: "25000", new: "1,234.5", validation: { status: "invalid", message: expect.stringMatching(/thousands/i) } },
    ]);
  });

  it("turns a number Excel made from typed input back into a dot decimal", () => {
    const s = edit(imported(), "pt_3", "Budget Contingency", 1234.5);
    const [c] = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() }).changes;
    expect(c).toMatchObject({ new: "1234.5", old: "", validation: { status: "valid" } });
  });

  it("flags a field changed on the service since the import as a conflict, not a change to send", () => {
    const s = edit(imported(), "pt_1", "Sponsor", "Walter Skinner");
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows({ pt_1: { Sponsor: "Monica Reyes" } }) });
    expect(r.changes).toHaveLength(1);
    expect(r.changes[0]).toMatchObject({ old: "Monica Reyes", new: "Walter Skinner", validation: { status: "conflict", message: expect.stringContaining("Monica Reyes") } });
  });

  it("does not report a conflict for a field changed on the service that the user did not touch", () => {
    const r = diffWriteback({ sheet: imported(), fields: FIELDS, baseline: base, service: serviceRows({ pt_1: { Sponsor: "Monica Reyes" } }) });
    expect(r.changes).toEqual([]);
  });

  it("drops edits that equal what the service holds (same change on both sides, or the same number retyped)", () => {
    let s = edit(imported(), "pt_1", "Sponsor", "Monica Reyes");
    s = edit(s, "pt_2", "Budget Contingency", "25000.00");
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows({ pt_1: { Sponsor: "Monica Reyes" } }) });
    expect(r.changes).toEqual([]);
  });

  it("keeps text fields exact: 00420 → 420 is a change", () => {
    const s = edit(imported(), "pt_1", "Cost Center Code", 420);
    const [c] = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() }).changes;
    expect(c).toMatchObject({ old: "00420", new: "420", validation: { status: "valid", warning: expect.stringMatching(/leading zeros/) } });
  });

  it("lists edits outside custom fields as ignored", () => {
    const s = edit(imported(), "pt_2", "project_name", "Renamed");
    const [c] = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() }).changes;
    expect(c).toMatchObject({ field: "project_name", validation: { status: "ignored" } });
  });

  it("rejects clearing a numeric field and Excel error cells before sending", () => {
    let s = edit(imported(), "pt_1", "Budget Contingency", "");
    s = edit(s, "pt_2", "Budget Contingency", { error: "#DIV/0!" });
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() });
    expect(r.changes.map((c) => c.validation.status)).toEqual(["invalid", "invalid"]);
    expect(r.changes[1].validation).toMatchObject({ message: expect.stringContaining("#DIV/0!") });
  });

  it("notes added rows, rows without token and records gone from the service", () => {
    const s = imported();
    s.rows.push(["pt_new", "Added", "5", "x", "y"], [null, "No token", "5", "", ""]);
    const s2 = edit(s, "pt_4", "Sponsor", "Someone");
    const r = diffWriteback({ sheet: s2, fields: FIELDS, baseline: base, service: indexServiceRows(COLUMNS.map((name) => ({ name })), [["pt_1", "ERP Migration", "1500.5", "Dana Scully", "00420"]]) });
    expect(r.notes.map((n) => [n.row, n.projectToken])).toEqual([
      [5, "pt_new"],
      [6, null],
    ]);
    expect(r.changes).toEqual([expect.objectContaining({ projectToken: "pt_4", validation: expect.objectContaining({ status: "conflict", message: expect.stringMatching(/no longer/) }) })]);
  });

  it("refuses edits on a token that now appears on several rows", () => {
    const s = edit(imported(), "pt_1", "Sponsor", "New");
    s.rows.push(["pt_1", "copy", "1500.5", "Dana Scully", "00420"]);
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: base, service: serviceRows() });
    expect(r.changes[0]).toMatchObject({ projectToken: "pt_1", field: "Sponsor", validation: { status: "invalid", message: expect.stringMatching(/several rows/) } });
  });

  it("with unknown custom fields, offers every edited column without numeric checks", () => {
    const s = edit(imported(), "pt_1", "project_name", "Renamed");
    const [c] = diffWriteback({ sheet: s, fields: null, baseline: base, service: serviceRows() }).changes;
    expect(c).toMatchObject({ field: "project_name", validation: { status: "valid" } });
  });
});

describe("diffWriteback in service mode (no usable import record)", () => {
  it("compares custom fields with the service's current values", () => {
    const s = edit(imported(), "pt_1", "Budget Contingency", "99");
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: null, service: serviceRows() });
    expect(r.mode).toBe("service");
    expect(r.changes).toEqual([expect.objectContaining({ projectToken: "pt_1", old: "1500.5", new: "99", validation: { status: "valid" } })]);
  });
  it("treats an empty cell as matching a missing value, and a retyped number as unchanged", () => {
    const s = edit(imported(), "pt_2", "Budget Contingency", 25000);
    expect(diffWriteback({ sheet: s, fields: FIELDS, baseline: null, service: serviceRows() }).changes).toEqual([]);
  });
  it("refuses to guess when neither an import record nor the custom-field list is available", () => {
    const r = diffWriteback({ sheet: imported(), fields: null, baseline: null, service: serviceRows() });
    expect(r.changes).toEqual([]);
    expect(r.notes[0].message).toMatch(/import record/);
  });
  it("uses service mode for a too-large record", () => {
    const big = { ...baselineOf(imported()), tooLarge: true, rows: {} };
    const s = edit(imported(), "pt_1", "Sponsor", "X");
    const r = diffWriteback({ sheet: s, fields: FIELDS, baseline: big, service: serviceRows() });
    expect(r.mode).toBe("service");
    expect(r.changes).toHaveLength(1);
  });
});

describe("numbers in numeric fields, judged by Excel's format (a plain import, no text columns)", () => {
  const sheetNow = (cell: SheetValue, numberFormat: string, text: string): SheetTable => ({
    columns: ["project_token", "Budget Contingency"],
    rows: [["pt_1", cell]],
    shown: { "Budget Contingency": [{ numberFormat, text }] },
  });
  const base = buildBaseline({ columns: ["project_token", "Budget Contingency"], rows: [["pt_1", 1500.5]] }, { bindingId: "b", tableName: "T", etag: null, tokenColumn: "project_token" });
  const service = indexServiceRows([{ name: "project_token" }, { name: "Budget Contingency" }], [["pt_1", 1500.5]]);
  it("a typed 1,234.5 (Excel: 1234.5 with #,##0.00) is invalid and shown as Excel shows it", () => {
    const r = diffWriteback({ sheet: sheetNow(1234.5, "#,##0.00", "1,234.50"), fields: FIELDS, baseline: base, service });
    expect(r.changes).toEqual([expect.objectContaining({ new: "1,234.50", validation: expect.objectContaining({ status: "invalid" }) })]);
  });
  it("a typed 1234.5 in General is valid and shown as sent", () => {
    const r = diffWriteback({ sheet: sheetNow(1234.5, "General", "1234.5"), fields: FIELDS, baseline: base, service });
    expect(r.changes).toEqual([expect.objectContaining({ new: "1234.5", validation: { status: "valid" } })]);
  });
  it("an edit held back after a conflict is sendable again, with a warning naming the service's value", () => {
    const r = diffWriteback({
      sheet: sheetNow(99, "General", "99"),
      fields: FIELDS,
      baseline: base,
      service,
      held: [{ projectToken: "pt_1", field: "Budget Contingency", status: "conflict", message: "m", service: "1500.5", fill: null }],
    });
    expect(r.changes[0].validation).toEqual({ status: "valid", warning: expect.stringContaining('now "1500.5"') });
  });
});
