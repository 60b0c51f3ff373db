/**
 * The PPM worksheet functions in the preview (issue #28): formulas typed into the grid are
 * calculated by the emulated host, which calls the functions the add-in registered in its shared
 * runtime; the values are checked against an oracle computed in this process from the export.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { check, checkEqual, E2EFailure, type E2E, type Journey } from "../harness";
import { parseCsvText } from "../../../src/service";
import { PpmClient } from "../../../src/service";
import { applyQuery, parseQuery } from "../../../src/query";
import { asOfText, toExcel } from "../../../src/functions/logic";
import type { Table } from "../../../src/table/model";
import { ACME_TOKEN, openTab } from "./connections";
import { refreshAndSummarise } from "./refresh";
import { openImport } from "./datasets";
import { reopen } from "./openRefresh";

const ROOT = path.resolve(__dirname, "..", "..", "..");

const SHEET = "Formulas";

async function oracle(t: E2E, key: string): Promise<Table> {
  const r = await new PpmClient({ id: "oracle", name: "oracle", baseUrl: t.serviceUrl, token: ACME_TOKEN }).fetchDataset(key, { format: "json", conditional: false });
  if (r.status !== "updated") throw new E2EFailure("no export for the oracle");
  return r.table;
}

/** The cell's value as the grid holds it (`data-value`), once it is no longer #BUSY!. */
async function settledCell(t: E2E, address: string): Promise<{ type: string; value: string; message: string | null }> {
  return t.until(
    `${address} to be calculated`,
    async () => {
      const c = await t.cell(address);
      if (c.value === "#BUSY!" || c.value === "") return null;
      const message = await t.page.locator(`#grid td[data-address="${address}"]`).getAttribute("data-error-message");
      return { type: c.type, value: c.value, message };
    },
    30_000,
  );
}

/** Writes formulas through the preview's Excel (as a paste would), on the formulas sheet. */
async function pasteFormulas(t: E2E, address: string, formulas: string[][]): Promise<void> {
  await t.page.evaluate(
    async ([sheet, a, f]) => {
      type Ctx = { workbook: { worksheets: { getItem(n: string): { getRange(a: string): { formulas: unknown } } } }; sync(): Promise<void> };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): { Excel: { run(fn: (c: Ctx) => Promise<void>): Promise<void> } } | null } }).__ppmPreviewHost?.workbook();
      if (!wb) throw new Error("no workbook");
      await wb.Excel.run(async (ctx) => {
        ctx.workbook.worksheets.getItem(sheet).getRange(a).formulas = f;
        await ctx.sync();
      });
    },
    [SHEET, address, formulas] as const,
  );
}

/** Values of a block as the workbook holds them (spilled cells included), in one round trip. */
async function blockValues(t: E2E, r0: number, c0: number, rows: number, cols: number): Promise<string[][]> {
  return t.page.evaluate(
    ([sheet, r0, c0, rows, cols]) => {
      type Wb = { cell(s: string, r: number, c: number): { value: string } };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
      if (!wb) throw new Error("no workbook");
      const out: string[][] = [];
      for (let r = r0; r < r0 + rows; r++) {
        const row: string[] = [];
        for (let c = c0; c < c0 + cols; c++) row.push(wb.cell(sheet, r, c).value);
        out.push(row);
      }
      return out;
    },
    [SHEET, r0, c0, rows, cols] as const,
  );
}

const asText = (rows: Array<Array<string | number | boolean | null>>): string[][] => rows.map((r) => r.map((v) => (v === null || v === "" ? "" : String(v))));

/** Adds (and activates) or deletes the formulas sheet through the preview's Excel. */
async function sheetOp(t: E2E, op: "add" | "delete"): Promise<void> {
  await t.page.evaluate(
    async ([sheet, what]) => {
      type Sheets = { add(n: string): { activate(): void }; getItem(n: string): { delete(): void } };
      type Ctx = { workbook: { worksheets: Sheets }; sync(): Promise<void> };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): { Excel: { run(fn: (c: Ctx) => Promise<void>): Promise<void> } } | null } }).__ppmPreviewHost?.workbook();
      await wb?.Excel.run(async (ctx) => {
        if (what === "add") ctx.workbook.worksheets.add(sheet).activate();
        else ctx.workbook.worksheets.getItem(sheet).delete();
        await ctx.sync();
      });
    },
    [SHEET, op] as const,
  );
}

