/**
 * Issue #15 journeys: a partial regeneration refreshed as a delta (counts in the pane, a user's
 * format and fill on an unchanged row kept, "Show changes" highlighting exactly the changed cells and
 * added rows, "Clear highlight"), a failed refresh marked stale until the next success, and the
 * refresh log.
 */
import { check, checkEqual, type E2E, type Journey, type TablePlace } from "../harness";
import { openTab } from "./connections";
import { refreshAndSummarise } from "./refresh";

const USER_FORMAT = "0.000";
/** A fill the user gave some rows (Excel's light blue accent). */
const USER_FILL = "#DDEBF7";
/** The highlight's colours (src/refresh/changeRecord.ts). */
const CHANGED = "#FFEB9C";
const ADDED = "#C6EFCE";
/** The financials dataset's key (`$metadata`). */
const KEY = ["project_id", "fiscal_year", "period_number"];

/** Gives a range a fill as a user would (Home › Fill Color), through the preview's Excel. */
async function userFill(t: E2E, sheet: string, address: string, color: string): Promise<void> {
  await t.page.evaluate(
    async ([s, a, c]) => {
      type Ctx = { workbook: { worksheets: { getItem(n: string): { getRange(a: string): { format: { fill: { color: string } } } } } }; sync(): Promise<void> };
      const host = (window as unknown as { __ppmPreviewHost?: { workbook(): { Excel: { run(fn: (c: Ctx) => Promise<void>): Promise<void> } } | null } }).__ppmPreviewHost;
      const wb = host?.workbook();
      if (!wb) throw new Error("no workbook attached to the preview");
      await wb.Excel.run(async (ctx) => {
        ctx.workbook.worksheets.getItem(s).getRange(a).format.fill.color = c;
        await ctx.sync();
      });
    },
    [sheet, address, color] as const,
  );
}

interface BodyCell {
  value: string;
  fill: string | null;
  cfFill: string | null;
}

