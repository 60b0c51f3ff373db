/** Import behaviour against the workbook emulator (documented Excel semantics, payload limits, typed input). */
// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import * as path from "path";
import { spawnSync } from "child_process";
import { Workbook, createRequestContext, inspect, seed, serializeWorkbook, loadWorkbook, snapshot } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { readBindings } from "../../src/workbook/bindingStore";
import { finRows, finTable, bindingDraft, imported, rejection, TOKEN, fixedNow, FIN_COLUMNS } from "./helpers";
import type { Table } from "../../src/table/model";

describe("typed cells", () => {
  it("writes an Excel table with text headers, numbers, date serials, booleans and empty cells", async () => {
    const rows = finRows(3);
    rows[1] = [2, null, null, null, null, null, null, null];
    const { wb, result } = await imported(rows);
    expect(result).toMatchObject({ sheetName: "financials (json)", tableName: "ppm_financials", address: "A2:H5", rowCount: 3 });
    const s = snapshot(wb).sheets.find((x) => x.name === "financials (json)")!;
    expect(s.tables.map((t) => [t.name, t.address, t.columns])).toEqual([["ppm_financials", "A2:H5", FIN_COLUMNS.map((c) => c.name)]]);
    const body = inspect(wb, "'financials (json)'!A3:H5");
    expect(body.values[0]).toEqual(["1", "Project 0", 0, 0, 45292, 45361 + 15 / 1440, true, "9007199254740993"]);
    expect(body.valueTypes[0]).toEqual(["String", "String", "Double", "Double", "Double", "Double", "Boolean", "String"]);
    expect(body.numberFormat[0]).toEqual(["@", "@", "#,##0.00", "0", "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss", "General", "@"]);
    expect(body.text[0].slice(4, 6)).toEqual(["2024-01-01", "2024-03-10 00:15:00"]);
    expect(body.valueTypes[1]).toEqual(["String", "Empty", "Empty", "Empty", "Empty", "Empty", "Empty", "Empty"]);
    expect(inspect(wb, "'financials (json)'!A2:H2").numberFormat[0].every((f) => f === "@")).toBe(true);
  });

  it("keeps integers beyond 2^53 and identifier columns exact, parses custom-field decimal strings", async () => {
    const cols = [
      { name: "resource_id", type: "integer" as const },
      { name: "project_token", type: "text" as const },
      { name: "big", type: "integer" as const },
      { name: "Budget", type: "decimal" as const },
    ];
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable([[123, "00042", "12345678901234567890", "12.50"], [7, "x", "1", ""], [8, "y", "2", null]], {}, cols);
    await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow });
    const r = inspect(wb, "'financials (json)'!A3:D5");
    expect(r.values).toEqual([["123", "00042", "12345678901234567890", 12.5], ["7", "x", "1", ""], ["8", "y", "2", ""]]);
    expect(r.valueTypes.map((x) => x[3])).toEqual(["Double", "Empty", "Empty"]);
  });

  it("shows where the data came from, when, and that date-times are UTC, above the table", async () => {
    const { wb } = await imported(finRows(2));
    const info = inspect(wb, "'financials (json)'!A1").values[0][0] as string;
    expect(info).toMatch(/^PPM · dataset financials \(json\) · generated 2026-01-01 00:00 UTC · schema 3 · refreshed 2026-01-01 00:00 UTC · 2 rows · date-times in UTC · source http:\/\/127\.0\.0\.1:4100$/);
  });
});

describe("text stays text", () => {
  const tricky = ["=SUM(A1)", "+1", "-2", "@x", "00123", "1/2", "1E5", "TRUE", "=HYPERLINK(\"http://x\")", "  7 ", "12%", "$5"];

  it("stores formula-, number-, date- and boolean-looking strings exactly, as text", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable(tricky.map((s) => [s]), {}, [{ name: "name", type: "text" }]);
    await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow });
    const r = inspect(wb, `'financials (json)'!A3:A${2 + tricky.length}`);
    expect(r.values.map((x) => x[0])).toEqual(tricky);
    expect(r.formulas.map((x) => x[0])).toEqual(tricky);
    expect(r.valueTypes.every((x) => x[0] === "String")).toBe(true);
  });

  it("(control) the same strings typed into General cells would be parsed by Excel", () => {
    const wb = new Workbook({ currentYear: 2025 });
    seed(wb, "A1:A4", [["00123"], ["1E5"], ["TRUE"], ["1/2"]]);
    expect(inspect(wb, "A1:A4").valueTypes.map((x) => x[0])).toEqual(["Double", "Double", "Boolean", "Double"]);
  });

  it("header names that look like numbers or formulas stay text too", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const cols = [{ name: "1E5", type: "text" as const }, { name: "=x", type: "text" as const }];
    const table = finTable([["a", "b"]], {}, cols);
    await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow });
    expect(inspect(wb, "'financials (json)'!A2:B2").values).toEqual([["1E5", "=x"]]);
  });
});

