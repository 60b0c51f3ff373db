/**
 * Records against the reference service over real HTTP on 127.0.0.1: get, create, update, the
 * numeric rule end to end, a rejected record in a batch, and the whole write-back flow (preview →
 * confirm → refresh) with an in-memory sheet that behaves like the writer (text columns stay text).
 */
// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient } from "../../src/service/client";
import type { Connection } from "../../src/service/connection";
import { isPpmError } from "../../src/service/errors";
import {
  buildBaseline,
  confirmWriteback,
  discardHeld,
  heldKey,
  MARK_FILL,
  prepareWriteback,
  recordsServiceFrom,
  sendWriteback,
  validateFieldValue,
  type Baseline,
  type CellContent,
  type CellFill,
  type CellKey,
  type CellState,
  type Change,
  type SheetTable,
  type WritebackBinding,
  type WritebackDeps,
} from "../../src/records";
import type { Table } from "../../src/table/model";
import { CONTROL } from "../helpers/control";

let svc: ReferenceService;
const conn = (over: Partial<Connection> = {}): Connection => ({
  id: "c1",
  name: "Acme",
  baseUrl: svc.url,
  token: "demo-acme-token",
  apiAuth: "demo-api-auth",
  apiSecret: "demo-api-secret",
  ...over,
});

beforeAll(async () => {
  svc = await startReferenceService({ port: 0 });
});
afterAll(async () => {
  await svc.close();
});
beforeEach(async () => {
  const r = await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: CONTROL });
  expect(r.status).toBe(200);
});

describe("record endpoints through the service client", () => {
  it("gets a record by token, with custom fields as display-name keys", async () => {
    const records = recordsServiceFrom(new PpmClient(conn()));
    const rec = await records.getRecord("project", "pt_acme_0001");
    expect(rec).toMatchObject({ project_token: "pt_acme_0001", "Budget Contingency": "1500.5", "Cost Center Code": "00420" });
  });

  it("creates a project and a proposal, and reads them back normalised", async () => {
    const records = recordsServiceFrom(new PpmClient(conn()));
    const p = await records.createRecord("project", { project_name: "New One", custom_fields: { "Budget Contingency": "12,5", Sponsor: "Dana" } });
    expect(typeof p.project_token).toBe("string");
    const back = await records.getRecord("project", p.project_token as string);
    expect(back).toMatchObject({ project_name: "New One", "Budget Contingency": "12.5", Sponsor: "Dana" });
    const q = await records.createRecord("proposal", { custom_fields: { "Cost Center Code": "00099" } });
    expect(await records.getRecord("proposal", q.project_token as string)).toMatchObject({ "Cost Center Code": "00099" });
  });

  it("updates one field without touching the others", async () => {
    const records = recordsServiceFrom(new PpmClient(conn()));
    await records.updateRecord("project", "pt_acme_0002", { custom_fields: { Sponsor: "Walter Skinner" } });
    expect(await records.getRecord("project", "pt_acme_0002")).toMatchObject({ Sponsor: "Walter Skinner", "Budget Contingency": "25000", "Cost Center Code": "00123" });
  });

  it("reports a missing record and missing record credentials as clear errors", async () => {
    const records = recordsServiceFrom(new PpmClient(conn()));
    await expect(records.getRecord("project", "pt_nope")).rejects.toMatchObject({ code: "record_not_found" });
    const noCreds = recordsServiceFrom(new PpmClient(conn({ apiAuth: undefined, apiSecret: undefined })));
    const err = await noCreds.getRecord("project", "pt_acme_0001").catch((e: unknown) => e);
    expect(isPpmError(err)).toBe(true);
    expect(JSON.stringify((err as Error).message)).not.toContain("demo-acme-token");
  });
});

describe("the numeric rule end to end: our check and the service agree", () => {
  const accepted = ["12", "+7", "-0,5", "12.34", "1,5"];
  const rejected = ["1,234.5", "1.234,5", "1e3", " 12", "12 ", "", "12.345", "12."];

  it.each([...accepted.map((v) => [v, true] as const), ...rejected.map((v) => [v, false] as const)])("%p → accepted: %p", async (value, ok) => {
    expect(validateFieldValue(value, true).ok).toBe(ok);
    // numericFields: [] turns the client's own pre-check off, so the SERVICE decides here.
    const client = new PpmClient(conn());
    const result = await client
      .updateRecord("project", "pt_acme_0003", { custom_fields: { "Budget Contingency": value } }, { numericFields: [] })
      .then(() => "saved")
      .catch((e: unknown) => e);
    if (ok) {
      expect(result).toBe("saved");
    } else {
      expect(isPpmError(result)).toBe(true);
      expect(result).toMatchObject({ status: 400 });
      expect((result as { details?: { field?: string } }).details?.field).toBe("Budget Contingency");
    }
  });
});

const change = (projectToken: string, field: string, value: string): Change => ({ row: 1, projectToken, field, old: null, new: value, validation: { status: "valid" } });

