/**
 * `readBodyText` replaces `Response.text()` for large JSON bodies (lower peak memory); it must
 * decode exactly as `text()` does. `detachString` must return an equal string.
 */
import fc from "fast-check";
import * as v8 from "v8";
import * as vm from "vm";
import { detachString, readBodyText } from "../../src/service/dataset";

/** A Response whose body arrives in the given byte chunks. */
function chunked(chunks: Uint8Array[]): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  return new Response(stream);
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.slice(from, p));
    from = p;
  }
  out.push(bytes.slice(from));
  return out;
}

test("decodes like Response.text() whatever the chunk boundaries (multi-byte characters split, BOM, invalid bytes)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: "grapheme", maxLength: 60 }),
      fc.boolean(),
      fc.boolean(),
      fc.array(fc.nat(200), { maxLength: 6 }),
      async (text, bom, invalid, cuts) => {
        const encoded = new TextEncoder().encode(text);
        const bytes = new Uint8Array([...(bom ? [0xef, 0xbb, 0xbf] : []), ...encoded, ...(invalid ? [0xff, 0xc3] : [])]);
        const expected = await new Response(bytes).text();
        expect(await readBodyText(chunked(splitAt(bytes, cuts)))).toBe(expected);
      },
    ),
    { numRuns: 200 },
  );
});

test("an empty body is the empty string", async () => {
  expect(await readBodyText(chunked([]))).toBe("");
  expect(await readBodyText(new Response(null))).toBe("");
});

test("detachString returns an equal string, long or short", () => {
  const chunk = "2026-02-02T20:31:55Z,PRJ-0001,Alpha \u00e9 Beta";
  for (let i = 0; i < chunk.length; i++) {
    for (let j = i; j <= chunk.length; j++) {
      const cut = chunk.substring(i, j);
      expect(detachString(cut)).toBe(cut);
    }
  }
  expect(detachString('quote " and \\ backslash \u2028 line sep')).toBe('quote " and \\ backslash \u2028 line sep');
});

test("detachString keeps no part of the chunk it was cut from alive (V8 views)", () => {
  // A collector reached without --expose-gc: V8's documented flag, set at run time, read by a fresh context.
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const measure = (cut: (s: string) => string): number => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept: string[] = [];
    for (let k = 0; k < 100; k++) {
      // A distinct 1 MB chunk each time (a flat string, as the decoder's are), and a 30-character cell cut from it.
      const chunk = (String(k) + "x".repeat(1_000_000)).split("").join("");
      kept.push(cut(chunk.slice(10, 40)));
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(kept.every((s) => s === "x".repeat(30))).toBe(true);
    return grown;
  };
  // The views themselves keep every chunk: the test can tell.
  expect(measure((s) => s)).toBeGreaterThan(50_000_000);
  // A JSON round trip (a plain new string) grows the heap by ~9 MB here (the harness's own noise): the
  // same bound holds for it, and 100 chunks kept would be 100 MB or more.
  expect(measure((s) => JSON.parse(JSON.stringify(s)) as string)).toBeLessThan(20_000_000);
  expect(measure(detachString)).toBeLessThan(20_000_000);
});
