/**
 * The service's wire contract, as `../shared/spec/ppm-interface.md` states it.
 *
 * This is the one module imported by both the add-in (which parses what it receives) and the
 * reference service (which must emit exactly this). Everything here is a shape the spec names;
 * where the spec says "not shown", the schemas are loose (unknown fields pass through) and the
 * reference service's concrete choices are documented next to the schema, marked REFERENCE CHOICE.
 * A client must never depend on a REFERENCE CHOICE being true of a real deployment.
 */
import { z } from "./zod";

/** Base paths of the three endpoint groups. */
export const PATHS = {
  odataRoot: "/api/bi/odata/v1",
  odataMetadata: "/api/bi/odata/v1/$metadata",
  odataDataset: (key: string) => `/api/bi/odata/v1/${encodeURIComponent(key)}`,
  manifest: "/api/bi/v1/manifest",
  exportJson: (key: string) => `/api/bi/v1/${encodeURIComponent(key)}`,
  exportCsv: (key: string) => `/api/bi/v1/${encodeURIComponent(key)}.csv`,
  snapshot: {
    projects: "/api/snapshot/projects",
    proposals: "/api/snapshot/proposals",
    projectResources: "/api/snapshot/projects/resources",
    proposalResources: "/api/snapshot/proposals/resources",
    projectScores: "/api/snapshot/projects/scores",
    proposalScores: "/api/snapshot/proposals/scores",
  },
  record: {
    project: "/api/v1/project",
    proposal: "/api/v1/proposal",
  },
} as const;

export type SnapshotEndpoint = keyof typeof PATHS.snapshot;
export const SNAPSHOT_ENDPOINTS = Object.keys(PATHS.snapshot) as SnapshotEndpoint[];
export type RecordKind = keyof typeof PATHS.record;

/** Header names (HTTP header names are case-insensitive; these are the spec's spellings). */
export const HEADERS = {
  companyToken: "Company-Api-Token",
  recordToken: "record-token",
  apiAuth: "api-auth",
  apiToken: "api-token",
  apiSecret: "api-secret",
  datasetKey: "X-Service-Dataset-Key",
  schemaVersion: "X-Service-Schema-Version",
  generatedAt: "X-Service-Generated-At",
  odataVersion: "OData-Version",
} as const;

/** Basic-auth user name for reporting (password = company token). */
export const BASIC_USER = "company_api_token";
/** The discouraged query-parameter credential. The add-in never sends it. */
export const TOKEN_QUERY_PARAM = "company_api_token";
/** `Cache-Control` value on dataset responses. */
export const DATASET_CACHE_CONTROL = "private, max-age=0, must-revalidate";

/** Reporting error codes, with their HTTP status. */
export const REPORTING_ERRORS = {
  unauthorized: 401,
  bi_reporting_disabled: 403,
  unknown_dataset: 404,
  not_generated: 404,
  query_string_token_rejected: 400,
  unsupported_odata_query_options: 400,
  invalid_cached_artifact: 422,
} as const;
export type ReportingErrorCode = keyof typeof REPORTING_ERRORS;

