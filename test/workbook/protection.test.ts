/**
 * Issue #35: import, refresh, write-back and recovery find sheet protection and workbook structure
 * protection before they write anything: one clear message each (what is protected, that nothing was
 * written, what to do), and the saved workbook (`serializeWorkbook`, settings included) is exactly as
 * before. Protection itself is the emulated host's (docs: Excel.WorksheetProtection,
 * Excel.WorkbookProtection; test/emulator/protection.test.ts).
 */
import { Workbook, createRequestContext, inspect, serializeWorkbook, toWorkbookFile } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { markerKey, recoverInterruptedRefreshes } from "../../src/workbook/recovery";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { readTableCells, recordImportBaseline } from "../../src/workbook/writeback";
import { confirmWriteback, prepareWriteback } from "../../src/records";
import type { Table } from "../../src/table/model";
import { bindingDraft, finRows, finTable, fixedNow, importedProjects, keyedSource, rejection, TOKEN } from "./helpers";
import { CONTROL } from "../helpers/control";

const T0 = Date.parse("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
const SHEET = "financials (json)";
const SAID = /Nothing was (sent or )?written\./;

async function protectSheet(wb: Workbook, name: string): Promise<void> {
  const ctx = createRequestContext(wb);
  ctx.workbook.worksheets.getItem(name).protection.protect();
  await ctx.sync();
}
async function protectStructure(wb: Workbook): Promise<void> {
  const ctx = createRequestContext(wb);
  ctx.workbook.protection.protect();
  await ctx.sync();
}

/** A workbook with one bound table (b1: info A1, header A2, 12 rows). */
async function bound(): Promise<Workbook> {
  const wb = new Workbook({ currentYear: 2025 });
  const t = finTable(finRows(12));
  await importTable(createRequestContext(wb), t, { binding: bindingDraft(t, "b1"), secrets: [TOKEN], now: fixedNow });
  return wb;
}

describe("import", () => {
  it("into a protected sheet: refused before writing, the message names the sheet and what to do; the workbook is unchanged", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    await protectSheet(wb, "Sheet1");
    const before = serializeWorkbook(wb);
    const t = finTable(finRows(5));
    const e = await rejection(importTable(createRequestContext(wb), t, { binding: bindingDraft(t), target: { sheetName: "Sheet1", anchor: "B2" }, secrets: [TOKEN] }));
    expect(e.code).toBe("protected");
    expect(e.message).toMatch(/sheet "Sheet1" is protected/);
    expect(e.message).toMatch(SAID);
    expect(e.message).toMatch(/Unprotect the sheet \(Review › Unprotect Sheet\) or import to a new sheet/);
    expect(serializeWorkbook(wb)).toBe(before);
  });

  it("to a new sheet under structure protection: refused before writing (no sheet added); into an existing sheet it runs, without adding the hidden fingerprint sheets", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    await protectStructure(wb);
    const before = serializeWorkbook(wb);
    const t = finTable(finRows(5));
    const e = await rejection(importTable(createRequestContext(wb), t, { binding: bindingDraft(t), secrets: [TOKEN] }));
    expect(e.code).toBe("protected");
    expect(e.message).toMatch(/structure is protected, so the import cannot add the sheet "financials \(json\)"/);
    expect(e.message).toMatch(SAID);
    expect(e.message).toMatch(/Import into an existing sheet instead/);
    expect(serializeWorkbook(wb)).toBe(before);
    const r = await importTable(createRequestContext(wb), t, { binding: bindingDraft(t), target: { sheetName: "Sheet1", anchor: "A1" }, secrets: [TOKEN] });
    expect(r.rowCount).toBe(5);
    expect(toWorkbookFile(wb).sheets.map((s) => s.name)).toEqual(["Sheet1"]);
  });
});

describe("refresh", () => {
  for (const what of ["a protected sheet", "structure protection"] as const) {
    it(`on ${what}: refused before writing with one message; no binding, status, log, info line or hidden sheet changes`, async () => {
      const wb = await bound();
      if (what === "a protected sheet") await protectSheet(wb, SHEET);
      else await protectStructure(wb);
      const before = serializeWorkbook(wb);
      for (const delta of [true, false]) {
        const report = await refreshTable(createRequestContext(wb), "b1", keyedSource(finRows(14, 3)), { applyQuery: noQuery, now: () => new Date(T0), delta });
        expect(report.outcome).toBe("failed");
        expect(report.failure?.code).toBe("protected");
        expect(report.failure?.message).toMatch(what === "a protected sheet" ? /"ppm_financials" is on the protected sheet "financials \(json\)".*Unprotect the sheet \(Review › Unprotect Sheet\), refresh, then protect it again/ : /structure is protected.*Unprotect the workbook \(Review › Protect Workbook\), refresh, then protect it again/);
        expect(report.failure?.message).toMatch(SAID);
        expect(report.warnings).toEqual([]);
        expect(serializeWorkbook(wb)).toBe(before);
      }
    });
  }
});

