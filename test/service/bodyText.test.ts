/**
 * `readBodyText` replaces `Response.text()` for large JSON bodies (lower peak memory); it must
 * decode exactly as `text()` does. `detachString` must return an equal string.
 */
import fc from "fast-check";
import { spawnSync } from "child_process";
import * as path from "path";
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
  // Measured in a process of its own (see the fixture): a jest worker's other garbage is noise of ±90 MB.
  const root = path.resolve(__dirname, "..", "..");
  // tsx's loader in this process (its CLI would start a second node without --expose-gc).
  const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", path.join(__dirname, "fixtures", "detachRetention.ts")], {
    cwd: root,
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.stderr).toBe("");
  const grown = JSON.parse(r.stdout) as Record<"views" | "json" | "detach" | "views13" | "detach13" | "builder" | "builderOtherJoined" | "rowsEmpty" | "rowsRepeated", number>;
  // The views themselves keep every chunk (100 MB): the test can tell.
  expect(grown.views).toBeGreaterThan(50_000_000);
  // A plain new string keeps no chunk: a JSON round trip, and detachString.
  expect(grown.json).toBeLessThan(20_000_000);
  expect(grown.detach).toBeLessThan(20_000_000);
  // The shortest view V8 makes is 13 characters (the views show it): detachString copies from there.
  expect(grown.views13).toBeGreaterThan(50_000_000);
  expect(grown.detach13).toBeLessThan(20_000_000);
  // The CSV row builder keeps its text cells detached (only a field the parser joined is new already).
  expect(grown.builder).toBeLessThan(20_000_000);
  expect(grown.builderOtherJoined).toBeLessThan(20_000_000);
  // A text repeated row after row is one string shared by the rows (a copy per row was 7 MB more
  // over the fixture's 100,000 rows, measured 2026-11-29).
  expect(grown.rowsRepeated - grown.rowsEmpty).toBeLessThan(2_000_000);
});
