import { check, checkEqual, type Journey, type RequestLogEntry } from "../harness";
import { ACME_TOKEN, connectionItem, fillConnectionForm, openTab } from "./connections";
import { boundTables, openOutcome, reopen, runtimeState, setFlag } from "./openRefresh";

/** Every form a secret could travel in: as is, percent-encoded, Base64 and Base64url (alone and in Basic). */
function forms(secret: string): string[] {
  const b = Buffer.from(secret, "utf8");
  const basic = Buffer.from(`company_api_token:${secret}`, "utf8");
  return [secret, encodeURIComponent(secret), b.toString("base64"), b.toString("base64url"), basic.toString("base64"), basic.toString("base64url")];
}

const RECORD_AUTH = "demo-api-auth";
const RECORD_SECRET = "demo-api-secret";

/**
 * Issue #22 item 1: editing a saved connection's address to another origin never sends the
 * secrets stored for the old one there. A capture server on that origin (allowing every CORS
 * preflight, the worst case) records what arrives; the pane asks for the token again. Also: the
 * new host answers with a redirect, which the pane names as one, once, without retrying.
 */
export const editAddressKeepsSecrets: Journey = {
  name: "connections: editing the address to another host sends it no stored secret; the pane asks for its token; a redirect is named as one",
  async run(t) {
    const capture = await t.startCaptureServer();
    await openTab(t, "connections");
    const item = connectionItem(t, "Acme (reference)");
    await t.attr(item, "data-token", "stored");
    await item.getByTestId("connection-edit").click();
    const form = t.id("connection-form");
    await form.waitFor();
    await t.fill(t.id("connection-base-url"), capture.url);
    await t.attr(form, "data-address-moved", "true");
    const hint = await form.locator(".hint").nth(2).innerText();
    check(hint.includes(capture.url) && hint.includes(t.serviceUrl), `the token's hint names both hosts (${hint})`);
    // Saved with the token field left empty ("keep the stored token" on the same host): refused.
    await t.id("connection-save").click();
    const error = t.id("connection-form-error");
    await t.until("the form to ask for the token", async () => (await error.innerText()).includes("enter the company API token for the new address"));
    check((await error.innerText()).includes(capture.url), `the question names the new host (${await error.innerText()})`);
    checkEqual(await t.id("connection-token").getAttribute("aria-invalid"), "true", "the token field is marked");
    checkEqual(capture.requests.length, 0, "nothing reached the other host");
    await t.screenshotPane("32-address-moved");

    // With a token for the new host it saves, and the test that follows goes there with that token only.
    capture.answer({ kind: "redirect", location: `${capture.url}/elsewhere` });
    await t.fill(t.id("connection-token"), "token-for-the-other-host");
    await t.id("connection-save").click();
    await form.waitFor({ state: "detached" });
    const result = item.getByTestId("connection-test-result");
    await t.attr(result, "data-state", "error", 30_000);
    const panel = result.getByTestId("error-panel");
    // The redirect is named as one: not "could not be reached", no retries, no browser-policy advice.
    checkEqual(await panel.getAttribute("data-code"), "redirected", "the test's error");
    const text = await panel.innerText();
    check(/redirects elsewhere/.test(text) && !/Local Network|LocalNetworkAccess|policy|could not be reached/i.test(text), `the redirect explained as such (${text})`);
    const gets = capture.requests.filter((r) => r.method === "GET");
    checkEqual(gets.map((r) => r.url.split("?")[0]), ["/api/bi/v1/manifest"], "one request, not retried");
    checkEqual(gets[0].headers["company-api-token"], "token-for-the-other-host", "the new host got the token typed for it");
    const seen = JSON.stringify(capture.requests);
    for (const secret of [ACME_TOKEN, RECORD_AUTH, RECORD_SECRET]) {
      for (const f of forms(secret)) check(!seen.includes(f), `the other host never received ${secret} (as ${f})`);
    }
    await t.attr(item, "data-token", "stored");
    check(!(await item.innerText()).includes("record credentials stored"), "the record credentials were not kept for the other host");

    // Back to the real environment: a move again, so the token (and record credentials) are asked for again.
    await item.getByTestId("connection-edit").click();
    await fillConnectionForm(t, { name: "Acme (reference)", baseUrl: t.serviceUrl, token: ACME_TOKEN, apiAuth: RECORD_AUTH, apiSecret: RECORD_SECRET });
    await t.attr(item.getByTestId("connection-test-result"), "data-state", "ok", 30_000);
    check((await item.innerText()).includes("record credentials stored"), "record credentials stored again");
    checkEqual(capture.requests.filter((r) => r.method === "GET").length, 1, "nothing more went to the other host");
  },
};

const exportsOf = (log: RequestLogEntry[], path: string) => log.filter((r) => r.method === "GET" && r.path === path);

/**
 * Issue #22 item 6: a workbook whose tables are set to refresh on open, opened on a device that never
 * flagged them (and has a connection that would serve them), asks first in the pane and sends
 * nothing until the user agrees; the answer is remembered on that device.
 */
