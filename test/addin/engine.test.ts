/**
 * The task pane's engine facade over real HTTP (reference service on 127.0.0.1) into the workbook
 * emulator installed as the global `Excel`: the exact calls the pane's buttons make.
 */
import { createEngine, type ImportRequest } from "../../src/addin/engine";
import { resolveConnectionId } from "../../src/addin/refreshSummary";
import { EmulatedExcelError, inspect, serializeWorkbook, snapshot } from "../../src/emulator";
import { TOKEN, useAcmeWorkbook } from "./helpers";
import { CONTROL } from "../helpers/control";

describe("engine: import and refresh as the task pane does", () => {
  const env = useAcmeWorkbook();

  const request = (over: Partial<ImportRequest>): ImportRequest => ({
    connection: env.conn,
    companyId: "acme",
    source: { kind: "dataset", key: "financials", format: "json" },
    query: null,
    destination: { kind: "newSheet" },
    signal: new AbortController().signal,
    secrets: env.store.allSecrets(),
    onProgress: () => undefined,
    ...over,
  });

  it("imports into a new sheet with progress, keeps formula-looking text as text, and stores no token", async () => {
    const engine = createEngine();
    const phases: string[] = [];
    const r = await engine.importSource(request({ source: { kind: "dataset", key: "financials", format: "csv" }, onProgress: (p) => phases.push(p.phase) }));
    expect(r).toMatchObject({ tableName: "ppm_financials", sheetName: "financials (csv)" });
    expect(r.rowCount).toBe(r.fetchedRows);
    expect(phases[0]).toBe("fetching");
    expect(phases).toContain("writing");
    const all = serializeWorkbook(env.wb);
    expect(all).not.toContain(TOKEN);
    // Somewhere in the data there is text that starts with "=": it must stay text, not a formula.
    const table = inspect(env.wb, `'financials (csv)'!A2:L${r.rowCount + 2}`);
    const flat = table.formulas.flat();
    const formulaLooking = flat.filter((v) => typeof v === "string" && v.startsWith("="));
    expect(formulaLooking.length).toBeGreaterThan(0);
    const values = table.values.flat();
    for (const f of formulaLooking) expect(values).toContain(f);
  });

  it("issue #21, item 9: a write-back record that cannot be kept after an import is said in the outcome, never swallowed", async () => {
    const engine = createEngine();
    // Storing the record on its very hidden sheet fails (any Excel error).
    env.wb.faultInjector = (op) => (op.path.includes("ppm_bl_") && op.op.startsWith("set") ? new EmulatedExcelError("GeneralException", "An internal error has occurred.") : null);
    const r = await engine.importSource(request({ source: { kind: "snapshot", endpoint: "projects" } }));
    env.wb.faultInjector = null;
    expect(r.rowCount).toBeGreaterThan(0);
    expect(r.warnings).toEqual([expect.stringMatching(/^The write-back record of ppm_projects could not be kept \(.*\); write-back will compare your edits with the service's current values/)]);
    // A dataset import has no write-back record: nothing to say.
    expect((await engine.importSource(request({}))).warnings).toEqual([]);
  });

  it("applies the local query before writing and never sends a $ option", async () => {
    await fetch(`${env.service.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const engine = createEngine();
    const r = await engine.importSource(request({ source: { kind: "dataset", key: "financials", format: "odata" }, query: { filter: "fiscal_year eq 2026", select: ["project_id", "budget"], top: 4 } }));
    expect(r.rowCount).toBe(4);
    expect(inspect(env.wb, "'financials (odata)'!A2:B2").values).toEqual([["project_id", "budget"]]);
    const log = (await (await fetch(`${env.service.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ path: string; query: string }> };
    expect(log.requests.length).toBeGreaterThan(0);
    // `$metadata` is a path, not an option; no query string may carry a `$` option.
    for (const q of log.requests) expect(q.query).not.toContain("$");
    expect(log.requests.some((q) => q.path === "/api/bi/odata/v1/financials")).toBe(true);
  });

  it("imports at the selected cell and finds the table under the selection (info line included)", async () => {
    env.wb.select("Sheet1!C5");
    const engine = createEngine();
    const r = await engine.importSource(request({ source: { kind: "dataset", key: "projects", format: "json" }, destination: { kind: "selection" } }));
    expect(r.sheetName).toBe("Sheet1");
    expect(r.address.startsWith("C6:")).toBe(true);
    env.wb.select("Sheet1!D8");
    expect((await engine.bindingAtSelection())?.tableName).toBe(r.tableName);
    env.wb.select("Sheet1!C5");
    expect((await engine.bindingAtSelection())?.tableName).toBe(r.tableName);
    env.wb.select("Sheet1!A1");
    expect(await engine.bindingAtSelection()).toBeNull();
  });

  it("imports the combined resource snapshot and refreshes it as unchanged", async () => {
    const engine = createEngine();
    const r = await engine.importSource(request({ source: { kind: "snapshot", endpoint: "combinedResources" } }));
    expect(r.rowCount).toBeGreaterThan(0);
    const { bindings } = await engine.listBindings();
    expect(bindings.map((b) => b.source)).toEqual([{ kind: "snapshot", endpoint: "combinedResources" }]);
    const report = await engine.refreshOne(bindings[0].id, env.conn, { secrets: env.store.allSecrets() });
    expect(report.outcome).toBe("unchanged");
  });

  it("refresh all updates after a regeneration and fails only the table whose company has no connection", async () => {
    const engine = createEngine();
    await engine.importSource(request({}));
    const before = inspect(env.wb, "'financials (json)'!A3:L3").values;
    await fetch(`${env.service.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    const connections = env.store.list().map((c) => ({ ...c, companyId: "acme" }));
    const res = await engine.refreshAll((b) => (resolveConnectionId(b, connections) ? env.conn : null), { secrets: env.store.allSecrets() });
    expect(res.reports.map((x) => x.outcome)).toEqual(["updated"]);
    expect(inspect(env.wb, "'financials (json)'!A3:L3").values).not.toEqual(before);
    const none = await engine.refreshAll(() => null, { secrets: env.store.allSecrets() });
    expect(none.reports[0]).toMatchObject({ outcome: "failed", failure: { code: "no_connection" } });
  });

  it("Show changes after a partial regeneration: offered, shown over the table, cleared; never a token in the workbook", async () => {
    const engine = createEngine();
    await engine.importSource(request({}));
    const { bindings } = await engine.listBindings();
    const id = bindings[0].id;
    expect((await engine.changeHighlights())[id]).toEqual({ available: false, shown: false });
    await fetch(`${env.service.url}/__control/regenerate?company=acme&dataset=financials&changed=0.05&added=0.03&removed=0.03&seed=15`, { method: "POST", headers: CONTROL });
    const report = await engine.refreshOne(id, env.conn, { secrets: env.store.allSecrets() });
    expect(report.delta?.strategy).toBe("delta");
    expect((await engine.changeHighlights())[id]).toEqual({ available: true, shown: false });
    expect(await engine.showChanges(id)).toEqual({ available: true, shown: true });
    expect(snapshot(env.wb).sheets.find((s) => s.name === "financials (json)")!.conditionalFormats).toHaveLength(2);
    expect(await engine.clearChanges(id)).toEqual({ available: true, shown: false });
    expect(snapshot(env.wb).sheets.find((s) => s.name === "financials (json)")!.conditionalFormats).toEqual([]);
    expect(serializeWorkbook(env.wb)).not.toContain(TOKEN);
    await expect(engine.showChanges("no-such-binding")).rejects.toMatchObject({ code: "table_missing" });
  });

  it("a cancelled import writes nothing", async () => {
    const engine = createEngine();
    const controller = new AbortController();
    controller.abort();
    const before = serializeWorkbook(env.wb);
    await expect(engine.importSource(request({ signal: controller.signal }))).rejects.toMatchObject({ code: "cancelled" });
    expect(serializeWorkbook(env.wb)).toBe(before);
  });
});
