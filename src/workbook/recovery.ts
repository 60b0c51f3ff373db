/**
 * Refresh markers and recovery after an interrupted refresh (issue #26, hazards 2 and 3).
 *
 * Decisions (details in `src/workbook/README.md`, "Refresh", "Interrupted refreshes"):
 * - **Per-table rollback storage.** Each binding keeps its rollback copy on a very hidden sheet of
 *   its own, `ppm_rb_` + 8 hex digits of the binding id's hash: two tables at the same address on
 *   different sheets, refreshed in one runtime or in two clients, never share, overwrite or clear each
 *   other's copy, and no client picks a "free" slot another could pick too (two refreshes of ONE table
 *   are kept apart by its lock). The sheet is made by the table's first refresh and kept (cleared after
 *   each refresh): adding or deleting a sheet is a structural change, which conflicts with any
 *   co-author's concurrent structural change ("Can't merge changes", office-js #1813), so a refresh
 *   adds none after its first.
 * - **The marker.** In the same request as the copy, the refresh writes a document setting
 *   `ppm.refreshing.<bindingId>` (its owner inside): which table, on which sheet, which rollback sheet, the old
 *   table's and the copied area's addresses, since when. The COMMIT request (new data, info line,
 *   binding) deletes it, and a failed refresh deletes it after its restore. So a marker in the
 *   document means: a refresh wrote to that table and never finished, in either direction.
 * - **Recovery** (`recoverInterruptedRefreshes`) runs once when the add-in starts (`AddinRuntime.start`)
 *   and before every refresh of a table that has a marker (`writeRefresh`, once its lock is held).
 *   At start, a marker whose table's lock still holds is left alone (a live refresh, maybe in another
 *   client, owns it; its own failure path or the next start handles it); otherwise recovery takes the
 *   table's lock itself, puts the old table back from the copy (its size and every cell of the copied
 *   area, formulas and formats included) and says so on the info line; without a copy (the table or
 *   the copy is gone) it marks the table clearly ("the table may be INCOMPLETE; refresh again") and
 *   forgets the row fingerprints, so the next refresh plans from the cells. Then the leftovers go: the
 *   copy (its area cleared), the marker, and the lock (released; it was recovery's own from the dead
 *   refresh's expired one). A copy without a marker (a refresh that committed and died before clearing
 *   it) is never restored from, and the table's next refresh overwrites it.
 */
import type { Binding } from "../refresh/binding";
import type { Rect } from "../refresh/plan";
import { errorText } from "./writer";
import { INFO_PREFIX, infoFailed } from "./info";
import { acquireTableLock, readTableLock } from "./lock";
import { readBindings } from "./bindingStore";
import { dropRowHashes } from "./delta";
import { hash8 } from "./slots";
import { WriteError } from "./blocks";
import { TEXT_FORMAT } from "./cells";
import { tableProtection } from "./protection";

/** Settings key prefix of refresh markers. */
export const REFRESH_MARKER_PREFIX = "ppm.refreshing.";
/** Prefix of the per-refresh rollback sheets. */
export const ROLLBACK_SHEET_PREFIX = "ppm_rb_";
/** Code shown on the info line of a table recovery put back or marked. */
export const INTERRUPTED_CODE = "interrupted";
/** Who holds a table's lock while recovery works on it (named to a second caller). */
export const RECOVERY_HOLDER = "the recovery of an interrupted refresh";

/** Most cells one `copyFrom` of a rollback copy moves (Excel's five-million-cell limit per operation, with room). */
const COPY_BLOCK_CELLS = 4_000_000;

/**
 * What a refresh in flight leaves in the document. Stored compactly (every refresh sends it, and a
 * small delta is a few KB): `{"v":1,"o":owner,"at":started,"t":[row,col,rows,cols],"r":[…],"c":1}`;
 * the table's name and source come from the binding.
 */
export interface RefreshMarker {
  bindingId: string;
  /** The refresh's lock owner. */
  owner: string;
  startedAt: string;
  /** The rollback copy's sheet (null: this refresh keeps no copy in the workbook). */
  rollback: string | null;
  /** The old table (header, body, totals row), sheet indexes. */
  table: Rect;
  /** The area copied to the rollback sheet, at the same address. */
  region: Rect;
  /**
   * Issue #35: the refresh committed (its commit request turns the marker into `{"v":1,"o":owner,"done":1}`
   * instead of deleting it, since deleting a setting a co-author's whole-collection write has erased
   * fails the request; its last request deletes it). Such a marker is cleared, never restored from.
   */
  done?: boolean;
}

