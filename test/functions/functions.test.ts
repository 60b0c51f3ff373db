/**
 * The PPM worksheet functions' engine (issue #28) against the reference service over real HTTP:
 * one dataset request for many formulas, values equal to an oracle computed from the export,
 * Excel errors with messages, updates after a regeneration through conditional requests only.
 */
import { PpmClient, type Connection } from "../../src/service";
import { MemoryValidatorStore } from "../../src/service/validators";
import { applyQuery, parseQuery } from "../../src/query";
import { FormulaData } from "../../src/functions/data";
import { FunctionsRuntime, type Invocation } from "../../src/functions/runtime";
import { MAX_SPILL_CELLS, spill, toExcel } from "../../src/functions/logic";
import { MemoryStorage, type ConnectionSummary } from "../../src/addin/connectionStore";
import { FormulaConsent, formulaConsentText, type ConsentConnection, type DocumentIdAccess } from "../../src/addin/formulaConsent";
import { newDocumentId } from "../../src/workbook/documentId";
import type { Binding } from "../../src/refresh/binding";
import { emptyDocument, upsertView, type ViewsDocument } from "../../src/views/views";
import type { Table } from "../../src/table/model";
import { useReferenceService } from "../helpers/referenceService";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";
const svc = useReferenceService({ clearLog: true });
/** The consent of the tests that are not about consent: a document allowed for both connections. */
let allowed: FormulaConsent;
beforeAll(async () => {
  allowed = await allowedConsent();
});

async function requests(): Promise<Array<{ method: string; path: string; status: number }>> {
  const r = (await (await fetch(`${svc.url}/__control/requests`, { headers: CONTROL })).json()) as { requests: Array<{ method: string; path: string; status: number }> };
  return r.requests;
}
const datasetRequests = async (key: string) => (await requests()).filter((r) => r.path === `/api/bi/v1/${key}`);

interface CellError {
  error: string;
  message: string;
}

/** A streaming invocation as Excel hands it over: the latest result, and every result in order. */
class FakeInvocation implements Invocation {
  results: unknown[] = [];
  onCanceled?: () => void;
  setResult(v: unknown): void {
    this.results.push(v);
  }
  get last(): unknown {
    return this.results[this.results.length - 1];
  }
}

/**
 * A document as formula consent sees it: the id in its settings (null: none yet), and what was
 * written there. `readOnly`: writing the id fails (a file opened read-only).
 */
class FakeDocument implements DocumentIdAccess {
  writes = 0;
  constructor(
    public id: string | null = null,
    private readonly readOnly = false,
  ) {}
  read(): Promise<string | null> {
    return Promise.resolve(this.id);
  }
  ensure(): Promise<string> {
    if (this.id !== null) return Promise.resolve(this.id);
    if (this.readOnly) return Promise.reject(new Error("The document is read-only."));
    this.writes++;
    this.id = newDocumentId();
    return Promise.resolve(this.id);
  }
}

/** The runtime's consent over a device's storage, for a document at `url` carrying `doc`'s id. */
function deviceConsent(storage = new MemoryStorage(), url: () => string | null = () => null, doc: DocumentIdAccess | undefined = new FakeDocument()): FormulaConsent {
  return new FormulaConsent({ storage, key: (n) => `pk|${n}`, documentUrl: url, documentId: doc });
}

/** The two connections of the tests' device, as consent names them. */
const ACME = (): ConsentConnection => ({ id: "c1", baseUrl: svc.url, label: `Acme (${svc.url})` });
const GLOBEX = (): ConsentConnection => ({ id: "c2", baseUrl: svc.url, label: `Globex (${svc.url})` });

/** A document this device allowed PPM formulas in, for both connections. */
async function allowedConsent(): Promise<FormulaConsent> {
  const c = deviceConsent(new MemoryStorage(), () => "https://contoso.sharepoint.com/mine.xlsx");
  await c.allow({ connections: [ACME(), GLOBEX()] });
  return c;
}

