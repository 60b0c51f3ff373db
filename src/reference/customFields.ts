/**
 * Custom-field values on create and update: validation per the spec's numeric rule
 * (`NUMERIC_CUSTOM_FIELD`), normalisation to a dot-decimal string, and the display-name view
 * used by record and snapshot responses.
 */
import { NUMERIC_CUSTOM_FIELD } from "../contract/contract";
import { normaliseNumeric } from "../contract/customFields";
import type { CompanyDef, RecordData } from "./data";

/** Canonical form of an accepted numeric value (the spec module's `normaliseNumeric`). */
export { normaliseNumeric };

/** A 400 answer of the record endpoints. */
export interface FieldError {
  error: string;
  message: string;
  field?: string;
  value?: unknown;
}

export type CustomFieldResult = { ok: true; values: Record<string, string> } | { ok: false; body: FieldError };

/**
 * Checks a whole `custom_fields` object before anything is saved, so one bad value rejects the
 * request as a whole. Values must be strings (the spec: "display name to string value").
 */
export function validateCustomFields(company: CompanyDef, input: unknown): CustomFieldResult {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, body: { error: "invalid_body", message: "custom_fields must be an object of display name to string value." } };
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    const def = company.customFields.find((f) => f.name === name);
    if (!def) {
      return { ok: false, body: { error: "unknown_custom_field", message: `No custom field named '${name}'.`, field: name } };
    }
    if (typeof value !== "string") {
      return {
        ok: false,
        body: { error: "invalid_custom_field", message: `Custom field '${name}' takes a string value.`, field: name, value },
      };
    }
    if (def.type === "numeric") {
      if (!NUMERIC_CUSTOM_FIELD.test(value)) {
        return {
          ok: false,
          body: {
            error: "invalid_custom_field",
            message: `Custom field '${name}' takes a decimal number with an optional sign and at most two decimal places ('.' or ','); no thousands separators, exponent, spaces or empty value.`,
            field: name,
            value,
          },
        };
      }
      values[name] = normaliseNumeric(value);
    } else {
      values[name] = value;
    }
  }
  return { ok: true, values };
}

/** A record as detail and snapshot responses show it: custom fields as top-level display-name keys. */
export function recordView(company: CompanyDef, rec: RecordData): Record<string, unknown> {
  const out: Record<string, unknown> = {
    project_token: rec.project_token,
    project_name: rec.project_name,
    project_type: rec.project_type,
    status: rec.status,
    start_date: rec.start_date,
  };
  for (const f of company.customFields) out[f.name] = rec.custom[f.name] ?? null;
  return out;
}
