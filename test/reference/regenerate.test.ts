/**
 * Partial regeneration over real HTTP: `POST /__control/regenerate?...&changed=&added=&removed=&seed=`
 * changes, adds and removes the asked fractions of the export's rows, deterministically per seed,
 * keeping unchanged rows and their order; a plain regeneration afterwards keeps the row set.
 */
import type { ReferenceService } from "../../src/reference/server";
import { planDelta, type TableRows } from "../../src/refresh/delta";
import type { CellValue } from "../../src/table/model";
import { acme, control, get, json, start } from "./helpers";
import { CONTROL } from "../helpers/control";

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

const FIN_KEY = ["project_id", "fiscal_year", "period_number"];

interface Export {
  etag: string;
  generatedAt: string;
  rowCount: number;
  columns: string[];
  rows: Record<string, unknown>[];
}

async function exportOf(base: string, dataset: string): Promise<Export> {
  const res = await get(base, `/api/bi/v1/${dataset}`, acme());
  expect(res.status).toBe(200);
  const body = await json<{ generated_at: string; row_count: number; columns: { name: string }[]; rows: Record<string, unknown>[] }>(res);
  return { etag: res.headers.get("etag")!, generatedAt: body.generated_at, rowCount: body.row_count, columns: body.columns.map((c: { name: string }) => c.name), rows: body.rows };
}

const keyOf = (row: Record<string, unknown>, key: string[]): string => JSON.stringify(key.map((k) => row[k]));

/** Rows matched by key: which were removed, added, changed, and whether the kept rows kept their order. */
function diff(before: Export, after: Export, key: string[]) {
  const old = new Map(before.rows.map((r, i) => [keyOf(r, key), i]));
  const seen = new Set<string>();
  let added = 0;
  let changed = 0;
  let lastOld = -1;
  let inOrder = true;
  const changedRows: { before: Record<string, unknown>; after: Record<string, unknown> }[] = [];
  for (const r of after.rows) {
    const k = keyOf(r, key);
    expect(seen.has(k)).toBe(false); // keys stay unique
    seen.add(k);
    const i = old.get(k);
    if (i === undefined) {
      added++;
      continue;
    }
    if (i < lastOld) inOrder = false;
    lastOld = i;
    if (JSON.stringify(before.rows[i]) !== JSON.stringify(r)) {
      changed++;
      changedRows.push({ before: before.rows[i], after: r });
    }
  }
  const removed = before.rows.length - (after.rows.length - added);
  return { added, changed, removed, inOrder, changedRows };
}

function asTable(e: Export): TableRows {
  return { columns: e.columns.map((name) => ({ name, type: "text" as const })), rows: e.rows.map((r) => e.columns.map((c) => r[c] as CellValue)) };
}

test("changed/added/removed fractions: exactly those rows differ, new keys are new, kept rows keep their order", async () => {
  const before = await exportOf(svc.url, "financials");
  expect(before.rowCount).toBe(120);
  const regen = await control<Record<string, unknown>>(svc.url, "regenerate?company=acme&dataset=financials&changed=0.05&added=0.02&removed=0.02&seed=7");
  // 5 % of 120 = 6; 2 % of 120 = 2.4 → 2.
  expect(regen).toEqual({ company: "acme", dataset: "financials", generation: 2, generated_at: expect.any(String) as unknown, row_count: 120, seed: 7, changed: 6, added: 2, removed: 2 });
  const after = await exportOf(svc.url, "financials");
  expect(after.rowCount).toBe(120);
  expect(after.rows).toHaveLength(120);
  expect(after.generatedAt).toBe(regen.generated_at);
  expect(Date.parse(after.generatedAt)).toBeGreaterThan(Date.parse(before.generatedAt));
  expect(after.etag).not.toBe(before.etag);
  const d = diff(before, after, FIN_KEY);
  expect(d).toMatchObject({ added: 2, changed: 6, removed: 2, inOrder: true });
  // A changed row keeps its key and moves at least its update time.
  for (const c of d.changedRows) expect(c.after.last_updated).not.toBe(c.before.last_updated);
  // The add-in's planner, keyed by the $metadata key, sees the same counts and plans a delta.
  const plan = planDelta(asTable(before), asTable(after), FIN_KEY);
  expect(plan).toMatchObject({ strategy: "delta", matchedBy: "key", counts: { added: 2, changed: 6, removed: 2 } });
  // The old validators now miss.
  const conditional = await get(svc.url, "/api/bi/v1/financials", acme({ "If-None-Match": before.etag }));
  expect(conditional.status).toBe(200);
  await conditional.arrayBuffer();
  // The manifest agrees on the new row count and generation time.
  const manifest = await json<{ datasets: { key: string; artifacts: unknown }[] }>(await get(svc.url, "/api/bi/v1/manifest", acme()));
  expect(manifest.datasets.find((x) => x.key === "financials")!.artifacts).toMatchObject({ generated_at: regen.generated_at, row_count: 120 });
});

