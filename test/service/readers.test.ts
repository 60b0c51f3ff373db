/**
 * Hostile and broken bodies for the two streaming readers (issue #14, items 3-5): nesting beyond
 * the documented depth is refused as an unreadable body (never a network fault, never a stack
 * overflow); long cells and unbroken bodies are read correctly; every chunking gives the same table.
 * Speed is measured in `bench/readers.ts` (`npm run bench:readers`), not here.
 */
import fc from "fast-check";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PATHS } from "../../src/contract/contract";
import { PpmClient } from "../../src/service";
import { CsvStreamParser, parseCsvStream } from "../../src/service/csv";
import { BodyShapeError, CsvTableBuilder, MAX_JSON_DEPTH, jsonTooDeepAt, parseJsonLossless, type MetaInput } from "../../src/service/dataset";
import { tableFromJsonStream } from "../../src/service/jsonRows";
import type { Column, Table } from "../../src/table/model";
import { ACME_TOKEN, acme, chunked, errorTexts, expectPpmError, recordingFetch } from "./helpers";
import { useReferenceService } from "../helpers/referenceService";

const META: MetaInput = { key: "financials", schemaVersion: null, generatedAt: null, etag: null, lastModified: null, fetchedAt: "2026-01-01T00:00:00.000Z" };


const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
const exportWithCell = (cell: string): string =>
  `{"dataset_key":"financials","columns":[{"name":"a","type":"Edm.String"}],"rows":[{"a":${cell}}],"row_count":1}`;

