/**
 * The streaming JSON reader (`jsonRows.ts`) must build exactly the table the whole-body parse builds
 * (`tableFromJsonExport` / `tableFromOData` of `JSON.parse`), wherever the chunks and batches are cut,
 * and refuse what the whole-body parse refuses, with the same kind of error.
 */
import fc from "fast-check";
import type { Column } from "../../src/table/model";
import { BodyShapeError, parseJsonLossless, tableFromJsonExport, tableFromOData, type MetaInput } from "../../src/service/dataset";
import { JsonRowsScanner, tableFromJsonStream } from "../../src/service/jsonRows";
import type { TableSink } from "../../src/table/sink";

const META: MetaInput = { key: "k", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00.000Z" };

/** The UTF-8 bytes of `text`, cut at the given points, as a stream. */
function streamOf(text: string, cuts: number[] = []): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    parts.push(bytes.slice(from, p));
    from = p;
  }
  parts.push(bytes.slice(from));
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });
}

/** Error kind and class of a failing whole-body read, or the table. */
async function outcome(read: () => unknown): Promise<unknown> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof BodyShapeError) return { error: e.kind };
    throw e;
  }
}

const COLUMNS: Column[] = [
  { name: "id", type: "text" },
  { name: "n", type: "integer" },
  { name: "x", type: "decimal" },
  { name: "ok", type: "boolean" },
  { name: "d", type: "date" },
];

const tricky = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.constantFrom('a,b', '"q"', "{[}]", "\\", "rows", '"rows":[', "\u2028", "é😀", ""),
);
const row = fc.record(
  {
    id: fc.oneof(tricky, fc.constant(null)),
    n: fc.oneof(fc.integer(), fc.constant(null), fc.constantFrom("9007199254740993", "-12345678901234567890", "1234567890123456")),
    x: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
    ok: fc.oneof(fc.boolean(), fc.constant(null)),
    d: fc.oneof(fc.constantFrom("2026-01-31", "1999-12-31"), fc.constant(null)),
    extra: fc.oneof(fc.integer(), fc.boolean()),
    "@odata.etag": fc.constant("W/\"1\""),
  },
  { requiredKeys: ["id"] },
);

const EDM: Record<Column["type"], string> = { text: "Edm.String", integer: "Edm.Int64", decimal: "Edm.Decimal", boolean: "Edm.Boolean", date: "Edm.Date", datetime: "Edm.DateTimeOffset" };

/** An export body with the keys in a chosen order; `big` puts an unquoted integer beyond 2^53 in. */
function exportText(rows: unknown[], order: string[], big: boolean): string {
  const parts: Record<string, string> = {
    dataset_key: '"k"',
    schema_version: "3",
    columns: JSON.stringify(COLUMNS.map((c) => ({ name: c.name, type: EDM[c.type] }))),
    row_count: String(rows.length),
    // Integer strings written as bare JSON numbers: those beyond 2^53 must come out with every digit.
    rows: big ? JSON.stringify(rows).replace(/"(-?\d{16,})"/g, "$1") : JSON.stringify(rows),
  };
  return `{ ${order.map((k) => `${JSON.stringify(k)} : ${parts[k]}`).join(" ,\n")} }`;
}

describe("streaming JSON export = whole-body parse (property)", () => {
  test("same table for any chunking, batch size, key order and big integers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 12 }),
        fc.shuffledSubarray(["dataset_key", "schema_version", "columns", "row_count"], { minLength: 1 }),
        fc.nat(4),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 200 }),
        async (rows, others, at, big, cuts, batchChars) => {
          if (!others.includes("columns")) others.push("columns");
          const order = [...others];
          order.splice(at % (order.length + 1), 0, "rows");
          const text = exportText(rows, order, big);
          const expected = await outcome(() => tableFromJsonExport(parseJsonLossless(text), META, COLUMNS));
          const got = await outcome(() => tableFromJsonStream(streamOf(text, cuts), "json", META, COLUMNS, { batchChars }));
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("same OData table (annotations dropped, extra fields appended) for any chunking and batch size", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 200 }), async (rows, cuts, batchChars) => {
        const text = JSON.stringify({ "@odata.context": "$metadata#k", value: rows });
        const expected = await outcome(() => tableFromOData(parseJsonLossless(text), META, COLUMNS));
        const got = await outcome(() => tableFromJsonStream(streamOf(text, cuts), "odata", META, COLUMNS, { batchChars }));
        expect(got).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });
});

