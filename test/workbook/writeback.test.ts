/**
 * The Records Excel adapter in the workbook emulator, with the real writer, the real refresh engine
 * and the reference service over loopback HTTP: import the projects snapshot, get it ready for
 * editing, type into cells as a user would, preview, confirm, and read the refreshed sheet: unsent
 * edits survive the refresh as typed and marked, number formats are left alone.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { sourceFromClient } from "../../src/refresh/source";
import { refreshTable } from "../../src/workbook/refresh";
import {
  afterTableRefresh,
  beforeTableRefresh,
  ownFill,
  readBaseline,
  readTableCells,
  recordImportBaseline,
  selectedRecord,
  writeRecordSheet,
  toSheetValues,
} from "../../src/workbook/writeback";
import { confirmWriteback, discardHeld, MARK_FILL, prepareForEditing, prepareWriteback, type WritebackDeps } from "../../src/records";
import { inspect } from "../../src/emulator";
import { CONTROL } from "../helpers/control";
import { importedProjects } from "./helpers";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await startReferenceService({ port: 0 });
});
afterAll(async () => {
  await svc.close();
});
beforeEach(async () => {
  await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: CONTROL });
});

async function importProjects() {
  const t = await importedProjects(svc.url);
  const { run } = t;
  const imported = t;
  /** Types into one cell of the table as a user would (Excel's typed-input rules apply). */
  const type = async (token: string, field: string, text: string) => {
    const cells = await run((context) => readTableCells(context, imported.tableName));
    const r = cells.rows.findIndex((row) => row[cells.columns.indexOf("project_token")] === token);
    await run(async (context) => {
      const col = context.workbook.tables.getItem(imported.tableName).columns.getItem(field).getDataBodyRange();
      col.getCell(r, 0).values = [[text]];
      await context.sync();
    });
  };
  const cell = async (token: string, field: string) => {
    const cells = await run((context) => readTableCells(context, imported.tableName));
    const row = cells.rows.find((x) => x[cells.columns.indexOf("project_token")] === token)!;
    return row[cells.columns.indexOf(field)];
  };
  return { ...t, type, cell };
}

/** Number format and fill of one cell of the table, read straight from the emulated workbook. */
async function look(t: Awaited<ReturnType<typeof importProjects>>, token: string, field: string) {
  return t.run(async (context) => {
    const table = context.workbook.tables.getItem(t.tableName);
    const cells = await readTableCells(context, t.tableName);
    const r = cells.rows.findIndex((x) => x[cells.columns.indexOf("project_token")] === token);
    const cell = table.columns.getItem(field).getDataBodyRange().getCell(r, 0);
    cell.load("numberFormat,values,text");
    // The fill is a navigation (no read before sync); the office-addins rule cannot tell it apart from a property read.
    // eslint-disable-next-line office-addins/load-object-before-read, office-addins/call-sync-before-read
    const fill = cell.format.fill;
    fill.load("color,tintAndShade");
    await context.sync();
    return { value: cell.values[0][0] as unknown, format: String((cell.numberFormat as unknown as unknown[][])[0][0]), text: cell.text[0][0], fill: fill.tintAndShade === null ? null : fill.color };
  });
}

/** Number formats of a whole column's body. */
async function columnFormats(t: Awaited<ReturnType<typeof importProjects>>, field: string): Promise<string[]> {
  return t.run(async (context) => {
    const body = context.workbook.tables.getItem(t.tableName).columns.getItem(field).getDataBodyRange();
    body.load("numberFormat");
    await context.sync();
    return (body.numberFormat as unknown as unknown[][]).map((r) => String(r[0]));
  });
}

const BUDGET = "Budget Contingency";

