/**
 * Importing a table into a worksheet as an Excel table (ListObject).
 *
 * Order of work, chosen for Excel's limits and so a partial write is never mistaken for data:
 * 1. validate the whole table and the sheet size limit (nothing touched yet);
 * 2. one `sync` of reads (sheet and table names, calculation mode, emptiness of the target area);
 * 3. the first request also sets the info cell to "importing — INCOMPLETE", the header row (text),
 *    and one number format per column over the whole column (text columns `@` BEFORE any value);
 * 4. values in row blocks sized under the request payload limit (see `blocks.ts`);
 * 5. one last request creates the table over the filled range, names it, writes the final info
 *    line and stores the binding.
 * On cancel or failure in 3-5 the written cells are cleared and the info cell says what happened;
 * if even that fails, the "INCOMPLETE" marker is what stays.
 */
import { storeRowHashes } from "./delta";
import { rowHash } from "../refresh/rowHash";
import { rowChars } from "./checksums";
import type { Table } from "../table/model";
import { validateTable, EXCEL_MAX_ROWS, EXCEL_MAX_COLUMNS } from "../refresh/validate";
import { bindingSettingKey, serializeBinding, type Binding } from "../refresh/binding";
import { planColumns, toValues, headerValues, TEXT_FORMAT, type ColumnPlan } from "./cells";
import { a1, deriveSheetName, sheetLabel, deriveTableName, isValidSheetName, isValidTableName, parseCell } from "./names";
import { infoComplete, infoFailed, infoInProgress } from "./info";
import { findOccupiedCell, findTouchingTable, prepareCalculation, setEvery, type CalculationGuard } from "./sheet";
import { throwIfAborted, writeInBlocks, WriteError } from "./blocks";
import { checkSettingsBudget, queueBindingSetting } from "./bindingStore";
import { keepSetting } from "./settle";
import { protectedError, queueProtection } from "./protection";

export { WriteError } from "./blocks";

/** Rows looked at when fitting column widths after an import. */
const AUTOFIT_ROWS = 200;

export interface ImportTarget {
  /** Existing sheet to write into; default: a new sheet named after the source key. */
  sheetName?: string;
  /** Top-left cell of the info line (the header goes one row below); default `A1`. */
  anchor?: string;
}

export interface ImportOptions {
  /** The binding to store, without the parts only the writer knows. */
  binding: Omit<Binding, "tableName" | "sheetName" | "rowCount" | "lastRefreshAt" | "lastCheckedAt" | "lastFailure">;
  target?: ImportTarget;
  /** Table name to use instead of the derived `ppm_<key>` (must be valid and free). */
  tableName?: string;
  signal?: AbortSignal;
  onProgress?: (rowsWritten: number, totalRows: number) => void;
  targetRequestBytes?: number;
  /** Credentials that must never be stored (checked against the binding before writing). */
  secrets?: readonly string[];
  now?: () => Date;
}

export interface ImportResult {
  binding: Binding;
  sheetName: string;
  tableName: string;
  /** Address of the whole table, header included, e.g. `A2:L200002`. */
  address: string;
  rowCount: number;
  syncs: number;
  blocks: number;
  shrinks: number;
}

/** Days between serial 0 of the 1900 and of the 1904 date system (support.microsoft.com: 1,462 days). */
export const DATE1904_OFFSET = 1462;

/**
 * Source of typed values for a table's rows. In a workbook on the 1904 date system every date and
 * date-time serial is 1,462 lower (else it would show 4 years and 1 day late); a date before
 * 1904-01-01, which that system cannot show, is written as its text.
 */
export function typedRows(table: Table, plans: readonly ColumnPlan[], date1904 = false, reuse = false): TypedRows {
  const dateColumns = date1904 ? plans.flatMap((p, i) => (p.kind === "date" || p.kind === "datetime" ? [i] : [])) : [];
  const total = table.rows.length;
  const hashes = new Array<string | undefined>(total);
  const width = plans.length;
  let longest = 1;
  // `reuse`: each block is typed into the same arrays (a writer that is done with a block once its
  // request is sent: 200,000 row arrays fewer for the collector at an import).
  const buffer: (string | number | boolean)[][] | undefined = reuse ? [] : undefined;
  const get = (from: number, to: number): (string | number | boolean)[][] => {
    const out = toValues(table.rows, plans, from, to, buffer);
    for (let r = 0; r < out.length; r++) {
      for (const c of dateColumns) {
        const v = out[r][c];
        if (typeof v !== "number") continue;
        out[r][c] = v - DATE1904_OFFSET >= 0 ? v - DATE1904_OFFSET : String(table.rows[from + r][c]);
      }
      hashes[from + r] = rowHash(out[r]);
      const chars = rowChars(out[r], width);
      if (chars > longest) longest = chars;
    }
    return out;
  };
  const typeAll = () => {
    for (let r = 0; r < total; r++) {
      if (hashes[r] !== undefined) continue;
      let end = r;
      while (end < total && hashes[end] === undefined && end - r < 5_000) end++;
      get(r, end);
    }
  };
  return {
    total,
    get,
    hashes: () => {
      typeAll();
      return hashes as string[];
    },
    longestRowChars: () => {
      typeAll();
      return longest;
    },
  };
}

