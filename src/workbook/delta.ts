/**
 * Row fingerprints for delta refresh (issue #15; positional since issue #21). Every write stores a
 * 7-character fingerprint per row (`src/refresh/rowHash.ts`) on a very hidden sheet of the binding's
 * own (`ppm_rh_` + 8 hex digits of the binding id's hash, column A, in the table's row order; far over
 * the document-settings budget, hence a sheet). One sheet per binding, never "the first free column"
 * of a shared sheet: two co-authors storing fingerprints at once never claim the same slot (issue #26,
 * hazard 8; `slots.ts`). The shared `ppm_rowhash` sheet of earlier versions is no longer read (the
 * next refresh of each table reads its cells once instead). `src/workbook/refresh.ts` reads them to decide, before anything is read from the table,
 * whether a delta can pay at all: a row whose fingerprint differs from the one stored for the same
 * position must be written. A delta appends what it changed to a log (changed rows, rows added at the
 * end, rows removed from the end); a full write stores a new base.
 */
import type { Binding } from "../refresh/binding";
import { HASH_CHARS, HASHES_PER_CELL, HashStoreError, packBase, packLogText, replay, shouldCompact, unpack, type HashLogEntry, type PackedHashes } from "../refresh/rowHash";
import { loadInBlocks, RANGE_WRITE_OVERHEAD_BYTES, writeInBatches, type QueuedWrite } from "./blocks";
import { queueDeleteHiddenSheet, slotSheetName } from "./slots";
import { dropChecks, prepareChecks, queueChecksProbe, storeChecks, type ChecksGeometry } from "./checksums";
import { columnLetters } from "./names";

export const ROW_HASH_SHEET_PREFIX = "ppm_rh_";

/** The binding's own fingerprint sheet. */
export function rowHashSheetName(bindingId: string): string {
  return slotSheetName(ROW_HASH_SHEET_PREFIX, bindingId);
}
/** Row 0: binding id; row 1: `{"n": rows, "b": base cells, "l": log cells}`; rows 2…: base cells, then log cells. */
const FIRST_STORE_ROW = 2;

/** A binding's column on the fingerprint sheet. */
export interface StoreSlot {
  sheet: Excel.Worksheet;
  column: number;
  /** Stored fingerprints after replaying the log; null when there are none (or they are unreadable). */
  hashes: string[] | null;
  baseCells: number;
  logCells: number;
  logText: string;
  logEntries: number;
  /** Cells of this column in use (to clear leftovers). */
  usedCells: number;
  /** The column formats the last write used (a user's own format on a cell is not a plan change). */
  formats: string[] | null;
  /** Requests spent finding and reading the slot. */
  syncs: number;
  /** Stored rows (from the head). */
  rows?: number;
  /** The first {@link SHORT_CHARS} characters of every fingerprint, when only those were read. */
  short?: string[] | null;
}

/** Characters of a fingerprint read by `readShortHashes` (18 bits: a match is verified by Excel's checksums). */
export const SHORT_CHARS = 3;
const padShort = (h: string) => h + "0".repeat(HASH_CHARS - h.length);

/** The lookup of a binding's fingerprint sheet, queued (answered by the next sync). */
function queueStoreProbe(context: Excel.RequestContext, bindingId: string): Excel.Worksheet {
  const sheet = context.workbook.worksheets.getItemOrNullObject(rowHashSheetName(bindingId));
  sheet.load("visibility");
  return sheet;
}

/** The fingerprint store's and the block checksums' sheets, looked up ahead (`queueStoreProbes`). */
export interface StoreProbes {
  store: Excel.Worksheet;
  checks: Excel.Worksheet;
}

/**
 * Queues the lookups {@link storeRowHashes} starts with, so that they ride in a request the caller
 * sends anyway: an import's commit (one request fewer per import). Reads only: a failed or refused
 * request leaves nothing behind. What they find is as old as that request, exactly as when the
 * store's own first request looked, one round trip before it writes.
 */
export function queueStoreProbes(context: Excel.RequestContext, bindingId: string): StoreProbes {
  return { store: queueStoreProbe(context, bindingId), checks: queueChecksProbe(context, bindingId) };
}

