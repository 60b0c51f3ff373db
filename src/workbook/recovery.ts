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

/** Queues writing a marker (in the request that makes the rollback copy). */
export function queueMarker(context: Excel.RequestContext, marker: RefreshMarker): void {
  const value = { v: 1, o: marker.owner, at: marker.startedAt, t: rectArray(marker.table), r: rectArray(marker.region), c: marker.rollback ? 1 : 0 };
  context.workbook.settings.add(markerKey(marker.bindingId), JSON.stringify(value));
}

/** Queues deleting a marker (in the commit request, or after a restore). */
export function queueDropMarker(context: Excel.RequestContext, bindingId: string): void {
  context.workbook.settings.getItemOrNullObject(markerKey(bindingId)).delete();
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
    const m = (typeof value === "string" ? JSON.parse(value) : value) as { v?: unknown; o?: unknown; at?: unknown; t?: unknown; r?: unknown; c?: unknown } | null;
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
  /** restored: the old table is back; marked: the info line says it may be incomplete; skipped: a live refresh holds it; failed: recovery itself failed (left for the next start). */
  outcome: "restored" | "marked" | "skipped" | "failed";
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

/** Reads every marker and the bindings. One sync (the bindings' read of the settings). */
async function readState(context: Excel.RequestContext): Promise<{ markers: Array<{ key: string; marker: RefreshMarker | null }>; bindings: Binding[]; copies: string[] }> {
  const sheets = context.workbook.worksheets;
  sheets.load("items/name,items/visibility");
  // readBindings loads `workbook.settings` (items/key,items/value): the same collection object is read below.
  const { bindings } = await readBindings(context);
  const settings = context.workbook.settings;
  const markers = settings.items.filter((s) => s.key.startsWith(REFRESH_MARKER_PREFIX)).map((s) => ({ key: s.key, marker: parseMarker(s.key, s.value) }));
  const copies = sheets.items.filter((s) => /^ppm_rb_[0-9a-f]{8}$/.test(s.name) && s.visibility === "VeryHidden").map((s) => s.name);
  return { markers, bindings, copies };
}

/** Puts one dead refresh's table back (or marks it) and removes its leftovers. The caller holds the table's lock (if there is a table). */
async function recoverOne(context: Excel.RequestContext, marker: RefreshMarker, binding: Pick<Binding, "tableName" | "source"> | null, now: () => Date): Promise<"restored" | "marked"> {
  const lo = binding ? context.workbook.tables.getItemOrNullObject(binding.tableName) : null;
  const copy = marker.rollback ? context.workbook.worksheets.getItemOrNullObject(marker.rollback) : null;
  copy?.load("visibility");
  await context.sync();
  // The marker is the last action of the copy's request, so a marker means the copy is complete.
  const haveCopy = !!copy && !copy.isNullObject;
  let outcome: "restored" | "marked" = "marked";
  if (binding && lo && !lo.isNullObject) {
    const sheet = lo.worksheet;
    if (haveCopy) {
      lo.resize(sheet.getRangeByIndexes(marker.table.row, marker.table.column, marker.table.rowCount, marker.table.columnCount));
      queueCopy(sheet, copy, marker.region);
      outcome = "restored";
    }
    const info = marker.table.row > 0 ? sheet.getRangeByIndexes(marker.table.row - 1, marker.table.column, 1, 1) : null;
    info?.load("values");
    await context.sync();
    const text: unknown = info?.values[0][0];
    if (info && typeof text === "string" && text.startsWith(INFO_PREFIX)) {
      const message = "The add-in stopped in the middle of this refresh (Excel reloaded it, or it was closed).";
      info.numberFormat = [[TEXT_FORMAT]];
      info.values = [[infoFailed("refresh", binding.source, now().toISOString(), INTERRUPTED_CODE, message, outcome === "restored")]];
    }
  }
  if (haveCopy) copy.getRangeByIndexes(marker.region.row, marker.region.column, marker.region.rowCount, marker.region.columnCount).clear("All");
  queueDropMarker(context, marker.bindingId);
  await context.sync();
  if (outcome === "marked") {
    // The stored fingerprints no longer describe the cells: the next refresh plans from the cells.
    await dropRowHashes(context, marker.bindingId);
  }
  return outcome;
}

/**
 * Recovers every refresh that wrote and never finished (see the module comment). Never throws: a
 * table that cannot be recovered now is reported `failed` and left for the next start.
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
  const unreadable: string[] = [];
  for (const { key, marker } of state.markers) {
    if (!marker) {
      // Unreadable: it cannot name a copy to restore from; dropped so it never blocks anything.
      if (!only) unreadable.push(key);
      continue;
    }
    if (only && marker.bindingId !== only.id) {
      continue;
    }
    const binding = only ?? state.bindings.find((b) => b.id === marker.bindingId) ?? null;
    const tableName = binding?.tableName ?? "";
    const report = (outcome: RecoveredTable["outcome"], message?: string) => out.push({ tableName, bindingId: marker.bindingId, outcome, ...(message ? { message } : {}) });
    if (options.lockOwner !== undefined || !binding) {
      // The caller holds the table's lock, or there is no table (its binding is gone) to lock.
      if (marker.owner === options.lockOwner) {
        continue;
      }
      try {
        report(await recoverOne(context, marker, binding, now));
      } catch (e) {
        report("failed", errorText(e));
      }
      continue;
    }
    try {
      const current = await readTableLock(context, tableName, now());
      if (current?.holds) {
        // A live refresh (maybe another client's) owns the table: its own failure path, or the next
        // start after its lock ran out, recovers it.
        report("skipped");
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
      report(e instanceof WriteError && e.code === "table_busy" ? "skipped" : "failed", errorText(e));
    }
  }
  if (unreadable.length > 0) {
    for (const key of unreadable) context.workbook.settings.getItemOrNullObject(key).delete();
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
