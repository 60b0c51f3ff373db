/**
 * The task pane bundle gets papaparse's browser build (package.json "browser" field). The CSV
 * reader drives papaparse through a Node-readable look-alike; this proves the browser build takes
 * the same path.
 */
jest.mock("papaparse", () => jest.requireActual<object>("papaparse/papaparse.min.js"));

import { parseCsvStream, parseCsvText } from "../../src/service/csv";

describe("CSV reader with papaparse's browser build", () => {
  it("is really the minified browser build", () => {
    const used = jest.requireMock<{ parse: () => unknown }>("papaparse");
    const node = jest.requireActual<{ parse: () => unknown }>("papaparse");
    expect(String(used.parse).length).toBeLessThan(String(node.parse).length);
  });

  it("parses quoted separators, quotes, CRLF inside cells and non-ASCII across chunk cuts", async () => {
    expect(parseCsvText('a,b\r\n1,"x\r\ny"\r\n"q""q",\r\n')).toEqual([["a", "b"], ["1", "x\r\ny"], ['q"q', ""]]);
    const bytes = new TextEncoder().encode('h1,h2\r\n"a\r\nb","é😀"\r\n"",x\r\n');
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.subarray(i, i + 3));
        c.close();
      },
    });
    const out: string[][] = [];
    await parseCsvStream(stream, (f) => out.push(f));
    expect(out).toEqual([["h1", "h2"], ["a\r\nb", "é😀"], ["", "x"]]);
  });
});
