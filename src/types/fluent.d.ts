/**
 * Types for the Fluent UI web components the pane uses. The package's subpath exports
 * (`@fluentui/web-components/button.js`) are what webpack resolves; this repository's TypeScript
 * uses node10 resolution, which does not read `exports`, so the few entry points are declared here.
 */
declare module "@fluentui/web-components/button.js" {}
declare module "@fluentui/web-components/progress-bar.js" {}
declare module "@fluentui/web-components/message-bar.js" {}
declare module "@fluentui/web-components/theme/set-theme.js" {
  export function setTheme(theme: Record<string, string | number> | null, node?: Document | HTMLElement): void;
}

/** The slice of each element's API the pane sets. */
interface FluentButtonElement extends HTMLElement {
  disabled: boolean;
  type: string;
}
interface FluentProgressBarElement extends HTMLElement {
  value: number | null;
  max: number | null;
}

interface HTMLElementTagNameMap {
  "fluent-button": FluentButtonElement;
  "fluent-progress-bar": FluentProgressBarElement;
  "fluent-message-bar": HTMLElement;
}
