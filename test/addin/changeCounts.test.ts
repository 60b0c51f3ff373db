/**
 * Issue #25 item 2: the added / changed / removed counts a refresh reports are checked against what
 * the regeneration applied, for tables whose rows are not the export's rows: a summary (keyed by
 * its group-by columns), a filtered table that keeps the dataset's key, and a narrowed table that
 * drops it (no key: "rewritten", never "changed"). Real HTTP (reference service on 127.0.0.1), the
 * workbook emulator as `Excel`, the engine calls the pane makes.
 */
import { createEngine } from "../../src/addin/engine";
import { countsText, summarize, summaryText } from "../../src/addin/refreshSummary";
import { PpmClient } from "../../src/service/client";
import { applyQuery, parseQuery } from "../../src/query";
import type { Table } from "../../src/table/model";
import { useAcmeWorkbook } from "./helpers";
import { CONTROL } from "../helpers/control";

/** Rows of `table` by the values of `key`, each with the rest of its values (JSON, for comparing). */
function byKey(table: Table, key: readonly string[]): Map<string, string> {
  const k = key.map((n) => table.columns.findIndex((c) => c.name === n));
  if (k.some((i) => i < 0)) throw new Error(`key ${key.join(",")} not in ${table.columns.map((c) => c.name).join(",")}`);
  const out = new Map<string, string>();
  for (const row of table.rows) {
    const id = JSON.stringify(k.map((i) => row[i]));
    if (out.has(id)) throw new Error(`key ${id} repeats`);
    out.set(id, JSON.stringify(row));
  }
  return out;
}

/** What changed between two tables with the same key: the oracle the pane's counts must equal. */
function diff(before: Table, after: Table, key: readonly string[]): { added: number; changed: number; removed: number } {
  const a = byKey(before, key);
  const b = byKey(after, key);
  let added = 0;
  let changed = 0;
  for (const [id, row] of b) {
    const was = a.get(id);
    if (was === undefined) added++;
    else if (was !== row) changed++;
  }
  const removed = [...a.keys()].filter((id) => !b.has(id)).length;
  return { added, changed, removed };
}

describe("change counts are what the regeneration applied (issue #25)", () => {
  const env = useAcmeWorkbook();
  let client: PpmClient;

  beforeEach(() => {
    client = new PpmClient(env.conn);
  });

  const exportNow = async (): Promise<Table> => {
    const r = await client.fetchDataset("financials", { format: "json" });
    if (r.status !== "updated") throw new Error("expected the export");
    return r.table;
  };

  /** Imports financials with `queryText`, regenerates part of it, refreshes; the report's counts and the oracle's. */
  async function scenario(queryText: string, regen: Record<string, string>, outcome: "updated" | "unchanged" = "updated") {
    const engine = createEngine();
    const query = parseQuery(queryText);
    await engine.importSource({
      connection: env.conn,
      companyId: "acme",
      source: { kind: "dataset", key: "financials", format: "json" },
      query,
      destination: { kind: "newSheet" },
      signal: new AbortController().signal,
      secrets: env.store.allSecrets(),
      onProgress: () => undefined,
    });
    const before = applyQuery(await exportNow(), query).table;
    const res = await fetch(`${env.service.url}/__control/regenerate?${new URLSearchParams({ company: "acme", dataset: "financials", ...regen }).toString()}`, { method: "POST", headers: CONTROL });
    expect(res.status).toBe(200);
    const after = applyQuery(await exportNow(), query).table;
    const { bindings } = await engine.listBindings();
    const report = await engine.refreshOne(bindings[0].id, env.conn, { secrets: env.store.allSecrets() });
    expect(report.outcome).toBe(outcome);
    return { report, before, after, engine };
  }

  it("a summary is keyed by its group-by columns: added, changed and removed groups are counted as groups", async () => {
    const { report, before, after } = await scenario(
      "$apply=groupby((fiscal_year,project_id),aggregate(budget with sum as total_budget,$count as rows))",
      { changed: "0.03", added: "0.02", removed: "0.02", seed: "25" },
    );
    const expected = diff(before, after, ["fiscal_year", "project_id"]);
    // The scenario must move groups in every way, or the test proves little.
    expect(expected.changed).toBeGreaterThan(0);
    expect(report.delta).toMatchObject({ matchedBy: "key", key: ["fiscal_year", "project_id"], ...expected });
    const s = summarize([report]);
    expect(countsText(s.items[0].counts!)).toBe(`${expected.added} added, ${expected.changed} changed, ${expected.removed} removed`);
  });

  it("a filtered table that keeps the key columns keeps the dataset's key: a removed row is one removed row, the rows below only moved up", async () => {
    const { report, before, after } = await scenario("$filter=fiscal_year eq 2026&$select=project_id,fiscal_year,period_number,budget,actual_cost", {
      removed: "0.05",
      seed: "7",
    });
    const expected = diff(before, after, ["project_id", "fiscal_year", "period_number"]);
    expect(expected.removed).toBeGreaterThan(0);
    expect(expected).toMatchObject({ added: 0, changed: 0 });
    expect(report.delta).toMatchObject({ matchedBy: "key", key: ["project_id", "fiscal_year", "period_number"], ...expected });
  });

  it("a narrowed table without the key columns has no key: the pane says how many rows were rewritten, never 'changed'", async () => {
    const { report, before, after } = await scenario("$filter=fiscal_year eq 2026&$select=project_id,budget", { removed: "0.05", seed: "7" });
    expect(after.rows.length).toBeLessThan(before.rows.length);
    expect(report.delta?.matchedBy).toBe("position");
    const s = summarize([report]);
    const text = countsText(s.items[0].counts!);
    expect(text).not.toMatch(/changed/);
    const fewer = before.rows.length - after.rows.length;
    // Issue #34: and how the rows were matched to their records without a key.
    expect(text).toMatch(new RegExp(`^\\d+ rows? rewritten \\(no key to match rows by\\), ${fewer} fewer rows?; \\d+ rows? matched by identical content, \\d+ by position$`));
  });

  it("a table whose local query result did not change is unchanged, not 'updated — 0 added, 0 changed, 0 removed' (issue #37)", async () => {
    // Only amounts change; the table keeps the key columns of one project, so its rows stay the same.
    const { report, before, after, engine } = await scenario("$filter=project_id eq 'PRJ-0001'&$select=project_id,fiscal_year,period_number", { changed: "0.2", seed: "3" }, "unchanged");
    expect(diff(before, after, ["project_id", "fiscal_year", "period_number"])).toEqual({ added: 0, changed: 0, removed: 0 });
    expect(report.newExport).toBe(true);
    const s = summarize([report]);
    expect([s.updated, s.unchanged, s.headline]).toEqual([0, 1, "0 updated, 1 unchanged, 0 failed"]);
    expect(s.items[0].counts).toBeUndefined();
    expect(summaryText(s).split("\n")[1]).toMatch(/: unchanged, \d+ rows — a new export, and none of this table's rows changed$/);
    const log = await engine.readRefreshLog();
    expect(log[log.length - 1]).toMatchObject({ outcome: "unchanged", added: 0, changed: 0, removed: 0 });
    // The binding and the info line name the new generation all the same.
    expect(report.binding.validators.generatedAt).toBe(after.meta.generatedAt);
  });
});
