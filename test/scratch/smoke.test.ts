import { Workbook, createExcelNamespace, createRequestContext, inspect } from "../../src/emulator";

test("smoke", async () => {
  const wb = new Workbook({ currentYear: 2025 });
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const ws = context.workbook.worksheets.getItem("Sheet1");
    const r = ws.getRange("A1:B2");
    r.values = [[1, "a"], ["=A1+1", "2025-01-31"]];
    r.load("address, values, numberFormat");
    await context.sync();
    expect(r.address).toBe("Sheet1!A1:B2");
    expect(r.values).toEqual([[1, "a"], [2, 45688]]);
    const t = ws.tables.add("A1:B2", true);
    t.load("name");
    const missing = context.workbook.tables.getItemOrNullObject("Nope");
    await context.sync();
    expect(t.name).toBe("Table1");
    expect(missing.isNullObject).toBe(true);
    r.values = [[1, 2], [3, 4]];
    await context.sync();
    expect(() => r.text).toThrow(/not available|load/);
  });
  expect(inspect(wb, "A2:B2").values).toEqual([[3, 4]]);
  const context = createRequestContext(wb);
  const big = context.workbook.worksheets.getItem("Sheet1").getRange("D1:F1000");
  big.values = Array.from({ length: 1000 }, (_, i) => [i, `x${i}`, i * 2]);
  await context.sync();
  big.load("rowCount");
  await context.sync();
  expect(big.rowCount).toBe(1000);
  expect(inspect(wb, "E1000").values).toEqual([["x999"]]);
  console.log(wb.stats.requestBytesPerSync, wb.stats.responseBytesPerSync);
  const err = await (async () => { try { await Excel.run(async (ctx) => { ctx.workbook.worksheets.getItem("Nope").load("name"); await ctx.sync(); }); } catch (e) { return e as { code: string; debugInfo: unknown; message: string }; } })();
  console.log(err?.code, err?.message, JSON.stringify(err?.debugInfo));
});
