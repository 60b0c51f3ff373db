/**
 * The pane's form controls, built as Fluent UI web components (`fluent.ts` defines them in a chunk
 * loaded right after first paint). Sections change only where they create a control and where
 * they read or set its value; everything Fluent-specific is here:
 *
 * - **Before the chunk has loaded** an element is a plain `HTMLElement`. Values and checked states
 *   are set as properties at creation (FAST re-applies such own properties through its accessors
 *   when the element upgrades in place), and the readers below fall back to the attributes, so a
 *   section can be built and read at any time.
 * - **Names.** A text input or textarea is named by text slotted into the component (it fills the
 *   component's own `<label for=control>` in its shadow root; a `<label for>` outside, or
 *   `aria-label` on the host, does not reach the inner `<input>`). Checkboxes and radios are
 *   form-associated elements with their role on the host, so an ordinary `<label for>` names them
 *   and a click on it toggles them. A dropdown renders its `<button role=combobox>` in its own
 *   light DOM without forwarding a label, so its name is set on that button once rendered.
 * - **Descriptions and invalid state** of a text input are set on its inner `<input>` too
 *   (`ariaDescribedByElements` may point from inside a shadow root to the document around it).
 */
import { h, replace } from "./dom";

type FluentModule = typeof import("./fluent");
let fluent: Promise<FluentModule> | null = null;

/** Loads (once) the chunk that defines the Fluent components and their theme. */
export function loadFluent(): Promise<FluentModule> {
  fluent ??= import(/* webpackChunkName: "fluent" */ "./fluent").catch((e: unknown) => {
    fluent = null; // offline for a moment: the next use tries again
    throw e;
  });
  return fluent;
}

/** Runs `apply` on the element's rendered inner control, now or once the chunk has rendered it. */
function onControl(el: HTMLElement, apply: (control: HTMLElement) => void): void {
  void loadFluent()
    .then((f) => f.withControl(el, apply))
    .catch(() => undefined);
}

/** True once the custom element `tag` is defined (its instances are upgraded). */
function defined(tag: string): boolean {
  return typeof customElements !== "undefined" && customElements.get(tag) !== undefined;
}

let uid = 0;
const nextId = (prefix: string) => `${prefix}-${(++uid).toString(36)}`;

/**
 * Sets attributes as attributes. (`h()` sets `value` and `checked` as properties when the element
 * has them, which a defined Fluent radio or option does; their `value` and `checked` attributes are
 * the initial state the radio group and the dropdown read, and what the readers below fall back to.)
 */
function withAttrs<E extends Element>(el: E, attrs: Record<string, string | boolean>): E {
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === "boolean") el.toggleAttribute(k, v);
    else el.setAttribute(k, v);
  }
  return el;
}

/** Disabled state for any control, native or Fluent: the `disabled` attribute is what they all read. */
export function setDisabled(el: Element, disabled: boolean): void {
  el.toggleAttribute("disabled", disabled);
}

/** The Fluent controls whose disabled state is their `disabled` attribute. */
const FLUENT_CONTROLS = "fluent-button, fluent-checkbox, fluent-radio, fluent-dropdown, fluent-text-input, fluent-textarea";

/**
 * Mirrors every Fluent control's `disabled` attribute as `aria-disabled` on its element, from now
 * on. Fluent states it through ElementInternals, which assistive technology reads but tools that
 * read the DOM (axe-core, Accessibility Insights) do not: they took a disabled button's dimmed text
 * for a contrast failure (issue #37). WCAG 1.4.3 exempts inactive controls; this makes them known as
 * inactive to every reader.
 */
export function mirrorDisabled(root: Element): void {
  const sync = (el: Element) => {
    if (el.hasAttribute("disabled")) el.setAttribute("aria-disabled", "true");
    else el.removeAttribute("aria-disabled");
  };
  root.querySelectorAll(FLUENT_CONTROLS).forEach(sync);
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.target instanceof Element && r.target.matches(FLUENT_CONTROLS)) sync(r.target);
      for (const n of r.addedNodes) {
        if (!(n instanceof Element)) continue;
        if (n.matches(FLUENT_CONTROLS)) sync(n);
        n.querySelectorAll(FLUENT_CONTROLS).forEach(sync);
      }
    }
  }).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled"] });
}

