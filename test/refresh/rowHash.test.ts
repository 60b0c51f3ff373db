/** Row fingerprints and their stored form (issue #15): base + edit log replays to the same list. */
import fc from "fast-check";
import { packBase, packLogText, replay, rowHash, shouldCompact, unpack, HashStoreError, HASH_CHARS, type HashLogEntry } from "../../src/refresh/rowHash";
import { appendToLog, parseRefreshLog, REFRESH_LOG_BUDGET_CHARS } from "../../src/refresh/refreshLog";
import type { RefreshLogEntry } from "../../src/refresh/engine";

describe("rowHash", () => {
  it("keeps the fingerprints workbooks already store (a changed digit order or alphabet would make every next refresh a full rewrite)", () => {
    // Pinned from the implementation that wrote them (2026-11-29).
    expect(rowHash([1, "a", true])).toBe("vLBwHZQ");
    expect(rowHash([])).toBe("BWQxes3");
    expect(rowHash([null])).toBe("NrVGnC6");
    expect(rowHash([1.5, -0, "x".repeat(40), false, 2 ** 60, NaN])).toBe("TFVI8Jb");
    expect(rowHash(["PRJ-0001", "Project 1", 317, 2026, 1, 92819.15, 83537.23, 24.71, 46023, 46055.8555, false, "9007199254740993"])).toBe(".4uD7hG");
  });

  it("is 7 characters, tells types apart and treats empty and null alike (both are an empty cell)", () => {
    expect(rowHash([1, "a", true])).toHaveLength(HASH_CHARS);
    expect(rowHash([1])).not.toBe(rowHash(["1"]));
    expect(rowHash(["ab", "c"])).not.toBe(rowHash(["a", "bc"]));
    expect(rowHash([true])).not.toBe(rowHash(["T"]));
    expect(rowHash([null, 1])).toBe(rowHash(["", 1]));
  });

  it("hashes numbers by value: fractions by their bits, −0 as 0, and never like a string or a neighbour (issue #24 item 2)", () => {
    expect(rowHash([0.1 + 0.2])).not.toBe(rowHash([0.3]));
    expect(rowHash([1.5])).not.toBe(rowHash(["1.5"]));
    expect(rowHash([-0])).toBe(rowHash([0]));
    expect(rowHash([2 ** 53])).not.toBe(rowHash([2 ** 53 + 2]));
    expect(rowHash([46055.855509259])).toBe(rowHash([JSON.parse(JSON.stringify(46055.855509259)) as number])); // as read back
    expect(rowHash([NaN])).not.toBe(rowHash([Infinity]));
    // A fraction's two 32-bit units never read as the cells after it.
    expect(rowHash([1.5, "x"])).not.toBe(rowHash([1.5, "y"]));
    fc.assert(fc.property(fc.double({ noNaN: true }), fc.double({ noNaN: true }), (a, b) => Object.is(a, b) || (a === 0 && b === 0) || rowHash([a]) !== rowHash([b])));
  });

  it("base + log replays to the fingerprints after each delta (random deltas)", () => {
    let cases = 0;
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { maxLength: 6 }), (start, ops) => {
        cases++;
        let rows = start.map((s) => rowHash([s]));
        const base = packBase(rows);
        const log: HashLogEntry[] = [];
        for (const [a, b, c] of ops) {
          // One delta: remove one row, insert one, change one (when possible).
          const e: HashLogEntry = { d: [], i: [], c: [] };
          if (rows.length > 0) e.d.push([a % rows.length, 1]);
          const afterDel = rows.length - e.d.length;
          e.i.push([b % (afterDel + 1), rowHash(["new", a, b])]);
          e.c.push([c % (afterDel + 1), rowHash(["chg", c])]);
          rows = replay(rows, e);
          log.push(e);
        }
        const cells = packLogText(log.map((e) => JSON.stringify(e)).join("\n"));
        expect(unpack(base, cells).hashes).toEqual(rows);
      }),
      { numRuns: 300 },
    );
    console.log(`fingerprint store replay: ${cases} cases`);
  });

  it("refuses damaged cells instead of guessing", () => {
    expect(() => unpack(["x123"], [])).toThrow(HashStoreError);
    expect(() => unpack([packBase(["abcdefg"])[0]], ["L{"])).toThrow(HashStoreError);
    expect(() => replay(["abcdefg"], { d: [[3, 1]], i: [], c: [] })).toThrow(HashStoreError);
  });

  it("compacts when the log outgrows a quarter of the base or 200 entries", () => {
    expect(shouldCompact(200_000, 20_000, 3)).toBe(false);
    expect(shouldCompact(200_000, 400_000, 3)).toBe(true);
    expect(shouldCompact(10, 100, 200)).toBe(true);
  });
});

describe("refresh log", () => {
  const entry = (i: number): RefreshLogEntry => ({ at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), bindingId: "b1", tableName: "ppm_financials", outcome: "updated", added: i, changed: 1, removed: 0, strategy: "delta", ms: 12, cellsWritten: 3, code: null, bytesReceived: 1_000 + i, fallback: null });
  it("keeps within the budget by dropping the oldest entries first", () => {
    let entries: RefreshLogEntry[] = [];
    let json = "";
    for (let i = 0; i < 400; i++) ({ entries, json } = appendToLog(entries, entry(i)));
    expect(json.length).toBeLessThanOrEqual(REFRESH_LOG_BUDGET_CHARS);
    expect(entries[entries.length - 1].added).toBe(399);
    expect(entries[0].added).toBeGreaterThan(0);
    expect(parseRefreshLog(json)).toEqual(entries);
  });
  it("reads untrusted values: garbage gives an empty log, bad entries are dropped", () => {
    expect(parseRefreshLog("{nope")).toEqual([]);
    expect(parseRefreshLog(JSON.stringify([entry(1), { at: 1 }]))).toEqual([entry(1)]);
  });
  it("reads entries written before bytes were recorded (bytes unknown)", () => {
    const old: Partial<RefreshLogEntry> = { ...entry(2) };
    delete old.bytesReceived;
    expect(parseRefreshLog(JSON.stringify([old]))).toEqual([{ ...entry(2), bytesReceived: null }]);
  });
});