const rectArray = (r: Rect) => [r.row, r.column, r.rowCount, r.columnCount];

/**
 * One marker per binding: only the holder of the table's lock writes it, and a refresh reads it (and
 * recovers a dead one's) before writing its own, so refreshes of one table never need two at once.
 */
export function markerKey(bindingId: string): string {
  return REFRESH_MARKER_PREFIX + bindingId;
}

/** The rollback sheet of one binding (never shared, never "free"). */
export function rollbackSheetName(bindingId: string): string {
  return ROLLBACK_SHEET_PREFIX + hash8(bindingId);
}

/** Queues writing a marker (in the request that makes the rollback copy); returns the JSON text written. */
export function queueMarker(context: Excel.RequestContext, marker: RefreshMarker): string {
  const value = JSON.stringify({ v: 1, o: marker.owner, at: marker.startedAt, t: rectArray(marker.table), r: rectArray(marker.region), c: marker.rollback ? 1 : 0 });
  context.workbook.settings.add(markerKey(marker.bindingId), value);
  return value;
}

/**
 * Queues deleting a marker that is there (a method on a setting that is gone fails its request:
 * queue it only where a read in the same or the previous request found the marker).
 */
export function queueDropMarker(context: Excel.RequestContext, bindingId: string): void {
  context.workbook.settings.getItemOrNullObject(markerKey(bindingId)).delete();
}

/**
 * Queues turning a marker into its committed form (the commit request: an `add`, which never fails;
 * see {@link RefreshMarker.done}). Returns the JSON text written.
 */
export function queueMarkerDone(context: Excel.RequestContext, bindingId: string, owner: string): string {
  const value = JSON.stringify({ v: 1, o: owner, done: 1 });
  context.workbook.settings.add(markerKey(bindingId), value);
  return value;
}

/**
 * Deletes a marker if the document holds it (two syncs: read, delete). Issue #35: a co-author's
 * whole-collection settings write can have erased it meanwhile. True when one was deleted.
 */
export async function dropMarkerIfPresent(context: Excel.RequestContext, bindingId: string, beforeDelete?: () => void): Promise<boolean> {
  const item = context.workbook.settings.getItemOrNullObject(markerKey(bindingId));
  item.load("key");
  await context.sync();
  if (item.isNullObject) return false;
  // A refresh's lock fence (issue #34) leads the deleting request.
  beforeDelete?.();
  item.delete();
  await context.sync();
  return true;
}

function toRect(x: unknown): Rect | null {
  if (!Array.isArray(x) || x.length !== 4 || !x.every((v) => typeof v === "number" && Number.isInteger(v) && v >= 0)) return null;
  const [row, column, rowCount, columnCount] = x as number[];
  return { row, column, rowCount, columnCount };
}

/** A marker read back from the document (untrusted input: null when unreadable). */
export function parseMarker(key: string, value: unknown): RefreshMarker | null {
  try {
    if (!key.startsWith(REFRESH_MARKER_PREFIX)) return null;
    const m = (typeof value === "string" ? JSON.parse(value) : value) as { v?: unknown; o?: unknown; at?: unknown; t?: unknown; r?: unknown; c?: unknown; done?: unknown } | null;
    if (m && m.v === 1 && typeof m.o === "string" && m.done === 1) {
      const id = key.slice(REFRESH_MARKER_PREFIX.length);
      const none: Rect = { row: 0, column: 0, rowCount: 0, columnCount: 0 };
      return { bindingId: id, owner: m.o, startedAt: "", table: none, region: none, rollback: rollbackSheetName(id), done: true };
    }
    if (!m || m.v !== 1 || typeof m.o !== "string" || typeof m.at !== "string") return null;
    const table = toRect(m.t), region = toRect(m.r);
    if (!table || !region) return null;
    const bindingId = key.slice(REFRESH_MARKER_PREFIX.length);
    return { bindingId, owner: m.o, startedAt: m.at, table, region, rollback: m.c === 1 ? rollbackSheetName(bindingId) : null };
  } catch {
    return null;
  }
}

/** Queues copying `rect` of one sheet to the same address of another (everything), in blocks under Excel's per-operation cell limit. */
export function queueCopy(to: Excel.Worksheet, from: Excel.Worksheet, rect: Rect): void {
  const rows = Math.max(1, Math.floor(COPY_BLOCK_CELLS / Math.max(1, rect.columnCount)));
  for (let r = 0; r < rect.rowCount; r += rows) {
    const part: Rect = { ...rect, row: rect.row + r, rowCount: Math.min(rows, rect.rowCount - r) };
    to.getRangeByIndexes(part.row, part.column, part.rowCount, part.columnCount).copyFrom(from.getRangeByIndexes(part.row, part.column, part.rowCount, part.columnCount), "All");
  }
}

