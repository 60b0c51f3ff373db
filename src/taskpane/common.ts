/** Small pieces shared by several sections. */
import { h } from "./dom";
import type { PaneContext } from "./context";

/** Shown instead of a section's content while no connection is set up. */
export function noConnection(ctx: PaneContext): HTMLElement {
  return h(
    "div",
    { class: "state-panel", "data-testid": "no-connection" },
    h("p", {}, "Add a connection first: your environment's address and your company API token."),
    h("fluent-button", { type: "button", appearance: "primary", "data-testid": "no-connection-add", onclick: () => ctx.addConnection() }, "Add connection"),
  );
}
