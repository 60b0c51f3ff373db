/**
 * A "null workbook" for the benchmark (issue #24 item 4): the add-in's own time and memory, with
 * Microsoft's client library serialising every request exactly as in Excel, and a host behind it that
 * discards the cells. The workbook's memory is Excel's, not the add-in's, so the host keeps none of
 * the written values: before the emulated host answers a request, every large `Values`, `Formulas` or
 * `NumberFormat` write (more than {@link DISCARD_ABOVE_CELLS} cells) is taken out of it. Everything
 * else (sheets, the table, names, settings, the reads the writer makes) is answered by the emulated
 * host as usual, so the add-in runs its real code path.
 *
 * The request is reached through `setDefaultWorkbook({ answer })`, the bridge's documented way to put
 * a host behind requests without a workbook header (src/emulator/library.ts), on a context created
 * with `new Excel.RequestContext()`. The host's time (the extra parse included) is counted apart
 * (`hostMs`), so `import ms − hostMs` is the add-in's with the library's.
 */
import "./officejs";
import { Workbook, answerRequest, officeJs, setDefaultWorkbook, type HostRequest } from "../src/emulator";

/** Writes of more cells than this are discarded (the writer's header, info line and settings are smaller). */
export const DISCARD_ABOVE_CELLS = 256;

export interface SinkStats {
  syncs: number;
  totalRequestBytes: number;
  maxRequestBytes: number;
  /** Time spent answering (slimming the request and the emulated host's work). */
  hostMs: number;
  /** Cells whose values were discarded. */
  discardedCells: number;
}

interface Action {
  ActionType: number;
  Name?: string;
  ArgumentInfo?: { Arguments?: unknown[] };
}

const DISCARDED = new Set(["Values", "Formulas", "NumberFormat", "ValuesAsJson"]);

function cellsOf(arg: unknown): number {
  return Array.isArray(arg) ? arg.reduce((n: number, row: unknown) => n + (Array.isArray(row) ? row.length : 1), 0) : 1;
}

export function sinkContext(): { context: Excel.RequestContext; stats: SinkStats } {
  const wb = new Workbook({ platform: "web" });
  const stats: SinkStats = { syncs: 0, totalRequestBytes: 0, maxRequestBytes: 0, hostMs: 0, discardedCells: 0 };
  setDefaultWorkbook({
    answer(request: HostRequest) {
      const t0 = performance.now();
      const bytes = Buffer.byteLength(request.body, "utf8");
      stats.syncs++;
      stats.totalRequestBytes += bytes;
      stats.maxRequestBytes = Math.max(stats.maxRequestBytes, bytes);
      const body = JSON.parse(request.body) as { Actions?: Action[] };
      if (body.Actions) {
        body.Actions = body.Actions.filter((a) => {
          // ActionType 4 is SetProperty in the library's request protocol.
          if (a.ActionType !== 4 || !a.Name || !DISCARDED.has(a.Name)) return true;
          const n = cellsOf(a.ArgumentInfo?.Arguments?.[0]);
          if (n <= DISCARD_ABOVE_CELLS) return true;
          stats.discardedCells += n;
          return false;
        });
      }
      const answer = answerRequest(wb, { ...request, body: JSON.stringify(body) });
      stats.hostMs += performance.now() - t0;
      return Promise.resolve(answer);
    },
  });
  return { context: new (officeJs().Excel.RequestContext)() as Excel.RequestContext, stats };
}
