/**
 * First import and refresh into the workbook emulator against a hostile or broken service (issue
 * #14): a first import applies the same checks as a refresh, nothing is written when they fail,
 * and a refresh that fails leaves the previous table exactly as it was.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient } from "../../src/service";
import { sourceFromClient } from "../../src/refresh/source";
import { importSource } from "../../src/workbook/importSource";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { describeError, describeFailure } from "../../src/taskpane/errorView";
import { Workbook, createRequestContext, serializeWorkbook, toWorkbookFile } from "../../src/emulator";
import { csvRecords, startHostileService, type HostileService } from "../helpers/hostileService";
import type { DatasetFormat } from "../../src/service";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";
let ref: ReferenceService;
let svc: HostileService;

beforeAll(async () => {
  ref = await startReferenceService({ port: 0 });
  svc = await startHostileService(ref.url);
});
afterAll(async () => {
  await svc?.close();
  await ref?.close();
});
beforeEach(async () => {
  svc.clear();
  await fetch(`${ref.url}/__control/reset`, { method: "POST", headers: CONTROL });
});

const client = () => new PpmClient({ id: "conn-acme", name: "Acme", baseUrl: svc.url, token: TOKEN }, { retries: 0 });
const PATH: Record<DatasetFormat, string> = { csv: "/api/bi/v1/financials.csv", json: "/api/bi/v1/financials", odata: "/api/bi/odata/v1/financials" };

function firstImport(wb: Workbook, format: DatasetFormat) {
  return importSource(createRequestContext(wb), sourceFromClient(client()), {
    source: { kind: "dataset", key: "financials", format },
    connection: { id: "conn-acme", baseUrl: svc.url },
    companyId: "acme",
    secrets: [TOKEN],
  });
}

async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error("expected the import to fail");
}

const hostile: Array<[string, DatasetFormat, () => { status?: number; headers?: Record<string, string>; body?: string }, string, RegExp]> = [
  ["an HTML sign-in page", "csv", () => ({ headers: { "Content-Type": "text/html" }, body: "<!DOCTYPE html><html><body>Sign in</body></html>" }), "unexpected_content", /HTML page.*not the CSV export of "financials": a sign-in page or a proxy/],
  ["an HTML page without Content-Type", "csv", () => ({ body: "<html><body>Proxy authentication required</body></html>" }), "unexpected_content", /HTML page/],
  ["a JSON error body with 200 (CSV form)", "csv", () => ({ headers: { "Content-Type": "application/json" }, body: '{"error":"unauthorized","message":"no"}' }), "unexpected_content", /JSON error body \("unauthorized"\) and status 200/],
  ["a JSON error body with 200 (JSON form)", "json", () => ({ headers: { "Content-Type": "application/json" }, body: '{"error":"unauthorized","message":"no"}' }), "unexpected_content", /JSON error body \("unauthorized"\) and status 200/],
  ["a wrong CSV header", "csv", () => ({ headers: { "Content-Type": "text/csv" }, body: "name,value\r\nx,1\r\n" }), "unexpected_content", /does not have the dataset's columns/],
  ["a 304 without validators", "csv", () => ({ status: 304 }), "unexpected_not_modified", /304 Not Modified .* carried no validators/],
];

describe("first import applies the same checks as refresh", () => {
  it.each(hostile)("%s (%s form): refused, nothing written, no binding", async (_name, format, reply, code, message) => {
    svc.on(PATH[format], reply);
    const wb = new Workbook();
    const before = serializeWorkbook(wb);
    const e = await failure(firstImport(wb, format));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
    expect(serializeWorkbook(wb)).toBe(before);
    expect(wb.stats.syncCount).toBe(0);
    // The pane explains it with the code's own title and action.
    const view = describeError(e, { connectionId: "conn-acme", secrets: [TOKEN] });
    expect(view.code).toBe(code);
    expect(view.title).not.toBe("Something went wrong");
  });

  it("(control) the real export still imports", async () => {
    const wb = new Workbook();
    const r = await firstImport(wb, "csv");
    expect(r.rowCount).toBe(120);
  });
});

describe("refresh of a cut or foreign answer leaves the previous table exactly as it was", () => {
  const cutCsv = async (req: { upstream(): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> }) => {
    const up = await req.upstream();
    if (up.status !== 200) return up;
    return { ...up, body: `${csvRecords(up.body.toString("utf8")).slice(0, 60).join("\r\n")}\r\n` };
  };

  it.each([
    ["a CSV cut at a row boundary (59 of 120 rows)", "csv" as const, cutCsv, "incomplete_export"],
    ["an HTML page", "csv" as const, () => ({ headers: { "Content-Type": "text/html" }, body: "<!doctype html><title>x</title>" }), "unexpected_content"],
    ["an OData collection cut short", "odata" as const, async (req: { upstream(): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> }) => {
      const up = await req.upstream();
      if (up.status !== 200) return up;
      const body = JSON.parse(up.body.toString("utf8")) as { value: unknown[] };
      return { ...up, body: JSON.stringify({ ...body, value: body.value.slice(0, 59) }) };
    }, "incomplete_export"],
  ])("%s", async (_name, format, behaviour, code) => {
    const wb = new Workbook();
    const first = await firstImport(wb, format);
    expect(first.rowCount).toBe(120);
    await fetch(`${ref.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    svc.on(PATH[format], behaviour);
    const before = toWorkbookFile(wb);
    const report = await refreshTable(createRequestContext(wb), first.binding.id, sourceFromClient(client()), { secrets: [TOKEN] });
    expect(report.outcome).toBe("failed");
    expect(report.failure?.code).toBe(code);
    expect(report.rowCount).toBe(120);
    const after = toWorkbookFile(wb);
    expect(after.tables).toEqual(before.tables);
    // Every cell of the table is as it was; only the binding's failure record changed.
    const cells = (f: typeof before) => f.sheets.map((s) => s.cells.filter((c) => !(c.r === 0 && c.c === 0)));
    expect(cells(after)).toEqual(cells(before));
    const stored = (await readBindings(createRequestContext(wb))).bindings.find((b) => b.id === first.binding.id)!;
    expect(stored.lastFailure?.code).toBe(code);
    expect(stored.rowCount).toBe(120);
    const view = describeFailure(stored.lastFailure!, { secrets: [TOKEN] });
    expect(view.title).not.toBe("Something went wrong");
  });
});
