/**
 * Issue #26: the bytes a refresh makes every CO-AUTHOR download, hidden sheets included
 * (`npx tsx bench/coauthorBytes.ts [rows]`, default 20,000 × 12; the scenario of `bench/deltaScenario.ts`).
 *
 * Model (a co-author receives every change to the document, not our requests): after each request of
 * the refresh, the emulated workbook is compared with its state before that request, and every cell
 * whose stored content changed (value, formula, number format; on any sheet, very hidden ones
 * included) counts the JSON size of its new content plus 8 bytes for its address; a cleared cell counts
 * 8 bytes; a sheet added counts its cells, a sheet deleted 64 bytes; a changed setting its key and value;
 * a changed table its JSON. Transient state (a rollback copy written and then deleted) therefore
 * counts in full, as it reaches every co-author. "Cells that change" is the same measure applied to the
 * document before and after the whole refresh (what a co-author needs at least). Budget: ≤ 1.2×.
 */
import "./officejs";
import { Workbook, createRequestContext, toWorkbookFile } from "../src/emulator";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import { draftBinding } from "../src/refresh/binding";
import { COLUMNS, onePercentChanged, row, sourceOf, tableMaker } from "./deltaScenario";

type Snapshot = { cells: Map<string, Map<string, string>>; settings: Map<string, string>; tables: Map<string, string> };

function snapshot(wb: Workbook): Snapshot {
  const f = toWorkbookFile(wb);
  const cells = new Map<string, Map<string, string>>();
  for (const s of f.sheets) {
    const m = new Map<string, string>();
    for (const c of s.cells as Array<{ r: number; c: number }>) {
      const { r, c: col, ...rest } = c as { r: number; c: number } & Record<string, unknown>;
      m.set(`${r},${col}`, JSON.stringify(rest));
    }
    cells.set(s.name, m);
  }
  return {
    cells,
    settings: new Map(f.settings.map(([k, v]) => [k, JSON.stringify(v)])),
    tables: new Map(f.tables.map((t) => [t.name, JSON.stringify(t)])),
  };
}

/** Bytes a co-author downloads to go from `a` to `b`. */
function changeBytes(a: Snapshot, b: Snapshot): number {
  let bytes = 0;
  for (const [name, after] of b.cells) {
    const before = a.cells.get(name) ?? new Map<string, string>();
    for (const [k, v] of after) if (before.get(k) !== v) bytes += v.length + 8;
    for (const k of before.keys()) if (!after.has(k)) bytes += 8;
  }
  for (const name of a.cells.keys()) if (!b.cells.has(name)) bytes += 64;
  for (const [k, v] of b.settings) if (a.settings.get(k) !== v) bytes += k.length + v.length;
  for (const k of a.settings.keys()) if (!b.settings.has(k)) bytes += k.length;
  for (const [k, v] of b.tables) if (a.tables.get(k) !== v) bytes += v.length;
  return bytes;
}

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 20_000);
  const table = tableMaker();
  const wb = new Workbook({ currentYear: 2025 });
  const ctx = createRequestContext(wb);
  const first = Array.from({ length: rows }, (_, i) => row(i + 1, 0));
  await importTable(ctx, table(first), {
    binding: draftBinding({ id: "co", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }),
  });
  // Every request of a refresh is measured against the document before it.
  let downloaded = 0;
  let last = snapshot(wb);
  const plainSync = ctx.sync.bind(ctx);
  (ctx as { sync: () => Promise<void> }).sync = async () => {
    try {
      await plainSync();
    } finally {
      const now = snapshot(wb);
      downloaded += changeBytes(last, now);
      last = now;
    }
  };
  const gen1 = first.map((_, i) => row(i + 1, 1));
  const scenarios: Array<[string, () => Promise<string>]> = [
    ["every row changed (full rewrite)", async () => (await refreshTable(ctx, "co", sourceOf(table(gen1)), {})).delta?.strategy ?? "none"],
    ["1 % changed, 0.1 % added, 0.1 % removed (delta)", async () => (await refreshTable(ctx, "co", sourceOf(table(onePercentChanged(gen1, rows + 1))), {})).delta?.strategy ?? "none"],
  ];
  console.log(`Co-author download per refresh (issue #26), ${rows.toLocaleString("en-US")} × ${COLUMNS.length}, emulated workbook`);
  console.log("scenario                                          strategy  changed bytes  downloaded bytes  ratio  budget");
  const lines: string[] = [];
  for (const [name, run] of scenarios) {
    const start = snapshot(wb);
    downloaded = 0;
    last = start;
    const strategy = await run();
    const changed = changeBytes(start, snapshot(wb));
    const ratio = downloaded / Math.max(1, changed);
    console.log(`${name.padEnd(50)}${strategy.padEnd(10)}${changed.toLocaleString("en-US").padStart(13)}${downloaded.toLocaleString("en-US").padStart(18)}${ratio.toFixed(2).padStart(7)}  ≤ 1.20`);
    lines.push(`  ${ratio <= 1.2 ? "PASS" : "FAIL"}  co-author download ≤ 1.2× the cells that change: ${name} (${ratio.toFixed(2)}×)`);
  }
  console.log("\nBudget checks:");
  for (const l of lines) console.log(l);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