test("the same seed on the same state gives the same export; another seed picks other rows", async () => {
  const q = "regenerate?company=acme&dataset=financials&changed=0.1&added=0.05&removed=0.05&seed=42";
  await control(svc.url, q);
  const first = await exportOf(svc.url, "financials");
  await control(svc.url, "reset");
  await control(svc.url, q);
  const second = await exportOf(svc.url, "financials");
  // Values depend on the generation, not on the wall clock, so the rows are identical.
  expect(second.rows).toEqual(first.rows);
  await control(svc.url, "reset");
  await control(svc.url, q.replace("seed=42", "seed=43"));
  const other = await exportOf(svc.url, "financials");
  expect(other.rows).not.toEqual(first.rows);
});

test("CSV and OData forms carry the same rows in the same order after a partial regeneration", async () => {
  await control(svc.url, "regenerate?company=acme&dataset=projects&changed=0.2&added=0.1&removed=0.1&seed=3");
  const jsonExport = await exportOf(svc.url, "projects");
  const odata = await json(await get(svc.url, "/api/bi/odata/v1/projects", acme()));
  expect(odata.value).toEqual(jsonExport.rows);
  const csv = await (await get(svc.url, "/api/bi/v1/projects.csv", acme())).text();
  const tokens = csv.split("\r\n").slice(1).filter((l) => l !== "").map((l) => l.split(",")[0]);
  expect(tokens).toEqual(jsonExport.rows.map((r) => r.project_token));
});

test("successive partial regenerations compound; a plain regeneration then changes every row and keeps the row set", async () => {
  const start0 = await exportOf(svc.url, "resource_allocations");
  const key = ["resource_id", "project_token", "fiscal_year", "period_number"];
  await control(svc.url, "regenerate?company=acme&dataset=resource_allocations&added=0.1&removed=0.1&seed=1");
  const mid = await exportOf(svc.url, "resource_allocations");
  expect(diff(start0, mid, key)).toMatchObject({ added: 6, removed: 6, changed: 0, inOrder: true });
  await control(svc.url, "regenerate?company=acme&dataset=resource_allocations&changed=0.5&seed=1");
  const mid2 = await exportOf(svc.url, "resource_allocations");
  const d2 = diff(mid, mid2, key);
  expect(d2).toMatchObject({ added: 0, removed: 0, changed: 30, inOrder: true });
  for (const c of d2.changedRows) expect(c.after.updated_at).not.toBe(c.before.updated_at);
  await control(svc.url, "regenerate?company=acme&dataset=resource_allocations");
  const plain = await exportOf(svc.url, "resource_allocations");
  expect(diff(mid2, plain, key)).toMatchObject({ added: 0, removed: 0, changed: 60, inOrder: true });
});

test("an empty export gets added rows (at least one for any fraction above 0); removing from it removes nothing", async () => {
  const regen = await control<Record<string, unknown>>(svc.url, "regenerate?company=acme&dataset=milestones&added=0.01&removed=0.5&changed=1");
  expect(regen).toMatchObject({ row_count: 1, added: 1, removed: 0, changed: 0, seed: 1 });
  const after = await exportOf(svc.url, "milestones");
  expect(after.rows).toHaveLength(1);
});

test("bad fractions or seed → 400 bad_request, and nothing is regenerated", async () => {
  const before = await exportOf(svc.url, "financials");
  for (const q of ["changed=2", "changed=abc", "added=-0.1", "removed=1e-3", "changed=0.1&seed=-1", "changed=0.1&seed=x", "changed=0.1&seed=4294967296"]) {
    const res = await fetch(`${svc.url}/__control/regenerate?company=acme&dataset=financials&${q}`, { method: "POST", headers: CONTROL });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error).toBe("bad_request");
    expect(body.message).toMatch(/fraction from 0 to 1|seed must be a whole number/);
  }
  const after = await exportOf(svc.url, "financials");
  expect(after.etag).toBe(before.etag);
});

test("large exports: 1 % changed, 0.1 % added and removed of 6,000 rows (its own service)", async () => {
  const big = await start({ datasetRows: { financials: 6_000 } });
  try {
    const before = await exportOf(big.url, "financials");
    const regen = await control<Record<string, unknown>>(big.url, "regenerate?company=acme&dataset=financials&changed=0.01&added=0.001&removed=0.001&seed=9");
    expect(regen).toMatchObject({ changed: 60, added: 6, removed: 6, row_count: 6_000 });
    const after = await exportOf(big.url, "financials");
    expect(diff(before, after, FIN_KEY)).toMatchObject({ added: 6, changed: 60, removed: 6, inOrder: true });
  } finally {
    await big.close();
  }
});
