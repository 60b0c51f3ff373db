/** Shared builders for the emulator-backed workbook tests. */
import { Workbook, createExcelNamespace, createRequestContext } from "../../src/emulator";
import { bindingColumns, draftBinding } from "../../src/refresh/binding";
import { importTable, type ImportOptions } from "../../src/workbook/writer";
import { PpmClient } from "../../src/service/client";
import { sourceFromClient } from "../../src/refresh/source";
import { refreshTable } from "../../src/workbook/refresh";
import { excelWritebackWorkbook } from "../../src/workbook/writeback";
import { recordsServiceFrom, type WritebackDeps } from "../../src/records";
import type { Column, CellValue, Table } from "../../src/table/model";
import type { RefreshSource } from "../../src/refresh/source";

export const TOKEN = "demo-acme-token";

/** The columns of a financials-like dataset: every model type, an identifier and a beyond-2^53 column. */
export const FIN_COLUMNS: Column[] = [
  { name: "project_id", type: "integer", sourceType: "Edm.Int32" },
  { name: "name", type: "text" },
  { name: "amount", type: "decimal" },
  { name: "count", type: "integer" },
  { name: "due", type: "date" },
  { name: "updated", type: "datetime" },
  { name: "active", type: "boolean" },
  { name: "ledger", type: "integer", sourceType: "Edm.Int64" },
];

export function finRows(n: number, seed = 0): CellValue[][] {
  return Array.from({ length: n }, (_, i) => [
    i + 1,
    `Project ${i + seed}`,
    Math.round((i * 12.5 + seed) * 100) / 100,
    (i * 7 + seed) % 100,
    `2024-${String((i % 12) + 1).padStart(2, "0")}-${String((i % 28) + 1).padStart(2, "0")}`,
    `2024-03-10T${String(i % 24).padStart(2, "0")}:15:00Z`,
    i % 2 === 0,
    (BigInt("9007199254740993") + BigInt(i)).toString(),
  ]);
}

export function finTable(rows: CellValue[][], over: Partial<Table["meta"]> = {}, columns: Column[] = FIN_COLUMNS): Table {
  return {
    columns,
    rows,
    meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "3", generatedAt: "2026-01-01T00:00:00Z", etag: '"e1"', lastModified: null, fetchedAt: "2026-01-01T00:00:01Z", ...over },
  };
}

export function bindingDraft(table: Table, id = "b1"): ImportOptions["binding"] {
  return draftBinding({
    id,
    connectionId: "conn-1",
    environment: "http://127.0.0.1:4100",
    companyId: "acme",
    source: { kind: "dataset", key: table.meta.key, format: "json" },
    columns: table.columns,
    schemaVersion: table.meta.schemaVersion,
    validators: { etag: table.meta.etag, generatedAt: table.meta.generatedAt },
  });
}

export const fixedNow = () => new Date("2026-01-01T00:00:02Z");

/** A fresh workbook and one table imported into a new sheet. */
export async function imported(rows: CellValue[][], opts: Partial<ImportOptions> = {}, wbOptions: ConstructorParameters<typeof Workbook>[0] = {}) {
  const wb = new Workbook({ currentYear: 2025, ...wbOptions });
  const context = createRequestContext(wb);
  const table = finTable(rows);
  const result = await importTable(context, table, { binding: bindingDraft(table), secrets: [TOKEN], now: fixedNow, ...opts });
  return { wb, context, table, result };
}

/** Resolves to the rejection of a promise (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error("expected a rejection");
}

let generation = 0;

/**
 * A source answering new data, matched by project_id (the key $metadata declares): generated at `gen`,
 * or a new generation each call.
 */
export function keyedSource(rows: CellValue[][], gen = new Date(Date.UTC(2026, 1, 1, 7, 0, ++generation)).toISOString()): RefreshSource & { gen: string } {
  return {
    gen,
    fetch: () =>
      Promise.resolve({
        status: "updated",
        table: finTable(rows, { generatedAt: gen, etag: `"${gen}"` }),
        validators: { etag: `"${gen}"`, generatedAt: gen },
        key: { candidates: [["project_id"]], origin: "metadata", reason: "the key $metadata declares" },
      }),
  };
}

/** Two tables at the same address (info A1, header A2) on two sheets, bindings b1 and b2 (issue #26, hazard 2). */
export async function twoTables(n = 40): Promise<{ wb: Workbook; sheetA: string; sheetB: string }> {
  const wb = new Workbook({ currentYear: 2025 });
  const ctx = createRequestContext(wb);
  const a = finTable(finRows(n, 0));
  const b = finTable(finRows(n, 500));
  const ra = await importTable(ctx, a, { binding: bindingDraft(a, "b1"), secrets: [TOKEN], now: fixedNow });
  const rb = await importTable(ctx, b, { binding: bindingDraft(b, "b2"), secrets: [TOKEN], now: fixedNow });
  expect(ra.address.replace(/^.*!/, "")).toBe(rb.address.replace(/^.*!/, ""));
  expect(ra.sheetName).not.toBe(rb.sheetName);
  return { wb, sheetA: ra.sheetName, sheetB: rb.sheetName };
}

/**
 * The reference service's projects snapshot imported into a new emulated workbook (binding `bproj`),
 * with the write-back dependencies over it, as the pane wires them: Excel batches through the
 * workbook's own `Excel.run`, the real records client and the real refresh engine.
 */
export async function importedProjects(serviceUrl: string) {
  const wb = new Workbook({ currentYear: 2026 });
  const Excel = createExcelNamespace(wb);
  const client = new PpmClient({ id: "c1", name: "Acme", baseUrl: serviceUrl, token: "demo-acme-token", apiAuth: "demo-api-auth", apiSecret: "demo-api-secret" });
  const table = await client.fetchSnapshot("projects");
  const imported = await Excel.run((context) =>
    importTable(context, table, {
      binding: { v: 1, id: "bproj", connectionId: "c1", environment: serviceUrl, companyId: "acme", source: { kind: "snapshot", endpoint: "projects" }, query: null, columns: bindingColumns(table.columns), schemaVersion: null, validators: { etag: table.meta.etag, lastModified: null, generatedAt: null } },
    }),
  );
  const run = <T>(work: (c: Excel.RequestContext) => Promise<T>) => Excel.run((context) => work(context));
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
  return { wb, Excel, run, deps, binding: imported.binding, tableName: imported.tableName, sheetName: imported.sheetName, records, client };
}
