/**
 * Importing a complete table into a worksheet as an Excel table (ListObject).
 *
 * The writing itself is `tableWriter.ts`, which an import streamed from the service uses as it is
 * (issue #38: `importSource`). A complete table adds one guarantee: it is validated whole (row shape,
 * every value against its column type, Excel's grid) before anything is touched, so a table that
 * cannot be written is refused with nothing written, and its number formats are set once over each
 * whole column. See `tableWriter.ts` for the order of work and what a failure leaves behind.
 */
import type { Table } from "../table/model";
import { validateTable } from "../refresh/validate";
import { planColumns } from "./cells";
import { throwIfAborted, WriteError } from "./blocks";
import { TableWriter, type BindingDraft, type ImportResult, type TableWriterOptions } from "./tableWriter";

export { WriteError, errorText } from "./blocks";
export { DATE1904_OFFSET, typedRows, type TypedRows } from "./typing";
export { queueColumnFormats, queueDateSystemProbe } from "./sheet";
export type { ImportResult, ImportTarget } from "./tableWriter";

/** The writer's options (target, table name, signal, progress, request size, secrets, clock) for a complete table. */
export interface ImportOptions extends Omit<TableWriterOptions, "binding" | "known" | "expectedRows"> {
  /** The binding to store, without the parts only the writer knows. */
  binding: BindingDraft;
}

/**
 * Imports a table into the workbook as a new Excel table and stores its binding.
 * @throws WriteError (`invalid_table`, `cell_too_long`, `too_many_rows`, `too_many_columns`, `occupied`, `protected`,
 * `cancelled`, `payload_too_large`, `write_failed`); every code except the last three means nothing was written.
 */
export async function importTable(context: Excel.RequestContext, table: Table, options: ImportOptions): Promise<ImportResult> {
  const issues = validateTable(table, 3);
  if (issues.length) {
    const first = issues[0].code;
    const code = first === "too_many_rows" || first === "too_many_columns" || first === "cell_too_long" ? first : "invalid_table";
    throw new WriteError(code, issues.map((i) => i.message).join(" "));
  }
  const plans = planColumns(table);
  const writer = new TableWriter(context, {
    ...options,
    binding: () => options.binding,
    known: {
      rows: table.rows.length,
      plans,
      validated: true,
    },
  });
  writer.begin(table.columns);
  throwIfAborted(options.signal, 0, table.rows.length);
  for (const row of table.rows) writer.row(row);
  writer.end();
  try {
    return await writer.finish({ schemaVersion: options.binding.schemaVersion, validators: options.binding.validators, generatedAt: table.meta.generatedAt });
  } catch (e) {
    return writer.fail(e);
  }
}
