/**
 * Issue #15: a delta refresh gives the same table as a full rewrite, cell for cell, through the
 * workbook emulator. Each case imports the same rows into two workbooks, then refreshes both twice
 * with random edits: workbook A with deltas (the first refresh plans from the cells, the second from
 * the stored row fingerprints), workbook B with full rewrites only. Data cells, number formats and
 * the table's range must be equal after each refresh.
 */
import fc from "fast-check";
import { Workbook, createRequestContext, createEmulatedContext, seed, toWorkbookFile } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import type { RefreshSource } from "../../src/refresh/source";
import type { RefreshReport } from "../../src/refresh/engine";
import type { CellValue, Column, Table } from "../../src/table/model";
import { bindingDraft, TOKEN } from "./helpers";

const COLUMNS: Column[] = [
  { name: "id", type: "integer" },
  { name: "name", type: "text" },
  { name: "amount", type: "decimal" },
  { name: "active", type: "boolean" },
  { name: "code", type: "text" },
];

const table = (rows: CellValue[][], gen: string): Table => ({
  columns: COLUMNS,
  rows,
  meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "3", generatedAt: gen, etag: `"${gen}"`, lastModified: null, fetchedAt: gen },
});

const cell = fc.oneof(fc.constant(null), fc.integer({ min: -5, max: 5 }), fc.constantFrom("a", "b", "00123", "x y"));
const rowArb = (id: number) => fc.tuple(cell, fc.oneof(fc.constant(null), fc.double({ min: -100, max: 100, noNaN: true, noDefaultInfinity: true }).map((x) => Math.round(x * 100) / 100)), fc.boolean(), fc.constantFrom("A", "B", "007", null))
  .map(([n, a, b, c]) => [id, n === null ? null : String(n), a, b, c] as CellValue[]);

type Edit = { kind: "change" | "insert" | "delete" | "swap" | "dup" | "retype"; at: number; row: CellValue[] };
const edits = fc.array(
  fc.record({ kind: fc.constantFrom("change", "change", "insert", "delete", "swap", "dup", "retype"), at: fc.nat(), row: rowArb(0) }),
  { maxLength: 8 },
);

function applyEdits(rows: CellValue[][], script: Edit[], nextId: { v: number }): CellValue[][] {
  const out = rows.map((r) => [...r]);
  for (const e of script) {
    const i = out.length ? e.at % out.length : 0;
    if (e.kind === "insert" || out.length === 0) out.splice(out.length ? e.at % (out.length + 1) : 0, 0, [nextId.v++, ...e.row.slice(1)]);
    else if (e.kind === "change") out[i] = [out[i][0], ...e.row.slice(1)];
    else if (e.kind === "delete" && out.length > 1) out.splice(i, 1);
    else if (e.kind === "swap" && out.length > 1) { const j = (i + 1) % out.length; [out[i], out[j]] = [out[j], out[i]]; }
    else if (e.kind === "dup" && out.length > 1) out[(i + 1) % out.length] = [out[i][0], ...out[(i + 1) % out.length].slice(1)];
    else if (e.kind === "retype") out[i] = [out[i][0], out[i][2] === null ? 1 : null, out[i][2], out[i][3], out[i][4]].map((v, c) => (c === 1 && typeof v === "number" ? String(v) : v));
  }
  return out;
}

function source(t: Table): RefreshSource {
  return { fetch: async () => ({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt }, key: { candidates: [["id"]], origin: "metadata", reason: "test key" } }) };
}

async function state(wb: Workbook) {
  const context = createEmulatedContext(wb);
  const lo = context.workbook.tables.getItem("ppm_financials");
  const r = lo.getRange();
  r.load("address,values,numberFormat");
  await context.sync();
  // Every value on the data sheet: cells under and beside the table must stay where a full rewrite
  // leaves them (a delta's row inserts and deletes move them; the delta takes the net move back).
  const sheet = toWorkbookFile(wb).sheets.find((s) => s.name === "financials (json)")!;
  const everyValue = sheet.cells.filter((c) => c.v !== undefined && c.v !== "").map((c) => [c.r, c.c, c.v, c.f ?? null]);
  return { address: r.address, values: r.values, numberFormat: r.numberFormat, everyValue };
}

let cases = 0;
let deltas = 0;
afterAll(() => {
   
  console.log(`delta vs full rewrite through the emulator: ${cases} cases, ${deltas} refreshes written as deltas`);
});

/** A user typing over a data cell between refreshes (row and column taken modulo the table's size). */
const typed = fc.option(fc.record({ row: fc.nat(), column: fc.nat(), text: fc.constantFrom("typed", "12") }), { nil: null });

type Typed = { row: number; column: number; text: string } | null;

/**
 * One case: both books import `n` rows, then are refreshed with the rows after `e1` and after `e2`,
 * a user typing `u1` / `u2` over a data cell before each refresh; equal after each. Returns the delta
 * book, and how each of its refreshes was written, for a fixed case to look at.
 */
