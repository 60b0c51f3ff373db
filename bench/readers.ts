/**
 * `npm run bench:readers [-- --json] [-- --reps 5] [-- --only long|chunks]`
 *
 * The two streaming readers (CSV: `src/service/csv.ts`; JSON export / OData rows:
 * `src/service/jsonRows.ts`) must take time linear in the body size, however long a record is and
 * however the body is cut into chunks (issue #14, items 4 and 5). Each scenario reads a body of 1×
 * and of 4× the size from an in-memory `ReadableStream` cut into chunks of a fixed size, and prints
 * the median read time (CPU time of the process; wall time beside it) of `--reps` runs and the
 * ratio 4× / 1×: linear reading gives about 4, a quadratic one about 16; the budget is ≤ 5. The bodies are built before timing (the export rows
 * come from the reference service, on loopback, in this process), so only reading is timed: bytes →
 * `TextDecoder` → reader → table (CSV: `CsvTableBuilder`; JSON: `tableFromJsonStream`).
 *
 * Scenarios:
 * - long records (64 KB chunks, what a fetch body usually delivers), at the sizes (1×) and
 *   four times them: one CSV cell of 50 MB and 200 MB, the same cell in a JSON export, and a CSV body
 *   without any line break of 20 MB and 80 MB (1 KB fields, read into a table; and 10-byte fields,
 *   1.8 and 7.3 million of them, parser only);
 * - chunkings: the `financials` export (12 columns of every type), as CSV and JSON, in chunks of
 *   1 byte (2,000 / 8,000 rows), 7 bytes (8,000 / 32,000) and 1,460 bytes (16,000 / 64,000; one
 *   TCP segment's payload).
 */
import * as v8 from "v8";
import * as vm from "vm";
import { startReferenceService } from "../src/reference/server";
import { PATHS } from "../src/contract/contract";
import { PpmClient } from "../src/service";
import { parseCsvStream } from "../src/service/csv";
import { CsvTableBuilder, type MetaInput } from "../src/service/dataset";
import { tableFromJsonStream } from "../src/service/jsonRows";
import type { Column } from "../src/table/model";

const args = process.argv.slice(2);
const asJson = args.includes("--json");
const repsArg = args.indexOf("--reps");
const onlyArg = args.indexOf("--only");
/** `long` (long records) or `chunks` (chunkings) alone. */
const only = onlyArg >= 0 ? args[onlyArg + 1] : undefined;
const reps = repsArg >= 0 ? Number(args[repsArg + 1]) : 5;
const RATIO_BUDGET = 5;
const MB = 1_000_000;

const META: MetaInput = { key: "financials", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00.000Z" };

function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close();
      // A view, not a copy: the source's own cost stays out of the figure.
      c.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

type Reader = (stream: ReadableStream<Uint8Array>) => Promise<number>;

const csvReader =
  (columns: Column[] | undefined): Reader =>
  async (stream) => {
    const b = new CsvTableBuilder(columns);
    await parseCsvStream(stream, (f, i, joined) => b.add(f, i, joined));
    return b.finish(META).rows.length;
  };

const jsonReader =
  (columns: Column[] | undefined): Reader =>
  async (stream) =>
    (await tableFromJsonStream(stream, "json", META, columns)).rows.length;

// A full collection before each run, so garbage from the previous one is not charged to it.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Median CPU time (user + system, this process) and wall time of reading `body`. The readers are
 * CPU-bound on one thread, so CPU time is the figure the ratio uses: on a machine shared with other
 * jobs, wall time also counts the time other processes held the core (seen here: 5.5 min wall for
 * 1.2 min CPU), which says nothing about the reader's growth.
 */
async function median(read: Reader, body: Uint8Array, chunk: number): Promise<{ cpu: number; wall: number }> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < reps; r++) {
    gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await read(chunked(body, chunk));
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { cpu: mid(cpu), wall: mid(wall) };
}

interface Row {
  scenario: string;
  chunk: number;
  bytes1: number;
  bytes4: number;
  /** Median CPU ms at 1× and 4×. */
  ms1: number;
  ms4: number;
  /** Median wall-clock ms at 1× and 4×. */
  wall1: number;
  wall4: number;
  ratio: number;
  ok: boolean;
}

const rows: Row[] = [];
const progress = (s: string) => console.error(s);

async function measure(scenario: string, read: Reader, body1: Uint8Array, body4: Uint8Array, chunk: number): Promise<void> {
  progress(`  ${scenario}, ${chunk}-byte chunks …`);
  // Warm-up (not measured): the first run of a reader also pays for compiling it.
  await read(chunked(body1, chunk));
  const m1 = await median(read, body1, chunk);
  const m4 = await median(read, body4, chunk);
  const ratio = m4.cpu / m1.cpu;
  rows.push({ scenario, chunk, bytes1: body1.length, bytes4: body4.length, ms1: m1.cpu, ms4: m4.cpu, wall1: m1.wall, wall4: m4.wall, ratio, ok: ratio <= RATIO_BUDGET });
}