describe("recovery of an interrupted refresh", () => {
  /** A refresh whose runtime died at its first write to the table's body: marker, copy and DATA INCOMPLETE left. */
  async function interrupted(): Promise<Workbook> {
    const wb = await bound();
    let dead = false;
    wb.faultInjector = (op) => {
      if (op.op === "set values" && op.path.includes(SHEET) && !op.path.endsWith("!A1")) dead = true;
      return dead ? new Error("the runtime is gone") : null;
    };
    await refreshTable(createRequestContext(wb), "b1", keyedSource(finRows(12, 9)), { applyQuery: noQuery, now: () => new Date(T0), delta: false }).catch(() => null);
    wb.faultInjector = null;
    expect(wb.settings.has(markerKey("b1"))).toBe(true);
    expect(String(inspect(wb, `'${SHEET}'!A1`).values[0][0])).toMatch(/DATA INCOMPLETE/);
    return wb;
  }

  for (const what of ["a protected sheet", "structure protection"] as const) {
    it(`on ${what}: reported failed with what to do, nothing written, the marker kept; once unprotected the next start puts the table back`, async () => {
      const wb = await interrupted();
      if (what === "a protected sheet") await protectSheet(wb, SHEET);
      else await protectStructure(wb);
      // Within the dead refresh's lease a start leaves the table alone (as without protection).
      expect((await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 60_000) })).map((r) => r.outcome)).toEqual(["skipped"]);
      const before = serializeWorkbook(wb);
      const out = await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 11 * 60_000) });
      expect(out.map((r) => r.outcome)).toEqual(["failed"]);
      expect(out[0].message).toMatch(what === "a protected sheet" ? /its sheet "financials \(json\)" is protected/ : /structure is protected/);
      expect(out[0].message).toMatch(/Nothing was written\. Unprotect it; the add-in puts the table back the next time it starts/);
      expect(serializeWorkbook(wb)).toBe(before);
      const ctx = createRequestContext(wb);
      if (what === "a protected sheet") ctx.workbook.worksheets.getItem(SHEET).protection.unprotect();
      else ctx.workbook.protection.unprotect();
      await ctx.sync();
      const again = await recoverInterruptedRefreshes(createRequestContext(wb), { now: () => new Date(T0 + 12 * 60_000) });
      expect(again.map((r) => r.outcome)).toEqual(["restored"]);
      expect(String(inspect(wb, `'${SHEET}'!A1`).values[0][0])).toMatch(/previous data was restored/);
    });
  }
});

describe("write-back", () => {
  let svc: ReferenceService;
  beforeAll(async () => {
    svc = await startReferenceService({ port: 0, quiet: true });
  });
  afterAll(async () => {
    await svc.close();
  });

  async function projects() {
    await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: CONTROL });
    const { wb, run, deps, ...imported } = await importedProjects(svc.url);
    await run((ctx) => recordImportBaseline(ctx, imported.binding));
    // The user types a new Sponsor into the first record.
    await run(async (context) => {
      const cells = await readTableCells(context, imported.tableName);
      const r = cells.rows.findIndex((row) => row[cells.columns.indexOf("project_token")] === "pt_acme_0001");
      context.workbook.tables.getItem(imported.tableName).columns.getItem("Sponsor").getDataBodyRange().getCell(r, 0).values = [["Walter Skinner"]];
      await context.sync();
    });
    return { wb, deps, binding: imported.binding, sheet: imported.sheetName };
  }
  const writes = async () => ((await (await fetch(`${svc.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ method: string }> }).requests.filter((r) => r.method !== "GET").length;

  for (const what of ["a protected sheet", "structure protection"] as const) {
    it(`on ${what}: Detect changes and Send refuse before anything is written or sent, with what to do`, async () => {
      const t = await projects();
      const preview = await prepareWriteback(t.deps, t.binding);
      expect(preview.changes.length).toBeGreaterThan(0);
      if (what === "a protected sheet") await protectSheet(t.wb, t.sheet);
      else await protectStructure(t.wb);
      const before = serializeWorkbook(t.wb);
      const sent = await writes();
      const e1 = await rejection(prepareWriteback(t.deps, t.binding));
      expect(e1.code).toBe("protected");
      expect(e1.message).toMatch(what === "a protected sheet" ? /on the protected sheet "projects \(snapshot\)".*Unprotect the sheet \(Review › Unprotect Sheet\), write back, then protect it again/ : /structure is protected.*Unprotect the workbook \(Review › Protect Workbook\), write back, then protect it again/);
      expect(e1.message).toMatch(/Nothing was sent or written\./);
      const e2 = await rejection(confirmWriteback(t.deps, preview));
      expect(e2.code).toBe("protected");
      expect(e2.message).toBe(e1.message);
      expect(await writes()).toBe(sent);
      expect(serializeWorkbook(t.wb)).toBe(before);
    });
  }
});