export interface RecoveredTable {
  tableName: string;
  bindingId: string;
  /**
   * restored: the old table is back; marked: the info line says it may be incomplete; skipped: a
   * live refresh holds it; failed: recovery itself failed (left for the next start). Issue #35:
   * cleared: the marker's refresh had written nothing to the table yet (its info line shows no
   * unfinished refresh: it died before its first write, or a co-author's stale settings copy put the
   * marker back after its commit), so only the marker and the copy went; ignored: the marker does not
   * describe this workbook's table (planted, damaged, or its table is gone) and was removed without
   * writing any cell; `message` says why.
   */
  outcome: "restored" | "marked" | "skipped" | "failed" | "cleared" | "ignored";
  message?: string;
}

export interface RecoveryOptions {
  now?: () => Date;
  /** Only the marker of this binding (before a refresh of it; the refresh passes its binding). */
  binding?: Binding;
  /**
   * The caller holds the table's lock under this owner (a refresh about to write): a marker of another
   * owner is a dead refresh's, recovered without taking the lock.
   */
  lockOwner?: string;
}

/**
 * Most cells of a table recovery restores from a copy (issue #35): about ten copy operations under
 * Excel's five-million-cell limit, over twenty times the bench's 200,000 × 12 table. A larger table
 * is marked instead of restored (the next refresh rewrites it).
 */
export const RECOVERY_MAX_CELLS = 50_000_000;

/** Reads every marker and the bindings. One sync (the bindings' read of the settings). */
async function readState(context: Excel.RequestContext): Promise<{ markers: Array<{ key: string; marker: RefreshMarker | null; value: unknown }>; bindings: Binding[]; copies: string[] }> {
  const sheets = context.workbook.worksheets;
  sheets.load("items/name,items/visibility");
  // readBindings loads `workbook.settings` (items/key,items/value): the same collection object is read below.
  const { bindings } = await readBindings(context);
  const settings = context.workbook.settings;
  const markers = settings.items.filter((s) => s.key.startsWith(REFRESH_MARKER_PREFIX)).map((s) => ({ key: s.key, marker: parseMarker(s.key, s.value), value: s.value as unknown }));
  const copies = sheets.items.filter((s) => /^ppm_rb_[0-9a-f]{8}$/.test(s.name) && s.visibility === "VeryHidden").map((s) => s.name);
  return { markers, bindings, copies };
}

/**
 * Whether a marker describes this binding's table as it stands (issue #35: a marker is untrusted
 * input; one planted in a workbook, or put back by a co-author's stale settings copy, must write
 * nothing). `current`: the table's range (header, body, totals). A refresh's marker names the old
 * table at the same header row, column and width as the table (a refresh never moves it; it grows or
 * shrinks it at the bottom) and the copied area as that table's body and totals plus the rows it grows
 * into. Returns why not, or null.
 */
export function markerMismatch(marker: RefreshMarker, current: Rect): string | null {
  const t = marker.table, r = marker.region;
  // The old table: the bound table's header row, column and width, and no more rows than it has now
  // (a refresh that died had grown it, or not yet touched its size).
  if (t.row !== current.row || t.column !== current.column || t.columnCount !== current.columnCount || t.rowCount < 2 || t.rowCount > current.rowCount) {
    return `its table (${describe(t)}) is not the bound table (${describe(current)})`;
  }
  // The copied area: that table's body and totals rows, plus the rows it grows into.
  if (r.row !== t.row + 1 || r.column !== t.column || r.columnCount !== t.columnCount || r.rowCount < t.rowCount - 1 || r.row + r.rowCount > 1_048_576) {
    return `its copied area (${describe(r)}) is not that table's rows`;
  }
  if (r.rowCount * r.columnCount > RECOVERY_MAX_CELLS) {
    return `its copied area is larger than the ${RECOVERY_MAX_CELLS.toLocaleString("en-US")} cells recovery restores`;
  }
  return null;
}

function describe(r: Rect): string {
  return `row ${r.row + 1}, column ${r.column + 1}, ${r.rowCount} × ${r.columnCount}`;
}