/** Moves focus into a control; a Fluent one is focused once it is defined and rendered. */
export function focusControl(el: HTMLElement): void {
  const tag = el.localName;
  if (tag === "fluent-dropdown") {
    // A dropdown renders its button a moment after it is connected; its focus() needs that button.
    let done = false;
    onControl(el, (button) => {
      if (done) return;
      done = true;
      button.focus();
    });
    return;
  }
  if (!tag.includes("-") || defined(tag)) {
    el.focus();
    return;
  }
  void loadFluent()
    .then(() => customElements.whenDefined(tag))
    .then(() => requestAnimationFrame(() => el.focus()))
    .catch(() => undefined);
}

// ---- text inputs ------------------------------------------------------------------------------

export interface TextInputOptions {
  /** The control's name, shown above it unless `hideLabel`. */
  label: string | Node[];
  /** Keeps the name for screen readers only (a row whose meaning is visible around it). */
  hideLabel?: boolean;
  testid: string;
  /** `text` (default), `password`, `url`, `search`, `number`: the inner `<input>`'s type. */
  type?: string;
  value?: string;
  placeholder?: string;
  required?: boolean;
  maxlength?: number;
  spellcheck?: boolean;
  id?: string;
  data?: Record<string, string>;
}

function labelNodes(label: string | Node[], hide: boolean | undefined): Node[] {
  const nodes = typeof label === "string" ? [document.createTextNode(label)] : label;
  return hide ? [h("span", { class: "visually-hidden" }, ...nodes)] : nodes;
}

/** A Fluent text input (`fluent-text-input`), named by its label; `input` events bubble from it as from an `<input>`. */
export function textInput(o: TextInputOptions): FluentTextInputElement {
  const el = h("fluent-text-input", {
    "data-testid": o.testid,
    id: o.id ?? null,
    type: o.type ?? "text",
    placeholder: o.placeholder ?? null,
    autocomplete: "off",
    spellcheck: o.spellcheck === false ? "false" : null,
    required: o.required ? true : null,
    maxlength: o.maxlength !== undefined ? String(o.maxlength) : null,
    class: o.hideLabel ? "label-hidden" : null,
  });
  for (const [k, v] of Object.entries(o.data ?? {})) el.dataset[k] = v;
  replace(el, ...labelNodes(o.label, o.hideLabel));
  el.value = o.value ?? "";
  return el;
}

/** A Fluent textarea (`fluent-textarea`), named by its label. */
export function textArea(o: { label: string; testid: string; placeholder?: string; rows?: number; spellcheck?: boolean; id?: string }): FluentTextAreaElement {
  const el = h(
    "fluent-textarea",
    { "data-testid": o.testid, id: o.id ?? null, placeholder: o.placeholder ?? null, spellcheck: o.spellcheck === false ? "false" : null, resize: "vertical", rows: o.rows ? String(o.rows) : null },
    h("span", { slot: "label" }, o.label),
  );
  el.value = "";
  return el;
}

/**
 * The hint under a text input, and the input's description: `<div class="field">input hint</div>`.
 * The description is set on the inner `<input>`, which is where a screen reader is.
 */
export function withHint(control: FluentTextInputElement, hint: string | undefined): HTMLDivElement {
  const hintEl = hint ? h("div", { class: "hint", id: nextId("hint") }, hint) : null;
  if (hintEl) onControl(control, (inner) => (inner.ariaDescribedByElements = [hintEl]));
  return h("div", { class: "field" }, control, hintEl);
}

/** Marks a text input invalid (or not), on the host (for styles and tests) and on its inner `<input>`. */
export function setInvalid(el: HTMLElement, invalid: boolean): void {
  if (invalid) el.setAttribute("aria-invalid", "true");
  else el.removeAttribute("aria-invalid");
  if (el.localName === "fluent-text-input") onControl(el, (inner) => (invalid ? inner.setAttribute("aria-invalid", "true") : inner.removeAttribute("aria-invalid")));
}

