/**
 * Issue #34, item 1: the block checksum (src/workbook/checksums.ts) attacked in its own right. Under
 * the checksum before #34 (weights p² + p) typing 4300 over 1500 as the first number of a block, or
 * "da" over "ab" as its first text, left it unchanged and the delta kept the user's value.
 *
 * - The refresh end to end: those two edits come back as the service's values (seen failing on the
 *   old checksum: both cells kept what the user typed).
 * - Exhaustive: every single-cell overwrite among a block's first 64 characters by every integer
 *   0–9,999 and by each of 200 texts and dates changes the predicted checksum.
 * - Property: 1,000,000 random edits of 1–3 cells (characters, digits, swaps of cells, characters and
 *   rows, clears, formulas, errors, retypes): none unseen.
 * - The model behind the bound: with the moduli shrunk to 1,009 and 10,007 each class of edit goes
 *   unseen about 1/P of the time (the weights behave as random), and a change of one character never.
 * - The prediction is Excel's: samples of the edits above, formulas and errors included, evaluated by
 *   the emulated host's formulas in en-US, de-DE and fr-FR, equal the JS side.
 * The heavy parts run in pure JS against the predicted function (`checksumOfText`), which the last
 * part ties to the emulated Excel formulas.
 */
import { Workbook, createRequestContext, inspect, seed, type LocaleId } from "../../src/emulator";
import { importTable, typedRows } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { draftBinding } from "../../src/refresh/binding";
import { planColumns } from "../../src/workbook/cells";
import { blockText, cellToken, CHECKSUM_PARAMETERS, checksumFormula, checksumOfText, excelNumberText, predictChecksum, rowsPerBlock, sumOfText, type ChecksGeometry } from "../../src/workbook/checksums";
import { COLUMNS, row, tableMaker } from "../../bench/deltaScenario";
import { mulberry32 } from "../../bench/random";
import type { CellValue, Column, Table } from "../../src/table/model";
import type { RefreshSource } from "../../src/refresh/source";

/** The first block of the bench's 200,000 × 12 table (its generator, typed as written: dates are serials). */
function benchBlock(): { g: ChecksGeometry; rows: (string | number | boolean)[][] } {
  const t = tableMaker()(Array.from({ length: 400 }, (_, i) => row(i + 1, 1)));
  const typed = typedRows(t, planColumns(t)).get(0, t.rows.length);
  const r = rowsPerBlock(typed, COLUMNS.length);
  return { g: { sheet: "financials (json)", top: 2, left: 0, width: COLUMNS.length, rows: t.rows.length }, rows: typed.slice(0, r) };
}

describe("the issue's two edits, end to end: the delta writes the service's value back", () => {
  const columns: Column[] = [{ name: "code", type: "text" }, { name: "amount", type: "integer" }, { name: "id", type: "integer" }, { name: "note", type: "text" }];
  const rows = (first: CellValue[], v: number): CellValue[][] => [first, ...Array.from({ length: 299 }, (_, i) => [`p${i + 2}`, 1000 + i, i + 2, `v${i % 50 === 7 ? v : 1}`])];
  const table = (r: CellValue[][], gen: number): Table => ({ columns, rows: r, meta: { key: "financials", kind: "dataset", format: "json", schemaVersion: "1", generatedAt: `2026-01-0${gen}T00:00:00Z`, etag: `"g${gen}"`, lastModified: null, fetchedAt: "2026-01-01T00:00:00Z" } });
  const source = (t: Table): RefreshSource => ({ fetch: () => Promise.resolve({ status: "updated", table: t, validators: { etag: t.meta.etag, generatedAt: t.meta.generatedAt }, key: { candidates: [["id"]], origin: "metadata", reason: "the key $metadata declares" } }) });

  it.each([
    ["4300 typed over 1500, the first number of a block (\"p1|1500|…\")", ["p1", 1500, 1, "v1"], "B3", 4300, 1500],
    ["\"da\" typed over \"ab\", the first text of a block", ["ab", 1500, 1, "v1"], "A3", "da", "ab"],
  ] as const)("%s", async (_what, first, cell, typed, service) => {
    const wb = new Workbook({ currentYear: 2025 });
    const ctx = createRequestContext(wb);
    await importTable(ctx, table(rows([...first], 1), 1), { binding: draftBinding({ id: "p", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns, schemaVersion: "1", validators: {} }) });
    const at = `'financials (json)'!${cell}`;
    seed(wb, at, [[typed]]);
    expect(inspect(wb, at).values[0][0]).toBe(typeof typed === "number" ? typed : typed);
    const r = await refreshTable(ctx, "p", source(table(rows([...first], 2), 2)), { delta: true });
    expect(r.outcome).toBe("updated");
    expect(r.delta?.strategy).toBe("delta");
    expect(inspect(wb, at).values[0][0]).toBe(typeof service === "number" ? service : service);
  });
});

