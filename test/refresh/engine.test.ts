import { refreshOne, refreshAll, type RefreshTarget } from "../../src/refresh/engine";
import type { RefreshSource, SourceResult } from "../../src/refresh/source";
import { sourceFromClient, type PpmClientLike } from "../../src/refresh/source";
import type { Binding } from "../../src/refresh/binding";
import type { Table } from "../../src/table/model";
import { makeBinding, makeTable, rowsOf } from "./fixtures";

/** A target that records what it is asked to do. */
function fakeTarget(bindings: Binding[], writeImpl?: (t: Table) => Promise<{ warnings: string[] }>) {
  const saved: Binding[] = [];
  const writes: Table[] = [];
  const target: RefreshTarget = {
    listBindings: async () => ({ bindings, broken: [] }),
    write: async (_b, t) => {
      writes.push(t);
      return writeImpl ? writeImpl(t) : { warnings: [] };
    },
    saveBinding: async (b) => {
      saved.push(b);
    },
  };
  return { target, saved, writes };
}

const source = (impl: () => Promise<SourceResult>): RefreshSource & { calls: unknown[] } => {
  const calls: unknown[] = [];
  return { calls, fetch: async (s, r) => (calls.push([s, r.validators]), impl()) };
};
const now = () => new Date("2026-03-01T10:00:00Z");
const noQuery = (t: Table) => ({ table: t });

describe("refreshOne", () => {
  it("sends the stored validators and writes nothing on unchanged", async () => {
    const b = makeBinding();
    const { target, saved, writes } = fakeTarget([b]);
    const src = source(async () => ({ status: "unchanged", validators: { etag: '"e1"' } }));
    const r = await refreshOne(target, b, src, { now, applyQuery: noQuery });
    expect(r.outcome).toBe("unchanged");
    expect(writes).toHaveLength(0);
    expect(src.calls).toEqual([[b.source, b.validators]]);
    expect(saved[0].lastCheckedAt).toBe(now().toISOString());
  });

  it("writes a new validated table and records success", async () => {
    const b = makeBinding();
    const { target, saved, writes } = fakeTarget([b]);
    const table = makeTable(rowsOf(10), { generatedAt: "2026-02-01T00:00:00Z" });
    const r = await refreshOne(target, b, source(async () => ({ status: "updated", table, validators: { etag: '"e2"', generatedAt: "2026-02-01T00:00:00Z" } })), { now, applyQuery: noQuery });
    expect(r).toMatchObject({ outcome: "updated", rowCount: 10 });
    expect(writes).toEqual([table]);
    expect(saved.at(-1)).toMatchObject({ rowCount: 10, validators: { etag: '"e2"' }, lastFailure: null });
  });

  it("counts rows while downloading, so a refresh never shows 0 rows received", async () => {
    const b = makeBinding();
    const { target } = fakeTarget([b]);
    const table = makeTable(rowsOf(10), { generatedAt: "2026-02-01T00:00:00Z" });
    const src: RefreshSource = {
      fetch: async (_s, r) => {
        r.onProgress?.({ rows: 4 });
        r.onProgress?.({ rows: 10 });
        return { status: "updated", table, validators: { etag: '"e2"' } };
      },
    };
    const seen: unknown[] = [];
    await refreshOne(target, b, src, { now, applyQuery: noQuery, onProgress: (p) => seen.push(p) });
    expect(seen).toEqual(expect.arrayContaining([
      { bindingId: b.id, phase: "fetching", rowsReceived: 4 },
      { bindingId: b.id, phase: "fetching", rowsReceived: 10 },
      { bindingId: b.id, phase: "writing", rowsWritten: 0, totalRows: 10 },
    ]));
  });

  it.each([
    ["401", Object.assign(new Error("Credentials wrong for acme"), { code: "unauthorized", status: 401 }), "unauthorized"],
    ["404 not_generated", Object.assign(new Error("not generated yet"), { code: "not_generated", status: 404 }), "not_generated"],
    ["network", new TypeError("fetch failed"), "error"],
  ])("records a %s failure without writing", async (_n, err, code) => {
    const b = makeBinding();
    const { target, saved, writes } = fakeTarget([b]);
    const r = await refreshOne(target, b, source(async () => { throw err; }), { now, applyQuery: noQuery });
    expect(r.outcome).toBe("failed");
    expect(writes).toHaveLength(0);
    expect(saved).toHaveLength(1);
    expect(saved[0].lastFailure).toEqual({ at: now().toISOString(), code, message: err.message });
    expect(saved[0].rowCount).toBe(b.rowCount);
    expect(saved[0].validators).toEqual(b.validators);
  });

  it("records a schema mismatch and a cancel without writing", async () => {
    const b = makeBinding();
    const { target, saved, writes } = fakeTarget([b]);
    const other = makeTable([["x"]], { generatedAt: "2026-02-01T00:00:00Z" }, [{ name: "other", type: "text" }]);
    await refreshOne(target, b, source(async () => ({ status: "updated", table: other, validators: { generatedAt: "2026-02-01T00:00:00Z" } })), { now, applyQuery: noQuery });
    expect(saved[0].lastFailure?.code).toBe("schema_mismatch");
    const ac = new AbortController();
    const r = await refreshOne(target, b, source(async () => {
      ac.abort();
      return { status: "updated", table: makeTable(rowsOf(3), { generatedAt: "2026-02-02T00:00:00Z" }), validators: { generatedAt: "2026-02-02T00:00:00Z" } };
    }), { now, applyQuery: noQuery, signal: ac.signal });
    expect(r.failure?.code).toBe("cancelled");
    expect(writes).toHaveLength(0);
  });

  it("records a failure from the write itself and keeps token text out of it", async () => {
    const b = makeBinding();
    const { target, saved } = fakeTarget([b], async () => {
      throw Object.assign(new Error("cells below are occupied (tok-secret-1)"), { code: "occupied" });
    });
    const table = makeTable(rowsOf(4), { generatedAt: "2026-02-01T00:00:00Z" });
    const r = await refreshOne(target, b, source(async () => ({ status: "updated", table, validators: { generatedAt: "2026-02-01T00:00:00Z" } })), { now, applyQuery: noQuery, secrets: ["tok-secret-1"] });
    expect(r.failure).toMatchObject({ code: "occupied" });
    expect(saved[0].lastFailure?.message).not.toContain("tok-secret-1");
  });
});

