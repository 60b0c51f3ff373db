/**
 * Which columns of a snapshot are custom fields, and which of those are numeric.
 *
 * The spec says custom fields are keyed by display name and appear as top-level keys of detail and
 * snapshot rows, but record and snapshot responses carry no metadata saying which keys those are.
 * The only place the spec puts custom-field metadata is the reporting manifest ("custom-field
 * metadata includes the publication time and the unresolved pending changes"). The reference
 * service puts it in each dataset's `published_schema.custom_fields` as `{ name, type }`
 * (REFERENCE CHOICE); we read it loosely and never require `type`.
 */
import type { Column } from "../table/model";

/** One custom field as the records features use it. */
export interface CustomFieldMeta {
  /** Display name: the key in `custom_fields` and the column name in snapshot rows. */
  name: string;
  /** true = the spec's numeric rule applies; false = text; null = not known (the service decides). */
  numeric: boolean | null;
}

/** Maps a loosely-typed type name to numeric / text / unknown. */
export function numericFromTypeName(type: unknown): boolean | null {
  if (typeof type !== "string") return null;
  const t = type.toLowerCase();
  if (/numeric|number|decimal|double|float|int|currency|money/.test(t)) return true;
  if (/text|string|char|code/.test(t)) return false;
  return null;
}

/**
 * Custom fields of a manifest, first occurrence of each name wins. Accepts the service client's
 * read manifest (`{ customFields: [{ name, type? }] }`) or a raw manifest
 * (`datasets[].published_schema.custom_fields`); anything unexpected is skipped, never thrown on.
 */
export function customFieldsFromManifest(manifest: unknown): CustomFieldMeta[] {
  const out = new Map<string, CustomFieldMeta>();
  const add = (f: unknown) => {
    const name = (f as { name?: unknown } | null)?.name;
    if (typeof name !== "string" || name === "" || out.has(name)) return;
    out.set(name, { name, numeric: numericFromTypeName((f as { type?: unknown }).type) });
  };
  const read = manifest as { customFields?: unknown; datasets?: unknown } | null;
  if (Array.isArray(read?.customFields)) read.customFields.forEach(add);
  if (Array.isArray(read?.datasets)) {
    for (const ds of read.datasets) {
      const fields = (ds as { published_schema?: { custom_fields?: unknown } | null } | null)?.published_schema?.custom_fields;
      if (Array.isArray(fields)) fields.forEach(add);
    }
  }
  return [...out.values()];
}

/**
 * The custom fields present as columns of a snapshot table. When the metadata does not say whether a
 * field is numeric, a numeric model column (the service sent numbers) counts as numeric.
 */
export function customFieldColumns(columns: readonly Pick<Column, "name" | "type">[], fields: readonly CustomFieldMeta[]): CustomFieldMeta[] {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const out: CustomFieldMeta[] = [];
  for (const c of columns) {
    const f = byName.get(c.name);
    if (!f) continue;
    const numeric = f.numeric ?? (c.type === "decimal" || c.type === "integer" ? true : null);
    out.push({ name: f.name, numeric });
  }
  return out;
}

/** The column holding the record identifier in project and proposal snapshots. */
export const TOKEN_COLUMN = "project_token";