describe("exhaustive: every single-cell overwrite among a block's first 64 characters", () => {
  it("by every integer 0–9,999 and by each of 200 texts and dates is seen", () => {
    const { g, rows } = benchBlock();
    const base = blockText(g, 0, rows)!;
    const want = checksumOfText(base)!;
    expect(predictChecksum(g, 0, rows)).toBe(want);
    // Where each cell's token starts in the block's text.
    const cells: Array<{ r: number; c: number; start: number; token: string }> = [];
    let at = base.indexOf("|") + 1;
    for (let r = 0; r < rows.length && at < 64; r++) {
      for (let c = 0; c < g.width && at < 64; c++) {
        const token = cellToken(rows[r][c])!;
        cells.push({ r, c, start: at, token });
        at += token.length + 1;
      }
    }
    expect(cells.length).toBeGreaterThanOrEqual(6);
    const texts = [
      "", " ", "0", "00123", "1500", "4300", "p1", "ab", "da", "ba", "|", "||", "n1", "s", "b1", "b0", "=1", "'00123", "1/2", "TRUE", "FALSE", "WAHR",
      "#N/A", "1,5", "1.5", "-0", "1E5", "é", "ß", "中文", "\u00a0", "x y", "Project 1 v1", "project 1 v1", "Project 1 v2", "Project 1 v1 ", " Project 1 v1",
      "Project 10 v1", "Project 1v1", "C7", "C70", "c7", "owner1", "owner10", "Plan", "Build", "Run", "run", "a".repeat(40), "2025-01-31", "2026-01-02T10:00:00Z",
      ...Array.from({ length: 25 }, (_, i) => `note ${i}`),
      ...Array.from({ length: 24 }, (_, i) => String.fromCharCode(65 + i) + String.fromCharCode(97 + ((i * 7) % 26))),
    ];
    const dates = [
      ...Array.from({ length: 50 }, (_, i) => 45_292 + i * 7), // 2024-01-01 onwards, weekly (serials)
      ...Array.from({ length: 50 }, (_, i) => 46_023 + i + [0.5, 0.25, 0.416666666666667, 0.999988425925926, 0.000011574074074][i % 5]), // date-times
    ];
    expect(texts.length + dates.length).toBe(200);
    const values: unknown[] = [...Array.from({ length: 10_000 }, (_, i) => i), ...texts, ...dates];
    let seen = 0, unseen = 0, same = 0;
    const misses: string[] = [];
    for (const cell of cells) {
      const head = base.slice(0, cell.start), tail = base.slice(cell.start + cell.token.length);
      for (const v of values) {
        const token = cellToken(v)!;
        if (token === cell.token) {
          same++;
          continue;
        }
        if (checksumOfText(head + token + tail) === want) {
          unseen++;
          if (misses.length < 5) misses.push(`${cell.r},${cell.c}: ${JSON.stringify(v)}`);
        } else seen++;
      }
    }
    expect(misses).toEqual([]);
    expect(unseen).toBe(0);
    expect(seen + same).toBe(cells.length * 10_200);
    // The splice is the refresh's own prediction: a sample through predictChecksum.
    for (const [k, v] of [[0, 4300], [1, "da"], [2, 45_300.5], [3, ""]] as const) {
      const cell = cells[k];
      const edited = rows.map((x) => [...x]);
      edited[cell.r][cell.c] = v;
      expect(predictChecksum(g, 0, edited)).toBe(checksumOfText(base.slice(0, cell.start) + cellToken(v)! + base.slice(cell.start + cell.token.length)));
    }
  });
});