async function runCase(n: number, e1: Edit[], e2: Edit[], u1: Typed, u2: Typed): Promise<{ book: Workbook; strategies: (string | undefined)[] }> {
  const strategies: (string | undefined)[] = [];
  cases++;
  const nextId = { v: 1000 };
  const rows0: CellValue[][] = Array.from({ length: n }, (_, i) => [i + 1, `r${i}`, i * 1.5, i % 2 === 0, "007"]);
  const rows1 = applyEdits(rows0, e1, nextId);
  const rows2 = applyEdits(rows1, e2, nextId);
  const books = [new Workbook({ currentYear: 2025 }), new Workbook({ currentYear: 2025 })];
  for (const wb of books) {
    const t0 = table(rows0, "2026-01-01T00:00:00Z");
    await importTable(createRequestContext(wb), t0, { binding: bindingDraft(t0), secrets: [TOKEN] });
    // Below the largest table these edits make (header on row 2, at most 28 rows), and beside it.
    seed(wb, "'financials (json)'!A40:B41", [["note under the table", 1], ["", "=B40+1"]]);
    seed(wb, "'financials (json)'!H3", [["beside"]]);
  }
  for (const [step, rows] of [rows1, rows2].entries()) {
    const t = table(rows, `2026-01-0${step + 2}T00:00:00Z`);
    const u = [u1, u2][step];
    const bodyRows = [rows0, rows1][step].length;
    if (u && bodyRows > 0) {
      const address = `'financials (json)'!${"ABCDE"[u.column % 5]}${3 + (u.row % bodyRows)}`;
      for (const wb of books) seed(wb, address, [[u.text]]);
    }
    const reports = [];
    for (const [i, wb] of books.entries()) {
      const ctx = createRequestContext(wb);
      const id = (await readBindings(ctx)).bindings[0].id;
      // One clock for both books: the info line says the minute of the refresh, and a minute ending
      // between the two refreshes made them differ in that cell alone (a flake under load).
      reports.push(await refreshTable(ctx, id, source(t), { delta: i === 0, now: () => new Date(`2026-01-0${step + 2}T08:00:00Z`) }));
    }
    // A new export whose rows the table already holds, with no cell to put back, is "unchanged"
    // (issue #37): the delta wrote nothing. The full rewrite writes every cell: "updated".
    const wroteNothing = (r: RefreshReport) => r.delta !== undefined && r.delta.added + r.delta.changed + r.delta.removed + r.delta.cellsWritten === 0 && !r.delta.rowsMoved;
    expect(reports[0].outcome).toBe(wroteNothing(reports[0]) ? "unchanged" : "updated");
    expect(reports[1].outcome).toBe("updated");
    strategies.push(reports[0].delta?.strategy);
    if (reports[0].delta?.strategy === "delta") deltas++;
    const [a, b] = [await state(books[0]), await state(books[1])];
    expect(a).toEqual(b);
  }
  return { book: books[0], strategies };
}

test("a delta refresh equals a full rewrite cell for cell (random edits incl. inserts, deletes, reorders, type changes, duplicate keys; typed-over cells; cells under and beside the table)", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 12 }), edits, edits, typed, typed, async (n, e1, e2, u1, u2) => {
      await runCase(n, e1, e2, u1, u2);
    }),
    { numRuns: 300 },
  );
  expect(deltas).toBeGreaterThan(0);
  // About 10 s alone; the refresh's lock read-backs and the library's requests make it slower than
  // jest's 30 s default when the machine is loaded (npm test runs suites in parallel).
}, 180_000);

/**
 * A counterexample the property above found on main before issue #34 (PPM_EXCEL_PROFILE=mac, fast-check
 * seed -1991113188, path "224:1:0:2:5:5:5:5:5:5:5:6:27"): one row, a record inserted above it with
 * name "-5", then the user types 12 over that name and the same export comes again. The old block
 * checksum (weights p² + p) gave the typed-over block the prediction's value, so the delta kept the
 * user's 12 where the service says "-5". Kept as a fixed case: the checksum must see it.
 */
describe("fixed case: a typed-over 12 over \"-5\" (old checksum collision)", () => {
  const SEED = -1991113188;
  const PATH = "224:1:0:2:5:5:5:5:5:5:5:6:27";
  const CASE: [number, Edit[], Edit[], Typed, Typed] = [
    1,
    [{ kind: "insert", at: 0, row: [0, "-5", 0, false, "A"] }],
    [],
    null,
    { row: 0, column: 1994749521, text: "12" },
  ];

  test("the seed and path still replay to this case (the arbitraries have not drifted)", () => {
    const seen: unknown[] = [];
    fc.check(fc.property(fc.integer({ min: 1, max: 12 }), edits, edits, typed, typed, (...args) => { seen.push(args); return true; }), { seed: SEED, path: PATH, numRuns: 1 });
    expect(seen[0]).toEqual(CASE);
  });

  test("the delta refresh writes the service's \"-5\" over the typed 12, as a full rewrite does", async () => {
    const { book, strategies } = await runCase(...CASE);
    // The second refresh (the same export, 12 typed over B3) is the one the old checksum fooled.
    expect(strategies[1]).toBe("delta");
    const context = createEmulatedContext(book);
    const cell = context.workbook.worksheets.getItem("financials (json)").getRange("B3");
    cell.load("values,formulas");
    await context.sync();
    expect([cell.values, cell.formulas]).toEqual([[["-5"]], [["-5"]]]);
  }, 60_000);
});
