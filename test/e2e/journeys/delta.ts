/**
 * Issue #15 journeys: a partial regeneration refreshed as a delta (counts in the pane, a user's
 * format on an unchanged row kept), a failed refresh marked stale until the next success, and the
 * refresh log.
 */
import { check, checkEqual, type E2E, type Journey } from "../harness";
import { openTab } from "./connections";
import { refreshAndSummarise } from "./refresh";

const USER_FORMAT = "0.000";

/** Sets a number format as a user would (Home › Number format), through the preview's Excel. */
async function userFormat(t: E2E, sheet: string, address: string, format: string): Promise<void> {
  await t.page.evaluate(
    async ([s, a, f]) => {
      type Ctx = { workbook: { worksheets: { getItem(n: string): { getRange(a: string): { numberFormat: string[][] } } } }; sync(): Promise<void> };
      const host = (window as unknown as { __ppmPreviewHost?: { workbook(): { Excel: { run(fn: (c: Ctx) => Promise<void>): Promise<void> } } | null } }).__ppmPreviewHost;
      const wb = host?.workbook();
      if (!wb) throw new Error("no workbook attached to the preview");
      await wb.Excel.run(async (ctx) => {
        ctx.workbook.worksheets.getItem(s).getRange(a).numberFormat = [[f]];
        await ctx.sync();
      });
    },
    [sheet, address, format] as const,
  );
}

async function boundTableName(t: E2E): Promise<string> {
  await openTab(t, "refresh");
  const first = t.tp.locator("[data-testid=bound-table][data-table^=ppm_financials]").first();
  await first.waitFor();
  const name = await first.getAttribute("data-table");
  check(name, "a bound financials table");
  return name;
}

export const deltaRefresh: Journey = {
  name: "delta refresh: partial regeneration → only changed rows written, counts in the pane, a user's format on an unchanged row kept",
  async run(t) {
    const tableName = await boundTableName(t);
    const place = await t.table(tableName);
    if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);
    const rowsBefore = place.dataRows;
    // A user's format on the actual_cost cell of the first 20 rows (a full rewrite would reset it).
    const actualCost = 6;
    // Rows are identified by all their values (the key is three columns; a changed row differs anyway).
    const before = new Set<string>();
    for (let i = 1; i <= 20; i++) {
      await userFormat(t, place.sheet, place.address(i, actualCost), USER_FORMAT);
      const row = await t.tableRow(place, i);
      before.add(JSON.stringify(row.map((c) => c.value)));
    }
    const applied = (await t.control("regenerate", { company: "acme", dataset: "financials", changed: 0.05, added: 0.03, removed: 0.03, seed: 15 })) as { changed: number; added: number; removed: number };

    await openTab(t, "refresh");
    const stats0 = await t.workbookStats();
    const summary = await refreshAndSummarise(t, () => t.id("refresh-all").click());
    const item = t.id("refresh-summary").locator(`[data-testid=refresh-summary-item][data-table="${tableName}"]`);
    const counts = item.getByTestId("refresh-summary-counts");
    await counts.waitFor();
    checkEqual(
      [await counts.getAttribute("data-added"), await counts.getAttribute("data-removed"), await counts.getAttribute("data-changed")].map(Number),
      [applied.added, applied.removed, applied.changed],
      "rows added, removed and changed shown in the pane = what the regeneration applied",
    );
    check(summary.updated >= 1, "the table was updated");
    const written = (await t.workbookStats()).cellWrites - stats0.cellWrites;
    check(written < rowsBefore * 12 / 2, `a delta writes far fewer cells than a full rewrite (${written} < ${(rowsBefore * 12) / 2})`);

    // A row whose values did not change keeps the user's format.
    const after = await t.table(tableName);
    checkEqual(after.dataRows, rowsBefore + applied.added - applied.removed, "rows after the delta");
    let kept = 0;
    for (let i = 1; i <= 24 && i <= after.dataRows; i++) {
      const row = await t.tableRow(after, i);
      if (!before.has(JSON.stringify(row.map((c) => c.value)))) continue;
      checkEqual(row[actualCost].format, USER_FORMAT, `the user's format on unchanged row ${i} (${row[0].value})`);
      kept++;
    }
    check(kept >= 5, `unchanged rows with the user's format found (${kept})`);
    await t.screenshotPane("28-delta-refresh-counts");
  },
};

