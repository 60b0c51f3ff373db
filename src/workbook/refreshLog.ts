/** The refresh log in the workbook's settings (format and budget: `src/refresh/refreshLog.ts`). */
import type { RefreshLogEntry } from "../refresh/engine";
import { appendToLog, parseRefreshLog, REFRESH_LOG_KEY } from "../refresh/refreshLog";

/** Reads the log (one sync); newest last. */
export async function readRefreshLog(context: Excel.RequestContext): Promise<RefreshLogEntry[]> {
  const item = context.workbook.settings.getItemOrNullObject(REFRESH_LOG_KEY);
  item.load("value");
  await context.sync();
  return item.isNullObject ? [] : parseRefreshLog(item.value);
}

/** Appends one entry, dropping the oldest beyond the budget (two syncs). */
export async function appendRefreshLog(context: Excel.RequestContext, entry: RefreshLogEntry): Promise<void> {
  const entries = await readRefreshLog(context);
  context.workbook.settings.add(REFRESH_LOG_KEY, appendToLog(entries, entry).json);
  await context.sync();
}
