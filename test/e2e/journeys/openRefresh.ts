import { check, checkEqual, type E2E, type Journey, type RequestLogEntry } from "../harness";
import { openTab, useConnection } from "./connections";
import { openImport, runJob } from "./datasets";

/**
 * Refresh on open with the shared runtime (issue 17). The preview's "Reopen workbook" saves the
 * emulated workbook and opens the saved file in a new session: the task pane frame (the shared
 * runtime) is reloaded, and its code starts at once, pane hidden, only when the document's startup
 * behaviour is "Load" (`Office.addin.setStartupBehavior`).
 */

/** The task pane's bound tables: name, binding id, flag. */
export async function boundTables(t: E2E): Promise<Array<{ table: string; id: string; flagged: boolean; failure: string | null }>> {
  await openTab(t, "refresh");
  await t.tp.locator("[data-testid=bound-table]").first().waitFor();
  return t.frame().evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('[data-testid="bound-table"]')].map((li) => ({
      table: li.dataset.table ?? "",
      id: li.dataset.bindingId ?? "",
      flagged: li.querySelector<HTMLInputElement>('[data-testid="bound-table-open-refresh"]')?.checked ?? false,
      failure: li.querySelector('[data-testid="bound-table-failure"]')?.textContent ?? null,
    })),
  );
}

/** Ticks or clears "Refresh when this workbook opens" of one table and waits until it is stored. */
export async function setFlag(t: E2E, table: string, on: boolean): Promise<void> {
  await openTab(t, "refresh");
  const box = t.tp.locator(`[data-testid=bound-table][data-table="${table}"] [data-testid=bound-table-open-refresh]`);
  await box.waitFor();
  if ((await t.isChecked(box)) !== on) await box.click();
  await t.attr(box, "data-saved", String(on));
}

export async function runtimeState(t: E2E): Promise<{ started: string; startup: string; device: string; shared: string }> {
  return t.page.getByTestId("preview-runtime").evaluate((el: HTMLElement) => ({
    started: el.dataset.started ?? "",
    startup: el.dataset.startup ?? "",
    device: el.dataset.device ?? "",
    shared: el.dataset.shared ?? "",
  }));
}

/** Reopens the saved workbook (on this device or another) and waits for the new session's frame. */
export async function reopen(t: E2E, otherDevice: boolean): Promise<void> {
  const tablesIn = () =>
    t.page.evaluate(() => {
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): { tables(): Array<{ name: string }> } | null } }).__ppmPreviewHost?.workbook();
      return wb ? wb.tables().map((x) => x.name).sort() : null;
    });
  const before = await tablesIn();
  const session = await t.page.evaluate(() => Number(document.body.dataset.session ?? "0"));
  await t.page.getByTestId(otherDevice ? "preview-reopen-other-device" : "preview-reopen").click();
  await t.until("the workbook to be reopened", () => t.page.evaluate((s) => Number(document.body.dataset.session ?? "0") > s, session));
  const after = await t.until("the reopened workbook in the grid", () => tablesIn());
  checkEqual(after, before, "the reopened workbook has the saved tables");
}

/** The outcome line of the refresh on open, read from the (possibly hidden) pane. */
export async function openOutcome(t: E2E): Promise<{ state: string; updated: number; unchanged: number; failed: number }> {
  return t.until(
    "the refresh on open to finish",
    () =>
      t.page.frame({ name: "taskpane" })?.evaluate(() => {
        const el = document.querySelector<HTMLElement>('[data-testid="open-refresh-summary"]');
        if (!el) return null;
        return { state: el.dataset.state ?? "", updated: Number(el.dataset.updated), unchanged: Number(el.dataset.unchanged), failed: Number(el.dataset.failed) };
      }) ?? null,
    60_000,
  );
}

const exportsTo = (log: RequestLogEntry[], path: string) => log.filter((r) => r.method === "GET" && r.path === path);