export const staleMark: Journey = {
  name: "stale mark: a refresh that fails (503) marks the info line and the Refresh tab; the next success clears it",
  async run(t) {
    const tableName = await boundTableName(t);
    const place = await t.table(tableName);
    const infoAddress = place.address(-1, 0);
    await t.control("regenerate", { company: "acme", dataset: "financials", changed: 0.02, seed: 16 });
    // More 503s than the client's retries (2): this refresh fails.
    await t.control("fault", { path: "/api/bi/v1/financials*", status: 503, count: 6, retryAfter: 0 });
    try {
      const failed = await refreshAndSummarise(t, () => t.id("refresh-all").click());
      check(failed.items.some((i) => i.table === tableName && i.outcome === "failed"), `the table failed (${JSON.stringify(failed)})`);
      if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);
      const info = (await t.cell(infoAddress)).value;
      check(/^PPM · ⚠ Not refreshed: .+, \d{4}-\d\d-\d\d \d\d:\d\d UTC · dataset financials .* generated .* refreshed /.test(info), `the info line starts with the stale mark (${info})`);
      await t.id("bound-tables-reload").click();
      const stale = t.tp.locator(`[data-testid=bound-table][data-table="${tableName}"]`).getByTestId("bound-table-stale");
      await t.expectVisible(stale, "the Refresh tab lists the table as stale");
      await t.screenshotPane("29-refresh-stale");
    } finally {
      await t.control("fault", { path: "/api/bi/v1/financials*", status: 503, count: 0 });
    }
    const ok = await refreshAndSummarise(t, () => t.id("refresh-all").click());
    check(ok.items.some((i) => i.table === tableName && i.outcome === "updated"), `the next refresh succeeded (${JSON.stringify(ok)})`);
    const info = (await t.cell(infoAddress)).value;
    check(info.startsWith("PPM · dataset financials") && !info.includes("Not refreshed"), `the stale mark is gone (${info})`);
    await t.id("bound-tables-reload").click();
    await t.until("the stale flag to go", async () => (await t.tp.locator(`[data-testid=bound-table][data-table="${tableName}"] [data-testid=bound-table-stale]`).count()) === 0);
  },
};

export const refreshLog: Journey = {
  name: "refresh log: the Refresh tab lists the last refreshes with outcome, counts and bytes downloaded",
  async run(t) {
    await openTab(t, "refresh");
    // Nothing regenerated since the last refresh: this one is a 304, logged as unchanged.
    const again = await refreshAndSummarise(t, () => t.id("refresh-all").click());
    check(again.unchanged >= 1, `an unchanged refresh (${JSON.stringify(again)})`);
    await t.id("refresh-log-open").click();
    const entries = t.tp.locator("[data-testid=refresh-log-entry]");
    await entries.first().waitFor();
    const outcomes = await entries.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.outcome ?? ""));
    check(outcomes.includes("updated") && outcomes.includes("failed") && outcomes.includes("unchanged"), `updated, failed and unchanged refreshes are listed (${outcomes.join(", ")})`);
    const text = await t.id("refresh-log").innerText();
    check(text.includes("updated (delta)"), "a delta refresh is shown as such");
    check(!text.includes("demo-acme-token"), "no token in the log");
    const bytes = await entries.evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.outcome ?? "", e.querySelector("[data-testid=refresh-log-bytes]")?.textContent ?? ""]));
    check(bytes.some(([o, b]) => o === "updated" && /^[\d.,]+ (KB|MB)$/.test(b)), `an updated refresh shows the bytes it downloaded (${JSON.stringify(bytes)})`);
    check(bytes.some(([o, b]) => o === "unchanged" && b === "0 B"), `an unchanged refresh downloaded nothing (${JSON.stringify(bytes)})`);
    await t.screenshotPane("30-refresh-log");
  },
};