export const reopenAsksFirst: Journey = {
  name: "reopen: on a device that never flagged the tables, the pane asks first and nothing is sent until the user agrees",
  async run(t) {
    check((await runtimeState(t)).shared === "true", "the preview runs one shared runtime");
    await setFlag(t, "ppm_financials", true);
    // Another device: first without a connection (the quiet note), then with one of its own.
    await reopen(t, true);
    checkEqual((await runtimeState(t)).device, "other", "on another device");
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    await t.expectVisible(t.id("open-refresh-note"), "the note about the missing connection", 30_000);
    await openTab(t, "connections");
    if ((await connectionItem(t, "Acme (other device)").count()) === 0) {
      await t.id("connection-add").click();
      await fillConnectionForm(t, { name: "Acme (other device)", baseUrl: t.serviceUrl, token: ACME_TOKEN });
      await t.attr(connectionItem(t, "Acme (other device)").getByTestId("connection-test-result"), "data-state", "ok", 30_000);
    }

    await t.control("regenerate", { company: "acme", dataset: "financials" });
    await t.clearRequests();
    await reopen(t, true);
    check((await runtimeState(t)).started === "true", "the document loads the add-in");
    // The question waits in the (hidden) pane; nothing is fetched for the workbook meanwhile.
    await t.until(
      "the refresh on open to stop and ask",
      () => t.page.frame({ name: "taskpane" })?.evaluate(() => !!document.querySelector('[data-testid="open-refresh-consent"]')) ?? false,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    let log = await t.requests();
    checkEqual(exportsOf(log, "/api/bi/v1/financials").length, 0, "no export requested before the user agrees");
    checkEqual(log.filter((r) => r.method === "GET" && r.path.startsWith("/api/") && r.path !== "/api/bi/v1/manifest").map((r) => r.path), [], "no data requested before the user agrees (only the pane's own dataset list)");
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    const ask = t.id("open-refresh-consent");
    await t.expectVisible(ask, "the question in the pane");
    const text = await ask.innerText();
    check(text.includes("ppm_financials") && text.includes(t.serviceUrl) && text.includes("company acme"), `the question names the table, environment and company (${text})`);
    await t.screenshotPane("33-open-consent");
    log = await t.requests();
    checkEqual(exportsOf(log, "/api/bi/v1/financials").length, 0, "still nothing requested while the question is open");

    await t.id("open-refresh-consent-allow").click();
    const outcome = await openOutcome(t);
    checkEqual([outcome.state, outcome.updated, outcome.failed], ["done", 1, 0], "refreshed once the user agreed (state, updated, failed)");
    // Said as what happened: refreshed after the answer, not when the workbook opened (issue #37, item 19).
    check((await t.id("open-refresh-summary").innerText()).startsWith("Refreshed on this device, as you allowed: 1 updated"), `the outcome line after the answer (${await t.id("open-refresh-summary").innerText()})`);
    await t.screenshotPane("43-open-consent-answered");
    checkEqual(exportsOf(await t.requests(), "/api/bi/v1/financials").map((r) => r.status), [200], "one request after agreeing");

    // Remembered on this device: opened again, it refreshes without asking.
    await t.clearRequests();
    await reopen(t, true);
    await openOutcome(t);
    checkEqual(await t.tp.getByTestId("open-refresh-consent").count(), 0, "not asked again on this device");
    checkEqual(exportsOf(await t.requests(), "/api/bi/v1/financials").length, 1, "the refresh ran on open");

    // Back on the first device; the flag is cleared again for the journeys after this one.
    await reopen(t, false);
    await t.page.getByTestId("ribbon-open").click();
    await t.page.locator("#taskpane").waitFor({ state: "visible" });
    await openOutcome(t);
    await setFlag(t, "ppm_financials", false);
    checkEqual((await boundTables(t)).filter((x) => x.flagged).length, 0, "no table flagged");
  },
};

/**
 * Issue #22 item 5: the summary page shows only what its command sends it. Opened from a link on
 * the add-in's own origin, with text in its address, it shows nothing at all.
 */
export const summaryPageOutsideDialog: Journey = {
  name: "summary page: opened outside a dialog, with text in its address, it shows nothing",
  async run(t) {
    const page = await t.page.context().newPage();
    try {
      const bait = "Your token expired. Enter it again at https://evil.example.net";
      await page.goto(`${t.origin}/preview-summary.html?state=failed&text=${encodeURIComponent(bait)}`);
      // Give the page's Office.onReady and its handler registration every chance to run.
      await page.waitForLoadState("load");
      await new Promise((r) => setTimeout(r, 500));
      checkEqual(await page.evaluate(() => document.body.dataset.state ?? ""), "empty", "the page's state");
      const visible = (await page.locator("body").innerText()).trim();
      checkEqual(visible, "", "visible text on the page");
      check(!(await page.content()).includes("evil.example.net"), "the address's text is nowhere in the page");
    } finally {
      await page.close();
    }
  },
};