/** A cell as Excel holds it for the checksum: a value, a formula showing a value, or an error. */
type XCell = { v: unknown; f?: boolean } | { err: string };

/** A cell's token in the block formula's text, formulas included (null: an error value). Cells are never mutated, so it is kept per cell. */
const tokens = new WeakMap<XCell, string | null>();
function xToken(x: XCell): string | null {
  let t = tokens.get(x);
  if (t === undefined) {
    if ("err" in x) t = null;
    else {
      const v = cellToken(x.v);
      if (v === null) throw new Error(`unpredictable ${String(x.v)}`);
      // A formula showing "" is text ("=s"); an empty cell is "".
      t = x.f ? (v === "" ? "=s" : "=" + v) : v;
    }
    tokens.set(x, t);
  }
  return t;
}

/** A row's part of the block formula's text (null: an error value), kept per row array (rows are copied before they change). */
const rowTexts = new WeakMap<XCell[], string | null>();
function rowText(r: XCell[]): string | null {
  let t = rowTexts.get(r);
  if (t === undefined) {
    const parts: string[] = [];
    for (const x of r) {
      const k = xToken(x);
      if (k === null) {
        parts.length = 0;
        break;
      }
      parts.push(k);
    }
    t = parts.length === r.length ? parts.join("|") : null;
    rowTexts.set(r, t);
  }
  return t;
}

/** The block formula's text for cells that may hold formulas or errors (null: the checksum is an error). */
function excelText(g: ChecksGeometry, cells: XCell[][]): string | null {
  const parts: string[] = [];
  for (const r of cells) {
    const t = rowText(r);
    if (t === null) return null;
    parts.push(t);
  }
  return `${g.top + 1}:${g.left + 1}:${cells.length}:${g.width}|${parts.join("|")}`;
}

/** True when an edited block holds what the block held (rows and cells are shared until changed: compared by identity first). */
function holdsTheSame(edited: XCell[][], block: XCell[][]): boolean {
  return edited.every((r, i) => r === block[i] || r.every((x, j) => x === block[i][j] || same(x, block[i][j])));
}

/**
 * Two cells Excel holds alike: an empty value is empty, whether written as null or "", and a number is
 * its 15 significant digits (Excel's precision: no typing makes a difference beyond them, and the
 * checksum, which sums the number's text, does not see one; module comment).
 */
function same(a: XCell, b: XCell): boolean {
  if ("err" in a || "err" in b) return "err" in a && "err" in b && a.err === b.err;
  const empty = (v: unknown) => v === null || v === "";
  const digits = (v: unknown) => (typeof v === "number" ? excelNumberText(v) : v);
  return !!a.f === !!b.f && (a.v === b.v || (empty(a.v) && empty(b.v)) || (typeof a.v === "number" && typeof b.v === "number" && digits(a.v) === digits(b.v)));
}

