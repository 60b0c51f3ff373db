/**
 * Sheet and workbook-structure protection (issue #35), found before anything is written.
 *
 * A protected sheet refuses every change to its cells and tables (docs: Excel.WorksheetProtection,
 * ExcelApi 1.2; every cell is locked unless the user unlocked it first), and a protected workbook
 * structure refuses adding, deleting, renaming, hiding or showing a sheet (docs:
 * Excel.WorkbookProtection, ExcelApi 1.7). Both fail mid-request in Excel, after the earlier actions
 * of that request were applied, so the add-in reads both with its first reads and refuses with one
 * message that says what to do, before it writes anything (settings included: the workbook stays
 * exactly as the user protected it).
 *
 * Decision (src/workbook/README.md, "Protected sheets and workbooks"): an import into a protected
 * sheet, and one that would add a sheet under structure protection, is refused; one into an existing
 * sheet under structure protection runs, without the hidden fingerprint sheets (the first refresh
 * reads the table instead). A refresh and a write-back are refused on a protected sheet and under
 * structure protection: a refresh keeps its rollback copy, row fingerprints, block checksums and change
 * highlights on very hidden sheets of its own, which it adds and removes as it goes. Recovery leaves
 * an interrupted refresh's marker for later in both cases.
 */
import { WriteError } from "./blocks";

/** The error code of every refusal for protection. */
export const PROTECTED_CODE = "protected";

/** What the protection reads found; read after the caller's sync. */
export interface ProtectionReading {
  /** The workbook's structure is protected. */
  readonly structure: boolean;
  /** Each sheet asked for is protected (in the order asked). */
  readonly sheets: readonly boolean[];
}

/**
 * Queues reading whether the workbook's structure and these sheets are protected, with the caller's
 * next sync (no request of its own). The result is valid after that sync.
 */
export function queueProtection(context: Excel.RequestContext, sheets: readonly Excel.Worksheet[]): () => ProtectionReading {
  const workbook = context.workbook.protection;
  workbook.load("protected");
  const each = sheets.map((s) => {
    const p = s.protection;
    p.load("protected");
    return p;
  });
  return () => ({ structure: workbook.protected === true, sheets: each.map((p) => p.protected === true) });
}

const UNPROTECT_SHEET = "Review › Unprotect Sheet";
const UNPROTECT_WORKBOOK = "Review › Protect Workbook";

/** The refusal of one operation for protection: what is protected, that nothing was written, and what to do. */
export function protectedError(
  operation: "import" | "refresh" | "write-back",
  what: { sheet: string; table?: string; sheetProtected: boolean; structureProtected: boolean; addsSheet?: boolean },
): WriteError {
  const table = what.table ? `"${what.table}"` : "the table";
  if (what.sheetProtected) {
    const text =
      operation === "import"
        ? `The sheet "${what.sheet}" is protected, so the import cannot write there. Nothing was written. Unprotect the sheet (${UNPROTECT_SHEET}) or import to a new sheet.`
        : operation === "refresh"
          ? `The table ${table} is on the protected sheet "${what.sheet}", so it cannot be refreshed. Nothing was written. Unprotect the sheet (${UNPROTECT_SHEET}), refresh, then protect it again.`
          : `The table ${table} is on the protected sheet "${what.sheet}", so its edits cannot be written back (sending them refreshes the table and marks what the service refused). Nothing was sent or written. Unprotect the sheet (${UNPROTECT_SHEET}), write back, then protect it again.`;
    return new WriteError(PROTECTED_CODE, text, { sheet: what.sheet, protection: "sheet" });
  }
  const text =
    operation === "import"
      ? `This workbook's structure is protected, so the import cannot add the sheet "${what.sheet}". Nothing was written. Import into an existing sheet instead (select a cell there), or unprotect the workbook (${UNPROTECT_WORKBOOK}).`
      : operation === "refresh"
        ? `This workbook's structure is protected, so ${table} cannot be refreshed: a refresh keeps its rollback copy, row fingerprints and change highlights on hidden sheets of its own, which Excel does not let it add or remove while the structure is protected. Nothing was written. Unprotect the workbook (${UNPROTECT_WORKBOOK}), refresh, then protect it again.`
        : `This workbook's structure is protected, so the edits of ${table} cannot be written back: sending them refreshes the table, which needs hidden sheets of its own. Nothing was sent or written. Unprotect the workbook (${UNPROTECT_WORKBOOK}), write back, then protect it again.`;
  return new WriteError(PROTECTED_CODE, text, { sheet: what.sheet, protection: "structure" });
}

/**
 * Whether a bound table can be written now (one sync): null, or the refusal for its sheet's or the
 * workbook's protection. A table that is gone is left to the caller's own check.
 */
export async function tableProtection(context: Excel.RequestContext, tableName: string, operation: "refresh" | "write-back"): Promise<WriteError | null> {
  const lo = context.workbook.tables.getItemOrNullObject(tableName);
  // eslint-disable-next-line office-addins/call-sync-before-read -- a navigation property (an object path), not a loaded value
  const sheet = lo.worksheet;
  sheet.load("name");
  const read = queueProtection(context, [sheet]);
  await context.sync();
  if (lo.isNullObject) return null;
  const r = read();
  if (!r.sheets[0] && !r.structure) return null;
  return protectedError(operation, { sheet: sheet.name, table: tableName, sheetProtected: r.sheets[0], structureProtected: r.structure });
}
