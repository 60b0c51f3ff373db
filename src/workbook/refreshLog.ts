/**
 * The refresh log in the workbook's settings (format and budget: `src/refresh/refreshLog.ts`): one
 * setting per table (issue #21), plus the single log of earlier versions, read and merged by time.
 */
import type { RefreshLogEntry } from "../refresh/engine";
import { appendToLog, parseRefreshLog, REFRESH_LOG_KEY, refreshLogKey, tableLogBudget } from "../refresh/refreshLog";
import { BINDING_SETTING_PREFIX } from "../refresh/binding";

/** Reads every table's log (one sync); newest last. */
export async function readRefreshLog(context: Excel.RequestContext): Promise<RefreshLogEntry[]> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const entries: RefreshLogEntry[] = [];
  for (const s of settings.items) if (s.key === REFRESH_LOG_KEY || s.key.startsWith(`${REFRESH_LOG_KEY}.`)) entries.push(...parseRefreshLog(s.value));
  // Stable: entries of one log keep their order when two have the same time.
  return entries.map((e, i) => ({ e, i })).sort((a, b) => (a.e.at < b.e.at ? -1 : a.e.at > b.e.at ? 1 : a.i - b.i)).map((x) => x.e);
}

/** Appends one entry to its table's log, dropping the oldest beyond the table's share of the budget (two syncs). */
export async function appendRefreshLog(context: Excel.RequestContext, entry: RefreshLogEntry): Promise<void> {
  const key = refreshLogKey(entry.bindingId);
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const own = settings.items.find((s) => s.key === key);
  const tables = settings.items.filter((s) => s.key.startsWith(BINDING_SETTING_PREFIX)).length;
  context.workbook.settings.add(key, appendToLog(own ? parseRefreshLog(own.value) : [], entry, tableLogBudget(tables)).json);
  await context.sync();
}
