/**
 * Snapshot bodies (lists, resource cells, score matrices) into validated rows and into tables.
 *
 * Snapshot rows are open-ended: custom fields appear as top-level keys named by their display
 * name, and the list endpoints' fields are not documented. So only the documented fields are
 * validated; every other field passes through untouched and becomes a column.
 */
import { ResourceRowSchema, ScoreRowSchema, type SnapshotEndpoint } from "../contract/contract";
import type { CellValue, Column, ColumnType, Table } from "../table/model";
import { BodyShapeError } from "./dataset";
import { formatPath } from "./manifest";
import { Sha256 } from "./hash";
import { CellError, inferColumnType, toCell } from "./values";

/** Snapshot sources the client offers: the six endpoints and the combined resource view. */
export type SnapshotSource = SnapshotEndpoint | "combinedResources";

/** Documented snapshot fields and their column types. */
const DOCUMENTED_TYPES: Record<string, ColumnType> = {
  period: "text",
  period_name: "text",
  period_number: "integer",
  fiscal_year: "integer",
  estimate: "decimal",
  work_type: "text",
  snapshot_source: "text",
  resource_id: "text",
  npt_category_id: "text",
  npt_category_name: "text",
  resource_team: "text",
  project_token: "text",
  project_type: "text",
  score_category: "text",
};

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/**
 * Finds the row list in a snapshot body. The envelope is not documented: a top-level array is
 * taken as is; an object is searched for its one array-valued field (`value`, `data`, `rows`, ...).
 */
export function snapshotRowList(body: unknown): { rows: unknown[]; path: string } {
  if (Array.isArray(body)) return { rows: body, path: "" };
  if (isObject(body)) {
    for (const k of ["value", "data", "rows", "items", "results"]) if (Array.isArray(body[k])) return { rows: body[k] as unknown[], path: k };
    const arrays = Object.entries(body).filter(([, v]) => Array.isArray(v));
    if (arrays.length === 1) return { rows: arrays[0][1] as unknown[], path: arrays[0][0] };
  }
  throw new BodyShapeError("the snapshot response holds no list of rows", "(root)");
}

function isResourceEndpoint(e: SnapshotEndpoint): boolean {
  return e === "projectResources" || e === "proposalResources";
}

function isScoreEndpoint(e: SnapshotEndpoint): boolean {
  return e === "projectScores" || e === "proposalScores";
}

/**
 * Validates snapshot rows: every row must be an object; resource and score rows must carry their
 * documented fields with the documented types. Returns the rows unchanged (unknown fields kept).
 *
 * @throws BodyShapeError (`schema_mismatch`) naming the first offending row and field.
 */
export function validateSnapshotRows(endpoint: SnapshotEndpoint, body: unknown): Record<string, unknown>[] {
  const { rows, path } = snapshotRowList(body);
  const prefix = path ? path : "";
  const schema = isResourceEndpoint(endpoint) ? ResourceRowSchema : isScoreEndpoint(endpoint) ? ScoreRowSchema : null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (!isObject(row)) throw new BodyShapeError(`row ${i} is not an object`, `${prefix}[${i}]`);
    if (schema) {
      const r = schema.safeParse(row);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw new BodyShapeError(`row ${i}: ${issue?.message ?? "does not match the documented fields"}`, `${prefix}${formatPath([i, ...(issue?.path ?? [])])}`);
      }
    }
  }
  return rows as Record<string, unknown>[];
}

/** Options for {@link snapshotTable}. */
export interface SnapshotTableOptions {
  /** Display names of custom fields the manifest types as numeric (their columns become decimal). */
  numericCustomFields?: ReadonlySet<string>;
  /** Display names of all known custom fields (non-numeric ones stay text whatever their values look like). */
  customFields?: ReadonlySet<string>;
  fetchedAt: string;
  lastModified?: string | null;
}

/**
 * Builds a table from snapshot rows. Columns are in order of first appearance over all rows.
 * Documented fields get their documented type; custom fields are decimal only when the manifest
 * says they are numeric (else text, so "00420" stays "00420"); other fields are typed from their
 * JSON values.
 *
 * `meta.etag` is a content fingerprint, `sha256:<hex>` of the columns and rows, because snapshots
 * carry no documented validators: an unchanged fingerprint means an unchanged table.
 */
export function snapshotTable(key: SnapshotSource, rows: ReadonlyArray<Record<string, unknown>>, opts: SnapshotTableOptions): Table {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k);
        names.push(k);
      }
    }
  }
  const columns: Column[] = names.map((name) => {
    let type: ColumnType;
    if (opts.numericCustomFields?.has(name)) type = "decimal";
    else if (opts.customFields?.has(name)) type = "text";
    else type = DOCUMENTED_TYPES[name] ?? inferColumnType(rows.map((r) => r[name]));
    return opts.customFields?.has(name) || opts.numericCustomFields?.has(name) ? { name, type, customField: true } : { name, type };
  });
  const out: CellValue[][] = rows.map((row, i) =>
    columns.map((c) => {
      try {
        return toCell(row[c.name], c.type);
      } catch (e) {
        if (e instanceof CellError) throw new BodyShapeError(`row ${i}, field "${c.name}": ${e.message}`, `[${i}].${c.name}`);
        throw e;
      }
    }),
  );
  return {
    columns,
    rows: out,
    meta: {
      key,
      kind: "snapshot",
      format: "json",
      schemaVersion: null,
      generatedAt: null,
      etag: tableFingerprint(columns, out),
      lastModified: opts.lastModified ?? null,
      fetchedAt: opts.fetchedAt,
    },
  };
}

/** `sha256:<hex>` over column names, types and cells: equal tables have equal fingerprints. */
export function tableFingerprint(columns: readonly Column[], rows: readonly CellValue[][]): string {
  const h = new Sha256();
  h.update(JSON.stringify(columns.map((c) => [c.name, c.type])));
  for (const r of rows) h.update(`\n${JSON.stringify(r)}`);
  return `sha256:${h.hex()}`;
}