/** Every body cell of a table (value, own fill, conditional fill) in one round trip, as the grid would draw it. */
async function bodyCells(t: E2E, place: TablePlace): Promise<{ header: string[]; rows: BodyCell[][] }> {
  return t.page.evaluate(
    ([sheet, r0, c0, rows, cols]) => {
      type Wb = { cell(s: string, r: number, c: number): { value: string; fill?: string | null; cfFill?: string | null } };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
      if (!wb) throw new Error("no workbook attached to the preview");
      // No named functions in here: the bundler would wrap them in a helper the page does not have.
      const header: string[] = [];
      for (let c = 0; c < cols; c++) header.push(wb.cell(sheet, r0 - 1, c0 + c).value);
      const body: Array<Array<{ value: string; fill: string | null; cfFill: string | null }>> = [];
      for (let i = 0; i < rows; i++) {
        const row: Array<{ value: string; fill: string | null; cfFill: string | null }> = [];
        for (let c = 0; c < cols; c++) {
          const cell = wb.cell(sheet, r0 + i, c0 + c);
          row.push({ value: cell.value, fill: cell.fill ?? null, cfFill: cell.cfFill ?? null });
        }
        body.push(row);
      }
      return { header, rows: body };
    },
    [place.sheet, place.headerRow, place.firstColumn, place.dataRows, place.columns] as const,
  );
}

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
  name: "delta refresh: partial regeneration → only changed rows written, counts in the pane, a column's number format the same as a full rewrite and a user's fill on an unchanged row kept, Show changes highlights exactly the changed cells and added rows, Clear highlight removes it",
  async run(t) {
    const tableName = await boundTableName(t);
    const place = await t.table(tableName);
    if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);
    const rowsBefore = place.dataRows;
    // A user's number format on the actual_cost cell of the first 20 rows: the table's columns carry
    // the export's number formats, so a delta, like a full rewrite, sets the column's format back
    // (issue #21: a delta leaves every cell as a full rewrite would).
    const actualCost = 6;
    // Rows are identified by all their values (the key is three columns; a changed row differs anyway).
    const before = new Set<string>();
    for (let i = 1; i <= 20; i++) {
      await userFormat(t, place.sheet, place.address(i, actualCost), USER_FORMAT);
      const row = await t.tableRow(place, i);
      before.add(JSON.stringify(row.map((c) => c.value)));
    }
    // And a fill of their own on the same rows' first cell (the highlight must never replace it).
    await userFill(t, place.sheet, `${place.address(1, 0)}:${place.address(20, 0)}`, USER_FILL);
    const old = await bodyCells(t, place);
    const keyCols = KEY.map((k) => old.header.indexOf(k));
    check(keyCols.every((c) => c >= 0), `the key columns ${KEY.join(", ")} are in the table (${old.header.join(", ")})`);
    const keyOf = (row: BodyCell[]) => JSON.stringify(keyCols.map((c) => row[c].value));
    const oldByKey = new Map(old.rows.map((r) => [keyOf(r), r]));
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
    // Every write path sets each column's number format over the whole body in one small operation
    // per column (issue #21), which the emulator counts per cell; values are what a delta saves.
    const formatCells = (rowsBefore + applied.added - applied.removed) * 12;
    const written = (await t.workbookStats()).cellWrites - stats0.cellWrites - formatCells;
    check(written < rowsBefore * 12 / 2, `a delta writes far fewer values than a full rewrite (${written} < ${(rowsBefore * 12) / 2})`);

    // A row whose values did not change has the column's format, as after a full rewrite.
    const after = await t.table(tableName);
    checkEqual(after.dataRows, rowsBefore + applied.added - applied.removed, "rows after the delta");
    const columnFormat = (await t.tableRow(after, after.dataRows))[actualCost].format;
    check(columnFormat !== USER_FORMAT, `the column's own format on the last row (${columnFormat})`);
    let unchanged = 0;
    for (let i = 1; i <= 24 && i <= after.dataRows; i++) {
      const row = await t.tableRow(after, i);
      if (!before.has(JSON.stringify(row.map((c) => c.value)))) continue;
      checkEqual(row[actualCost].format, columnFormat, `the column's format on unchanged row ${i} (${row[0].value}), as a full rewrite leaves it`);
      unchanged++;
    }
    check(unchanged >= 5, `unchanged rows found (${unchanged})`);
    await t.screenshotPane("28-delta-refresh-counts");

    // --- Show changes: nothing is highlighted until asked; then exactly the changed cells (yellow)
    // and the added rows (green), with a legend; a user's fill stays under it; Clear removes it.
    const shown0 = await bodyCells(t, after);
    check(shown0.rows.every((r) => r.every((c) => c.cfFill === null)), "nothing is highlighted before Show changes");
    // Looking at another sheet: Show changes takes the user to the table, selected (issue #25).
    const elsewhere = (await t.sheetNames()).find((n) => n !== after.sheet && !n.startsWith("ppm_"));
    if (elsewhere) await t.openSheet(elsewhere);
    await item.getByTestId("refresh-summary-show-changes").click();
    const legend = item.getByTestId("changes-legend");
    await t.expectVisible(legend, "the legend of the highlight");
    await t.until("the table's sheet to be shown", async () => (await t.activeSheet()) === after.sheet);
    checkEqual(await t.page.getByTestId("preview-name-box").inputValue(), after.address(0, 0), "the table is selected (its top-left cell is the active cell)");
    const legendText = await legend.innerText();
    check(/changed cells \(yellow\)/.test(legendText) && /added rows \(green\)/.test(legendText) && /cleared by the next refresh/.test(legendText), `the legend names both colours and when it ends (${legendText})`);
    const shown = await bodyCells(t, after);
    const addedAt: number[] = [];
    const changedAt: Array<[number, number]> = [];
    for (const [i, row] of shown.rows.entries()) {
      const was = oldByKey.get(keyOf(row));
      const expected = row.map((c, j) => (!was ? ADDED : was[j].value !== c.value ? CHANGED : null));
      checkEqual(row.map((c) => c.cfFill), expected, `highlight of body row ${i + 1} (${keyOf(row)})`);
      if (!was) addedAt.push(i + 1);
      else if (expected.includes(CHANGED)) changedAt.push([i + 1, expected.indexOf(CHANGED)]);
    }
    checkEqual([addedAt.length, changedAt.length], [applied.added, applied.changed], "highlighted rows: added (green) and changed (yellow) = what the regeneration applied");
    // What the grid draws (data-cf-fill), and a user's fill on an unchanged row, kept under the highlight.
    check(addedAt.length > 0 && changedAt.length > 0, "a changed and an added row to look at");
    checkEqual((await t.cell(after.address(addedAt[0], 0))).cfFill, ADDED, "the grid draws an added row green");
    checkEqual((await t.cell(after.address(changedAt[0][0], changedAt[0][1]))).cfFill, CHANGED, "the grid draws a changed cell yellow");
    await t.screenshot("31-show-changes");
    let filled = 0;
    shown.rows.forEach((row) => {
      const was = oldByKey.get(keyOf(row));
      if (!was || was[0].fill !== USER_FILL || row.some((c, j) => c.value !== was[j].value)) return;
      checkEqual([row[0].fill, row[0].cfFill], [USER_FILL, null], `the user's fill on unchanged row ${keyOf(row)}`);
      filled++;
    });
    check(filled >= 5, `unchanged rows with the user's fill found (${filled})`);
    const listed = t.tp.locator(`[data-testid=bound-table][data-table="${tableName}"]`);
    await t.expectVisible(listed.getByTestId("bound-table-clear-changes"), "the bound-tables list offers Clear highlight too");

    await item.getByTestId("refresh-summary-clear-changes").click();
    await t.expectVisible(item.getByTestId("refresh-summary-show-changes"), "Show changes is offered again after Clear highlight");
    await t.until("the legend to go", async () => (await item.getByTestId("changes-legend").count()) === 0);
    const cleared = await bodyCells(t, after);
    check(cleared.rows.every((r) => r.every((c) => c.cfFill === null)), "Clear highlight removes every highlighted cell");
    checkEqual(cleared.rows.map((r) => r.map((c) => c.fill)), shown.rows.map((r) => r.map((c) => c.fill)), "the cells' own fills are exactly as before");
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
