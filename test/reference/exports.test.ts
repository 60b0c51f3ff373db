/** Export bodies: CSV rules and round trip, JSON value forms, conditional GET, regeneration. */
import Papa from "papaparse";
import { TRICKY_TEXT } from "../../src/reference/data";
import type { ReferenceService } from "../../src/reference/server";
import type { Manifest } from "../../src/contract/contract";
import { acme, control, get, json, start, type ExportReply, type RegenerateReply } from "./helpers";
import { CONTROL } from "../helpers/control";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});

/**
 * A strict RFC 4180 reader: records end in CRLF, quotes only around whole fields, `""` inside them.
 * Throws on a bare CR or LF outside quotes, or a quote inside an unquoted field.
 */
function strictCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
        if (text[i] === '"') throw new Error(`quote inside unquoted field at ${i}`);
        field += text[i++];
      }
    }
    fields.push(field);
    if (text[i] === ",") {
      i++;
    } else if (text[i] === "\r" && text[i + 1] === "\n") {
      records.push(fields);
      fields = [];
      i += 2;
    } else {
      throw new Error(`expected comma or CRLF at ${i}, got ${JSON.stringify(text.slice(i, i + 2))}`);
    }
  }
  if (fields.length > 0) throw new Error("last record not terminated by CRLF");
  return records;
}

/** How a JSON value must look as a CSV cell. */
function asCell(v: unknown): string {
  if (v === null) return "";
  // JSON cells are strings, numbers and booleans; anything else would show as its JSON.
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
}

describe("CSV", () => {
  let bytes: Buffer;
  let text: string;
  let rows: Record<string, unknown>[];
  let columns: { name: string; type: string }[];
  beforeAll(async () => {
    const res = await get(svc.url, "/api/bi/v1/financials.csv", acme());
    expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
    bytes = Buffer.from(await res.arrayBuffer());
    text = bytes.toString("utf8");
    const exp = await json<ExportReply>(await get(svc.url, "/api/bi/v1/financials", acme()));
    rows = exp.rows;
    columns = exp.columns;
  });

  test("UTF-8 without BOM", () => {
    expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    expect(text.charCodeAt(0)).not.toBe(0xfeff);
    expect(Buffer.from(text, "utf8").equals(bytes)).toBe(true);
    expect(text).toContain("Zürich – Ω 東京");
  });

  test("strict RFC 4180 with CRLF records; embedded CR/LF only inside quotes", () => {
    const records = strictCsv(text);
    expect(records).toHaveLength(121);
    expect(records[0]).toEqual(columns.map((c) => c.name));
    expect(records.every((r) => r.length === 12)).toBe(true);
    expect(text).toContain('"Line one\r\nLine two"');
    expect(text).toContain('"Line one\nLF only"');
    expect(text).toContain('"The ""Big"" Upgrade"');
    expect(text).toContain('"Alpha, Beta & Gamma"');
  });

  test("papaparse round trip equals the JSON rows, cell for cell", () => {
    const parsed = Papa.parse<string[]>(text, { header: false, newline: "\r\n" });
    expect(parsed.errors).toEqual([]);
    const data = parsed.data;
    // Every record ends in CRLF, so papaparse sees one empty trailing line.
    expect(data[data.length - 1]).toEqual([""]);
    const body = data.slice(1, -1);
    expect(body).toHaveLength(rows.length);
    body.forEach((cells, r) => {
      expect(cells).toEqual(columns.map((c) => asCell(rows[r][c.name])));
    });
  });

  test("missing values are empty cells; booleans true/false; big Int64 as plain digits", () => {
    const records = strictCsv(text).slice(1);
    const idx = (name: string) => columns.findIndex((c) => c.name === name);
    expect(records.some((r) => r[idx("actual_cost")] === "")).toBe(true);
    expect(records.some((r) => r[idx("is_capex")] === "")).toBe(true);
    expect(records.some((r) => r[idx("cost_center_code")] === "")).toBe(true);
    expect(new Set(records.map((r) => r[idx("is_capex")]))).toEqual(new Set(["true", "false", ""]));
    expect(records[0][idx("external_ref")]).toBe("9007199254740993");
  });
});