async function ensureSheet(t: E2E): Promise<void> {
  const registered = await t.until("the add-in's custom functions to be registered", () =>
    t.frame().evaluate(() => {
      const s = (window as unknown as { __ppmPreviewCustomFunctions?: { namespace: string | null; error: string | null } }).__ppmPreviewCustomFunctions;
      return s && (s.namespace || s.error) ? s : null;
    }),
  );
  checkEqual(registered.namespace, "PPM", `the custom functions' namespace (${registered.error ?? ""})`);
  if ((await t.sheetNames()).includes(SHEET)) {
    await t.openSheet(SHEET);
    return;
  }
  await sheetOp(t, "add");
  await t.until("the formulas sheet", async () => (await t.activeSheet()) === SHEET);
  await allowFormulas(t);
}

/**
 * PPM formulas wait for this device's permission in each document (src/addin/formulaConsent.ts).
 * The preview's workbook is a saved file (an address of its own, kept across Reopen workbook), so
 * this device's answer is remembered for it; in a run it is first asked in this session: the first
 * formula journey of a session sees a probe formula blocked (#N/A, nothing sent, the pane's bar
 * naming the connection and no token), allows, and sees the probe fill without retyping; later
 * journeys find it allowed.
 */
let allowedThisSession = false;

async function allowFormulas(t: E2E): Promise<void> {
  await t.clearRequests();
  await t.typeInCell("Z1", '=PPM.QUERY("projects","$select=project_token&$top=1")');
  const first = await settledCell(t, "Z1");
  if (first.value !== "#N/A") {
    checkEqual(first.value, "project_token", "the probe formula, already allowed");
    // Only an Allow earlier in this run (this page's session, one workbook file) can have allowed it.
    check(allowedThisSession, "PPM formulas ran before this device allowed them in this workbook");
  } else {
    check((first.message ?? "").includes("need your permission on this device"), `the blocked formula's message: ${first.message ?? ""}`);
    const bar = t.id("formula-consent");
    await bar.waitFor();
    const text = await t.id("formula-consent-text").innerText();
    check(text.includes(new URL(t.serviceUrl).host) && !text.includes(ACME_TOKEN), `the question names the environment and no token: ${text}`);
    // Not now hides the bar; another blocked formula brings it back, counting both.
    await t.id("formula-consent-not-now").click();
    await bar.waitFor({ state: "detached" });
    await t.typeInCell("Z3", '=PPM.VALUE("projects","pt_acme_0001","project_token")');
    await bar.waitFor();
    await t.until("the bar to count both waiting formulas", async () => ((await bar.getAttribute("data-waiting")) === "2" ? true : null));
    checkEqual((await t.requests()).filter((r) => r.path.startsWith("/api/")).length, 0, "requests to the service before Allow");
    // The download Allow starts is held back, so what the cells say while it loads can be seen.
    await t.control("delay", { path: "/api/bi/v1/projects", ms: 8000, count: 1 });
    await t.id("formula-consent-allow").click();
    await bar.waitFor({ state: "detached" });
    // While its data loads after Allow, the cell no longer asks for permission (issue #37, item 2):
    // it says it is loading (the add-in cannot make Excel show #BUSY! without recalculating every
    // open workbook, which it never does: issue #34).
    await t.until("Z1 to say it is loading while its data loads after Allow", async () => {
      const c = await t.cell("Z1");
      const message = (await t.page.locator('#grid td[data-address="Z1"]').getAttribute("data-error-message")) ?? "";
      return c.value === "#N/A" && message.startsWith("Loading:") && !message.includes("need your permission") ? true : null;
    });
    await t.until("the blocked probe to fill after Allow", async () => ((await t.cell("Z1")).value === "project_token" ? true : null), 30_000);
    await t.until("the second blocked formula to fill after Allow", async () => ((await t.cell("Z3")).value === "pt_acme_0001" ? true : null), 30_000);
    await t.typeInCell("Z3", "");
    allowedThisSession = true;
    t.note("PPM formulas blocked until Allow: #N/A, 0 requests to the service; the probe filled after Allow without retyping");
  }
  await t.typeInCell("Z1", "");
}

