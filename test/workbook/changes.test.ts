/**
 * Issue #15 "Show changes" in the workbook emulator: the change record a delta keeps, the highlight
 * (two conditional formats reading a mask) and everything that removes it; a user's own formats and
 * the settings are never touched.
 */
import { Workbook, createEmulatedContext, createRequestContext, serializeWorkbook, snapshot, toWorkbookFile } from "../../src/emulator";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { ADDED_FILL, CHANGED_FILL, changeSheetName, clearChanges, highlightRule, isHighlightRule, readChangeState, showChanges } from "../../src/workbook/changes";
import { parseRecordHeader } from "../../src/refresh/changeRecord";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { TOKEN, finRows, finTable, imported, rejection } from "./helpers";

const SHEET = "financials (json)";
const MASK = changeSheetName("b1");
const later = () => new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
let generation = 1;
const keyed = (rows: CellValue[][]): RefreshSource => {
  const g = ++generation;
  const at = `2026-02-01T07:00:0${g % 10}Z`;
  return {
    fetch: () =>
      Promise.resolve({
        status: "updated",
        table: finTable(rows, { generatedAt: at, etag: `"e${g}"` }),
        validators: { etag: `"e${g}"`, generatedAt: at },
        key: { candidates: [["project_id"]], origin: "metadata", reason: "the key $metadata declares" },
      }),
  };
};
const failing: RefreshSource = { fetch: () => Promise.reject(Object.assign(new Error("Service unavailable (503)."), { code: "server_error" })) };

/** Rows 11-13 removed, 3 rows added after row 50 (body rows 47-49 afterwards), row 150's name changed (body row 149, column 1). */
function edited(base: CellValue[][], name150: string): CellValue[][] {
  const rows = base.map((r) => [...r]);
  rows[149][1] = name150;
  rows.splice(50, 0, ...[0, 1, 2].map((i) => [1000 + i, `New ${i}`, 1.5, 1, "2024-01-01", "2024-03-10T00:15:00Z", true, "1"] as CellValue[]));
  rows.splice(10, 3);
  return rows;
}

/** Body row i is sheet row 3 + i (info line in row 1, header in row 2). */
const fillAt = (wb: Workbook, bodyRow: number, column: number) => wb.conditionalFillAt(wb.sheetByName(SHEET)!, 2 + bodyRow, column);
const formats = (wb: Workbook) => snapshot(wb).sheets.find((s) => s.name === SHEET)!.conditionalFormats;
const binding = async (wb: Workbook) => (await readBindings(createRequestContext(wb))).bindings[0];

async function deltaRefreshed() {
  const base = finRows(200);
  const { wb } = await imported(base);
  const report = await refreshTable(createRequestContext(wb), "b1", keyed(edited(base, "Renamed")), { applyQuery: noQuery, now: later });
  expect(report.delta).toMatchObject({ strategy: "delta", added: 3, changed: 1, removed: 3 });
  return { wb, base };
}

