import { check, checkEqual, type E2E, type Journey } from "../harness";
import { openTab } from "./connections";

/** Clicks a refresh button and waits for a NEW summary (the previous one is marked first). */
export async function refreshAndSummarise(
  t: E2E,
  click: () => Promise<void>,
): Promise<{ updated: number; unchanged: number; failed: number; items: Array<{ table: string; outcome: string; reason: string; panel: string | null }>; common: string | null }> {
  const frame = t.frame();
  await frame.evaluate(() => {
    const el = document.querySelector<HTMLElement>('[data-testid="refresh-summary"]');
    if (el) el.dataset.e2eSeen = "1";
  });
  await click();
  return t.until(
    "a refresh summary",
    () =>
      frame.evaluate(() => {
        const el = document.querySelector<HTMLElement>('[data-testid="refresh-summary"]');
        if (!el || el.dataset.e2eSeen === "1" || el.dataset.updated === undefined) return null;
        const items = [...el.querySelectorAll<HTMLElement>('[data-testid="refresh-summary-item"]')].map((li) => ({
          table: li.dataset.table ?? "",
          outcome: li.dataset.outcome ?? "",
          // The table's own reason: after its name, or (a service not reached) in its error panel.
          reason: (li.querySelector('[data-testid="refresh-summary-reason"]')?.textContent ?? "").replace(/^ — /, "") || (li.querySelector('[data-testid="error-message"]')?.textContent ?? ""),
          panel: li.querySelector<HTMLElement>('[data-testid="error-panel"]')?.innerText ?? null,
        }));
        // Every table failed the same way: the run's one message (issue #25).
        const common = el.dataset.common === "true" ? (el.querySelector('[data-testid="error-message"]')?.textContent ?? "") : null;
        return { updated: Number(el.dataset.updated), unchanged: Number(el.dataset.unchanged), failed: Number(el.dataset.failed), items, common };
      }),
    60_000,
  );
}

/** A conditional refresh of an unchanged export rewrites nothing: the service answers 304. */
export const refreshUnchanged: Journey = {
  name: "refresh: all bound tables, unchanged export (304), no cell rewritten",
  async run(t) {
    await openTab(t, "refresh");
    const bound = t.tp.locator("[data-testid=bound-table]");
    await bound.first().waitFor();
    checkEqual(await bound.count(), 1, "bound tables after one import");
    const source = await bound.first().getByTestId("bound-table-source").innerText();
    check(source.includes("financials"), `bound table source names the dataset (${source})`);
    check((await bound.first().getByTestId("bound-table-last-refresh").getAttribute("datetime")) !== null, "last refresh time shown");

    await t.clearRequests();
    const before = await t.workbookStats();
    const summary = await refreshAndSummarise(t, () => t.id("refresh-all").click());
    checkEqual([summary.updated, summary.unchanged, summary.failed], [0, 1, 0], "summary (updated, unchanged, failed)");
    const after = await t.workbookStats();
    checkEqual(after.cellWrites - before.cellWrites, 0, "cells written by an unchanged refresh");
    const exports = (await t.requests()).filter((r) => r.method === "GET" && r.path.startsWith("/api/bi/v1/financials"));
    check(exports.length >= 1 && exports.every((r) => r.status === 304), `the service answered 304 (${JSON.stringify(exports)})`);
    await t.screenshotPane("06-refresh-unchanged");
  },
};

/** After the service generates a new export, refreshing the table under the selection rewrites it in place. */
export const refreshUpdated: Journey = {
  name: "refresh: after regeneration (test hook), refresh under the selection updates values in place",
  async run(t) {
    const tableName = await t.tp.locator("[data-testid=bound-table]").first().getAttribute("data-table");
    check(tableName, "the bound table names its Excel table");
    const place = await t.table(tableName);
    const actualCost = 6; // column index of actual_cost in financials
    const column = async () => {
      const out: string[] = [];
      for (let i = 1; i <= 10; i++) out.push((await t.cell(place.address(i, actualCost))).value);
      return out;
    };
    if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);
    const before = await column();
    await t.control("regenerate", { company: "acme", dataset: "financials" });

    // The selection is inside the bound table: "Refresh selected" refreshes exactly that one.
    await t.goTo(place.address(4, 2));
    const stats0 = await t.workbookStats();
    await openTab(t, "refresh");
    const summary = await refreshAndSummarise(t, () => t.id("refresh-selected").click());
    checkEqual([summary.updated, summary.unchanged, summary.failed], [1, 0, 0], "summary (updated, unchanged, failed)");
    checkEqual(summary.items.map((i) => i.table), [tableName], "the one table refreshed");
    const stats1 = await t.workbookStats();
    check(stats1.cellWrites > stats0.cellWrites, "the update wrote cells");

    checkEqual(await t.activeSheet(), place.sheet, "the refresh stays on the same sheet");
    const after = await column();
    check(JSON.stringify(after) !== JSON.stringify(before), `actual_cost changed after regeneration (${before.join(",")} → ${after.join(",")})`);
    const moved = await t.table(tableName);
    checkEqual([moved.sheet, moved.headerRow, moved.firstColumn, moved.dataRows], [place.sheet, place.headerRow, place.firstColumn, 120], "the table stays where it was");
    checkEqual((await t.cell(place.address(1, 0))).value, "PRJ-0001", "rows stay in order");
    checkEqual((await t.cell(place.address(0, 0))).value, "project_id", "header stays");
    await t.screenshot("07-refresh-updated");
  },
};