/** Error body of reporting endpoints. */
export const ErrorBodySchema = z.looseObject({
  error: z.string(),
  message: z.string(),
  dataset_key: z.string().optional(),
  unsupported_options: z.array(z.string()).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * Column type names. REFERENCE CHOICE: column definitions (spec: "Column definitions", shape not
 * shown) use OData EDM primitive type names, the same names `$metadata` uses, so one vocabulary
 * covers the manifest, the JSON export and CSDL. Clients treat unknown names as text.
 */
export const EDM_TYPES = [
  "Edm.String",
  "Edm.Int32",
  "Edm.Int64",
  "Edm.Decimal",
  "Edm.Double",
  "Edm.Boolean",
  "Edm.Date",
  "Edm.DateTimeOffset",
] as const;
export type EdmType = (typeof EDM_TYPES)[number];

/** REFERENCE CHOICE: `{ name, type, nullable }`. Loose: other fields pass through. */
export const ColumnDefSchema = z.looseObject({
  name: z.string().min(1),
  type: z.string().min(1),
  nullable: z.boolean().optional(),
});
export type ColumnDef = z.infer<typeof ColumnDefSchema>;

/** JSON export envelope (`/api/bi/v1/{key}`). REFERENCE CHOICE: rows are objects keyed by column name. */
export const ExportEnvelopeSchema = z.looseObject({
  dataset_key: z.string(),
  schema_version: z.union([z.string(), z.number()]),
  generated_at: z.string(),
  row_count: z.number().int().nonnegative(),
  columns: z.array(ColumnDefSchema),
  rows: z.array(z.unknown()),
});
export type ExportEnvelope = z.infer<typeof ExportEnvelopeSchema>;

/** OData row envelope. */
export const ODataEnvelopeSchema = z.looseObject({
  "@odata.context": z.string(),
  value: z.array(z.record(z.string(), z.unknown())),
});
export type ODataEnvelope = z.infer<typeof ODataEnvelopeSchema>;

/** Prefix of the OData context reference; the dataset key follows `#`. */
export const ODATA_CONTEXT_PREFIX = "/api/bi/odata/v1/$metadata#";

/** Artifacts metadata of a manifest dataset entry. Null `latest_successful_generated_at` or `row_count` = no usable export. */
export const ArtifactsSchema = z.looseObject({
  generated_at: z.string().nullable().optional(),
  latest_successful_generated_at: z.string().nullable(),
  row_count: z.number().int().nonnegative().nullable(),
});

/**
 * Custom-field metadata ("includes the publication time and the unresolved pending changes").
 * REFERENCE CHOICE: carried in each dataset's `published_schema` as `published_at`,
 * `custom_fields` and `pending_changes`. Everything optional and loose for clients.
 */
export const PublishedSchemaSchema = z.looseObject({
  published_at: z.string().nullable().optional(),
  custom_fields: z.array(z.looseObject({ name: z.string() })).optional(),
  pending_changes: z.array(z.unknown()).optional(),
});

/** One dataset entry of the manifest. REFERENCE CHOICE for names: `key`, `name`, `links: { json, csv }`. */
export const ManifestDatasetSchema = z.looseObject({
  key: z.string().min(1),
  name: z.string().optional(),
  schema_version: z.union([z.string(), z.number()]),
  formats: z.array(z.string()),
  columns: z.array(ColumnDefSchema),
  published_schema: PublishedSchemaSchema.nullable().optional(),
  links: z.looseObject({ json: z.string().optional(), csv: z.string().optional() }).optional(),
  artifacts: ArtifactsSchema,
});
export type ManifestDataset = z.infer<typeof ManifestDatasetSchema>;

export const ManifestSchema = z.looseObject({
  api_version: z.union([z.string(), z.number()]),
  company_id: z.union([z.string(), z.number()]),
  datasets: z.array(ManifestDatasetSchema),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** Resource snapshot row: one resource and one period. Unknown fields pass through. */
export const WORK_TYPES = ["project_work", "non_project_work"] as const;
export const ResourceRowSchema = z.looseObject({
  period: z.unknown(),
  period_name: z.unknown(),
  period_number: z.number(),
  fiscal_year: z.number(),
  estimate: z.number().nullable(),
  work_type: z.enum(WORK_TYPES),
  snapshot_source: z.enum(["projects", "proposals"]),
  resource_id: z.union([z.string(), z.number()]),
  npt_category_id: z.union([z.string(), z.number()]).nullable().optional(),
  npt_category_name: z.string().nullable().optional(),
  resource_team: z.string().nullable().optional(),
});
export type ResourceRow = z.infer<typeof ResourceRowSchema>;

/** The de-duplication key for combined resource snapshots (non_project_work rows only). */
export const RESOURCE_DEDUP_KEY = ["work_type", "resource_id", "npt_category_id", "fiscal_year", "period_number"] as const;

/** Score snapshot row. Option fields are null for criteria with no selected option. */
export const ScoreRowSchema = z.looseObject({
  project_type: z.unknown(),
  score_category: z.unknown(),
  last_updated: z.unknown(),
});
export type ScoreRow = z.infer<typeof ScoreRowSchema>;

/**
 * Numeric custom-field value rule (spec, "Custom fields"): optional sign, digits, optional `.` or `,`
 * followed by one or two digits. No thousands separators, exponent, whitespace or empty string.
 * REFERENCE CHOICE (spec silent): a bare separator with no digits after it ("12.") is rejected.
 */
export const NUMERIC_CUSTOM_FIELD = /^[+-]?\d+(?:[.,]\d{1,2})?$/;
