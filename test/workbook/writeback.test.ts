/**
 * The Records Excel adapter in the workbook emulator, with the real writer, the real refresh engine
 * and the reference service over loopback HTTP: import the projects snapshot, get it ready for
 * editing, type into cells as a user would, preview, confirm, and read the refreshed sheet.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient } from "../../src/service/client";
import { bindingColumns } from "../../src/refresh/binding";
import { sourceFromClient } from "../../src/refresh/source";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import {
  excelWritebackWorkbook,
  readBaseline,
  readTableCells,
  recordImportBaseline,
  selectedRecord,
  writeRecordSheet,
  toSheetValues,
} from "../../src/workbook/writeback";
import { confirmWriteback, prepareForEditing, prepareWriteback, recordsServiceFrom, type WritebackDeps } from "../../src/records";
import { createExcelNamespace, inspect, Workbook } from "../../src/emulator";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await startReferenceService({ port: 0 });
});
afterAll(async () => {
  await svc.close();
});
beforeEach(async () => {
  await fetch(`${svc.url}/__control/reset`, { method: "POST" });
});

async function importProjects() {
  const wb = new Workbook({ currentYear: 2026 });
  const Excel = createExcelNamespace(wb);
  const client = new PpmClient({ id: "c1", name: "Acme", baseUrl: svc.url, token: "demo-acme-token", apiAuth: "demo-api-auth", apiSecret: "demo-api-secret" });
  const table = await client.fetchSnapshot("projects");
  const imported = await Excel.run((context) =>
    importTable(context as unknown as Excel.RequestContext, table, {
      binding: {
        v: 1,
        id: "bproj",
        connectionId: "c1",
        environment: svc.url,
        companyId: "acme",
        source: { kind: "snapshot", endpoint: "projects" },
        query: null,
        columns: bindingColumns(table.columns),
        schemaVersion: null,
        validators: { etag: table.meta.etag, lastModified: null, generatedAt: null },
      },
    }),
  );
  const run = <T>(work: (c: Excel.RequestContext) => Promise<T>) => Excel.run((context) => work(context as unknown as Excel.RequestContext));
  const records = recordsServiceFrom(client);
  const deps: WritebackDeps = {
    client: records,
    workbook: excelWritebackWorkbook(run),
    customFields: () => records.customFields(),
    refresh: async (b) => {
      const report = await run((context) => refreshTable(context, b.id, sourceFromClient(client)));
      return { outcome: report.outcome, message: report.failure?.message, binding: report.binding };
    },
  };
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
  return { wb, Excel, run, deps, binding: imported.binding, tableName: imported.tableName, type, cell, records };
}

describe("write-back in the workbook emulator", () => {
  it("the journey: prepare, type one valid and one `1,234.5`, preview, confirm, refreshed value visible", async () => {
    const t = await importProjects();
    const ready = await prepareForEditing(t.deps, t.binding);
    expect(ready).toMatchObject({ ready: true, textColumns: ["Budget Contingency"] });

    await t.type("pt_acme_0001", "Budget Contingency", "12,5");
    await t.type("pt_acme_0002", "Budget Contingency", "1,234.5");
    expect(await t.cell("pt_acme_0002", "Budget Contingency")).toBe("1,234.5");

    const preview = await prepareWriteback(t.deps, t.binding);
    expect(preview.mode).toBe("baseline");
    expect(preview.changes.map((c) => [c.projectToken, c.new, c.validation.status])).toEqual([
      ["pt_acme_0001", "12,5", "valid"],
      ["pt_acme_0002", "1,234.5", "invalid"],
    ]);
    expect(preview.changes[0].sheetRow).toBeGreaterThan(1);

    const done = await confirmWriteback(t.deps, preview);
    expect(done.outcomes.map((o) => o.result.status)).toEqual(["saved", "not-sent"]);
    expect(done.refresh).toMatchObject({ outcome: "updated" });
    expect(await t.cell("pt_acme_0001", "Budget Contingency")).toBe(12.5);
    expect(await t.cell("pt_acme_0002", "Budget Contingency")).toBe(25000);
    expect(await t.records.getRecord("project", "pt_acme_0001")).toMatchObject({ "Budget Contingency": "12.5" });
    // The import record was taken again after the refresh, for the binding's new content validator.
    const stored = await t.run((context) => readBaseline(context, t.binding.id));
    expect(stored?.etag).toBe(done.refresh?.binding?.validators.etag);
    expect((await prepareWriteback(t.deps, t.binding)).changes).toEqual([]);
  });

  it("without preparing, Excel turns a typed `1,234.5` into a number: why the columns are made text first", async () => {
    const t = await importProjects();
    await t.run((context) => recordImportBaseline(context, t.binding));
    await t.type("pt_acme_0002", "Budget Contingency", "1,234.5");
    expect(await t.cell("pt_acme_0002", "Budget Contingency")).toBe(1234.5);
    const preview = await prepareWriteback(t.deps, t.binding);
    expect(preview.changes).toEqual([expect.objectContaining({ new: "1234.5", validation: { status: "valid" } })]);
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

  it("reads error cells as errors and empty cells as null", () => {
    expect(toSheetValues([["#DIV/0!", "", 3, "x"]], [["Error", "Empty", "Double", "String"]])).toEqual([[{ error: "#DIV/0!" }, null, 3, "x"]]);
  });
});
