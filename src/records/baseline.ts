/**
 * The import record ("baseline") of a bound projects/proposals snapshot table: what each cell held
 * right after the add-in wrote it, so write-back sends only the cells the user changed and can tell
 * a user's edit from a change someone else made on the service since (a conflict).
 *
 * Stored in a workbook setting next to the table's binding (`ppm.records.baseline.<bindingId>`), so it
 * travels with the file and is UNTRUSTED when read back ({@link parseBaseline}). It holds no values
 * and no secrets: per row (keyed by `project_token`) one short hash per column of the exact cell text.
 * Size is bounded by {@link BASELINE_MAX_CELLS}; a larger table gets a record marked `tooLarge`, and
 * write-back then compares against the service's current values instead (see README).
 */
import { z } from "../contract/zod";
import { cellToText, valueHash, type CellShown, type SheetValue } from "./values";
import { HeldCellSchema } from "./held";

/** Bumped on incompatible changes; an older record is ignored (write-back falls back, never guesses). */
export const BASELINE_VERSION = 1;
export const BASELINE_SETTING_PREFIX = "ppm.records.baseline.";
/** Rows × hashed columns beyond which no per-cell record is kept (about 8 bytes per cell when stored). */
export const BASELINE_MAX_CELLS = 50_000;

/** The cells of an Excel table as read back: header names and row values, in sheet order. */
export interface SheetTable {
  columns: string[];
  rows: SheetValue[][];
  /** 1-based sheet row number of the first data row (for messages); optional. */
  firstSheetRow?: number;
  /**
   * Number format and display text per row, for the columns asked for (numeric custom fields):
   * how write-back tells a typed `1,234.5` (which Excel turned into a number) from `1234.5`.
   */
  shown?: Record<string, CellShown[]>;
}

export const BaselineSchema = z.strictObject({
  v: z.literal(BASELINE_VERSION),
  bindingId: z.string().min(1),
  tableName: z.string().min(1),
  capturedAt: z.string(),
  /** The binding's content validator (`validators.etag`) of the data written; a different one later = stale. */
  etag: z.string().nullable(),
  tokenColumn: z.string().min(1),
  /** Hashed columns, in the order of each row's hash list. */
  columns: z.array(z.string()),
  /** project_token → comma-joined hashes, aligned with `columns`. */
  rows: z.record(z.string(), z.string()),
  /** Tokens that occurred on more than one row (never written back: which row is the record?). */
  duplicates: z.array(z.string()),
  rowCount: z.number().int().nonnegative(),
  tooLarge: z.boolean(),
  /** Edits a send did not save, kept in the sheet and marked (`held.ts`); absent = none. */
  held: z.array(HeldCellSchema).optional(),
});
export type Baseline = z.infer<typeof BaselineSchema>;

/** Why a stored record cannot be used; the caller falls back to comparing with the service. */
export class BaselineError extends Error {
  constructor(
    readonly code: "baseline_invalid" | "baseline_missing_token_column",
    message: string,
  ) {
    super(message);
    this.name = "BaselineError";
  }
}

/** Setting key of the baseline of a binding. */
export function baselineSettingKey(bindingId: string): string {
  return BASELINE_SETTING_PREFIX + bindingId;
}

/** Hash of one sheet cell's exact text (errors hash distinctly, so fixing an error cell is a change). */
export function cellHash(value: SheetValue | undefined): string {
  const t = cellToText(value);
  return valueHash(t.ok ? t.text : `\u0000error:${(value as { error: string }).error}`);
}

/**
 * Builds the record of a table as it is now in the sheet (call right after the add-in wrote it).
 * @throws BaselineError when the table has no token column.
 */
export function buildBaseline(
  sheet: SheetTable,
  info: { bindingId: string; tableName: string; etag: string | null; tokenColumn: string; now?: Date },
): Baseline {
  const tokenIdx = sheet.columns.indexOf(info.tokenColumn);
  if (tokenIdx < 0) {
    throw new BaselineError("baseline_missing_token_column", `Table ${info.tableName} has no "${info.tokenColumn}" column, so its rows cannot be matched to records.`);
  }
  const hashed = sheet.columns.map((c, i) => ({ c, i })).filter(({ i }) => i !== tokenIdx);
  const base = {
    v: BASELINE_VERSION as typeof BASELINE_VERSION,
    bindingId: info.bindingId,
    tableName: info.tableName,
    capturedAt: (info.now ?? new Date()).toISOString(),
    etag: info.etag,
    tokenColumn: info.tokenColumn,
    columns: hashed.map((h) => h.c),
    rowCount: sheet.rows.length,
  };
  if (sheet.rows.length * Math.max(1, hashed.length) > BASELINE_MAX_CELLS) {
    return { ...base, rows: {}, duplicates: [], tooLarge: true };
  }
  const rows: Record<string, string> = Object.create(null) as Record<string, string>;
  const duplicates = new Set<string>();
  for (const r of sheet.rows) {
    const tok = cellToText(r[tokenIdx]);
    if (!tok.ok || tok.text === "") continue;
    if (tok.text in rows) duplicates.add(tok.text);
    rows[tok.text] = hashed.map(({ i }) => cellHash(r[i])).join(",");
  }
  for (const d of duplicates) delete rows[d];
  return { ...base, rows: { ...rows }, duplicates: [...duplicates], tooLarge: false };
}

/** Validates a stored record (JSON text or parsed value). @throws BaselineError, never echoing the raw value. */
export function parseBaseline(raw: unknown): Baseline {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new BaselineError("baseline_invalid", "The stored import record is not valid JSON.");
    }
  }
  const parsed = BaselineSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? issue.path.join(".") : "record";
    throw new BaselineError("baseline_invalid", `The stored import record is invalid at "${where}".`);
  }
  const b = parsed.data;
  for (const [tok, hashes] of Object.entries(b.rows)) {
    if (hashes.split(",").length !== b.columns.length) {
      throw new BaselineError("baseline_invalid", `The stored import record is invalid at "rows.${tok}".`);
    }
  }
  return b;
}

/** JSON for storage (validated first). */
export function serializeBaseline(b: Baseline): string {
  return JSON.stringify(BaselineSchema.parse(b));
}

/** The hash recorded for one cell, or undefined when the row or column was not recorded. */
export function baselineHash(b: Baseline, token: string, column: string): string | undefined {
  const row = Object.prototype.hasOwnProperty.call(b.rows, token) ? b.rows[token] : undefined;
  const ci = b.columns.indexOf(column);
  if (row === undefined || ci < 0) return undefined;
  return row.split(",")[ci];
}

/**
 * Whether a record still describes the table: same table and, when both are known, the same content
 * validator as the binding holds now. A refresh that rewrote the table without re-recording (e.g. a
 * refresh path that does not capture) changes the validator, so the old record is not trusted.
 */
export function baselineIsCurrent(b: Baseline, binding: { id: string; tableName: string; validators: { etag?: string | null } }): boolean {
  if (b.bindingId !== binding.id || b.tableName !== binding.tableName) return false;
  const now = binding.validators.etag ?? null;
  if (b.etag !== null && now !== null && b.etag !== now) return false;
  return true;
}
