import { check, checkEqual, type E2E, type Journey } from "../harness";
import { ACME_TOKEN, GLOBEX_TOKEN, connectionItem, fillConnectionForm, openTab, useConnection } from "./connections";
import { datasetRow, openImport } from "./datasets";
import { refreshAndSummarise } from "./refresh";

/**
 * Stores a token for "Acme (reference)" that the service does not accept, as a token that went
 * stale would be: saved while the service could not be reached, so it could not be checked.
 */
async function storeUncheckedToken(t: E2E, token: string): Promise<void> {
  await openTab(t, "connections");
  await t.control("fault", { path: "/api/*", status: "drop", count: "unlimited" });
  try {
    await connectionItem(t, "Acme (reference)").getByTestId("connection-update-token").click();
    await t.id("token-form").waitFor();
    await t.fill(t.id("token-input"), token);
    await t.id("token-save").click();
    await t.id("token-form").waitFor({ state: "detached" });
    const said = await t.id("status").innerText();
    check(/saved for Acme \(reference\), but not checked: The service could not be reached\./.test(said), `the pane says the token was not checked (${said})`);
  } finally {
    await t.control("fault", { path: "/api/*", count: 0 });
  }
}

/** A wrong stored token: the 401 is explained in place and offers updating exactly that connection's token. */
export const wrongToken: Journey = {
  name: "errors: wrong token → 401 message in place → update token → datasets again",
  async run(t) {
    await openTab(t, "connections");
    const acme = connectionItem(t, "Acme (reference)");
    const acmeId = await acme.getAttribute("data-connection-id");
    const activeId = () => t.tp.locator("[data-testid=connection-item][data-active=true]").getAttribute("data-connection-id");
    const before = await t.id("connection-item").count();
    const inUse = await activeId();
    const storedToken = (): Promise<string> => t.frame().evaluate((id) => (Object.entries(localStorage) as Array<[string, string]>).find(([k]) => k.endsWith(`ppm.v1.secret.${id}`))?.[1] ?? "", acmeId);
    const kept = await storedToken();

    // A new connection whose token the service refuses is not saved, and the one in use stays (issue #37, item 5).
    await t.id("connection-add").click();
    await t.fill(t.id("connection-name"), "Acme (typo)");
    await t.fill(t.id("connection-base-url"), t.serviceUrl);
    await t.fill(t.id("connection-token"), "not-the-right-token");
    await t.id("connection-save").click();
    const refusal = t.id("connection-form-error");
    await t.until("the form to say the token was refused", async () => /refused this token \(401\), so nothing was saved/.test(await refusal.innerText()));
    checkEqual(await t.id("connection-token").getAttribute("aria-invalid"), "true", "the token field is marked");
    checkEqual([await t.id("connection-item").count(), await activeId()], [before, inUse], "connections and the one in use after a refused token");
    await t.id("connection-cancel").click();
    // The same for Update token: the refused token is not stored over the working one.
    await acme.getByTestId("connection-update-token").click();
    await t.id("token-form").waitFor();
    await t.fill(t.id("token-input"), "not-the-right-token");
    await t.id("token-save").click();
    await t.until("Update token to say the token was refused", async () => /refused this token \(401\)/.test(await t.id("token-error").innerText()));
    checkEqual(await storedToken(), kept, "the stored token after a refused update");
    await t.id("token-cancel").click();

    // A token saved while the service cannot be reached is not checked: it is stored, and the first
    // request after that explains the 401 in place.
    await storeUncheckedToken(t, "not-the-right-token");

    await openTab(t, "datasets");
    await t.id("datasets-reload").click();
    const panel = t.id("panel-datasets").getByTestId("error-panel");
    await t.attr(panel, "data-code", "unauthorized");
    const text = await panel.innerText();
    check(!text.includes("not-the-right-token") && !text.includes(ACME_TOKEN), "the error does not show the token");
    await panel.getByTestId("error-update-token").waitFor();
    await panel.getByTestId("error-forget-token").waitFor();
    await t.screenshotPane("10-error-401");

    await panel.getByTestId("error-update-token").click();
    const form = t.id("token-form");
    await form.waitFor();
    checkEqual(await form.getAttribute("data-connection-id"), await acme.getAttribute("data-connection-id"), "the token form is for the failing connection");
    await t.fill(t.id("token-input"), ACME_TOKEN);
    // Enter in the field saves, as in a native form (through the Fluent submit button).
    await t.id("token-input").press("Enter");
    await form.waitFor({ state: "detached" });

    await openTab(t, "datasets");
    if ((await t.id("panel-datasets").getByTestId("error-panel").count()) > 0) await t.id("datasets-reload").click();
    await datasetRow(t, "financials").waitFor();
    checkEqual(await t.id("panel-datasets").getByTestId("error-panel").count(), 0, "error panels after the token was fixed");
  },
};