describe("a batch", () => {
  it("a record the service rejects does not block the others", async () => {
    const records = recordsServiceFrom(new PpmClient(conn()));
    // The middle record names a field the service does not have: only the service can reject it.
    const out = await sendWriteback(records, "project", [
      change("pt_acme_0001", "Sponsor", "A"),
      change("pt_acme_0002", "No Such Field", "x"),
      change("pt_acme_0003", "Budget Contingency", "7,25"),
    ]);
    expect(out.map((o) => o.result.status)).toEqual(["saved", "rejected", "saved"]);
    expect(out[1].result).toMatchObject({ message: expect.stringContaining("No Such Field") });
    expect(out[2].result).toEqual({ status: "saved", stored: "7.25" });
    expect(await records.getRecord("project", "pt_acme_0001")).toMatchObject({ Sponsor: "A" });
    expect(await records.getRecord("project", "pt_acme_0003")).toMatchObject({ "Budget Contingency": "7.25" });
  });
});

/** An in-memory bound table: written the way the workbook writer writes (text columns as text, null as empty). */
class FakeSheet {
  sheet: SheetTable = { columns: [], rows: [] };
  baseline: Baseline | null = null;
  write(t: Table) {
    this.sheet = { columns: t.columns.map((c) => c.name), rows: t.rows.map((r) => r.map((v) => (v === null ? null : v))), firstSheetRow: 4 };
  }
  edit(token: string, field: string, value: string | number) {
    const ti = this.sheet.columns.indexOf("project_token");
    const fi = this.sheet.columns.indexOf(field);
    const row = this.sheet.rows.find((r) => r[ti] === token);
    if (!row || fi < 0) throw new Error(`no cell ${token}/${field}`);
    row[fi] = value;
  }
  /** Fills by token + field (the real adapter: `Range.format.fill`). */
  fills = new Map<string, CellFill>();
  private find(k: CellKey): { row: SheetTable["rows"][number]; fi: number } | null {
    const ti = this.sheet.columns.indexOf("project_token");
    const fi = this.sheet.columns.indexOf(k.field);
    const row = this.sheet.rows.find((r) => r[ti] === k.projectToken);
    return row && fi >= 0 ? { row, fi } : null;
  }
  readCells(keys: readonly CellKey[]): CellState[] {
    return keys.flatMap((k) => {
      const at = this.find(k);
      if (!at) return [];
      const v = at.row[at.fi];
      const formula = v === null || typeof v === "object" ? "" : v;
      return [{ ...k, content: { formula, numberFormat: "General" }, fill: this.fills.get(heldKey(k.projectToken, k.field)) ?? { pattern: "None" as const } }];
    });
  }
  writeCells(cells: readonly { key: CellKey; content?: CellContent; fill?: CellFill }[]) {
    for (const c of cells) {
      const at = this.find(c.key);
      if (!at) continue;
      if (c.content) at.row[at.fi] = c.content.formula === "" ? null : c.content.formula;
      if (c.fill) this.fills.set(heldKey(c.key.projectToken, c.key.field), c.fill);
    }
  }
  cell(token: string, field: string) {
    const ti = this.sheet.columns.indexOf("project_token");
    return this.sheet.rows.find((r) => r[ti] === token)![this.sheet.columns.indexOf(field)];
  }
}