// ---- checkboxes -------------------------------------------------------------------------------

export interface CheckboxOptions {
  label: string | Node[];
  testid?: string;
  checked?: boolean;
  disabled?: boolean;
  data?: Record<string, string>;
  onchange?: (box: FluentCheckboxElement) => void;
}

/** A Fluent checkbox with its label (`<div class="check">box label</div>`); `change` fires on each toggle. */
export function checkbox(o: CheckboxOptions): { box: FluentCheckboxElement; row: HTMLDivElement } {
  const id = nextId("cb");
  const box = h("fluent-checkbox", { id, "data-testid": o.testid ?? null, disabled: o.disabled ? true : null });
  for (const [k, v] of Object.entries(o.data ?? {})) box.dataset[k] = v;
  box.checked = !!o.checked;
  const onchange = o.onchange;
  if (onchange) box.addEventListener("change", () => onchange(box));
  return { box, row: h("div", { class: "check" }, box, h("label", { for: id }, ...labelNodes(o.label, false))) };
}

/** Whether a checkbox (native or Fluent, upgraded or not) is checked. */
export function isChecked(box: HTMLElement): boolean {
  const v = (box as { checked?: unknown }).checked;
  return typeof v === "boolean" ? v : box.hasAttribute("checked");
}

// ---- radio groups -----------------------------------------------------------------------------

export interface RadioChoice {
  value: string;
  label: string;
  testid: string;
  disabled?: boolean;
}

/**
 * A Fluent radio group under a visible caption (`<div class="group">caption group</div>`); arrow
 * keys move between the choices, and `change` bubbles from the radio that got checked.
 */
export function radioGroup(o: { label: string; choices: RadioChoice[]; value: string; testid?: string; onchange?: (value: string) => void }): { group: FluentRadioGroupElement; block: HTMLDivElement } {
  const captionId = nextId("rg");
  const name = nextId("radios");
  const group = h(
    "fluent-radio-group",
    { "aria-labelledby": captionId, orientation: "vertical", name, "data-testid": o.testid ?? null },
    ...o.choices.map((c) => {
      const id = nextId("radio");
      const labelId = nextId("rl");
      return h(
        "div",
        { class: "radio" },
        // The radio's role, state and name as attributes too (issue #37): Fluent gives them through
        // ElementInternals only, yet sets aria-posinset/aria-setsize on the element, which tools
        // reading the DOM (axe-core) refused on an element without a role.
        withAttrs(h("fluent-radio", { id, name, role: "radio", "aria-labelledby": labelId, "aria-checked": String(c.value === o.value), "data-testid": c.testid, disabled: c.disabled ? true : null }), { value: c.value, checked: c.value === o.value }),
        h("label", { for: id, id: labelId }, c.label),
      );
    }),
  );
  // aria-checked follows the radio the user checked (it sends the event before the group unchecks
  // the others); setRadioValue sets it too.
  group.addEventListener("change", (ev) => {
    const r = ev.target instanceof Element ? ev.target.closest("fluent-radio") : null;
    if (r?.checked) for (const x of group.querySelectorAll("fluent-radio")) x.setAttribute("aria-checked", String(x === r));
  });
  const onchange = o.onchange;
  if (onchange) {
    // The radio that got checked sends the event (the group unchecks the others only after it
    // has seen it), so the value is the event's target's.
    group.addEventListener("change", (ev) => {
      const r = ev.target instanceof Element ? ev.target.closest("fluent-radio") : null;
      if (r?.checked) onchange(r.getAttribute("value") ?? "");
    });
  }
  return { group, block: h("div", { class: "group" }, h("div", { class: "legend", id: captionId }, o.label), group) };
}

/** The value of the checked radio of a group ("" when none is checked). */
export function radioValue(group: HTMLElement): string {
  const radios = [...group.querySelectorAll<FluentRadioElement>("fluent-radio")];
  const on = defined("fluent-radio") ? radios.find((r) => r.checked) : radios.find((r) => r.hasAttribute("checked"));
  return on?.getAttribute("value") ?? "";
}