/** A company without reporting gets a clear state, not an error dump; switching back works. */
export const reportingDisabled: Journey = {
  name: "errors: globex (reporting disabled, 403) → clear reporting-disabled state",
  async run(t) {
    await openTab(t, "connections");
    await t.id("connection-add").click();
    await fillConnectionForm(t, { name: "Globex (reference)", baseUrl: t.serviceUrl, token: GLOBEX_TOKEN });
    await t.attr(connectionItem(t, "Globex (reference)"), "data-active", "true");
    // Several companies side by side on one environment.
    checkEqual(await t.id("connection-item").count(), 2, "connections listed");

    await openTab(t, "datasets");
    const disabled = t.id("reporting-disabled");
    await disabled.waitFor();
    check((await disabled.innerText()).toLowerCase().includes("reporting"), "the state explains reporting is not enabled");
    checkEqual(await t.id("dataset-row").count(), 0, "no datasets listed for globex");
    await t.screenshotPane("11-reporting-disabled");

    // "Forget token" removes exactly that connection's token from this device and keeps the connection.
    await openTab(t, "connections");
    const globex = connectionItem(t, "Globex (reference)");
    await globex.getByTestId("connection-forget-token").click();
    await t.attr(globex, "data-token", "missing");
    const stored = await t.frame().evaluate(() => JSON.stringify(Object.entries(localStorage)));
    check(!stored.includes(GLOBEX_TOKEN), "the forgotten token is gone from the add-in's storage");
    check(stored.includes(ACME_TOKEN), "the other connection's token is still stored");

    await useConnection(t, "Acme (reference)");
    await openTab(t, "datasets");
    await datasetRow(t, "financials").waitFor();
    checkEqual(await t.id("reporting-disabled").count(), 0, "acme shows datasets again");
  },
};

/** Listed but never generated: not importable, and says when to retry. A broken export (422) offers details. */
export const notGeneratedAndBroken: Journey = {
  name: "errors: risks not generated (disabled, retry note); timesheets 422 → copy details with key and time",
  async run(t) {
    await openTab(t, "datasets");
    const risks = datasetRow(t, "risks");
    checkEqual(await risks.getAttribute("data-state"), "no_export", "risks state");
    check(await t.isDisabled(risks.getByTestId("dataset-import")), "risks import is disabled");
    const note = await risks.getByTestId("dataset-state-note").innerText();
    check(note.includes("retry after the service's next generation"), `risks note (${note})`);
    // The same words as `ppm datasets` (issue #37, item 9).
    checkEqual(await risks.getByTestId("dataset-generated").innerText(), "No export yet", "risks' generation line");
    await risks.scrollIntoViewIfNeeded();
    await t.screenshotPane("12-not-generated");

    const sheetsBefore = await t.sheetNames();
    await openImport(t, "timesheets");
    await t.id("import-start").click();
    const panel = t.id("panel-datasets").getByTestId("error-panel");
    await t.attr(panel, "data-code", "invalid_cached_artifact");
    await panel.getByTestId("error-copy-details").waitFor();
    const details = await panel.getByTestId("error-details").innerText();
    check(details.includes("timesheets"), `details name the dataset (${details})`);
    check(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(details), `details carry the request time (${details})`);
    check(!details.includes(ACME_TOKEN), "details carry no token");
    await panel.getByTestId("error-copy-details").click();
    const copied = await t.until("the details on the clipboard", () => t.frame().evaluate(() => navigator.clipboard.readText()));
    checkEqual(copied.trim(), details.trim(), "what Copy details put on the clipboard");
    checkEqual(await t.sheetNames(), sheetsBefore, "a failed import leaves no sheet behind");
    await t.screenshotPane("13-error-422");
    await panel.getByTestId("error-dismiss").click();
    await panel.waitFor({ state: "detached" });
  },
};

/** A 401 during a refresh is reported per table, leaves the sheet untouched, and offers the token update in place. */
export const staleTokenOnRefresh: Journey = {
  name: "errors: refresh with a stale token → tables fail with the reason, only the stale mark written → update token in place → retry succeeds",
  async run(t) {
    await storeUncheckedToken(t, "expired-token");
    const acme = connectionItem(t, "Acme (reference)");

    await openTab(t, "refresh");
    const writes = (await t.workbookStats()).cellWrites;
    const failedRun = await refreshAndSummarise(t, () => t.id("refresh-all").click());
    check(failedRun.failed >= 1 && failedRun.updated === 0, `tables failed, none updated (${JSON.stringify(failedRun)})`);
    // Every table failed for the same reason: said once for the run (issue #25).
    check(failedRun.common !== null || failedRun.failed === 1, `one message for the run (${JSON.stringify(failedRun)})`);
    const reasons = failedRun.common !== null ? [failedRun.common] : failedRun.items.filter((i) => i.outcome === "failed").map((i) => i.reason);
    check(reasons.every((r) => r.trim() !== "" && !r.includes("expired-token")), `each failure says why, without the token (${reasons.join(" | ")})`);
    // The one cell each failed table gets: its info line's stale mark (#15).
    checkEqual((await t.workbookStats()).cellWrites - writes, failedRun.failed, "cells written by a refresh that was refused (the stale marks)");

    try {
      // One panel for the run (every table failed the same way); it offers the update for exactly the connection that failed.
      const panels = t.id("panel-refresh").getByTestId("error-panel");
      checkEqual(await panels.count(), 1, "one error panel for the run");
      const panel = panels.first();
      await t.attr(panel, "data-code", "unauthorized");
      await panel.getByTestId("error-update-token").click();
      await t.fill(t.id("token-input"), ACME_TOKEN);
      const retried = await refreshAndSummarise(t, () => t.id("token-save").click());
      checkEqual(retried.failed, 0, `failed tables after the token update (${JSON.stringify(retried)})`);
      check(retried.unchanged + retried.updated >= failedRun.failed, "the tables that failed were refreshed");
    } catch (err) {
      // Leave the connection usable for the journeys after this one.
      await openTab(t, "connections");
      await acme.getByTestId("connection-update-token").click();
      await t.fill(t.id("token-input"), ACME_TOKEN);
      await t.id("token-save").click();
      throw err;
    }
  },
};
