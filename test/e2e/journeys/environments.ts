import { check, checkEqual, type Journey } from "../harness";
import { ACME_TOKEN, connectionItem, fillConnectionForm, openTab, useConnection } from "./connections";
import { datasetRow, openImport, runJob } from "./datasets";

/**
 * A second environment of the same company, side by side with the first: an older feature set
 * without snapshot and record routes (those sections hide themselves instead of failing) and a
 * 10,000-row export whose import keeps the grid responsive (only the rows in view are drawn).
 */
export const secondEnvironment: Journey = {
  name: "environments: a second environment without snapshot routes hides Snapshots; a 10,000-row import, grid stays virtualised",
  async run(t) {
    await openTab(t, "connections");
    await t.id("connection-add").click();
    await fillConnectionForm(t, { name: "Acme (older environment)", baseUrl: t.otherServiceUrl, token: ACME_TOKEN });
    await t.attr(connectionItem(t, "Acme (older environment)"), "data-active", "true");

    await openTab(t, "snapshots");
    await t.id("snapshots-absent").waitFor();
    checkEqual(await t.id("snapshot-row").count(), 0, "snapshot rows offered where the routes are absent");
    await t.screenshotPane("20-snapshots-absent");

    await openTab(t, "datasets");
    await datasetRow(t, "financials").waitFor();
    checkEqual(await datasetRow(t, "financials").getByTestId("dataset-rows").getAttribute("data-count"), "10000", "rows listed");
    await openImport(t, "financials");
    const started = Date.now();
    const job = await runJob(t, () => t.id("import-start").click());
    const importMs = Date.now() - started;
    checkEqual(job.rows, 10_000, "rows imported");
    const place = await t.table(job.table);
    checkEqual(place.dataRows, 10_000, "data rows in the Excel table");
    if ((await t.activeSheet()) !== place.sheet) await t.openSheet(place.sheet);

    const grid = t.page.getByTestId("preview-grid");
    const drawn = Number(await grid.getAttribute("data-drawn-rows"));
    const used = Number(await grid.getAttribute("data-used-rows"));
    check(used >= 10_001, `the grid knows all used rows (${used})`);
    check(drawn > 0 && drawn <= 200, `only the rows in view are drawn (${drawn} of ${used})`);
    // The last data row is reachable through the name box, as in Excel.
    const last = await t.cell(place.address(10_000, 0));
    checkEqual(last.value, `PRJ-${String(Math.floor(9_999 / 12) + 1).padStart(4, "0")}`, `project_id of the last row (${last.address})`);
    t.note(`10,000-row import (fetch + write through the emulator) ${importMs} ms; grid redraw ${await grid.getAttribute("data-render-ms")} ms for ${drawn} drawn rows`);
    await t.screenshot("21-large-import");

    await useConnection(t, "Acme (reference)");
  },
};

/** Records, already opened for the first environment, must hide themselves for one without record routes. */
export const recordsAbsent: Journey = {
  name: "environments: switching to an environment without record routes hides the Records section",
  async run(t) {
    await useConnection(t, "Acme (older environment)");
    try {
      await openTab(t, "records");
      await t.expectVisible(t.id("records-absent"), "the Records section says this environment has no record endpoints");
      checkEqual(await t.id("records-root").count(), 0, "the records module shown where the record routes are absent");
    } finally {
      await useConnection(t, "Acme (reference)");
    }
  },
};