describe("no day shift in any time zone", () => {
  // Jest's sandbox does not pass TZ changes to the engine, so each zone runs a real import in its own process.
  for (const tz of ["Pacific/Auckland", "America/Los_Angeles"]) {
    it(`writes the same serials under TZ=${tz}`, () => {
      const script = `
        require(${JSON.stringify(path.resolve(__dirname, "../../scripts/officejs.js"))}).installInThisRealm();
        const em = require(${JSON.stringify(path.resolve(__dirname, "../../src/emulator/index.ts"))});
        const { importTable } = require(${JSON.stringify(path.resolve(__dirname, "../../src/workbook/writer.ts"))});
        const h = require(${JSON.stringify(path.resolve(__dirname, "helpers.ts"))});
        const wb = new em.Workbook({ currentYear: 2025 });
        const t = h.finTable([[1, "a", 1, 1, "2024-01-01", "2024-01-01T00:00:00Z", true, "1"], [2, "b", 1, 1, "2024-12-31", "2024-06-30T23:59:59Z", false, "2"], [3, "c", 1, 1, "2000-02-29", "2024-03-31T01:30:00+13:00", true, "3"]]);
        importTable(em.createRequestContext(wb), t, { binding: h.bindingDraft(t), now: h.fixedNow }).then(() => {
          const r = em.inspect(wb, "'financials (json)'!E3:F5");
          console.log(JSON.stringify({ offset: new Date(2024, 0, 15).getTimezoneOffset(), values: r.values, text: r.text }));
        });`;
      const out = spawnSync(process.execPath, ["--require", "tsx/cjs", "-e", script], { env: { ...process.env, TZ: tz }, encoding: "utf8" });
      expect(out.stderr).toBe("");
      const res = JSON.parse(out.stdout) as { offset: number; values: number[][]; text: string[][] };
      expect(res.offset).toBe(tz === "Pacific/Auckland" ? -780 : 480); // the child really ran in that zone
      expect(res.values.map((r) => r[0])).toEqual([45292, 45657, 36585]);
      expect(res.text).toEqual([
        ["2024-01-01", "2024-01-01 00:00:00"],
        ["2024-12-31", "2024-06-30 23:59:59"],
        ["2000-02-29", "2024-03-30 12:30:00"],
      ]);
    });
  }
});

