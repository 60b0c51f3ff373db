/** Small pieces shared by several sections. */
import { h } from "./dom";
import type { PaneContext } from "./context";
import { radioGroup } from "./controls";

/** Where an import goes: a new sheet (default) or the selected cell; test ids `<prefix>-dest-new-sheet|selection`. */
export function destinationChoice(prefix: string): ReturnType<typeof radioGroup> {
  return radioGroup({
    label: "Destination",
    value: "newSheet",
    choices: [
      { value: "newSheet", label: "New sheet", testid: `${prefix}-dest-new-sheet` },
      { value: "selection", label: "Existing sheet, at the selected cell", testid: `${prefix}-dest-selection` },
    ],
  });
}

/** Shown instead of a section's content while no connection is set up. */
export function noConnection(ctx: PaneContext): HTMLElement {
  return h(
    "div",
    { class: "state-panel", "data-testid": "no-connection" },
    h("p", {}, "Add a connection first: your environment's address and your company API token."),
    h("fluent-button", { type: "button", appearance: "primary", "data-testid": "no-connection-add", onclick: () => ctx.addConnection() }, "Add connection"),
  );
}