/**
 * Issue #35: why an interrupted refresh of this table cannot be put back now (its sheet or the
 * workbook's structure is protected), or null. One sync. Nothing is written then, the lock is not
 * taken and the marker stays: the next start, or the table's next refresh, puts it back.
 */
async function recoveryBlocked(context: Excel.RequestContext, tableName: string): Promise<string | null> {
  const refusal = await tableProtection(context, tableName, "refresh");
  if (!refusal) return null;
  const what = refusal.details.protection === "sheet" ? `its sheet "${refusal.details.sheet ?? ""}" is protected (Review › Unprotect Sheet)` : "this workbook's structure is protected (Review › Protect Workbook)";
  return `The refresh of "${tableName}" that stopped half way cannot be put back now: ${what}. Nothing was written. Unprotect it; the add-in puts the table back the next time it starts, or when the table is refreshed.`;
}

/** The message of a marker recovery ignores (said once; the marker is removed). */
const ignoredMessage = (why: string) => `A refresh marker in this workbook was ignored and removed: ${why}. Nothing was written to any table.`;

/**
 * Puts one dead refresh's table back (or marks it) and removes its leftovers. The caller holds the
 * table's lock (if there is a table). Every cell it writes is inside the table as it stands, or its
 * info line (issue #35): the old table lies within it ({@link markerMismatch}), and a copy is restored
 * only over its rows.
 */
async function recoverOne(context: Excel.RequestContext, marker: RefreshMarker, binding: Pick<Binding, "tableName" | "source"> | null, now: () => Date): Promise<{ outcome: "restored" | "marked" | "cleared" | "ignored" | "failed"; message?: string }> {
  const lo = binding ? context.workbook.tables.getItemOrNullObject(binding.tableName) : null;
  const copy = marker.rollback ? context.workbook.worksheets.getItemOrNullObject(marker.rollback) : null;
  copy?.load("visibility");
  await context.sync();
  // The marker is the last action of the copy's request, so a marker means the copy is complete.
  const haveCopy = !!copy && !copy.isNullObject && copy.visibility === "VeryHidden";
  let outcome: "restored" | "marked" | "cleared" | "ignored" = "marked";
  let message: string | undefined;
  if (marker.done) {
    // Its refresh committed: the table holds its new data; only the leftovers go.
    outcome = "cleared";
  } else if (!binding || !lo || lo.isNullObject) {
    // No table to put back: only the add-in's own leftovers go.
    outcome = "ignored";
    message = ignoredMessage(binding ? `its table "${binding.tableName}" is no longer in this workbook` : "no bound table has its id");
  } else {
    // Issue #35: nothing is written on a protected sheet or under structure protection.
    const blocked = await recoveryBlocked(context, binding.tableName);
    if (blocked) return { outcome: "failed", message: blocked };
    const whole = lo.getRange();
    whole.load(["rowIndex", "columnIndex", "rowCount", "columnCount"]);
    const sheet = lo.worksheet;
    await context.sync();
    const current: Rect = { row: whole.rowIndex, column: whole.columnIndex, rowCount: whole.rowCount, columnCount: whole.columnCount };
    const info = current.row > 0 ? sheet.getRangeByIndexes(current.row - 1, current.column, 1, 1) : null;
    info?.load("values");
    await context.sync();
    const text: unknown = info?.values[0][0];
    const ownsInfo = typeof text === "string" && text.startsWith(INFO_PREFIX);
    const mismatch = markerMismatch(marker, current);
    if (mismatch) {
      outcome = "ignored";
      message = ignoredMessage(mismatch);
    } else if (ownsInfo && !text.includes("INCOMPLETE")) {
      // The refresh's first write says "DATA INCOMPLETE" on the info line and its commit replaces it:
      // an info line without it means no write of that refresh is unfinished (a stale marker).
      outcome = "cleared";
    } else {
      if (haveCopy) {
        lo.resize(sheet.getRangeByIndexes(marker.table.row, marker.table.column, marker.table.rowCount, marker.table.columnCount));
        // Only the rows of the table as it stands (the old table and the rows it grew into).
        queueCopy(sheet, copy, { ...marker.region, rowCount: current.rowCount - 1 });
        outcome = "restored";
      }
      if (info && ownsInfo) {
        const why = "The add-in stopped in the middle of this refresh (Excel reloaded it, or it was closed).";
        info.numberFormat = [[TEXT_FORMAT]];
        info.values = [[infoFailed("refresh", binding.source, now().toISOString(), INTERRUPTED_CODE, why, outcome === "restored")]];
      }
    }
  }
  if (haveCopy) {
    // The add-in's own very hidden sheet: whatever it holds is cleared (never a marker's area, which is untrusted).
    const used = copy.getUsedRangeOrNullObject();
    await context.sync();
    if (!used.isNullObject) used.clear("All");
  }
  queueDropMarker(context, marker.bindingId);
  await context.sync();
  if (outcome === "marked") {
    // The stored fingerprints no longer describe the cells: the next refresh plans from the cells.
    await dropRowHashes(context, marker.bindingId);
  }
  return { outcome, ...(message ? { message } : {}) };
}

