import fc from "fast-check";
import {
  applyPlan,
  changeSpans,
  chooseKey,
  deltaSummary,
  DeltaSummarySchema,
  DELTA_MAX_COST_RATIO,
  matchByContent,
  planDelta,
  type DeltaPlan,
  type DeltaWritePlan,
  type FullWritePlan,
  type TableRows,
} from "../../src/refresh/delta";
import { parseCsdl } from "../../src/service/csdl";
import { csdlDocument } from "../../src/reference/metadata";
import { DATASETS } from "../../src/reference/data";
import type { CellValue, Column, ColumnType } from "../../src/table/model";

const COLS: Column[] = [
  { name: "id", type: "integer" },
  { name: "region", type: "text" },
  { name: "amount", type: "decimal" },
  { name: "active", type: "boolean" },
  { name: "due", type: "date" },
];

function table(rows: CellValue[][], columns: Column[] = COLS): TableRows {
  return { columns, rows };
}

function row(id: number, amount = id * 10, region: string | null = `r${id % 3}`): CellValue[] {
  return [id, region, amount, id % 2 === 0, `2026-01-${String((id % 28) + 1).padStart(2, "0")}`];
}

function rows(ids: number[]): CellValue[][] {
  return ids.map((id) => row(id));
}

function asDelta(p: DeltaPlan): DeltaWritePlan {
  if (p.strategy !== "delta") throw new Error(`expected a delta plan, got full (${p.cause}: ${p.fullReason})`);
  return p;
}

function asFull(p: DeltaPlan): FullWritePlan {
  if (p.strategy !== "full") throw new Error("expected a full rewrite");
  return p;
}

const ALWAYS_DELTA = { maxCostRatio: Infinity };

