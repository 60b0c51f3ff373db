/**
 * Types for the Fluent UI web components the pane uses. The package's subpath exports
 * (`@fluentui/web-components/button.js`) are what webpack resolves; this repository's TypeScript
 * uses node10 resolution, which does not read `exports`, so the few entry points are declared here.
 */
declare module "@fluentui/web-components/button.js" {}
declare module "@fluentui/web-components/progress-bar.js" {}
declare module "@fluentui/web-components/message-bar.js" {}
declare module "@fluentui/web-components/text-input.js" {}
declare module "@fluentui/web-components/textarea.js" {}
declare module "@fluentui/web-components/checkbox.js" {}
declare module "@fluentui/web-components/radio.js" {}
declare module "@fluentui/web-components/radio-group.js" {}
declare module "@fluentui/web-components/dropdown.js" {}
declare module "@fluentui/web-components/listbox.js" {}
declare module "@fluentui/web-components/option.js" {}
declare module "@fluentui/web-components/tablist.js" {}
declare module "@fluentui/web-components/tab.js" {}
declare module "@fluentui/web-components/dialog.js" {}
declare module "@fluentui/web-components/dialog-body.js" {}
declare module "@fluentui/web-components/theme/set-theme.js" {
  export function setTheme(theme: Record<string, string | number> | null, node?: Document | HTMLElement): void;
}

/**
 * The slice of each element's API the pane uses. Before the Fluent chunk has defined an element
 * these are plain own properties of an `HTMLElement` (FAST re-applies them through its accessors
 * on upgrade); `control` and the methods exist only once the element is defined and rendered.
 */
interface FluentButtonElement extends HTMLElement {
  disabled: boolean;
  type: string;
}
interface FluentProgressBarElement extends HTMLElement {
  value: number | null;
  max: number | null;
}
interface FluentTextInputElement extends HTMLElement {
  value: string;
  /** The `<input>` inside the shadow root (after upgrade). */
  readonly control?: HTMLInputElement;
}
interface FluentTextAreaElement extends HTMLElement {
  value: string;
  /** The `<textarea>` inside the shadow root (after upgrade). */
  readonly controlEl?: HTMLTextAreaElement;
}
interface FluentCheckboxElement extends HTMLElement {
  checked: boolean;
}
interface FluentRadioElement extends HTMLElement {
  checked: boolean;
  value: string;
}
interface FluentRadioGroupElement extends HTMLElement {
  value: string | null;
}
interface FluentDropdownElement extends HTMLElement {
  value: string | null;
  /** The `<button role=combobox>` the dropdown renders into its own light DOM (after upgrade). */
  readonly control?: HTMLElement;
}
interface FluentOptionElement extends HTMLElement {
  selected: boolean;
  value: string;
}
interface FluentTablistElement extends HTMLElement {
  activeid: string;
}
interface FluentDialogElement extends HTMLElement {
  show(): void;
  hide(): void;
  /** The native `<dialog>` inside the shadow root (after upgrade). */
  readonly dialog?: HTMLDialogElement;
}

interface HTMLElementTagNameMap {
  "fluent-button": FluentButtonElement;
  "fluent-progress-bar": FluentProgressBarElement;
  "fluent-message-bar": HTMLElement;
  "fluent-text-input": FluentTextInputElement;
  "fluent-textarea": FluentTextAreaElement;
  "fluent-checkbox": FluentCheckboxElement;
  "fluent-radio": FluentRadioElement;
  "fluent-radio-group": FluentRadioGroupElement;
  "fluent-dropdown": FluentDropdownElement;
  "fluent-listbox": HTMLElement;
  "fluent-option": FluentOptionElement;
  "fluent-tablist": FluentTablistElement;
  "fluent-tab": HTMLElement;
  "fluent-dialog": FluentDialogElement;
  "fluent-dialog-body": HTMLElement;
}
