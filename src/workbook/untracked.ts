/**
 * Fire-and-forget range operations without the library's automatic tracking (issue #24, item 3).
 *
 * Inside `Excel.run` Microsoft's library tracks every object it creates (`_autoCleanup`): each new
 * Range gets a `_KeepReference` action and a second Instantiate so the host keeps it for later
 * batches, and the host answers both. A delta writes thousands of one-cell ranges it never touches
 * again, so that is pure overhead: measured on the library's own request bodies (excel-web-16.00,
 * `bench/deltaRefresh.ts`), a one-cell `values` write costs 455 request + 79 response bytes tracked
 * and 308 + 31 untracked; a `copyFrom` 870 + 162 against 561 + 60. Untracked objects are what a
 * `new Excel.RequestContext()` outside `Excel.run` always makes (valid within their own batch), so
 * this only drops tracking for objects used in the request they are queued in. Where the library
 * lacks the flag (a future version), nothing changes but the bytes.
 */
interface TrackingFlag {
  _autoCleanup?: unknown;
}

/** Runs `queue` (which must only queue operations on objects it creates and never reads them later) with tracking off. */
export function queueUntracked(context: Excel.RequestContext, queue: () => void): void {
  // A wrapper (the table lock's guarded context) is not the library's context: its objects are.
  const own = context as unknown as TrackingFlag;
  const ctx = (typeof own._autoCleanup === "boolean" ? own : (context.workbook as unknown as { context?: TrackingFlag }).context ?? own);
  const before = ctx._autoCleanup;
  if (typeof before !== "boolean") {
    queue();
    return;
  }
  ctx._autoCleanup = false;
  try {
    queue();
  } finally {
    ctx._autoCleanup = before;
  }
}
