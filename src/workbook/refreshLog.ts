/**
 * The refresh log in the workbook's settings (format and budget: `src/refresh/refreshLog.ts`), read
 * and merged by time.
 *
 * One setting per table AND per writing runtime (issue #26, hazard 9): `ppm.refreshLog.<bindingId>@<writer>`.
 * Co-authors' copies of the settings resolve last-writer-wins per key, so two runtimes appending to
 * one shared key lose an entry whenever their appends cross; each runtime appending only to its own
 * key loses none. Older layouts are still read: one setting per table (issue #21) and the single log
 * before it. Keys are bounded: an append folds into its own key the table's keys of writers idle for
 * an hour (and the per-table key of earlier versions) and deletes them, and each key keeps its share
 * of the table's budget.
 */
import type { RefreshLogEntry } from "../refresh/engine";
import { appendToLog, parseRefreshLog, REFRESH_LOG_KEY, refreshLogKey, tableLogBudget } from "../refresh/refreshLog";
import { BINDING_SETTING_PREFIX } from "../refresh/binding";
import { keepSetting } from "./settle";

/**
 * This runtime's writer id (one per JavaScript realm, i.e. per add-in runtime): five random base-36
 * characters (60 million values; short because every key is read with every settings load).
 */
const WRITER = Math.floor(36 ** 4 + Math.random() * (36 ** 5 - 36 ** 4)).toString(36);

/** A writer idle this long (its newest entry this much older than the new one) is folded into the appending writer's key. */
export const IDLE_WRITER_MS = 60 * 60_000;

/** The log key of one table for one writer. */
export function writerLogKey(bindingId: string, writer: string = WRITER): string {
  return `${refreshLogKey(bindingId)}@${writer}`;
}

/** Reads every table's log (one sync); newest last. */
export async function readRefreshLog(context: Excel.RequestContext): Promise<RefreshLogEntry[]> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const entries: RefreshLogEntry[] = [];
  // The same entries can sit in two keys for a moment (folded into one runtime's key, not yet deleted
  // in this copy): each distinct entry counts as often as the key holding it most often has it.
  const counted = new Map<string, number>();
  for (const s of settings.items) {
    if (s.key !== REFRESH_LOG_KEY && !s.key.startsWith(`${REFRESH_LOG_KEY}.`)) continue;
    const here = new Map<string, number>();
    for (const e of parseRefreshLog(s.value)) {
      const id = JSON.stringify(e);
      const n = (here.get(id) ?? 0) + 1;
      here.set(id, n);
      if (n > (counted.get(id) ?? 0)) {
        counted.set(id, n);
        entries.push(e);
      }
    }
  }
  // Stable: entries of one log keep their order when two have the same time.
  return entries.map((e, i) => ({ e, i })).sort((a, b) => (a.e.at < b.e.at ? -1 : a.e.at > b.e.at ? 1 : a.i - b.i)).map((x) => x.e);
}

/**
 * Appends one entry to this runtime's log of its table (two syncs), dropping the oldest beyond the
 * key's share of the table's budget; folds idle writers' keys of the table into it.
 */
export async function appendRefreshLog(context: Excel.RequestContext, entry: RefreshLogEntry, writer: string = WRITER): Promise<void> {
  const key = writerLogKey(entry.bindingId, writer);
  const tableKey = refreshLogKey(entry.bindingId);
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const tables = settings.items.filter((s) => s.key.startsWith(BINDING_SETTING_PREFIX)).length;
  const own = settings.items.find((s) => s.key === key);
  let entries = own ? parseRefreshLog(own.value) : [];
  const others = settings.items.filter((s) => s.key !== key && (s.key === tableKey || s.key.startsWith(`${tableKey}@`)));
  const at = Date.parse(entry.at);
  const folded: string[] = [];
  for (const s of others) {
    const theirs = parseRefreshLog(s.value);
    const newest = theirs.reduce((m, e) => Math.max(m, Date.parse(e.at) || 0), 0);
    // The per-table key of earlier versions, and writers idle for an hour, are folded into this key.
    if (s.key === tableKey || (Number.isFinite(at) && at - newest >= IDLE_WRITER_MS)) {
      entries = [...entries, ...theirs];
      folded.push(s.key);
    }
  }
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const keys = 1 + others.length - folded.length;
  const budget = Math.max(1_000, Math.floor(tableLogBudget(tables) / keys));
  context.workbook.settings.add(key, appendToLog(entries, entry, budget).json);
  for (const k of folded) context.workbook.settings.getItemOrNullObject(k).delete();
  await context.sync();
  // Issue #35: a co-author's stale settings copy can put an older log back or erase it: settled with
  // the batch, appending this entry again if it is missing. A folded key coming back only repeats
  // entries, which reading merges.
  const id = JSON.stringify(parseRefreshLog([entry])[0] ?? entry);
  keepSetting(context, {
    key,
    mode: "merge",
    merge: (stored) => {
      const now = stored === undefined ? [] : parseRefreshLog(stored);
      return now.some((e) => JSON.stringify(e) === id) ? undefined : appendToLog([...now].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)), entry, budget).json;
    },
  });
}
