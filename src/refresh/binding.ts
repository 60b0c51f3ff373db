/**
 * The binding model: what ties an imported Excel table to its source so it can be refreshed later,
 * by anyone who holds their own token for that company.
 *
 * Bindings are stored in the workbook (see `src/workbook/bindingStore.ts`), so they travel with the
 * file and are UNTRUSTED when read back: everything goes through {@link parseBinding}. A binding
 * never holds a secret: the connection is referenced by id, the environment by its base URL, and
 * {@link assertNoSecret} guards every write against a token slipping in (e.g. inside an error message).
 */
import { z } from "../contract/zod";
import { SNAPSHOT_ENDPOINTS, type SnapshotEndpoint } from "../contract/contract";
import { COLUMN_TYPES, type Column, type ColumnType } from "../table/model";
import { LocalQuerySchema, type LocalQuery } from "../query";
import { redactSecrets } from "../service/errors";

/** Bumped when the stored shape changes incompatibly; older versions are refused with a clear message. */
export const BINDING_SCHEMA_VERSION = 1;

/** Prefix of the workbook setting keys that hold bindings (one setting per binding, so one bad entry cannot hide the others). */
export const BINDING_SETTING_PREFIX = "ppm.binding.";


type BoundSnapshot = SnapshotEndpoint | "combinedResources";

/** Where the data comes from: a reporting dataset in one export form, or a snapshot endpoint. */
export const BindingSourceSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("dataset"), key: z.string().min(1), format: z.enum(["json", "csv", "odata"]) }),
  // `combinedResources`: project and proposal resource snapshots combined by the client (de-duplicated).
  z.strictObject({ kind: z.literal("snapshot"), endpoint: z.enum(["combinedResources", ...SNAPSHOT_ENDPOINTS] as [BoundSnapshot, ...BoundSnapshot[]]) }),
]);
export type BindingSource = z.infer<typeof BindingSourceSchema>;

/** Validators of the last data written; used for the conditional request and the "unchanged" test. */
export const ValidatorsSchema = z.strictObject({
  etag: z.string().nullable().optional(),
  lastModified: z.string().nullable().optional(),
  generatedAt: z.string().nullable().optional(),
});
export type BindingValidators = z.infer<typeof ValidatorsSchema>;

export const FailureSchema = z.strictObject({
  at: z.string(),
  code: z.string(),
  message: z.string(),
});
export type BindingFailure = z.infer<typeof FailureSchema>;

const BindingColumnSchema = z.strictObject({
  name: z.string().min(1),
  type: z.enum(COLUMN_TYPES as [ColumnType, ...ColumnType[]]),
});

/** What a binding can store about the last refresh's delta (JSON-safe, no data values). */
export const DeltaSummarySchema = z.strictObject({
  strategy: z.enum(["delta", "full"]),
  matchedBy: z.enum(["key", "position"]),
  key: z.array(z.string()).nullable(),
  reason: z.string(),
  added: z.number().int().nonnegative(),
  changed: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  cellsWritten: z.number().int().nonnegative(),
  /** false: a full rewrite whose rows were not matched (no plan), so the counts only compare row counts. */
  exact: z.boolean().optional(),
  /** A delta Excel refused, rewritten in full in the same refresh (issue #21): why, by Excel's error code. */
  fallback: z.string().max(200).optional(),
  /**
   * Without a key (issue #34): rows matched by their whole, unchanged content, and the others by
   * position. Written only then (bindings without them stay readable by earlier builds).
   */
  byContent: z.number().int().nonnegative().optional(),
  byPosition: z.number().int().nonnegative().optional(),
  /**
   * Rows a delta moved to new positions without writing their cells (copied inside Excel, issue #34):
   * a refresh that moved rows changed the table, so it is not "unchanged" (issue #37). Written only
   * when some moved.
   */
  rowsMoved: z.number().int().positive().optional(),
});
export type DeltaSummary = z.infer<typeof DeltaSummarySchema>;

/** Base URL of an environment: http(s), no credentials, no query or fragment (tokens must never ride in a URL). */
const EnvironmentSchema = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password && !u.search && !u.hash;
  } catch {
    return false;
  }
}, "environment must be an http(s) base URL without credentials, query or fragment");

export const BindingSchema = z.strictObject({
  v: z.literal(BINDING_SCHEMA_VERSION),
  /** Stable id; also the suffix of the setting key. */
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  tableName: z.string().min(1).max(255),
  sheetName: z.string().min(1).max(31),
  /** Id of the user's connection (the token lives in the user's own connection store, never here). */
  connectionId: z.string().min(1),
  /** Base URL of the environment the data came from. */
  environment: EnvironmentSchema,
  companyId: z.string().nullable(),
  source: BindingSourceSchema,
  /** The local query re-applied on every refresh (plain JSON), or null. */
  query: LocalQuerySchema.nullable(),
  /** The data columns as written; a refresh whose columns differ is refused (schema_mismatch). */
  columns: z.array(BindingColumnSchema).min(1),
  schemaVersion: z.string().nullable(),
  validators: ValidatorsSchema,
  /** Last time new data was written (ISO). */
  lastRefreshAt: z.string().nullable(),
  /** Last time the source was asked (also when it answered "unchanged"). */
  lastCheckedAt: z.string().nullable(),
  rowCount: z.number().int().nonnegative(),
  lastFailure: FailureSchema.nullable(),
  /**
   * "Refresh when this workbook opens" (issue 17). Optional and written only when on, so bindings
   * without it stay readable by add-in builds that predate it (the schema is strict).
   */
  refreshOnOpen: z.literal(true).optional(),
  /** What the last successful refresh wrote (issue #15): delta or full, how rows matched and why, counts. */
  lastDelta: DeltaSummarySchema.nullable().optional(),
});
export type Binding = z.infer<typeof BindingSchema>;