/**
 * Opens the binding's own fingerprint sheet, creating it when `create`; reads the stored fingerprints
 * unless `read` is false (a new base replaces them anyway). Null when there is none, or when the sheet
 * of that name holds another binding's (a hash collision: that binding keeps it, this one plans from
 * the cells).
 */
async function openStore(context: Excel.RequestContext, bindingId: string, create: boolean, read = true, probed?: Excel.Worksheet): Promise<StoreSlot | null> {
  const name = rowHashSheetName(bindingId);
  let sheet = probed ?? queueStoreProbe(context, bindingId);
  let syncs = 0;
  if (!probed) {
    await context.sync();
    syncs++;
  }
  const column = 0;
  const slotAt = (usedCells: number): StoreSlot => ({ sheet, column, hashes: null, baseCells: 0, logCells: 0, logText: "", logEntries: 0, usedCells, formats: null, syncs });
  if (sheet.isNullObject) {
    if (!create) return null;
    sheet = context.workbook.worksheets.add(name);
    sheet.visibility = "VeryHidden";
    return slotAt(0);
  }
  // A visible sheet of that name is someone's own: never written.
  if (sheet.visibility !== "VeryHidden") return null;
  const used = sheet.getUsedRangeOrNullObject(true);
  used.load("rowCount,rowIndex");
  const r = sheet.getRangeByIndexes(0, 0, 2, 1);
  r.load("values");
  await context.sync();
  syncs++;
  // Cells the column may hold below its two head rows (an unreadable slot is cleared this far).
  const depth = used.isNullObject ? 0 : Math.max(0, used.rowIndex + used.rowCount - FIRST_STORE_ROW);
  const head = r.values;
  if (head[0][0] !== bindingId) return head[0][0] === "" && create ? slotAt(depth) : null;
  const empty = slotAt(depth);
  if (!read) return empty;
  let meta: { n?: unknown; b?: unknown; l?: unknown; f?: unknown };
  try {
    meta = JSON.parse(String(head[1][column])) as typeof meta;
  } catch {
    return empty;
  }
  const int = (x: unknown) => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : -1);
  const n = int(meta.n), b = int(meta.b), l = int(meta.l);
  if (n < 0 || b < 0 || l < 0) return empty;
  const cells = b + l;
  let values: unknown[][] = [];
  if (cells > 0) {
    values = await loadInBlocks(context, (from, count) => sheet.getRangeByIndexes(FIRST_STORE_ROW + from, column, count, 1), cells, "values", 32_000, undefined, { columns: 1 });
    syncs++;
  }
  try {
    const u = unpack(values.slice(0, b).map((r) => r[0]), values.slice(b).map((r) => r[0]));
    if (u.hashes.length !== n) return empty;
    const formats = Array.isArray(meta.f) && meta.f.every((x) => typeof x === "string") ? (meta.f) : null;
    return { sheet, column, hashes: u.hashes, baseCells: b, logCells: l, logText: u.text, logEntries: u.log.length, usedCells: Math.max(cells, depth), formats, syncs };
  } catch (e) {
    if (e instanceof HashStoreError) return empty;
    throw e;
  }
}

/**
 * Writes a whole new base (and an empty log) into the slot, in requests under `targetRequestBytes`
 * (issue #21: 1,000,000 rows are 7 MB of fingerprints). The head says "unreadable" until the last cell
 * is in, so a base cut short by a failure is never read as valid.
 */