describe("write-back in the workbook emulator", () => {
  it("a plain import: numeric custom fields are numbers in General, and the import record is usable at once", async () => {
    const t = await importProjects();
    expect(new Set(await columnFormats(t, BUDGET))).toEqual(new Set(["General"]));
    await t.run((ctx) => recordImportBaseline(ctx, t.binding));
    await t.type("pt_acme_0001", BUDGET, "12,5");
    await t.type("pt_acme_0002", BUDGET, "1,234.5");
    await t.type("pt_acme_0004", BUDGET, "2500.75");
    // Excel read `1,234.5` as a number and gave the cell a thousands format: the trace write-back reads.
    expect(await look(t, "pt_acme_0002", BUDGET)).toMatchObject({ value: 1234.5, format: "#,##0.00", text: "1,234.50" });
    const preview = await prepareWriteback(t.deps, t.binding);
    expect(preview.mode).toBe("baseline");
    expect(preview.changes.map((c) => [c.projectToken, c.new, c.validation.status])).toEqual([
      ["pt_acme_0001", "12,5", "valid"],
      ["pt_acme_0002", "1,234.50", "invalid"],
      ["pt_acme_0004", "2500.75", "valid"],
    ]);
    expect((preview.changes[1].validation as { message?: string }).message).toMatch(/Thousands separators.*Type 1234\.5 instead\. The cell now holds the text "1,234\.50", so what you type next is read exactly as typed\./);
    // It looks the same, as text: the next typing is seen as typed (issue #25).
    expect(await look(t, "pt_acme_0002", BUDGET)).toMatchObject({ value: "1,234.50", format: "@", text: "1,234.50" });
  });

  it("a correct retype over a refused formatted number is judged as typed (issue #25): 1234.5 is sent, 1,234.5 again is refused as typed", async () => {
    const t = await importProjects();
    await t.run((ctx) => recordImportBaseline(ctx, t.binding));
    await t.type("pt_acme_0002", BUDGET, "1,234.5");
    expect((await prepareWriteback(t.deps, t.binding)).changes.map((c) => [c.new, c.validation.status])).toEqual([["1,234.50", "invalid"]]);
    // Retyped as the message asks, without touching the number format.
    await t.type("pt_acme_0002", BUDGET, "1234.5");
    const fixed = await prepareWriteback(t.deps, t.binding);
    expect(fixed.changes.map((c) => [c.new, c.validation.status])).toEqual([["1234.5", "valid"]]);
    // The same mistake again is refused with exactly what was typed.
    await t.type("pt_acme_0002", BUDGET, "1,234.5");
    const again = await prepareWriteback(t.deps, t.binding);
    expect(again.changes.map((c) => [c.new, c.validation.status])).toEqual([["1,234.5", "invalid"]]);
    const done = await confirmWriteback(t.deps, fixed);
    expect(done.summary).toMatchObject({ saved: 1 });
    expect(await t.records.getRecord("project", "pt_acme_0002")).toMatchObject({ [BUDGET]: "1234.5" });
  });

  it("valid, invalid and conflicting edits: only the valid ones are sent, the others survive the refresh as typed, marked, then are discarded", async () => {
    const t = await importProjects();
    await t.run((ctx) => recordImportBaseline(ctx, t.binding));
    // A user's own fill under a cell that will be held must come back exactly.
    await t.run(async (ctx) => {
      const cells = await readTableCells(ctx, t.tableName);
      const r = cells.rows.findIndex((x) => x[cells.columns.indexOf("project_token")] === "pt_acme_0002");
      ctx.workbook.tables.getItem(t.tableName).columns.getItem(BUDGET).getDataBodyRange().getCell(r, 0).format.fill.color = "#00B050";
      await ctx.sync();
    });
    await t.type("pt_acme_0001", BUDGET, "12,5");
    await t.type("pt_acme_0002", BUDGET, "1,234.5");
    await t.type("pt_acme_0003", "Sponsor", "Walter Skinner");
    await t.records.updateRecord("project", "pt_acme_0003", { custom_fields: { Sponsor: "Monica Reyes" } });
    const preview = await prepareWriteback(t.deps, t.binding);
    // Detect changes gave the refused number the text Excel showed, as text (issue #25).
    const typed2 = await look(t, "pt_acme_0002", BUDGET);
    expect(typed2).toMatchObject({ value: "1,234.50", format: "@", text: "1,234.50" });
    expect(preview.changes.map((c) => [c.projectToken, c.validation.status])).toEqual([
      ["pt_acme_0001", "valid"],
      ["pt_acme_0002", "invalid"],
      ["pt_acme_0003", "conflict"],
    ]);
    const done = await confirmWriteback(t.deps, preview);
    expect(done.summary).toMatchObject({ saved: 1, notSent: 2 });
    expect(done.refresh).toMatchObject({ outcome: "updated" });
    expect(done.heldWarning).toBeUndefined();
    // Saved: the service's normalised value, in the column's format.
    expect(await look(t, "pt_acme_0001", BUDGET)).toMatchObject({ value: 12.5, format: "General", fill: null });
    // Not sent: what the cell held (the text Excel showed for what was typed), marked.
    expect(await look(t, "pt_acme_0002", BUDGET)).toEqual({ ...typed2, fill: MARK_FILL });
    expect(await look(t, "pt_acme_0003", "Sponsor")).toMatchObject({ value: "Walter Skinner", fill: MARK_FILL });
    expect(done.held.map((h) => [h.projectToken, h.status, h.fill])).toEqual([
      ["pt_acme_0002", "invalid", { pattern: "Solid", color: "#00B050" }],
      ["pt_acme_0003", "conflict", { pattern: "None" }],
    ]);
    // The rest of the numeric column keeps its number format.
    const formats = await columnFormats(t, BUDGET);
    expect(formats.filter((f) => f !== "General")).toEqual(["@"]);
    // The service kept the other person's value.
    expect(await t.records.getRecord("project", "pt_acme_0003")).toMatchObject({ Sponsor: "Monica Reyes" });

    // Listed again on the next look, with the conflict now a deliberate overwrite.
    const again = await prepareWriteback(t.deps, t.binding);
    expect(again.changes.map((c) => [c.projectToken, c.new, c.validation.status])).toEqual([
      ["pt_acme_0002", "1,234.50", "invalid"],
      ["pt_acme_0003", "Walter Skinner", "valid"],
    ]);
    expect(again.held).toHaveLength(2);

    // Discard: the service's values and the cells' own fills and the column's format come back.
    expect(await discardHeld(t.deps, t.binding, again.fields)).toEqual([]);
    expect(await look(t, "pt_acme_0002", BUDGET)).toMatchObject({ value: 25000, format: "General", fill: "#00B050" });
    expect(await look(t, "pt_acme_0003", "Sponsor")).toMatchObject({ value: "Monica Reyes", format: "@", fill: null });
    expect(new Set(await columnFormats(t, BUDGET))).toEqual(new Set(["General"]));
    expect((await prepareWriteback(t.deps, t.binding)).changes).toEqual([]);
  });

  it("Discard writes the service's text back as text, also in a column the user formatted General (security review, 2026-11-30)", async () => {
    const t = await importProjects();
    await t.run((ctx) => recordImportBaseline(ctx, t.binding));
    await t.run(async (ctx) => {
      ctx.workbook.tables.getItem(t.tableName).columns.getItem("Sponsor").getDataBodyRange().numberFormat = [["General"]];
      await ctx.sync();
    });
    await t.type("pt_acme_0003", "Sponsor", "Walter Skinner");
    // Meanwhile the service's value becomes a text that Excel would read as a formula.
    const evil = '=CONCAT("pw","ned")';
    await t.records.updateRecord("project", "pt_acme_0003", { custom_fields: { Sponsor: evil } });
    const preview = await prepareWriteback(t.deps, t.binding);
    expect(preview.changes.map((c) => [c.projectToken, c.validation.status])).toEqual([["pt_acme_0003", "conflict"]]);
    const done = await confirmWriteback(t.deps, preview);
    expect(done.held.map((h) => h.projectToken)).toEqual(["pt_acme_0003"]);
    expect(await discardHeld(t.deps, t.binding, preview.fields)).toEqual([]);
    // Before the fix the cell held the live formula and showed "pwned".
    const after = await look(t, "pt_acme_0003", "Sponsor");
    expect(after).toMatchObject({ value: evil, format: "General", text: evil });
    const type = await t.run(async (context) => {
      const table = context.workbook.tables.getItem(t.tableName);
      const cells = await readTableCells(context, t.tableName);
      const r = cells.rows.findIndex((x) => x[cells.columns.indexOf("project_token")] === "pt_acme_0003");
      const cell = table.columns.getItem("Sponsor").getDataBodyRange().getCell(r, 0);
      cell.load("valueTypes");
      await context.sync();
      return cell.valueTypes[0][0];
    });
    expect(type).toBe("String");
  });

  it("Start editing takes the import record without touching cells or formats; a failed refresh after sending leaves formats and unsent edits alone", async () => {
    const t = await importProjects();
    // A column the user formatted themselves, and an import from before the import recorded anything.
    await t.run(async (ctx) => {
      ctx.workbook.tables.getItem(t.tableName).columns.getItem(BUDGET).getDataBodyRange().numberFormat = [["0.00"]];
      await ctx.sync();
    });
    const before = await columnFormats(t, BUDGET);
    const ready = await prepareForEditing(t.deps, t.binding);
    expect(ready).toMatchObject({ ready: true, recorded: true });
    expect(await columnFormats(t, BUDGET)).toEqual(before);

    await t.type("pt_acme_0001", BUDGET, "77.5");
    await t.type("pt_acme_0002", BUDGET, "1,234.5");
    const preview = await prepareWriteback(t.deps, t.binding);
    // In a "0.00" cell the display (77.50) is the same number: sent as 77.5. `1,234.5` leaves no
    // trace in a non-General cell: Excel shows 1234.50, which is the number sent.
    expect(preview.changes.map((c) => [c.new, c.validation.status])).toEqual([
      ["77.5", "valid"],
      ["1234.5", "valid"],
    ]);
    const failing: WritebackDeps = { ...t.deps, refresh: async () => ({ outcome: "failed", message: "network down" }) };
    await t.type("pt_acme_0003", BUDGET, "abc");
    const done = await confirmWriteback(failing, await prepareWriteback(t.deps, t.binding));
    expect(done.refresh).toMatchObject({ outcome: "failed" });
    expect(await columnFormats(t, BUDGET)).toEqual(before);
    expect(await look(t, "pt_acme_0003", BUDGET)).toMatchObject({ value: "abc", fill: MARK_FILL });
    expect(done.held.map((h) => h.projectToken)).toEqual(["pt_acme_0003"]);
  });

  it("a refresh from the Refresh tab lifts the marks first and takes a new record", async () => {
    const t = await importProjects();
    await t.run((ctx) => recordImportBaseline(ctx, t.binding));
    await t.type("pt_acme_0001", BUDGET, "x1");
    await confirmWriteback(t.deps, await prepareWriteback(t.deps, t.binding));
    expect(await look(t, "pt_acme_0001", BUDGET)).toMatchObject({ fill: MARK_FILL });
    await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=projects`, { method: "POST", headers: CONTROL });
    await t.records.updateRecord("project", "pt_acme_0005", { custom_fields: { Sponsor: "Someone" } });
    const report = await t.run(async (ctx) => {
      const held = await beforeTableRefresh(ctx, t.binding.id);
      const r = await refreshTable(ctx, t.binding.id, sourceFromClient(t.client));
      await afterTableRefresh(ctx, r.binding, r.outcome, held);
      return r;
    });
    expect(report.outcome).toBe("updated");
    expect(await look(t, "pt_acme_0001", BUDGET)).toMatchObject({ value: 1500.5, fill: null });
    const stored = await t.run((ctx) => readBaseline(ctx, t.binding.id));
    expect(stored?.held).toBeUndefined();
    expect(stored?.etag).toBe(report.binding.validators.etag);
  });

  it("refuses to prepare over pending edits, showing them instead", async () => {
    const t = await importProjects();
    await t.run((context) => recordImportBaseline(context, t.binding));
    await t.type("pt_acme_0003", "Sponsor", "New Sponsor");
    const r = await prepareForEditing(t.deps, t.binding);
    expect(r.ready).toBe(false);
    expect(!r.ready && r.preview.changes.map((c) => c.new)).toEqual(["New Sponsor"]);
  });

  it("finds the record under the selection", async () => {
    const t = await importProjects();
    await t.run(async (context) => {
      context.workbook.tables.getItem(t.tableName).columns.getItem("Sponsor").getDataBodyRange().getCell(1, 0).select();
      await context.sync();
    });
    expect(await t.run((context) => selectedRecord(context))).toEqual({ record: { projectToken: "pt_acme_0002", kind: "project", tableName: t.tableName } });
    await t.run(async (context) => {
      context.workbook.worksheets.add("Elsewhere").getRange("C3").select();
      await context.sync();
    });
    expect((await t.run((context) => selectedRecord(context))).record).toBeNull();
  });

  it("copies a record to a new sheet as exact text", async () => {
    const t = await importProjects();
    const name = await t.run((context) => writeRecordSheet(context, "pt_acme_0001", [["Field", "Value"], ["Cost Center Code", "00420"], ["Formula-looking", "=1+1"]]));
    expect(inspect(t.wb, `'${name}'!A1:B3`).values).toEqual([["Field", "Value"], ["Cost Center Code", "00420"], ["Formula-looking", "=1+1"]]);
    const again = await t.run((context) => writeRecordSheet(context, "pt_acme_0001", [["x"]]));
    expect(again).not.toBe(name);
  });

  it("ownFill: No Fill, a plain solid colour, and what cannot be put back exactly", () => {
    expect(ownFill("#FFFFFF", null, null)).toEqual({ pattern: "None" });
    expect(ownFill("#FFFFFF", "None", null)).toEqual({ pattern: "None" });
    expect(ownFill("#ffffff", "Solid", 0)).toEqual({ pattern: "Solid", color: "#FFFFFF" });
    expect(ownFill("#00B050", "Solid", 0.4)).toBeNull();
    expect(ownFill("#00B050", "Gray50", 0)).toBeNull();
    expect(ownFill("orange", "Solid", 0)).toBeNull();
  });

  it("reads error cells as errors and empty cells as null", () => {
    expect(toSheetValues([["#DIV/0!", "", 3, "x"]], [["Error", "Empty", "Double", "String"]])).toEqual([[{ error: "#DIV/0!" }, null, 3, "x"]]);
  });
});