/** The table's rows as written, block by block; `hashes()` their fingerprints (see {@link typedRows}). */
export interface TypedRows {
  total: number;
  /**
   * Rows [from, to) as written. With `typedRows(…, reuse)` the block lives only until the next `get`
   * (the same arrays are filled again): a caller must be done with it (its request sent) first.
   */
  get(from: number, to: number): (string | number | boolean)[][];
  /**
   * The fingerprint of every row as written (`rowHash`), taken from the blocks `get` has already
   * typed for the write, so the fingerprints never need a second typed copy of the table (issue #24
   * items 2 and 4: that copy was 200,000 row arrays and a second typing pass at the end of an import);
   * rows no block has reached yet are typed here.
   */
  hashes(): string[];
  /** The characters the longest row adds to a block checksum's joined text (`checksums.ts` rowChars), likewise. */
  longestRowChars(): number;
}

/**
 * Queues the probe of the workbook's date system: `DATE(1904,1,1)` evaluated by Excel
 * (`workbook.functions`, ExcelApi 1.2) is 0 in the 1904 system and 1,462 in the 1900 system. Works on
 * every platform; `Workbook.use1904DateSystem` is a preview API only. Read `is1904()` after the sync.
 */
export function queueDateSystemProbe(context: Excel.RequestContext): { is1904(): boolean } {
  const result = context.workbook.functions.date(1904, 1, 1);
  result.load("value");
  return { is1904: () => result.value === 0 };
}


/** Queues one number format per column over the column's body rows (a single small operation each). */
export function queueColumnFormats(sheet: Excel.Worksheet, bodyRow: number, firstColumn: number, bodyRows: number, plans: readonly ColumnPlan[]): void {
  if (bodyRows <= 0) return;
  plans.forEach((p, i) => {
    setEvery(sheet.getRangeByIndexes(bodyRow, firstColumn + i, bodyRows, 1), "numberFormat", p.numberFormat);
  });
}

/**
 * Imports a table into the workbook as a new Excel table and stores its binding.
 * @throws WriteError (`invalid_table`, `cell_too_long`, `too_many_rows`, `too_many_columns`, `occupied`, `protected`,
 * `cancelled`, `payload_too_large`, `write_failed`); every code except the last three means nothing was written.
 */