async function writeBase(context: Excel.RequestContext, slot: StoreSlot, bindingId: string, hashes: readonly string[] | PackedHashes, formats: readonly string[], targetRequestBytes?: number, also: readonly QueuedWrite[] = []): Promise<number> {
  // Already packed by a streamed import (issue #38), or packed here.
  const packed = "cells" in hashes ? hashes : null;
  const base = packed ? packed.cells : packBase(hashes as readonly string[]);
  const count = packed ? packed.count : (hashes as readonly string[]).length;
  const { sheet, column } = slot;
  const head = (meta: unknown) => () => {
    sheet.getRangeByIndexes(0, column, 2, 1).values = [[bindingId], [JSON.stringify(meta)]];
  };
  const writes: QueuedWrite[] = [{ bytes: RANGE_WRITE_OVERHEAD_BYTES, queue: head({ n: -1 }) }];
  base.forEach((cell, i) => writes.push({ bytes: cell.length + RANGE_WRITE_OVERHEAD_BYTES, queue: () => void (sheet.getRangeByIndexes(FIRST_STORE_ROW + i, column, 1, 1).values = [[cell]]) }));
  writes.push({
    bytes: 2 * RANGE_WRITE_OVERHEAD_BYTES + JSON.stringify(formats).length,
    queue: () => {
      if (slot.usedCells > base.length) sheet.getRangeByIndexes(FIRST_STORE_ROW + base.length, column, slot.usedCells - base.length, 1).clear("Contents");
      head({ n: count, b: base.length, l: 0, f: formats })();
    },
  });
  // Anything else to store goes in the same requests, after the fingerprints are complete.
  writes.push(...also);
  return (await writeInBatches(context, writes, { targetRequestBytes })).syncs;
}

/** Queues appending one log entry (only the last, partly filled log cell and new ones are written). */
function queueLogEntry(slot: StoreSlot, bindingId: string, rows: number, entry: HashLogEntry, formats: readonly string[]): void {
  const text = (slot.logText ? slot.logText + "\n" : "") + JSON.stringify(entry);
  const cells = packLogText(text);
  const from = Math.max(0, slot.logCells - 1);
  const { sheet, column } = slot;
  sheet.getRangeByIndexes(0, column, 2, 1).values = [[bindingId], [JSON.stringify({ n: rows, b: slot.baseCells, l: cells.length, f: formats })]];
  const part = cells.slice(from);
  if (part.length) sheet.getRangeByIndexes(FIRST_STORE_ROW + slot.baseCells + from, column, part.length, 1).values = part.map((c) => [c]);
}

/**
 * Stores the fingerprints of a table's rows after a full write: 7 characters per row packed 4,000
 * to a cell (≈ 1.4 MB for 200,000 rows, about 6 % of the table's own request bytes). `hashes` are the
 * fingerprints (`rowHash`) of the cells as written (dates in the workbook's own date system).
 */
export async function storeRowHashes(
  context: Excel.RequestContext,
  binding: Pick<Binding, "id">,
  hashes: readonly string[] | PackedHashes,
  formats: readonly string[],
  targetRequestBytes?: number,
  checks?: { geometry: ChecksGeometry; longestRowChars: number },
  /** The store's and the checksums' sheets, looked up by a request already answered (`queueStoreProbes`). */
  probed?: StoreProbes,
): Promise<number> {
  // Excel's block checksums of the same rows (issue #24, `checksums.ts`): their sheet is looked up in
  // the fingerprint store's first request and their formulas go in its write requests, so storing
  // both costs an import no more requests than the fingerprints alone.
  const probe = checks ? (probed?.checks ?? queueChecksProbe(context, binding.id)) : null;
  const slot = await openStore(context, binding.id, true, false, probed?.store);
  if (!slot) return checks ? storeChecks(context, binding.id, checks.geometry, { longestRowChars: checks.longestRowChars }, targetRequestBytes) : 0;
  const prepared = checks && probe ? await prepareChecks(context, binding.id, checks.geometry, { longestRowChars: checks.longestRowChars }, probe, true) : { writes: [], syncs: 0 };
  return slot.syncs + prepared.syncs + (await writeBase(context, slot, binding.id, hashes, formats, targetRequestBytes, prepared.writes));
}

/**
 * Stores the fingerprints after a delta: the change as a log entry (records removed, records added,
 * records changed, in the order `replay` applies them), or a new base when there is no entry (the
 * order changed), the log has grown past a quarter of the base, or the stored ones were not read.
 */