describe("bad bodies are refused as the whole-body parse refuses them", () => {
  const good = exportText([{ id: "a", n: 1 }, { id: "b", n: 2 }], ["dataset_key", "columns", "row_count", "rows"], false);
  const cases: Array<[string, string]> = [
    ["truncated in the rows", good.slice(0, good.indexOf('"b"'))],
    ["truncated after the rows", good.slice(0, -2)],
    ["a trailing comma in the rows", good.replace('"n":2}]', '"n":2},]')],
    ["an empty element", good.replace('},{"id":"b"', '},,{"id":"b"')],
    ["text after the body", `${good} x`],
    ["HTML instead of JSON", "<html><body>Service unavailable</body></html>"],
    ["a row that is not an object", good.replace('{"id":"b","n":2}', "42")],
    ["a row_count that does not match", good.replace('"row_count" : 2', '"row_count" : 3')],
    ["rows that are not a list", good.replace(/"rows" : \[.*\]/s, '"rows" : {"a": 1}')],
    ["no rows at all", good.replace(/,\s*"rows" : \[.*\]/s, "")],
    ["a root list", "[1, 2]"],
    ["rows twice", good.replace(/ }$/, ' , "rows" : [] }')],
    ["a bad value in a row", good.replace('"n":2', '"n":"two"')],
  ];
  test.each(cases)("%s", async (_name, text) => {
    const expected = await outcome(() => tableFromJsonExport(parseJsonLossless(text), META, COLUMNS));
    const got = await outcome(() => tableFromJsonStream(streamOf(text, [7, 30, 61]), "json", META, COLUMNS, { batchChars: 3 }));
    expect(got).toHaveProperty("error");
    // "rows twice" is accepted by JSON.parse (last one wins) but refused here: it cannot be streamed honestly.
    if (_name !== "rows twice") expect(got).toEqual(expected);
  });

  test("a parse error names its offset in the whole body, not in a batch", async () => {
    const text = good.replace('"n":2', '"n":2x');
    const err = await tableFromJsonStream(streamOf(text), "json", META, COLUMNS, { batchChars: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyShapeError);
    expect((err as BodyShapeError).path).toBe(`offset ${text.indexOf("x}")}`);
  });
});

test("only the envelope is kept as text: the rows are handed over in batches", () => {
  const batches: number[] = [];
  const scanner = new JsonRowsScanner("rows", (rows) => batches.push(rows.length), 100);
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: `row ${i}`, n: i }));
  const text = exportText(rows, ["dataset_key", "columns", "rows", "row_count"], false);
  for (let i = 0; i < text.length; i += 97) scanner.push(text.slice(i, i + 97));
  const envelope = scanner.end() as Record<string, unknown>;
  expect(batches.length).toBeGreaterThan(100);
  expect(batches.reduce((a, b) => a + b, 0)).toBe(1000);
  expect(envelope.rows).toEqual([]);
  expect(envelope.row_count).toBe(1000);
  expect(scanner.envelopeLength).toBeLessThan(600);
});

/**
 * Issue #38: a sink that drops its rows soon (`transient`, the workbook writer) gets rows read straight
 * from the text (`jsonFast.ts`); every other sink and a table kept whole get the batch reader's. Both
 * must give the same rows, the same columns and refuse the same bodies, wherever the chunks are cut.
 */
