import { check, checkEqual, type E2E, type GridCell, type Journey, type TablePlace } from "../harness";
import { ACME_TOKEN, openTab } from "./connections";
import { runJob } from "./datasets";

const FIELD = "Budget Contingency";
const SPONSOR = "Sponsor";
/** The add-in's mark on cells whose edits were not sent (`src/records/held.ts`). */
const MARK = "#FFC7CE";

const RECORD_HEADERS = (token: string) => ({ "api-auth": "demo-api-auth", "api-token": ACME_TOKEN, "api-secret": "demo-api-secret", "record-token": token });

/** A project record read straight from the service (the oracle), with the demo record credentials. */
async function serviceProject(t: E2E, token: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.serviceUrl}/api/v1/project`, { headers: RECORD_HEADERS(token) });
  if (!res.ok) throw new Error(`oracle GET /api/v1/project: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Someone else changes a record on the service meanwhile (a PUT over HTTP, as another client would). */
async function changeOnService(t: E2E, token: string, customFields: Record<string, string>): Promise<void> {
  const res = await fetch(`${t.serviceUrl}/api/v1/project`, {
    method: "PUT",
    headers: { ...RECORD_HEADERS(token), "Content-Type": "application/json" },
    body: JSON.stringify({ custom_fields: customFields }),
  });
  if (!res.ok) throw new Error(`PUT /api/v1/project: HTTP ${res.status} ${await res.text()}`);
}

/** Imports the projects snapshot from the Snapshots section and chooses its table for write-back. */
async function importForWriteBack(t: E2E): Promise<{ place: TablePlace; fieldCol: number; sponsorCol: number; tokens: string[] }> {
  await openTab(t, "snapshots");
  const row = t.tp.locator('[data-testid=snapshot-row][data-endpoint="projects"]');
  const job = await runJob(t, () => row.getByTestId("snapshot-import").click());
  const place = await t.table(job.table);

  await openTab(t, "records");
  await t.id("records-tab-writeback").click();
  await t.id("records-wb-reload").click();
  const select = t.id("records-wb-table");
  const value = await t.until("the imported table in the write-back list", async () => (await t.options(select)).find((o) => o.label.startsWith(`${job.table} `))?.value ?? null);
  await t.selectOption(select, value);

  const header = await t.tableRow(place, 0);
  const fieldCol = header.findIndex((c) => c.value === FIELD);
  const sponsorCol = header.findIndex((c) => c.value === SPONSOR);
  const tokenCol = header.findIndex((c) => c.value === "project_token");
  check(fieldCol >= 0 && sponsorCol >= 0 && tokenCol >= 0, `the table has ${FIELD}, ${SPONSOR} and project_token columns`);
  const tokens: string[] = [];
  for (let i = 1; i <= 4; i++) tokens.push((await t.cell(place.address(i, tokenCol))).value);
  return { place, fieldCol, sponsorCol, tokens };
}

/** Removes every import record from the workbook (they live on very hidden `ppm_bl_…` sheets, one per table). */
async function forgetImportRecords(t: E2E): Promise<void> {
  await t.page.evaluate(async () => {
    type Sheet = { name: string; getRange(): { clear(): void } };
    type Ctx = { workbook: { worksheets: { items: Sheet[]; load(p: string): void } }; sync(): Promise<void> };
    const host = (window as unknown as { __ppmPreviewHost?: { workbook(): { Excel: { run(fn: (c: Ctx) => Promise<void>): Promise<void> } } | null } }).__ppmPreviewHost;
    const wb = host?.workbook();
    if (!wb) throw new Error("no workbook attached to the preview");
    await wb.Excel.run(async (ctx) => {
      ctx.workbook.worksheets.load("items/name");
      await ctx.sync();
      for (const sheet of ctx.workbook.worksheets.items) if (sheet.name.startsWith("ppm_bl_")) sheet.getRange().clear();
      await ctx.sync();
    });
  });
}