describe("planDelta: keyed matching", () => {
  it("writes only the changed cells, inserts the added rows at their export positions and removes the removed rows", () => {
    const old = table(rows([1, 2, 3, 4, 5, 6]));
    const next = table([row(1), row(2, 999), row(7), row(4), row(5, 55, null), row(6), row(8)]);
    const plan = asDelta(planDelta(old, next, ["id"], ALWAYS_DELTA));
    expect(plan.matchedBy).toBe("key");
    expect(plan.key).toEqual(["id"]);
    expect(plan.removed).toEqual([{ start: 2, count: 1 }]);
    expect(plan.inserted).toEqual([
      { start: 2, rows: [row(7)] },
      { start: 6, rows: [row(8)] },
    ]);
    expect(plan.changes).toEqual([
      { row: 1, oldRow: 1, column: 2, value: 999 },
      { row: 4, oldRow: 4, column: 1, value: null },
      { row: 4, oldRow: 4, column: 2, value: 55 },
    ]);
    expect(plan.counts).toEqual({ added: 2, changed: 2, removed: 1, unchanged: 3, changedCells: 3 });
    expect(plan.cost).toMatchObject({ cellsWritten: 3 + 2 * 5, rangeWrites: 2 + 2, rowOperations: 3 });
    expect(applyPlan(old, plan)).toEqual(next);
  });

  it("groups adjacent changed cells of a row into one span (one range write)", () => {
    const old = table(rows([1, 2]));
    const next = table([row(1, 1, "x"), [2, "r2", 20, true, "2026-02-01"]]);
    const plan = asDelta(planDelta(old, next, ["id"], ALWAYS_DELTA));
    expect(changeSpans(plan.changes)).toEqual([
      { row: 0, oldRow: 0, column: 1, values: ["x", 1] },
      { row: 1, oldRow: 1, column: 4, values: ["2026-02-01"] },
    ]);
    expect(plan.cost.rangeWrites).toBe(2);
  });

  it("an identical new export is a delta with nothing to write, even when deltas are switched off", () => {
    const old = table(rows([1, 2, 3]));
    const plan = asDelta(planDelta(old, table(rows([1, 2, 3])), ["id"], { maxCostRatio: 0 }));
    expect(plan.changes).toEqual([]);
    expect(plan.inserted).toEqual([]);
    expect(plan.removed).toEqual([]);
    expect(plan.cost.deltaCost).toBe(0);
    expect(plan.counts).toEqual({ added: 0, changed: 0, removed: 0, unchanged: 3, changedCells: 0 });
  });

  it("tells 1 from \"1\" and 0 from -0 (a changed type of a value is a change)", () => {
    const old = table([[1, "a", 0, true, null]]);
    const next = table([[1, "a", -0, "true", null]]);
    const plan = asDelta(planDelta(old, next, ["id"], ALWAYS_DELTA));
    expect(plan.changes.map((c) => c.column)).toEqual([2, 3]);
    const keyedByText = planDelta(table([["1", "a", 0, true, null]]), table([[1, "a", 0, true, null]]), ["id"], ALWAYS_DELTA);
    expect(keyedByText.counts).toMatchObject({ added: 1, removed: 1, changed: 0 });
  });

  it("matches composite keys including nulls, and keeps strings that look alike apart", () => {
    const cols: Column[] = [
      { name: "a", type: "text" },
      { name: "b", type: "text" },
      { name: "v", type: "integer" },
    ];
    const old = table([["x|", "y", 1], ["x", "|y", 2], [null, "z", 3], ["s1:", "", 4]], cols);
    const next = table([["x", "|y", 20], ["x|", "y", 1], [null, "z", 3], ["s1:", "", 4]], cols);
    const plan = planDelta(old, next, ["a", "b"], ALWAYS_DELTA);
    // Row ["x","|y"] moved before ["x|","y"]: a reorder, so a full rewrite; the counts still know what happened.
    expect(plan).toMatchObject({ strategy: "full", cause: "order", matchedBy: "key", key: ["a", "b"] });
    expect(plan.counts).toMatchObject({ added: 0, removed: 0, changed: 1, unchanged: 3 });
    expect(applyPlan(old, plan)).toEqual(next);
  });

  it("a reorder beyond inserts and removals is a full rewrite, with the reason", () => {
    const old = table(rows([1, 2, 3, 4]));
    const next = table(rows([1, 3, 2, 4]));
    const plan = asFull(planDelta(old, next, ["id"], ALWAYS_DELTA));
    expect(plan.cause).toBe("order");
    expect(plan.fullReason).toMatch(/order changed beyond inserts and removals \(new row 3/);
    expect(applyPlan(old, plan)).toEqual(next);
  });

  it("added, removed or retyped columns are a full rewrite; matched rows all count as changed", () => {
    const old = table(rows([1, 2, 3]));
    const retypedCols: Column[] = COLS.map((c) => (c.name === "amount" ? { ...c, type: "text" } : c));
    const retyped = table(rows([1, 2, 4]).map((r) => r.map((v, i) => (i === 2 ? String(v) : v))), retypedCols);
    const plan = asFull(planDelta(old, retyped, ["id"]));
    expect(plan.cause).toBe("columns");
    expect(plan.fullReason).toBe("the columns changed (retyped amount decimal→text)");
    expect(plan.counts).toEqual({ added: 1, changed: 2, removed: 1, unchanged: 0, changedCells: 0 });
    expect(applyPlan(old, plan)).toEqual(retyped);
    const wider = table(rows([1]).map((r) => [...r, "x"]), [...COLS, { name: "extra", type: "text" }]);
    expect(asFull(planDelta(old, wider, ["id"])).fullReason).toBe("the columns changed (added extra)");
    const narrower = table(rows([1]).map((r) => r.slice(1)), COLS.slice(1));
    const p = asFull(planDelta(old, narrower, ["id"]));
    expect(p.fullReason).toBe("the columns changed (removed id)");
    expect(p.matchedBy).toBe("position");
    expect(p.matchReason).toBe("matched by position: key column id not in the table");
  });
});

describe("planDelta: position fallback", () => {
  it("without a key, matches unchanged rows by content and the rest by position, and says so", () => {
    const old = table(rows([1, 2, 3]));
    const next = table([row(1), row(2, 7), row(3), row(4)]);
    const plan = asDelta(planDelta(old, next, null, ALWAYS_DELTA));
    expect(plan.matchedBy).toBe("position");
    expect(plan.key).toBeNull();
    expect(plan.matchReason).toBe("matched by content (2 rows unchanged) and by position (1 row): no key was given");
    expect(plan.changes).toEqual([{ row: 1, oldRow: 1, column: 2, value: 7 }]);
    expect(plan.inserted).toEqual([{ start: 3, rows: [row(4)] }]);
    expect(applyPlan(old, plan)).toEqual(next);
    const shorter = asDelta(planDelta(old, table(rows([1])), null, ALWAYS_DELTA));
    expect(shorter.removed).toEqual([{ start: 1, count: 2 }]);
  });

  it("duplicate keys in the old or the new data fall back to position, naming the problem", () => {
    const dupOld = planDelta(table(rows([1, 2, 1])), table(rows([1, 2])), ["id"], ALWAYS_DELTA);
    expect(dupOld.matchedBy).toBe("position");
    expect(dupOld.matchReason).toBe("matched by content (2 rows unchanged) and by position (0 rows): key (id) is not unique in the previous data (row 3 repeats row 1)");
    const dupNewOld = planDelta(table(rows([1, 2])), table(rows([1, 2, 2])), ["id"], ALWAYS_DELTA);
    expect(dupNewOld.matchReason).toBe("matched by content (2 rows unchanged) and by position (0 rows): key (id) is not unique in the new data (row 3 repeats an earlier row)");
    const dupNewFresh = planDelta(table(rows([1])), table(rows([1, 9, 9])), ["id"], ALWAYS_DELTA);
    expect(dupNewFresh.matchReason).toBe("matched by content (1 row unchanged) and by position (0 rows): key (id) is not unique in the new data (9 repeats)");
    for (const [o, n, p] of [
      [rows([1, 2, 1]), rows([1, 2]), dupOld],
      [rows([1, 2]), rows([1, 2, 2]), dupNewOld],
      [rows([1]), rows([1, 9, 9]), dupNewFresh],
    ] as const) {
      expect(applyPlan(table(o.map((r) => [...r])), p)).toEqual(table(n.map((r) => [...r])));
    }
  });

  it("tries the key candidates in order: the first one unique in both tables wins", () => {
    const cols: Column[] = [
      { name: "work_type", type: "text" },
      { name: "resource_id", type: "text" },
      { name: "npt_category_id", type: "text" },
      { name: "fiscal_year", type: "integer" },
      { name: "period_number", type: "integer" },
      { name: "project_token", type: "text" },
      { name: "estimate", type: "decimal" },
    ];
    // Resource 101 on two projects in the same period: the spec tuple repeats, project_token tells them apart.
    const old = table([
      ["project_work", "101", null, 2026, 1, "pt_1", 40],
      ["project_work", "101", null, 2026, 1, "pt_2", 20],
      ["non_project_work", "101", "1", 2026, 1, null, 8],
    ], cols);
    const next = table([
      ["project_work", "101", null, 2026, 1, "pt_1", 40],
      ["project_work", "101", null, 2026, 1, "pt_2", 24],
      ["non_project_work", "101", "1", 2026, 1, null, 8],
    ], cols);
    const choice = chooseKey({ kind: "snapshot", endpoint: "projectResources" });
    const plan = asDelta(planDelta(old, next, choice, ALWAYS_DELTA));
    expect(plan.key).toEqual(["work_type", "resource_id", "npt_category_id", "fiscal_year", "period_number", "project_token"]);
    expect(plan.changes).toEqual([{ row: 1, oldRow: 1, column: 6, value: 24 }]);
    // Without project_token the tuple alone is tried, repeats, and position is the fallback.
    const strip = (t: TableRows): TableRows => ({ columns: t.columns.filter((c) => c.name !== "project_token"), rows: t.rows.map((r) => r.filter((_, i) => i !== 5)) });
    const pos = planDelta(strip(old), strip(next), choice, ALWAYS_DELTA);
    expect(pos.matchedBy).toBe("position");
    expect(pos.matchReason).toBe(
      "matched by content (2 rows unchanged) and by position (1 row): key column project_token not in the table; key (work_type, resource_id, npt_category_id, fiscal_year, period_number) is not unique in the previous data (row 2 repeats row 1)",
    );
  });
});

describe("planDelta: cost and the full-rewrite fallback", () => {
  function bigTable(n: number): TableRows {
    return table(Array.from({ length: n }, (_, i) => row(i)));
  }

  it("a few changes are a delta far below a full rewrite; every row changed is a full rewrite", () => {
    const old = bigTable(1000);
    const few = table(old.rows.map((r, i) => (i % 100 === 0 ? [r[0], r[1], -1, r[3], r[4]] : r)));
    const small = asDelta(planDelta(old, few, ["id"]));
    expect(small.cost.cellsWritten).toBe(10);
    expect(small.cost.fullRewriteCells).toBe(5000);
    expect(small.cost.ratio).toBeLessThan(0.05);
    const all = table(old.rows.map((r) => [r[0], r[1], -1, r[3], r[4]]));
    const plan = asFull(planDelta(old, all, ["id"]));
    expect(plan.cause).toBe("cost");
    expect(plan.cost.ratio).toBeGreaterThan(DELTA_MAX_COST_RATIO);
    expect(plan.fullReason).toMatch(/^a delta would cost \d+\.\d% of a full rewrite \(limit 50%\)$/);
    expect(plan.counts).toMatchObject({ changed: 1000, unchanged: 0 });
  });

  it("the cost model and threshold can be overridden (the workbook side calibrates them with the bench)", () => {
    const old = bigTable(10);
    const next = table(old.rows.map((r, i) => (i < 6 ? [r[0], r[1], -1, r[3], r[4]] : r)));
    expect(planDelta(old, next, ["id"]).strategy).toBe("full");
    expect(planDelta(old, next, ["id"], { maxCostRatio: 2 }).strategy).toBe("delta");
    const cheap = planDelta(old, next, ["id"], { costModel: { rangeWrite: 0, rowOperation: 0 } });
    expect(cheap.cost.deltaCost).toBe(6);
    expect(cheap.strategy).toBe("delta");
  });

  it("an empty old table and an emptied new table are handled (full rewrite is cheaper for both)", () => {
    const fromEmpty = planDelta(table([]), bigTable(3), ["id"]);
    expect(fromEmpty).toMatchObject({ strategy: "full", cause: "cost", counts: { added: 3, removed: 0 } });
    expect(applyPlan(table([]), fromEmpty)).toEqual(bigTable(3));
    const toEmpty = planDelta(bigTable(3), table([]), ["id"], ALWAYS_DELTA);
    expect(asDelta(toEmpty).removed).toEqual([{ start: 0, count: 3 }]);
    expect(applyPlan(bigTable(3), toEmpty)).toEqual(table([]));
    expect(asDelta(planDelta(table([]), table([]), ["id"])).cost.deltaCost).toBe(0);
  });

  it("the summary a binding stores is schema-valid and holds counts and reasons, no values", () => {
    const plan = planDelta(table(rows([1, 2])), table(rows([2, 3])), ["id"], ALWAYS_DELTA);
    const s = deltaSummary(plan);
    expect(DeltaSummarySchema.parse(s)).toEqual({
      strategy: "delta",
      matchedBy: "key",
      key: ["id"],
      reason: "matched by key (id): the given key",
      added: 1,
      changed: 0,
      removed: 1,
      cellsWritten: 5,
    });
    const full = deltaSummary(planDelta(table(rows([1, 2])), table(rows([2, 1])), ["id"]));
    expect(full.reason).toMatch(/^matched by key \(id\): the given key; full rewrite: the order changed/);
    expect(full.cellsWritten).toBe(10);
  });

  it("applyPlan refuses a plan for another table", () => {
    const plan = planDelta(table(rows([1, 2])), table(rows([1])), ["id"], ALWAYS_DELTA);
    expect(() => applyPlan(table(rows([1, 2, 3])), plan)).toThrow(RangeError);
  });
});

describe("chooseKey", () => {
  const metadata = parseCsdl(csdlDocument(DATASETS));

  it("takes a dataset's key from $metadata (the reference service's <Key> elements)", () => {
    expect(chooseKey({ kind: "dataset", key: "financials", format: "json" }, metadata)).toEqual({
      candidates: [["project_id", "fiscal_year", "period_number"]],
      origin: "metadata",
      reason: "the key $metadata declares for dataset financials",
    });
    expect(chooseKey({ kind: "dataset", key: "projects", format: "csv" }, metadata).candidates).toEqual([["project_token"]]);
  });

  it("says why there is no key: no metadata, unknown entity set, empty <Key>", () => {
    expect(chooseKey({ kind: "dataset", key: "financials", format: "json" }, null)).toMatchObject({ candidates: [], origin: "none", reason: "the service's $metadata was not available, so no key is known" });
    expect(chooseKey({ kind: "dataset", key: "nope", format: "json" }, metadata).reason).toBe("$metadata has no entity set for dataset nope");
    expect(chooseKey({ kind: "dataset", key: "x", format: "json" }, { entitySets: [{ name: "x", keys: [] }] }).reason).toBe("$metadata declares no key for dataset x");
    const plan = planDelta(table(rows([1])), table(rows([1])), chooseKey({ kind: "dataset", key: "x", format: "json" }, null));
    expect(plan.matchReason).toBe("matched by content (1 row unchanged) and by position (0 rows): the service's $metadata was not available, so no key is known");
  });

  it("uses the snapshots' identifying fields", () => {
    expect(chooseKey({ kind: "snapshot", endpoint: "projects" }).candidates).toEqual([["project_token"]]);
    expect(chooseKey({ kind: "snapshot", endpoint: "proposals" }).candidates).toEqual([["project_token"]]);
    expect(chooseKey({ kind: "snapshot", endpoint: "combinedResources" }).candidates[1]).toEqual(["work_type", "resource_id", "npt_category_id", "fiscal_year", "period_number"]);
    expect(chooseKey({ kind: "snapshot", endpoint: "proposalScores" }).candidates).toEqual([["project_token", "scoring_criterion_id"]]);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: applying the plan to the old table gives exactly the new table, cell for cell.

const RUNS = 1500;

const cellArb: fc.Arbitrary<CellValue> = fc.oneof(
  fc.constant(null),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0, -0, 0.5, 1e21),
  fc.constantFrom("", "a", "b", "1", "true", "x|", "s1:", "Zürich"),
  fc.boolean(),
  fc.constantFrom("2026-01-01", "2026-01-02"),
);

type Edit =
  | { kind: "change"; at: number; col: number; value: CellValue }
  | { kind: "insert"; at: number; id: number; cells: CellValue[] }
  | { kind: "delete"; at: number }
  | { kind: "move"; from: number; to: number }
  | { kind: "duplicate"; at: number; inOld: boolean };

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("change" as const), at: fc.nat(), col: fc.nat(), value: cellArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), id: fc.integer({ min: 0, max: 60 }), cells: fc.array(cellArb, { minLength: 4, maxLength: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("move" as const), from: fc.nat(), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), inOld: fc.boolean() }) },
);

