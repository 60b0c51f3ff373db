/** The workbook emulator as the benchmark uses it: a fresh workbook, a request context, counters. */
import { Workbook, createRequestContext } from "../src/emulator";

export function benchWorkbook(): { wb: Workbook; context: Excel.RequestContext } {
  const wb = new Workbook();
  return { wb, context: createRequestContext(wb) };
}

export function statsOf(wb: Workbook) {
  const s = wb.stats;
  return {
    syncCount: s.syncCount,
    totalRequestBytes: s.requestBytesPerSync.reduce((a, b) => a + b, 0),
    /** Bytes the add-in received from Excel (loaded values), all syncs. */
    totalResponseBytes: s.responseBytesPerSync.reduce((a, b) => a + b, 0),
    maxRequestBytes: s.maxRequestBytes,
    rejectedSyncs: s.rejectedSyncs,
    cellsWritten: s.cellsWritten,
  };
}
