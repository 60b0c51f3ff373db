/**
 * The refresh log (issue #15, point 4): the last refreshes of every table, kept in the workbook's
 * settings next to the bindings. Pure: parsing (a workbook is untrusted input) and trimming to the
 * budget, oldest entries first. An entry holds counts, times and codes only: never data values,
 * messages (they could quote a token-bearing URL) or tokens.
 */
import { z } from "../contract/zod";
import type { RefreshLogEntry } from "./engine";

/**
 * Setting key of the log written before issue #21 (one log for every table), still read. Since then
 * each table has its own (`ppm.refreshLog.<bindingId>`, {@link refreshLogKey}): two runtimes refreshing
 * two tables at once each append to their own, so neither erases the other's entry (issue #21, item 14).
 */
export const REFRESH_LOG_KEY = "ppm.refreshLog";

/** The log setting of one table. */
export function refreshLogKey(bindingId: string): string {
  return `${REFRESH_LOG_KEY}.${bindingId}`;
}

/** The budget of one table's log when the workbook has `tables` bound tables: a share of the whole, at least 1,000 characters. */
export function tableLogBudget(tables: number): number {
  return Math.max(1_000, Math.floor(REFRESH_LOG_BUDGET_CHARS / Math.max(1, tables)));
}
/**
 * At most this many characters of JSON (≈ 120 entries): 6 % of the 256,000 characters the add-in
 * allows its settings in total (issue #10's budget), so the log can never crowd out bindings.
 */
export const REFRESH_LOG_BUDGET_CHARS = 16_000;

const count = z.number().int().nonnegative();
export const RefreshLogEntrySchema = z.strictObject({
  at: z.string().max(40),
  bindingId: z.string().max(64),
  tableName: z.string().max(255),
  outcome: z.enum(["unchanged", "updated", "failed"]),
  added: count,
  changed: count,
  removed: count,
  strategy: z.enum(["delta", "full"]).nullable(),
  // Absent in logs written before it was recorded (issue #25).
  matchedBy: z.enum(["key", "position"]).optional(),
  ms: count,
  cellsWritten: count,
  code: z.string().max(64).nullable(),
  // Absent in logs written before it was recorded.
  bytesReceived: count.nullable().default(null),
  /**
   * Why a refresh that meant to write a delta rewrote in full (issue #21: "the delta was refused by
   * Excel (GeneralException)"): an Excel error code at most, never a message or a value.
   */
  fallback: z.string().max(200).nullable().default(null),
});

/** Entries of a stored log; unreadable entries are dropped (the log is a convenience, never a record of data). */
export function parseRefreshLog(raw: unknown): RefreshLogEntry[] {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(value)) return [];
  const out: RefreshLogEntry[] = [];
  for (const v of value) {
    const p = RefreshLogEntrySchema.safeParse(v);
    if (p.success) out.push(p.data);
  }
  return out;
}

/** The log with `entry` appended, oldest entries dropped until it fits the budget; as stored JSON. */
export function appendToLog(entries: readonly RefreshLogEntry[], entry: RefreshLogEntry, budget = REFRESH_LOG_BUDGET_CHARS): { entries: RefreshLogEntry[]; json: string; dropped: number } {
  const all = [...entries, RefreshLogEntrySchema.parse(entry)];
  let dropped = 0;
  let json = JSON.stringify(all);
  while (json.length > budget && all.length > 1) {
    // Drop a slice at a time: one JSON.stringify per step, not per entry.
    const n = Math.max(1, Math.ceil(((json.length - budget) / json.length) * all.length));
    all.splice(0, Math.min(n, all.length - 1));
    dropped += n;
    json = JSON.stringify(all);
  }
  return { entries: all, json, dropped };
}