const SUMMARY = "$apply=groupby((fiscal_year),aggregate(budget with sum as total,actual_cost with sum as spent))&$orderby=fiscal_year";

export const formulaValues: Journey = {
  name: "formulas: PPM.VALUE and PPM.QUERY typed into cells equal the export",
  async run(t) {
    await ensureSheet(t);
    await t.typeInCell("A1", '=PPM.VALUE("projects","pt_acme_0001","budget_contingency")');
    await t.typeInCell("A2", '=PPM.VALUE("financials","PRJ-0001|2026|1","budget")');
    await t.typeInCell("A4", `=PPM.QUERY("financials","${SUMMARY}")`);
    // A report header's "as of", typed before the refreshes below (issue #37, item 1).
    await t.typeInCell("G1", '=PPM.ASOF("ppm_financials")');
    const projects = await oracle(t, "projects");
    const financials = await oracle(t, "financials");
    const pc = (n: string) => projects.columns.findIndex((c) => c.name === n);
    const fc = (n: string) => financials.columns.findIndex((c) => c.name === n);
    const p1 = projects.rows.find((r) => r[pc("project_token")] === "pt_acme_0001")!;
    const f1 = financials.rows.find((r) => r[fc("project_id")] === "PRJ-0001" && r[fc("fiscal_year")] === 2026 && r[fc("period_number")] === 1)!;
    checkEqual((await settledCell(t, "A1")).value, String(toExcel(projects.columns[pc("budget_contingency")], p1[pc("budget_contingency")])), "PPM.VALUE(projects, …, budget_contingency)");
    checkEqual((await settledCell(t, "A2")).value, String(f1[fc("budget")]), "PPM.VALUE(financials, composite key, budget)");
    checkEqual((await settledCell(t, "G1")).value, await infoLineAsOf(t, "ppm_financials"), "PPM.ASOF of the imported table, as its info line says");
    await settledCell(t, "A4");
    const want = asText([["fiscal_year", "total", "spent"], ...applyQuery(financials, parseQuery(SUMMARY)).table.rows]);
    checkEqual(await blockValues(t, 3, 0, want.length, 3), want, "PPM.QUERY($apply=groupby…) spilled from A4, header first");
    const spilled = await t.page.locator('#grid td[data-address="B5"]').getAttribute("data-spilled");
    checkEqual(spilled, "true", "B5 shows the spilled array (no formula of its own)");
    await t.screenshot("42-formulas");
  },
};

export const formulaErrors: Journey = {
  name: "formulas: #N/A for a missing key, #VALUE! naming a bad query, the no-connection error, #SPILL!",
  async run(t) {
    await ensureSheet(t);
    await t.typeInCell("E1", '=PPM.VALUE("projects","pt_acme_9999","status")');
    await t.typeInCell("E2", '=PPM.QUERY("financials","$filter=budget gt")');
    await t.typeInCell("E3", '=PPM.VALUE("projects","pt_acme_0001","status","Globex EU")');
    await t.typeInCell("E7", "in the way");
    await t.typeInCell("E6", '=PPM.QUERY("projects","$select=project_token&$top=3")');
    const missing = await settledCell(t, "E1");
    checkEqual([missing.value, missing.message], ["#N/A", 'No row of "projects" has project_token = pt_acme_9999.'], "a missing key");
    const bad = await settledCell(t, "E2");
    checkEqual(bad.value, "#VALUE!", "a bad query");
    check(bad.message !== null && /^Bad query: .*\$filter/.test(bad.message), `the message names the problem (${bad.message})`);
    const none = await settledCell(t, "E3");
    checkEqual([none.value, none.message], ["#N/A", `No connection named "Globex EU" on this device. Open the PPM pane's Connect tab and add one.`], "no connection on this device");
    const spill = await settledCell(t, "E6");
    checkEqual(spill.value, "#SPILL!", "a value in the spill range");
    await t.typeInCell("E7", "");
    await t.until("E6 to spill once E7 is cleared", async () => (await blockValues(t, 5, 4, 4, 1)).flat().join(",") === "project_token,pt_acme_0001,pt_acme_0002,pt_acme_0003");
    const text = await t.page.evaluate(() => (window as unknown as { __ppmPreviewHost?: { workbook(): { serialise(): string } | null } }).__ppmPreviewHost?.workbook()?.serialise() ?? "");
    check(!text.includes(ACME_TOKEN), "no token in the workbook");
  },
};

