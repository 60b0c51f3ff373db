/**
 * Issue #26, part B: per-refresh rollback storage (hazard 2), the refresh marker and recovery at start
 * (hazard 3), and hidden-sheet slots keyed by binding (hazard 8). Single-client emulator: "another
 * client" is a second request context on the same workbook; a killed runtime is one whose requests
 * stop reaching Excel from its k-th operation on (the emulator's injected lost request), so neither its
 * restore nor its lock release ever lands.
 */
import { Workbook, EmulatedExcelError, createRequestContext, inspect, toWorkbookFile } from "../../src/emulator";
import { refreshTable } from "../../src/workbook/refresh";
import { recoverInterruptedRefreshes, REFRESH_MARKER_PREFIX, ROLLBACK_SHEET_PREFIX } from "../../src/workbook/recovery";
import { readTableLock } from "../../src/workbook/lock";
import { importTable } from "../../src/workbook/writer";
import { readBindings } from "../../src/workbook/bindingStore";
import type { Table } from "../../src/table/model";
import type { Baseline } from "../../src/records/baseline";
import { readBaseline, saveBaseline } from "../../src/workbook/writeback";
import { openRowHashes, storeRowHashes } from "../../src/workbook/delta";
import { rowHashes } from "../../src/refresh/rowHash";
import { bindingDraft, finRows, finTable, fixedNow, TOKEN, keyedSource, twoTables } from "./helpers";

const noQuery = (t: Table) => ({ table: t });
const T0 = Date.parse("2026-02-01T08:00:00Z");
const at = (ms: number) => () => new Date(ms);

const keyed = keyedSource;

/** Every cell of one sheet but the info line (row 1), and that sheet's tables. */
function sheetState(wb: Workbook, sheetName: string): string {
  const f = toWorkbookFile(wb);
  const sheet = f.sheets.find((s) => s.name === sheetName)!;
  return JSON.stringify({ cells: sheet.cells.filter((c) => c.r !== 0), fills: sheet.fills ?? [], tables: f.tables.filter((t) => JSON.stringify(t).includes(sheetName)) });
}

/** What a refresh may leave behind: rollback sheets and refresh markers. */
function leftovers(wb: Workbook): string[] {
  const f = toWorkbookFile(wb);
  return [
    // A table's rollback sheet stays (adding a sheet is a structural change); its copy must be cleared.
    ...f.sheets.filter((s) => (s.name.startsWith(ROLLBACK_SHEET_PREFIX) || s.name === "ppm_rollback") && s.cells.length > 0).map((s) => `copy on ${s.name}`),
    ...Object.keys(settingsOf(wb)).filter((k) => k.startsWith(REFRESH_MARKER_PREFIX)).map((k) => `setting ${k}`),
  ];
}

function settingsOf(wb: Workbook): Record<string, unknown> {
  return Object.fromEntries(toWorkbookFile(wb).settings);
}

describe("hazard 2: each refresh keeps its own rollback copy", () => {
  for (const delta of [false, true]) {
    it(`two tables at the same address on two sheets, refreshed at once, one failing half way: each ends as its own old or new data (${delta ? "delta" : "full rewrite"})`, async () => {
      const { wb, sheetA, sheetB } = await twoTables();
      const oldA = sheetState(wb, sheetA);
      const oldB = sheetState(wb, sheetB);
      // New data for both; for a delta a few changed rows, else every row.
      const nextA = finRows(40, delta ? 0 : 1).map((r, i) => (i % 7 === 0 ? [r[0], `A changed ${i}`, ...r.slice(2)] : r));
      const nextB = finRows(40, delta ? 500 : 501).map((r, i) => (i % 5 === 0 ? [r[0], `B changed ${i}`, ...r.slice(2)] : r));
      // A fails at its second value write into its body, after B has made its copy (a delta falls back
      // to a full rewrite when refused, so for a delta every body write from the second on fails).
      let writesOnA = 0;
      const body = (path: string) => (path.startsWith(`'${sheetA}'!`) || path.startsWith(`${sheetA}!`)) && !path.endsWith("!A1");
      wb.faultInjector = (op) => body(op.path) && op.op === "set values" && (delta ? ++writesOnA >= 2 : ++writesOnA === 2) ? new EmulatedExcelError("InvalidOperation", "injected failure half way") : null;
      const [ra, rb] = await Promise.all([
        // Small requests, so that a full rewrite writes in several blocks.
        refreshTable(createRequestContext(wb), "b1", keyed(nextA), { applyQuery: noQuery, now: at(T0), delta, targetRequestBytes: 2_000 }),
        refreshTable(createRequestContext(wb), "b2", keyed(nextB), { applyQuery: noQuery, now: at(T0), delta, targetRequestBytes: 2_000 }),
      ]);
      wb.faultInjector = null;
      expect(writesOnA).toBeGreaterThanOrEqual(2);
      expect(ra.outcome).toBe("failed");
      expect(ra.failure?.message).toMatch(/previous data was restored/);
      expect(sheetState(wb, sheetA)).toBe(oldA);
      expect(rb.outcome).toBe("updated");
      expect(sheetState(wb, sheetB)).not.toBe(oldB);
      expect(inspect(wb, `'${sheetB}'!A3:B3`).values).toEqual([[String(nextB[0][0]), nextB[0][1]]]);
      expect(leftovers(wb)).toEqual([]);
    });
  }
});

