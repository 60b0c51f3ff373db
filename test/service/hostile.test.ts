/**
 * The service client against a hostile or broken service (issue #14): real HTTP on 127.0.0.1, a
 * small proxy in front of the reference service that answers some paths with what a sign-in page,
 * a misconfigured proxy or a broken deployment sends.
 */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient, PpmError, parseCsvText, type DatasetFormat } from "../../src/service";
import { csvRecords, startHostileService, type HostileService, type Upstream } from "../helpers/hostileService";
import { acme, expectPpmError } from "./helpers";
import { CONTROL } from "../helpers/control";

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

const client = (opts: ConstructorParameters<typeof PpmClient>[1] = {}) => new PpmClient(acme(svc.url), { retries: 0, ...opts });
const fetchFin = (format: DatasetFormat, opts: ConstructorParameters<typeof PpmClient>[1] = {}) => client(opts).fetchDataset("financials", { format, conditional: false });

const PATH: Record<DatasetFormat, string> = { csv: "/api/bi/v1/financials.csv", json: "/api/bi/v1/financials", odata: "/api/bi/odata/v1/financials" };
const SIGN_IN = "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form>user <input name=u></form></body></html>\n";
const DATASET_HEADERS = { "X-Service-Dataset-Key": "financials", "X-Service-Generated-At": "2026-01-01T00:00:00Z" };

/** The upstream answer with only the given headers changed (null removes one). */
function withHeaders(up: Upstream, change: Record<string, string | null>): Upstream {
  const headers = { ...up.headers };
  for (const [k, v] of Object.entries(change)) {
    for (const h of Object.keys(headers)) if (h.toLowerCase() === k.toLowerCase()) delete headers[h];
    if (v !== null) headers[k] = v;
  }
  return { ...up, headers };
}

