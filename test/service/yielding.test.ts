/**
 * A streaming body hands control back to the event loop while it is read and parsed, so the pane
 * can handle clicks, Esc and progress paints during a fast download (src/service/client.ts).
 */
import { yielding } from "../../src/service/client";

/** A stream whose chunks are all buffered already: every read() resolves as a microtask. */
function buffered(chunks: number, size: number): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(size).fill(i % 251));
      controller.close();
    },
  });
}

/** Reads a stream to the end, spending `busyMs` of synchronous work per chunk (as a parser does). */
async function consume(stream: ReadableStream<Uint8Array>, busyMs: number, onChunk: () => void): Promise<number> {
  const reader = stream.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
    const until = Date.now() + busyMs;
    while (Date.now() < until) {
      /* parsing */
    }
    onChunk();
  }
}

describe("yielding body stream", () => {
  it("lets a timer queued before the read run while the body is still being read", async () => {
    let chunksWhenTimerRan = -1;
    let chunks = 0;
    setTimeout(() => (chunksWhenTimerRan = chunks), 0);
    const bytes = await consume(yielding(buffered(40, 1000), 10), 2, () => chunks++);
    expect(bytes).toBe(40_000);
    // 0 when the process stalled before the first chunk was counted: still before the read ended (< 40).
    expect(chunksWhenTimerRan).toBeGreaterThanOrEqual(0);
    expect(chunksWhenTimerRan).toBeLessThan(40);
  });

  it("without it, the same read never lets the timer in (what the wrapper fixes)", async () => {
    let chunksWhenTimerRan = -1;
    let chunks = 0;
    setTimeout(() => (chunksWhenTimerRan = chunks), 0);
    await consume(buffered(40, 1000), 2, () => chunks++);
    expect(chunksWhenTimerRan).toBe(-1);
    await new Promise((r) => setTimeout(r, 0));
    expect(chunksWhenTimerRan).toBe(40);
  });

  it("passes every byte through in order and cancels the source", async () => {
    const all: number[] = [];
    const reader = yielding(buffered(5, 3), 0).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) all.push(...r.value);
    expect(all).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
    let cancelled: unknown = null;
    const src = new ReadableStream<Uint8Array>({ cancel: (reason) => void (cancelled = reason) });
    await yielding(src).cancel("stop");
    expect(cancelled).toBe("stop");
  });
});
