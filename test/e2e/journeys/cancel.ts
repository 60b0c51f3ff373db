import { check, checkEqual, type Journey } from "../harness";
import { useConnection } from "./connections";
import { openImport, runJob } from "./datasets";

/** A long import shows progress and can be cancelled; nothing half-written stays in the workbook. */
export const cancelImport: Journey = {
  name: "import: a slow export shows progress with Cancel; cancelling leaves the workbook as it was",
  async run(t) {
    // The service holds the export back long enough for a person (or this test) to press Cancel.
    await t.control("delay", { path: "/api/bi/v1/financials", ms: 30_000, count: 1 });
    try {
      const sheetsBefore = await t.sheetNames();
      const writesBefore = (await t.workbookStats()).cellWrites;
      await openImport(t, "financials");
      await t.fill(t.id("query-paste"), "");
      await runJob(
        t,
        async () => {
          await t.id("import-start").click();
          const progress = t.id("progress");
          await progress.waitFor();
          checkEqual(await progress.getAttribute("data-job"), "import", "progress job kind");
          await t.screenshotPane("16-import-progress");
          await t.id("progress-cancel").click();
        },
        "cancelled",
      );
      await t.id("progress").waitFor({ state: "detached" });
      checkEqual(await t.sheetNames(), sheetsBefore, "sheets after a cancelled import");
      checkEqual((await t.workbookStats()).cellWrites, writesBefore, "cells written by a cancelled import");
    } finally {
      await t.control("delay", { path: "/api/bi/v1/financials", ms: 0 });
    }
  },
};

/** Cancelling while rows are streaming in: the progress counts rows, and still nothing is written. */
export const cancelWhileStreaming: Journey = {
  name: "import: cancel a 10,000-row import while rows stream in (row count shown), nothing written",
  async run(t) {
    await useConnection(t, "Acme (older environment)");
    // The second environment's 10,000-row export, sent slowly in chunks.
    await t.control("delay", { path: "/api/bi/v1/financials", chunkDelayMs: 400, count: 1 }, "POST", t.otherServiceUrl);
    try {
      const sheetsBefore = await t.sheetNames();
      const writesBefore = (await t.workbookStats()).cellWrites;
      await openImport(t, "financials");
      await t.fill(t.id("query-paste"), "");
      let seenRows = 0;
      await runJob(
        t,
        async () => {
          await t.id("import-start").click();
          const rows = t.id("progress-rows");
          seenRows = Number(await t.attr(rows, "data-rows", (v) => Number(v ?? "0") > 0, 30_000));
          // The manifest knows the export's size: progress shows it ("1,000 of 10,000 rows received").
          const shown = await rows.innerText();
          check(/^[\d,]+ of 10,000 rows received$/.test(shown), `progress shows the total (${shown})`);
          await t.id("progress-cancel").click();
        },
        "cancelled",
      );
      check(seenRows > 0 && seenRows < 10_000, `rows counted while streaming (${seenRows})`);
      t.note(`cancelled after ${seenRows.toLocaleString("en-US")} of 10,000 rows had arrived`);
      checkEqual(await t.sheetNames(), sheetsBefore, "sheets after the cancelled import");
      checkEqual((await t.workbookStats()).cellWrites, writesBefore, "cells written by the cancelled import");
    } finally {
      await t.control("delay", { path: "/api/bi/v1/financials", chunkDelayMs: 0 }, "POST", t.otherServiceUrl);
      await useConnection(t, "Acme (reference)");
    }
  },
};
