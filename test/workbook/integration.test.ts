/**
 * The whole flow over real HTTP on 127.0.0.1: reference service → service client → writer →
 * workbook emulator, then refresh through the same binding with a client built from nothing but the
 * binding and a token (as a colleague opening the saved workbook would).
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient, PpmError } from "../../src/service";
import { applyQuery, parseQuery } from "../../src/query";
import { draftBinding } from "../../src/refresh/binding";
import { sourceFromClient } from "../../src/refresh/source";
import { importTable } from "../../src/workbook/writer";
import { importSource } from "../../src/workbook/importSource";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { Workbook, createRequestContext, inspect, loadWorkbook, seed, serializeWorkbook, toWorkbookFile } from "../../src/emulator";
import type { Table } from "../../src/table/model";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";
let svc: ReferenceService;

beforeAll(async () => {
  svc = await startReferenceService({ port: 0, datasetRows: { financials: 300 } });
});
afterAll(async () => {
  await svc.close();
});

const identity = (t: Table) => ({ table: t });

async function importFinancials(format: "json" | "csv") {
  const client = new PpmClient({ id: "conn-acme", name: "Acme", baseUrl: svc.url, token: TOKEN });
  const r = await client.fetchDataset("financials", { format, conditional: false });
  if (r.status !== "updated") throw new Error("expected data");
  const wb = new Workbook();
  const result = await importTable(createRequestContext(wb), r.table, {
    binding: draftBinding({
      id: `fin-${format}`, connectionId: "conn-acme", environment: svc.url, companyId: "acme",
      source: { kind: "dataset", key: "financials", format }, columns: r.table.columns,
      schemaVersion: r.table.meta.schemaVersion, validators: r.validators,
    }),
    secrets: [TOKEN],
  });
  return { wb, result, table: r.table };
}

function bodyOf(wb: Workbook, rows: number, cols: number, format: "json" | "csv" = "json") {
  return inspect(wb, `'financials (${format})'!A3:${String.fromCharCode(64 + cols)}${rows + 2}`);
}

it("imports the JSON and CSV forms into identical cells", async () => {
  const a = await importFinancials("json");
  const b = await importFinancials("csv");
  expect(a.result.rowCount).toBe(300);
  const cols = a.table.columns.length;
  expect(cols).toBe(12);
  expect(bodyOf(b.wb, 300, cols, "csv").values).toEqual(bodyOf(a.wb, 300, cols).values);
  expect(bodyOf(b.wb, 300, cols, "csv").numberFormat).toEqual(bodyOf(a.wb, 300, cols).numberFormat);
  // Every text cell that looks like something else is still text.
  const types = bodyOf(a.wb, 300, cols).valueTypes;
  a.table.columns.forEach((c, i) => {
    if (c.type === "text") expect(types.every((r) => r[i] === "String" || r[i] === "Empty")).toBe(true);
  });
});

it("refreshes a saved workbook with only the binding and a token: 304 first, new data after regeneration", async () => {
  const { wb } = await importFinancials("json");
  const file = serializeWorkbook(wb);
  expect(file).not.toContain(TOKEN);
  const reopened = loadWorkbook(file);
  const [binding] = (await readBindings(createRequestContext(reopened))).bindings;
  let requests = 0;
  const colleague = new PpmClient({ id: binding.connectionId, name: "mine", baseUrl: binding.environment, token: TOKEN }, { onRequest: () => void requests++ });
  const cells = reopened.stats.cellsWritten;

  const first = await refreshTable(createRequestContext(reopened), binding.id, sourceFromClient(colleague), { applyQuery: identity, secrets: [TOKEN] });
  expect(first.outcome).toBe("unchanged");
  expect(reopened.stats.cellsWritten).toBe(cells);
  // Once the client has the manifest, an unchanged refresh is one conditional request.
  requests = 0;
  expect((await refreshTable(createRequestContext(reopened), binding.id, sourceFromClient(colleague), { applyQuery: identity })).outcome).toBe("unchanged");
  expect(requests).toBe(1);
  expect(reopened.stats.cellsWritten).toBe(cells);

  const regen = await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
  expect(regen.ok).toBe(true);
  const second = await refreshTable(createRequestContext(reopened), binding.id, sourceFromClient(colleague), { applyQuery: identity, secrets: [TOKEN] });
  expect(second.outcome).toBe("updated");
  const after = (await readBindings(createRequestContext(reopened))).bindings[0];
  expect(after.validators.generatedAt).not.toBe(binding.validators.generatedAt);
  expect(after.lastFailure).toBeNull();
  expect(inspect(reopened, "'financials (json)'!A1").values[0][0]).toContain(`generated `);
  expect(serializeWorkbook(reopened)).not.toContain(TOKEN);
});

it("a wrong token fails the refresh, records 401 and leaves the data byte-identical (the info line gets the stale mark)", async () => {
  const { wb } = await importFinancials("csv");
  const before = JSON.stringify({ s: toWorkbookFile(wb).sheets, t: toWorkbookFile(wb).tables });
  const info = inspect(wb, "'financials (csv)'!A1").values[0][0] as string;
  const [binding] = (await readBindings(createRequestContext(wb))).bindings;
  const stranger = new PpmClient({ id: "x", name: "x", baseUrl: binding.environment, token: "wrong-token-123" });
  const report = await refreshTable(createRequestContext(wb), binding.id, sourceFromClient(stranger), { applyQuery: identity, secrets: ["wrong-token-123"] });
  expect(report.failure?.code).toBe("unauthorized");
  const stale = inspect(wb, "'financials (csv)'!A1").values[0][0] as string;
  expect(stale).toMatch(/^PPM · ⚠ Not refreshed: .*\(unauthorized\), .* UTC · dataset financials \(csv\) · generated /);
  expect(stale).not.toContain("wrong-token-123");
  seed(wb, "'financials (csv)'!A1", [[info]]);
  expect(JSON.stringify({ s: toWorkbookFile(wb).sheets, t: toWorkbookFile(wb).tables })).toBe(before);
  const stored = (await readBindings(createRequestContext(wb))).bindings[0];
  expect(stored.lastFailure?.code).toBe("unauthorized");
  expect(serializeWorkbook(wb)).not.toContain("wrong-token-123");
});

it("importSource fetches, applies the local query and binds the table it wrote", async () => {
  const client = new PpmClient({ id: "conn-acme", name: "Acme", baseUrl: svc.url, token: TOKEN });
  const wb = new Workbook();
  const seen: unknown[] = [];
  const result = await importSource(createRequestContext(wb), sourceFromClient(client), {
    source: { kind: "dataset", key: "financials", format: "csv" },
    connection: { id: "conn-acme", baseUrl: svc.url },
    companyId: "acme",
    query: { top: 10 },
    applyQuery: (t, q) => (seen.push(q), { table: { ...t, rows: t.rows.slice(0, q.top) } }),
    secrets: [TOKEN],
  });
  expect(seen).toEqual([{ top: 10 }]);
  expect(result.rowCount).toBe(10);
  expect(result.binding).toMatchObject({ query: { top: 10 }, connectionId: "conn-acme", source: { kind: "dataset", key: "financials", format: "csv" }, rowCount: 10 });
  expect(result.binding.validators.generatedAt).toBeTruthy();
  expect(serializeWorkbook(wb)).not.toContain(TOKEN);
});

it("refresh re-applies the stored local query with the query engine", async () => {
  const client = new PpmClient({ id: "conn-acme", name: "Acme", baseUrl: svc.url, token: TOKEN });
  const wb = new Workbook();
  const query = { filter: "fiscal_year ge 2025 and budget gt 0", select: ["project_id", "fiscal_year", "budget"], orderby: "budget desc" };
  const first = await importSource(createRequestContext(wb), sourceFromClient(client), {
    source: { kind: "dataset", key: "financials", format: "json" },
    connection: { id: "conn-acme", baseUrl: svc.url },
    companyId: "acme",
    query,
  });
  expect(first.binding.columns.map((c) => c.name)).toEqual(["project_id", "fiscal_year", "budget"]);
  const regen = await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
  expect(regen.ok).toBe(true);
  const report = await refreshTable(createRequestContext(wb), first.binding.id, sourceFromClient(client));
  // A regeneration moves actual costs only: with the query re-applied, this table's rows are the
  // same, so the refresh says "unchanged" with a new export (issue #37); without it they would not be.
  expect([report.outcome, report.newExport]).toEqual(["unchanged", true]);
  const whole = await client.fetchDataset("financials", { format: "json", conditional: false });
  if (whole.status !== "updated") throw new Error("expected data");
  expect(report.rowCount).toBe(whole.table.rows.filter((r) => (r[3] as number) >= 2025 && (r[5] as number) > 0).length);
  const n = report.rowCount;
  expect(n).toBeGreaterThan(0);
  const body = inspect(wb, `'financials (json)'!A3:C${n + 2}`).values;
  expect(body.every((r) => (r[1] as number) >= 2025 && (r[2] as number) > 0)).toBe(true);
  const budgets = body.map((r) => r[2] as number);
  expect(budgets).toEqual([...budgets].sort((a, b) => b - a));
});

it("a summary ($apply) is imported and refreshed through the streaming sink, equal to the query on the complete table", async () => {
  const client = new PpmClient({ id: "conn-acme", name: "Acme", baseUrl: svc.url, token: TOKEN });
  const wb = new Workbook();
  // actual_cost: what a regeneration moves, so the refreshed summary differs.
  const query = parseQuery("$apply=groupby((fiscal_year,project_id),aggregate(actual_cost with sum as total_cost,$count as periods))&$orderby=project_id");
  const expectedFor = async () => {
    const whole = await client.fetchDataset("financials", { format: "json", conditional: false });
    if (whole.status !== "updated") throw new Error("expected data");
    return applyQuery(whole.table, query).table;
  };
  const before = await expectedFor();
  const first = await importSource(createRequestContext(wb), sourceFromClient(client), {
    source: { kind: "dataset", key: "financials", format: "json" },
    connection: { id: "conn-acme", baseUrl: svc.url },
    companyId: "acme",
    query,
    sourceRows: 300,
  });
  expect(first.binding.columns.map((c) => [c.name, c.type])).toEqual([["fiscal_year", "integer"], ["project_id", "text"], ["total_cost", "decimal"], ["periods", "integer"]]);
  expect(first.rowCount).toBe(before.rows.length);
  expect(inspect(wb, `'financials (json)'!A3:D${before.rows.length + 2}`).values).toEqual(before.rows);

  await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
  const report = await refreshTable(createRequestContext(wb), first.binding.id, sourceFromClient(client));
  expect(report.outcome).toBe("updated");
  const after = await expectedFor();
  expect(inspect(wb, `'financials (json)'!A3:D${after.rows.length + 2}`).values).toEqual(after.rows);
  const unchanged = await refreshTable(createRequestContext(wb), first.binding.id, sourceFromClient(client));
  expect(unchanged.outcome).toBe("unchanged");
});

it("an export larger than a sheet is refused before downloading unless the query summarises or filters it", async () => {
  let fetched = 0;
  const from = { fetch: async () => (fetched++, { status: "unchanged" as const, validators: {} }) };
  const err = await importSource(createRequestContext(new Workbook()), from, {
    source: { kind: "dataset", key: "financials", format: "json" },
    connection: { id: "conn-acme", baseUrl: svc.url },
    companyId: "acme",
    query: { select: ["project_id"] },
    sourceRows: 2_000_000,
  }).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(PpmError);
  expect((err as PpmError).message).toBe("financials has 2,000,000 rows; a worksheet holds 1,048,575 plus the header row.");
  expect((err as PpmError).action).toContain("Summarize");
  expect(fetched).toBe(0);
});
