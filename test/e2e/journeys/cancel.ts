import { checkEqual, type Journey } from "../harness";
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
      await t.id("query-paste").fill("");
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
