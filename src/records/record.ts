/**
 * One record in the task pane: its read-only view, the create/update form's rules, and the small
 * table "copy to sheet" writes. Pure: the UI renders these, the adapter writes them.
 */
import type { RecordKind } from "../contract/contract";
import type { RecordBody, RecordData, RecordErrorInfo } from "./client";
import { TOKEN_COLUMN, type CustomFieldMeta } from "./fields";
import { explainNumericProblem, serviceValueText } from "./values";

/** One field of a record as shown. */
export interface RecordFieldView {
  name: string;
  /** Display text; null = no value (shown as empty). */
  value: string | null;
  custom: boolean;
  numeric: boolean | null;
}

export interface RecordView {
  kind: RecordKind;
  token: string | null;
  fields: RecordFieldView[];
}

/**
 * The view of a record: `project_token` first, then the other fields in the service's order. A
 * field counts as custom when the custom-field metadata lists it; with no metadata, none is marked
 * (the record itself does not say which keys are custom fields).
 */
export function recordView(kind: RecordKind, data: RecordData, fields: readonly CustomFieldMeta[] | null): RecordView {
  const meta = new Map((fields ?? []).map((f) => [f.name, f]));
  const names = Object.keys(data).sort((a, b) => (a === TOKEN_COLUMN ? -1 : b === TOKEN_COLUMN ? 1 : 0));
  const token = typeof data[TOKEN_COLUMN] === "string" ? (data[TOKEN_COLUMN]) : null;
  return {
    kind,
    token,
    fields: names.map((name) => {
      const m = meta.get(name);
      return { name, value: serviceValueText(data[name]), custom: !!m, numeric: m ? m.numeric : null };
    }),
  };
}

/** Rows written by "copy to sheet": a header and one row per field, all text. */
export function recordSheetRows(view: RecordView): string[][] {
  return [["Field", "Value", "Custom field"], ...view.fields.map((f) => [f.name, f.value ?? "", f.custom ? "yes" : ""])];
}

/** A field in the create/update form. */
export interface FormField {
  name: string;
  numeric: boolean | null;
  /** What the user typed. */
  value: string;
  /** The record's value when the form was opened for an update (null = none). */
  initial: string | null;
}

export interface RecordForm {
  kind: RecordKind;
  mode: "create" | "update";
  /** Target record (update). */
  token: string;
  fields: FormField[];
}

/** Whether a field takes part in the request: in create mode when filled, in update mode when changed. */
export function fieldIsSent(form: Pick<RecordForm, "mode">, f: FormField): boolean {
  if (form.mode === "create") return f.value !== "";
  return f.value !== (f.initial ?? "");
}

/**
 * Live validation of the form: a message per field that would be sent and breaks the numeric rule,
 * plus a form-level message (missing token, nothing to send). Runs on every keystroke.
 */
export function validateForm(form: RecordForm): { fields: Record<string, string>; form: string | null } {
  const errors: Record<string, string> = {};
  for (const f of form.fields) {
    if (!fieldIsSent(form, f) || !f.numeric) continue;
    const p = explainNumericProblem(f.value);
    if (p) errors[f.name] = f.value === "" ? "A numeric field cannot be cleared through the service: it rejects empty values." : p;
  }
  let formError: string | null = null;
  if (form.mode === "update" && form.token.trim() === "") formError = "Enter the project_token of the record to update.";
  else if (form.mode === "update" && !form.fields.some((f) => fieldIsSent(form, f))) formError = "Nothing changed yet.";
  return { fields: errors, form: formError };
}

/** The request body: `custom_fields` with the fields that are sent (see {@link fieldIsSent}). */
export function formBody(form: RecordForm): RecordBody {
  const custom: Record<string, string> = {};
  for (const f of form.fields) if (fieldIsSent(form, f)) custom[f.name] = f.value;
  return Object.keys(custom).length ? { custom_fields: custom } : {};
}

/** Form fields for editing a loaded record: its custom fields (known from metadata) with their values. */
export function formFieldsFromRecord(view: RecordView): FormField[] {
  return view.fields.filter((f) => f.custom).map((f) => ({ name: f.name, numeric: f.numeric, value: f.value ?? "", initial: f.value }));
}

/** Places a service error: next to the field it names when that field is on the form, else at form level. */
export function placeServerError(err: RecordErrorInfo, fieldNames: readonly string[]): { fields: Record<string, string>; form: string | null } {
  if (err.field && fieldNames.includes(err.field)) return { fields: { [err.field]: `The service refused this value: ${err.message}` }, form: null };
  const action = err.action ? ` ${err.action}` : "";
  return { fields: {}, form: `${err.message}${action}` };
}