describe("hazard 3: a runtime killed after any k-th Excel operation of a refresh", () => {
  /** Imports a table, then refreshes it with the runtime dying at operation k (0: never). */
  async function killedAt(k: number, delta: boolean) {
    const wb = new Workbook({ currentYear: 2025 });
    const ctx = createRequestContext(wb);
    const base = finRows(30);
    const t = finTable(base);
    const { sheetName } = await importTable(ctx, t, { binding: bindingDraft(t, "b1"), secrets: [TOKEN], now: fixedNow });
    const before = sheetState(wb, sheetName);
    const rows = base.map((r, i) => (i % 4 === 0 ? [r[0], `Renamed ${i}`, ...r.slice(2)] : r));
    if (!delta) rows.push([1000, "New record", 7.5, 3, "2024-05-05", "2024-03-10T09:15:00Z", false, "1"]);
    let n = 0;
    let dead = false;
    /** The operation that wrote the table's body (1-based), in a run that does not die. */
    let bodyWrite = 0;
    wb.faultInjector = (op) => {
      if (k > 0 && ++n >= k) dead = true;
      if (k === 0 && ++n && !bodyWrite && op.op === "set values" && /!A3:H\d+$/.test(op.path)) bodyWrite = n;
      return dead ? new Error("the runtime is gone") : null;
    };
    const report = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: at(T0), delta }).catch(() => null);
    wb.faultInjector = null;
    return { wb, sheetName, before, rows, report, operations: n, bodyWrite };
  }

  for (const delta of [false, true]) {
    it(`the next start restores the table or marks it clearly, clears the leftovers, and the lock frees within its lease (${delta ? "delta" : "full rewrite"}, every k)`, async () => {
      const clean = await killedAt(0, delta);
      expect(clean.report?.outcome).toBe("updated");
      let restored = 0;
      for (let k = 1; k <= clean.operations; k++) {
        const { wb, sheetName, before, rows, report } = await killedAt(k, delta);
        // (A death after the commit leaves the refresh "updated": what follows it is warnings at worst.)
        if (report) expect(["updated", "failed"]).toContain(report.outcome);
        // Within the dead refresh's lease, a start leaves a table another client may be refreshing alone.
        const early = await recoverInterruptedRefreshes(createRequestContext(wb), { now: at(T0 + 60_000) });
        expect(early.every((r) => r.outcome === "skipped")).toBe(true);
        // After the lease (10 minutes from the last renewal) the next start recovers it.
        const late = await recoverInterruptedRefreshes(createRequestContext(wb), { now: at(T0 + 11 * 60_000) });
        expect(late.every((r) => r.outcome === "restored" || r.outcome === "marked")).toBe(true);
        const info = String(inspect(wb, `'${sheetName}'!A1`).values[0][0]);
        expect(info).not.toMatch(/DATA INCOMPLETE/);
        const state = sheetState(wb, sheetName);
        const committed = inspect(wb, `'${sheetName}'!B3`).values[0][0] === rows[0][1] && (await readBindings(createRequestContext(wb))).bindings[0].validators.etag !== '"e1"';
        if (late.some((r) => r.outcome === "restored")) {
          restored++;
          expect(state).toBe(before);
          expect(info).toMatch(/interrupted.*previous data was restored/);
        } else if (late.some((r) => r.outcome === "marked")) {
          expect(info).toMatch(/interrupted.*INCOMPLETE/);
        } else {
          // Died before writing anything to the table, or after its commit.
          expect(state === before || committed).toBe(true);
        }
        expect(leftovers(wb)).toEqual([]);
        // A lock recovery took is released; a dead refresh's lock it found no marker for (the runtime
        // died before its copy) frees a lease after this runtime first saw it (lock.ts).
        const lock = await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0 + 11 * 60_000));
        if (late.length > 0) expect(lock).toBeNull();
        const later = await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0 + 21 * 60_000 + 1));
        expect(later?.holds ?? false).toBe(false);
        // And the table refreshes normally afterwards.
        const again = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: at(T0 + 22 * 60_000), delta });
        expect([k, again.failure?.message ?? "updated"]).toEqual([k, "updated"]);
        expect(inspect(wb, `'${sheetName}'!B3`).values[0][0]).toBe(rows[0][1]);
        expect(leftovers(wb)).toEqual([]);
      }
      expect(restored).toBeGreaterThan(0);
    }, 120_000);
  }

  it("a refresh of the table after the lease recovers the dead refresh first (before reading the table)", async () => {
    const clean = await killedAt(0, false);
    // Die right after the values were written (the operation that follows them in their request).
    expect(clean.bodyWrite).toBeGreaterThan(0);
    const { wb, sheetName, before, rows } = await killedAt(clean.bodyWrite + 1, false);
    expect(String(inspect(wb, `'${sheetName}'!A1`).values[0][0])).toMatch(/DATA INCOMPLETE/);
    expect(leftovers(wb).length).toBeGreaterThan(0);
    expect(sheetState(wb, sheetName)).not.toBe(before);
    // This runtime first sees the dead refresh's lock a minute later; its lease runs out ten minutes after that.
    expect((await readTableLock(createRequestContext(wb), "ppm_financials", new Date(T0 + 60_000)))?.holds).toBe(true);
    const again = await refreshTable(createRequestContext(wb), "b1", keyed(rows), { applyQuery: noQuery, now: at(T0 + 11 * 60_000 + 1), delta: false });
    expect(again.outcome).toBe("updated");
    expect(leftovers(wb)).toEqual([]);
    expect(inspect(wb, `'${sheetName}'!A${3 + rows.length - 1}:B${3 + rows.length - 1}`).values).toEqual([["1000", "New record"]]);
  });
});