const caseArb = fc.record({
  ids: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 20 }),
  cells: fc.array(fc.array(cellArb, { minLength: 4, maxLength: 4 }), { minLength: 20, maxLength: 20 }),
  edits: fc.array(editArb, { maxLength: 12 }),
  // One case in six retypes a column (the rest exercise row matching).
  retype: fc.oneof(
    { weight: 5, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.record({ col: fc.integer({ min: 0, max: 4 }), type: fc.constantFrom<ColumnType>("text", "integer", "decimal", "boolean", "date", "datetime") }) },
  ),
  keyMode: fc.constantFrom("id" as const, "composite" as const, "none" as const, "missing" as const, "snapshotChoice" as const),
  options: fc.constantFrom({}, { maxCostRatio: Infinity }, { maxCostRatio: 0 }),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function buildCase(c: Case): { old: TableRows; next: TableRows; key: Parameters<typeof planDelta>[2] } {
  const oldRows: CellValue[][] = c.ids.map((id, i) => [id, ...c.cells[i]]);
  const nextRows: CellValue[][] = oldRows.map((r) => [...r]);
  for (const e of c.edits) {
    const n = nextRows.length;
    switch (e.kind) {
      case "change":
        if (n > 0) nextRows[e.at % n][e.col % COLS.length] = e.value;
        break;
      case "insert":
        nextRows.splice(e.at % (n + 1), 0, [100 + e.id, ...e.cells]);
        break;
      case "delete":
        if (n > 0) nextRows.splice(e.at % n, 1);
        break;
      case "move":
        if (n > 0) nextRows.splice(e.to % n, 0, ...nextRows.splice(e.from % n, 1));
        break;
      case "duplicate": {
        const target = e.inOld ? oldRows : nextRows;
        if (target.length > 0) target.splice(e.at % (target.length + 1), 0, [...target[e.at % target.length]]);
        break;
      }
    }
  }
  let nextCols = COLS;
  if (c.retype && c.retype.type !== COLS[c.retype.col].type) {
    const col = c.retype.col;
    nextCols = COLS.map((x, i) => (i === col ? { ...x, type: c.retype!.type } : x));
    for (const r of nextRows) r[col] = r[col] === null ? null : String(r[col]);
  }
  const key =
    c.keyMode === "id" ? ["id"]
    : c.keyMode === "composite" ? ["id", "region"]
    : c.keyMode === "missing" ? ["nope"]
    : c.keyMode === "snapshotChoice" ? { candidates: [["nope"], ["id"]], origin: "snapshot" as const, reason: "test" }
    : null;
  return { old: table(oldRows), next: table(nextRows, nextCols), key };
}

