/** Record endpoints: auth, record-token, create/update, the numeric custom-field table, visibility in snapshots. */
// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import fc from "fast-check";
import { NUMERIC_CUSTOM_FIELD } from "../../src/contract/contract";
import { normaliseNumeric } from "../../src/reference/customFields";
import type { ReferenceService } from "../../src/reference/server";
import { ACME_RECORD_HEADERS, ACME_TOKEN, acme, control, get, json, start, type Row } from "./helpers";

/** A record body: `project_token`, the standard fields and custom fields by display name. */
type RecordReply = Row & { project_token: string };

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});
afterEach(async () => {
  await control(svc.url, "reset");
});

const PROJECT = "/api/v1/project";
const PROPOSAL = "/api/v1/proposal";

function send(path: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(svc.url + path, {
    method,
    headers: { ...ACME_RECORD_HEADERS, "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function getRecord(path: string, token: string): Promise<RecordReply> {
  const res = await get(svc.url, path, { ...ACME_RECORD_HEADERS, "record-token": token });
  expect(res.status).toBe(200);
  return json(res);
}

describe("auth and targeting", () => {
  test.each([
    ["no headers", {}],
    ["Company-Api-Token only", { "Company-Api-Token": ACME_TOKEN }],
    ["missing api-secret", { "api-auth": "demo-api-auth", "api-token": ACME_TOKEN }],
    ["missing api-auth", { "api-token": ACME_TOKEN, "api-secret": "demo-api-secret" }],
    ["missing api-token", { "api-auth": "demo-api-auth", "api-secret": "demo-api-secret" }],
    ["wrong api-secret", { ...ACME_RECORD_HEADERS, "api-secret": "nope" }],
    ["wrong api-auth", { ...ACME_RECORD_HEADERS, "api-auth": "nope" }],
    ["another company's token", { ...ACME_RECORD_HEADERS, "api-token": "demo-globex-token" }],
  ])("%s → 401 unauthorized", async (_name, headers) => {
    for (const method of ["GET", "POST", "PUT"]) {
      const res = await fetch(svc.url + PROJECT, {
        method,
        headers: { ...headers, "record-token": "pt_acme_0001" },
        body: method === "GET" ? undefined : "{}",
      });
      expect(res.status).toBe(401);
      const body = await json(res);
      expect(body.error).toBe("unauthorized");
      expect(JSON.stringify(body)).not.toContain("demo-api-secret");
    }
  });

  test("GET needs record-token", async () => {
    const res = await get(svc.url, PROJECT, ACME_RECORD_HEADERS);
    expect(res.status).toBe(400);
    expect((await json(res)).error).toBe("missing_record_token");
  });

  test("GET with an unknown token → 404 record_not_found", async () => {
    const res = await get(svc.url, PROJECT, { ...ACME_RECORD_HEADERS, "record-token": "pt_acme_9999" });
    expect(res.status).toBe(404);
    expect((await json(res)).error).toBe("record_not_found");
  });

  test("a proposal token is not a project", async () => {
    const res = await get(svc.url, PROJECT, { ...ACME_RECORD_HEADERS, "record-token": "pp_acme_0001" });
    expect(res.status).toBe(404);
    expect((await getRecord(PROPOSAL, "pp_acme_0001")).project_token).toBe("pp_acme_0001");
  });

  test("GET answers the record with custom fields as display-name keys", async () => {
    const rec = await getRecord(PROJECT, "pt_acme_0001");
    expect(rec).toEqual({
      project_token: "pt_acme_0001",
      project_name: "ERP Migration",
      project_type: "IT",
      status: "Active",
      start_date: "2025-04-01",
      "Budget Contingency": "1500.5",
      Sponsor: "Dana Scully",
      "Cost Center Code": "00420",
    });
  });

  test("PUT names its target by record-token", async () => {
    const missing = await send(PROJECT, "PUT", { custom_fields: { Sponsor: "X" } });
    expect(missing.status).toBe(400);
    expect((await json(missing)).error).toBe("missing_record_token");
    const unknown = await send(PROJECT, "PUT", { custom_fields: { Sponsor: "X" } }, { "record-token": "pt_acme_9999" });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error).toBe("record_not_found");
  });

  test("DELETE is not a record operation", async () => {
    const res = await fetch(svc.url + PROJECT, { method: "DELETE", headers: { ...ACME_RECORD_HEADERS, "record-token": "pt_acme_0001" } });
    expect(res.status).toBe(405);
  });
});

describe("create", () => {
  test.each([PROJECT, PROPOSAL])("POST %s → 201 with the new record incl. project_token, visible in GET and the snapshot list", async (path) => {
    const res = await send(path, "POST", {
      project_name: "Created by test",
      custom_fields: { "Budget Contingency": "12,5", "Cost Center Code": "00099" },
    });
    expect(res.status).toBe(201);
    const rec = await json<RecordReply>(res);
    expect(rec.project_token).toMatch(path === PROJECT ? /^pt_acme_\d{4}$/ : /^pp_acme_\d{4}$/);
    expect(rec.project_name).toBe("Created by test");
    expect(rec["Budget Contingency"]).toBe("12.5");
    expect(rec["Cost Center Code"]).toBe("00099");
    // A company field with no saved value record is null.
    expect(rec.Sponsor).toBeNull();
    expect(await getRecord(path, rec.project_token)).toEqual(rec);
    const list = await json(await get(svc.url, path === PROJECT ? "/api/snapshot/projects" : "/api/snapshot/proposals", acme()));
    expect(list).toContainEqual(rec);
  });

  test("two creates get distinct tokens", async () => {
    const a = await json<RecordReply>(await send(PROJECT, "POST", {}));
    const b = await json<RecordReply>(await send(PROJECT, "POST", {}));
    expect(a.project_token).not.toBe(b.project_token);
  });

  test("a rejected create saves nothing", async () => {
    const before = await json(await get(svc.url, "/api/snapshot/projects", acme()));
    const res = await send(PROJECT, "POST", { project_name: "Nope", custom_fields: { Sponsor: "ok", "Budget Contingency": "1e5" } });
    expect(res.status).toBe(400);
    expect(await json(await get(svc.url, "/api/snapshot/projects", acme()))).toEqual(before);
  });

  test.each([
    ["not JSON", "{nope", "invalid_json"],
    ["an array", "[]", "invalid_body"],
    ["a non-string name", { project_name: 5 }, "invalid_body"],
    ["custom_fields not an object", { custom_fields: ["x"] }, "invalid_body"],
    ["an unknown custom field", { custom_fields: { Colour: "red" } }, "unknown_custom_field"],
  ])("a body with %s → 400 %s", async (_name, body, code) => {
    const res = await send(PROJECT, "POST", body);
    expect(res.status).toBe(400);
    const b = await json(res);
    expect(b.error).toBe(code);
    expect(typeof b.message).toBe("string");
    if (code === "unknown_custom_field") expect(b.field).toBe("Colour");
  });
});

describe("numeric custom field rules", () => {
  const ACCEPT: [string, string][] = [
    ["12", "12"],
    ["12.5", "12.5"],
    ["12,5", "12.5"],
    ["12.50", "12.5"],
    ["+7", "7"],
    ["-7", "-7"],
    ["-0,50", "-0.5"],
    ["-0", "0"],
    ["0", "0"],
    ["007", "7"],
    ["1.00", "1"],
    ["0.1", "0.1"],
    ["-12.34", "-12.34"],
    ["123456789012", "123456789012"],
  ];
  const REJECT = [
    "1,000.50",
    "1.000,5",
    "1 000",
    "1'000",
    "1e5",
    "1E5",
    " 12",
    "12 ",
    "\t12",
    "",
    "12.345",
    "12,345",
    "12.",
    ".5",
    ",5",
    "+",
    "-",
    "+-1",
    "--1",
    "abc",
    "0x10",
    "Infinity",
    "NaN",
    "١٢",
    "12\n",
  ];

  test.each(ACCEPT)("accepts %j and saves %j (visible in GET and snapshot)", async (input, saved) => {
    const res = await send(PROJECT, "PUT", { custom_fields: { "Budget Contingency": input } }, { "record-token": "pt_acme_0002" });
    expect(res.status).toBe(200);
    expect((await json(res))["Budget Contingency"]).toBe(saved);
    expect((await getRecord(PROJECT, "pt_acme_0002"))["Budget Contingency"]).toBe(saved);
    const list = await json<RecordReply[]>(await get(svc.url, "/api/snapshot/projects", acme()));
    expect(list.find((p) => p.project_token === "pt_acme_0002")?.["Budget Contingency"]).toBe(saved);
  });

  test.each(REJECT)("rejects %j with 400 invalid_custom_field and saves nothing of the request", async (input) => {
    const before = await getRecord(PROJECT, "pt_acme_0002");
    const res = await send(
      PROJECT,
      "PUT",
      { project_name: "Should not stick", custom_fields: { Sponsor: "Should not stick", "Budget Contingency": input } },
      { "record-token": "pt_acme_0002" },
    );
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body).toEqual({ error: "invalid_custom_field", message: expect.any(String), field: "Budget Contingency", value: input });
    expect(await getRecord(PROJECT, "pt_acme_0002")).toEqual(before);
  });

  test.each([12, null, true, { v: "1" }])("rejects the non-string value %j", async (value) => {
    const res = await send(PROJECT, "PUT", { custom_fields: { "Budget Contingency": value } }, { "record-token": "pt_acme_0002" });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toBe("invalid_custom_field");
  });

  test("the server table agrees with the contract's NUMERIC_CUSTOM_FIELD", () => {
    for (const [input] of ACCEPT) expect(NUMERIC_CUSTOM_FIELD.test(input)).toBe(true);
    for (const input of REJECT) expect(NUMERIC_CUSTOM_FIELD.test(input)).toBe(false);
  });

  test("text fields keep number-looking values verbatim", async () => {
    const res = await send(PROJECT, "PUT", { custom_fields: { "Cost Center Code": "00420", Sponsor: "1/2" } }, { "record-token": "pt_acme_0003" });
    expect(res.status).toBe(200);
    const rec = await getRecord(PROJECT, "pt_acme_0003");
    expect(rec["Cost Center Code"]).toBe("00420");
    expect(rec.Sponsor).toBe("1/2");
  });

  test("PUT changes only the named fields", async () => {
    const before = await getRecord(PROJECT, "pt_acme_0001");
    await send(PROJECT, "PUT", { custom_fields: { Sponsor: "New Sponsor" } }, { "record-token": "pt_acme_0001" });
    expect(await getRecord(PROJECT, "pt_acme_0001")).toEqual({ ...before, Sponsor: "New Sponsor" });
  });

  test("reset restores the demo values", async () => {
    await send(PROJECT, "PUT", { custom_fields: { "Budget Contingency": "1" } }, { "record-token": "pt_acme_0001" });
    await control(svc.url, "reset");
    expect((await getRecord(PROJECT, "pt_acme_0001"))["Budget Contingency"]).toBe("1500.5");
  });
});

describe("normaliseNumeric (property)", () => {
  const accepted = fc
    .tuple(
      fc.constantFrom("", "+", "-"),
      fc.stringMatching(/^\d{1,12}$/),
      fc.option(fc.tuple(fc.constantFrom(".", ","), fc.stringMatching(/^\d{1,2}$/)), { nil: undefined }),
    )
    .map(([sign, int, frac]) => sign + int + (frac ? frac[0] + frac[1] : ""));

  test("same value, canonical dot form, idempotent", () => {
    fc.assert(
      fc.property(accepted, (s) => {
        expect(NUMERIC_CUSTOM_FIELD.test(s)).toBe(true);
        const n = normaliseNumeric(s);
        expect(n).toMatch(/^-?(0|[1-9]\d*)(\.\d?[1-9])?$/);
        expect(n).not.toBe("-0");
        expect(Number(n)).toBe(Number(s.replace(",", ".")) + 0);
        expect(normaliseNumeric(n)).toBe(n);
      }),
    );
  });
});
