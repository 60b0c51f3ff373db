/**
 * Credentials are checked with the service before they are saved (issue #37): a connection or a
 * token the service refuses (401) is not stored, so it never replaces a connection that works.
 * Any other failure (the service cannot be reached, answers 5xx, reporting is disabled for the
 * company) says nothing about the token: the connection is saved, as one may set up an
 * environment that is down right now, and the pane says it was not checked.
 */
import type { PaneContext } from "./context";
import type { Connection } from "../service/connection";
import { describeError, type ErrorView } from "./errorView";

export type TokenCheck =
  /** The service read the manifest with these credentials. */
  | { state: "accepted"; companyId: string; datasets: number }
  /** The token is valid, but the company has no reporting (403 `bi_reporting_disabled`). */
  | { state: "accepted"; companyId: null; datasets: null }
  /** 401: the service refused the token. Nothing may be saved. */
  | { state: "refused"; view: ErrorView }
  /** The check could not run (network, 5xx, …); the token may be right. */
  | { state: "unchecked"; view: ErrorView };

/** Asks the service (its manifest) whether it accepts `conn`'s token. Never throws. */
export async function checkToken(ctx: PaneContext, conn: Connection): Promise<TokenCheck> {
  try {
    const engine = await ctx.engine();
    const m = await engine.manifest(conn);
    return { state: "accepted", companyId: m.companyId, datasets: m.datasets.length };
  } catch (e) {
    const view = describeError(e, { baseUrl: conn.baseUrl, secrets: [...ctx.secrets(), conn.token, conn.apiAuth ?? "", conn.apiSecret ?? ""].filter((s) => s !== "") });
    if (view.code === "unauthorized") return { state: "refused", view };
    if (view.code === "bi_reporting_disabled") return { state: "accepted", companyId: null, datasets: null };
    return { state: "unchecked", view };
  }
}

/** The form's message for a refused token: what happened, and that nothing was saved. */
export function refusedText(baseUrl: string): string {
  let host = baseUrl;
  try {
    host = new URL(baseUrl).host;
  } catch {
    /* shown as typed */
  }
  return `${host} refused this token (401), so nothing was saved. Check that it is this company's API token for this environment (service: gear menu › company API token), then save again.`;
}