describe("refreshAll", () => {
  it("refreshes each binding with its own source, records missing connections, stops on cancel", async () => {
    const b1 = makeBinding({ id: "b1" });
    const b2 = makeBinding({ id: "b2", tableName: "ppm_other", connectionId: "gone" });
    const { target, saved } = fakeTarget([b1, b2]);
    const src = source(async () => ({ status: "unchanged", validators: {} }));
    const { reports } = await refreshAll(target, (b) => (b.connectionId === "conn-1" ? src : null), { now, applyQuery: noQuery });
    expect(reports.map((r) => [r.bindingId, r.outcome, r.failure?.code])).toEqual([["b1", "unchanged", undefined], ["b2", "failed", "no_connection"]]);
    expect(saved.map((b) => b.id)).toEqual(["b1", "b2"]);
    const ac = new AbortController();
    ac.abort();
    const cancelled = await refreshAll(target, () => src, { now, applyQuery: noQuery, signal: ac.signal });
    expect(cancelled.reports.every((r) => r.failure?.code === "cancelled")).toBe(true);
  });
});

describe("sourceFromClient", () => {
  it("asks datasets conditionally and snapshots whole, passing validators through", async () => {
    const asked: unknown[] = [];
    const table = makeTable(rowsOf(1), { etag: "fp9", kind: "snapshot" });
    const client: PpmClientLike = {
      fetchDataset: async (key, o) => (asked.push([key, o.format, o.conditional, o.validators]), { status: "unchanged", validators: { etag: '"e1"' } }),
      fetchSnapshot: async (ep) => (asked.push([ep]), table),
    };
    const s = sourceFromClient(client);
    const r1 = await s.fetch({ kind: "dataset", key: "financials", format: "csv" }, { validators: { etag: '"e1"', lastModified: null, generatedAt: "g" } });
    expect(r1.status).toBe("unchanged");
    const r2 = await s.fetch({ kind: "snapshot", endpoint: "projects" }, { validators: {} });
    expect(r2).toMatchObject({ status: "updated", validators: { etag: "fp9" } });
    expect(asked).toEqual([["financials", "csv", true, { etag: '"e1"', generatedAt: "g" }], ["projects"]]);
  });

  // $metadata (the row key) is asked beside the body, once rows arrive: one round trip fewer.
  const keyed = { entitySets: [{ name: "financials", keys: ["line_id"] }] };
  const dataset = { kind: "dataset" as const, key: "financials", format: "csv" as const };

  it("asks $metadata while the body is still arriving, once, and passes progress on", async () => {
    const events: string[] = [];
    const progress: number[] = [];
    const client: PpmClientLike = {
      fetchDataset: async (_key, o) => {
        events.push("body starts");
        o.onProgress?.(1000);
        o.onProgress?.(2000);
        await new Promise((r) => setTimeout(r, 5));
        events.push("body ends");
        return { status: "updated", table: makeTable(rowsOf(2)), validators: { etag: '"e2"' } };
      },
      fetchSnapshot: async () => makeTable(rowsOf(1)),
      metadata: async () => (events.push("metadata asked"), keyed),
    };
    const r = await sourceFromClient(client).fetch(dataset, { validators: {}, onProgress: (p) => progress.push(p.rows) });
    expect(events).toEqual(["body starts", "metadata asked", "body ends"]);
    expect(progress).toEqual([1000, 2000]);
    expect(r).toMatchObject({ status: "updated", key: { candidates: [["line_id"]], origin: "metadata" } });
  });

  it("asks $metadata after the body when no progress came first, and never for a 304", async () => {
    let asked = 0;
    const client = (status: "updated" | "unchanged"): PpmClientLike => ({
      fetchDataset: async () => (status === "updated" ? { status, table: makeTable(rowsOf(1)), validators: {} } : { status, validators: { etag: '"e1"' } }),
      fetchSnapshot: async () => makeTable(rowsOf(1)),
      metadata: async () => (asked++, keyed),
    });
    expect(await sourceFromClient(client("unchanged")).fetch(dataset, { validators: { etag: '"e1"', lastModified: null, generatedAt: null } })).toMatchObject({ status: "unchanged" });
    expect(asked).toBe(0);
    expect(await sourceFromClient(client("updated")).fetch(dataset, { validators: {} })).toMatchObject({ key: { origin: "metadata" } });
    expect(asked).toBe(1);
  });

  it("matches rows by position when $metadata fails, throws at once or rejects while the body still arrives", async () => {
    for (const failing of [() => { throw new Error("sync"); }, () => Promise.reject(new Error("async"))]) {
      let unhandled = 0;
      const onUnhandled = () => void unhandled++;
      process.on("unhandledRejection", onUnhandled);
      const client: PpmClientLike = {
        fetchDataset: async (_key, o) => {
          o.onProgress?.(1000);
          await new Promise((r) => setTimeout(r, 5));
          return { status: "updated", table: makeTable(rowsOf(1)), validators: {} };
        },
        fetchSnapshot: async () => makeTable(rowsOf(1)),
        metadata: failing,
      };
      const r = await sourceFromClient(client).fetch(dataset, { validators: {} });
      await new Promise((res) => setTimeout(res, 5));
      process.off("unhandledRejection", onUnhandled);
      expect(r).toMatchObject({ status: "updated", key: { candidates: [], origin: "none" } });
      expect(unhandled).toBe(0);
    }
  });
});