describe("JSON value forms", () => {
  let rows: Record<string, unknown>[];
  let columns: ExportReply["columns"];
  beforeAll(async () => {
    const exp = await json<ExportReply>(await get(svc.url, "/api/bi/v1/financials", acme()));
    rows = exp.rows;
    columns = exp.columns;
  });

  test("12 columns of the promised types", () => {
    expect(columns.map((c) => [c.name, c.type])).toEqual([
      ["project_id", "Edm.String"],
      ["project_name", "Edm.String"],
      ["cost_center_code", "Edm.String"],
      ["fiscal_year", "Edm.Int32"],
      ["period_number", "Edm.Int32"],
      ["budget", "Edm.Decimal"],
      ["actual_cost", "Edm.Decimal"],
      ["variance_pct", "Edm.Decimal"],
      ["period_start", "Edm.Date"],
      ["last_updated", "Edm.DateTimeOffset"],
      ["is_capex", "Edm.Boolean"],
      ["external_ref", "Edm.Int64"],
    ]);
  });

  test("every row has every column key; values match their types", () => {
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(columns.map((c) => c.name));
      for (const c of columns) {
        const v = row[c.name];
        if (v === null) {
          expect(c.nullable).toBe(true);
          continue;
        }
        switch (c.type) {
          case "Edm.String":
            expect(typeof v).toBe("string");
            break;
          case "Edm.Int32":
            expect(Number.isInteger(v)).toBe(true);
            break;
          case "Edm.Decimal":
            expect(typeof v).toBe("number");
            expect(Math.round((v as number) * 100) / 100).toBe(v);
            break;
          case "Edm.Date":
            expect(v).toMatch(/^\d{4}-\d{2}-\d{2}$/);
            break;
          case "Edm.DateTimeOffset":
            expect(v).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
            break;
          case "Edm.Boolean":
            expect(typeof v).toBe("boolean");
            break;
          case "Edm.Int64":
            if (typeof v === "string") {
              expect(v).toMatch(/^\d+$/);
              expect(BigInt(v) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
            } else expect(Number.isSafeInteger(v)).toBe(true);
            break;
        }
      }
    }
  });

  test("nulls exist in the nullable columns", () => {
    for (const name of ["actual_cost", "is_capex", "cost_center_code"]) {
      expect(rows.some((r) => r[name] === null)).toBe(true);
    }
  });

  test("all tricky text values occur", () => {
    const names = new Set(rows.map((r) => r.project_name));
    for (const t of TRICKY_TEXT) expect(names.has(t)).toBe(true);
    for (const t of ["00123", "1/2", "1E5", "TRUE", "=SUM(A1:A9)", "+41 44 668 18 00", "-5 days", "@risk review"]) {
      expect(names.has(t)).toBe(true);
    }
    expect(rows.some((r) => typeof r.cost_center_code === "string" && r.cost_center_code.startsWith("00"))).toBe(true);
  });

  test("same generation, same content across requests", async () => {
    const a = await (await get(svc.url, "/api/bi/v1/financials.csv", acme())).text();
    const b = await (await get(svc.url, "/api/bi/v1/financials.csv", acme())).text();
    expect(a).toBe(b);
  });
});

