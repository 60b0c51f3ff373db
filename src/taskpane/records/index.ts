/**
 * The Records section of the task pane: open a record, create/update one, and write custom-field
 * edits back from an imported projects/proposals snapshot table.
 *
 * DOM only: every rule (validation, change detection, grouping, refresh order) is in `src/records`;
 * every Excel call is in `src/workbook/writeback.ts`. Test ids are listed in `TESTIDS.md`.
 */
import type { RecordKind } from "../../contract/contract";
import { PpmClient } from "../../service/client";
import type { Connection } from "../../service/connection";
import {
  confirmWriteback,
  describeRecordError,
  fieldIsSent,
  formBody,
  formFieldsFromRecord,
  placeServerError,
  prepareForEditing,
  prepareWriteback,
  recordCredentialsProblem,
  recordSheetRows,
  recordsServiceFrom,
  recordView,
  validateForm,
  type Change,
  type ChangeResult,
  type CustomFieldMeta,
  type RecordForm,
  type RecordsService,
  type RecordView,
  type WritebackBinding,
  type WritebackDeps,
  type WritebackPreview,
} from "../../records";
import { excelWritebackWorkbook, findBinding, selectedRecord, writableBindings, writeRecordSheet } from "../../workbook/writeback";
import { h, replace } from "../dom";
import type { MountRecords, RecordsContext } from "../recordsHost";

const STYLE_ID = "records-style";
const CSS = `
.records-tabs { display: flex; gap: 4px; margin: 0 0 12px; flex-wrap: wrap; }
.records-tabs button[aria-selected="true"] { border-bottom: 2px solid var(--ppm-accent, #107c41); font-weight: 600; }
.records-notice { background: #fff4ce; border-left: 3px solid #c19c00; padding: 8px 10px; margin: 0 0 12px; }
.records-error { color: #a4262c; min-height: 1em; }
.records-ok { color: #107c41; min-height: 1em; }
.records-row { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; margin: 0 0 8px; }
.records-row label { display: flex; flex-direction: column; font-size: 12px; gap: 2px; }
.records-table { border-collapse: collapse; width: 100%; font-size: 12px; margin: 8px 0; }
.records-table th, .records-table td { border-bottom: 1px solid #e0e0e0; padding: 4px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
.records-strong { font-weight: 600; }
.records-value { font-family: Consolas, "Courier New", monospace; white-space: pre-wrap; }
.records-result { font-weight: 600; margin-top: 2px; }
.records-table tr[data-validation="invalid"] td, .records-table tr[data-result="rejected"] td { background: #fde7e9; }
.records-table tr[data-validation="conflict"] td { background: #fff4ce; }
.records-table tr[data-result="saved"] td { background: #dff6dd; }
.records-field-error { color: #a4262c; font-size: 12px; min-height: 1em; }
.records-input-invalid { border-color: #a4262c !important; outline-color: #a4262c; }
.records-muted { color: #616161; font-size: 12px; }
`;

function injectStyle(): void {
  if (document.getElementById(STYLE_ID)) return;
  const style = document.createElement("style");
  style.id = STYLE_ID;
  style.textContent = CSS;
  document.head.appendChild(style);
}

function btn(testid: string, text: string, onclick: () => void, primary = false): HTMLButtonElement {
  return h("button", { type: "button", class: primary ? "button primary" : "button", "data-testid": testid, onclick: () => onclick() }, text);
}

function kindSelect(testid: string): HTMLSelectElement {
  return h("select", { "data-testid": testid }, h("option", { value: "project" }, "Project"), h("option", { value: "proposal" }, "Proposal"));
}

function labelled(text: string, control: HTMLElement): HTMLLabelElement {
  return h("label", {}, text, control);
}

function show(v: string | null): string {
  return v === null ? "(none)" : v === "" ? "(empty)" : v;
}