/** Number formats of a column's first `rows` body cells. */
async function columnFormats(t: E2E, place: TablePlace, col: number, rows: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 1; i <= rows; i++) out.push((await t.cell(place.address(i, col))).format);
  return out;
}

const same = (a: GridCell, b: GridCell) => [a.type, a.value, a.format, a.text].join("|") === [b.type, b.value, b.format, b.text].join("|");

/**
 * The whole write-back with valid, invalid and conflicting edits. Row 1: `12,5` (valid). Row 2:
 * `1,234.5` (Excel reads it as a formatted number: invalid). Row 3: a Sponsor edit that someone else
 * changed on the service meanwhile (conflict). Row 4: `2500.75` (valid). Afterwards the unsent cells
 * hold exactly what was typed, marked, and the numeric column keeps its number format.
 */
async function mixedWriteBack(t: E2E, opts: { startEditing: boolean; screenshots: boolean }): Promise<void> {
  const { place, fieldCol, sponsorCol, tokens } = await importForWriteBack(t);
  const [tA, tB, tC, tD] = tokens;
  const rows = 6;
  const formatsBefore = await columnFormats(t, place, fieldCol, rows);
  checkEqual([...new Set(formatsBefore)], ["General"], `${FIELD} is imported as numbers in General`);

  // Start editing is offered only where it is needed (issue #25): not for a table imported with its record.
  check(!(await t.id("records-wb-prepare").isVisible()), "Start editing is not offered for a table imported with its import record");
  if (opts.startEditing) {
    // As if the table had been imported by an older version: no import record.
    await forgetImportRecords(t);
    await t.id("records-wb-reload").click();
    await t.expectVisible(t.id("records-wb-prepare"), "Start editing offered for a table without an import record");
    await t.expectVisible(t.id("records-wb-prepare-note"), "the note saying why");
    await t.id("records-wb-prepare").click();
    await t.attr(t.id("records-wb-status"), "data-state", "ready");
    checkEqual(await columnFormats(t, place, fieldCol, rows), formatsBefore, "Start editing leaves the number format alone");
    checkEqual((await t.cell(place.address(1, fieldCol))).type, "number", "Start editing leaves numbers as numbers");
  }

  // Values differ per run: the journeys share one service, and the first run saved its values.
  const [validA, savedA, validD] = opts.startEditing ? ["7,25", 7.25, "3100.5"] : ["12,5", 12.5, "2500.75"];
  const beforeB = (await serviceProject(t, tB))[FIELD];
  await t.typeInCell(place.address(1, fieldCol), validA);
  await t.typeInCell(place.address(2, fieldCol), "1,234.5");
  await t.typeInCell(place.address(3, sponsorCol), "Walter Skinner");
  await t.typeInCell(place.address(4, fieldCol), validD);
  const otherSponsor = opts.startEditing ? "Monica Reyes (PMO)" : "Monica Reyes";
  await changeOnService(t, tC, { [SPONSOR]: otherSponsor });
  const typedC = await t.cell(place.address(3, sponsorCol));
  const readB = await t.cell(place.address(2, fieldCol));
  checkEqual([readB.type, Number(readB.value), readB.format], ["number", 1234.5, "#,##0.00"], "Excel read 1,234.5 as a formatted number");

  await t.id("records-wb-detect").click();
  await t.attr(t.id("records-wb-status"), "data-state", "preview");
  // The refused number now holds the text Excel showed, as text: the next typing is read as typed (issue #25).
  const typedB = await t.cell(place.address(2, fieldCol));
  checkEqual([typedB.type, typedB.value, typedB.format, typedB.text], ["text", "1,234.50", "@", readB.text], "the refused cell keeps what it showed, as text");
  const change = (token: string) => t.tp.locator(`[data-testid=records-wb-change][data-token="${token}"]`);
  checkEqual(await t.id("records-wb-change").count(), 4, "changed cells in the preview");
  checkEqual(
    [await change(tA).getAttribute("data-validation"), await change(tB).getAttribute("data-validation"), await change(tC).getAttribute("data-validation"), await change(tD).getAttribute("data-validation")],
    ["valid", "invalid", "conflict", "valid"],
    "valid, invalid (1,234.5), conflict, valid",
  );
  // Shown exactly as it will be sent (and, for the refused one, as Excel shows it).
  checkEqual(await change(tA).getByTestId("records-wb-change-new").innerText(), validA, "the valid text as it will be sent");
  checkEqual(await change(tD).getByTestId("records-wb-change-new").innerText(), validD, "the valid number as it will be sent");
  checkEqual(await change(tB).getByTestId("records-wb-change-new").innerText(), "1,234.50", "the refused number as Excel shows it");
  const whyText = await change(tB).getByTestId("records-wb-change-check").innerText();
  const why = whyText.toLowerCase();
  check(why.includes("thousands"), `the rejection says why (${why})`);
  check(/Type 1234\.5 instead\. The cell now holds the text "1,234\.50"/.test(whyText), `the message says what to type, and that the cell now reads typing as typed (${whyText})`);
  check(!whyText.includes("`"), `no literal backticks (${whyText})`);
  const summary = t.id("records-wb-summary");
  checkEqual([await summary.getAttribute("data-valid"), await summary.getAttribute("data-invalid"), await summary.getAttribute("data-conflict")], ["2", "1", "1"], "preview counts");
  if (opts.screenshots) await t.screenshotPane("17-records-preview");

  await t.id("records-wb-confirm").click();
  await t.attr(t.id("records-wb-status"), "data-state", "done", 30_000);
  checkEqual(
    [await change(tA).getAttribute("data-result"), await change(tB).getAttribute("data-result"), await change(tC).getAttribute("data-result"), await change(tD).getAttribute("data-result")],
    ["saved", "not-sent", "not-sent", "saved"],
    "results",
  );
  await t.attr(t.id("records-wb-refresh"), "data-outcome", "updated", 30_000);

  // The service: valid ones saved (normalised), the others untouched, the other person's change kept.
  checkEqual((await serviceProject(t, tA))[FIELD], String(savedA), `${FIELD} of ${tA} saved`);
  checkEqual((await serviceProject(t, tD))[FIELD], validD, `${FIELD} of ${tD} saved`);
  checkEqual((await serviceProject(t, tB))[FIELD], beforeB, `${FIELD} of ${tB} not sent`);
  checkEqual((await serviceProject(t, tC))[SPONSOR], otherSponsor, `${SPONSOR} of ${tC}: the other change kept`);

  // The sheet after the automatic refresh: saved cells show the service's value; unsent cells hold
  // exactly what was typed and are marked; the numeric column keeps its number format.
  const a = await t.cell(place.address(1, fieldCol));
  checkEqual([a.type, Number(a.value), a.format, a.fill], ["number", savedA, "General", null], "the saved cell after the refresh");
  const b = await t.cell(place.address(2, fieldCol));
  check(same(b, typedB), `the invalid cell still holds what was typed (${JSON.stringify(b)} vs ${JSON.stringify(typedB)})`);
  checkEqual(b.fill, MARK, "the invalid cell is marked");
  const c = await t.cell(place.address(3, sponsorCol));
  check(same(c, typedC), `the conflicting cell still holds what was typed (${JSON.stringify(c)})`);
  checkEqual(c.fill, MARK, "the conflicting cell is marked");
  const formatsAfter = await columnFormats(t, place, fieldCol, rows);
  checkEqual(formatsAfter.filter((f, i) => i !== 1), formatsBefore.filter((f, i) => i !== 1), `${FIELD} keeps its number format (except the cell Excel formatted on typing)`);
  checkEqual(await t.id("records-wb-held-list").getAttribute("data-count"), "2", "two unsent edits listed");
  checkEqual(await t.tp.locator(`[data-testid=records-wb-held][data-token="${tC}"]`).getAttribute("data-status"), "conflict", "the conflict is listed as such");
  if (opts.screenshots) await t.screenshot("18-records-saved");

  // Listed again on the next look, until fixed or discarded.
  await t.id("records-wb-detect").click();
  await t.attr(t.id("records-wb-status"), "data-state", "preview");
  checkEqual(await t.id("records-wb-change").count(), 2, "the two unsent edits are still pending");
  checkEqual(await t.id("records-wb-held-list").getAttribute("data-count"), "2", "still listed");

  if (!opts.startEditing) {
    // Retyping the value as the message asks, without touching the number format, is judged as typed.
    await t.typeInCell(place.address(2, fieldCol), "1234.5");
    await t.id("records-wb-detect").click();
    await t.attr(t.id("records-wb-status"), "data-state", "preview");
    checkEqual([await change(tB).getAttribute("data-validation"), await change(tB).getByTestId("records-wb-change-new").innerText()], ["valid", "1234.5"], "the retyped value is valid");

    // Close preview (issue #37, item 12): the list goes, nothing is sent, and the status says the
    // edits are still in the sheet (it no longer asks to check changes no longer listed).
    await t.id("records-wb-cancel").click();
    await t.attr(t.id("records-wb-status"), "data-state", "closed");
    checkEqual(await t.id("records-wb-change").count(), 0, "changes listed after Close preview");
    const closed = await t.id("records-wb-status").innerText();
    check(/nothing was sent\. Your edits are still in the sheet/.test(closed) && !/Check the changes/.test(closed), `the status after Close preview (${closed})`);
    checkEqual((await t.cell(place.address(2, fieldCol))).value, "1234.5", "the edit stays in the sheet");
    check(await t.isDisabled(t.id("records-wb-cancel")), "Close preview is disabled without a preview");
    checkEqual((await serviceProject(t, tB))[FIELD], beforeB, "nothing was sent");
  }

  if (opts.startEditing) {
    // Discard: the service's values, the column's format and the cells' own fills come back.
    // It overwrites what was typed, so it asks first: "Keep my edits" (focused) changes nothing.
    await t.id("records-wb-discard-held").click();
    await t.id("records-wb-discard-dialog").waitFor();
    check(await t.id("records-wb-discard-cancel").evaluate((el) => el === document.activeElement), "the safe choice is focused");
    await t.id("records-wb-discard-cancel").click();
    await t.id("records-wb-discard-dialog").waitFor({ state: "detached" });
    checkEqual(await t.id("records-wb-held-list").getAttribute("data-count"), "2", "still listed after keeping them");
    await t.id("records-wb-discard-held").click();
    await t.id("records-wb-discard-confirm").click();
    await t.attr(t.id("records-wb-status"), "data-state", "discarded");
    const b2 = await t.cell(place.address(2, fieldCol));
    checkEqual([b2.type, b2.value, b2.format, b2.fill], ["number", String(beforeB), "General", null], "the discarded number cell");
    const c2 = await t.cell(place.address(3, sponsorCol));
    checkEqual([c2.value, c2.fill], [otherSponsor, null], "the discarded conflict shows the service's value");
    checkEqual(await columnFormats(t, place, fieldCol, rows), formatsBefore, `${FIELD} keeps its number format after discarding`);
    checkEqual(await t.id("records-wb-held-list").getAttribute("data-count"), "0", "nothing listed any more");
  }
}

/** Issue 13: write-back straight after a plain import (no extra step). */
export const recordsWriteBack: Journey = {
  name: "records: write-back from a plain import mixing valid, invalid (1,234.5) and conflicting edits; unsent cells keep what was typed, marked",
  async run(t) {
    await mixedWriteBack(t, { startEditing: false, screenshots: true });
  },
};

/** Issue 13: the same after "Start editing", then discarding the unsent edits. */
export const recordsWriteBackAfterStart: Journey = {
  name: "records: the same write-back after Start editing, then discard; number formats kept throughout",
  async run(t) {
    await mixedWriteBack(t, { startEditing: true, screenshots: false });
  },
};