export async function storeDeltaHashes(
  context: Excel.RequestContext,
  bindingId: string,
  slot: StoreSlot | null,
  hashes: readonly string[],
  entry: HashLogEntry | null,
  formats: readonly string[],
  targetRequestBytes?: number,
  /** Other writes to send in the same requests, after the fingerprints (the block checksums': `prepareChecks`). */
  also: readonly QueuedWrite[] = [],
): Promise<void> {
  const target = slot ?? (await openStore(context, bindingId, true, false));
  if (!target) {
    if (also.length > 0) await writeInBatches(context, also, { targetRequestBytes });
    return;
  }
  const newRows = hashes.length;
  // The entry must turn what is stored into exactly the new fingerprints (else a new base).
  let replays = false;
  try {
    if (entry && target.hashes) replays = replay(target.hashes, entry).join("") === hashes.join("");
    // Read in short form only (issue #24, `readShortHashes`): the entry is checked on the short
    // prefixes and the row count; the planner built it from rows Excel's checksums verified.
    else if (entry && target.short) replays = target.short.length === target.rows && replay(target.short.map(padShort), entry).map((h) => h.slice(0, SHORT_CHARS)).join("") === hashes.map((h) => h.slice(0, SHORT_CHARS)).join("");
  } catch {
    replays = false;
  }
  if (!entry || !replays || shouldCompact(newRows, target.logText.length + JSON.stringify(entry).length, target.logEntries + 1)) {
    await writeBase(context, target, bindingId, hashes, formats, targetRequestBytes, also);
    return;
  }
  const entryBytes = 2 * RANGE_WRITE_OVERHEAD_BYTES + JSON.stringify(entry).length + target.logText.length + JSON.stringify(formats).length;
  await writeInBatches(context, [{ bytes: entryBytes, queue: () => queueLogEntry(target, bindingId, newRows, entry, formats) }, ...also], { targetRequestBytes });
}

/** Forgets a binding's fingerprints (the next refresh plans from the cells). */
export async function dropRowHashes(context: Excel.RequestContext, bindingId: string): Promise<void> {
  await dropChecks(context, bindingId);
  const slot = await openStore(context, bindingId, false, false);
  if (!slot) return;
  queueDeleteHiddenSheet(slot.sheet);
  await context.sync();
}

/** The stored fingerprints and formats of a binding (creating the store's sheet when absent); null when they cannot be kept. */
export function openRowHashes(context: Excel.RequestContext, bindingId: string): Promise<StoreSlot | null> {
  return openStore(context, bindingId, true);
}

/**
 * A sample of the stored fingerprints by position (issue #24): the base cells `cells` (4,000 rows
 * each), read without the rest. Only when no delta log follows the base (positions are then the
 * base's); null otherwise or when nothing usable is stored. For a cost decision only: a full rewrite
 * chosen from a sample is always correct, it is only dearer when the sample misled.
 */
export async function sampleRowHashes(context: Excel.RequestContext, bindingId: string, cells: (baseCells: number) => number[]): Promise<{ rows: number; sample: Array<{ first: number; hashes: string[] }> } | null> {
  const slot = await openStore(context, bindingId, false, false);
  if (!slot) return null;
  const meta = slot.sheet.getRangeByIndexes(1, slot.column, 1, 1);
  meta.load("values");
  await context.sync();
  let m: { n?: unknown; b?: unknown; l?: unknown };
  try {
    m = JSON.parse(String(meta.values[0][0])) as typeof m;
  } catch {
    return null;
  }
  const n = typeof m.n === "number" ? m.n : -1, b = typeof m.b === "number" ? m.b : -1;
  if (n < 0 || b < 0 || m.l !== 0) return null;
  const wanted = [...new Set(cells(b))].filter((i) => Number.isInteger(i) && i >= 0 && i < b);
  const ranges = wanted.map((i) => {
    const r = slot.sheet.getRangeByIndexes(FIRST_STORE_ROW + i, slot.column, 1, 1);
    r.load("values");
    return { i, r };
  });
  await context.sync();
  try {
    return { rows: n, sample: ranges.map(({ i, r }) => ({ first: i * HASHES_PER_CELL, hashes: unpack([r.values[0][0]], []).hashes })) };
  } catch (e) {
    if (e instanceof HashStoreError) return null;
    throw e;
  }
}

