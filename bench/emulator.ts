/**
 * The workbook emulator as the benchmark uses it: a fresh workbook, a request context (Microsoft's
 * own, through the library), counters. Bytes are the real bodies the library sends and receives.
 */
import "./officejs";
import { Workbook, createRequestContext, hostMilliseconds } from "../src/emulator";

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
    /** Time the emulated host spent answering (the rest of a sync is the add-in's, the library's included). */
    hostMs: hostMilliseconds(wb),
  };
}