describe("write-back from the sheet, end to end", () => {
  async function setup() {
    const client = new PpmClient(conn());
    const records = recordsServiceFrom(client);
    const fake = new FakeSheet();
    let binding: WritebackBinding = { id: "b1", tableName: "Projects", source: { kind: "snapshot", endpoint: "projects" }, validators: { etag: null } };
    const imported = await client.fetchSnapshot("projects");
    fake.write(imported);
    binding = { ...binding, validators: { etag: imported.meta.etag } };
    fake.baseline = buildBaseline(fake.sheet, { bindingId: "b1", tableName: "Projects", etag: imported.meta.etag, tokenColumn: "project_token" });
    let refreshes = 0;
    const deps: WritebackDeps = {
      client: records,
      workbook: {
        readTable: async () => structuredClone(fake.sheet),
        readBaseline: async () => fake.baseline,
        saveBaseline: async (b) => void (fake.baseline = b),
        readCells: async (_t, keys) => fake.readCells(keys),
        writeCells: async (_t, cells) => fake.writeCells(cells),
      },
      customFields: () => records.customFields(),
      refresh: async (b) => {
        refreshes++;
        const t = await client.fetchSnapshot("projects");
        fake.write(t);
        binding = { ...b, validators: { etag: t.meta.etag } };
        return { outcome: "updated", binding };
      },
    };
    return { deps, fake, get binding() { return binding; }, get refreshes() { return refreshes; } };
  }

  it("previews only the edited cells, sends the valid one, refreshes, and shows the normalised value", async () => {
    const s = await setup();
    s.fake.edit("pt_acme_0001", "Budget Contingency", "12,5");
    s.fake.edit("pt_acme_0002", "Budget Contingency", "1,234.5");
    const preview = await prepareWriteback(s.deps, s.binding);
    expect(preview.mode).toBe("baseline");
    expect(preview.changes.map((c) => [c.projectToken, c.old, c.new, c.validation.status])).toEqual([
      ["pt_acme_0001", "1500.5", "12,5", "valid"],
      ["pt_acme_0002", "25000", "1,234.5", "invalid"],
    ]);
    expect(preview.recordsToUpdate).toBe(1);

    const done = await confirmWriteback(s.deps, preview);
    expect(done.outcomes.map((o) => o.result.status)).toEqual(["saved", "not-sent"]);
    expect(done.refresh?.outcome).toBe("updated");
    // The service normalised "12,5"; the numeric custom field comes back as a decimal column.
    expect(s.fake.cell("pt_acme_0001", "Budget Contingency")).toBe(12.5);
    // The refresh did not take the unsent edit: it is back in its cell, marked and held.
    expect(s.fake.cell("pt_acme_0002", "Budget Contingency")).toBe("1,234.5");
    expect(s.fake.fills.get(heldKey("pt_acme_0002", "Budget Contingency"))).toEqual({ pattern: "Solid", color: MARK_FILL });
    expect(done.held).toEqual([expect.objectContaining({ projectToken: "pt_acme_0002", status: "invalid", service: "25000", fill: { pattern: "None" } })]);
    // A new import record was taken from the refreshed table: only the held edit is still pending.
    const again = await prepareWriteback(s.deps, s.binding);
    expect(again.changes.map((c) => [c.projectToken, c.old, c.new, c.validation.status])).toEqual([["pt_acme_0002", "25000", "1,234.5", "invalid"]]);
    expect(again.held).toHaveLength(1);
  });

  it("shows a value changed on the service since the import as a conflict and does not overwrite it", async () => {
    const s = await setup();
    await recordsServiceFrom(new PpmClient(conn())).updateRecord("project", "pt_acme_0001", { custom_fields: { Sponsor: "Monica Reyes" } });
    s.fake.edit("pt_acme_0001", "Sponsor", "Walter Skinner");
    s.fake.edit("pt_acme_0002", "Sponsor", "John Doggett");
    const preview = await prepareWriteback(s.deps, s.binding);
    expect(preview.changes.map((c) => [c.projectToken, c.validation.status])).toEqual([
      ["pt_acme_0001", "conflict"],
      ["pt_acme_0002", "valid"],
    ]);
    const done = await confirmWriteback(s.deps, preview);
    expect(done.summary).toMatchObject({ saved: 1, notSent: 1 });
    const records = recordsServiceFrom(new PpmClient(conn()));
    expect(await records.getRecord("project", "pt_acme_0001")).toMatchObject({ Sponsor: "Monica Reyes" });
    expect(await records.getRecord("project", "pt_acme_0002")).toMatchObject({ Sponsor: "John Doggett" });
    // The conflicting edit survived the refresh; next time it is sendable, with the other value named.
    expect(s.fake.cell("pt_acme_0001", "Sponsor")).toBe("Walter Skinner");
    const again = await prepareWriteback(s.deps, s.binding);
    expect(again.changes).toEqual([
      expect.objectContaining({ projectToken: "pt_acme_0001", old: "Monica Reyes", new: "Walter Skinner", validation: { status: "valid", warning: expect.stringContaining("sending replaces their value") } }),
    ]);
    // Discarding puts the service's value back and lifts the mark.
    expect(await discardHeld(s.deps, s.binding, again.fields)).toEqual([]);
    expect(s.fake.cell("pt_acme_0001", "Sponsor")).toBe("Monica Reyes");
    expect(s.fake.fills.get(heldKey("pt_acme_0001", "Sponsor"))).toEqual({ pattern: "None" });
    expect((await prepareWriteback(s.deps, s.binding)).changes).toEqual([]);
  });

  it("does not refresh when nothing was saved, so rejected edits stay in the sheet", async () => {
    const s = await setup();
    s.fake.edit("pt_acme_0001", "Budget Contingency", "1e3");
    const preview = await prepareWriteback(s.deps, s.binding);
    const done = await confirmWriteback(s.deps, preview);
    expect(done.refresh).toBeNull();
    expect(s.refreshes).toBe(0);
    expect(s.fake.cell("pt_acme_0001", "Budget Contingency")).toBe("1e3");
    expect(done.held).toEqual([expect.objectContaining({ status: "invalid", fill: { pattern: "None" } })]);
    expect(s.fake.fills.get(heldKey("pt_acme_0001", "Budget Contingency"))).toEqual({ pattern: "Solid", color: MARK_FILL });
    // Typing the old value back releases the cell: the mark comes off, it is no longer listed.
    s.fake.edit("pt_acme_0001", "Budget Contingency", 1500.5);
    const again = await prepareWriteback(s.deps, s.binding);
    expect([again.changes, again.held]).toEqual([[], []]);
    expect(s.fake.fills.get(heldKey("pt_acme_0001", "Budget Contingency"))).toEqual({ pattern: "None" });
  });
});