/** One random edit of a block (`rnd` in [0, 1)): the edited copy. */
function randomEdit(block: XCell[][], rnd: () => number): XCell[][] {
  // Rows and cells shared until changed: a row is copied before a cell of it is replaced, a cell is
  // replaced, never changed (so unchanged rows keep their text, `excelText`).
  const out = [...block];
  const copied = new Set<number>();
  const own = (r: number) => {
    if (!copied.has(r)) {
      out[r] = [...out[r]];
      copied.add(r);
    }
    return out[r];
  };
  const pick = () => {
    const r = Math.floor(rnd() * out.length);
    return [r, Math.floor(rnd() * block[0].length)] as const;
  };
  const set = (r: number, c: number, x: XCell) => void (own(r)[c] = x);
  const printable = () => String.fromCharCode(rnd() < 0.9 ? 32 + Math.floor(rnd() * 95) : 0xa0 + Math.floor(rnd() * 0x2000));
  for (let e = 1 + Math.floor(rnd() * 3); e > 0; e--) {
    const [r, c] = pick();
    const x = out[r][c];
    const v = "v" in x ? x.v : null;
    switch (Math.floor(rnd() * 11)) {
      case 0: { // a character of a text
        if (typeof v !== "string" || v.length === 0) { set(r, c, { v: printable() }); break; }
        const i = Math.floor(rnd() * v.length);
        set(r, c, { v: v.slice(0, i) + printable() + v.slice(i + 1) });
        break;
      }
      case 1: { // a digit of a number, as Excel shows it (15 significant digits: no one types more)
        if (typeof v !== "number") { set(r, c, { v: Math.floor(rnd() * 10_000) }); break; }
        const t = excelNumberText(v)!;
        const i = Math.floor(rnd() * t.length);
        const n = Number(t.slice(0, i) + String(Math.floor(rnd() * 10)) + t.slice(i + 1));
        set(r, c, { v: Number.isFinite(n) ? n : 7 });
        break;
      }
      case 2: { const [r2, c2] = pick(); const a = out[r][c], b = out[r2][c2]; set(r, c, b); set(r2, c2, a); break; } // two cells swapped
      case 3: { // two neighbouring characters swapped
        if (typeof v === "string" && v.length >= 2) { const i = Math.floor(rnd() * (v.length - 1)); set(r, c, { v: v.slice(0, i) + v[i + 1] + v[i] + v.slice(i + 2) }); }
        break;
      }
      case 4: set(r, c, { v: null }); break; // cleared
      case 5: set(r, c, { v, f: true }); break; // a formula showing the same value
      case 6: set(r, c, { err: "#N/A" }); break;
      case 7: set(r, c, { v: Math.floor(rnd() * 100_000) }); break;
      case 8: set(r, c, { v: typeof v === "number" || typeof v === "boolean" ? String(v) : Math.floor(rnd() * 100) }); break; // retyped
      case 9: { const r2 = Math.floor(rnd() * out.length); [out[r], out[r2]] = [out[r2], out[r]]; copied.delete(r); copied.delete(r2); break; } // two rows swapped (a sort)
      default: set(r, c, { v: rnd() < 0.5 ? !v : Math.round(rnd() * 1e6) / 100 }); break;
    }
  }
  return out;
}

describe("property: random edits of 1–3 cells", () => {
  it("1,000,000 edits (characters, digits, swaps, clears, formulas, errors, retypes, sorts): 0 unseen", () => {
    const { g } = benchBlock();
    // A 20-row block of the bench's table: the same cells, a shorter text, so a million edits stay fast.
    const block: XCell[][] = benchBlock().rows.slice(0, 20).map((r) => r.map((v) => ({ v })));
    const baseText = excelText(g, block)!;
    const base = checksumOfText(baseText);
    const rnd = mulberry32(34);
    let edits = 0, unchanged = 0, errors = 0, unseen = 0;
    while (edits < 1_000_000) {
      const edited = randomEdit(block, rnd);
      const text = excelText(g, edited);
      if (holdsTheSame(edited, block)) {
        unchanged++;
        continue;
      }
      edits++;
      if (text === null) {
        errors++; // an error value: the checksum is an error, never equal to a number
        continue;
      }
      if (checksumOfText(text) === base) unseen++;
    }
    console.log(`checksum property test: ${edits.toLocaleString("en-US")} edits (${errors.toLocaleString("en-US")} with an error value), ${unchanged.toLocaleString("en-US")} no-op draws skipped, ${unseen} unseen`);
    expect(unseen).toBe(0);
    expect(errors).toBeLessThan(edits / 2);
  }, 120_000);
});