/** Checks the radio with `value` (and no other), as the group does when the user picks it. */
export function setRadioValue(group: HTMLElement, value: string): void {
  for (const r of group.querySelectorAll<FluentRadioElement>("fluent-radio")) {
    const on = r.getAttribute("value") === value;
    r.toggleAttribute("checked", on);
    r.setAttribute("aria-checked", String(on));
    if (defined("fluent-radio")) r.checked = on;
  }
}

// ---- dropdowns --------------------------------------------------------------------------------

export interface SelectOption {
  value: string;
  label: string;
}

/**
 * A Fluent dropdown (`fluent-dropdown` with a `fluent-listbox` of `fluent-option`s) and its label
 * element; `change` fires when the user picks an option. Like a native `<select>`, one option is
 * always selected (the first unless `value` names another).
 */
export function select(o: { label: string; hideLabel?: boolean; testid: string; options: SelectOption[]; value?: string }): { control: FluentDropdownElement; label: HTMLElement } {
  const label = h("span", { class: o.hideLabel ? "visually-hidden" : "label", id: nextId("dd") }, o.label);
  const control = h("fluent-dropdown", { "data-testid": o.testid }, h("fluent-listbox", { id: nextId("lb") }));
  setSelectOptions(control, o.options, o.value);
  onControl(control, (inner) => {
    inner.setAttribute("aria-labelledby", label.id);
    // A combobox states whether its list is open (ARIA 1.2): Fluent binds aria-expanded to `open`,
    // which is undefined (no attribute) until the list first opens (issue #37, axe-core).
    if (!inner.hasAttribute("aria-expanded")) inner.setAttribute("aria-expanded", "false");
  });
  label.addEventListener("click", () => focusControl(control));
  return { control, label };
}

/** Replaces the options of a dropdown and selects `value` (or the first option). */
export function setSelectOptions(dd: FluentDropdownElement, options: SelectOption[], value?: string): void {
  const chosen = options.some((x) => x.value === value) ? value : options[0]?.value;
  const listbox = dd.querySelector("fluent-listbox") ?? dd.appendChild(h("fluent-listbox", { id: nextId("lb") }));
  replace(listbox, ...options.map((x) => withAttrs(h("fluent-option", {}, x.label), { value: x.value, selected: x.value === chosen })));
}

/** The selected value of a dropdown ("" when it has no option). */
export function selectValue(dd: HTMLElement): string {
  const options = [...dd.querySelectorAll<FluentOptionElement>("fluent-option")];
  const on = defined("fluent-option") ? options.find((x) => x.selected) : options.find((x) => x.hasAttribute("selected"));
  return (on ?? options[0])?.getAttribute("value") ?? "";
}

/** Selects the option with `value`, as a user pick would (without a `change` event, like `select.value = …`). */
export function setSelectValue(dd: HTMLElement, value: string): void {
  const options = [...dd.querySelectorAll<FluentOptionElement>("fluent-option")];
  if (!options.some((x) => x.getAttribute("value") === value)) return;
  for (const x of options) {
    const on = x.getAttribute("value") === value;
    x.toggleAttribute("selected", on);
    if (defined("fluent-option")) x.selected = on;
  }
}

// ---- tabs -------------------------------------------------------------------------------------

export interface TabSpec {
  /** The tab element's id. */
  id: string;
  label: string;
  /** Accessible name when longer than the visible label (which it must start with: label in name). */
  name?: string;
  testid: string;
  /** The id of the panel the tab shows (`aria-controls`). */
  panelId: string;
}

/**
 * A Fluent tab list: arrow keys, Home and End move between the tabs and select them (focus and
 * selection move together), and `onSelect` gets the selected tab's id after a user's choice. The
 * caller shows and hides the panels (`select()` sets the selection from code).
 */
