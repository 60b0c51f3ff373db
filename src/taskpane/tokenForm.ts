/** The "Update token" form, shared by the connection list and the error panels (its own module so neither imports the other). */
import { h } from "./dom";
import type { PaneContext } from "./context";
import { focusControl, setInvalid, textInput } from "./controls";
import { checkToken, refusedText, type TokenCheck } from "./checkToken";

/** The "Update token" form for one connection; used by the connection list and by error panels. */
export function tokenForm(ctx: PaneContext, connectionId: string, onSaved: (check: TokenCheck) => void, onClose: () => void): HTMLFormElement {
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
  const fail = (message: string) => {
    err.textContent = message;
    setInvalid(input, true);
    focusControl(input);
  };
  let checking = false;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!checking) void save();
  });
  /** The service is asked first (issue #37): a token it refuses is not stored over the one there is. */
  const save = async (): Promise<void> => {
    err.textContent = "";
    setInvalid(input, false);
    const meta = ctx.store.get(connectionId);
    if (!meta) return fail("This connection no longer exists on this device.");
    if (input.value.trim() === "") return fail("Enter the new company API token.");
    let check: TokenCheck;
    checking = true;
    form.dataset.checking = "true";
    try {
      check = await checkToken(ctx, ctx.store.candidate({ id: connectionId, name: meta.name, baseUrl: meta.baseUrl, token: input.value }));
    } catch (e) {
      return fail((e as Error).message);
    } finally {
      checking = false;
      delete form.dataset.checking;
    }
    if (check.state === "refused") return fail(refusedText(meta.baseUrl));
    try {
      ctx.store.setToken(connectionId, input.value);
    } catch (e) {
      return fail((e as Error).message);
    }
    input.value = "";
    if (check.state === "accepted" && check.companyId !== null) ctx.store.setCompanyId(connectionId, check.companyId);
    ctx.changed("credentials");
    ctx.status(check.state === "unchecked" ? `Token saved for ${name}, but not checked: ${check.view.title}.` : `Token updated for ${name}.`);
    onClose();
    onSaved(check);
  };
  queueMicrotask(() => focusControl(input));
  return form;
}
