/** Pure pieces of the reference service: CSV cells, entity-tag comparison, loopback check. */
import fc from "fast-check";
import Papa from "papaparse";
import type { IncomingMessage } from "node:http";
import { csvCell, csvLine } from "../../src/reference/csv";
import { etagMatches, evaluateConditional, parseEntityTags } from "../../src/reference/conditional";
import { isLoopback } from "../../src/reference/control";
import { parseQuery } from "../../src/reference/http";

describe("csv", () => {
  test("quotes only what RFC 4180 needs (plus edge whitespace), doubles quotes", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("a\r\nb")).toBe('"a\r\nb"');
    expect(csvCell(" x")).toBe('" x"');
    expect(csvCell(null)).toBe("");
    expect(csvCell(true)).toBe("true");
    expect(csvCell(12.5)).toBe("12.5");
    expect(csvCell(9007199254740993n)).toBe("9007199254740993");
    expect(csvCell("=1+1")).toBe("=1+1");
  });

  test("any strings survive csvLine → papaparse", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", minLength: 1 }), { minLength: 1, maxLength: 6 }), (cells) => {
        const text = csvLine(["h"]) + csvLine(cells);
        const parsed = Papa.parse<string[]>(text, { newline: "\r\n" });
        expect(parsed.data[1]).toEqual(cells);
      }),
    );
  });
});

describe("conditional", () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

  test("entity tag parsing", () => {
    expect(parseEntityTags('"a", W/"b",   "c"')).toEqual(["a", "b", "c"]);
    expect(parseEntityTags(" * ")).toEqual(["*"]);
    expect(parseEntityTags("garbage")).toEqual([]);
  });

  test("weak comparison", () => {
    expect(etagMatches('W/"x"', '"x"')).toBe(true);
    expect(etagMatches('"y"', '"x"')).toBe(false);
    expect(etagMatches("*", '"x"')).toBe(true);
  });

  test("If-None-Match takes precedence over If-Modified-Since", () => {
    const lm = Date.UTC(2026, 0, 15, 6);
    expect(evaluateConditional(req({ "if-none-match": '"z"', "if-modified-since": new Date(lm).toUTCString() }), '"x"', lm)).toBe("send");
    expect(evaluateConditional(req({ "if-modified-since": new Date(lm).toUTCString() }), '"x"', lm + 999)).toBe("not_modified");
    expect(evaluateConditional(req({ "if-modified-since": new Date(lm).toUTCString() }), '"x"', lm + 1000)).toBe("send");
    expect(evaluateConditional(req({}), '"x"', lm)).toBe("send");
  });
});

test("loopback peers only", () => {
  const peer = (a: string) => ({ socket: { remoteAddress: a } }) as unknown as IncomingMessage;
  expect(isLoopback(peer("127.0.0.1"))).toBe(true);
  expect(isLoopback(peer("::1"))).toBe(true);
  expect(isLoopback(peer("::ffff:127.0.0.1"))).toBe(true);
  expect(isLoopback(peer("10.0.0.5"))).toBe(false);
  expect(isLoopback(peer("::ffff:192.168.1.2"))).toBe(false);
});

test("parseQuery decodes names and values, keeps order and duplicates", () => {
  expect(parseQuery("%24top=1&a=b+c&a=%zz&flag")).toEqual([
    { name: "$top", value: "1" },
    { name: "a", value: "b c" },
    { name: "a", value: "%zz" },
    { name: "flag", value: "" },
  ]);
});