export async function importTable(context: Excel.RequestContext, table: Table, options: ImportOptions): Promise<ImportResult> {
  const now = options.now ?? (() => new Date());
  const issues = validateTable(table, 3);
  if (issues.length) {
    const first = issues[0].code;
    const code = first === "too_many_rows" || first === "too_many_columns" || first === "cell_too_long" ? first : "invalid_table";
    throw new WriteError(code, issues.map((i) => i.message).join(" "));
  }
  const anchor = parseCell(options.target?.anchor ?? "A1");
  const width = table.columns.length;
  const bodyRows = Math.max(1, table.rows.length); // an Excel table always has at least one body row
  if (anchor.row + 2 + bodyRows > EXCEL_MAX_ROWS) {
    throw new WriteError(
      "too_many_rows",
      `${table.rows.length.toLocaleString("en-US")} rows starting at row ${anchor.row + 3} do not fit on a sheet (${EXCEL_MAX_ROWS.toLocaleString("en-US")} rows). Add a local filter ($filter or $top) to import fewer rows.`,
    );
  }
  if (anchor.column + width > EXCEL_MAX_COLUMNS) {
    throw new WriteError("too_many_columns", `${width} columns starting at column ${anchor.column + 1} do not fit on a sheet (${EXCEL_MAX_COLUMNS} columns).`);
  }
  if (options.tableName !== undefined && !isValidTableName(options.tableName)) {
    throw new WriteError("invalid_table", `"${options.tableName}" is not a valid Excel table name (letters, digits, _ and . only, starting with a letter or _, and not like a cell address).`);
  }
  if (options.target?.sheetName !== undefined && !isValidSheetName(options.target.sheetName)) {
    throw new WriteError("invalid_table", `"${options.target.sheetName}" is not a valid sheet name.`);
  }
  throwIfAborted(options.signal, 0, table.rows.length);

  // --- reads (nothing written yet) ---
  const wb = context.workbook;
  const sheets = wb.worksheets;
  sheets.load("items/name");
  const tables = wb.tables;
  tables.load("items/name");
  const calc = prepareCalculation(context);
  const dateSystem = queueDateSystemProbe(context);
  const chosen = options.target?.sheetName !== undefined ? sheets.getItemOrNullObject(options.target.sheetName) : null;
  chosen?.load("name");
  const wbNames = wb.names;
  wbNames.load("items/name");
  const settings = wb.settings;
  settings.load("items/key,items/value");
  // Issue #35: the target sheet's and the workbook's protection, read with these.
  const protection = queueProtection(context, chosen ? [chosen] : []);
  let syncs = 1;
  await context.sync();
  const locked = protection();
  const intoExisting = !!chosen && !chosen.isNullObject;
  if ((intoExisting && locked.sheets[0]) || (!intoExisting && locked.structure)) {
    const sheetName = intoExisting ? chosen.name : options.target?.sheetName ?? deriveSheetName(sheetLabel(options.binding.source), sheets.items.map((s) => s.name));
    throw protectedError("import", { sheet: sheetName, sheetProtected: intoExisting && locked.sheets[0], structureProtected: locked.structure, addsSheet: !intoExisting });
  }
  // Sheet-scoped names can be asked for only once the sheets are known.
  const scopedNames = sheets.items.map((s) => {
    const n = s.names;
    n.load("items/name");
    return n;
  });
  syncs++;
  await context.sync();
  const names = () => [...wbNames.items.map((n) => n.name), ...scopedNames.flatMap((n) => n.items.map((i) => i.name))];

  const key = options.binding.source.kind === "dataset" ? options.binding.source.key : options.binding.source.endpoint;
  // Table names and defined names (any scope) share one namespace: checked here, before any write.
  const tableNames = tables.items.map((t) => t.name);
  const taken = [...tableNames, ...names()];
  const tableName = options.tableName ?? deriveTableName(key, taken);
  if (tableNames.some((n) => n.toLowerCase() === tableName.toLowerCase())) {
    throw new WriteError("invalid_table", `A table named "${tableName}" already exists in this workbook.`);
  }
  if (taken.some((n) => n.toLowerCase() === tableName.toLowerCase())) {
    throw new WriteError("name_taken", `"${tableName}" is already a defined name in this workbook (Formulas › Name Manager); a table cannot use it. Choose another table name.`);
  }
  const info = { row: anchor.row, column: anchor.column };
  const headerRow = anchor.row + 1;
  const bodyRow = anchor.row + 2;
  const area = { row: anchor.row, column: anchor.column, rowCount: bodyRows + 2, columnCount: width };

  // A new sheet is created inside the first block's request (see the prelude), so a request the
  // payload limit refuses is retried whole, sheet included.
  let sheet: Excel.Worksheet = null as unknown as Excel.Worksheet;
  let sheetName: string;
  let created = false;
  if (chosen && !chosen.isNullObject) {
    sheet = chosen;
    sheetName = chosen.name;
    const occupied = await findOccupiedCell(context, sheet, area);
    syncs += 1;
    if (occupied) {
      throw new WriteError("occupied", `The import needs ${a1(area.row, area.column, area.rowCount, area.columnCount)} on "${sheetName}" to be empty, but ${occupied} is not. Choose an empty area or a new sheet.`, { address: occupied });
    }
    const touching = await findTouchingTable(context, sheet, area);
    syncs += 1;
    if (touching) {
      throw new WriteError(
        "adjacent_table",
        `The import at ${a1(area.row, area.column, area.rowCount, area.columnCount)} on "${sheetName}" would touch the table "${touching}": Excel would merge what is written next to a table into it. Leave an empty row and column between tables, or import to a new sheet.`,
      );
    }
  } else {
    sheetName = options.target?.sheetName ?? deriveSheetName(sheetLabel(options.binding.source), sheets.items.map((s) => s.name));
    created = true;
  }

  const partial = {
    ...options.binding,
    tableName,
    sheetName,
    rowCount: table.rows.length,
    lastRefreshAt: now().toISOString(),
    lastCheckedAt: now().toISOString(),
    lastFailure: null,
  } as Binding;
  // Checked before writing, so a binding that would carry a secret never leaves a half-import behind.
  const bindingJson = serializeBinding(partial, options.secrets ?? []);
  // The settings budget is checked now too: a binding that cannot be stored must not cost a write.
  checkSettingsBudget(settings.items, bindingSettingKey(partial.id), bindingJson);

  // --- writes ---
  const plans = planColumns(table);
  let guard = null as CalculationGuard | null;
  let started = false as boolean;
  const infoCell = () => sheet.getRangeByIndexes(info.row, info.column, 1, 1);
  let rowsWritten = 0;
  try {
    // Each block's arrays are serialised into its request by the sync that sends it, before the
    // next block is typed: one buffer serves every block.
    const rows = typedRows(table, plans, dateSystem.is1904(), true);
    const written = await writeInBlocks(
      context,
      (from, count) => sheet.getRangeByIndexes(bodyRow + from, anchor.column, count, width),
      rows,
      {
        signal: options.signal,
        targetRequestBytes: options.targetRequestBytes,
        onProgress: (n, total) => {
          rowsWritten = n;
          options.onProgress?.(n, total);
        },
        prelude: () => {
          started = true;
          guard ??= calc.start();
          if (created) sheet = sheets.add(sheetName);
          const cell = infoCell();
          cell.numberFormat = [[TEXT_FORMAT]];
          cell.values = [[infoInProgress("import", options.binding.source)]];
          const header = sheet.getRangeByIndexes(headerRow, anchor.column, 1, width);
          setEvery(header, "numberFormat", TEXT_FORMAT);
          header.values = headerValues(table.columns);
          queueColumnFormats(sheet, bodyRow, anchor.column, bodyRows, plans);
        },
      },
    );
    syncs += written.syncs;
    throwIfAborted(options.signal, rowsWritten, table.rows.length);

    const address = a1(headerRow, anchor.column, bodyRows + 1, width);
    // From a Range, never a bare address: `TableCollection.add` reads a bare address on the ACTIVE
    // sheet (docs: "If the address does not contain a sheet name, the currently-active sheet is used").
    const listObject = sheet.tables.add(sheet.getRangeByIndexes(headerRow, anchor.column, bodyRows + 1, width), true);
    listObject.name = tableName;
    infoCell().values = [[infoComplete({
      source: options.binding.source,
      environment: options.binding.environment,
      generatedAt: options.binding.validators.generatedAt ?? table.meta.generatedAt,
      schemaVersion: options.binding.schemaVersion,
      refreshedAt: partial.lastRefreshAt ?? now().toISOString(),
      rowCount: table.rows.length,
      query: options.binding.query,
    })]];
    // Fit widths to the header and the first rows only: enough for dates not to show as ####,
    // and cheap on a 200,000-row table.
    sheet.getRangeByIndexes(headerRow, anchor.column, Math.min(bodyRows, AUTOFIT_ROWS) + 1, width).format.autofitColumns();
    queueBindingSetting(context, partial.id, bindingJson);
    if (created) sheet.activate();
    guard?.restore();
    // No calculation is asked for: Excel's own mode decides (sheet.ts, issue #34).
    syncs++;
    await context.sync();
    // Issue #35: a new binding a co-author's stale settings copy could erase is settled with the batch.
    keepSetting(context, { key: bindingSettingKey(partial.id), value: bindingJson, mode: "cas", previous: null });
    // The row fingerprints a later delta refresh plans from (issue #15, delta.ts): ≈ 6 % more
    // request bytes now instead of reading the whole table back at the first refresh. Without them
    // that refresh reads the table once, so a failure here is not the import's.
    // Under structure protection (issue #35) the hidden sheets they live on cannot be added: the first refresh reads the table instead.
    if (!locked.structure) try {
      // With Excel's block checksums of the same rows (issue #24: the first refresh reads only what moved).
      syncs += await storeRowHashes(context, partial, rows.hashes(), plans.map((p) => p.numberFormat), options.targetRequestBytes, {
        geometry: { sheet: sheetName, top: headerRow + 1, left: anchor.column, width: table.columns.length, rows: table.rows.length },
        longestRowChars: rows.longestRowChars(),
      });
    } catch {
      /* the next refresh plans from the cells */
    }
    return { binding: partial, sheetName, tableName, address, rowCount: table.rows.length, syncs, blocks: written.blocks, shrinks: written.shrinks };
  } catch (err) {
    const failure = err instanceof WriteError ? err : new WriteError("write_failed", `Writing to Excel failed: ${errorText(err)}`, { rowsWritten, cause: err });
    if (!started) throw failure; // nothing was queued for the workbook
    try {
      // Clear what was written, then say so where the table would have been.
      sheet.getRangeByIndexes(area.row, area.column, area.rowCount, area.columnCount).clear("Contents");
      const cell = infoCell();
      cell.numberFormat = [[TEXT_FORMAT]];
      cell.values = [[infoFailed("import", options.binding.source, now().toISOString(), failure.code, failure.message, false)]];
      guard?.restore();
      await context.sync();
    } catch {
      // The "INCOMPLETE" marker written with the first block stays; nothing more can be done here.
    }
    throw failure;
  }
}

/** The message of an Office or other error, without assuming its shape. */
export function errorText(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; message?: unknown };
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- an error of unknown shape without a message: its own toString, if it has one, is the best text there is
    const msg = typeof e.message === "string" ? e.message : String(err);
    return typeof e.code === "string" && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
  }
  return String(err);
}