describe("Show changes: the record a refresh keeps", () => {
  it("a delta keeps a record of its changed cells and added rows on a very hidden sheet named after the binding", async () => {
    const { wb } = await deltaRefreshed();
    const sheet = wb.sheetByName(MASK)!;
    expect(MASK).toMatch(/^ppm_chg_[0-9a-f]{8}$/);
    expect(sheet.visibility).toBe("VeryHidden");
    const header = parseRecordHeader(wb.readValues(sheet, { r0: 0, c0: 0, r1: 0, c1: 0 })[0][0]);
    expect(header).toEqual({ v: 1, id: "b1", rows: 200, cols: 8, parts: 1, mask: false });
    // Only the record: no mask, no format until Show changes is asked for.
    expect(wb.usedRect(sheet, true)).toEqual({ r0: 0, c0: 0, r1: 1, c1: 0 });
    expect(formats(wb)).toEqual([]);
    expect(await readChangeState(createRequestContext(wb), [await binding(wb)])).toEqual(new Map([["b1", { available: true, shown: false }]]));
  });

  it("a full rewrite removes the record (its changes are not known cell by cell)", async () => {
    const { wb, base } = await deltaRefreshed();
    const all = base.map((r, i) => [r[0], `All new ${i}`, ...r.slice(2)]);
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(all), { applyQuery: noQuery, now: later });
    expect(report.delta?.strategy).toBe("full");
    expect(wb.sheetByName(MASK)).toBeUndefined();
    expect((await readChangeState(createRequestContext(wb), [await binding(wb)])).get("b1")).toEqual({ available: false, shown: false });
  });

  it("a failed refresh removes the record and the highlight; the data stays", async () => {
    const { wb } = await deltaRefreshed();
    await showChanges(createRequestContext(wb), await binding(wb));
    const values = toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!.cells;
    const report = await refreshTable(createRequestContext(wb), "b1", failing, { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("failed");
    expect(wb.sheetByName(MASK)).toBeUndefined();
    expect(formats(wb)).toEqual([]);
    const after = toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!.cells;
    expect(after.filter((c) => c.r > 0)).toEqual(values.filter((c) => c.r > 0));
  });

  it("a refresh that finds nothing new keeps the record and the highlight (they still describe the sheet)", async () => {
    const { wb } = await deltaRefreshed();
    await showChanges(createRequestContext(wb), await binding(wb));
    const unchanged: RefreshSource = { fetch: () => Promise.resolve({ status: "unchanged", validators: {} }) };
    const report = await refreshTable(createRequestContext(wb), "b1", unchanged, { applyQuery: noQuery, now: later });
    expect(report.outcome).toBe("unchanged");
    expect(formats(wb)).toHaveLength(2);
  });
});

describe("Show changes: the highlight", () => {
  it("adds exactly two conditional formats over the body: changed cells yellow, added rows green, nothing else", async () => {
    const { wb } = await deltaRefreshed();
    const state = await showChanges(createRequestContext(wb), await binding(wb));
    expect(state).toEqual({ available: true, shown: true });
    expect(formats(wb)).toEqual([
      { id: expect.any(String) as unknown, address: "A3:H202", formula: highlightRule(MASK, 2), fill: ADDED_FILL },
      { id: expect.any(String) as unknown, address: "A3:H202", formula: highlightRule(MASK, 1), fill: CHANGED_FILL },
    ]);
    expect(fillAt(wb, 149, 1)).toBe(CHANGED_FILL);
    for (const r of [47, 48, 49]) for (let c = 0; c < 8; c++) expect(fillAt(wb, r, c)).toBe(ADDED_FILL);
    let highlighted = 0;
    for (let r = 0; r < 200; r++) for (let c = 0; c < 8; c++) if (fillAt(wb, r, c)) highlighted++;
    expect(highlighted).toBe(1 + 3 * 8);
    expect(wb.conditionalFillAt(wb.sheetByName(SHEET)!, 202, 0)).toBeNull(); // under the table
    expect(parseRecordHeader(wb.readValues(wb.sheetByName(MASK)!, { r0: 0, c0: 0, r1: 0, c1: 0 })[0][0]).mask).toBe(true);
  });

  it("clear removes exactly the add-in's formats; a user's own conditional format and fills stay, and Show works again", async () => {
    const { wb } = await deltaRefreshed();
    const context = createEmulatedContext(wb);
    const sheet = context.workbook.worksheets.getItem(SHEET);
    sheet.getRange("B152").format.fill.color = "#FF00FF"; // a user's fill on the changed cell
    sheet.getRange("C100").format.fill.color = "#00FFFF"; // and on an unchanged one
    const own = sheet.getRange("C3:C202").conditionalFormats.add("Custom");
    own.custom.rule.formula = "=C3>100";
    own.custom.format.fill.color = "#FFC7CE";
    await context.sync();
    const fillsBefore = toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!.fills;
    const ownBefore = formats(wb);
    await showChanges(createRequestContext(wb), await binding(wb));
    expect(formats(wb)).toHaveLength(3);
    expect(fillAt(wb, 149, 1)).toBe(CHANGED_FILL); // the highlight shows over the user's fill
    const state = await clearChanges(createRequestContext(wb), await binding(wb));
    expect(state).toEqual({ available: true, shown: false });
    expect(formats(wb)).toEqual(ownBefore);
    expect(toWorkbookFile(wb).sheets.find((s) => s.name === SHEET)!.fills).toEqual(fillsBefore);
    expect(fillAt(wb, 149, 1)).toBeNull();
    await showChanges(createRequestContext(wb), await binding(wb));
    expect(fillAt(wb, 149, 1)).toBe(CHANGED_FILL);
    expect((await readChangeState(createRequestContext(wb), [await binding(wb)])).get("b1")).toEqual({ available: true, shown: true });
  });

  it("the next refresh removes the highlight before writing and records its own changes", async () => {
    const { wb, base } = await deltaRefreshed();
    await showChanges(createRequestContext(wb), await binding(wb));
    const next = edited(base, "Renamed");
    next[5][1] = "Also renamed";
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(next), { applyQuery: noQuery, now: later });
    expect(report.delta).toMatchObject({ strategy: "delta", changed: 1, added: 0, removed: 0 });
    expect(formats(wb)).toEqual([]);
    expect((await readChangeState(createRequestContext(wb), [await binding(wb)])).get("b1")).toEqual({ available: true, shown: false });
    await showChanges(createRequestContext(wb), await binding(wb));
    expect([fillAt(wb, 5, 1), fillAt(wb, 149, 1), fillAt(wb, 47, 0)]).toEqual([CHANGED_FILL, null, null]);
  });

  it("sizes the mask's requests by what the library really sends: scattered one-cell changes stay under the request target", async () => {
    // 30 one-cell changes 200 rows apart: 30 one-cell bands. Each costs ~450 request bytes (the range's
    // framing), not the 152 the mask once guessed (30 × 152 < the target: one ~14 KB request). At a
    // whole sheet, 1 % changed, that guess sent a 5.65 MB request (bench/deltaRefresh.ts 1048574).
    const base = finRows(6_000);
    const { wb } = await imported(base);
    const next = base.map((r, i) => (i % 200 === 7 ? [r[0], `Changed ${i}`, ...r.slice(2)] : r));
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(next), { applyQuery: noQuery, now: later });
    expect(report.delta).toMatchObject({ strategy: "delta", changed: 30, added: 0, removed: 0 });
    const target = 6_000;
    const before = wb.stats.requestBytesPerSync.length;
    await showChanges(createRequestContext(wb), await binding(wb), { targetRequestBytes: target });
    const sent = wb.stats.requestBytesPerSync.slice(before);
    // Every request within the target; the mask took several.
    expect(Math.max(...sent)).toBeLessThanOrEqual(target);
    expect(sent.filter((b) => b > 2_000).length).toBeGreaterThanOrEqual(3);
    expect(fillAt(wb, 7, 1)).toBe(CHANGED_FILL);
    expect(fillAt(wb, 5_807, 1)).toBe(CHANGED_FILL);
    expect(fillAt(wb, 8, 1)).toBeNull();
  });

  it("is refused when nothing is recorded, after a sort, or after rows were added by hand", async () => {
    const { wb: fresh } = await imported(finRows(20));
    expect((await rejection(showChanges(createRequestContext(fresh), await binding(fresh)))).code).toBe("no_changes");

    const { wb } = await deltaRefreshed();
    const context = createEmulatedContext(wb);
    context.workbook.tables.getItem("ppm_financials").sort.apply([{ key: 1, ascending: true }]);
    await context.sync();
    const sorted = await rejection(showChanges(createRequestContext(wb), await binding(wb)));
    expect([sorted.code, sorted.message]).toEqual(["no_changes", expect.stringMatching(/sorted, or rows were added or removed/)]);
    context.workbook.tables.getItem("ppm_financials").sort.clear();
    context.workbook.worksheets.getItem(SHEET).getRange("A10:H10").insert("Down");
    await context.sync();
    expect((await rejection(showChanges(createRequestContext(wb), await binding(wb)))).code).toBe("no_changes");
    expect(formats(wb)).toEqual([]);
  });

  it("writes nothing into the settings (the table lock comes and goes) and no token into the file", async () => {
    const { wb } = await deltaRefreshed();
    const settings = [...wb.settings.entries()];
    await showChanges(createRequestContext(wb), await binding(wb));
    await clearChanges(createRequestContext(wb), await binding(wb));
    await showChanges(createRequestContext(wb), await binding(wb));
    expect([...wb.settings.entries()]).toEqual(settings);
    expect(serializeWorkbook(wb)).not.toContain(TOKEN);
  });

  it("is refused while another runtime refreshes the table (its lock)", async () => {
    const { wb } = await deltaRefreshed();
    const context = createEmulatedContext(wb);
    context.workbook.settings.add("ppm.lock.ppm_financials", JSON.stringify({ owner: "x", holder: "Refresh all on the ribbon", acquiredAt: new Date().toISOString(), expiresAt: "2999-01-01T00:00:00Z" }));
    await context.sync();
    expect((await rejection(showChanges(createRequestContext(wb), await binding(wb)))).code).toBe("table_busy");
  });
});

describe("recognising the highlight's rules", () => {
  it("by the change sheet's name, quoted or not, whatever cell the rule is read for", () => {
    expect(isHighlightRule("='ppm_chg_0a1b2c3d'!B1=1", "ppm_chg_0a1b2c3d")).toBe(true);
    expect(isHighlightRule("=PPM_CHG_0A1B2C3D!XFD1048575=2", "ppm_chg_0a1b2c3d")).toBe(true);
    expect(isHighlightRule("=xppm_chg_0a1b2c3d!B1=1", "ppm_chg_0a1b2c3d")).toBe(false);
    expect(isHighlightRule("=ppm_chg_0a1b2c3e!B1=1", "ppm_chg_0a1b2c3d")).toBe(false);
    expect(isHighlightRule("=C3>100", "ppm_chg_0a1b2c3d")).toBe(false);
    expect(isHighlightRule(null, "ppm_chg_0a1b2c3d")).toBe(false);
  });
});
