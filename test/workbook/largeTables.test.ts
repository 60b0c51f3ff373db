/**
 * Issue #21, item 9 and "Must show": every read and every write goes in blocks under Excel on the
 * web's 5 MB limits. Write-back's table read and the record-at-selection lookup read in byte-sized
 * blocks (item 9, at a scaled limit); a 60,000 × 8 wide-text table and a 4,200 × 60 projects
 * snapshot are imported, refreshed (delta and full rewrite) and read for write-back with no request or
 * response over 5 MB, and the largest of each is printed.
 */
import { Workbook, createRequestContext, inspect } from "../../src/emulator";
import { draftBinding } from "../../src/refresh/binding";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { readTableCells, selectedRecord } from "../../src/workbook/writeback";
import { loadInBlocks, visitInBlocks, DEFAULT_TARGET_REQUEST_BYTES, DEFAULT_TARGET_RESPONSE_BYTES } from "../../src/workbook/blocks";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Column, Table } from "../../src/table/model";
import { TOKEN } from "./helpers";

const LIMIT = 5 * 1024 * 1024;
const noQuery = (t: Table) => ({ table: t });
const later = () => new Date("2026-02-01T08:00:00Z");

function projects(rows: number, columns: number, seed = 0): Table {
  const cols: Column[] = [{ name: "project_token", type: "text" }, { name: "name", type: "text" }];
  for (let c = 2; c < columns; c++) cols.push({ name: `Custom Field ${c}`, type: "text" });
  const data: CellValue[][] = Array.from({ length: rows }, (_, r) => [
    `pt_acme_${String(r).padStart(6, "0")}`,
    `Project ${r} ${seed}`,
    ...Array.from({ length: columns - 2 }, (_, c) => `value ${r}-${c} ${"x".repeat(8)}`),
  ]);
  return { columns: cols, rows: data, meta: { key: "projects", kind: "snapshot", format: "json", schemaVersion: null, generatedAt: null, etag: `"s${seed}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" } };
}

function wideText(rows: number, from = 0, seed = 0): Table {
  const cols: Column[] = [{ name: "row_id", type: "integer" }, ...Array.from({ length: 7 }, (_, i) => ({ name: `text_${i + 1}`, type: "text" as const }))];
  const data: CellValue[][] = Array.from({ length: rows }, (_, r) => [from + r + 1, ...Array.from({ length: 7 }, (_, c) => `${String(from + r).padStart(7, "0")}:${c}:${seed} ${"lorem ipsum ".repeat(8)}`)]);
  return { columns: cols, rows: data, meta: { key: "wide", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: `2026-01-0${seed + 1}T00:00:00Z`, etag: `"w${seed}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" } };
}

async function importInto(wb: Workbook, table: Table, id: string, targetRequestBytes?: number) {
  const source = table.meta.kind === "snapshot" ? { kind: "snapshot" as const, endpoint: "projects" as const } : { kind: "dataset" as const, key: table.meta.key, format: "json" as const };
  const binding = draftBinding({ id, connectionId: "c1", environment: "http://127.0.0.1:4100", companyId: "acme", source, columns: table.columns, schemaVersion: table.meta.schemaVersion, validators: { etag: table.meta.etag, generatedAt: table.meta.generatedAt } });
  return importTable(createRequestContext(wb), table, { binding, secrets: [TOKEN], targetRequestBytes });
}

const answer = (t: Table, key: string[]): RefreshSource => ({
  fetch: async () => ({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt ?? `x${t.meta.etag}` }, key: { candidates: [key], origin: "metadata", reason: "test key" } }),
});

describe("9. write-back reads in byte-sized blocks", () => {
  it("the table read and the record under the selection never ask for one response over the limit (300 KB here, a 600 KB table)", async () => {
    const limit = 300_000;
    const wb = new Workbook({ currentYear: 2026, payloadLimitBytes: limit });
    const t = projects(400, 60);
    const imported = await importInto(wb, t, "bproj");
    wb.stats.maxResponseBytes = 0;
    wb.stats.rejectedSyncs = 0;
    const sheet = await readTableCells(createRequestContext(wb), imported.tableName, ["Custom Field 5"], 200_000);
    expect(sheet.rows).toHaveLength(400);
    expect(sheet.rows[399][0]).toBe("pt_acme_000399");
    expect(sheet.shown?.["Custom Field 5"]).toHaveLength(400);
    wb.select(`'${imported.sheetName}'!C300`);
    const picked = await selectedRecord(createRequestContext(wb));
    expect(picked.record).toMatchObject({ projectToken: "pt_acme_000297", kind: "project" });
    expect(wb.stats.maxResponseBytes).toBeLessThanOrEqual(limit);
    expect(wb.stats.rejectedSyncs).toBe(0);
  });

  it("a block whose cells come back null (a range over five million cells, office-js #4783) is halved and read again", async () => {
    const big = 1000;
    let loaded = 0;
    const rangeAt = (_from: number, count: number) => {
      const r = {
        values: null as unknown as unknown[][],
        formulas: [] as unknown[][],
        numberFormat: [] as unknown[][],
        load: () => {
          loaded++;
          r.values = (count > 100 ? null : Array.from({ length: count }, () => ["v"])) as unknown as unknown[][];
        },
      };
      return r;
    };
    const rows = await loadInBlocks({ sync: () => Promise.resolve() }, rangeAt, big, "values", 1);
    expect(rows).toHaveLength(big);
    expect(loaded).toBeGreaterThan(10);
    let blocks = 0;
    await visitInBlocks({ sync: () => Promise.resolve() }, rangeAt, 50, "values", 1000, () => void blocks++);
    expect(blocks).toBe(1);
  });
});