export const formulaOneRequest: Journey = {
  name: "formulas: 500 PPM.VALUE formulas cost one dataset request, counted at the service",
  async run(t) {
    await ensureSheet(t);
    const table = await oracle(t, "resource_allocations");
    const keys = ["resource_id", "project_token", "fiscal_year", "period_number"].map((k) => table.columns.findIndex((c) => c.name === k));
    const hours = table.columns.findIndex((c) => c.name === "allocated_hours");
    check(hours >= 0, "a numeric column");
    const column = table.columns[hours].name;
    const rows = Array.from({ length: 500 }, (_, i) => table.rows[i % table.rows.length]);
    await t.clearRequests();
    await pasteFormulas(t, "H1:H500", rows.map((r) => [`=PPM.VALUE("resource_allocations","${keys.map((k) => String(r[k])).join("|")}","${column}")`]));
    const want = rows.map((r) => [String(toExcel(table.columns[hours], r[hours]))]);
    await t.until("500 formulas to be calculated", async () => JSON.stringify(await blockValues(t, 0, 7, 500, 1)) === JSON.stringify(want), 60_000);
    const downloads = (await t.requests()).filter((r) => r.method === "GET" && r.path.startsWith("/api/bi/v1/resource_allocations"));
    checkEqual(downloads.length, 1, `dataset requests for 500 formulas (${JSON.stringify(downloads)})`);
  },
};

export const formulaRegeneration: Journey = {
  name: "formulas: after a regeneration, Refresh all updates the formulas through one conditional request",
  async run(t) {
    await ensureSheet(t);
    await settledCell(t, "A4");
    const before = await blockValues(t, 4, 2, 1, 1);
    await t.control("regenerate", { company: "acme", dataset: "financials" });
    await t.clearRequests();
    await openTab(t, "refresh");
    await refreshAndSummarise(t, () => t.id("refresh-all").click());
    const fresh = await oracle(t, "financials");
    const want = asText([["fiscal_year", "total", "spent"], ...applyQuery(fresh, parseQuery(SUMMARY)).table.rows]);
    await t.until("the spilled summary to show the new generation", async () => JSON.stringify(await blockValues(t, 3, 0, want.length, 3)) === JSON.stringify(want), 30_000);
    check(JSON.stringify(await blockValues(t, 4, 2, 1, 1)) !== JSON.stringify(before), "the spent total changed");
    // The "as of" typed before this refresh follows it, as one typed now does (issue #37, item 1).
    const generated = fresh.meta.generatedAt;
    checkEqual(await infoLineAsOf(t, "ppm_financials"), asOfText(generated, null), "the refreshed table's info line");
    await t.until("PPM.ASOF(ppm_financials), typed before the refresh, to show the new generation", async () => ((await t.cell("G1")).value === asOfText(generated, null) ? true : null), 30_000);
    await t.typeInCell("G2", '=PPM.ASOF("financials")');
    checkEqual((await settledCell(t, "G2")).value, asOfText(generated, null), "PPM.ASOF of the dataset, typed after the refresh");
    await t.typeInCell("G2", "");
    const conditional = (await t.requests()).filter((r) => r.method === "GET" && r.path === "/api/bi/v1/financials");
    // The bound table's refresh and the formulas' revalidation: each one conditional request (and the oracle's own).
    check(conditional.length <= 3, `financials requests after the regeneration (${JSON.stringify(conditional)})`);
  },
};

const VIEW = "Top budgets 2026";
const VIEW_QUERY = "$filter=fiscal_year eq 2026&$select=project_id,period_number,budget&$orderby=budget desc&$top=7";

