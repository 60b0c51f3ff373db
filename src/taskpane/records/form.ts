/** The "Create / edit" screen: a record's custom fields as a form, validated as typed, saved with one POST or PUT. */
import type { RecordKind } from "../../contract/contract";
import { describeRecordError, fieldIsSent, formBody, formFieldsFromRecord, placeServerError, recordView, validateForm, type RecordForm, type RecordView } from "../../records";
import { h, replace } from "../dom";
import { btn, kindSelect, selectField, type RecordsScreenContext } from "./common";
import { checkbox, isChecked, selectValue, setInvalid, setSelectValue, textInput, withHint } from "../controls";

export interface FormScreenHooks {
  /** Brings this screen's tab to the front. */
  select(): void;
}

export interface FormScreen {
  /** Starts a new form: empty (known custom fields) or from a record; brings the tab forward unless `focus` is false. */
  start(mode: RecordForm["mode"], view?: RecordView, focus?: boolean): Promise<void>;
  /** Re-validates the form and updates its messages and the Save button. */
  revalidate(): void;
  /** The credentials notice changed: Save is allowed only with usable record credentials. */
  credentialsChanged(problem: string | null): void;
}

/** Renders the Create / edit screen into `panel`. */
export function mountFormScreen(panel: HTMLElement, s: RecordsScreenContext, hooks: FormScreenHooks): FormScreen {
  const { ctx } = s;
  const kind = kindSelect("records-form-kind");
  const formKind = kind.control;
  const mode = selectField("Action", "records-form-mode", [
    { value: "create", label: "Create new" },
    { value: "update", label: "Update existing" },
  ]);
  const formMode = mode.control;
  const formToken = textInput({ label: "project_token", testid: "records-form-token", placeholder: "project_token", spellcheck: false });
  const formTokenLabel = formToken;
  const fieldsHost = h("div");
  const formError = h("div", { class: "records-error", "data-testid": "records-form-error", role: "alert" });
  const formResult = h("div", { class: "records-ok", "data-testid": "records-form-result", role: "status" });
  const newName = textInput({ label: "Add a custom field", testid: "records-form-new-field-name", placeholder: "Custom field display name" });
  const newNumeric = checkbox({ label: "Numeric", testid: "records-form-new-field-numeric" });
  const submit = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "records-form-submit" }, "Save");
  let form: RecordForm = { kind: "project", mode: "create", token: "", fields: [] };
  const inputs = new Map<string, { input: FluentTextInputElement; error: HTMLElement }>();
  let serverFieldErrors: Record<string, string> = {};

  function renderFields(): void {
    inputs.clear();
    const blocks = form.fields.map((f) => {
      const input = textInput({ label: f.name, testid: "records-form-field", data: { field: f.name, ...(f.numeric ? { numeric: "true" } : {}) }, value: f.value, spellcheck: false });
      const error = h("div", { class: "records-field-error", "data-testid": "records-form-field-error", "data-field": f.name, role: "alert" });
      input.addEventListener("input", () => {
        f.value = input.value;
        delete serverFieldErrors[f.name];
        formResult.textContent = "";
        revalidate();
      });
      inputs.set(f.name, { input, error });
      const hint = f.numeric ? "Number: optional sign, at most two decimals with . or , (e.g. -1250.5)" : f.numeric === false ? "Text" : "";
      return h("div", {}, withHint(input, hint || undefined), error);
    });
    replace(fieldsHost, ...(blocks.length ? blocks : [h("p", { class: "records-muted" }, "No custom fields known for this connection; add them by display name below.")]));
    revalidate();
  }

  function revalidate(): void {
    form.kind = selectValue(formKind) as RecordKind;
    form.mode = selectValue(formMode) as RecordForm["mode"];
    form.token = formToken.value;
    formTokenLabel.hidden = form.mode !== "update";
    const v = validateForm(form);
    for (const f of form.fields) {
      const io = inputs.get(f.name);
      if (!io) continue;
      const msg = v.fields[f.name] ?? serverFieldErrors[f.name] ?? "";
      io.error.textContent = msg;
      setInvalid(io.input, msg !== "");
    }
    const invalid = Object.keys(v.fields).length > 0 || v.form !== null;
    submit.dataset.invalid = String(invalid);
    submit.disabled = invalid || s.credsProblem() !== null;
    formError.textContent = v.form && v.form !== "Nothing changed yet." ? v.form : formError.dataset.server ?? "";
  }

  async function start(mode: RecordForm["mode"], view?: RecordView, focus = true): Promise<void> {
    if (focus) hooks.select();
    setSelectValue(formMode, mode);
    formResult.textContent = "";
    formError.textContent = "";
    delete formError.dataset.server;
    serverFieldErrors = {};
    if (view) {
      setSelectValue(formKind, view.kind);
      formToken.value = view.token ?? "";
      form = { kind: view.kind, mode, token: view.token ?? "", fields: formFieldsFromRecord(view) };
    } else {
      const meta = (await s.customFields()) ?? [];
      form = { kind: selectValue(formKind) as RecordKind, mode, token: formToken.value, fields: meta.map((m) => ({ name: m.name, numeric: m.numeric, value: "", initial: null })) };
    }
    renderFields();
  }

  async function loadForUpdate(): Promise<void> {
    const svc = s.service();
    const token = formToken.value.trim();
    if (!svc || !token) return void (formError.textContent = s.credsProblem() ?? "Enter the project_token of the record to update.");
    try {
      const kindNow = selectValue(formKind) as RecordKind;
      const data = await svc.getRecord(kindNow, token);
      await start("update", recordView(kindNow, data, await s.customFields()));
    } catch (e) {
      formError.textContent = s.errorText(e);
    }
  }

  async function save(): Promise<void> {
    revalidate();
    if (submit.disabled) return;
    const svc = s.service();
    if (!svc) return;
    formError.textContent = "";
    delete formError.dataset.server;
    formResult.textContent = "";
    serverFieldErrors = {};
    submit.disabled = true;
    try {
      const body = formBody(form);
      if (form.mode === "create") {
        const rec = await svc.createRecord(form.kind, body);
        const token = typeof rec.project_token === "string" ? rec.project_token : "";
        // Empty the form so a second click cannot create a duplicate by accident.
        for (const f of form.fields) f.value = "";
        renderFields();
        formResult.textContent = `Created ${form.kind} ${token}.`;
        formResult.dataset.token = token;
        ctx.notify(formResult.textContent);
      } else {
        const rec = await svc.updateRecord(form.kind, form.token.trim(), body);
        // Show what the service stored (it normalises numbers, e.g. "12,5" → "12.5").
        for (const f of form.fields) {
          if (!fieldIsSent(form, f)) continue;
          const stored = rec[f.name];
          f.initial = typeof stored === "string" ? stored : stored === null || stored === undefined ? null : typeof stored === "number" || typeof stored === "boolean" ? String(stored) : JSON.stringify(stored);
          f.value = f.initial ?? "";
        }
        renderFields();
        formResult.textContent = `Saved ${form.kind} ${form.token.trim()}.`;
        ctx.notify(formResult.textContent);
      }
    } catch (e) {
      const placed = placeServerError(describeRecordError(e), form.fields.map((f) => f.name));
      serverFieldErrors = placed.fields;
      if (placed.form) formError.dataset.server = placed.form;
      revalidate();
      s.maybeTokenUpdate(e, formError);
    } finally {
      revalidate();
    }
  }
  submit.addEventListener("click", () => void save());

  formToken.addEventListener("input", () => revalidate());
  formMode.addEventListener("change", () => void start(selectValue(formMode) as RecordForm["mode"]));
  formKind.addEventListener("change", () => {
    if (selectValue(formMode) === "update") void start("update");
    else revalidate();
  });

  replace(
    panel,
    h("div", { class: "records-row" }, kind.field, mode.field, formTokenLabel, btn("records-form-load", "Load", () => void loadForUpdate())),
    fieldsHost,
    h(
      "div",
      { class: "records-row" },
      newName,
      newNumeric.row,
      btn("records-form-add-field", "Add", () => {
        const name = newName.value.trim();
        if (!name || form.fields.some((f) => f.name === name)) return;
        form.fields.push({ name, numeric: isChecked(newNumeric.box), value: "", initial: null });
        newName.value = "";
        renderFields();
      }),
    ),
    h("div", { class: "actions" }, submit),
    formError,
    formResult,
  );

  return {
    start,
    revalidate,
    credentialsChanged: (problem) => {
      submit.disabled = problem !== null || submit.dataset.invalid === "true";
    },
  };
}