/**
 * The stored fingerprints in short form (issue #24): the first {@link SHORT_CHARS} characters of
 * each, extracted by Excel (`CONCAT(MID(cell, SEQUENCE(4000,1,2,7), 3))`, one formula per stored
 * cell in `scratch`, column C, cleared afterwards) so that 3 of every 7 characters cross the network;
 * the delta log (small) is read whole and replayed on them. Null when nothing usable is stored.
 * A short fingerprint only proposes which old row holds which new row: `src/workbook/refresh.ts`
 * accepts the proposal only where Excel's block checksum equals the one predicted from it.
 */
export async function readShortHashes(
  context: Excel.RequestContext,
  bindingId: string,
  scratch: Excel.Worksheet,
  targetResponseBytes?: number,
  /** Awaited right before each request that writes (the scratch formulas, their clearing): the refresh's fence (lock.ts). */
  beforeWrite?: () => Promise<void>,
): Promise<StoreSlot | null> {
  const slot = await openStore(context, bindingId, false, false);
  if (!slot) return null;
  const meta = slot.sheet.getRangeByIndexes(1, slot.column, 1, 1);
  meta.load("values");
  await context.sync();
  let m: { n?: unknown; b?: unknown; l?: unknown; f?: unknown };
  try {
    m = JSON.parse(String(meta.values[0][0])) as typeof m;
  } catch {
    return null;
  }
  const int = (x: unknown) => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : -1);
  const n = int(m.n), b = int(m.b), l = int(m.l);
  if (n < 0 || b < 0 || l < 0) return null;
  const letter = columnLetters(slot.column);
  const sheetRef = `'${rowHashSheetName(bindingId)}'`;
  if (b > 0) {
    await beforeWrite?.();
    const formulas = Array.from({ length: b }, (_, i) => [`=CONCAT(MID(${sheetRef}!$${letter}$${FIRST_STORE_ROW + i + 1},SEQUENCE(${HASHES_PER_CELL},1,2,${HASH_CHARS}),${SHORT_CHARS}))`]);
    const area = scratch.getRangeByIndexes(0, 2, b, 1);
    area.formulas = formulas;
    // Calculated now whatever the calculation mode: exactly these cells (issue #34: never Application.calculate).
    area.calculate();
  }
  try {
    const base = b > 0 ? await loadInBlocks(context, (from, count) => scratch.getRangeByIndexes(from, 2, count, 1), b, "values", HASHES_PER_CELL * SHORT_CHARS + 8, targetResponseBytes, { columns: 1 }) : [];
    const logCells = l > 0 ? await loadInBlocks(context, (from, count) => slot.sheet.getRangeByIndexes(FIRST_STORE_ROW + b + from, slot.column, count, 1), l, "values", 32_000, targetResponseBytes, { columns: 1 }) : [];
    let short: string[] = [];
    for (const [cell] of base) {
      if (typeof cell !== "string" || cell.length % SHORT_CHARS !== 0) return null;
      for (let i = 0; i < cell.length; i += SHORT_CHARS) short.push(cell.slice(i, i + SHORT_CHARS));
    }
    const log = unpack([], logCells.map((r) => r[0]));
    if (log.log.length > 0) {
      let full = short.map(padShort);
      for (const e of log.log) full = replay(full, e);
      short = full.map((h) => h.slice(0, SHORT_CHARS));
    }
    if (short.length !== n) return null;
    const formats = Array.isArray(m.f) && m.f.every((x) => typeof x === "string") ? m.f : null;
    return { ...slot, hashes: null, short, rows: n, baseCells: b, logCells: l, logText: log.text, logEntries: log.log.length, usedCells: Math.max(b + l, slot.usedCells), formats };
  } catch (e) {
    if (e instanceof HashStoreError) return null;
    throw e;
  } finally {
    if (b > 0) {
      await beforeWrite?.();
      scratch.getRangeByIndexes(0, 2, b, 1).clear("Contents");
      await context.sync();
    }
  }
}