/**
 * Recovers every refresh that wrote and never finished (see the module comment). Never throws: a
 * table that cannot be recovered now is reported `failed` and left for the next start. A marker that
 * does not describe its table (issue #35) is reported `ignored` once and removed; it writes nothing.
 */
export async function recoverInterruptedRefreshes(context: Excel.RequestContext, options: RecoveryOptions = {}): Promise<RecoveredTable[]> {
  const now = options.now ?? (() => new Date());
  const out: RecoveredTable[] = [];
  let state;
  try {
    state = await readState(context);
  } catch (e) {
    return [{ tableName: options.binding?.tableName ?? "", bindingId: options.binding?.id ?? "", outcome: "failed", message: errorText(e) }];
  }
  const only = options.binding;
  const unreadable: Array<{ key: string; value: unknown }> = [];
  for (const { key, marker, value } of state.markers) {
    if (!marker) {
      // Unreadable: it cannot name a copy to restore from; removed so it never blocks anything.
      if (!only) {
        unreadable.push({ key, value });
        out.push({ tableName: "", bindingId: key.slice(REFRESH_MARKER_PREFIX.length, REFRESH_MARKER_PREFIX.length + 64), outcome: "ignored", message: ignoredMessage("it is not a refresh marker the add-in writes (unreadable)") });
      }
      continue;
    }
    if (only && marker.bindingId !== only.id) {
      continue;
    }
    const binding = only ?? state.bindings.find((b) => b.id === marker.bindingId) ?? null;
    const tableName = binding?.tableName ?? "";
    const report = (r: { outcome: RecoveredTable["outcome"]; message?: string }) => out.push({ tableName, bindingId: marker.bindingId, outcome: r.outcome, ...(r.message ? { message: r.message } : {}) });
    if (options.lockOwner !== undefined || !binding) {
      // The caller holds the table's lock, or there is no table (its binding is gone) to lock.
      if (marker.owner === options.lockOwner) {
        continue;
      }
      try {
        report(await recoverOne(context, marker, binding, now));
      } catch (e) {
        report({ outcome: "failed", message: errorText(e) });
      }
      continue;
    }
    try {
      const current = await readTableLock(context, tableName, now());
      if (current?.holds) {
        // A live refresh (maybe another client's) owns the table: its own failure path, or the next
        // start after its lock ran out, recovers it.
        report({ outcome: "skipped" });
        continue;
      }
      const blocked = await recoveryBlocked(context, tableName);
      if (blocked) {
        report({ outcome: "failed", message: blocked });
        continue;
      }
      const lock = await acquireTableLock(context, tableName, { holder: RECOVERY_HOLDER, now });
      try {
        await lock.ensure();
        // Every request of the recovery begins with the lock's fence (lock.ts, "Fencing").
        lock.fenceEachRequest(true);
        report(await recoverOne(lock.context, marker, binding, now));
      } finally {
        await lock.release();
      }
    } catch (e) {
      report({ outcome: e instanceof WriteError && e.code === "table_busy" ? "skipped" : "failed", message: errorText(e) });
    }
  }
  if (unreadable.length > 0) {
    for (const { key } of unreadable) context.workbook.settings.getItemOrNullObject(key).delete();
    await context.sync().catch(() => undefined);
  }
  if (!only) {
    // A copy no marker names: a refresh that committed and died before clearing it. Cleared (the
    // marker and the copy are written in one request, so a live refresh's copy always has one).
    const named = new Set(state.markers.map((m) => m.marker?.rollback).filter((n): n is string => !!n));
    const stale = state.copies.filter((n) => !named.has(n)).map((n) => context.workbook.worksheets.getItem(n).getUsedRangeOrNullObject(true));
    try {
      if (stale.length > 0) {
        await context.sync();
        for (const used of stale) if (!used.isNullObject) used.clear("All");
        await context.sync();
      }
    } catch {
      /* left for the next start: never restored from */
    }
  }
  return out;
}
