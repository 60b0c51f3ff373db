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
import { FormulaConsent, formulaConsentText } from "../../src/addin/formulaConsent";
import type { Binding } from "../../src/refresh/binding";
import { emptyDocument, upsertView, type ViewsDocument } from "../../src/views/views";
import type { Table } from "../../src/table/model";
import { useReferenceService } from "../helpers/referenceService";

const TOKEN = "demo-acme-token";
const svc = useReferenceService({ clearLog: true });

async function requests(): Promise<Array<{ method: string; path: string; status: number }>> {
  const r = (await (await fetch(`${svc.url}/__control/requests`)).json()) as { requests: Array<{ method: string; path: string; status: number }> };
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

/** The runtime's consent over a device's storage (for a document this device allowed, by default). */
function deviceConsent(storage = new MemoryStorage(), url: () => string | null = () => null): FormulaConsent {
  return new FormulaConsent({ storage, key: (n) => `pk|${n}`, documentUrl: url });
}
function allowedConsent(): FormulaConsent {
  const c = deviceConsent(new MemoryStorage(), () => "https://contoso.sharepoint.com/mine.xlsx");
  c.allow();
  return c;
}

function setup(opts: { connections?: ConnectionSummary[]; bindings?: Binding[]; views?: ViewsDocument; token?: string; consent?: FormulaConsent } = {}) {
  const conn: Connection = { id: "c1", name: "Acme", baseUrl: svc.url, token: opts.token ?? TOKEN };
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
    connection: (id) => (id === "c1" ? conn : null),
    bindings: () => Promise.resolve(opts.bindings ?? []),
    views: () => Promise.resolve(opts.views ?? emptyDocument()),
    error: (code, message): CellError => ({ error: code, message }),
    consent: opts.consent ?? allowedConsent(),
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
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE" });
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
    await fetch(`${svc.url}/__control/fault?path=/api/bi/v1/projects&status=503&count=3`, { method: "POST" });
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
    await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST" });
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
    await fetch(`${svc.url}/__control/fault?path=/api/bi/v1/financials&status=503&count=5`, { method: "POST" });
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

describe("consent: PPM formulas in a workbook from elsewhere (follow-up to #28)", () => {
  const URL_A = "https://contoso.sharepoint.com/sites/fin/Shared%20Documents/budget.xlsx";
  const URL_B = "https://fabrikam.example/stranger.xlsx";

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
    const consent = deviceConsent(storage, () => URL_A);
    const { rt } = setup({ consent, views: upsertView(emptyDocument(), { name: "Big", dataset: "projects", query: parseQuery("$top=2") }) });
    const table = await oracle("projects");
    await fetch(`${svc.url}/__control/requests`, { method: "DELETE" });
    const seen: Array<{ waiting: number; sources: string[] } | null> = [];
    consent.onChange((r) => seen.push(r));
    const invs = Array.from({ length: 4 }, () => new FakeInvocation());
    const keyCol = table.columns.findIndex((c) => c.name === "project_token");
    rt.value("projects", table.rows[0][keyCol], "project_token", undefined, invs[0]);
    rt.query("projects", "$top=3", undefined, invs[1]);
    rt.view("Big", undefined, invs[2]);
    rt.asOf("projects", undefined, invs[3]);
    await settled(invs);
    for (const inv of invs) expectError(inv.last, "#N/A", "need your permission on this device: open the PPM pane and choose Allow");
    // Nothing reached the service (its request log is empty), and no token is in any message.
    expect(await requests()).toEqual([]);
    await new Promise((r) => setTimeout(r, 0));
    expect(seen[seen.length - 1]).toEqual({ waiting: 4, sources: [`Acme (${svc.url})`] });
    expect(JSON.stringify([seen, invs.map((i) => i.results)])).not.toContain(TOKEN);
    // The pane's question names the connection and its address, and no token.
    const question = formulaConsentText(consent.request()!);
    expect(question).toBe(`4 PPM formulas in this workbook read data with your connection on this device: Acme (${svc.url}). Nothing has been sent. Allow PPM formulas in this workbook on this device? (Only for workbooks you trust: formulas can put your data into cells.)`);

    consent.allow();
    await settled(invs, 2);
    expect(invs[0].last).toBe(table.rows[0][keyCol]);
    expect((invs[1].last as unknown[][]).length).toBe(4);
    expect((invs[2].last as unknown[][]).length).toBe(3);
    expect(String(invs[3].last)).toMatch(/^as of /);
    expect(consent.request()).toBeNull();
    // The answer is on this device, keyed by a hash: the address itself is not stored.
    expect(storage.written[0]).toMatch(/^pk\|ppm\.v1\.formulaConsent\.[0-9a-f]{32}$/);
    expect(JSON.parse(storage.written[1])).toMatchObject({ answer: "allow" });
    expect(JSON.stringify(storage.written)).not.toMatch(/contoso|demo-acme/);
  });

  it("asks again for another document's address; a document without an address is asked, for this runtime only", async () => {
    const storage = new MemoryStorage();
    let url: string | null = URL_A;
    const consent = deviceConsent(storage, () => url);
    consent.allow();
    expect(deviceConsent(storage, () => URL_A).allowed()).toBe(true);
    url = URL_B;
    expect(consent.allowed()).toBe(true); // this runtime's answer holds for its own document
    const other = deviceConsent(storage, () => URL_B);
    expect(other.allowed()).toBe(false);
    const { rt } = setup({ consent: other });
    const inv = new FakeInvocation();
    rt.query("projects", "", undefined, inv);
    await settled([inv]);
    expectError(inv.last, "#N/A", "choose Allow");
    expect(await datasetRequests("projects")).toHaveLength(0);
    // No address (a new workbook, or Office not telling): asked; the answer is not stored.
    const noUrlStorage = new SeenStorage();
    const noUrl = deviceConsent(noUrlStorage, () => null);
    expect(noUrl.allowed()).toBe(false);
    noUrl.allow();
    expect(noUrl.allowed()).toBe(true);
    expect(noUrlStorage.written).toEqual([]);
    expect(deviceConsent(noUrlStorage, () => null).allowed()).toBe(false);
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
    consent.allow();
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