describe("planDelta properties (fast-check)", () => {
  it(`applyPlan(old, planDelta(old, new, key)) equals the new table cell for cell (${RUNS} random edit scripts)`, () => {
    let cases = 0;
    const seen = { delta: 0, full: 0, key: 0, position: 0, columns: 0, order: 0, cost: 0 };
    fc.assert(
      fc.property(caseArb, (c) => {
        cases++;
        const { old, next, key } = buildCase(c);
        const snapshot = JSON.stringify(old);
        const plan = planDelta(old, next, key, c.options);
        seen[plan.strategy]++;
        seen[plan.matchedBy]++;
        if (plan.strategy === "full") seen[plan.cause]++;
        const result = applyPlan(old, plan);
        expect(result.columns).toEqual(next.columns);
        expect(result.rows.length).toBe(next.rows.length);
        for (let r = 0; r < next.rows.length; r++) {
          for (let col = 0; col < next.columns.length; col++) {
            // Object.is: -0 and 0, 1 and "1" must come out exactly as in the new table.
            if (!Object.is(result.rows[r][col], next.rows[r][col])) throw new Error(`cell ${r},${col}: ${String(result.rows[r][col])} ≠ ${String(next.rows[r][col])}`);
          }
        }
        // Planning and applying never modify the old table.
        expect(JSON.stringify(old)).toBe(snapshot);
        // Counts add up.
        const { added, changed, removed, unchanged } = plan.counts;
        expect(old.rows.length - removed + added).toBe(next.rows.length);
        expect(added + changed + unchanged).toBe(next.rows.length);
      }),
      { numRuns: RUNS },
    );
    console.log(`delta property: ${cases} cases run; plans ${JSON.stringify(seen)}`);
    expect(cases).toBe(RUNS);
    // The generator must reach every branch, or the property proves less than it claims.
    for (const k of Object.keys(seen) as (keyof typeof seen)[]) expect(seen[k]).toBeGreaterThan(0);
  });

  it(`a keyed delta writes exactly the cells that differ and nothing else (${RUNS} cases)`, () => {
    let cases = 0;
    let checked = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        cases++;
        const { old, next } = buildCase({ ...c, retype: null });
        const plan = planDelta(old, next, ["id"], { maxCostRatio: Infinity });
        // Reorders (full) and duplicate keys (position) are covered by the property above.
        if (plan.strategy !== "delta" || plan.matchedBy !== "key") return;
        checked++;
        const oldById = new Map(old.rows.map((r) => [r[0], r]));
        let differing = 0;
        next.rows.forEach((r) => {
          const o = oldById.get(r[0]);
          if (o) for (let col = 0; col < r.length; col++) if (!Object.is(o[col], r[col])) differing++;
        });
        expect(plan.changes.length).toBe(differing);
        expect(plan.counts.changedCells).toBe(differing);
        for (const ch of plan.changes) expect(Object.is(old.rows[ch.oldRow][ch.column], ch.value)).toBe(false);
        expect(plan.inserted.reduce((s, r) => s + r.rows.length, 0)).toBe(plan.counts.added);
        expect(plan.removed.reduce((s, r) => s + r.count, 0)).toBe(plan.counts.removed);
      }),
      { numRuns: RUNS },
    );
    console.log(`delta minimality property: ${cases} cases run, ${checked} of them keyed deltas checked cell by cell`);
    expect(cases).toBe(RUNS);
    expect(checked).toBeGreaterThan(RUNS / 4);
  });
});