export const reopenRefreshesFlaggedTables: Journey = {
  name: "reopen: tables set to refresh when the workbook opens refresh themselves after regeneration; the others do not (one conditional request each)",
  async run(t) {
    check((await runtimeState(t)).shared === "true", "the preview runs one shared runtime");
    // The pane and the ribbon commands share one runtime: the ribbon's commands run in the pane's frame.
    await useConnection(t, "Acme (reference)");
    // Two more tables from the demo service: one to flag, one to leave alone.
    await openImport(t, "projects");
    const projects = await runJob(t, () => t.id("import-start").click());
    await openImport(t, "resource_allocations");
    const allocations = await runJob(t, () => t.id("import-start").click());
    const tables = await boundTables(t);
    const financials = tables.find((x) => x.table === "ppm_financials");
    check(financials, `the financials table is bound (${tables.map((x) => x.table).join(", ")})`);
    check(tables.every((x) => !x.flagged), "no table refreshes on open by default");

    checkEqual((await runtimeState(t)).startup, "None", "startup behaviour before any table is flagged");
    await setFlag(t, "ppm_financials", true);
    await t.until("startup behaviour load after the first flag", async () => (await runtimeState(t)).startup === "Load");
    await setFlag(t, projects.table, true);
    await t.screenshotPane("23-refresh-on-open");

    // The service generates new exports of a flagged and of an unflagged table; then the file is reopened.
    const fin = await t.table("ppm_financials");
    const alloc = await t.table(allocations.table);
    const cellsOf = async (place: typeof fin, column: number) => {
      if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);
      const out: string[] = [];
      for (let i = 1; i <= 8; i++) out.push((await t.cell(place.address(i, column))).value);
      return out;
    };
    const finBefore = await cellsOf(fin, 6);
    const allocBefore = await cellsOf(alloc, alloc.columns - 1);
    await t.control("regenerate", { company: "acme", dataset: "financials" });
    await t.control("regenerate", { company: "acme", dataset: "resource_allocations" });
    await t.clearRequests();

    await reopen(t, false);
    const state = await runtimeState(t);
    check(state.started === "true", "the document's startup behaviour started the add-in with it");
    check(!(await t.page.locator("#taskpane").isVisible()), "the task pane stays hidden (Load shows no UI)");
    const outcome = await openOutcome(t);
    checkEqual([outcome.state, outcome.updated, outcome.unchanged, outcome.failed], ["done", 1, 1, 0], "refresh on open (state, updated, unchanged, failed)");

    const log = await t.requests();
    const finReq = exportsTo(log, "/api/bi/v1/financials");
    const projReq = exportsTo(log, "/api/bi/v1/projects");
    const allocReq = exportsTo(log, "/api/bi/v1/resource_allocations");
    checkEqual(finReq.map((r) => r.status), [200], "financials (flagged, regenerated): one conditional request, new data");
    checkEqual(projReq.map((r) => r.status), [304], "projects (flagged, unchanged): one conditional request, 304");
    checkEqual(allocReq.length, 0, "resource_allocations (not flagged): no request");
    // Every export or snapshot read on open is one of those two (the hidden pane itself reads the
    // manifest for its dataset list; an updated dataset's row key comes from `$metadata`, read once
    // per session for a delta refresh, issue #15; CORS preflights are the browser's).
    const isData = (r: RequestLogEntry) =>
      r.method === "GET" && r.path !== "/api/bi/v1/manifest" && r.path !== "/api/bi/odata/v1/$metadata" && (r.path.startsWith("/api/bi/") || r.path.startsWith("/api/snapshot/"));
    const others = log.filter((r) => isData(r) && ![finReq, projReq].flat().includes(r));
    checkEqual(others.map((r) => `${r.method} ${r.path}`), [], "no other export or snapshot request on open");
    t.note(`refresh on open: ${log.filter(isData).length} data requests for 2 flagged tables (${log.filter((r) => r.path.startsWith("/api/")).length} service requests in all, preflights and the pane's manifest included)`);

    check(JSON.stringify(await cellsOf(fin, 6)) !== JSON.stringify(finBefore), "financials (flagged) shows the regenerated export");
    checkEqual(await cellsOf(await t.table(allocations.table), alloc.columns - 1), allocBefore, "resource_allocations (not flagged) is untouched");

    // Opening the pane shows the outcome as a quiet line, not a dialog.
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    await t.expectVisible(t.id("open-refresh-summary"), "the refresh-on-open line in the pane");
    checkEqual(await t.page.getByTestId("preview-dialog").count(), 0, "no dialog");
    // It reports something past: the next section the user opens no longer shows it (issue #25).
    const after = await boundTables(t);
    checkEqual(await t.id("open-refresh-summary").count(), 0, "the refresh-on-open line goes when the user opens another section");
    checkEqual(after.filter((x) => x.flagged).map((x) => x.table).sort(), ["ppm_financials", projects.table].sort(), "the flags travelled with the workbook");
  },
};

export const reopenWithoutConnection: Journey = {
  name: "reopen: on a device without a connection, one quiet note instead of an error per table",
  async run(t) {
    const flagged = (await boundTables(t)).filter((x) => x.flagged);
    check(flagged.length >= 1, "tables set to refresh on open (from the previous journey)");
    await t.clearRequests();
    await reopen(t, true);
    const state = await runtimeState(t);
    checkEqual([state.device, state.started], ["other", "true"], "another device; the document loads the add-in");
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    const note = t.id("open-refresh-note");
    await t.expectVisible(note, "the note about the missing connection", 30_000);
    checkEqual(await note.count(), 1, "one note");
    checkEqual(await note.getAttribute("data-tables"), String(flagged.length), "the note covers every flagged table");
    const text = await note.innerText();
    check(text.includes("no connection for") && text.includes("company acme"), `the note names the environment and company (${text})`);
    checkEqual(await t.id("error-panel").count(), 0, "no error panel");
    checkEqual((await t.requests()).filter((r) => r.path.startsWith("/api/")).length, 0, "nothing was requested");
    await t.screenshotPane("24-open-without-connection");
    const tables = await boundTables(t);
    checkEqual(tables.filter((x) => x.failure !== null).map((x) => x.table), [], "no table was marked failed for a missing connection");

    // Back on this device; clearing the last flag stops the add-in from loading with the document.
    await reopen(t, false);
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    await openOutcome(t);
    for (const f of flagged) await setFlag(t, f.table, false);
    await t.until("startup behaviour back to none after the last flag", async () => (await runtimeState(t)).startup === "None");
  },
};
