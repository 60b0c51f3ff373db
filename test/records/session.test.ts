/** The write-back flow's edge paths, with fakes: which mode, which warnings, what is refused. */
// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import { buildBaseline, type Baseline, type SheetTable } from "../../src/records/baseline";
import { confirmWriteback, prepareForEditing, prepareWriteback, WritebackError, type WritebackBinding, type WritebackDeps } from "../../src/records/session";
import type { RecordsClient } from "../../src/records/client";
import type { Table } from "../../src/table/model";

const COLUMNS = ["project_token", "Budget Contingency", "Sponsor"];
const serviceTable = (): Table => ({
  columns: [
    { name: "project_token", type: "text" },
    { name: "Budget Contingency", type: "decimal" },
    { name: "Sponsor", type: "text" },
  ],
  rows: [
    ["pt_1", 1500.5, "Dana"],
    ["pt_2", 25000, "Fox"],
  ],
  meta: { key: "projects", kind: "snapshot", format: "json", schemaVersion: null, generatedAt: null, etag: "fp1", lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" },
});
const binding: WritebackBinding = { id: "b1", tableName: "Projects", source: { kind: "snapshot", endpoint: "projects" }, validators: { etag: "fp1" }, columns: COLUMNS.map((name) => ({ name })) };

function setup(opts: { baseline?: Baseline | null | "throw"; fields?: "throw" | null; snapshot?: "throw" } = {}) {
  const sheet: SheetTable = { columns: [...COLUMNS, "My notes"], rows: [["pt_1", 1500.5, "Dana", "n1"], ["pt_2", 25000, "Fox", "n2"]] };
  let stored: Baseline | null = null;
  const textCalls: string[][] = [];
  const puts: string[] = [];
  const client: RecordsClient & { fetchSnapshot(): Promise<Table> } = {
    getRecord: async () => ({}),
    createRecord: async () => ({}),
    updateRecord: async (_k, token, body) => {
      puts.push(token);
      return { project_token: token, ...body.custom_fields };
    },
    fetchSnapshot: async () => {
      if (opts.snapshot === "throw") throw new Error("route absent");
      return serviceTable();
    },
  };
  const deps: WritebackDeps = {
    client,
    workbook: {
      readTable: async () => structuredClone(sheet),
      readBaseline: async () => {
        if (opts.baseline === "throw") throw new Error("The stored import record is invalid.");
        return opts.baseline === undefined ? stored : opts.baseline;
      },
      saveBaseline: async (b) => void (stored = b),
      readCells: async () => [],
      writeCells: async (_t, cells) => void textCalls.push(cells.map((c) => c.key.field)),
    },
    customFields: async () => {
      if (opts.fields === "throw") throw new Error("403 reporting disabled");
      return opts.fields === null ? null : [{ name: "Budget Contingency", numeric: true }, { name: "Sponsor", numeric: false }];
    },
    refresh: async () => ({ outcome: "updated" }),
  };
  return { deps, sheet, get stored() { return stored; }, textCalls, puts };
}

describe("prepareWriteback", () => {
  it("refuses tables that are not projects/proposals snapshots", async () => {
    const s = setup();
    await expect(prepareWriteback(s.deps, { ...binding, source: { kind: "dataset", key: "financials" } })).rejects.toBeInstanceOf(WritebackError);
    await expect(prepareWriteback(s.deps, { ...binding, source: { kind: "snapshot", endpoint: "projectScores" } })).rejects.toMatchObject({ code: "not_writable" });
  });
  it("says so when the service's current values cannot be read, instead of guessing", async () => {
    await expect(prepareWriteback(setup({ snapshot: "throw" }).deps, binding)).rejects.toMatchObject({ code: "service_unavailable", message: expect.stringContaining("route absent") });
  });
  it("falls back to the service's values, with a warning, when the import record is stale or unreadable", async () => {
    const stale = buildBaseline({ columns: COLUMNS, rows: [["pt_1", 1500.5, "Dana"]] }, { bindingId: "b1", tableName: "Projects", etag: "OLD", tokenColumn: "project_token" });
    const p1 = await prepareWriteback(setup({ baseline: stale }).deps, binding);
    expect(p1.mode).toBe("service");
    expect(p1.warnings.join(" ")).toMatch(/refreshed after its import record/);
    const p2 = await prepareWriteback(setup({ baseline: "throw" }).deps, binding);
    expect(p2.mode).toBe("service");
    expect(p2.warnings.join(" ")).toMatch(/could not be read/);
  });
  it("warns when the custom-field list is unavailable", async () => {
    const p = await prepareWriteback(setup({ fields: "throw" }).deps, binding);
    expect(p.warnings.join(" ")).toMatch(/custom fields could not be read \(403/);
  });
});

describe("prepareForEditing and confirm", () => {
  it("records the table without user columns and changes no cell, then finds edits", async () => {
    const s = setup();
    const r = await prepareForEditing(s.deps, binding);
    expect(r).toMatchObject({ ready: true, recorded: true });
    expect(s.textCalls).toEqual([]);
    // A current record is kept as it is.
    expect(await prepareForEditing(s.deps, binding)).toMatchObject({ ready: true, recorded: false });
    expect(s.stored?.columns).toEqual(["Budget Contingency", "Sponsor"]);
    s.sheet.rows[1][2] = "Walter";
    s.sheet.rows[0][3] = "user column edit, never compared";
    const p = await prepareWriteback(s.deps, binding);
    expect(p.changes.map((c) => [c.projectToken, c.field, c.new])).toEqual([["pt_2", "Sponsor", "Walter"]]);
    const done = await confirmWriteback(s.deps, p);
    expect(s.puts).toEqual(["pt_2"]);
    expect(done.refresh?.outcome).toBe("updated");
  });
  it("reports a refresh that throws as failed, keeping the send results", async () => {
    const s = setup();
    await prepareForEditing(s.deps, binding);
    s.sheet.rows[0][2] = "X";
    s.deps.refresh = async () => {
      throw new Error("table gone");
    };
    const done = await confirmWriteback(s.deps, await prepareWriteback(s.deps, binding));
    expect(done.summary.saved).toBe(1);
    expect(done.refresh).toEqual({ outcome: "failed", message: "table gone" });
  });

  it("does not refresh when the unsent cells cannot be read first: a refresh would overwrite them", async () => {
    const s = setup();
    await prepareForEditing(s.deps, binding);
    s.sheet.rows[0][2] = "X";
    s.sheet.rows[1][1] = "1,5x";
    let refreshed = 0;
    s.deps.refresh = async () => ((refreshed++), { outcome: "updated" });
    s.deps.workbook.readCells = async () => {
      throw new Error("table busy");
    };
    const done = await confirmWriteback(s.deps, await prepareWriteback(s.deps, binding));
    expect(done.summary.saved).toBe(1);
    expect(refreshed).toBe(0);
    expect(done.refresh).toMatchObject({ outcome: "failed", message: expect.stringContaining("would overwrite them") });
  });
  it("names what the unsent cells held when they cannot be put back after the refresh", async () => {
    const s = setup();
    await prepareForEditing(s.deps, binding);
    s.sheet.rows[0][2] = "X";
    s.sheet.rows[1][1] = "1,5x";
    s.deps.workbook.readCells = async (_t, keys) => keys.map((k) => ({ ...k, content: { formula: "1,5x", numberFormat: "General" }, fill: { pattern: "None" } }));
    s.deps.workbook.writeCells = async () => {
      throw new Error("sheet protected");
    };
    const done = await confirmWriteback(s.deps, await prepareWriteback(s.deps, binding));
    expect(done.heldWarning).toMatch(/sheet protected.*pt_2 · Budget Contingency: "1,5x"/);
  });
  it("does not refresh over rows added by hand, which a refresh would remove", async () => {
    const s = setup();
    await prepareForEditing(s.deps, binding);
    s.sheet.rows[0][2] = "X";
    s.sheet.rows.push(["pt_new", 5, "Added", "mine"]);
    let refreshed = 0;
    s.deps.refresh = async () => ((refreshed++), { outcome: "updated" });
    const preview = await prepareWriteback(s.deps, binding);
    expect(preview.notes).toEqual([expect.objectContaining({ projectToken: "pt_new", added: true })]);
    const done = await confirmWriteback(s.deps, preview);
    expect(done.summary.saved).toBe(1);
    expect(refreshed).toBe(0);
    expect(done.refresh).toMatchObject({ outcome: "failed", message: expect.stringContaining("a row was added by hand") });
  });
});
