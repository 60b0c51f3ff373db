/** `datasetRows`: large exports are generated on the fly and streamed with the right counts. */
import Papa from "papaparse";
import { createHash } from "node:crypto";
import type { Manifest } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { acme, get, json, start, type ExportReply, type ODataReply } from "./helpers";

const ROWS = 50_000;
let svc: ReferenceService;
beforeAll(async () => {
  svc = await start({ datasetRows: { financials: ROWS } });
});
afterAll(async () => {
  await svc.close();
});

test("manifest reports the configured row count", async () => {
  const manifest = await json<Manifest>(await get(svc.url, "/api/bi/v1/manifest", acme()));
  expect(manifest.datasets.find((d) => d.key === "financials")?.artifacts.row_count).toBe(ROWS);
});

test("CSV has the header plus exactly ROWS records, streamed (chunked, no Content-Length)", async () => {
  const res = await get(svc.url, "/api/bi/v1/financials.csv", acme());
  expect(res.status).toBe(200);
  expect(res.headers.get("content-length")).toBeNull();
  const text = await res.text();
  const parsed = Papa.parse<string[]>(text, { newline: "\r\n", skipEmptyLines: false });
  expect(parsed.errors).toEqual([]);
  expect(parsed.data.length - 2).toBe(ROWS); // header + trailing empty line after the final CRLF
  expect(parsed.data[1][0]).toBe("PRJ-0001");
  expect(parsed.data[ROWS][0]).toBe(`PRJ-${String(Math.floor((ROWS - 1) / 12) + 1).padStart(4, "0")}`);
  expect(parsed.data.slice(1, -1).every((r) => r.length === 12)).toBe(true);
});

test("JSON export has row_count and rows of the configured size; identical on a second request", async () => {
  const a = await (await get(svc.url, "/api/bi/v1/financials", acme())).text();
  const body = JSON.parse(a) as ExportReply;
  expect(body.row_count).toBe(ROWS);
  expect(body.rows).toHaveLength(ROWS);
  const b = await (await get(svc.url, "/api/bi/v1/financials", acme())).text();
  const hash = (s: string) => createHash("sha256").update(s).digest("hex");
  expect(hash(b)).toBe(hash(a));
});

test("OData value has the same rows as the JSON export", async () => {
  const od = await json<ODataReply>(await get(svc.url, "/api/bi/odata/v1/financials", acme()));
  const exp = await json<ExportReply>(await get(svc.url, "/api/bi/v1/financials", acme()));
  expect(od.value.length).toBe(ROWS);
  expect(od.value[ROWS - 1]).toEqual(exp.rows[ROWS - 1]);
  expect(od.value[12345]).toEqual(exp.rows[12345]);
});

test("other datasets keep their default sizes", async () => {
  const exp = await json(await get(svc.url, "/api/bi/v1/projects", acme()));
  expect(exp.row_count).toBe(24);
});

test("HEAD answers the headers without generating a body", async () => {
  const res = await fetch(svc.url + "/api/bi/v1/financials.csv", { method: "HEAD", headers: acme() });
  expect(res.status).toBe(200);
  expect(res.headers.get("etag")).toMatch(/^"/);
  expect((await res.arrayBuffer()).byteLength).toBe(0);
});

test("bad datasetRows and absentGroups options are refused at start", async () => {
  await expect(start({ datasetRows: { nope: 5 } })).rejects.toThrow(/'nope' is not a demo dataset/);
  await expect(start({ datasetRows: { financials: -1 } })).rejects.toThrow(/whole number/);
  await expect(start({ absentGroups: ["snapshots" as never] })).rejects.toThrow(/not one of/);
});
