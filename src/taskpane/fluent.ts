/**
 * Fluent UI web components (v3, framework-free custom elements): only the components the pane
 * uses are defined, in their own chunk loaded right after first paint (elements created before
 * that upgrade in place). The theme is Fluent's design tokens, light or dark after Office's theme.
 */
import "@fluentui/web-components/button.js";
import "@fluentui/web-components/progress-bar.js";
import "@fluentui/web-components/message-bar.js";
import { setTheme } from "@fluentui/web-components/theme/set-theme.js";
import { webDarkTheme, webLightTheme } from "@fluentui/tokens";

/** Sets Fluent's tokens for the whole document; `dark` follows Office's body background. */
export function applyFluentTheme(dark: boolean): void {
  setTheme(dark ? webDarkTheme : webLightTheme);
}