function setup(opts: { connections?: ConnectionSummary[]; bindings?: Binding[]; views?: ViewsDocument; token?: string; consent?: FormulaConsent } = {}) {
  const conn: Connection = { id: "c1", name: "Acme", baseUrl: svc.url, token: opts.token ?? TOKEN };
  const globex: Connection = { id: "c2", name: "Globex", baseUrl: svc.url, token: "demo-globex-token" };
  const data = new FormulaData({
    source: (c) => {
      const client = new PpmClient(c, { validators: new MemoryValidatorStore() });
      return {
        fetchDataset: (key, o) => client.fetchDataset(key, o),
        datasetKeys: async (key) => (await client.metadata()).entitySets.find((s) => s.name === key)?.keys ?? [],
      };
    },
  });
  const connections = opts.connections ?? [{ id: "c1", name: "Acme", baseUrl: svc.url, companyId: "acme", hasToken: true, hasRecordCredentials: false }];
  const rt = new FunctionsRuntime({
    data,
    connections: () => connections,
    connection: (id) => (id === "c1" ? conn : id === "c2" ? globex : null),
    bindings: () => Promise.resolve(opts.bindings ?? []),
    views: () => Promise.resolve(opts.views ?? emptyDocument()),
    error: (code, message): CellError => ({ error: code, message }),
    consent: opts.consent ?? allowed,
  });
  return { rt, data, conn };
}

/** The result is Excel's `code` with a message matching `message`. */
function expectError(v: unknown, code: string, message: string | RegExp): void {
  const e = v as CellError;
  expect(e.error).toBe(code);
  if (typeof message === "string") expect(e.message).toContain(message);
  else expect(e.message).toMatch(message);
}