describe("large data in payload-sized blocks", () => {
  it("splits values into blocks under the request limit with few syncs", async () => {
    const limit = 150_000;
    const target = 100_000;
    const { wb, result } = await imported(finRows(5000), { targetRequestBytes: target }, { payloadLimitBytes: limit });
    const st = wb.stats;
    const total = st.requestBytesPerSync.reduce((a, b) => a + b, 0);
    expect(result.blocks).toBeGreaterThan(3);
    expect(st.rejectedSyncs).toBe(0);
    expect(st.maxRequestBytes).toBeLessThanOrEqual(limit);
    // +2: finding the row-fingerprint store and writing it (issue #15, src/workbook/delta.ts); Excel's
    // block checksums (issue #24, src/workbook/checksums.ts) ride along both requests, adding none.
    // +1: the new sheet is added by a request of its own, which reads its id (review of #38, R3).
    expect(st.syncCount).toBeLessThanOrEqual(Math.ceil(total / target) + 7);
    expect(result.syncs).toBe(st.syncCount);
    expect(st.rowsAddCalls).toBe(0);
    // Issue #34: calculation is never suspended (nor the mode switched): the user's mode decides.
    expect(st.suspendCalculationCalls).toBe(0);
    expect(inspect(wb, "'financials (json)'!A5002:B5002").values).toEqual([["5000", "Project 4999"]]);
    expect(wb.calculationMode).toBe("Automatic");
  });

  it("halves and retries a block Excel refuses as too large, losing nothing", async () => {
    const progress: number[] = [];
    const { wb, result } = await imported(finRows(3000), { targetRequestBytes: 1_000_000, onProgress: (n) => progress.push(n) }, { payloadLimitBytes: 150_000 });
    expect(wb.stats.rejectedSyncs).toBeGreaterThan(0);
    expect(result.shrinks).toBe(wb.stats.rejectedSyncs);
    expect(progress.at(-1)).toBe(3000);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const body = inspect(wb, "'financials (json)'!A3:B3002").values;
    expect(body.map((r) => r[0])).toEqual(Array.from({ length: 3000 }, (_, i) => String(i + 1)));
    expect(snapshot(wb).sheets.find((s) => s.name === "financials (json)")!.tables[0].address).toBe("A2:H3002");
  });

  it("fails clearly when a single row is over the limit; the refused requests changed nothing", async () => {
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: 20_000 });
    const table = finTable([[1, "x".repeat(30_000), 1, 1, null, null, null, "1"]]);
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow }));
    expect(err.code).toBe("payload_too_large");
    expect(err.message).toMatch(/Row 1 alone is larger/);
    expect(wb.stats.rejectedSyncs).toBeGreaterThan(0);
    // The sheet the import added (by a request of its own, before the refused ones) holds only the
    // failure's message: no table, no binding, nothing of the row.
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1", "financials (json)"]);
    expect(snapshot(wb).sheets.find((s) => s.name === "financials (json)")!.usedRange?.address).toBe("A1");
    expect(String(inspect(wb, "'financials (json)'!A1").values[0][0])).toMatch(/failed .*payload_too_large.*nothing was kept/);
    expect(snapshot(wb).sheets.flatMap((s) => s.tables)).toEqual([]);
    expect([...wb.settings.entries()]).toEqual([]);
  });

  it("marks a failure after the first block: info says failed, written cells cleared", async () => {
    const wb = new Workbook({ currentYear: 2025, payloadLimitBytes: 20_000 });
    const rows = finRows(400);
    rows[399][1] = "x".repeat(30_000);
    const table = finTable(rows);
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), targetRequestBytes: 15_000, now: fixedNow }));
    expect(err.code).toBe("payload_too_large");
    expect(snapshot(wb).sheets.flatMap((s) => s.tables)).toEqual([]);
    expect(wb.settings.size).toBe(0);
    expect(inspect(wb, "'financials (json)'!A1").values[0][0]).toMatch(/^PPM · ⚠ import of dataset financials \(json\) failed .*\(payload_too_large\).*nothing was kept/);
    expect(inspect(wb, "'financials (json)'!A2:H401").values.flat().every((v) => v === "")).toBe(true);
  });
});

describe("limits and refusals before writing", () => {
  it("refuses more rows than a sheet holds, suggesting a local filter, before any sync", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable([]);
    table.rows = { length: 1_048_576 } as unknown as Table["rows"]; // only the length is read before refusing
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow }));
    expect(err.code).toBe("too_many_rows");
    expect(err.message).toMatch(/local filter/);
    expect(wb.stats.syncCount).toBe(0);
  });

  it("refuses a table that would run off the sheet from a low anchor", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable(finRows(5));
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "A1048572" } }));
    expect(err.code).toBe("too_many_rows");
    expect(wb.stats.syncCount).toBe(0);
  });

  it("refuses to write over occupied cells of a chosen sheet", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    seed(wb, "Sheet1!C4", [["keep me"]]);
    const before = serializeWorkbook(wb);
    const table = finTable(finRows(5));
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "B2" } }));
    expect(err.code).toBe("occupied");
    expect(err.message).toMatch(/C4/);
    expect(serializeWorkbook(wb)).toBe(before);
  });

  it("writes into an empty area of a chosen sheet next to other data", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    seed(wb, "Sheet1!A1", [["other"]]);
    const table = finTable(finRows(2));
    const r = await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), target: { sheetName: "Sheet1", anchor: "C5" }, now: fixedNow });
    expect(r.address).toBe("C6:J8");
    expect(inspect(wb, "Sheet1!A1").values).toEqual([["other"]]);
  });

  it("refuses a 50 MB text value by naming Excel's cell limit, not the request size, before any sync", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const before = serializeWorkbook(wb);
    const table = finTable([[1, "x".repeat(50_000_000), 1, 1, null, null, null, "1"]]);
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: bindingDraft(table), now: fixedNow }));
    expect(err.code).toBe("cell_too_long");
    expect(err.message).toMatch(/Row 1, column "name" holds 50,000,000 characters; an Excel cell holds at most 32,767/);
    expect(err.message).not.toMatch(/request|payload/i);
    expect(wb.stats.syncCount).toBe(0);
    expect(serializeWorkbook(wb)).toBe(before);
  });

  it("accepts a text value of exactly 32,767 characters (the limit itself)", async () => {
    const { wb } = await imported([[1, "y".repeat(32_767), 1, 1, null, null, null, "1"]]);
    expect((inspect(wb, "'financials (json)'!B3").values[0][0] as string).length).toBe(32_767);
  });

  it("rejects an invalid table before writing anything", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const rows = finRows(3);
    rows[2][4] = "2024-13-01";
    const err = await rejection(importTable(createRequestContext(wb), finTable(rows), { binding: bindingDraft(finTable(rows)) }));
    expect(err.code).toBe("invalid_table");
    expect(err.message).toMatch(/Row 3, column "due"/);
    expect(wb.stats.syncCount).toBe(0);
  });
});