describe("hazard 8: hidden-sheet slots are keyed by binding, never 'the first free'", () => {
  const record = (id: string, n: number): Baseline => {
    const rows: Record<string, string> = {};
    for (let i = 0; i < n; i++) rows[`pt_${id}_${i}`] = `h${i}`;
    return { v: 1, bindingId: id, tableName: `ppm_${id}`, capturedAt: "2026-01-01T00:00:00Z", etag: '"x"', tokenColumn: "project_token", columns: ["a"], rows, duplicates: [], rowCount: n, tooLarge: false };
  };

  it("two clients saving write-back records of two tables at once each keep their own", async () => {
    const wb = new Workbook({});
    const a = record("b1", 50), b = record("b2", 70);
    await Promise.all([saveBaseline(createRequestContext(wb), a), saveBaseline(createRequestContext(wb), b)]);
    expect(await readBaseline(createRequestContext(wb), "b1")).toEqual(a);
    expect(await readBaseline(createRequestContext(wb), "b2")).toEqual(b);
    // Saved again at once (both sheets exist now): still each its own.
    const a2 = record("b1", 5), b2 = record("b2", 7);
    await Promise.all([saveBaseline(createRequestContext(wb), a2), saveBaseline(createRequestContext(wb), b2)]);
    expect(await readBaseline(createRequestContext(wb), "b1")).toEqual(a2);
    expect(await readBaseline(createRequestContext(wb), "b2")).toEqual(b2);
  });

  it("a record an earlier version kept on the shared ppm_baselines sheet is read, and moves to the binding's own sheet on the next save", async () => {
    const wb = new Workbook({});
    const ctx = createRequestContext(wb);
    const old = record("b3", 3);
    const sheet = ctx.workbook.worksheets.add("ppm_baselines");
    sheet.getRange("A1:C1").numberFormat = [["@", "@", "@"]];
    sheet.getRange("A1:C1").values = [["b3", "1", JSON.stringify(old)]];
    sheet.visibility = "VeryHidden";
    await ctx.sync();
    expect(await readBaseline(createRequestContext(wb), "b3")).toEqual(old);
    const next = record("b3", 4);
    await saveBaseline(createRequestContext(wb), next);
    expect(await readBaseline(createRequestContext(wb), "b3")).toEqual(next);
    expect(inspect(wb, "ppm_baselines!A1").values[0][0]).toBe("");
  });

  it("two clients storing row fingerprints of two tables at once each keep their own", async () => {
    const wb = new Workbook({});
    const rowsA = finRows(30, 0), rowsB = finRows(45, 9);
    const formats = ["@"];
    await Promise.all([storeRowHashes(createRequestContext(wb), { id: "b1" }, rowHashes(rowsA), formats), storeRowHashes(createRequestContext(wb), { id: "b2" }, rowHashes(rowsB), formats)]);
    expect((await openRowHashes(createRequestContext(wb), "b1"))?.hashes).toEqual(rowHashes(rowsA));
    expect((await openRowHashes(createRequestContext(wb), "b2"))?.hashes).toEqual(rowHashes(rowsB));
  });
});
