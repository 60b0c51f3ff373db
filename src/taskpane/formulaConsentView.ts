/**
 * The pane's question for PPM formulas (follow-up to issue #28, see src/addin/formulaConsent.ts):
 * while formulas of a workbook from elsewhere wait for this device's permission, a message bar names
 * what they would read from (connection names and addresses, never a token) with Allow and Not now.
 * Allow remembers the answer for this document on this device, for exactly the connections the bar
 * names (issue #36: the request it rendered is what is allowed), and the waiting formulas run again;
 * Not now hides the bar (the formulas stay `#N/A`) until more formulas are blocked.
 */
import { h, replace } from "./dom";
import { questionCard } from "./question";
import type { PaneContext } from "./context";
import { formulaConsentText, type FormulaConsentRequest } from "../addin/formulaConsent";

export function mountFormulaConsent(ctx: PaneContext): void {
  const consent = ctx.runtime?.formulaConsent;
  if (!consent) return;
  const host = h("div", { class: "formula-consent" });
  ctx.notices.appendChild(host);
  /** After Not now: how many formulas were waiting (the bar comes back only when more are blocked). */
  let dismissedAt: number | null = null;

  const render = (request: FormulaConsentRequest | null): void => {
    if (!request) {
      dismissedAt = null;
      return replace(host);
    }
    if (dismissedAt !== null && request.waiting <= dismissedAt) return replace(host);
    dismissedAt = null;
    const notNow = () => {
      dismissedAt = request.waiting;
      replace(host);
    };
    // The same question card as refresh on open's (issue #37): a question, not a warning bar.
    const bar = questionCard({
      testid: "formula-consent",
      title: "Allow PPM formulas in this workbook?",
      text: formulaConsentText(request),
      textTestid: "formula-consent-text",
      yes: { label: "Allow", testid: "formula-consent-allow", onClick: () => void consent.allow(request) },
      no: { label: "Not now", testid: "formula-consent-not-now", onClick: notNow },
      data: { waiting: String(request.waiting) },
    });
    replace(host, bar);
  };
  consent.onChange(render);
}