describe("matchByContent (issue #34, item 5: no key)", () => {
  it("a sorted table: every unchanged, unique row finds its record wherever it stands; a changed one is matched by position", () => {
    const old = table([row(3), row(1), row(2), row(4)]);
    // The export's order, record 4 changed.
    const next = table([row(1), row(2), row(3), row(4, 99)]);
    expect(matchByContent(old, next)).toEqual({ newToOld: Int32Array.from([1, 2, 0, 3]), byContent: 3, byPosition: 1 });
  });

  it("rows alike in every cell are paired in order, each note beside a row showing its record's content; the rest by position", () => {
    const old = table([row(1), row(1), row(2), row(5)]);
    const next = table([row(2), row(1), row(1), row(6)]);
    // Row 2 by content (old 2); the two alike rows in order (new 1 ↔ old 0, new 2 ↔ old 1); new 3 ↔ old 3 by position.
    expect(matchByContent(old, next)).toEqual({ newToOld: Int32Array.from([2, 0, 1, 3]), byContent: 3, byPosition: 1 });
  });

  it("a copy more in one table is left to position (or is new / removed)", () => {
    const old = table([row(1), row(1), row(1), row(3)]);
    const next = table([row(1), row(2), row(1)]);
    // The first two copies pair in order; new 1's positional partner (old 1) is taken: a new record; old 2 and old 3 are removed.
    expect(matchByContent(old, next)).toEqual({ newToOld: Int32Array.from([0, -1, 1]), byContent: 2, byPosition: 0 });
    const more = table([row(4), row(1), row(1), row(1)]);
    // Three new copies, two old: the third new copy (row 3) takes old row 3 by position.
    expect(matchByContent(table([row(1), row(1), row(9), row(8)]), more)).toEqual({ newToOld: Int32Array.from([-1, 0, 1, 3]), byContent: 2, byPosition: 1 });
  });

  it("the plan's summary says how many rows were matched which way", () => {
    const plan = planDelta(table([row(3), row(4), row(1), row(2)]), table([row(1), row(4, 7), row(2), row(3)]), null, ALWAYS_DELTA);
    // 1, 2 and 3 by content; record 4 changed and stands where it stood (row 2): by position.
    expect(deltaSummary(plan)).toMatchObject({ matchedBy: "position", byContent: 3, byPosition: 1 });
    expect(plan.matchReason).toMatch(/^matched by content \(3 rows unchanged\) and by position \(1 row\)/);
  });
});