describe("conditional GET", () => {
  const path = "/api/bi/v1/financials";
  let etag: string;
  let lastModified: string;
  beforeAll(async () => {
    const res = await get(svc.url, path, acme());
    etag = res.headers.get("etag")!;
    lastModified = res.headers.get("last-modified")!;
    await res.arrayBuffer();
  });

  async function expect304(headers: Record<string, string>, p = path): Promise<void> {
    const res = await get(svc.url, p, acme(headers));
    expect(res.status).toBe(304);
    expect(await res.text()).toBe("");
    expect(res.headers.get("etag")).toMatch(/^"/);
    expect(res.headers.get("last-modified")).toBe(lastModified);
    expect(res.headers.get("cache-control")).toBe("private, max-age=0, must-revalidate");
  }
  async function expect200(headers: Record<string, string>, p = path): Promise<void> {
    const res = await get(svc.url, p, acme(headers));
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBeGreaterThan(0);
  }

  test("If-None-Match with the ETag → 304", () => expect304({ "If-None-Match": etag }));
  test("If-None-Match weak form matches (weak comparison)", () => expect304({ "If-None-Match": "W/" + etag }));
  test("If-None-Match list containing the ETag → 304", () => expect304({ "If-None-Match": `"other", ${etag}` }));
  test("If-None-Match * → 304", () => expect304({ "If-None-Match": "*" }));
  test("If-None-Match with another tag → 200", () => expect200({ "If-None-Match": '"something-else"' }));
  test("If-Modified-Since equal to Last-Modified → 304", () => expect304({ "If-Modified-Since": lastModified }));
  test("If-Modified-Since later → 304", () => expect304({ "If-Modified-Since": "Fri, 16 Jan 2026 00:00:00 GMT" }));
  test("If-Modified-Since earlier → 200", () => expect200({ "If-Modified-Since": "Wed, 14 Jan 2026 06:00:00 GMT" }));
  test("invalid If-Modified-Since is ignored → 200", () => expect200({ "If-Modified-Since": "yesterday" }));
  test("If-None-Match wins: non-matching INM + matching IMS → 200", () =>
    expect200({ "If-None-Match": '"nope"', "If-Modified-Since": lastModified }));
  test("If-None-Match wins: matching INM + old IMS → 304", () =>
    expect304({ "If-None-Match": etag, "If-Modified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" }));
  test("the JSON ETag does not validate the CSV representation", () => expect200({ "If-None-Match": etag }, path + ".csv"));
  test("304 works for CSV and OData too", async () => {
    for (const p of ["/api/bi/v1/financials.csv", "/api/bi/odata/v1/financials"]) {
      const first = await get(svc.url, p, acme());
      await first.arrayBuffer();
      await expect304({ "If-None-Match": first.headers.get("etag")! }, p);
    }
  });
  test("credentials are checked before preconditions", async () => {
    const res = await get(svc.url, path, { "If-None-Match": etag });
    expect(res.status).toBe(401);
  });
});

describe("regeneration", () => {
  afterAll(async () => {
    await control(svc.url, "reset");
  });

  test("new generated_at, ETag, Last-Modified and rows; old validators now miss", async () => {
    const before = await get(svc.url, "/api/bi/v1/financials", acme());
    const beforeBody = await json<ExportReply>(before);
    const oldEtag = before.headers.get("etag")!;
    const oldLm = before.headers.get("last-modified")!;
    const regen = await control<RegenerateReply>(svc.url, "regenerate?company=acme&dataset=financials");
    expect(regen.generation).toBe(2);
    const after = await get(svc.url, "/api/bi/v1/financials", acme({ "If-None-Match": oldEtag }));
    expect(after.status).toBe(200);
    const afterBody = await json<ExportReply>(after);
    expect(after.headers.get("etag")).not.toBe(oldEtag);
    expect(Date.parse(after.headers.get("last-modified")!)).toBeGreaterThan(Date.parse(oldLm));
    expect(afterBody.generated_at).toBe(regen.generated_at);
    expect(after.headers.get("x-service-generated-at")).toBe(regen.generated_at);
    expect(afterBody.generated_at).not.toBe(beforeBody.generated_at);
    expect(afterBody.rows).not.toEqual(beforeBody.rows);
    expect(afterBody.row_count).toBe(beforeBody.row_count);
    const ims = await get(svc.url, "/api/bi/v1/financials", acme({ "If-Modified-Since": oldLm }));
    expect(ims.status).toBe(200);
    await ims.arrayBuffer();
    const manifest = await json<Manifest>(await get(svc.url, "/api/bi/v1/manifest", acme()));
    const fin = manifest.datasets.find((d) => d.key === "financials");
    expect(fin?.artifacts.latest_successful_generated_at).toBe(regen.generated_at);
  });

  test("two regenerations in a row still get distinct generated_at", async () => {
    const a = await control<RegenerateReply>(svc.url, "regenerate?company=acme&dataset=projects");
    const b = await control<RegenerateReply>(svc.url, "regenerate?company=acme&dataset=projects");
    expect(Date.parse(b.generated_at)).toBeGreaterThan(Date.parse(a.generated_at));
  });

  test("generation makes a not_generated dataset servable; reset restores it", async () => {
    expect((await get(svc.url, "/api/bi/v1/risks", acme())).status).toBe(404);
    await control(svc.url, "regenerate?company=acme&dataset=risks");
    const res = await get(svc.url, "/api/bi/v1/risks", acme());
    expect(res.status).toBe(200);
    const body = await json<ExportReply>(res);
    expect(body.row_count).toBe(body.rows.length);
    expect(Object.keys(body.rows[0])).toEqual(expect.arrayContaining(["residual_priority", "residual_severity", "residual_likelihood"]));
    await control(svc.url, "reset");
    const again = await get(svc.url, "/api/bi/v1/risks", acme());
    expect(again.status).toBe(404);
    expect((await json(again)).error).toBe("not_generated");
  });

  test("regenerate rejects unknown company or dataset", async () => {
    const res = await fetch(svc.url + "/__control/regenerate?company=acme&dataset=nope", { method: "POST", headers: CONTROL });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toBe("bad_request");
  });
});
