/**
 * The formulas' data layer (src/functions/data.ts) against a scripted source, where each answer is
 * released by the test: what a regeneration that moves rows does to PPM.VALUE, and how many
 * conditional requests overlapping revalidations send (issue #37: two deliberate breakages of this
 * layer had left every test green).
 */
import { FormulaData, type DataSource } from "../../src/functions/data";
import { lookupValue } from "../../src/functions/logic";
import type { DatasetResult } from "../../src/service/client";
import type { Connection } from "../../src/service/connection";
import type { Validators } from "../../src/service/validators";
import type { CellValue, Table } from "../../src/table/model";

const CONN: Connection = { id: "c1", name: "Acme", baseUrl: "https://ppm.example", token: "t0ken-never-shown" };

function table(rows: CellValue[][], generatedAt: string): Table {
  return {
    columns: [
      { name: "project_id", type: "text" },
      { name: "budget", type: "decimal" },
    ],
    rows,
    meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt, etag: `"${generatedAt}"`, lastModified: null, fetchedAt: generatedAt },
  };
}

/** A service whose answers wait until the test releases them; it records every request. */
class ScriptedSource implements DataSource {
  readonly requests: Array<{ conditional: boolean; validators?: Validators }> = [];
  private readonly pending: Array<(r: DatasetResult) => void> = [];
  constructor(public current: Table) {}

  fetchDataset(_key: string, opts: { conditional?: boolean; validators?: Validators }): Promise<DatasetResult> {
    this.requests.push({ conditional: opts.conditional !== false, ...(opts.validators ? { validators: opts.validators } : {}) });
    return new Promise((resolve) => this.pending.push(resolve));
  }

  datasetKeys(): Promise<string[]> {
    return Promise.resolve(["project_id"]);
  }

  /** Answers every waiting request with the current generation (304 when the validators match it). */
  answerAll(): void {
    const validators: Validators = { etag: this.current.meta.etag, lastModified: null, generatedAt: this.current.meta.generatedAt };
    for (const [i, resolve] of this.pending.splice(0).entries()) {
      const asked = this.requests[this.requests.length - 1 - i]?.validators;
      resolve(asked?.etag === validators.etag ? { status: "unchanged", validators } : { status: "updated", table: this.current, validators });
    }
  }

  get waiting(): number {
    return this.pending.length;
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

async function loaded(): Promise<{ data: FormulaData; source: ScriptedSource }> {
  const source = new ScriptedSource(
    table(
      [
        ["P-1", 100],
        ["P-2", 200],
        ["P-3", 300],
      ],
      "2026-01-15T12:20:00Z",
    ),
  );
  const data = new FormulaData({ source: () => source });
  const first = data.get(CONN, "financials");
  await settle();
  source.answerAll();
  await first;
  data.subscribe(CONN, "financials", () => undefined); // a formula uses it: revalidation keeps it
  return { data, source };
}

describe("a regeneration that moves rows", () => {
  it("PPM.VALUE returns the key's row in the new generation, not the row at the key's old position", async () => {
    const { data, source } = await loaded();
    const entry = await data.get(CONN, "financials");
    expect(lookupValue(entry, "P-2", "budget")).toBe(200); // builds the key index over generation 1
    // P-1 was removed and P-4 added in front: every key moved.
    source.current = table(
      [
        ["P-4", 400],
        ["P-3", 330],
        ["P-2", 220],
      ],
      "2026-01-15T12:31:00Z",
    );
    const run = data.revalidate();
    await settle();
    source.answerAll();
    await run;
    const after = await data.get(CONN, "financials");
    expect(after.version).toBe(2);
    expect(lookupValue(after, "P-2", "budget")).toBe(220);
    expect(lookupValue(after, "P-3", "budget")).toBe(330);
    expect(lookupValue(after, "P-4", "budget")).toBe(400);
    expect(() => lookupValue(after, "P-1", "budget")).toThrow(/No row of "financials" has project_id = P-1/);
  });
});

describe("overlapping revalidations", () => {
  it("send one conditional request per dataset, and both wait for it", async () => {
    const { data, source } = await loaded();
    const before = source.requests.length;
    const a = data.revalidate();
    const b = data.revalidate(); // the timer's, while a refresh's is still waiting for its answer
    await settle();
    expect(source.requests.length - before).toBe(1);
    expect(source.requests[source.requests.length - 1].conditional).toBe(true);
    expect(source.waiting).toBe(1);
    source.answerAll();
    await Promise.all([a, b]);
    expect(data.stats).toEqual({ loads: 1, revalidations: 1, unchanged: 1 });
    // Once it is answered, the next revalidation asks again.
    const c = data.revalidate();
    await settle();
    expect(source.requests.length - before).toBe(2);
    source.answerAll();
    await c;
  });
});