const enc = new TextEncoder();

async function main(): Promise<void> {
  // Long records.
  const cellCsv = (n: number) => enc.encode(`project_id,note\r\n1,"${"x".repeat(n - 40)}"\r\n`);
  const cellJson = (n: number) => enc.encode(`{"dataset_key":"k","columns":[{"name":"note","type":"Edm.String"}],"rows":[["${"x".repeat(n - 90)}"]],"row_count":1}`);
  // Distinct names, as the one record of such a body is its header; `width` characters per field.
  const unbroken = (n: number, width: number) => {
    const names: string[] = [];
    const pad = "x".repeat(width - 10);
    for (let i = 0, len = 0; len < n; i++, len += width + 1) names.push(`c${String(i).padStart(9, "0")}${pad}`);
    return enc.encode(names.join(","));
  };
  // The parser alone: with 10-byte fields a 20 MB line is a header of 1.8 million columns, and
  // building that many columns (not reading) would dominate the figure.
  const recordsOnly: Reader = async (stream) => {
    let fields = 0;
    await parseCsvStream(stream, (f) => (fields += f.length));
    return fields;
  };
  if (only !== "chunks") {
    await measure("CSV, one cell of 50 / 200 MB", csvReader(undefined), cellCsv(50 * MB), cellCsv(200 * MB), 65536);
    await measure("JSON, one cell of 50 / 200 MB", jsonReader(undefined), cellJson(50 * MB), cellJson(200 * MB), 65536);
    await measure("CSV, 20 / 80 MB without a line break, 1 KB fields", csvReader(undefined), unbroken(20 * MB, 1000), unbroken(80 * MB, 1000), 65536);
    await measure("CSV, 20 / 80 MB without a line break, 10-byte fields (parser only)", recordsOnly, unbroken(20 * MB, 10), unbroken(80 * MB, 10), 65536);
  }

  // Chunkings, on the financials export of the reference service.
  if (only === "long") return report();
  const bodies: Record<string, Uint8Array> = {};
  let columns: Column[] = [];
  // Rows at 1× per chunking (4× is four times that): small chunks cost a stream read each, so
  // their bodies are smaller; larger bodies keep the 1,460-byte figures above timer noise.
  const sizes: Record<number, number> = { 1: 2000, 7: 8000, 1460: 16000 };
  for (const n of [2000, 8000, 16000, 32000, 64000]) {
    const svc = await startReferenceService({ port: 0, datasetRows: { financials: n } });
    try {
      const get = async (path: string) => new Uint8Array(await (await fetch(`${svc.url}${path}`, { headers: { "Company-Api-Token": "demo-acme-token" } })).arrayBuffer());
      bodies[`csv${n}`] = await get(PATHS.exportCsv("financials"));
      bodies[`json${n}`] = await get(PATHS.exportJson("financials"));
      columns = (await new PpmClient({ id: "b", name: "bench", baseUrl: svc.url, token: "demo-acme-token" }, { retries: 0 }).manifest()).datasets.find((d) => d.key === "financials")!.columns;
    } finally {
      await svc.close();
    }
  }
  for (const chunk of [1, 7, 1460]) {
    const n = sizes[chunk];
    const label = `financials ${n.toLocaleString("en-US")} / ${(4 * n).toLocaleString("en-US")} rows`;
    await measure(`CSV, ${label}`, csvReader(columns), bodies[`csv${n}`], bodies[`csv${4 * n}`], chunk);
    await measure(`JSON, ${label}`, jsonReader(columns), bodies[`json${n}`], bodies[`json${4 * n}`], chunk);
  }

  report();
}

function report(): void {
  const fmtBytes = (b: number) => (b >= MB ? `${(b / MB).toFixed(1)} MB` : `${(b / 1000).toFixed(0)} KB`);
  const fmtMs = (ms: number) => `${ms.toFixed(ms < 100 ? 1 : 0)} ms`;
  console.log(`Streaming readers, median of ${reps} runs (node ${process.version}); read time = CPU time (wall time in brackets); budget: 4× input ≤ ${RATIO_BUDGET}× time`);
  console.log("");
  console.log("| scenario | chunks | 1× body | 1× read | 4× body | 4× read | ratio | budget |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const chunk = r.chunk === 65536 ? "64 KB" : `${r.chunk} B`;
    console.log(
      `| ${r.scenario} | ${chunk} | ${fmtBytes(r.bytes1)} | ${fmtMs(r.ms1)} (${fmtMs(r.wall1)}) | ${fmtBytes(r.bytes4)} | ${fmtMs(r.ms4)} (${fmtMs(r.wall4)}) | ${r.ratio.toFixed(2)} | ${r.ok ? "met" : "NOT MET"} |`,
    );
  }
  const allOk = rows.every((r) => r.ok);
  console.log("");
  console.log(allOk ? "every ratio ≤ 5: linear" : "some ratio > 5: see NOT MET");
  if (asJson) console.log(JSON.stringify({ reps, node: process.version, rows }));
  process.exitCode = allOk ? 0 : 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