describe("refreshOne of a summarised table ($apply)", () => {
  const summaryColumns = [
    { name: "due", type: "date" as const },
    { name: "total", type: "decimal" as const },
    { name: "n", type: "integer" as const },
  ];
  const query = { apply: "groupby((due),aggregate(amount with sum as total,$count as n))", orderby: "due" };
  const binding = () => makeBinding({ query, columns: summaryColumns.map((c) => ({ name: c.name, type: c.type })) });
  const raw = makeTable(rowsOf(60), { generatedAt: "2026-02-01T00:00:00Z" });

  it("recomputes the summary while the rows stream into the sink, never holding the raw table", async () => {
    const b = binding();
    const { target, writes } = fakeTarget([b]);
    let streamed = 0;
    // A streaming source: rows go into the sink one by one; the table it answers is the sink's result.
    const streaming: RefreshSource = {
      fetch: async (_s, r) => {
        if (!r.sink) throw new Error("expected a sink for a summary");
        r.sink.begin(raw.columns);
        for (const row of raw.rows) {
          streamed++;
          r.sink.row(row.slice());
        }
        return { status: "updated", table: { ...r.sink.end(), meta: raw.meta }, validators: { etag: '"e2"', generatedAt: "2026-02-01T00:00:00Z" } };
      },
    };
    const r = await refreshOne(target, b, streaming, { now });
    expect(streamed).toBe(60);
    expect(r).toMatchObject({ outcome: "updated", rowCount: 28 });
    expect(writes[0].columns.map((c) => c.name)).toEqual(["due", "total", "n"]);
    expect(writes[0].rows[0]).toEqual(["2024-01-01", (0 + 280 + 560) / 4, 3]);
  });

  it("a source that ignores the sink still gets the summary applied to its table", async () => {
    const b = binding();
    const { target, writes } = fakeTarget([b]);
    const r = await refreshOne(target, b, source(async () => ({ status: "updated", table: raw, validators: { etag: '"e2"', generatedAt: "2026-02-01T00:00:00Z" } })), { now });
    expect(r).toMatchObject({ outcome: "updated", rowCount: 28 });
    expect(writes[0].rows[0]).toEqual(["2024-01-01", (0 + 280 + 560) / 4, 3]);
  });

  it("304 first: nothing is recomputed", async () => {
    const b = binding();
    const { target, writes } = fakeTarget([b]);
    const r = await refreshOne(target, b, source(async () => ({ status: "unchanged", validators: b.validators })), { now });
    expect(r.outcome).toBe("unchanged");
    expect(writes).toHaveLength(0);
  });

  it("a stored summary that no longer fits the columns fails as query_failed and writes nothing", async () => {
    const b = makeBinding({ query: { apply: "groupby((gone),aggregate($count as n))" } });
    const { target, writes, saved } = fakeTarget([b]);
    const src: RefreshSource = {
      fetch: async (_s, r) => {
        r.sink!.begin(raw.columns);
        throw new Error("unreachable");
      },
    };
    const r = await refreshOne(target, b, src, { now });
    expect(r.outcome).toBe("failed");
    expect(writes).toHaveLength(0);
    expect(saved.at(-1)!.lastFailure).toMatchObject({ code: "query_failed" });
    expect(saved.at(-1)!.lastFailure!.message).toContain("unknown column 'gone'");
  });
});
