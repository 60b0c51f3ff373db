/** The checks that a dataset answer is the export (src/service/bodyCheck.ts), as pure functions. */
import { contentKind, isWrongKind, jsonErrorCode, peekStream, sniffKind } from "../../src/service/bodyCheck";
import { chunked } from "./helpers";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    parts.push(r.value);
  }
  return Buffer.concat(parts);
}

describe("contentKind", () => {
  it.each([
    ["text/html; charset=utf-8", "html"],
    ["application/xhtml+xml", "html"],
    ["application/json", "json"],
    ["application/json; odata.metadata=minimal", "json"],
    ["application/problem+json", "json"],
    ["text/csv; header=present", "csv"],
    ["TEXT/CSV", "csv"],
    ["application/xml", "xml"],
    ["application/atom+xml", "xml"],
    ["text/plain", null],
    ["application/octet-stream", null],
    [null, null],
  ] as const)("%s → %s", (type, kind) => {
    expect(contentKind(type)).toBe(kind);
  });
});

describe("sniffKind", () => {
  it.each([
    ["<!DOCTYPE html><html>", "csv", "html"],
    ["\uFEFF \r\n<html lang=en>", "json", "html"],
    ["<?xml version='1.0'?><html><body>", "csv", "html"],
    ["<?xml version='1.0'?><feed>", "odata", "xml"],
    ['{"error":"x"}', "csv", "json"],
    ['[{"a":1}]', "csv", "json"],
    ['{"rows":[]}', "json", null],
    ["project_id,amount\r\n", "csv", null],
    ["[weird column],b\r\n", "csv", null],
    ["{braced},b\r\n", "csv", null],
    ["", "csv", null],
  ] as const)("%j as %s → %s", (head, form, kind) => {
    expect(sniffKind(head, form)).toBe(kind);
  });

  it("which kinds are wrong for which form", () => {
    expect(["html", "xml", "json", "csv"].map((k) => isWrongKind(k as "html", "csv"))).toEqual([true, true, true, false]);
    expect(["html", "xml", "json", "csv"].map((k) => isWrongKind(k as "html", "odata"))).toEqual([true, true, false, true]);
  });
});

describe("jsonErrorCode", () => {
  it("reads the error code of a small error body, nothing otherwise", () => {
    expect(jsonErrorCode('{"error":"unauthorized","message":"x"}')).toBe("unauthorized");
    expect(jsonErrorCode('{"error":{"code":"Forbidden"}}')).toBe("Forbidden");
    expect(jsonErrorCode('{"error":"unauth')).toBeUndefined();
    expect(jsonErrorCode("[1]")).toBeUndefined();
  });
});

describe("peekStream", () => {
  const body = new TextEncoder().encode(`${"é,".repeat(3000)}end`);
  it.each([1, 7, 1460, 1 << 20])("returns the head and replays every byte, %i-byte chunks", async (size) => {
    const { head, stream } = await peekStream(chunked(body, size), 4096);
    expect(head.startsWith("é,é,")).toBe(true);
    expect(Buffer.from(await readAll(stream)).equals(Buffer.from(body))).toBe(true);
  });
  it("a body shorter than the peek", async () => {
    const { head, stream } = await peekStream(chunked(new TextEncoder().encode("a,b\r\n"), 2), 4096);
    expect(head).toBe("a,b\r\n");
    expect(new TextDecoder().decode(await readAll(stream))).toBe("a,b\r\n");
  });
  it("an empty body", async () => {
    const { head, stream } = await peekStream(chunked(new Uint8Array(0), 1), 4096);
    expect(head).toBe("");
    expect((await readAll(stream)).length).toBe(0);
  });
});