/** Error raised for a stored binding that cannot be used; `code` is machine-readable. */
export class BindingError extends Error {
  constructor(
    readonly code: "binding_invalid" | "binding_version" | "binding_secret",
    message: string,
  ) {
    super(message);
    this.name = "BindingError";
  }
}

/**
 * Parses a binding read back from a workbook (a JSON string or an already-parsed value).
 * @throws BindingError with a message naming the first problem; never echoes the raw value.
 */
export function parseBinding(raw: unknown): Binding {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new BindingError("binding_invalid", "Stored table binding is not valid JSON.");
    }
  }
  if (value && typeof value === "object" && "v" in value && value.v !== BINDING_SCHEMA_VERSION) {
    throw new BindingError(
      "binding_version",
      `Stored table binding has version ${String(value.v)}; this add-in reads version ${BINDING_SCHEMA_VERSION}. Re-import the table.`,
    );
  }
  const parsed = BindingSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? issue.path.join(".") : "binding";
    throw new BindingError("binding_invalid", `Stored table binding is invalid at "${where}": ${issue?.message ?? "unknown problem"}.`);
  }
  return parsed.data;
}

/**
 * Serialises a binding for storage after validating it, refusing if any given secret occurs in it.
 * @param secrets values that must never be stored (the connection's token, api-secret, ...).
 */
export function serializeBinding(binding: Binding, secrets: readonly string[] = []): string {
  const checked = BindingSchema.parse(binding);
  const json = JSON.stringify(checked);
  assertNoSecret(json, secrets);
  return json;
}

/** @throws BindingError if any non-trivial secret occurs in `text` (the secret itself is never echoed). */
export function assertNoSecret(text: string, secrets: readonly string[]): void {
  for (const s of secrets) {
    if (s && s.length >= 4 && text.includes(s)) {
      throw new BindingError("binding_secret", "Refusing to store a table binding that contains a credential.");
    }
  }
}

/**
 * Replaces the given secrets in a message, for failure records and logs: in every encoded form and
 * any 8-character piece (see `redactSecrets`). Secrets shorter than 4 characters are ignored, so a
 * stray one-letter value cannot erase a message.
 */
export function redact(message: string, secrets: readonly string[]): string {
  return redactSecrets(message, secrets.filter((s) => s && s.length >= 4));
}

/** The setting key of a binding. */
export function bindingSettingKey(id: string): string {
  return BINDING_SETTING_PREFIX + id;
}

/** The columns part of a binding, from the model's columns. */
export function bindingColumns(columns: readonly Column[]): Binding["columns"] {
  return columns.map((c) => ({ name: c.name, type: c.type }));
}

/** A human label for the source, e.g. `dataset financials (csv)` or `snapshot projectResources`. */
export function describeSource(source: BindingSource): string {
  return source.kind === "dataset" ? `dataset ${source.key} (${source.format})` : `snapshot ${source.endpoint}`;
}

/** The key a table and sheet name are derived from. */
export function sourceKey(source: BindingSource): string {
  return source.kind === "dataset" ? source.key : source.endpoint;
}

export type { LocalQuery };

/**
 * The binding of a table about to be imported (the writer fills in table, sheet and row count).
 * `environment` is reduced to its origin and path, so a URL with a query (e.g. a pasted link with a
 * token parameter) can never reach the workbook.
 */
export function draftBinding(args: {
  id: string;
  connectionId: string;
  environment: string;
  companyId: string | number | null;
  source: BindingSource;
  query?: LocalQuery | null;
  columns: readonly Column[];
  schemaVersion: string | null;
  validators: BindingValidators;
}): Omit<Binding, "tableName" | "sheetName" | "rowCount" | "lastRefreshAt" | "lastCheckedAt" | "lastFailure"> {
  const u = new URL(args.environment);
  const environment = `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
  return {
    v: BINDING_SCHEMA_VERSION,
    id: args.id,
    connectionId: args.connectionId,
    environment,
    companyId: args.companyId === null ? null : String(args.companyId),
    source: args.source,
    query: args.query && Object.keys(args.query).length ? { ...args.query } : null,
    columns: bindingColumns(args.columns),
    schemaVersion: args.schemaVersion,
    validators: { etag: args.validators.etag ?? null, lastModified: args.validators.lastModified ?? null, generatedAt: args.validators.generatedAt ?? null },
  };
}
