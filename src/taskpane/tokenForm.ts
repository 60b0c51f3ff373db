/** The "Update token" form, shared by the connection list and the error panels (its own module so neither imports the other). */
import { h } from "./dom";
import type { PaneContext } from "./context";
import { focusControl, setInvalid, textInput } from "./controls";

/** The "Update token" form for one connection; used by the connection list and by error panels. */
export function tokenForm(ctx: PaneContext, connectionId: string, onSaved: () => void, onClose: () => void): HTMLFormElement {
  const name = ctx.store.get(connectionId)?.name ?? connectionId;
  const input = textInput({ label: `New company API token for ${name}`, type: "password", testid: "token-input", spellcheck: false, required: true });
  const err = h("div", { class: "field-error", role: "alert", "data-testid": "token-error" });
  const form = h(
    "form",
    { class: "token-form", "data-testid": "token-form", "data-connection-id": connectionId, "aria-label": `New token for ${name}` },
    h("div", { class: "field" }, input),
    err,
    h(
      "div",
      { class: "actions" },
      // A Fluent submit button: Enter in the field submits through it.
      h("fluent-button", { type: "submit", appearance: "primary", "data-testid": "token-save" }, "Save token"),
      h("fluent-button", { type: "button", "data-testid": "token-cancel", onclick: () => onClose() }, "Cancel"),
    ),
  );
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") onClose();
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    try {
      ctx.store.setToken(connectionId, input.value);
    } catch (e) {
      err.textContent = (e as Error).message;
      setInvalid(input, true);
      focusControl(input);
      return;
    }
    input.value = "";
    ctx.changed("credentials");
    ctx.status(`Token updated for ${name}.`);
    onClose();
    onSaved();
  });
  queueMicrotask(() => focusControl(input));
  return form;
}