describe("item 1: anything with 200 is not accepted as the export", () => {
  it("(control) an HTML page read as CSV would be a one-column table named after its doctype", () => {
    const t = parseCsvText(SIGN_IN);
    expect(t[0]).toEqual(["<!DOCTYPE html>"]);
  });

  it.each(["csv", "json", "odata"] as const)("an HTML sign-in page (text/html) instead of the %s form is refused and named", async (format) => {
    svc.on(PATH[format], () => ({ headers: { "Content-Type": "text/html; charset=utf-8", ...DATASET_HEADERS }, body: SIGN_IN }));
    const e = await expectPpmError(fetchFin(format), "unexpected_content");
    expect(e.message).toMatch(/^The service answered with an HTML page \(Content-Type text\/html\), not the (CSV export|JSON export|OData collection) of "financials": a sign-in page or a proxy in between\?$/);
    expect(e.action).toMatch(/browser/);
    expect(e.details).toMatchObject({ arrived: "html" });
    expect(e.message).not.toContain("Sign in");
  });

  it("an HTML page without a Content-Type is recognised by its first bytes", async () => {
    svc.on(PATH.csv, () => ({ body: `\uFEFF  \r\n${SIGN_IN}` }));
    const e = await expectPpmError(fetchFin("csv"), "unexpected_content");
    expect(e.message).toMatch(/HTML page, not the CSV export of "financials"/);
  });

  it("an HTML page labelled text/csv is still refused (the body decides)", async () => {
    svc.on(PATH.csv, () => ({ headers: { "Content-Type": "text/csv" }, body: SIGN_IN }));
    await expectPpmError(fetchFin("csv"), "unexpected_content");
  });

  it("a JSON error body with status 200 instead of the CSV names the error code", async () => {
    svc.on(PATH.csv, () => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify({ error: "unauthorized", message: "Credentials missing or wrong" }) }));
    const e = await expectPpmError(fetchFin("csv"), "unexpected_content");
    expect(e.message).toBe('The service answered with a JSON error body ("unauthorized") and status 200 (Content-Type application/json), not the CSV export of "financials".');
  });

  it("a JSON error body with status 200 and no Content-Type, instead of the CSV", async () => {
    svc.on(PATH.csv, () => ({ body: JSON.stringify({ error: "bi_reporting_disabled" }) }));
    const e = await expectPpmError(fetchFin("csv"), "unexpected_content");
    expect(e.message).toMatch(/JSON error body \("bi_reporting_disabled"\) and status 200, not the CSV export/);
  });

  it.each(["json", "odata"] as const)("a JSON error body with status 200 instead of the %s form", async (format) => {
    svc.on(PATH[format], () => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify({ error: "not_generated", message: "x" }) }));
    const e = await expectPpmError(fetchFin(format), "unexpected_content");
    expect(e.message).toMatch(/JSON error body \("not_generated"\) and status 200, not the (JSON export|OData collection) of "financials"/);
  });

  it("a CSV whose header is not the dataset's columns is refused, naming what is missing", async () => {
    svc.on(PATH.csv, () => ({ headers: { "Content-Type": "text/csv" }, body: "a,b,c\r\n1,2,3\r\n" }));
    const e = await expectPpmError(fetchFin("csv"), "unexpected_content");
    expect(e.message).toMatch(/^The CSV answer for "financials" does not have the dataset's columns: its header lacks "project_id", .* and 7 more \(the manifest lists 12; the header has "a", "b", "c"\)/);
  });

  it("another dataset's CSV (its own header) is refused by the header check", async () => {
    svc.on(PATH.csv, async (req) => {
      const other = await fetch(`${ref.url}/api/bi/v1/resource_allocations.csv`, { headers: { "Company-Api-Token": req.token ?? "" } });
      return { headers: { "Content-Type": "text/csv" }, body: Buffer.from(await other.arrayBuffer()) };
    });
    await expectPpmError(fetchFin("csv"), "unexpected_content");
  });

  it.each(["csv", "json", "odata"] as const)("X-Service-Dataset-Key naming another dataset is refused (%s)", async (format) => {
    svc.on(PATH[format], async (req) => withHeaders(await req.upstream(), { "X-Service-Dataset-Key": "projects" }));
    const e = await expectPpmError(fetchFin(format), "unexpected_content");
    expect(e.message).toBe('The service answered the request for "financials" with the dataset "projects" (X-Service-Dataset-Key), so it was not read.');
  });

  it("a JSON export whose dataset_key names another dataset is refused when the header is absent", async () => {
    svc.on(PATH.json, async (req) => {
      const up = withHeaders(await req.upstream(), { "X-Service-Dataset-Key": null });
      const body = JSON.parse(up.body.toString("utf8")) as Record<string, unknown>;
      return { ...up, body: JSON.stringify({ ...body, dataset_key: "projects" }) };
    });
    const e = await expectPpmError(fetchFin("json"), "unexpected_content");
    expect(e.message).toMatch(/with the export of "projects" \(its dataset_key\)/);
  });

  it("a JSON export lacking the manifest's columns is refused", async () => {
    svc.on(PATH.json, () => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify({ dataset_key: "financials", row_count: 1, columns: [{ name: "x", type: "Edm.String" }], rows: [{ x: "1" }] }) }));
    const e = await expectPpmError(fetchFin("json"), "unexpected_content");
    expect(e.message).toMatch(/does not have the dataset's columns: it lacks "project_id"/);
  });

  it("OData rows carrying none of the declared properties are refused", async () => {
    svc.on(PATH.odata, () => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify({ "@odata.context": "x", value: [{ foo: 1, bar: "x" }, { foo: 2, bar: "y" }] }) }));
    const e = await expectPpmError(fetchFin("odata"), "unexpected_content");
    expect(e.message).toBe('The OData answer for "financials" carries none of the properties $metadata declares for it, only "foo", "bar". It is another collection.');
  });

  it("CSV declared text/plain or application/octet-stream is accepted when the body is the export", async () => {
    for (const type of ["text/plain; charset=utf-8", "application/octet-stream"]) {
      svc.on(PATH.csv, async (req) => withHeaders(await req.upstream(), { "Content-Type": type }));
      const r = await fetchFin("csv");
      expect(r.status === "updated" && r.table.rows.length).toBe(120);
    }
  });

  it("the real exports pass every check, in every form", async () => {
    for (const format of ["csv", "json", "odata"] as const) {
      const r = await fetchFin(format);
      expect(r.status === "updated" && r.table.rows.length).toBe(120);
    }
  });
});

describe("item 2: a 304 to a request without validators", () => {
  it.each(["csv", "json", "odata"] as const)("is an error (%s), not 'unchanged'", async (format) => {
    svc.on(PATH[format], () => ({ status: 304 }));
    const e = await expectPpmError(fetchFin(format), "unexpected_not_modified");
    expect(e.message).toMatch(/304 Not Modified to the request for "financials" \(.*\), which carried no validators/);
    expect(e.status).toBe(304);
  });

  it("also when the call is conditional but nothing is stored yet", async () => {
    svc.on(PATH.csv, () => ({ status: 304 }));
    await expectPpmError(client().fetchDataset("financials", { format: "csv" }), "unexpected_not_modified");
  });

  it("a 304 to a request that sent validators is still 'unchanged'", async () => {
    const c = client();
    const first = await c.fetchDataset("financials", { format: "csv" });
    expect(first.status).toBe("updated");
    expect((await c.fetchDataset("financials", { format: "csv" })).status).toBe("unchanged");
  });
});

