/**
 * Issue #34, item 2: the delta's budget in a comma-decimal Excel. The same 2,000 × 12 scenario as
 * `budgets.test.ts` (bench/deltaScenario.ts: 1 % changed, 0.1 % added, 0.1 % removed) in workbooks
 * open in de-DE and fr-FR Excel (the host's locale profiles, src/emulator/locales.ts: numbers in text
 * with a decimal comma, WAHR/VRAI). The block checksums sum a locale-independent text, so the delta
 * reads no block of the table there either: only the gathered rows of the changed records, exactly
 * the bytes of the en-US run. Seen failing with the checksum before #34 (numbers summed as Excel wrote
 * them): every block holding a decimal or a date-time was read back in de-DE and fr-FR.
 */
import { Workbook, createRequestContext, type LocaleId } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { draftBinding } from "../../src/refresh/binding";
import { COLUMNS, onePercentChanged, row, sourceOf, tableMaker } from "../../bench/deltaScenario";

const ROWS = 2_000;
const sum = (a: readonly number[]) => a.reduce((x, y) => x + y, 0);

/** The 1 % delta in a workbook open in `locale`: its strategy, bytes, and every read of the table's body. */
async function deltaIn(locale: LocaleId) {
  const table = tableMaker();
  const wb = new Workbook({ currentYear: 2025, locale });
  const ctx = createRequestContext(wb);
  await importTable(ctx, table(Array.from({ length: ROWS }, (_, i) => row(i + 1, 0))), {
    binding: draftBinding({ id: "budget", connectionId: "c", environment: "http://127.0.0.1:1", companyId: "acme", source: { kind: "dataset", key: "financials", format: "json" }, columns: COLUMNS, schemaVersion: "1", validators: {} }),
  });
  const gen1 = Array.from({ length: ROWS }, (_, i) => row(i + 1, 1));
  expect((await refreshTable(ctx, "budget", sourceOf(table(gen1)), { delta: true })).outcome).toBe("updated");
  const bodyReads: string[] = [];
  wb.faultInjector = (op) => {
    // A load of the table's own sheet below its header: a block read back.
    const m = /^'financials \(json\)'!A(\d+)(?::[A-Z]+(\d+))?$/.exec(op.path);
    if (op.op === "load" && m && Number(m[1]) >= 3) bodyReads.push(op.path);
    return null;
  };
  const before = { res: sum(wb.stats.responseBytesPerSync), req: sum(wb.stats.requestBytesPerSync), syncs: wb.stats.responseBytesPerSync.length };
  const r = await refreshTable(ctx, "budget", sourceOf(table(onePercentChanged(gen1, ROWS + 1))), { delta: true });
  wb.faultInjector = null;
  return {
    strategy: r.delta?.strategy,
    bodyReads,
    responseBytes: sum(wb.stats.responseBytesPerSync) - before.res,
    requestBytes: sum(wb.stats.requestBytesPerSync) - before.req,
    syncs: wb.stats.responseBytesPerSync.length - before.syncs,
  };
}

describe("a 1 % delta in a comma-decimal Excel reads no unchanged block (bytes as in en-US)", () => {
  let enUS: Awaited<ReturnType<typeof deltaIn>>;
  beforeAll(async () => {
    enUS = await deltaIn("en-US");
  }, 120_000);

  it("en-US, for reference: a delta that reads no block of the table", () => {
    expect(enUS.strategy).toBe("delta");
    expect(enUS.bodyReads).toEqual([]);
  });

  it.each(["de-DE", "fr-FR"] as const)("%s: a delta, no block of the table read, the en-US bytes", async (locale) => {
    const got = await deltaIn(locale);
    expect(got.strategy).toBe("delta");
    expect(got.bodyReads).toEqual([]);
    // The info line's times and the binding's timestamps move a few bytes between runs (budgets.test.ts),
    // and a run slowed by a busy machine checks and renews the table lock more often (src/workbook/lock.ts:
    // CHECK_FRESH_MS; CI, 2026-11-30: 96 bytes more in one run; a clock made slow in a script added 10
    // syncs of ~390 bytes each): 256 bytes, and 512 more per extra sync. A block of the table read back
    // would be kilobytes in one sync, and `bodyReads` above names any.
    const slack = 256 + 512 * Math.abs(got.syncs - enUS.syncs);
    expect(Math.abs(got.responseBytes - enUS.responseBytes)).toBeLessThanOrEqual(slack);
    expect(Math.abs(got.requestBytes - enUS.requestBytes)).toBeLessThanOrEqual(slack + 512 * Math.abs(got.syncs - enUS.syncs));
  }, 120_000);
});
