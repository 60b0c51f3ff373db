/**
 * Write-back change detection: a pure function of (import record, sheet now, service now, field
 * metadata) → the list of changed cells, each with its validation result. Nothing here sends.
 *
 * Two modes:
 * - `baseline`: the table has a current import record. A cell is a user change when its hash differs
 *   from the recorded one. If the service's value also differs from the record, someone else changed
 *   it since the import: a `conflict`, never sent (sending would silently overwrite their change).
 * - `service`: no usable import record (imported before write-back existed, table too large, record
 *   stale or unreadable). Custom-field cells are compared with the service's current values; every
 *   difference is a change. Concurrent changes cannot be told apart here, which the caller must say.
 */
import { cellHash, type Baseline, type SheetTable } from "./baseline";
import { TOKEN_COLUMN, type CustomFieldMeta } from "./fields";
import { canonicalValue, cellToText, numericCellText, serviceValueText, validateFieldValue, valueHash } from "./values";
import { heldKey, type HeldCell } from "./held";

/** What the check before sending says about one changed cell. */
export type ChangeValidation =
  /** Will be sent. `warning` is shown but does not stop it. */
  | { status: "valid"; warning?: string }
  /** Breaks a rule (numeric format, Excel error, duplicate token...): not sent. */
  | { status: "invalid"; message: string }
  /** Changed on the service since the import (or the record is gone): not sent. */
  | { status: "conflict"; message: string }
  /** An edit outside the custom fields: only custom fields are written back. */
  | { status: "ignored"; message: string };

/** One changed cell. */
export interface Change {
  /** 1-based data row of the table (row 1 = first row under the header). */
  row: number;
  /** 1-based sheet row, when the sheet position is known. */
  sheetRow?: number;
  projectToken: string;
  field: string;
  /** The service's current value (null = none / record not found); what the cell held before the edit, unless in conflict. */
  old: string | null;
  /** What the sheet holds now, as it would be sent. */
  new: string;
  validation: ChangeValidation;
  /**
   * Set when a number cell was refused because of how Excel read what was typed (its format is no
   * longer General): the text Excel shows. Write-back then puts that text in the cell as text, so
   * what the user types next is read exactly as typed (issue #25).
   */
  asShown?: string;
}

/** A row-level problem that is not tied to one field (e.g. a row added by hand). */
export interface RowNote {
  row: number;
  sheetRow?: number;
  projectToken: string | null;
  message: string;
  /** A row the user added by hand (no token, or a token that was not imported): a refresh would remove it. */
  added?: true;
}

export interface DiffInput {
  sheet: SheetTable;
  /** Custom fields of the company, or null when unknown (then every edited column is offered, and the service decides). */
  fields: CustomFieldMeta[] | null;
  /** A current import record, or null for `service` mode. */
  baseline: Baseline | null;
  /** The service's current snapshot rows, keyed by project_token (values as in the tabular model). */
  service: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  tokenColumn?: string;
  /** Edits kept in the sheet after an earlier send (see `held.ts`): an earlier conflict is flagged again. */
  held?: readonly HeldCell[];
}

export interface DiffResult {
  mode: "baseline" | "service";
  changes: Change[];
  notes: RowNote[];
}

/** Indexes snapshot rows by project_token (first occurrence wins; tokens are unique in a snapshot). */
export function indexServiceRows(columns: readonly { name: string }[], rows: readonly unknown[][], tokenColumn = TOKEN_COLUMN): Map<string, Record<string, unknown>> {
  const ti = columns.findIndex((c) => c.name === tokenColumn);
  const out = new Map<string, Record<string, unknown>>();
  if (ti < 0) return out;
  for (const r of rows) {
    const tok = r[ti];
    if (typeof tok !== "string" || tok === "" || out.has(tok)) continue;
    const rec: Record<string, unknown> = {};
    columns.forEach((c, i) => (rec[c.name] = r[i]));
    out.set(tok, rec);
  }
  return out;
}

