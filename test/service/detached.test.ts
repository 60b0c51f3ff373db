/**
 * Issue #38: a text cell a reader hands on must not keep its piece of the body alive. In V8 a slice
 * of 13 or more characters is a view of the string it was cut from; the workbook writer holds a block
 * of ~23,000 rows while Excel writes it, and views in those rows kept ~17 MB of decoded body alive
 * (a heap snapshot of a whole-sheet import). This reads a body whose rows are mostly a long text the
 * sink drops, keeps only each row's short-but-sliceable name, and measures what stays on the heap:
 * with views it is the whole body (~8 MB, twice that once a piece holds a non-Latin-1 character);
 * with copies it is the names (~0.2 MB).
 */
import { setFlagsFromString } from "v8";
import { runInNewContext } from "vm";
import type { Column, CellValue } from "../../src/table/model";
import type { TableSink } from "../../src/table/sink";
import { tableFromJsonStream } from "../../src/service/jsonRows";
import { parseCsvStream } from "../../src/service/csv";
import { CsvTableBuilder, type MetaInput } from "../../src/service/dataset";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const META: MetaInput = { key: "k", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00.000Z" };
const COLUMNS: Column[] = [
  { name: "name", type: "text" },
  { name: "filler", type: "text" },
  // An integer beyond 2^53 stays text (its exact digits): kept, so copied too.
  { name: "big", type: "integer" },
];
const ROWS = 2_000;
/** 4,000 characters, one of them outside Latin-1 so each decoded piece is two bytes a character. */
const FILLER = "€" + "x".repeat(3_999);
const name = (i: number) => `Project ${String(i).padStart(6, "0")}`; // 14 characters: sliced, not copied, by V8
const big = (i: number) => `98765432109876${String(i).padStart(6, "0")}`; // 20 digits

/** The UTF-8 bytes of `text` in 64 KB pieces, as the network hands them. */
function pieces(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 65_536));
      at += 65_536;
    },
  });
}

/** A sink that drops its rows soon (as the workbook writer does), keeping only each row's name and big integer. */
function namesOnly(): TableSink & { kept: CellValue[] } {
  const kept: CellValue[] = [];
  return { transient: true, kept, begin: () => undefined, row: (r) => void kept.push(r[0], r[2]), end: () => ({ columns: [], rows: [] }) };
}

/** Heap bytes still held after `read` (the body text built beforehand, and dropped, is not counted). */
async function retained(read: () => Promise<CellValue[]>): Promise<{ bytes: number; kept: CellValue[] }> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = await read();
  gc();
  return { bytes: process.memoryUsage().heapUsed - before, kept };
}

const BUDGET = 2_000_000;

test("the JSON reader for a transient sink copies its texts out of the body", async () => {
  const rows = Array.from({ length: ROWS }, (_, i) => `{"name":"${name(i)}","filler":"${FILLER}","big":${big(i)}}`);
  const text = `{"dataset_key":"k","columns":[{"name":"name","type":"Edm.String"},{"name":"filler","type":"Edm.String"},{"name":"big","type":"Edm.Int64"}],"rows":[${rows.join(",")}]}`;
  const { bytes, kept } = await retained(async () => {
    const sink = namesOnly();
    await tableFromJsonStream(pieces(text), "json", META, COLUMNS, { sink });
    return sink.kept;
  });
  expect(kept).toHaveLength(2 * ROWS);
  expect(kept.slice(2_468, 2_470)).toEqual([name(1_234), big(1_234)]);
  expect(bytes).toBeLessThan(BUDGET);
});

test("the CSV reader for a transient sink copies its texts out of the body", async () => {
  const text = "name,filler,big\r\n" + Array.from({ length: ROWS }, (_, i) => `${name(i)},${FILLER},${big(i)}\r\n`).join("");
  const { bytes, kept } = await retained(async () => {
    const sink = namesOnly();
    const builder = new CsvTableBuilder(COLUMNS, "k", sink);
    await parseCsvStream(pieces(text), (fields, i, joined) => builder.add(fields, i, joined));
    return sink.kept;
  });
  expect(kept).toHaveLength(2 * ROWS);
  expect(kept.slice(2_468, 2_470)).toEqual([name(1_234), big(1_234)]);
  expect(bytes).toBeLessThan(BUDGET);
});
