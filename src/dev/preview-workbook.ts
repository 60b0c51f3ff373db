/**
 * The preview's handle on one emulated workbook: the `Excel` namespace the task pane uses, a
 * read-only view of the cells for drawing the grid, and user actions (select, activate a sheet,
 * type into a cell) that go through that same `Excel` namespace, as Excel's own UI would change the
 * workbook underneath an add-in.
 */
import { WorkbookModel, type SheetModel } from "../emulator/model";
import { createExcelNamespace, loadWorkbook, serializeWorkbook, type HostAnswer, type HostRequest } from "../emulator";
import { answerWhenReady } from "../emulator/library";
import { parseTypedInput } from "../emulator/typed-input";
import { isCellError, toApiValue } from "../emulator/values";
import { cellAddress } from "../emulator/address";

/** What the grid shows for one cell. `value` is the raw value as text (`Range.values`), not formatted. */
export interface PreviewCell {
  type: "number" | "text" | "boolean" | "empty" | "formula" | "error";
  value: string;
  formula: string | null;
  format: string;
  /** As displayed (`Range.text`). */
  text: string;
  /** What the in-cell editor starts with (typing it back leaves the cell as it was). */
  editText: string;
  /** Excel table covering the cell, if any. */
  table: string | null;
  tableHeader: boolean;
  /** Solid fill colour (`Range.format.fill`), null for No Fill. */
  fill?: string | null;
  /** The fill conditional formatting gives the cell (Excel draws it over `fill`), null for none. */
  cfFill?: string | null;
  /** The message of a custom function's error (Excel's error indicator shows it). */
  message?: string;
  /** An empty cell showing part of an array spilled from another cell. */
  spilled?: boolean;
}

export interface PreviewStats {
  /** `context.sync()` calls that reached the workbook. */
  syncs: number;
  /** Cells written through `values` / `formulas` / `numberFormat`. */
  cellWrites: number;
  /** Syncs that changed something (change notifications). */
  changes: number;
}

export interface PreviewWorkbook {
  /** Microsoft's `Excel` with `run` bound to this workbook (the preview's own user actions use it). */
  readonly Excel: unknown;
  /** The workbook model: the host of this frame's requests (`setDefaultWorkbook`). */
  readonly model: WorkbookModel;
  /**
   * Answers a RichApi request for this workbook (another runtime's bridge forwards its requests here,
   * so only strings cross between the frames' realms).
   */
  answer(request: HostRequest): Promise<HostAnswer>;
  /** The document settings as stored (key → JSON text), for the Common API's `Office.context.document.settings`. */
  readSettings(): Array<[string, string]>;
  /**
   * Saves the Common API's settings (`saveAsync`): the given keys take their JSON texts, the removed
   * keys go. Throws, changing nothing, when the settings would exceed the document's limit.
   */
  saveSettings(entries: Array<[string, string]>, removed: string[]): void;
  sheets(): string[];
  activeSheet(): string | null;
  /** Used rows/columns counted from A1 (so the grid can draw A1..end). */
  usedExtent(sheet: string): { rows: number; cols: number };
  cell(sheet: string, row: number, col: number): PreviewCell;
  /** Top-left cell of the selection when it is on the active sheet. */
  selection(): { row: number; col: number } | null;
  select(row: number, col: number): Promise<void>;
  activate(sheet: string): Promise<void>;
  /** Writes text as typed input (Excel parses numbers, dates, `=formulas`, `'text`). */
  typeInto(row: number, col: number, text: string): Promise<void>;
  /** Excel tables (ListObjects): name, sheet and 0-based inclusive rectangle, header row included. */
  tables(): Array<{ name: string; sheet: string; r0: number; c0: number; r1: number; c1: number }>;
  onChange(cb: () => void): () => void;
  serialise(): string;
  stats(): PreviewStats;
}

type ExcelRun = {
  run<T>(batch: (context: {
    workbook: {
      worksheets: {
        getItem(name: string): {
          getRange(address: string): { values: unknown; select(): void };
          activate(): void;
        };
      };
    };
    sync(): Promise<void>;
  }) => Promise<T>): Promise<T>;
};

const EMPTY: PreviewCell = {
  type: "empty", value: "", formula: null, format: "General", text: "", editText: "", table: null, tableHeader: false,
};