describe("cancel mid-write", () => {
  it("stops between blocks, clears what was written and says so; no table, no binding", async () => {
    const ac = new AbortController();
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable(finRows(2000));
    const err = await rejection(
      importTable(createRequestContext(wb), table, {
        binding: bindingDraft(table),
        targetRequestBytes: 50_000,
        signal: ac.signal,
        onProgress: (n) => n >= 400 && ac.abort(),
        now: fixedNow,
      }),
    );
    expect(err.code).toBe("cancelled");
    expect(err.message).toMatch(/Cancelled after [\d,]+ of 2,000 rows/);
    expect(snapshot(wb).sheets.flatMap((s) => s.tables)).toEqual([]);
    expect(wb.settings.size).toBe(0);
    expect(inspect(wb, "'financials (json)'!A1").values[0][0]).toMatch(/⚠ import .* failed .*\(cancelled\).*nothing was kept/);
    expect(inspect(wb, "'financials (json)'!A3:H2002").values.flat().every((v) => v === "")).toBe(true);
    expect(wb.calculationMode).toBe("Automatic");
  });
});

describe("bindings travel with the file and hold no secret", () => {
  it("are readable after save and load, with no token anywhere in the file", async () => {
    const { wb, result } = await imported(finRows(3));
    const file = serializeWorkbook(wb);
    expect(file).not.toContain(TOKEN);
    const reopened = loadWorkbook(file);
    const { bindings, broken } = await readBindings(createRequestContext(reopened));
    expect(broken).toEqual([]);
    expect(bindings).toEqual([result.binding]);
    expect(bindings[0]).toMatchObject({ tableName: "ppm_financials", sheetName: "financials (json)", connectionId: "conn-1", rowCount: 3, companyId: "acme" });
  });

  it("refuses to import when the binding would carry the token, before writing", async () => {
    const wb = new Workbook({ currentYear: 2025 });
    const table = finTable(finRows(2));
    const draft = { ...bindingDraft(table), connectionId: TOKEN };
    const err = await rejection(importTable(createRequestContext(wb), table, { binding: draft, secrets: [TOKEN] }));
    expect(err.message).toMatch(/credential/);
    expect(err.message).not.toContain(TOKEN);
    expect(serializeWorkbook(wb)).not.toContain(TOKEN);
    expect(wb.sheets.map((s) => s.name)).toEqual(["Sheet1"]);
  });

  it("lists a corrupted binding as broken instead of dropping it", async () => {
    const { wb } = await imported(finRows(1));
    wb.settings.set("ppm.binding.bad", JSON.stringify("{oops"));
    const { bindings, broken } = await readBindings(createRequestContext(wb));
    expect(bindings).toHaveLength(1);
    expect(broken).toEqual([{ key: "ppm.binding.bad", code: "binding_invalid", message: expect.stringMatching(/not valid JSON/) }]);
  });

  it("de-duplicates table and sheet names on a second import of the same source", async () => {
    const { wb } = await imported(finRows(1));
    const table = finTable(finRows(1));
    const second = await importTable(createRequestContext(wb), table, { binding: bindingDraft(table, "b2"), now: fixedNow });
    expect([second.tableName, second.sheetName]).toEqual(["ppm_financials_2", "financials (json) 2"]);
  });
});