describe("the model behind the bound", () => {
  it("with the moduli shrunk to 1,009 and 10,007, every class of edit goes unseen about 1/P of the time; a one-character change never", () => {
    const { g } = benchBlock();
    const block: XCell[][] = benchBlock().rows.slice(0, 20).map((r) => r.map((v) => ({ v })));
    const baseText = excelText(g, block)!;
    for (const P of [1_009, 10_007]) {
      for (const k of CHECKSUM_PARAMETERS.sums) {
        const small = { ...k, P };
        const base = sumOfText(baseText, small);
        const rnd = mulberry32(P);
        let n = 0, miss = 0;
        while (n < 30_000) {
          const edited = randomEdit(block, rnd);
          const text = excelText(g, edited);
          if (text === null || holdsTheSame(edited, block)) continue;
          n++;
          if (sumOfText(text, small) === base) miss++;
        }
        // Expected n/P misses (30 at P = 1,009; 3 at 10,007); a structured weight would miss far more often.
        expect([P, miss]).toEqual([P, expect.any(Number)]);
        expect(miss).toBeLessThanOrEqual((3 * n) / P + 10);
        // One character changed: never unseen, whatever P (its weight is not 0 mod P).
        for (let p = 1; p <= 64; p++) {
          const changed = baseText.slice(0, p - 1) + String.fromCharCode(baseText.charCodeAt(p - 1) ^ 1) + baseText.slice(p);
          expect(sumOfText(changed, small)).not.toBe(base);
        }
      }
    }
  });
});

describe("the prediction is Excel's: the block formula evaluated by the emulated host", () => {
  it.each(["en-US", "de-DE", "fr-FR"] as const)("%s: the formula over a block equals the JS side, for the block and 150 random edits of it (formulas and errors included)", (locale: LocaleId) => {
    const { g: big } = benchBlock();
    const rows = benchBlock().rows.slice(0, 6);
    const g: ChecksGeometry = { ...big, rows: rows.length };
    const wb = new Workbook({ currentYear: 2025, locale });
    wb.addSheet(g.sheet);
    const sheet = wb.sheetByName(g.sheet)!;
    const area = { r0: g.top, c0: g.left, r1: g.top + rows.length - 1, c1: g.left + g.width - 1 };
    seed(wb, "Sheet1!A1", [[checksumFormula(g, 0, rows.length)]]);
    const excel = () => inspect(wb, "Sheet1!A1").values[0][0];
    const put = (cells: XCell[][]) => {
      // Text-formatted cells keep strings exactly (as the add-in writes them); formulas go into General cells.
      wb.writeNumberFormat(sheet, area, cells.map((r) => r.map((x) => ("v" in x && !x.f ? "@" : "General"))));
      wb.writeValues(sheet, area, cells.map((r) => r.map((x) => ("err" in x || x.f ? null : x.v === null ? "" : x.v))));
      cells.forEach((r, i) => r.forEach((x, j) => {
        if ("err" in x || x.f) {
          const v = "v" in x ? x.v : null;
          const f = "err" in x ? "=1/0" : typeof v === "string" ? `="${v.replace(/"/g, '""')}"` : v === null ? '=""' : typeof v === "boolean" ? `=${v ? "TRUE" : "FALSE"}` : `=${Number(v)}`;
          wb.writeFormulas(sheet, { r0: area.r0 + i, c0: area.c0 + j, r1: area.r0 + i, c1: area.c0 + j }, [[f]]);
        }
      }));
    };
    const block: XCell[][] = rows.map((r) => r.map((v) => ({ v })));
    put(block);
    expect(excel()).toBe(predictChecksum(g, 0, rows));
    const rnd = mulberry32(7);
    let compared = 0, errors = 0;
    for (let k = 0; k < 150; k++) {
      const edited = randomEdit(block, rnd);
      // Numbers Excel would write in scientific notation are not predicted (the block is read): not drawn here.
      if (edited.some((r) => r.some((x) => "v" in x && typeof x.v === "number" && cellToken(x.v) === null))) continue;
      put(edited);
      const text = excelText(g, edited);
      const got = excel();
      if (text === null) {
        errors++;
        expect(typeof got).toBe("string");
        expect(String(got)).toMatch(/^#/);
      } else {
        compared++;
        expect([k, got]).toEqual([k, checksumOfText(text)]);
      }
    }
    expect(compared).toBeGreaterThan(100);
    expect(errors).toBeGreaterThan(0);
  });
});