/** Runs the CLI as a user does (`node bin/ppm.js …`), the token in PPM_TOKEN. */
function ppm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, "bin/ppm.js"), ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, PPM_TOKEN: ACME_TOKEN } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

export const savedView: Journey = {
  name: "views: a view saved in the pane, exported to a file and run with ppm export --view gives the pane's rows",
  async run(t) {
    await openImport(t, "financials");
    await t.fill(t.id("query-paste"), VIEW_QUERY);
    await t.fill(t.id("view-name"), VIEW);
    await t.id("view-save").click();
    await t.until("the view to be saved", async () => /^Saved view Top budgets 2026\./.test(await t.id("view-saved").innerText()));
    await t.id("import-close").click();
    const row = t.tp.locator(`[data-testid=view-row][data-name="${VIEW}"]`);
    await t.expectVisible(row, "the saved view in the Datasets tab");

    // Import it as a table, as the pane does.
    const tablesBefore = await tableNames(t);
    await row.getByTestId("view-import").click();
    const name = await t.until("the view's table", async () => (await tableNames(t)).find((n) => !tablesBefore.includes(n)) ?? null, 30_000);
    const place = await t.table(name);
    const cells = await t.sheetValues(place.sheet);
    const paneRows = cells.slice(place.headerRow - 1, place.headerRow + place.dataRows).map((r) => r.slice(place.firstColumn, place.firstColumn + place.columns).map((c) => c.value));

    // Export the views file and run the CLI on it.
    await t.id("views-export").click();
    await t.until("the views file", async () => (await t.inputValue(t.id("views-export-text"))).includes(VIEW));
    const text = await t.inputValue(t.id("views-export-text"));
    check(!text.includes(ACME_TOKEN), "no token in the views file");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-views-"));
    try {
      const file = path.join(dir, "ppm-views.json");
      fs.writeFileSync(file, text);
      const run = await ppm(["export", "--view", VIEW, "--views", file, "--env", t.serviceUrl]);
      checkEqual(run.code, 0, `ppm export --view exit status (${run.stderr})`);
      const cliRows = parseCsvText(run.stdout);
      checkEqual(cliRows, paneRows, "the CLI's rows equal the pane's import of the view");
      checkEqual(paneRows.length, 8, "header and 7 rows");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }

    // And =PPM.VIEW gives the same rows.
    await ensureSheet(t);
    await t.typeInCell("L1", `=PPM.VIEW("${VIEW}")`);
    await settledCell(t, "L1");
    checkEqual(await blockValues(t, 0, 11, 8, 3), paneRows, "=PPM.VIEW spills the view's rows");

    // The preview's workbook is a saved file (issue #37, item 7): reopened, its PPM formulas are
    // still allowed on this device; the question does not come back.
    await reopen(t, false);
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    await t.until("the reopened workbook's formulas to calculate", async () => JSON.stringify(await blockValues(t, 0, 11, 8, 3)) === JSON.stringify(paneRows));
    checkEqual(await t.id("formula-consent").count(), 0, "the formulas' question after Reopen workbook");

    // The last formula journey: the formulas go, so the journeys after it count only their own
    // requests. (The preview's workbook is a saved file: allowed here, they would fetch on reopen.)
    await sheetOp(t, "delete");
    await t.until("the formulas sheet to go", async () => !(await t.sheetNames()).includes(SHEET));
  },
};

/** "as of …" as the table's info line states its generation (`… · generated 2026-01-15 06:00 UTC · …`). */
async function infoLineAsOf(t: E2E, table: string): Promise<string> {
  const place = await t.table(table);
  const cells = await t.sheetValues(place.sheet);
  const info = cells[place.headerRow - 2]?.[place.firstColumn]?.value ?? "";
  const m = /generated (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/.exec(info);
  if (!m) throw new E2EFailure(`no generation time in the info line of ${table}: ${info}`);
  return `as of ${m[1]} UTC`;
}

async function tableNames(t: E2E): Promise<string[]> {
  return t.page.evaluate(() => {
    type Wb = { tables(): Array<{ name: string }> };
    const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
    return wb?.tables().map((x) => x.name) ?? [];
  });
}
