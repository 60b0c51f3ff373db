/**
 * Issue #26: the bytes a refresh makes every CO-AUTHOR download, hidden sheets included
 * (`npx tsx bench/coauthorBytes.ts [rows]`, default 20,000 × 12; the scenario of `bench/deltaScenario.ts`).
 *
 * Model: the two-client host (`src/emulator/coauthoring.ts`). Ann refreshes while Ben has the document
 * open (so Excel tells the add-in co-authoring is active); every change the service delivers to Ben
 * is counted: each cell change the JSON size of its new content plus 8 bytes for its address (a
 * cleared cell 8 bytes), a sheet changed structurally (a table resized or sorted, a sheet added or
 * hidden) ITS WHOLE CONTENT, a deleted sheet 64 bytes, a setting its key and value. Transient state
 * (written and then removed) therefore counts in full, as it reaches every co-author. "Cells that
 * change" is the same measure applied to the document before and after the whole refresh (what a
 * co-author needs at least). Budget: ≤ 1.2×.
 */
import "./officejs";
import { Workbook, createRequestContext, toWorkbookFile } from "../src/emulator";
import { CoauthoringSession, type Change } from "../src/emulator/coauthoring";
import type { WorkbookModel } from "../src/emulator/model";
import { importTable } from "../src/workbook/writer";
import { refreshTable } from "../src/workbook/refresh";
import { lockTiming } from "../src/workbook/lock";
import { draftBinding } from "../src/refresh/binding";
import { COLUMNS, onePercentChanged, row, sourceOf, tableMaker } from "./deltaScenario";

type Snapshot = { cells: Map<string, Map<string, string>>; settings: Map<string, string>; tables: Map<string, string> };

function snapshot(wb: WorkbookModel): Snapshot {
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

/** Bytes a co-author needs at least to go from `a` to `b`. */
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

/** Bytes one delivered change costs each co-author (see the module comment). */
function deliveredBytes(c: Change): number {
  let bytes = 0;
  for (const [k, v] of c.settings) bytes += k.length + (v?.length ?? 0);
  for (const cells of c.cells.values()) {
    for (const [, , cell] of cells) bytes += cell ? JSON.stringify(cell).length + 8 : 8;
  }
  for (const state of c.sheets.values()) bytes += state ? JSON.stringify(state).length : 64;
  if (c.names) bytes += JSON.stringify(c.names).length;
  return bytes;
}

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 20_000);
  const json = process.argv.includes("--json");
  const table = tableMaker();
  const wb = new Workbook({ currentYear: 2025 });
  const first = Array.from({ length: rows }, (_, i) => row(i + 1, 0));
  await importTable(createRequestContext(wb), table(first), {
    binding: draftBinding({ id: "co", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }),
  });
  // Ann refreshes, Ben has the document open (changes reach him at once: d = 0 changes no byte).
  const session = new CoauthoringSession(wb, { workbook: { currentYear: 2025 } });
  const ann = session.addClient({ name: "Ann" });
  session.addClient({ name: "Ben" });
  // The lock's co-authoring wait (twice the propagation bound) moves no byte: not waited here.
  lockTiming.propagationMs = 0;
  lockTiming.minSettleMs = 0;
  // A shared workbook is in the cloud (issue #35): the refresh takes the co-authoring path whatever
  // Excel's lagging collaboration flag says yet.
  lockTiming.mayBeShared = () => true;
  const ctx = createRequestContext(ann.workbook);
  const gen1 = first.map((_, i) => row(i + 1, 1));
  const scenarios: Array<[string, () => Promise<string>]> = [
    ["every row changed (full rewrite)", async () => (await refreshTable(ctx, "co", sourceOf(table(gen1)), {})).delta?.strategy ?? "none"],
    ["1 % changed, 0.1 % added, 0.1 % removed (delta)", async () => (await refreshTable(ctx, "co", sourceOf(table(onePercentChanged(gen1, rows + 1))), {})).delta?.strategy ?? "none"],
  ];
  const say = (line: string) => {
    if (!json) console.log(line);
  };
  say(`Co-author download per refresh (issue #26), ${rows.toLocaleString("en-US")} × ${COLUMNS.length}, two-client emulated workbook`);
  say("scenario                                          strategy  changed bytes  downloaded bytes  ratio  budget   Ann sent + received");
  const lines: string[] = [];
  const figures: Array<{ scenario: string; strategy: string; changedBytes: number; downloadedBytes: number; ratio: number; requestBytes: number; responseBytes: number }> = [];
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
  for (const [name, run] of scenarios) {
    const start = snapshot(ann.workbook);
    const from = session.lastSeq;
    const stats = ann.workbook.stats;
    const req0 = sum(stats.requestBytesPerSync), res0 = sum(stats.responseBytesPerSync);
    const strategy = await run();
    const changed = changeBytes(start, snapshot(ann.workbook));
    const downloaded = session.changes().filter((c) => c.seq > from && c.origin === ann.id).reduce((n, c) => n + deliveredBytes(c), 0);
    const ratio = downloaded / Math.max(1, changed);
    const requestBytes = sum(stats.requestBytesPerSync) - req0, responseBytes = sum(stats.responseBytesPerSync) - res0;
    figures.push({ scenario: name, strategy, changedBytes: changed, downloadedBytes: downloaded, ratio, requestBytes, responseBytes });
    say(`${name.padEnd(50)}${strategy.padEnd(10)}${changed.toLocaleString("en-US").padStart(13)}${downloaded.toLocaleString("en-US").padStart(18)}${ratio.toFixed(2).padStart(7)}  ≤ 1.20   ${requestBytes.toLocaleString("en-US")} + ${responseBytes.toLocaleString("en-US")}`);
    lines.push(`  ${ratio <= 1.2 ? "PASS" : "FAIL"}  co-author download ≤ 1.2× the cells that change: ${name} (${ratio.toFixed(2)}×)`);
  }
  if (json) {
    console.log(JSON.stringify({ rows, columns: COLUMNS.length, scenarios: figures }));
    return;
  }
  console.log("\nBudget checks:");
  for (const l of lines) console.log(l);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