export function tabList(o: { label: string; tabs: TabSpec[]; onSelect: (id: string) => void; class?: string; size?: "small" | "medium" }): { el: FluentTablistElement; select(id: string, focus?: boolean): void } {
  const tabs = o.tabs.map((t) => h("fluent-tab", { id: t.id, "aria-controls": t.panelId, "data-testid": t.testid, "aria-label": t.name ?? null }, t.label));
  const el = h("fluent-tablist", { "aria-label": o.label, class: o.class ?? null, size: o.size ?? null }, ...tabs);
  let current = "";
  el.addEventListener("change", (ev) => {
    if (ev.target !== el) return;
    const id = (el.activeid || el.getAttribute("activeid")) ?? "";
    if (id && id !== current) o.onSelect(id);
  });
  // Before the chunk has defined the tab list, a click still selects (keys come with the definition).
  for (const t of tabs)
    t.addEventListener("click", () => {
      if (!defined("fluent-tablist") && t.id !== current) o.onSelect(t.id);
    });
  return {
    el,
    select(id, focus = false) {
      current = id;
      // The tab list keeps aria-selected and its roving tab stop itself once defined; before that
      // the attributes say which tab is selected.
      el.setAttribute("activeid", id);
      for (const t of tabs) {
        t.setAttribute("aria-selected", String(t.id === id));
        if (!defined("fluent-tab")) t.tabIndex = t.id === id ? 0 : -1;
      }
      if (focus) focusControl(tabs.find((t) => t.id === id)!);
    },
  };
}

// ---- dialogs ----------------------------------------------------------------------------------

export interface DialogButton {
  label: string;
  testid: string;
  /** Runs after the dialog has closed. */
  onClick?: () => void;
}

/**
 * A modal confirmation (`fluent-dialog` of type alert: no light dismiss; Esc cancels), focused on
 * `focus` ("cancel" for destructive questions and likely mistakes). It is added to `host`
 * (default: the document's body, outside any form whose Esc handling would also see its keys)
 * when opened and removed when closed; closing without a button (Esc) counts as cancel.
 */
export function confirmDialog(o: {
  title: string;
  message: string | Node[];
  testid: string;
  confirm: DialogButton & { appearance?: "primary" | "secondary" };
  cancel: DialogButton;
  focus?: "confirm" | "cancel";
  host?: HTMLElement;
}): { el: FluentDialogElement; open(): Promise<void> } {
  const focusCancel = (o.focus ?? "cancel") === "cancel";
  let settled = false;
  const settle = (run?: () => void) => {
    if (settled) return;
    settled = true;
    if (defined("fluent-dialog") && el.dialog?.open) el.hide();
    el.remove();
    run?.();
  };
  const button = (b: DialogButton, appearance: string | null, autofocus: boolean) =>
    h("fluent-button", { type: "button", slot: "action", appearance, autofocus: autofocus ? true : null, "data-testid": b.testid, onclick: () => settle(b.onClick) }, b.label);
  const message = h("p", { class: "dialog-message" }, ...(typeof o.message === "string" ? [o.message] : o.message));
  const el = h(
    "fluent-dialog",
    { type: "alert", "aria-label": o.title },
    h(
      "fluent-dialog-body",
      // The test id is on the body: the host has no box of its own (the dialog is in the top layer).
      { "data-testid": o.testid },
      h("h2", { slot: "title" }, o.title),
      message,
      button(o.confirm, o.confirm.appearance ?? "primary", !focusCancel),
      button(o.cancel, null, focusCancel),
    ),
  );
  // Esc (the dialog's own cancel) closes it without a button: that is "cancel".
  el.addEventListener("toggle", (ev) => {
    // Fluent emits its own "toggle" (a CustomEvent whose detail says the new state).
    const state = (ev as Event as CustomEvent<{ newState?: string } | null>).detail?.newState;
    if (state === "closed") settle(o.cancel.onClick);
  });
  return {
    el,
    async open() {
      // Added only once defined: an undefined dialog would show its content inline.
      await loadFluent();
      await customElements.whenDefined("fluent-dialog");
      if (settled) return;
      (o.host ?? document.body).appendChild(el);
      // The dialog's text is its description (the title is its name).
      if (el.dialog) el.dialog.ariaDescribedByElements = [message];
      el.show();
    },
  };
}