/** Creates the workbook, restoring a serialised one when given (and readable). */
export function createPreviewWorkbook(saved: string | null): PreviewWorkbook {
  let model: WorkbookModel | null = null;
  if (saved) {
    try {
      model = loadWorkbook(saved);
    } catch {
      // A workbook saved by an older preview build: start with a new one rather than fail.
      model = null;
    }
  }
  const wb = model ?? new WorkbookModel();
  const ns = createExcelNamespace(wb) as unknown as ExcelRun;
  let changes = 0;
  wb.onChange(() => {
    changes++;
  });

  const sheetByName = (name: string): SheetModel | undefined => wb.sheetByName(name);
  const run = <T>(fn: Parameters<ExcelRun["run"]>[0]): Promise<T> => ns.run<T>(fn as never);

  const cellOf = (s: SheetModel, r: number, c: number): PreviewCell => {
    const stored = wb.getCell(s, r, c);
    const t = wb.tablesOnSheet(s).find((x) => r >= x.rect.r0 && r <= x.rect.r1 && c >= x.rect.c0 && c <= x.rect.c1);
    const table = t ? t.name : null;
    const tableHeader = !!t && r === t.rect.r0;
    if (!stored) {
      // An empty cell may show part of a spilled array (its value is the anchor's, typed in by nobody).
      const spilled = wb.valueAt(s, r, c);
      if (spilled === null) return { ...EMPTY, table, tableHeader };
      const value = String(toApiValue(spilled));
      const type = isCellError(spilled) ? "error" : typeof spilled === "number" ? "number" : typeof spilled === "boolean" ? "boolean" : "text";
      return { ...EMPTY, type, value, text: wb.textAt(s, r, c), table, tableHeader, spilled: true };
    }
    const format = wb.numberFormatAt(s, r, c);
    const v = wb.valueAt(s, r, c);
    const text = wb.textAt(s, r, c);
    const value = v === null ? "" : String(toApiValue(v));
    // eslint-disable-next-line office-addins/load-object-before-read, office-addins/call-sync-before-read -- `stored` is the emulator's own cell record (wb.getCell), not an Office proxy
    const formula = stored.f;
    if (formula !== undefined) {
      const message = isCellError(v) && v.message ? { message: v.message } : {};
      return { type: "formula", value, formula, format, text, editText: formula, table, tableHeader, ...message };
    }
    if (v === null) return { ...EMPTY, format, table, tableHeader };
    if (isCellError(v)) return { type: "error", value, formula: null, format, text, editText: v.error, table, tableHeader };
    if (typeof v === "number") {
      // Dates and times edit as displayed (as in Excel's formula bar); other numbers as their full value.
      const isDate = /[dmyhs]/i.test(format.replace(/"[^"]*"/g, "")) && format !== "General";
      return { type: "number", value, formula: null, format, text, editText: isDate ? text : String(v), table, tableHeader };
    }
    if (typeof v === "boolean") {
      return { type: "boolean", value, formula: null, format, text, editText: v ? "TRUE" : "FALSE", table, tableHeader };
    }
    // Text that Excel would read as something else when typed back needs the apostrophe prefix.
    const asTyped = parseTypedInput(v, wb.currentYear);
    const keeps = format === "@" || (asTyped.kind === "string" && asTyped.value === v);
    return { type: "text", value, formula: null, format, text, editText: keeps ? v : `'${v}`, table, tableHeader };
  };

  return {
    Excel: ns,
    model: wb,
    answer: (request) => answerWhenReady(wb, request),
    readSettings: () => [...wb.settings.entries()],
    saveSettings(entries, removed) {
      const next = new Map(wb.settings);
      for (const k of removed) next.delete(k);
      for (const [k, v] of entries) next.set(k, v);
      let total = 0;
      for (const [k, v] of next) total += k.length + v.length;
      // The same limit as Excel's workbook.settings (see WorkbookModel.settingsLimitChars): one store.
      if (total > wb.settingsLimitChars) throw new Error(`The settings would hold ${total} characters; the limit is ${wb.settingsLimitChars}.`);
      wb.settings.clear();
      for (const [k, v] of next) wb.settings.set(k, v);
    },
    // Hidden and very hidden sheets (the add-in's rollback and baseline sheets) have no tab, as in Excel.
    sheets: () => wb.sheets.filter((s) => (s.visibility ?? "Visible") === "Visible").map((s) => s.name),
    activeSheet: () => {
      try {
        return wb.activeSheet().name;
      } catch {
        return null;
      }
    },
    usedExtent(sheetName) {
      const s = sheetByName(sheetName);
      const rect = s ? wb.usedRect(s) : null;
      return rect ? { rows: rect.r1 + 1, cols: rect.c1 + 1 } : { rows: 0, cols: 0 };
    },
    cell(sheetName, r, c) {
      const s = sheetByName(sheetName);
      if (!s) return EMPTY;
      return { ...cellOf(s, r, c), fill: wb.fillAt(s, r, c) ?? null, cfFill: wb.conditionalFillAt(s, r, c) };
    },
    selection() {
      const sel = wb.selection;
      if (!sel || sel.sheetId !== wb.activeSheetId) return null;
      return { row: sel.rect.r0, col: sel.rect.c0 };
    },
    async select(row, col) {
      const name = wb.activeSheet().name;
      await run(async (context) => {
        context.workbook.worksheets.getItem(name).getRange(cellAddress(row, col)).select();
        await context.sync();
      });
    },
    async activate(sheetName) {
      await run(async (context) => {
        context.workbook.worksheets.getItem(sheetName).activate();
        await context.sync();
      });
    },
    async typeInto(row, col, text) {
      const name = wb.activeSheet().name;
      await run(async (context) => {
        context.workbook.worksheets.getItem(name).getRange(cellAddress(row, col)).values = [[text]];
        await context.sync();
      });
    },
    tables: () =>
      wb.tables.map((t) => ({ name: t.name, sheet: wb.sheetById(t.sheetId)?.name ?? "", ...t.rect })),
    onChange: (cb) => wb.onChange(() => cb()),
    serialise: () => serializeWorkbook(wb),
    stats: () => ({ syncs: wb.stats.syncCount, cellWrites: wb.stats.cellsWritten, changes }),
  };
}