/** Computes the changes between what was imported and what the sheet holds now. */
export function diffWriteback(input: DiffInput): DiffResult {
  const { sheet, fields, baseline, service } = input;
  const tokenColumn = input.tokenColumn ?? TOKEN_COLUMN;
  const mode: DiffResult["mode"] = baseline && !baseline.tooLarge ? "baseline" : "service";
  const changes: Change[] = [];
  const notes: RowNote[] = [];
  const ti = sheet.columns.indexOf(tokenColumn);
  if (ti < 0) {
    notes.push({ row: 0, projectToken: null, message: `The table has no "${tokenColumn}" column, so no row can be matched to a record.` });
    return { mode, changes, notes };
  }
  if (mode === "service" && fields === null) {
    notes.push({
      row: 0,
      projectToken: null,
      message: "Neither an import record nor the list of custom fields is available, so edits cannot be told from other differences. Refresh the table from the Records panel (this records what was imported), or make the reporting manifest readable.",
    });
    return { mode, changes, notes };
  }
  const fieldByName = new Map((fields ?? []).map((f) => [f.name, f]));
  const heldByKey = new Map((input.held ?? []).map((h) => [heldKey(h.projectToken, h.field), h]));
  const baselineColumn = new Map((baseline?.columns ?? []).map((c, i) => [c, i]));
  const sheetRowOf = (i: number) => (sheet.firstSheetRow !== undefined ? { sheetRow: sheet.firstSheetRow + i } : {});

  // Tokens on several rows cannot be written back: which row is the record?
  const seen = new Map<string, number>();
  for (const r of sheet.rows) {
    const t = cellToText(r[ti]);
    if (t.ok && t.text !== "") seen.set(t.text, (seen.get(t.text) ?? 0) + 1);
  }

  sheet.rows.forEach((cells, i) => {
    const row = i + 1;
    const tokText = cellToText(cells[ti]);
    const token = tokText.ok ? tokText.text : "";
    const inBaseline = mode === "baseline" && baseline !== null && Object.prototype.hasOwnProperty.call(baseline.rows, token);
    // Split once per row; the record stores a row's hashes as one string.
    const recordedRow = inBaseline ? baseline.rows[token].split(",") : [];
    const recorded = (name: string): string | undefined => {
      const ci = baselineColumn.get(name);
      return ci === undefined ? undefined : recordedRow[ci];
    };

    // Which columns can hold a user's edit in this row?
    const candidates: { ci: number; name: string }[] = [];
    sheet.columns.forEach((name, ci) => {
      if (ci === ti) return;
      if (mode === "service" && !fieldByName.has(name)) return;
      candidates.push({ ci, name });
    });

    const edited = candidates.filter(({ ci, name }) => {
      if (mode === "baseline") {
        if (!inBaseline) return false;
        const h = recorded(name);
        return h !== undefined && h !== cellHash(cells[ci]);
      }
      const rec = service.get(token);
      if (!rec) return false;
      const f = fieldByName.get(name)!;
      const cur = cellToText(cells[ci]);
      if (!cur.ok) return true;
      return canonicalValue(cur.text, f.numeric) !== canonicalValue(serviceValueText(rec[name]), f.numeric);
    });

    if (token === "") {
      if (candidates.some(({ ci }) => !isBlank(cells[ci]))) {
        notes.push({ row, ...sheetRowOf(i), projectToken: null, message: `Row has no ${tokenColumn}; it is not written back (create records with the form).`, added: true });
      }
      return;
    }
    if (mode === "baseline" && !inBaseline) {
      const duplicate = baseline!.duplicates.includes(token);
      const msg = duplicate
        ? `${token} occurred on several rows when imported; its rows are not written back.`
        : `${token} was not part of the import; added rows are not written back (create records with the form).`;
      notes.push({ row, ...sheetRowOf(i), projectToken: token, message: msg, ...(duplicate ? {} : { added: true as const }) });
      return;
    }
    if (mode === "service" && !service.has(token)) {
      if (candidates.some(({ ci }) => !isBlank(cells[ci]))) {
        notes.push({ row, ...sheetRowOf(i), projectToken: token, message: `${token} is not in the service's current snapshot; the row is not written back.` });
      }
      return;
    }

    for (const { ci, name } of edited) {
      const rec = service.get(token);
      const meta = fieldByName.get(name);
      const cur = cellToText(cells[ci]);
      const numeric = meta ? meta.numeric : null;
      let newText = cur.ok ? cur.text : "";
      // A number in a numeric field is judged by how Excel shows it: Excel turned the typed text
      // into that number, and a format other than General says the text was not a plain decimal.
      let formatProblem: string | null = null;
      const raw = cells[ci];
      if (numeric === true && typeof raw === "number") {
        const judged = numericCellText(raw, sheet.shown?.[name]?.[i]);
        newText = judged.text;
        if (!judged.ok) formatProblem = judged.message;
      }
      const oldText = rec ? serviceValueText(rec[name]) : null;
      const base = { row, ...sheetRowOf(i), projectToken: token, field: name, old: oldText, new: newText };

      if (fields !== null && !meta) {
        changes.push({ ...base, validation: { status: "ignored", message: "Not a custom field: only custom fields are written back. The next refresh restores the service's value." } });
        continue;
      }
      if (mode === "baseline") {
        if (!rec) {
          changes.push({ ...base, validation: { status: "conflict", message: "The record is no longer in the service's snapshot (removed or moved); not sent." } });
          continue;
        }
        const serviceNow = valueHash(oldText ?? "");
        if (serviceNow !== recorded(name)) {
          if (cur.ok && canonicalValue(newText, numeric) === canonicalValue(oldText, numeric)) continue; // both sides made the same change
          changes.push({
            ...base,
            validation: { status: "conflict", message: `Changed on the service since the import (now ${display(oldText)}); not sent, so that change is not overwritten. Your value stays in the sheet: send it again to replace theirs, or discard it.` },
          });
          continue;
        }
        // Retyping the same number differently ("1500.50" over "1500.5") changes nothing on the service.
        if (cur.ok && numeric && canonicalValue(newText, true) === canonicalValue(oldText, true)) continue;
      }
      if (seen.get(token)! > 1) {
        changes.push({ ...base, validation: { status: "invalid", message: `${token} appears on several rows; correct the duplicates first.` } });
        continue;
      }
      if (!cur.ok) {
        changes.push({ ...base, validation: { status: "invalid", message: cur.reason } });
        continue;
      }
      if (formatProblem !== null) {
        changes.push({ ...base, asShown: newText, validation: { status: "invalid", message: formatProblem } });
        continue;
      }
      const v = validateFieldValue(newText, numeric, cur.fromNumber);
      // An edit held back after an earlier send because of a conflict: the import record now holds the
      // service's value the user was shown, so sending is a deliberate overwrite; say so once more.
      const wasConflict = heldByKey.get(heldKey(token, name))?.status === "conflict";
      const warning = [v.ok ? v.warning : undefined, wasConflict ? `Someone else changed this on the service (now ${display(oldText)}) before your edit was sent; sending replaces their value.` : undefined]
        .filter((w): w is string => !!w)
        .join(" ");
      changes.push({ ...base, validation: v.ok ? (warning ? { status: "valid", warning } : { status: "valid" }) : { status: "invalid", message: v.message } });
    }
  });
  return { mode, changes, notes };
}

function isBlank(v: unknown): boolean {
  return v === null || v === undefined || v === "";
}

function display(v: string | null): string {
  return v === null || v === "" ? "empty" : JSON.stringify(v);
}