/** Mounts the Records section. Returns an unmount function. */
export const mountRecords: MountRecords = (container: HTMLElement, ctx: RecordsContext) => {
  injectStyle();
  let fieldCache: { connectionId: string; fields: CustomFieldMeta[] | null } | null = null;

  const connection = (): Connection | null => ctx.getActiveConnection();
  const service = (): RecordsService | null => {
    const c = connection();
    return c && c.token ? recordsServiceFrom(new PpmClient(c)) : null;
  };
  /** Custom-field metadata of the active connection (manifest), cached per connection; null = unavailable. */
  const customFields = async (): Promise<CustomFieldMeta[] | null> => {
    const c = connection();
    if (!c) return null;
    if (fieldCache && fieldCache.connectionId === c.id) return fieldCache.fields;
    let fields: CustomFieldMeta[] | null = null;
    try {
      fields = (await service()?.customFields()) ?? null;
      if (fields && fields.length === 0) fields = null;
    } catch {
      fields = null;
    }
    fieldCache = { connectionId: c.id, fields };
    return fields;
  };
  const errorText = (e: unknown): string => {
    const d = describeRecordError(e);
    return d.action ? `${d.message} ${d.action}` : d.message;
  };
  const maybeTokenUpdate = (e: unknown, host: HTMLElement) => {
    const d = describeRecordError(e);
    const c = connection();
    if (d.code === "unauthorized" && c) host.appendChild(h("button", { type: "button", class: "button small", onclick: () => ctx.requestTokenUpdate(c.id) }, "Update credentials"));
  };

  // ---------------------------------------------------------------- shell
  const notice = h("div", { class: "records-notice", "data-testid": "records-credentials-missing", role: "note" });
  const panels = {
    open: h("div", { "data-testid": "records-panel-open" }),
    form: h("div", { "data-testid": "records-panel-form" }),
    writeback: h("div", { "data-testid": "records-panel-writeback" }),
  };
  const tabButtons = {
    open: btn("records-tab-open", "Open", () => selectTab("open")),
    form: btn("records-tab-form", "Create / edit", () => selectTab("form")),
    writeback: btn("records-tab-writeback", "Write back from sheet", () => selectTab("writeback")),
  };
  function selectTab(name: keyof typeof panels): void {
    for (const k of Object.keys(panels) as (keyof typeof panels)[]) {
      panels[k].hidden = k !== name;
      tabButtons[k].setAttribute("aria-selected", String(k === name));
    }
    if (name === "writeback") void loadTables();
  }
  const root = h(
    "section",
    { class: "records", "data-testid": "records-root" },
    notice,
    h("div", { class: "records-tabs", role: "tablist" }, tabButtons.open, tabButtons.form, tabButtons.writeback),
    panels.open,
    panels.form,
    panels.writeback,
  );

  const credsProblem = (): string | null => recordCredentialsProblem(connection());
  function renderNotice(): void {
    const p = credsProblem();
    notice.hidden = p === null;
    notice.textContent = p ?? "";
    if (p === null) notice.remove();
    else if (!notice.isConnected) root.insertBefore(notice, root.firstChild);
    submit.disabled = p !== null || submit.dataset.invalid === "true";
    updateConfirm();
  }

  // ---------------------------------------------------------------- open a record
  const openKind = kindSelect("records-open-kind");
  const openToken = h("input", { type: "text", "data-testid": "records-open-token", placeholder: "project_token", autocomplete: "off", spellcheck: "false" });
  const openError = h("div", { class: "records-error", "data-testid": "records-open-error", role: "alert" });
  const viewHost = h("div");
  let currentView: RecordView | null = null;

  async function openRecord(): Promise<void> {
    openError.textContent = "";
    replace(viewHost);
    const token = openToken.value.trim();
    if (!token) return void (openError.textContent = "Enter a project_token, or select a row of an imported projects/proposals table and use “From selection”.");
    const p = credsProblem();
    const svc = service();
    if (p || !svc) return void (openError.textContent = p ?? "No connection.");
    const kind = openKind.value as RecordKind;
    try {
      ctx.notify(`Opening ${kind} ${token}…`);
      const data = await svc.getRecord(kind, token);
      currentView = recordView(kind, data, await customFields());
      renderView(currentView);
      ctx.notify(`Opened ${kind} ${token}.`);
    } catch (e) {
      openError.textContent = errorText(e);
      maybeTokenUpdate(e, openError);
    }
  }

  function renderView(view: RecordView): void {
    const rows = view.fields.map((f) =>
      h(
        "tr",
        { "data-testid": "records-view-field", "data-field": f.name, "data-custom": f.custom ? "true" : null },
        h("th", { scope: "row" }, f.name, f.custom ? h("span", { class: "records-muted" }, " (custom)") : null),
        h("td", { "data-testid": "records-view-value" }, show(f.value)),
      ),
    );
    const copyStatus = h("div", { class: "records-muted", role: "status" });
    replace(
      viewHost,
      h(
        "div",
        { "data-testid": "records-view" },
        h("table", { class: "records-table" }, h("tbody", {}, ...rows)),
        h(
          "div",
          { class: "actions" },
          btn("records-view-copy", "Copy to sheet", async () => {
            try {
              const name = await ctx.runExcel((c) => writeRecordSheet(c, view.token ?? view.kind, recordSheetRows(view)));
              copyStatus.textContent = `Copied to sheet ${name}.`;
            } catch (e) {
              copyStatus.textContent = `Could not copy: ${errorText(e)}`;
            }
          }),
          btn("records-view-edit", "Edit custom fields", () => {
            void startForm("update", view);
          }),
        ),
        copyStatus,
      ),
    );
  }

  replace(
    panels.open,
    h(
      "div",
      { class: "records-row" },
      labelled("Kind", openKind),
      labelled("project_token", openToken),
      btn("records-open-from-selection", "From selection", async () => {
        openError.textContent = "";
        try {
          const r = await ctx.runExcel((c) => selectedRecord(c));
          if (!r.record) return void (openError.textContent = r.reason ?? "No record under the selection.");
          openToken.value = r.record.projectToken;
          openKind.value = r.record.kind;
        } catch (e) {
          openError.textContent = errorText(e);
        }
      }),
      btn("records-open-submit", "Open", () => void openRecord(), true),
    ),
    openError,
    viewHost,
  );
  openToken.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") void openRecord();
  });

  // ---------------------------------------------------------------- create / update form
  const formKind = kindSelect("records-form-kind");
  const formMode = h("select", { "data-testid": "records-form-mode" }, h("option", { value: "create" }, "Create new"), h("option", { value: "update" }, "Update existing"));
  const formToken = h("input", { type: "text", "data-testid": "records-form-token", placeholder: "project_token", autocomplete: "off", spellcheck: "false" });
  const formTokenLabel = labelled("project_token", formToken);
  const fieldsHost = h("div");
  const formError = h("div", { class: "records-error", "data-testid": "records-form-error", role: "alert" });
  const formResult = h("div", { class: "records-ok", "data-testid": "records-form-result", role: "status" });
  const newName = h("input", { type: "text", "data-testid": "records-form-new-field-name", placeholder: "Custom field display name" });
  const newNumeric = h("input", { type: "checkbox", "data-testid": "records-form-new-field-numeric" });
  const submit = h("button", { type: "button", class: "button primary", "data-testid": "records-form-submit" }, "Save");
  let form: RecordForm = { kind: "project", mode: "create", token: "", fields: [] };
  const inputs = new Map<string, { input: HTMLInputElement; error: HTMLElement }>();
  let serverFieldErrors: Record<string, string> = {};

  function renderFields(): void {
    inputs.clear();
    const blocks = form.fields.map((f) => {
      const input = h("input", { type: "text", "data-testid": "records-form-field", "data-field": f.name, "data-numeric": f.numeric ? "true" : null, value: f.value, autocomplete: "off", spellcheck: "false" });
      const error = h("div", { class: "records-field-error", "data-testid": "records-form-field-error", "data-field": f.name, role: "alert" });
      input.addEventListener("input", () => {
        f.value = input.value;
        delete serverFieldErrors[f.name];
        formResult.textContent = "";
        revalidate();
      });
      inputs.set(f.name, { input, error });
      const hint = f.numeric ? "Number: optional sign, at most two decimals with . or , (e.g. -1250.5)" : f.numeric === false ? "Text" : "";
      return h("div", { class: "field" }, h("label", {}, f.name, hint ? h("span", { class: "records-muted" }, ` · ${hint}`) : null, input), error);
    });
    replace(fieldsHost, ...(blocks.length ? blocks : [h("p", { class: "records-muted" }, "No custom fields known for this connection; add them by display name below.")]));
    revalidate();
  }

  function revalidate(): void {
    form.kind = formKind.value as RecordKind;
    form.mode = formMode.value as RecordForm["mode"];
    form.token = formToken.value;
    formTokenLabel.hidden = form.mode !== "update";
    const v = validateForm(form);
    for (const f of form.fields) {
      const io = inputs.get(f.name);
      if (!io) continue;
      const msg = v.fields[f.name] ?? serverFieldErrors[f.name] ?? "";
      io.error.textContent = msg;
      io.input.classList.toggle("records-input-invalid", msg !== "");
      io.input.setAttribute("aria-invalid", String(msg !== ""));
    }
    const invalid = Object.keys(v.fields).length > 0 || v.form !== null;
    submit.dataset.invalid = String(invalid);
    submit.disabled = invalid || credsProblem() !== null;
    formError.textContent = v.form && v.form !== "Nothing changed yet." ? v.form : formError.dataset.server ?? "";
  }

  async function startForm(mode: RecordForm["mode"], view?: RecordView, focus = true): Promise<void> {
    if (focus) selectTab("form");
    formMode.value = mode;
    formResult.textContent = "";
    formError.textContent = "";
    delete formError.dataset.server;
    serverFieldErrors = {};
    if (view) {
      formKind.value = view.kind;
      formToken.value = view.token ?? "";
      form = { kind: view.kind, mode, token: view.token ?? "", fields: formFieldsFromRecord(view) };
    } else {
      const meta = (await customFields()) ?? [];
      form = { kind: formKind.value as RecordKind, mode, token: formToken.value, fields: meta.map((m) => ({ name: m.name, numeric: m.numeric, value: "", initial: null })) };
    }
    renderFields();
  }

  async function loadForUpdate(): Promise<void> {
    const svc = service();
    const token = formToken.value.trim();
    if (!svc || !token) return void (formError.textContent = credsProblem() ?? "Enter the project_token of the record to update.");
    try {
      const data = await svc.getRecord(formKind.value as RecordKind, token);
      await startForm("update", recordView(formKind.value as RecordKind, data, await customFields()));
    } catch (e) {
      formError.textContent = errorText(e);
    }
  }

  submit.addEventListener("click", async () => {
    revalidate();
    if (submit.disabled) return;
    const svc = service();
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
          f.initial = typeof stored === "string" ? stored : stored === null || stored === undefined ? null : String(stored);
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
      maybeTokenUpdate(e, formError);
    } finally {
      revalidate();
    }
  });

  for (const el of [formKind, formMode, formToken]) el.addEventListener("input", () => revalidate());
  formMode.addEventListener("change", () => void startForm(formMode.value as RecordForm["mode"]));
  formKind.addEventListener("change", () => {
    if (formMode.value === "update") void startForm("update");
  });

  replace(
    panels.form,
    h("div", { class: "records-row" }, labelled("Kind", formKind), labelled("Action", formMode), formTokenLabel, btn("records-form-load", "Load", () => void loadForUpdate())),
    fieldsHost,
    h(
      "div",
      { class: "records-row" },
      labelled("Add a custom field", newName),
      h("label", {}, "Numeric", newNumeric),
      btn("records-form-add-field", "Add", () => {
        const name = newName.value.trim();
        if (!name || form.fields.some((f) => f.name === name)) return;
        form.fields.push({ name, numeric: newNumeric.checked, value: "", initial: null });
        newName.value = "";
        renderFields();
      }),
    ),
    h("div", { class: "actions" }, submit),
    formError,
    formResult,
  );

  // ---------------------------------------------------------------- write-back
  const wbTable = h("select", { "data-testid": "records-wb-table" });
  const wbStatus = h("div", { class: "records-muted", "data-testid": "records-wb-status", role: "status" });
  const wbWarnings = h("div");
  const wbPreviewHost = h("div");
  const wbSummary = h("div", { "data-testid": "records-wb-summary" });
  const wbRefresh = h("div", { "data-testid": "records-wb-refresh", role: "status" });
  const confirm = h("button", { type: "button", class: "button primary", "data-testid": "records-wb-confirm", disabled: true }, "Send changes");
  const cancel = btn("records-wb-cancel", "Discard preview", () => clearPreview());
  let bindings: WritebackBinding[] = [];
  let preview: WritebackPreview | null = null;
  let busy = false;
  const rowsByChange = new Map<Change, HTMLTableRowElement>();

  function updateConfirm(): void {
    confirm.disabled = busy || !preview || preview.recordsToUpdate === 0 || credsProblem() !== null;
  }

  async function loadTables(): Promise<void> {
    try {
      bindings = await ctx.runExcel((c) => writableBindings(c));
    } catch (e) {
      wbStatus.textContent = `Could not read the workbook's tables: ${errorText(e)}`;
      bindings = [];
    }
    const keep = wbTable.value;
    replace(wbTable, ...bindings.map((b) => h("option", { value: b.id }, `${b.tableName} (${b.source.kind === "snapshot" ? b.source.endpoint : ""})`)));
    if (bindings.some((b) => b.id === keep)) wbTable.value = keep;
    if (bindings.length === 0) wbStatus.textContent = "No imported projects or proposals snapshot table in this workbook. Import one under Snapshots first.";
  }

  function selectedBinding(): WritebackBinding | null {
    return bindings.find((b) => b.id === wbTable.value) ?? null;
  }

  function deps(): WritebackDeps | null {
    const svc = service();
    if (!svc) return null;
    return {
      client: svc,
      workbook: excelWritebackWorkbook(ctx.runExcel),
      customFields,
      refresh: async (b) => {
        const out = await ctx.refreshTables([b.id]);
        const fresh = await ctx.runExcel((c) => findBinding(c, b.id));
        if (fresh) bindings = bindings.map((x) => (x.id === fresh.id ? fresh : x));
        const outcome = out.failed > 0 ? "failed" : out.updated > 0 ? "updated" : "unchanged";
        return { outcome, message: out.failures.join("; ") || undefined, binding: fresh ?? undefined };
      },
    };
  }

  function clearPreview(): void {
    preview = null;
    rowsByChange.clear();
    replace(wbPreviewHost);
    replace(wbWarnings);
    wbSummary.textContent = "";
    updateConfirm();
  }

  function validationText(c: Change): string {
    const v = c.validation;
    if (v.status === "valid") return v.warning ? `OK · ${v.warning}` : "OK";
    return v.message;
  }

  function renderPreview(p: WritebackPreview): void {
    rowsByChange.clear();
    replace(wbWarnings, ...p.warnings.map((w) => h("div", { class: "records-notice", "data-testid": "records-wb-warning" }, w)));
    const notes = p.notes.map((n) => h("li", { "data-testid": "records-wb-note" }, n.sheetRow ? `Row ${n.sheetRow}: ${n.message}` : n.message));
    const rows = p.changes.map((c) => {
      const tr = h(
        "tr",
        { "data-testid": "records-wb-change", "data-row": c.row, "data-token": c.projectToken, "data-field": c.field, "data-validation": c.validation.status, "data-result": c.validation.status === "valid" ? "pending" : "not-sent" },
        h("td", {}, h("div", { class: "records-strong" }, c.field), h("div", { class: "records-muted" }, `Row ${c.sheetRow ?? c.row} · ${c.projectToken}`)),
        h("td", {}, h("span", { "data-testid": "records-wb-change-old", class: "records-value" }, show(c.old)), " → ", h("span", { "data-testid": "records-wb-change-new", class: "records-value" }, show(c.new))),
        h(
          "td",
          {},
          h("div", { "data-testid": "records-wb-change-check" }, validationText(c)),
          h("div", { "data-testid": "records-wb-change-result", class: "records-result" }, c.validation.status === "valid" ? "Pending" : "Not sent"),
        ),
      );
      rowsByChange.set(c, tr);
      return tr;
    });
    const valid = p.changes.filter((c) => c.validation.status === "valid").length;
    const other = p.changes.length - valid;
    wbSummary.textContent =
      p.changes.length === 0
        ? "No changed custom-field cells."
        : `${valid} valid change${valid === 1 ? "" : "s"} in ${p.recordsToUpdate} record${p.recordsToUpdate === 1 ? "" : "s"}${other ? `, ${other} not sendable (invalid, conflict or ignored)` : ""}.`;
    wbSummary.dataset.valid = String(valid);
    wbSummary.dataset.invalid = String(p.changes.filter((c) => c.validation.status === "invalid").length);
    wbSummary.dataset.conflict = String(p.changes.filter((c) => c.validation.status === "conflict").length);
    replace(
      wbPreviewHost,
      notes.length ? h("ul", { class: "records-muted" }, ...notes) : null,
      p.changes.length
        ? h(
            "table",
            { class: "records-table", "data-testid": "records-wb-preview" },
            h("thead", {}, h("tr", {}, ...["Cell", "Old → new", "Check · result"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, ...rows),
          )
        : null,
    );
    updateConfirm();
  }

  function resultText(r: ChangeResult): string {
    if (r.status === "saved") return r.stored !== null ? `Saved (service holds ${show(r.stored)})` : "Saved";
    return r.message;
  }

  async function guarded(label: string, work: () => Promise<void>): Promise<void> {
    if (busy) return;
    busy = true;
    updateConfirm();
    wbStatus.textContent = label;
    try {
      await work();
    } catch (e) {
      wbStatus.textContent = errorText(e);
    } finally {
      busy = false;
      updateConfirm();
    }
  }

  const prepare = btn("records-wb-prepare", "Start editing", () =>
    guarded("Getting the table ready for editing…", async () => {
      const b = selectedBinding();
      const d = deps();
      if (!b || !d) return void (wbStatus.textContent = b ? credsProblem() ?? "No connection." : "Choose a table first.");
      clearPreview();
      wbRefresh.textContent = "";
      const r = await prepareForEditing(d, b);
      if (!r.ready) {
        preview = r.preview;
        renderPreview(r.preview);
        wbStatus.textContent = "Some cells already differ from what was imported; send or discard them first (refresh the table to discard).";
        return;
      }
      replace(wbWarnings, ...r.warnings.map((w) => h("div", { class: "records-notice", "data-testid": "records-wb-warning" }, w)));
      wbStatus.textContent = `Ready: edit custom-field cells in ${b.tableName}, then choose “Detect changes”.${r.textColumns.length ? ` (${r.textColumns.join(", ")} ${r.textColumns.length === 1 ? "now holds" : "now hold"} text, so what you type is sent exactly as typed.)` : ""}`;
      wbStatus.dataset.state = "ready";
    }),
  );

  const detect = btn("records-wb-detect", "Detect changes", () =>
    guarded("Comparing the sheet with what was imported…", async () => {
      const b = selectedBinding();
      const d = deps();
      if (!b || !d) return void (wbStatus.textContent = b ? credsProblem() ?? "No connection." : "Choose a table first.");
      wbRefresh.textContent = "";
      preview = await prepareWriteback(d, b);
      renderPreview(preview);
      wbStatus.textContent = preview.changes.length ? "Check the changes, then send them." : "Nothing to send.";
      wbStatus.dataset.state = "preview";
    }),
  );

  confirm.addEventListener("click", () =>
    void guarded("Sending…", async () => {
      const p = preview;
      const d = deps();
      if (!p || !d) return;
      const done = await confirmWriteback(d, p, { onProgress: (t) => (wbStatus.textContent = t) });
      for (const o of done.outcomes) {
        const tr = rowsByChange.get(o.change);
        if (!tr) continue;
        tr.dataset.result = o.result.status;
        const cell = tr.querySelector<HTMLElement>('[data-testid="records-wb-change-result"]');
        // An unsendable change's reason is already in the check line; do not repeat it.
        if (cell) cell.textContent = o.result.status === "not-sent" && o.change.validation.status !== "valid" ? "Not sent" : resultText(o.result);
      }
      const s = done.summary;
      wbSummary.textContent = `${s.saved} saved in ${s.records} record${s.records === 1 ? "" : "s"}, ${s.rejected} rejected by the service, ${s.notSent} not sent.`;
      wbSummary.dataset.saved = String(s.saved);
      wbSummary.dataset.rejected = String(s.rejected);
      wbSummary.dataset.notSent = String(s.notSent);
      const r = done.refresh;
      wbRefresh.dataset.outcome = r ? r.outcome : "none";
      wbRefresh.textContent = !r
        ? "Nothing was saved, so the table was not refreshed; your edits are still in the sheet."
        : r.outcome === "failed"
          ? `Saved, but the table could not be refreshed: ${r.message ?? "unknown reason"}. Refresh it later to see the service's values.`
          : `Table refreshed from the service (${r.outcome}).${done.baselineWarning ? ` ${done.baselineWarning}` : ""}`;
      wbStatus.textContent = "Done.";
      wbStatus.dataset.state = "done";
      ctx.notify(wbSummary.textContent);
      preview = null;
    }),
  );

  replace(
    panels.writeback,
    h("p", { class: "records-muted" }, "Edit custom fields in an imported projects or proposals snapshot table, then send only the changed cells. Each record is updated with one request; the table is refreshed afterwards."),
    h("div", { class: "records-row" }, labelled("Table", wbTable), btn("records-wb-reload", "Reload", () => void loadTables())),
    h("div", { class: "actions" }, prepare, detect),
    wbStatus,
    wbWarnings,
    wbPreviewHost,
    wbSummary,
    h("div", { class: "actions" }, confirm, cancel),
    wbRefresh,
  );

  // ---------------------------------------------------------------- mount
  replace(container, root);
  selectTab("open");
  void startForm("create", undefined, false);
  renderNotice();
  const off = ctx.onConnectionChange(() => {
    fieldCache = null;
    renderNotice();
    revalidate();
  });
  return () => {
    off();
    container.replaceChildren();
  };
};
