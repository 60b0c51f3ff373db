/**
 * `fetchDataset(key, { sink })` over real HTTP: rows reach the sink as they are parsed, in all three
 * forms, and the result is what the same query gives on the complete table.
 */
import { applyQuery, createQuerySink, parseQuery, QueryError, streamingPlan } from "../../src/query";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient, PpmError } from "../../src/service";
import type { TableSink } from "../../src/table/sink";
import { acme } from "./helpers";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await startReferenceService({ port: 0, datasetRows: { financials: 3000 } });
});
afterAll(async () => {
  await svc?.close();
});

const SUMMARY =
  "$apply=filter(fiscal_year ge 2025)/groupby((fiscal_year,project_id),aggregate(budget with sum as total_budget,actual_cost with average as avg_cost,external_ref with max as ref,$count as periods))&$orderby=total_budget desc,project_id&$top=50";

describe("fetchDataset with a sink", () => {
  it.each(["json", "csv", "odata"] as const)("%s: a summary streamed equals the query on the complete table", async (format) => {
    const client = new PpmClient(acme(svc.url));
    const whole = await client.fetchDataset("financials", { format, conditional: false });
    if (whole.status !== "updated") throw new Error("expected data");
    const expected = applyQuery(whole.table, parseQuery(SUMMARY)).table;

    let seen = 0;
    const sink = createQuerySink(parseQuery(SUMMARY));
    const counting: TableSink = { begin: (c) => sink.begin(c), row: (r) => (seen++, sink.row(r)), end: () => sink.end() };
    let progress = 0;
    const r = await client.fetchDataset("financials", { format, conditional: false, sink: counting, onProgress: (n) => (progress = n) });
    if (r.status !== "updated") throw new Error("expected data");
    expect(seen).toBe(3000);
    expect(progress).toBe(3000);
    expect(r.table.columns).toEqual(expected.columns);
    expect(r.table.rows).toEqual(expected.rows);
    expect(r.table.rows).toHaveLength(50);
    expect(r.table.meta.key).toBe("financials");
    expect(r.table.meta.etag).toBe(whole.table.meta.etag);
  });

  it("a 304 never touches the sink", async () => {
    const client = new PpmClient(acme(svc.url));
    await client.fetchDataset("financials", { format: "json" });
    const calls: string[] = [];
    const r = await client.fetchDataset("financials", { format: "json", sink: { begin: () => void calls.push("begin"), row: () => void calls.push("row"), end: () => (calls.push("end"), { columns: [], rows: [] }) } });
    expect(r.status).toBe("unchanged");
    expect(calls).toEqual([]);
  });

  it("a query that does not fit the columns fails as a QueryError, not as a network error", async () => {
    const client = new PpmClient(acme(svc.url));
    const err = await client
      .fetchDataset("financials", { format: "json", conditional: false, sink: createQuerySink(parseQuery("$apply=groupby((fiscal_yaer))")) })
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(QueryError);
    expect(err).not.toBeInstanceOf(PpmError);
    expect((err as QueryError).message).toContain("unknown column 'fiscal_yaer'");
  });
});

describe("larger than a sheet", () => {
  it("refuses an export with more rows than a sheet unless the query summarises or filters it", () => {
    expect(streamingPlan(null, 1_048_575)).toEqual({ exceedsSheet: false, stream: false });
    const refused = streamingPlan({ select: ["project_id"] }, 2_000_000, "financials");
    expect(refused.exceedsSheet).toBe(true);
    expect(refused.refusal?.message).toBe("financials has 2,000,000 rows; a worksheet holds 1,048,575 plus the header row.");
    expect(refused.refusal?.action).toContain("$apply");
    expect(streamingPlan({ apply: "aggregate($count as n)" }, 2_000_000)).toEqual({ exceedsSheet: true, stream: true });
    expect(streamingPlan({ filter: "fiscal_year eq 2026" }, 2_000_000)).toEqual({ exceedsSheet: true, stream: true });
    expect(streamingPlan({ top: 1000 }, 2_000_000).refusal).toBeUndefined();
    // A summary streams whatever the size; unknown row counts are not refused.
    expect(streamingPlan({ apply: "aggregate($count as n)" }, 10)).toEqual({ exceedsSheet: false, stream: true });
    expect(streamingPlan({}, null)).toEqual({ exceedsSheet: false, stream: false });
  });
});