/** Waits until every invocation has a result (or the time runs out). */
async function settled(invs: FakeInvocation[], count = 1, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (invs.some((i) => i.results.length < count)) {
    if (Date.now() > until) throw new Error(`${invs.filter((i) => i.results.length < count).length} invocation(s) without a result`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function oracle(key: string): Promise<Table> {
  const r = await new PpmClient({ id: "o", name: "oracle", baseUrl: svc.url, token: TOKEN }).fetchDataset(key, { format: "json", conditional: false });
  if (r.status !== "updated") throw new Error("no table");
  return r.table;
}

describe("PPM.VALUE", () => {
  it("500 formulas of one recalculation cost one dataset request, and each equals the export's cell", async () => {
    const { rt } = setup();
    const table = await oracle("financials");
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const col = (n: string) => table.columns.findIndex((c) => c.name === n);
    const invs: FakeInvocation[] = [];
    const expected: unknown[] = [];
    for (let i = 0; i < 500; i++) {
      const row = table.rows[i % table.rows.length];
      const inv = new FakeInvocation();
      invs.push(inv);
      rt.value("financials", `${row[col("project_id")]}|${row[col("fiscal_year")]}|${row[col("period_number")]}`, i % 2 ? "budget" : "actual_cost", undefined, inv);
      expected.push(toExcel(table.columns[col(i % 2 ? "budget" : "actual_cost")], row[col(i % 2 ? "budget" : "actual_cost")]));
    }
    await settled(invs);
    expect(invs.map((i) => i.last)).toEqual(expected);
    expect(await datasetRequests("financials")).toHaveLength(1);
    // A recalculation storm afterwards sends nothing.
    const again = Array.from({ length: 200 }, () => new FakeInvocation());
    again.forEach((inv) => rt.value("financials", "PRJ-0001|2026|1", "budget", undefined, inv));
    await settled(again);
    expect(await datasetRequests("financials")).toHaveLength(1);
  });

  it("a single key (projects) and types as Excel holds them: dates as serials, empty as \"\"", async () => {
    const { rt } = setup();
    const table = await oracle("projects");
    const r0 = table.rows[0];
    const ci = (n: string) => table.columns.findIndex((c) => c.name === n);
    const invs = ["budget_contingency", "start_date", "status", "is_active"].map((c) => {
      const inv = new FakeInvocation();
      rt.value("projects", r0[ci("project_token")], c, undefined, inv);
      return inv;
    });
    await settled(invs);
    expect(invs.map((i) => i.last)).toEqual(["budget_contingency", "start_date", "status", "is_active"].map((c) => toExcel(table.columns[ci(c)], r0[ci(c)])));
    expect(typeof invs[1].last).toBe("number"); // a date serial
  });

  it("#N/A with a message for a missing key; #VALUE! for an unknown column or a key of the wrong shape", async () => {
    const { rt } = setup();
    const [missing, column, parts] = [new FakeInvocation(), new FakeInvocation(), new FakeInvocation()];
    rt.value("projects", "pt_acme_9999", "status", undefined, missing);
    rt.value("projects", "pt_acme_0001", "nope", undefined, column);
    rt.value("financials", "PRJ-0001", "budget", undefined, parts);
    await settled([missing, column, parts]);
    expect(missing.last).toEqual({ error: "#N/A", message: 'No row of "projects" has project_token = pt_acme_9999.' });
    expectError(column.last, "#VALUE!", '"projects" has no column "nope". Its columns: project_token, project_name');
    expectError(parts.last, "#VALUE!", "has 3 parts (project_id|fiscal_year|period_number); got 1");
  });

  it("an unknown dataset is #VALUE! with the service's explanation", async () => {
    const { rt } = setup();
    const inv = new FakeInvocation();
    rt.value("nosuch", "x", "y", undefined, inv);
    await settled([inv]);
    expect((inv.last as CellError).error).toBe("#VALUE!");
    expect((inv.last as CellError).message).toMatch(/nosuch/);
  });

  it("a first load that failed (503) is tried again by the next revalidation, and the formula then shows its value", async () => {
    const { rt, data } = setup();
    await fetch(`${svc.url}/__control/fault?path=/api/bi/v1/projects&status=503&count=3`, { method: "POST", headers: CONTROL });
    const inv = new FakeInvocation();
    rt.value("projects", "pt_acme_0001", "status", undefined, inv);
    await settled([inv]);
    expect((inv.last as CellError).error).toBe("#VALUE!");
    await data.revalidate();
    await settled([inv], 2);
    expect(typeof inv.last).toBe("string");
  });
});

describe("PPM.QUERY", () => {
  it("a $apply summary equals the query engine on the export, header first", async () => {
    const { rt } = setup();
    const opts = "$apply=groupby((fiscal_year),aggregate(budget with sum as total))&$orderby=fiscal_year";
    const inv = new FakeInvocation();
    rt.query("financials", opts, undefined, inv);
    await settled([inv]);
    const want = applyQuery(await oracle("financials"), parseQuery(opts)).table;
    expect(inv.last).toEqual(spill(want, "x"));
    expect((inv.last as unknown[][])[0]).toEqual(["fiscal_year", "total"]);
  });

  it("a bad query is #VALUE! naming the problem, before any request", async () => {
    const { rt } = setup();
    const [syntax, column] = [new FakeInvocation(), new FakeInvocation()];
    rt.query("financials", "$filter=budget gt", undefined, syntax);
    rt.query("financials", "$filter=nosuch eq 1", undefined, column);
    await settled([syntax, column]);
    expectError(syntax.last, "#VALUE!", /^Bad query: .*\$filter/);
    expectError(column.last, "#VALUE!", /nosuch/);
  });

  it("above the cell cap: an error that suggests importing a table", async () => {
    const big: Table = {
      columns: [{ name: "a", type: "integer" }],
      rows: Array.from({ length: MAX_SPILL_CELLS }, (_, i) => [i]),
      meta: { key: "x", kind: "dataset", format: "json", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "" },
    };
    expect(() => spill(big, "The result")).toThrow(/Import it as a table from the PPM pane/);
    big.rows.pop();
    expect(spill(big, "The result")).toHaveLength(MAX_SPILL_CELLS);
  });
});

describe("connections", () => {
  it("no connection on this device: a clear #N/A, nothing sent", async () => {
    const { rt } = setup({ connections: [] });
    const inv = new FakeInvocation();
    rt.value("projects", "pt_acme_0001", "status", undefined, inv);
    await settled([inv]);
    expect(inv.last).toEqual({ error: "#N/A", message: "No PPM connection on this device. Open the PPM pane's Connect tab and add one." });
    expect(await requests()).toEqual([]);
  });

  it("a workbook whose tables come from an environment this device has no connection for", async () => {
    const binding = { connectionId: "theirs", environment: "https://ppm.example.com", companyId: "globex", tableName: "T" } as Binding;
    const { rt } = setup({ bindings: [binding] });
    const inv = new FakeInvocation();
    rt.value("projects", "pt_acme_0001", "status", undefined, inv);
    await settled([inv]);
    expectError(inv.last, "#N/A", "This device has no connection for https://ppm.example.com (company globex)");
  });

  it("a named connection that is not on this device; the token never appears in a result", async () => {
    const { rt } = setup();
    const [named, bad] = [new FakeInvocation(), new FakeInvocation()];
    rt.value("projects", "pt_acme_0001", "status", "Globex", named);
    rt.value("projects", "pt_acme_0001", "status", "acme", bad);
    await settled([named, bad]);
    expect(named.last).toEqual({ error: "#N/A", message: `No connection named "Globex" on this device. Open the PPM pane's Connect tab and add one.` });
    expect(typeof bad.last).toBe("string"); // resolved by name, case-insensitive: a value, not an error
    expect(JSON.stringify([named.results, bad.results])).not.toContain(TOKEN);
  });

  it("a rejected token: the message names the connection, never the token", async () => {
    const { rt } = setup({ token: "wrong-token-123456" });
    const inv = new FakeInvocation();
    rt.value("projects", "pt_acme_0001", "status", undefined, inv);
    await settled([inv]);
    expect((inv.last as CellError).error).toBe("#VALUE!");
    expect(JSON.stringify(inv.results)).not.toContain("wrong-token");
  });
});

describe("after a regeneration", () => {
  it("streamed results update through one conditional request per dataset; unchanged costs a 304 and changes nothing", async () => {
    const { rt, data } = setup();
    const q = "$apply=aggregate(actual_cost with sum as total)";
    const [sum, cell] = [new FakeInvocation(), new FakeInvocation()];
    rt.query("financials", q, undefined, sum);
    rt.value("financials", "PRJ-0001|2026|1", "actual_cost", undefined, cell);
    await settled([sum, cell]);
    const before = sum.last;
    await data.revalidate();
    expect(sum.results).toHaveLength(1); // 304: nothing new set
    await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    await data.revalidate();
    await settled([sum, cell], 2);
    expect(sum.last).not.toEqual(before);
    expect(sum.last).toEqual(spill(applyQuery(await oracle("financials"), parseQuery(q)).table, "x"));
    const log = await datasetRequests("financials");
    expect(log.map((r) => r.status)).toEqual([200, 304, 200, 200]); // load, 304, regenerated, and the oracle's own
    expect(data.stats).toEqual({ loads: 1, revalidations: 2, unchanged: 1 });
  });

  it("a cancelled formula stops listening; a failed revalidation keeps the table and PPM.ASOF says it is stale", async () => {
    const { rt, data, conn } = setup();
    const [v, asof] = [new FakeInvocation(), new FakeInvocation()];
    rt.value("financials", "PRJ-0001|2026|1", "budget", undefined, v);
    rt.asOf("financials", undefined, asof);
    await settled([v, asof]);
    expect(asof.last).toBe("as of 2026-01-15 06:00 UTC");
    v.onCanceled?.();
    expect(data.subscriberCount()).toBe(1);
    // A dataset no formula uses any more is forgotten at the next revalidation, not revalidated.
    const p = new FakeInvocation();
    rt.value("projects", "pt_acme_0001", "status", undefined, p);
    await settled([p]);
    p.onCanceled?.();
    await fetch(`${svc.url}/__control/fault?path=/api/bi/v1/financials&status=503&count=5`, { method: "POST", headers: CONTROL });
    await data.revalidate();
    await settled([asof], 2);
    expect(asof.last).toMatch(/^as of 2026-01-15 06:00 UTC \(stale: /);
    expect(v.results).toHaveLength(1);
    expect(data.peek(conn, "projects")).toBeNull();
    expect((await datasetRequests("projects")).map((r) => r.status)).toEqual([200]);
  });
});

describe("PPM.VIEW", () => {
  it("runs a saved view's query on the cached export; an unknown view is #N/A naming the views", async () => {
    const views = upsertView(emptyDocument(), { name: "By year", dataset: "financials", query: parseQuery("$apply=groupby((fiscal_year),aggregate($count as n))") });
    const { rt } = setup({ views });
    const [ok, missing] = [new FakeInvocation(), new FakeInvocation()];
    rt.view("by year", undefined, ok);
    rt.view("Nope", undefined, missing);
    await settled([ok, missing]);
    expect(ok.last).toEqual(spill(applyQuery(await oracle("financials"), views.views[0].query).table, "x"));
    expect(missing.last).toEqual({ error: "#N/A", message: 'This workbook has no view named "Nope" (it has: By year).' });
  });
});

describe("consent: PPM formulas in a workbook from elsewhere (#28, per document and connection since #36)", () => {
  const URL_A = "https://contoso.sharepoint.com/sites/fin/Shared%20Documents/budget.xlsx";
  const URL_B = "https://fabrikam.example/stranger.xlsx";
  const GLOBEX_SUMMARY = (): ConnectionSummary => ({ id: "c2", name: "Globex", baseUrl: svc.url, companyId: "globex", hasToken: true, hasRecordCredentials: false });
  const ACME_SUMMARY = (): ConnectionSummary => ({ id: "c1", name: "Acme", baseUrl: svc.url, companyId: "acme", hasToken: true, hasRecordCredentials: false });

  /** A device's storage that shows what was written to it. */
  class SeenStorage extends MemoryStorage {
    written: string[] = [];
    override setItem(key: string, value: string): void {
      this.written.push(key, value);
      super.setItem(key, value);
    }
  }

  it("blocks every function with #N/A and sends nothing until allowed; Allow re-runs them and they get values", async () => {
    const storage = new SeenStorage();
    const doc = new FakeDocument();
    const consent = deviceConsent(storage, () => URL_A, doc);
    const { rt } = setup({ consent, views: upsertView(emptyDocument(), { name: "Big", dataset: "projects", query: parseQuery("$top=2") }) });
    const table = await oracle("projects");
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const seen: Array<{ waiting: number; sources: string[] } | null> = [];
    consent.onChange((r) => seen.push(r && { waiting: r.waiting, sources: r.sources }));
    const invs = Array.from({ length: 4 }, () => new FakeInvocation());
    const keyCol = table.columns.findIndex((c) => c.name === "project_token");
    rt.value("projects", table.rows[0][keyCol], "project_token", undefined, invs[0]);
    rt.query("projects", "$top=3", undefined, invs[1]);
    rt.view("Big", undefined, invs[2]);
    rt.asOf("projects", undefined, invs[3]);
    await settled(invs);
    for (const inv of invs) expectError(inv.last, "#N/A", 'need your permission on this device to read with "Acme": open the PPM pane and choose Allow');
    // Nothing reached the service (its request log is empty), and no token is in any message.
    expect(await requests()).toEqual([]);
    await new Promise((r) => setTimeout(r, 0));
    expect(seen[seen.length - 1]).toEqual({ waiting: 4, sources: [`Acme (${svc.url})`] });
    expect(JSON.stringify([seen, invs.map((i) => i.results)])).not.toContain(TOKEN);
    // The pane's question names the connection and its address, says what Excel itself can do with
    // data in cells, and holds no token.
    const question = formulaConsentText(consent.request()!);
    expect(question).toBe(
      `4 PPM formulas in this workbook want to read data with your connection Acme (${svc.url}) on this device. Nothing has been sent. ` +
        "Allow PPM formulas in this workbook to use it on this device? Once data is in cells, Excel itself can send it anywhere (for example with WEBSERVICE or IMAGE formulas), " +
        "and anyone who can edit this workbook can add such formulas: allow only workbooks whose authors and editors you trust.",
    );
    expect(doc.writes).toBe(0); // nothing is written into the document before Allow

    await consent.allow(consent.request()!);
    // While the data loads, each cell says so instead of asking again (issue #37, item 2), then gets its value.
    await settled(invs, 3);
    for (const inv of invs) expectError(inv.results[1], "#N/A", "Loading: PPM formulas are allowed in this workbook on this device");
    expect(invs[0].last).toBe(table.rows[0][keyCol]);
    expect((invs[1].last as unknown[][]).length).toBe(4);
    expect((invs[2].last as unknown[][]).length).toBe(3);
    expect(String(invs[3].last)).toMatch(/^as of /);
    expect(consent.request()).toBeNull();
    // Allow wrote a random id into the document, and the answer on this device is keyed by a hash:
    // neither the address, the id nor the connection is stored.
    expect(doc.writes).toBe(1);
    expect(doc.id).toMatch(/^[0-9a-f]{32}$/);
    expect(storage.written[0]).toMatch(/^pk\|ppm\.v2\.formulaConsent\.[0-9a-f]{32}$/);
    expect(Object.keys(JSON.parse(storage.written[1]) as object)).toEqual(["answer", "at"]);
    expect(JSON.parse(storage.written[1])).toMatchObject({ answer: "allow" });
    expect(JSON.stringify(storage.written)).not.toMatch(/contoso|demo-acme|127\.0\.0\.1/);
    expect(JSON.stringify(storage.written)).not.toContain(doc.id!);
  });

  it("finding 1: a workbook allowed for Acme asks again for a formula naming Globex, and sends nothing until allowed", async () => {
    // Globex's reporting on, so the formula can get its value once allowed.
    await fetch(`${svc.url}/__control/reporting?company=globex&enabled=true`, { method: "POST", headers: CONTROL });
    try {
      const consent = deviceConsent(new MemoryStorage(), () => URL_A);
      const { rt } = setup({ consent, connections: [ACME_SUMMARY(), GLOBEX_SUMMARY()] });
      await consent.allow({ connections: [ACME()] });
      const acme = new FakeInvocation();
      rt.query("projects", "$select=project_token&$top=1", "Acme", acme);
      await settled([acme]);
      expect(acme.last).toEqual([["project_token"], ["pt_acme_0001"]]);
      await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
      const globex = new FakeInvocation();
      rt.value("projects", "pt_globex_0001", "project_name", "Globex", globex);
      await settled([globex]);
      expectError(globex.last, "#N/A", 'need your permission on this device to read with "Globex"');
      // Nothing reached the service: Globex's token was never sent.
      expect(await requests()).toEqual([]);
      await new Promise((r) => setTimeout(r, 0));
      const request = consent.request()!;
      expect(request).toMatchObject({ waiting: 1, sources: [`Globex (${svc.url})`] });
      expect(formulaConsentText(request)).toContain(`your connection Globex (${svc.url})`);
      await consent.allow(request);
      await settled([globex], 3); // the permission question, "Loading: …" (issue #37), the value
      expect(await datasetRequests("projects")).toHaveLength(1);
      const oracleGlobex = await new PpmClient({ id: "o", name: "g", baseUrl: svc.url, token: "demo-globex-token" }).fetchDataset("projects", { format: "json", conditional: false });
      if (oracleGlobex.status !== "updated") throw new Error("no table");
      const cols = oracleGlobex.table.columns.map((c) => c.name);
      const row = oracleGlobex.table.rows.find((r) => r[cols.indexOf("project_token")] === "pt_globex_0001")!;
      expect(globex.last).toBe(row[cols.indexOf("project_name")]);
    } finally {
      await fetch(`${svc.url}/__control/reporting?company=globex&enabled=false`, { method: "POST", headers: CONTROL });
    }
  });

  it("finding 1: another file at an allowed address is asked again, whatever id it carries, unless it is the allowed document", async () => {
    const storage = new MemoryStorage();
    const original = new FakeDocument();
    await deviceConsent(storage, () => URL_A, original).allow({ connections: [ACME()] });
    // A new runtime on the allowed document (same address, same id): allowed without asking.
    expect(await deviceConsent(storage, () => URL_A, new FakeDocument(original.id)).allowed(ACME())).toBe(true);
    // A different file put at the same address: no id, another id, or one that cannot be read.
    expect(await deviceConsent(storage, () => URL_A, new FakeDocument(null)).allowed(ACME())).toBe(false);
    expect(await deviceConsent(storage, () => URL_A, new FakeDocument(newDocumentId())).allowed(ACME())).toBe(false);
    const unreadable: DocumentIdAccess = { read: () => Promise.reject(new Error("busy")), ensure: () => Promise.reject(new Error("busy")) };
    expect(await deviceConsent(storage, () => URL_A, unreadable).allowed(ACME())).toBe(false);
    // A copy carrying the id (a co-author's copy, a planted file) at another address.
    expect(await deviceConsent(storage, () => URL_B, new FakeDocument(original.id)).allowed(ACME())).toBe(false);
    // And the formulas of a stranger's file at the allowed address send nothing.
    const { rt } = setup({ consent: deviceConsent(storage, () => URL_A, new FakeDocument(null)) });
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    const inv = new FakeInvocation();
    rt.query("projects", "", undefined, inv);
    await settled([inv]);
    expectError(inv.last, "#N/A", "choose Allow");
    expect(await requests()).toEqual([]);
  });

  it("a connection deleted and created again under the same name, or moved to another environment, is asked again; a renamed one is not", async () => {
    const storage = new MemoryStorage();
    const doc = new FakeDocument();
    await deviceConsent(storage, () => URL_A, doc).allow({ connections: [ACME()] });
    const later = () => deviceConsent(storage, () => URL_A, new FakeDocument(doc.id));
    expect(await later().allowed({ ...ACME(), label: "Acme EU (renamed)" })).toBe(true);
    expect(await later().allowed({ ...ACME(), id: "c-0000abcd" })).toBe(false); // re-created: a new random id
    expect(await later().allowed({ ...ACME(), baseUrl: "https://acme.example/ppm" })).toBe(false); // edited to another environment
  });

  it("Allow allows the connections of the question the user saw, not a connection blocked while it was on screen", async () => {
    const consent = deviceConsent(new MemoryStorage(), () => URL_A);
    const { rt } = setup({ consent, connections: [ACME_SUMMARY(), GLOBEX_SUMMARY()] });
    const acme = new FakeInvocation();
    rt.query("projects", "$top=1", "Acme", acme);
    await settled([acme]);
    await new Promise((r) => setTimeout(r, 0));
    const shown = consent.request()!;
    expect(shown.sources).toEqual([`Acme (${svc.url})`]);
    const globex = new FakeInvocation();
    rt.query("projects", "$top=1", "Globex", globex);
    await settled([globex]);
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    await consent.allow(shown);
    await settled([acme], 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(globex.results).toHaveLength(1);
    expect(consent.request()).toMatchObject({ waiting: 1, sources: [`Globex (${svc.url})`] });
    expect(await consent.allowed(GLOBEX())).toBe(false);
  });

  it("a document without an address, or whose id cannot be written, is asked, and the answer holds for this runtime only", async () => {
    const noUrlStorage = new SeenStorage();
    const noUrlDoc = new FakeDocument();
    const noUrl = deviceConsent(noUrlStorage, () => null, noUrlDoc);
    expect(await noUrl.allowed(ACME())).toBe(false);
    await noUrl.allow({ connections: [ACME()] });
    expect(await noUrl.allowed(ACME())).toBe(true);
    expect(await noUrl.allowed(GLOBEX())).toBe(false); // per connection, in a session too
    expect(noUrlStorage.written).toEqual([]);
    expect(noUrlDoc.writes).toBe(0);
    expect(await deviceConsent(noUrlStorage, () => null, noUrlDoc).allowed(ACME())).toBe(false);
    // A read-only file: the id cannot be written, so nothing is stored; this runtime is allowed.
    const errors: string[] = [];
    const roStorage = new SeenStorage();
    const ro = new FormulaConsent({ storage: roStorage, key: (n) => n, documentUrl: () => URL_A, documentId: new FakeDocument(null, true), onError: (where) => errors.push(where) });
    await ro.allow({ connections: [ACME()] });
    expect(await ro.allowed(ACME())).toBe(true);
    expect(roStorage.written).toEqual([]);
    expect(errors).toEqual(["formula consent"]);
  });

  it("an existing document id is kept at Allow (co-authors and other devices agree on one)", async () => {
    const doc = new FakeDocument(newDocumentId());
    const id = doc.id;
    await deviceConsent(new MemoryStorage(), () => URL_A, doc).allow({ connections: [ACME()] });
    expect(doc.id).toBe(id);
    expect(doc.writes).toBe(0);
  });

  it("a cancelled blocked formula is forgotten and not re-run on Allow", async () => {
    const consent = deviceConsent(new MemoryStorage(), () => URL_B);
    const { rt } = setup({ consent });
    const kept = new FakeInvocation();
    const gone = new FakeInvocation();
    rt.query("projects", "$top=1", undefined, kept);
    rt.query("financials", "$top=1", undefined, gone);
    await settled([kept, gone]);
    gone.onCanceled?.();
    expect(consent.request()?.waiting).toBe(1);
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE", headers: CONTROL });
    await consent.allow(consent.request()!);
    await settled([kept], 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(gone.results).toHaveLength(1);
    expect(await datasetRequests("financials")).toHaveLength(0);
    expect(await datasetRequests("projects")).toHaveLength(1);
  });
});

describe("PPM.ASOF of a table follows its refreshes (issue #37, item 1)", () => {
  const bound = (generatedAt: string, lastFailure?: { at: string; code: string; message: string }): Binding =>
    ({ connectionId: "c1", environment: svc.url, companyId: "acme", tableName: "ppm_financials", lastRefreshAt: generatedAt, validators: { generatedAt }, ...(lastFailure ? { lastFailure } : {}) }) as Binding;

  it("a formula typed before the refreshes shows each refresh's generation, as one typed after them does", async () => {
    // The workbook's bindings, as the runtime reads them: replaced in place as a refresh does.
    const bindings = [bound("2026-01-15T12:20:00Z")];
    const { rt } = setup({ bindings });
    const early = new FakeInvocation();
    rt.asOf("ppm_financials", undefined, early);
    await settled([early]);
    expect(early.last).toBe("as of 2026-01-15 12:20 UTC");

    bindings[0] = bound("2026-01-15T12:28:00Z");
    rt.workbookChanged(); // what the runtime does when a refresh ends (the lock is released)
    await settled([early], 2);
    expect(early.last).toBe("as of 2026-01-15 12:28 UTC");

    bindings[0] = bound("2026-01-15T12:31:00Z");
    rt.workbookChanged();
    await settled([early], 3);
    const late = new FakeInvocation();
    rt.asOf("PPM_FINANCIALS", undefined, late);
    await settled([late]);
    expect([early.last, late.last]).toEqual(["as of 2026-01-15 12:31 UTC", "as of 2026-01-15 12:31 UTC"]);

    // A failed refresh: the same generation, now stale. A cancelled formula is no longer re-run.
    bindings[0] = bound("2026-01-15T12:31:00Z", { at: "2026-01-15T12:40:00Z", code: "server_error", message: "The service answered HTTP 503." });
    late.onCanceled?.();
    rt.workbookChanged();
    await settled([early], 4);
    expect(early.last).toBe("as of 2026-01-15 12:31 UTC (stale: the last refresh failed: The service answered HTTP 503.)");
    await new Promise((r) => setTimeout(r, 20));
    expect(late.results).toHaveLength(1);
  });
});
