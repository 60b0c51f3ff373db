/**
 * The pane's questions (issue #37, item 7): refresh on open on a new device and PPM formulas in a
 * workbook from elsewhere ask in one style, one under the other above the sections: a card with the
 * question, what it is about, and two buttons (the yes first, primary). Not an error bar: nothing
 * went wrong, the user is asked.
 */
import { h } from "./dom";

export interface QuestionOptions {
  testid: string;
  /** The question in a few words: the group's accessible name, and its visible heading. */
  title: string;
  /** What it is about (tables, connections): never a token. */
  text: string;
  textTestid: string;
  yes: { label: string; testid: string; onClick: () => void };
  no: { label: string; testid: string; onClick: () => void };
  data?: Record<string, string>;
}

export function questionCard(o: QuestionOptions): HTMLElement {
  const card = h(
    "div",
    { class: "question", role: "group", "aria-label": o.title, "data-testid": o.testid },
    h("p", { class: "question-title" }, o.title),
    h("p", { "data-testid": o.textTestid }, o.text),
    h(
      "div",
      { class: "actions" },
      h("fluent-button", { type: "button", appearance: "primary", size: "small", "data-testid": o.yes.testid, onclick: () => o.yes.onClick() }, o.yes.label),
      h("fluent-button", { type: "button", size: "small", "data-testid": o.no.testid, onclick: () => o.no.onClick() }, o.no.label),
    ),
  );
  for (const [k, v] of Object.entries(o.data ?? {})) card.dataset[k] = v;
  return card;
}
