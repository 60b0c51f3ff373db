/**
 * The reporting manifest: which datasets exist, whether each has a usable export, their columns
 * and the company's custom-field metadata.
 *
 * Parsed leniently: the spec names the top-level fields (`api_version`, `company_id`, `datasets`)
 * and the `artifacts` fields, but not the exact shape of the rest, so only those are required and
 * everything else is read when present and passed through in `raw`.
 */
import { z } from "../contract/zod";
import type { Column } from "../table/model";
import { columnTypeFromEdm } from "./values";

/** Whether a dataset can be fetched: `ready` (has rows), `empty` (valid export with zero rows), `no_export`. */
export type DatasetStatus = "ready" | "empty" | "no_export";

/** One custom field as the manifest describes it. */
export interface CustomFieldInfo {
  /** Display name (the key in `custom_fields` and in detail/snapshot rows). */
  name: string;
  /** The service's type for the field (e.g. `numeric`, `text`), when given. */
  type?: string;
  /** Everything else the service says about the field. */
  raw: Record<string, unknown>;
}

/** One dataset of the manifest, read. */
export interface ManifestDatasetInfo {
  key: string;
  name: string;
  schemaVersion: string | null;
  formats: string[];
  columns: Column[];
  links: { json?: string; csv?: string; [k: string]: unknown };
  generatedAt: string | null;
  latestSuccessfulGeneratedAt: string | null;
  rowCount: number | null;
  status: DatasetStatus;
  /** False when the manifest says there is no usable export (`latest_successful_generated_at` or `row_count` null). */
  usable: boolean;
  /** Custom-field metadata of this dataset's published schema. */
  customFields: CustomFieldInfo[];
  /** When the custom-field schema was published. */
  publishedAt: string | null;
  /** Unresolved pending custom-field changes (shape not documented; passed through). */
  pendingChanges: unknown[];
  raw: Record<string, unknown>;
}

/** The manifest, read. */
export interface ManifestInfo {
  apiVersion: string;
  companyId: string;
  datasets: ManifestDatasetInfo[];
  /** Custom fields over all datasets (by display name, first description wins). */
  customFields: CustomFieldInfo[];
  raw: Record<string, unknown>;
}

const str = z.union([z.string(), z.number()]).transform((v) => String(v));

const ColumnIn = z.union([
  z.string().min(1).transform((name) => ({ name })),
  z.looseObject({ name: z.string().min(1) }),
]);

const ArtifactsIn = z.looseObject({
  generated_at: z.string().nullable().optional(),
  latest_successful_generated_at: z.string().nullable().optional(),
  row_count: z.number().int().nonnegative().nullable().optional(),
});

const DatasetIn = z.looseObject({
  key: z.string().min(1).optional(),
  dataset_key: z.string().min(1).optional(),
  name: z.string().optional(),
  schema_version: str.nullable().optional(),
  formats: z.array(z.string()).optional(),
  columns: z.array(ColumnIn).optional(),
  published_schema: z.looseObject({}).nullable().optional(),
  links: z.looseObject({}).optional(),
  artifacts: ArtifactsIn.nullable().optional(),
});

/** Client-side manifest schema (loose; see module comment). */
export const ManifestInSchema = z.looseObject({
  api_version: str,
  company_id: str,
  datasets: z.array(DatasetIn),
});

function columnFrom(c: Record<string, unknown>): Column {
  const sourceType = typeof c.type === "string" ? c.type : undefined;
  const col: Column = { name: String(c.name), type: columnTypeFromEdm(sourceType) };
  if (sourceType) col.sourceType = sourceType;
  if (typeof c.nullable === "boolean") col.nullable = c.nullable;
  return col;
}

function customFieldsFrom(ps: Record<string, unknown> | null | undefined): CustomFieldInfo[] {
  const list = ps && Array.isArray(ps.custom_fields) ? ps.custom_fields : [];
  const out: CustomFieldInfo[] = [];
  for (const f of list) {
    if (f && typeof f === "object" && typeof (f as Record<string, unknown>).name === "string") {
      const raw = f as Record<string, unknown>;
      out.push({ name: raw.name as string, ...(typeof raw.type === "string" ? { type: raw.type } : {}), raw });
    }
  }
  return out;
}

/**
 * Reads a parsed manifest body. Returns a zod error path on mismatch so the caller can report the
 * offending location.
 */
export function readManifest(body: unknown): { ok: true; manifest: ManifestInfo } | { ok: false; path: string; message: string } {
  const parsed = ManifestInSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, path: formatPath(issue?.path ?? []), message: issue?.message ?? "invalid manifest" };
  }
  const m = parsed.data;
  const datasets: ManifestDatasetInfo[] = [];
  for (let i = 0; i < m.datasets.length; i++) {
    const d = m.datasets[i];
    const key = d.key ?? d.dataset_key;
    if (!key) return { ok: false, path: `datasets[${i}].key`, message: "dataset entry without a key" };
    const a = d.artifacts ?? {};
    const lsga = a.latest_successful_generated_at ?? null;
    const rowCount = a.row_count ?? null;
    const usable = lsga !== null && rowCount !== null;
    const ps = (d.published_schema ?? null);
    datasets.push({
      key,
      name: d.name ?? key,
      schemaVersion: d.schema_version ?? null,
      formats: d.formats ?? [],
      columns: (d.columns ?? []).map((c) => columnFrom(c as Record<string, unknown>)),
      links: (d.links ?? {}),
      generatedAt: a.generated_at ?? null,
      latestSuccessfulGeneratedAt: lsga,
      rowCount,
      status: !usable ? "no_export" : rowCount === 0 ? "empty" : "ready",
      usable,
      customFields: customFieldsFrom(ps),
      publishedAt: ps && typeof ps.published_at === "string" ? ps.published_at : null,
      pendingChanges: ps && Array.isArray(ps.pending_changes) ? ps.pending_changes : [],
      raw: d,
    });
  }
  const byName = new Map<string, CustomFieldInfo>();
  for (const d of datasets) for (const f of d.customFields) if (!byName.has(f.name)) byName.set(f.name, f);
  return {
    ok: true,
    manifest: { apiVersion: m.api_version, companyId: m.company_id, datasets, customFields: [...byName.values()], raw: m },
  };
}

/** The generation time that identifies a dataset's current export (for the no-headers fallback). */
export function exportGeneration(d: ManifestDatasetInfo): string | null {
  return d.latestSuccessfulGeneratedAt ?? d.generatedAt;
}

/** Formats a zod-style path as `datasets[2].artifacts.row_count`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || "(root)";
}
