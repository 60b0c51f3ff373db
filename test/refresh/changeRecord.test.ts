/** The compact change record and the mask bands "Show changes" writes from it (issue #15). */
import fc from "fast-check";
import {
  ChangeRecordError,
  DEFAULT_BAND_COSTS,
  MASK_ADDED,
  MASK_CHANGED,
  decodeChanges,
  encodeChanges,
  maskBands,
  parseRecordHeader,
  splitRecord,
  type ChangeSet,
} from "../../src/refresh/changeRecord";

const changeSet = fc
  .record({ rows: fc.integer({ min: 1, max: 3000 }), columns: fc.integer({ min: 1, max: 20 }) })
  .chain(({ rows, columns }) =>
    fc.record({
      rows: fc.constant(rows),
      columns: fc.constant(columns),
      changed: fc.array(fc.record({ row: fc.integer({ min: 0, max: rows - 1 }), column: fc.integer({ min: 0, max: columns - 1 }) }), { maxLength: 400 }),
      added: fc.array(fc.integer({ min: 0, max: rows - 1 }), { maxLength: 60 }),
    }),
  );

/** The mask as a map "row,column" → value, from the bands (0s left out). */
function painted(set: ChangeSet): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of maskBands(set)) {
    b.values.forEach((line, i) => line.forEach((v, j) => {
      const key = `${b.row + i},${b.column + j}`;
      if (out.has(key)) throw new Error(`bands overlap at ${key}`);
      if (v !== 0) out.set(key, v);
    }));
  }
  return out;
}

function expected(set: ChangeSet): Map<string, number> {
  const out = new Map<string, number>();
  for (const { row, column } of set.changed) out.set(`${row},${column}`, MASK_CHANGED);
  for (const r of set.added) for (let c = 0; c < set.columns; c++) out.set(`${r},${c}`, MASK_ADDED);
  return out;
}

describe("change record", () => {
  it("reads back exactly the changed cells and added rows (property, 300 cases)", () => {
    let cases = 0;
    fc.assert(
      fc.property(changeSet, (set) => {
        cases++;
        const back = decodeChanges(encodeChanges(set), set.rows, set.columns);
        expect(expected(back)).toEqual(expected(set));
        // No character JSON would escape: the lists cost their own length on the wire.
        const body = JSON.parse(encodeChanges(set)) as { a: string; c: Array<[number, string]> };
        for (const list of [body.a, ...body.c.map((e) => e[1])]) expect(list).toMatch(/^[0-9a-vA-Z!#$%&*]*$/);
      }),
      { numRuns: 300 },
    );
    console.log(`change record round trip: ${cases} cases`);
  });

  it("costs about two characters per scattered changed cell", () => {
    // 2,000 changes one every 100 rows in one column, 200 added rows: the bench's delta.
    const set: ChangeSet = {
      rows: 200_000, columns: 12,
      changed: Array.from({ length: 2000 }, (_, i) => ({ row: i * 100 + 7, column: 10 })),
      added: Array.from({ length: 200 }, (_, i) => i * 1000 + 901),
    };
    const text = encodeChanges(set);
    expect(text.length).toBeLessThan(2 * 2200 + 40);
  });

  it("refuses what it cannot read, or rows and columns outside the table", () => {
    expect(() => decodeChanges("{", 10, 2)).toThrow(ChangeRecordError);
    expect(() => decodeChanges(JSON.stringify({ a: "", c: [[5, "0"]] }), 10, 2)).toThrow(/column 6 of a table of 2/);
    expect(() => decodeChanges(JSON.stringify({ a: "a", c: [] }), 10, 2)).toThrow(/row 11 of a table of 10/);
    expect(() => decodeChanges(JSON.stringify({ a: "A", c: [] }), 10, 2)).toThrow(/middle of a number/);
    expect(() => decodeChanges(JSON.stringify({ a: "?", c: [] }), 10, 2)).toThrow(/unexpected character/);
  });

  it("splits into cell-sized parts and reads its header strictly", () => {
    expect(splitRecord("abcdefg", 3)).toEqual(["abc", "def", "g"]);
    expect(splitRecord("")).toEqual([""]);
    expect(parseRecordHeader(JSON.stringify({ v: 1, id: "b1", rows: 3, cols: 2, parts: 1, mask: false }))).toEqual({ v: 1, id: "b1", rows: 3, cols: 2, parts: 1, mask: false });
    for (const bad of [null, 3, "x", JSON.stringify({ v: 2, id: "b1", rows: 3, cols: 2, parts: 1, mask: false }), JSON.stringify({ v: 1, id: "b1", rows: -1, cols: 2, parts: 1, mask: false })]) {
      expect(() => parseRecordHeader(bad)).toThrow(ChangeRecordError);
    }
  });
});

describe("mask bands", () => {
  it("mark every changed cell 1 and every cell of an added row 2, nothing else, without overlap (property, 300 cases)", () => {
    fc.assert(
      fc.property(changeSet, (set) => {
        expect(painted(set)).toEqual(expected(set));
        for (const b of maskBands(set)) {
          expect(b.rowCount * b.columnCount).toBeLessThanOrEqual(DEFAULT_BAND_COSTS.maxCells);
          expect(b.row + b.rowCount).toBeLessThanOrEqual(set.rows);
          expect(b.column + b.columnCount).toBeLessThanOrEqual(set.columns);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("write scattered changes as one small range each and dense ones as few large ranges", () => {
    const scattered = maskBands({ rows: 10_000, columns: 12, changed: Array.from({ length: 50 }, (_, i) => ({ row: i * 200, column: 3 })), added: [] });
    expect(scattered.map((b) => [b.rowCount, b.columnCount])).toEqual(Array.from({ length: 50 }, () => [1, 1]));
    const dense = maskBands({ rows: 200_000, columns: 12, changed: Array.from({ length: 200_000 }, (_, i) => ({ row: i, column: 3 })), added: [] });
    expect(dense.length).toBe(2);
    // Neighbouring rows (a gap of one row, nearby columns) share one range.
    const near = maskBands({ rows: 20, columns: 12, changed: [{ row: 1, column: 2 }, { row: 3, column: 3 }], added: [4] });
    expect(near).toHaveLength(1);
    expect(near[0]).toMatchObject({ row: 1, rowCount: 4, column: 0, columnCount: 12 });
  });
});