describe("rows read straight from the text (transient sink) = the batch reader's", () => {
  function collecting(transient: boolean): TableSink & { got: unknown[][] } {
    const got: unknown[][] = [];
    return { transient, got, begin: () => undefined, row: (r) => void got.push(r), end: () => ({ columns: [], rows: [] }) };
  }
  async function viaSink(text: string, format: "json" | "odata", transient: boolean, cuts: number[], batchChars?: number): Promise<unknown> {
    const sink = collecting(transient);
    return outcome(async () => {
      const t = await tableFromJsonStream(streamOf(text, cuts), format, META, COLUMNS, { sink, batchChars });
      return { columns: t.columns, rows: sink.got, meta: t.meta };
    });
  }

  test("same rows for any chunking, key order, whitespace, escapes and big integers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 12 }),
        fc.shuffledSubarray(["dataset_key", "schema_version", "columns", "row_count"], { minLength: 1 }),
        fc.nat(4),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.boolean(),
        async (rows, others, at, big, cuts, spaced) => {
          if (!others.includes("columns")) others.push("columns");
          const order = [...others];
          order.splice(at % (order.length + 1), 0, "rows");
          let text = exportText(rows, order, big);
          // Whitespace wherever JSON allows it, inside the rows too.
          if (spaced) text = text.replace(/([,:{}[\]])(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)/g, "$1 \n\t");
          expect(await viaSink(text, "json", true, cuts)).toEqual(await viaSink(text, "json", false, cuts, 7));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("same OData rows (annotations dropped) for any chunking", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), async (rows, cuts) => {
        const text = JSON.stringify({ "@odata.context": "$metadata#k", value: rows });
        expect(await viaSink(text, "odata", true, cuts)).toEqual(await viaSink(text, "odata", false, cuts, 7));
      }),
      { numRuns: 200 },
    );
  });

  const good = exportText([{ id: "a", n: 1 }, { id: "b", n: 2 }, { id: "c", n: 3 }], ["dataset_key", "columns", "row_count", "rows"], false);
  test.each<[string, string]>([
    ["truncated in the rows", good.slice(0, good.indexOf('"b"'))],
    ["a trailing comma in the rows", good.replace('"n":3}]', '"n":3},]')],
    ["an empty element", good.replace('},{"id":"b"', '},,{"id":"b"')],
    ["an empty first element", good.replace('[{"id":"a"', '[,{"id":"a"')],
    ["no comma between rows", good.replace('},{"id":"b"', '}{"id":"b"')],
    ["a row that is not an object", good.replace('{"id":"b","n":2}', "42")],
    ["a nested value", good.replace('"n":2', '"n":{"v":2}')],
    ["a bad value in a row", good.replace('"n":2', '"n":"two"')],
    ["a number with a leading zero", good.replace('"n":2', '"n":02')],
    ["a raw control character in a string", good.replace('"b"', '"b\u0001"')],
    ["a bad escape", good.replace('"b"', '"b\\x"')],
    ["an unknown literal", good.replace('"n":2', '"n":nul')],
    ["a row_count that does not match", good.replace('"row_count" : 3', '"row_count" : 4')],
  ])("%s: refused as the batch reader refuses it", async (_name, text) => {
    for (const cuts of [[], [7, 30, 61, 90]]) {
      const fast = await viaSink(text, "json", true, cuts);
      expect(fast).toHaveProperty("error");
      expect(fast).toEqual(await viaSink(text, "json", false, cuts, 3));
    }
  });

  // Review of #38, R10: `JSON.parse` and the batch reader keep a key's last value; so does the fast reader.
  test.each<[string, string]>([
    ["a bad value given first, a good one last", good.replace('"n":2', '"n":"two","n":2')],
    ["a good value given first, a bad one last", good.replace('"n":2', '"n":2,"n":"two"')],
    ["a key given twice, both good", good.replace('"n":2', '"n":5,"n":2')],
  ])("%s: judged by the last value, as the batch reader judges it", async (_name, text) => {
    for (const cuts of [[], [7, 30, 61, 90]]) {
      expect(await viaSink(text, "json", true, cuts)).toEqual(await viaSink(text, "json", false, cuts, 3));
    }
    const batch = (await viaSink(text, "json", false, [], 3)) as { rows?: unknown[][]; error?: unknown };
    // Pinned: the first two bodies differ only in which value comes last.
    if (text.includes('"n":"two","n":2') || text.includes('"n":5,"n":2')) expect(batch.rows?.[1]).toEqual(["b", 2, null, null, null]);
    else expect(batch).toHaveProperty("error");
  });

  // Review of #38, R9: a row that leaves a middle key out (it then means null) once made the fast
  // reader search the rest of the piece for the key it expected: quadratic in the piece's length.
  // One 60,000-row piece took ~70 s then; linear, it is well under a second. The count of characters
  // the reader may look at is not observable, so this pins the rows and a bound far above linear.
  test("rows that leave a middle key out: the same rows, read in linear time", async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) => ({ id: `p${i}`, x: i / 4 }));
    const text = exportText(rows, ["dataset_key", "columns", "row_count", "rows"], false);
    const started = process.hrtime.bigint();
    const fast = (await viaSink(text, "json", true, [])) as { rows: unknown[][] };
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    expect(fast.rows).toHaveLength(60_000);
    expect(fast.rows[59_999]).toEqual(["p59999", null, 59_999 / 4, null, null]);
    expect(seconds).toBeLessThan(20);
  });

  test("a parse error names its offset in the whole body", async () => {
    const text = good.replace('"n":2', '"n":2x');
    const err = await tableFromJsonStream(streamOf(text, [40]), "json", META, COLUMNS, { sink: collecting(true) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyShapeError);
    expect((err as BodyShapeError).path).toBe(`offset ${text.indexOf("x}")}`);
  });
});