describe("item 6: CSV and OData cut at a row boundary", () => {
  const cutCsv = (keep: number, strip: Record<string, null> = {}) => async (req: { upstream(): Promise<Upstream> }) => {
    const up = withHeaders(await req.upstream(), strip);
    const records = csvRecords(up.body.toString("utf8"));
    return { ...up, body: `${records.slice(0, 1 + keep).join("\r\n")}\r\n` };
  };
  const cutOData = (keep: number) => async (req: { upstream(): Promise<Upstream> }) => {
    const up = await req.upstream();
    const body = JSON.parse(up.body.toString("utf8")) as { value: unknown[] };
    return { ...up, body: JSON.stringify({ ...body, value: body.value.slice(0, keep) }) };
  };

  it("(control) the cut CSV is itself well-formed: 59 complete rows", async () => {
    svc.on(PATH.csv, cutCsv(59));
    const r = await fetch(`${svc.url}${PATH.csv}`, { headers: { "Company-Api-Token": "demo-acme-token" } });
    expect(parseCsvText(await r.text()).length).toBe(60);
  });

  it("a CSV with 59 of 120 rows fails, naming both counts", async () => {
    svc.on(PATH.csv, cutCsv(59));
    const e = await expectPpmError(fetchFin("csv"), "incomplete_export");
    expect(e.message).toMatch(/^The CSV form of "financials" arrived with 59 rows, but the manifest lists 120 for the export generated at .*: the body was cut short, so it was not used\.$/);
    expect(e.details).toMatchObject({ rowsReceived: 59, manifestRowCount: 120 });
  });

  it("an OData collection with 59 of 120 rows fails", async () => {
    svc.on(PATH.odata, cutOData(59));
    const e = await expectPpmError(fetchFin("odata"), "incomplete_export");
    expect(e.message).toMatch(/OData form of "financials" arrived with 59 rows, but the manifest lists 120/);
  });

  it("without X-Service-Generated-At (hidden by CORS) the manifest is compared before and after", async () => {
    svc.on(PATH.csv, cutCsv(59, { "X-Service-Generated-At": null, ETag: null, "Last-Modified": null }));
    await expectPpmError(fetchFin("csv"), "incomplete_export");
  });

  it("a newer export than the manifest described is checked against the fresh manifest", async () => {
    const c = client();
    await c.manifest();
    await fetch(`${ref.url}/__control/regenerate?company=acme&dataset=financials`, { method: "POST", headers: CONTROL });
    const r = await c.fetchDataset("financials", { format: "csv", conditional: false });
    expect(r.status === "updated" && r.table.rows.length).toBe(120);
    svc.on(PATH.csv, cutCsv(100));
    await expectPpmError(c.fetchDataset("financials", { format: "csv", conditional: false }), "incomplete_export");
  });

  it("an empty export (0 rows, header only) is complete", async () => {
    const r = await client().fetchDataset("milestones", { format: "csv", conditional: false });
    expect(r.status === "updated" && r.table.rows.length).toBe(0);
  });
});

describe("item 8: messages that point the right way", () => {
  it("a body that stalls after the headers says so, and how much arrived", async () => {
    svc.on(PATH.csv, async (req) => {
      const up = await req.upstream();
      return { ...up, body: up.body.subarray(0, 100), stall: true };
    });
    const e = await expectPpmError(fetchFin("csv", { timeoutMs: 400 }), "timeout");
    expect(e.message).toBe("The service answered GET /api/bi/v1/financials.csv but the body stalled: 100 bytes received in 0.4 s, and the rest did not arrive.");
    expect(e.details).toMatchObject({ phase: "body", bytesReceived: 100 });
  });

  it("a service that never sends headers still says it did not answer", async () => {
    svc.on(PATH.csv, () => new Promise(() => undefined));
    const e = await expectPpmError(fetchFin("csv", { timeoutMs: 300 }), "timeout");
    expect(e.message).toMatch(/did not answer within/);
    expect(e.details).toMatchObject({ phase: "headers" });
  });

  it("a long server message is clipped, in the message and in details", async () => {
    const long = `x${"y".repeat(5000)}`;
    svc.on(PATH.csv, () => ({ status: 418, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message: long, extra: [long, long] }) }));
    const e = await expectPpmError(fetchFin("csv"), "http_error");
    expect(e.message.length).toBeLessThan(320);
    expect(JSON.stringify(e.toJSON()).length).toBeLessThan(1200);
  });

  it("a token echoed back where the message is clipped leaves no piece of it (redacted before clipping)", async () => {
    const token = acme(svc.url).token;
    // The 200-character cut falls 7 characters into the token: clipped first, those 7 survived redaction.
    const echoed = `${"y".repeat(193)}${token}`;
    svc.on(PATH.csv, () => ({ status: 418, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message: echoed, extra: [echoed] }) }));
    const e = await expectPpmError(fetchFin("csv"), "http_error");
    const all = JSON.stringify(e.toJSON()) + e.message;
    for (let n = 4; n <= token.length; n++) expect(all).not.toContain(token.slice(0, n));
    expect(e.message).toMatch(/y{100}/);
  });

  it("every new error is a PpmError with an action", async () => {
    svc.on(PATH.csv, () => ({ status: 304 }));
    const e = await fetchFin("csv").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PpmError);
    expect((e as PpmError).action).toMatch(/Retry/);
  });
});