describe("the defaults stay under Excel's 5 MB", () => {
  it("request and response targets (pinned: raising either over 5 MB fails this test)", () => {
    expect(DEFAULT_TARGET_REQUEST_BYTES).toBeLessThanOrEqual(LIMIT * 0.8);
    expect(DEFAULT_TARGET_RESPONSE_BYTES).toBeLessThanOrEqual(LIMIT * 0.8);
  });
});

/**
 * "Must show" at a tenth of the size against a tenth of the limit (the same blocks relative to the
 * limit; jest stays quick). The full sizes against Excel's own 5 MB — 60,000 × 8 and 4,200 × 60 — run
 * in `npm run bench -- --only limits` (bench/limits.ts), which prints the largest request and response.
 */
describe("Must show (scaled to a tenth): large tables within the limit per request and response", () => {
  const SCALED = Math.round(LIMIT / 10);
  const targets = { targetRequestBytes: Math.round(SCALED * 0.8), targetResponseBytes: Math.round(SCALED * 0.8) };
  const report: string[] = [];
  afterAll(() => {
    console.log(`largest request / response per scenario (limit ${SCALED.toLocaleString("en-US")} bytes):\n${report.join("\n")}`);
  });
  /** Runs `work` and records the largest request and response it sent/received. */
  async function measured(wb: Workbook, what: string, work: () => Promise<unknown>) {
    wb.stats.maxRequestBytes = 0;
    wb.stats.maxResponseBytes = 0;
    wb.stats.rejectedSyncs = 0;
    await work();
    report.push(`  ${what}: ${wb.stats.maxRequestBytes.toLocaleString("en-US")} / ${wb.stats.maxResponseBytes.toLocaleString("en-US")} bytes, ${wb.stats.rejectedSyncs} refused`);
    expect(wb.stats.maxRequestBytes).toBeLessThanOrEqual(SCALED);
    expect(wb.stats.maxResponseBytes).toBeLessThanOrEqual(SCALED);
    expect(wb.stats.rejectedSyncs).toBe(0);
  }

  it("a 6,000 × 8 wide-text table: import, a delta adding 2,000 rows, a full rewrite, the write-back read", async () => {
    const wb = new Workbook({ currentYear: 2026, payloadLimitBytes: SCALED });
    const t0 = wideText(6_000);
    let name = "";
    await measured(wb, "6,000 × 8 import", async () => (name = (await importInto(wb, t0, "bwide", targets.targetRequestBytes)).tableName));
    const grown: Table = { ...wideText(8_000, 0, 1), rows: [...t0.rows, ...wideText(2_000, 6_000).rows] };
    await measured(wb, "delta: 2,000 rows appended", async () => {
      const r = await refreshTable(createRequestContext(wb), "bwide", answer(grown, ["row_id"]), { applyQuery: noQuery, now: later, ...targets });
      expect(r).toMatchObject({ outcome: "updated", delta: { strategy: "delta", added: 2_000 } });
    });
    await measured(wb, "full rewrite, 8,000 × 8", async () => {
      const r = await refreshTable(createRequestContext(wb), "bwide", answer(wideText(8_000, 0, 2), ["row_id"]), { applyQuery: noQuery, now: later, delta: false, ...targets });
      expect(r.outcome).toBe("updated");
    });
    await measured(wb, "write-back read of 8,000 × 8", async () => {
      const sheet = await readTableCells(createRequestContext(wb), name, [], targets.targetResponseBytes);
      expect(sheet.rows).toHaveLength(8_000);
    });
    expect(inspect(wb, "'wide (json)'!A8002").values).toEqual([["8000"]]);
  }, 180_000); // ~30 s of CPU on a quiet 2-core machine: room for a loaded CI (it runs once per profile)

  it("a 420 × 60 projects snapshot: import, a delta, a full rewrite, the write-back read and the record under the selection", async () => {
    const wb = new Workbook({ currentYear: 2026, payloadLimitBytes: SCALED });
    let name = "";
    let sheetName = "";
    await measured(wb, "420 × 60 import", async () => {
      const r = await importInto(wb, projects(420, 60), "bproj", targets.targetRequestBytes);
      name = r.tableName;
      sheetName = r.sheetName;
    });
    const changed = projects(420, 60);
    changed.rows[17][5] = "changed";
    changed.meta.etag = '"s9"';
    await measured(wb, "delta: one cell", async () => {
      const r = await refreshTable(createRequestContext(wb), "bproj", answer(changed, ["project_token"]), { applyQuery: noQuery, now: later, ...targets });
      expect(r).toMatchObject({ outcome: "updated", delta: { strategy: "delta", changed: 1, cellsWritten: 1 } });
    });
    await measured(wb, "full rewrite, 420 × 60", async () => {
      const r = await refreshTable(createRequestContext(wb), "bproj", answer(projects(420, 60, 5), ["project_token"]), { applyQuery: noQuery, now: later, delta: false, ...targets });
      expect(r.outcome).toBe("updated");
    });
    await measured(wb, "write-back read of 420 × 60 (values and valueTypes at once: over the limit)", async () => {
      const sheet = await readTableCells(createRequestContext(wb), name, ["Custom Field 7"], targets.targetResponseBytes);
      expect(sheet.rows).toHaveLength(420);
    });
    await measured(wb, "record under the selection", async () => {
      wb.select(`'${sheetName}'!B400`);
      expect((await selectedRecord(createRequestContext(wb))).record?.projectToken).toBe("pt_acme_000397");
    });
  }, 60_000);
});
