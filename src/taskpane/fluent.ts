/**
 * Fluent UI web components (v3, framework-free custom elements): only the components the pane
 * uses are defined, in their own chunk loaded right after first paint (elements created before
 * that upgrade in place; `controls.ts` builds them so that they work either way). The theme is
 * Fluent's design tokens, light or dark after Office's theme.
 */
import "@fluentui/web-components/button.js";
import "@fluentui/web-components/progress-bar.js";
import "@fluentui/web-components/message-bar.js";
import "@fluentui/web-components/text-input.js";
import "@fluentui/web-components/textarea.js";
import "@fluentui/web-components/checkbox.js";
import "@fluentui/web-components/radio.js";
import "@fluentui/web-components/radio-group.js";
import "@fluentui/web-components/dropdown.js";
import "@fluentui/web-components/listbox.js";
import "@fluentui/web-components/option.js";
import "@fluentui/web-components/tablist.js";
import "@fluentui/web-components/tab.js";
import "@fluentui/web-components/dialog.js";
import "@fluentui/web-components/dialog-body.js";
import { setTheme } from "@fluentui/web-components/theme/set-theme.js";
import { webDarkTheme, webLightTheme } from "@fluentui/tokens";
import { Observable } from "@microsoft/fast-element";

/** Sets Fluent's tokens for the whole document; `dark` follows Office's body background. */
export function applyFluentTheme(dark: boolean): void {
  setTheme(dark ? webDarkTheme : webLightTheme);
}

/**
 * Calls `apply` with the element's rendered inner control (its `control` property) now if it has
 * one, and again whenever the component renders a new one: a text input renders its `<input>`
 * when it is connected, a dropdown its `<button role=combobox>` a little later. The pane uses it
 * for what the components do not forward from the host: a dropdown's name, a text input's
 * description and invalid state.
 */
export function withControl(el: HTMLElement, apply: (control: HTMLElement) => void): void {
  const read = () => (el as unknown as { control?: unknown }).control;
  const current = read();
  if (current instanceof HTMLElement) apply(current);
  Observable.getNotifier(el).subscribe(
    {
      handleChange(_source: unknown, key: unknown) {
        const next = read();
        if (key === "control" && next instanceof HTMLElement) apply(next);
      },
    },
    "control",
  );
}
