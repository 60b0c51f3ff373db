/**
 * Chunked UTF-8 decoding (issue #24 item 2): each chunk decoded without `stream` (Node's fast path),
 * with exactly the streaming decoder's result, over random chunkings of valid and invalid bytes,
 * byte-order marks at the start and in the middle, fatal and replacing modes.
 */
import fc from "fast-check";
import { Utf8Chunks } from "../../src/service/utf8";

function streamed(chunks: readonly Uint8Array[], fatal: boolean): string | null {
  try {
    const d = new TextDecoder("utf-8", { fatal });
    return chunks.map((c) => d.decode(c, { stream: true })).join("") + d.decode();
  } catch {
    return null; // the decoder refused the bytes
  }
}

function chunked(chunks: readonly Uint8Array[], fatal: boolean): string | null {
  try {
    const d = new Utf8Chunks({ fatal });
    return chunks.map((c) => d.decode(c)).join("") + d.decode();
  } catch {
    return null; // the decoder refused the bytes
  }
}

const pieces = ["\uFEFF", "h", "é", "€", "𠀋", " Tower", "a\uFEFFb"].map((s) => Array.from(new TextEncoder().encode(s)));
const bytesArb = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }),
  fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((ps) => ps.flat()),
  fc.tuple(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 8 }), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([ps, at, b]) => {
    const flat = ps.flat();
    flat[at % flat.length] = b;
    return flat;
  }),
);

describe("Utf8Chunks", () => {
  it("decodes any chunking exactly as a streaming TextDecoder does", () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 40 }), fc.boolean(), (bytes, sizes, fatal) => {
        const all = Uint8Array.from(bytes);
        const chunks: Uint8Array[] = [];
        for (let at = 0, k = 0; at < all.length; k++) {
          const end = Math.min(all.length, at + sizes[k % sizes.length]);
          chunks.push(all.subarray(at, end));
          at = end;
        }
        expect(chunked(chunks, fatal)).toBe(streamed(chunks, fatal));
      }),
      { numRuns: 3000 },
    );
  });

  it("drops a byte-order mark only at the start, even split over chunks", () => {
    const d = new Utf8Chunks();
    expect([Uint8Array.of(0xef), Uint8Array.of(0xbb), Uint8Array.of(0xbf, 0x61, 0xef, 0xbb, 0xbf, 0x62)].map((c) => d.decode(c)).join("") + d.decode()).toBe("a\uFEFFb");
  });

  it("holds back a character cut at a chunk's end, and reports an unfinished one at the end", () => {
    const euro = new TextEncoder().encode("€");
    const d = new Utf8Chunks({ fatal: true });
    expect(d.decode(euro.subarray(0, 2))).toBe("");
    expect(d.decode(euro.subarray(2))).toBe("€");
    const e = new Utf8Chunks({ fatal: true });
    e.decode(euro.subarray(0, 2));
    expect(() => e.decode()).toThrow();
  });
});