describe("JSON nesting depth (item 3)", () => {
  it("jsonTooDeepAt finds the first bracket beyond the limit, skipping strings, without recursion", () => {
    expect(jsonTooDeepAt(nested(MAX_JSON_DEPTH))).toBe(-1);
    expect(jsonTooDeepAt(nested(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH);
    expect(jsonTooDeepAt(`["${"[".repeat(500)}\\"[["]`)).toBe(-1);
    // A million levels: a recursive check would overflow the stack long before.
    expect(jsonTooDeepAt(nested(1_000_000))).toBe(MAX_JSON_DEPTH);
  });

  it("the whole-body parse refuses it as malformed_body", () => {
    let caught: unknown;
    try {
      parseJsonLossless(exportWithCell(nested(5000)));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(BodyShapeError);
    expect(caught).toMatchObject({ kind: "malformed_body", message: `it is nested deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it.each([1, 7, 1460, 65536])("the streaming reader refuses a 5,000-deep cell (chunks of %i bytes) at the offending offset", async (size) => {
    const text = exportWithCell(nested(5000));
    const err = await tableFromJsonStream(chunked(new TextEncoder().encode(text), size), "json", META, undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyShapeError);
    const at = text.indexOf('"a":') + 4 + (MAX_JSON_DEPTH - 3);
    expect(err).toMatchObject({ kind: "malformed_body", path: `offset ${at}` });
  });

  it("accepts a cell nested up to the limit (row at depth 3, so 61 levels of cell)", async () => {
    const cell = nested(MAX_JSON_DEPTH - 3);
    const t = await tableFromJsonStream(chunked(new TextEncoder().encode(exportWithCell(cell)), 7), "json", META, undefined);
    expect(t.rows).toEqual([[cell]]);
  });

  it("refuses deep nesting in the envelope too", async () => {
    const text = `{"dataset_key":"financials","x":${nested(5000)},"columns":[],"rows":[],"row_count":0}`;
    await expect(tableFromJsonStream(chunked(new TextEncoder().encode(text), 1460), "json", META, undefined)).rejects.toMatchObject({ kind: "malformed_body" });
  });
});

describe("JSON nesting depth through the client (item 3)", () => {
  const svc = useReferenceService();

  const serving = (match: string, body: string) =>
    recordingFetch((url, res) => (url.split("?")[0].endsWith(match) ? new Response(body, { status: 200, headers: { "content-type": "application/json" } }) : res)).fetch;

  it.each([
    ["json", PATHS.exportJson("financials"), exportWithCell(nested(5000)), "JSON"],
    ["odata", PATHS.odataDataset("financials"), `{"@odata.context":"x","value":[{"project_id":${nested(5000)}}]}`, "OData"],
  ] as const)("a %s export with a 5,000-deep cell: malformed_body, 'the export could not be read', not a network fault", async (format, path, body, label) => {
    const c = new PpmClient(acme(svc.url), { retries: 0, fetch: serving(path, body) });
    const e = await expectPpmError(c.fetchDataset("financials", { format }), "malformed_body");
    expect(e.message).toBe(`The ${label} export of "financials" could not be read: it is nested deeper than ${MAX_JSON_DEPTH} levels (at ${e.path}).`);
    expect(errorTexts(e)).not.toMatch(/interrupted|network/i);
  });

  it("a snapshot or an error body nested 5,000 deep is refused the same way, with no stack overflow", async () => {
    const snap = new PpmClient(acme(svc.url), { retries: 0, fetch: serving(PATHS.snapshot.projects, `[{"project_token":${nested(5000)}}]`) });
    const e = await expectPpmError(snap.fetchSnapshotRows("projects"), "malformed_body");
    expect(e.message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    // A 500 whose body is deeply nested: still the server error, its body not taken as details.
    const deepError = recordingFetch((url, res) =>
      url.endsWith(PATHS.exportJson("financials")) ? new Response(`{"error":"x","message":${nested(5000)}}`, { status: 500, headers: { "content-type": "application/json" } }) : res,
    ).fetch;
    const s = await expectPpmError(new PpmClient(acme(svc.url), { retries: 0, fetch: deepError }).fetchDataset("financials", { format: "json" }), "server_error");
    expect(s.details).toBeUndefined();
  });
});

/** What a CSV text parses to in one piece, or the syntax error's message and line. */
function csvOutcome(feed: (p: CsvStreamParser) => void): unknown {
  const out: string[][] = [];
  try {
    const p = new CsvStreamParser((f) => out.push(f));
    feed(p);
    p.end();
    return out;
  } catch (e) {
    return { error: (e as Error).message, line: (e as { line?: number }).line };
  }
}

describe("CSV reader on long records (item 4) and any chunking", () => {
  it("reads one 5 MB quoted cell and a 5 MB body without a line break, in 64 KB chunks", async () => {
    const big = "x".repeat(5_000_000);
    const rows: string[][] = [];
    await parseCsvStream(chunked(new TextEncoder().encode(`a,b\r\n1,"${big.slice(0, 10)}""${big}"\r\n`), 65536), (f) => rows.push(f));
    expect(rows.length).toBe(2);
    expect(rows[1][1]).toBe(`${big.slice(0, 10)}"${big}`);
    const fields: string[][] = [];
    await parseCsvStream(chunked(new TextEncoder().encode("abcd,".repeat(1_000_000)), 65536), (f) => fields.push(f));
    expect(fields.length).toBe(1);
    expect(fields[0].length).toBe(1_000_001);
    expect(fields[0][999_999]).toBe("abcd");
    expect(fields[0][1_000_000]).toBe("");
  });

  it("keeps papaparse's conventions: detected line ending, lone LF as data in CRLF files, blank lines, BOM", () => {
    expect(csvOutcome((p) => p.push('\uFEFFa,b\r\nx\ny,"q""\r\n"\r\n\r\n'))).toEqual([["a", "b"], ["x\ny", 'q"\r\n'], [""]]);
    expect(csvOutcome((p) => p.push("a,b\nc\r,d\n"))).toEqual([["a", "b"], ["c\r", "d"]]);
    expect(csvOutcome((p) => p.push("a,\r\n"))).toEqual([["a", ""]]);
    expect(csvOutcome((p) => p.push(""))).toEqual([]);
    expect(csvOutcome((p) => p.push('a\r\n"x"y\r\n'))).toEqual({ error: "Trailing quote on quoted field is malformed", line: 2 });
    expect(csvOutcome((p) => p.push('a\r\n"x\r\n'))).toEqual({ error: "Quoted field unterminated", line: 2 });
  });

  it("names the fields that are new strings (joined from pieces), which the table builder need not copy", () => {
    const seen: Array<readonly number[]> = [];
    const p = new CsvStreamParser((_f, _i, joined) => seen.push([...joined]));
    p.push('plain,"q""q",spl');
    p.push('it,"x"\r\nab');
    p.push("cd,e\r\n");
    p.end();
    expect(seen).toEqual([[1, 2], [0]]);
  });

  it("any text cut anywhere parses exactly as in one piece, errors included (property)", () => {
    const text = fc.array(fc.constantFrom("a", "é", "😀", ",", '"', "\r", "\n", "\r\n", '""', " "), { maxLength: 40 }).map((a) => a.join(""));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (t, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((x, y) => x - y);
        const pieces: string[] = [];
        let from = 0;
        for (const p of [...points, t.length]) {
          pieces.push(t.slice(from, p));
          from = p;
        }
        expect(csvOutcome((p) => pieces.forEach((s) => p.push(s)))).toEqual(csvOutcome((p) => p.push(t)));
        // One character at a time is the extreme cut.
        expect(csvOutcome((p) => [...t].forEach((s) => p.push(s)))).toEqual(csvOutcome((p) => p.push(t)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("CSV table builder", () => {
  it("a cell that does not fit its column is refused with the column's name and the record's place", () => {
    // The message and path are built only when a cell fails (issue #38's import CPU); they must still
    // name the column and the record.
    const b = new CsvTableBuilder([{ name: "n", type: "integer" }], "financials");
    b.add(["id", "n"], 0);
    b.add(["a", "1"], 1);
    let caught: unknown;
    try {
      b.add(["b", "x"], 2);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(BodyShapeError);
    expect(caught).toMatchObject({ message: 'column "n": expected an integer, got "x"', path: 'record 2, column "n"' });
  });

  it("a blank line carries no row in a multi-column CSV, and is an empty row in a single-column one", () => {
    const multi = new CsvTableBuilder(undefined);
    multi.add(["a", "b"], 0);
    multi.add([""], 1);
    multi.add(["x", ""], 2);
    expect(multi.finish(META).rows).toEqual([["x", null]]);
    const single = new CsvTableBuilder(undefined);
    single.add(["a"], 0);
    single.add([""], 1);
    single.add(["x"], 2);
    expect(single.finish(META).rows).toEqual([[null], ["x"]]);
  });
});

describe("1-byte, 7-byte and 1,460-byte chunkings give identical tables (item 5)", () => {
  let svc: ReferenceService;
  let columns: Column[];
  const bodies: Record<"json" | "csv" | "odata", Uint8Array> = { json: new Uint8Array(), csv: new Uint8Array(), odata: new Uint8Array() };
  let odataColumns: Column[];

  beforeAll(async () => {
    svc = await startReferenceService({ port: 0 });
    const get = async (path: string) => new Uint8Array(await (await fetch(`${svc.url}${path}`, { headers: { "Company-Api-Token": ACME_TOKEN } })).arrayBuffer());
    bodies.json = await get(PATHS.exportJson("financials"));
    bodies.csv = await get(PATHS.exportCsv("financials"));
    bodies.odata = await get(PATHS.odataDataset("financials"));
    const client = new PpmClient(acme(svc.url), { retries: 0 });
    columns = (await client.manifest()).datasets.find((d) => d.key === "financials")!.columns;
    odataColumns = (await client.metadata()).entitySets.find((s) => s.name === "financials")!.columns;
  });
  afterAll(async () => {
    await svc?.close();
  });

  async function read(format: "json" | "csv" | "odata", size: number): Promise<Table> {
    const stream = chunked(bodies[format], size);
    if (format !== "csv") return tableFromJsonStream(stream, format, META, format === "json" ? columns : odataColumns);
    const b = new CsvTableBuilder(columns);
    await parseCsvStream(stream, (f, i, joined) => b.add(f, i, joined));
    return b.finish(META);
  }

  it.each(["json", "csv", "odata"] as const)("%s", async (format) => {
    const whole = await read(format, bodies[format].length);
    expect(whole.rows.length).toBe(120);
    for (const size of [1, 7, 1460]) {
      const t = await read(format, size);
      expect(t.columns).toEqual(whole.columns);
      expect(t.rows).toEqual(whole.rows);
    }
    // And the three forms agree with each other.
    if (format !== "json") expect(whole.rows).toEqual((await read("json", 1460)).rows);
  });
});
