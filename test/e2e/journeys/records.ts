import { check, checkEqual, type E2E, type Journey } from "../harness";
import { ACME_TOKEN, openTab } from "./connections";
import { runJob } from "./datasets";

const FIELD = "Budget Contingency";

/** A project record read straight from the service (the oracle), with the demo record credentials. */
async function serviceProject(t: E2E, token: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.serviceUrl}/api/v1/project`, {
    headers: { "api-auth": "demo-api-auth", "api-token": ACME_TOKEN, "api-secret": "demo-api-secret", "record-token": token },
  });
  if (!res.ok) throw new Error(`oracle GET /api/v1/project: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * Issue 7: custom fields edited in the sheet are previewed (one valid, one rejected), the valid one
 * is saved, and the automatic refresh brings the service's value back into the sheet.
 */
export const recordsWriteBack: Journey = {
  name: "records: edit two custom-field cells (valid and 1,234.5), preview, confirm, saved value visible after refresh",
  async run(t) {
    await openTab(t, "snapshots");
    const row = t.tp.locator('[data-testid=snapshot-row][data-endpoint="projects"]');
    const job = await runJob(t, () => row.getByTestId("snapshot-import").click());
    const place = await t.table(job.table);

    await openTab(t, "records");
    await t.id("records-tab-writeback").click();
    const select = t.id("records-wb-table");
    const value = await t.until("the imported table in the write-back list", () =>
      select.evaluate((el, name) => {
        const opt = [...(el as HTMLSelectElement).options].find((o) => o.text.startsWith(`${name} `));
        return opt?.value ?? null;
      }, job.table),
    );
    await select.selectOption(value);
    await t.id("records-wb-prepare").click();
    await t.attr(t.id("records-wb-status"), "data-state", "ready");

    const header = await t.tableRow(place, 0);
    const fieldCol = header.findIndex((c) => c.value === FIELD);
    const tokenCol = header.findIndex((c) => c.value === "project_token");
    check(fieldCol >= 0 && tokenCol >= 0, `the table has ${FIELD} and project_token columns`);
    const tokenA = (await t.cell(place.address(1, tokenCol))).value;
    const tokenB = (await t.cell(place.address(2, tokenCol))).value;
    const beforeB = (await serviceProject(t, tokenB))[FIELD];

    // Typed by the user into the grid, as in Excel.
    await t.typeInCell(place.address(1, fieldCol), "12,5");
    await t.typeInCell(place.address(2, fieldCol), "1,234.5");
    checkEqual((await t.cell(place.address(2, fieldCol))).value, "1,234.5", "the rejected input stays as typed (column switched to text)");

    await t.id("records-wb-detect").click();
    await t.attr(t.id("records-wb-status"), "data-state", "preview");
    const changes = t.id("records-wb-change");
    checkEqual(await changes.count(), 2, "changed cells in the preview");
    const changeA = t.tp.locator(`[data-testid=records-wb-change][data-token="${tokenA}"]`);
    const changeB = t.tp.locator(`[data-testid=records-wb-change][data-token="${tokenB}"]`);
    checkEqual(await changeA.getAttribute("data-validation"), "valid", "12,5 is valid");
    checkEqual(await changeB.getAttribute("data-validation"), "invalid", "1,234.5 is rejected");
    const why = (await changeB.getByTestId("records-wb-change-check").innerText()).toLowerCase();
    check(why.includes("thousands"), `the rejection says why (${why})`);
    const summary = t.id("records-wb-summary");
    checkEqual([await summary.getAttribute("data-valid"), await summary.getAttribute("data-invalid")], ["1", "1"], "preview counts");
    await t.screenshotPane("17-records-preview");

    await t.id("records-wb-confirm").click();
    await t.attr(t.id("records-wb-status"), "data-state", "done", 30_000);
    checkEqual(await changeA.getAttribute("data-result"), "saved", "the valid change was saved");
    checkEqual(await changeB.getAttribute("data-result"), "not-sent", "the invalid change was not sent");
    await t.attr(t.id("records-wb-refresh"), "data-outcome", "updated", 30_000);

    // The service holds the normalised value; the other record is untouched.
    checkEqual((await serviceProject(t, tokenA))[FIELD], "12.5", `${FIELD} saved on the service`);
    checkEqual((await serviceProject(t, tokenB))[FIELD], beforeB, `${FIELD} of the rejected record on the service`);
    // ...and the automatic refresh brought it back into the sheet as a number.
    const cell = await t.cell(place.address(1, fieldCol));
    checkEqual([cell.type, Number(cell.value)], ["number", 12.5], "the saved cell after the refresh");
    await t.screenshot("18-records-saved");
  },
};
