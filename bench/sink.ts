/**
 * A "null workbook" for the benchmark (issue #24 item 4): the add-in's own time and memory, with
 * Microsoft's client library serialising every request exactly as in Excel, and a host behind it that
 * discards the cells. The workbook's memory is Excel's, not the add-in's, so the host keeps none of
 * the written values: before the emulated host answers a request, every large `Values` or `Formulas`
 * write (more than {@link DISCARD_ABOVE_CELLS} cells) and every `NumberFormat` write is taken out of
 * it (by a scan of the body, not a parse: see {@link discardLargeWrites}). Everything
 * else (sheets, the table, names, settings, the reads the writer makes) is answered by the emulated
 * host as usual, so the add-in runs its real code path.
 *
 * The request is reached through `setDefaultWorkbook({ answer })`, the bridge's documented way to put
 * a host behind requests without a workbook header (src/emulator/library.ts), on a context created
 * with `new Excel.RequestContext()`. The host's time (the slimming scan included) is counted apart
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
  /** CPU time (user + system, this process) spent answering: what `hostMs` is on the CPU clock. */
  hostCpuMs: number;
  /** Cells whose values were discarded. */
  discardedCells: number;
}

/** The SetProperty actions (ActionType 4 in the library's request protocol) whose cells are discarded. */
const DISCARDED = ["Values", "Formulas", "NumberFormat", "ValuesAsJson"];

/**
 * Index just past the JSON string that opens at `i` (a `"`): the next quote not escaped.
 */
function endOfString(body: string, i: number): number {
  let j = i;
  for (;;) {
    j = body.indexOf('"', j + 1);
    if (j < 0) throw new Error("unterminated string in a request body");
    let backslashes = 0;
    for (let k = j - 1; body.charCodeAt(k) === 92; k--) backslashes++;
    if (backslashes % 2 === 0) return j + 1;
  }
}

/**
 * Takes every large cell-writing action out of a request body WITHOUT parsing it: the library's
 * bodies are `{"Actions":[{"Id":…,"ActionType":4,"Name":"Values","ObjectPathId":…,"ArgumentInfo":
 * {"Arguments":[[[cells],…]]},…},…],"ObjectPaths":{…}}` (keys in that order, see the probe in
 * ../shared/officejs-host). A parse and a re-serialisation of every 4 MB body made garbage that the
 * collector then charged to the add-in's own time (a real host is another process); this scan only
 * walks the discarded actions, skipping strings with indexOf. Returns the slimmed body and the cells
 * it discarded.
 */
export function discardLargeWrites(body: string, aboveCells = DISCARD_ABOVE_CELLS): { body: string; cells: number } {
  const cut: Array<[number, number]> = [];
  let cells = 0;
  for (const name of DISCARDED) {
    const needle = `"ActionType":4,"Name":"${name}",`;
    for (let p = body.indexOf(needle); p >= 0; p = body.indexOf(needle, p + needle.length)) {
      const start = body.lastIndexOf("{", p);
      // Walk the action object to its closing brace, counting the cells of its 2-D argument:
      // depth 1 is the action, 2 ArgumentInfo, 3 Arguments, 4 the rows, 5 a row's cells.
      let depth = 0, rows = 0, commas = 0, end = -1;
      for (let i = start; i < body.length; i++) {
        const c = body.charCodeAt(i);
        if (c === 34) {
          i = endOfString(body, i) - 1;
        } else if (c === 123 || c === 91) {
          depth++;
          if (depth === 5) rows++;
        } else if (c === 125 || c === 93) {
          depth--;
          if (depth === 0) {
            end = i + 1;
            break;
          }
        } else if (c === 44 && depth === 5) commas++;
      }
      if (end < 0) throw new Error("unterminated action in a request body");
      const n = rows + commas;
      // Number formats are discarded whatever their size: one format is written over each whole
      // column (a single value for 200,000 rows), which the emulated host would store per row —
      // Excel's memory, which the add-in's peak RSS must not count. Nothing in an import reads them back.
      if (n > aboveCells || name === "NumberFormat") {
        cut.push([start, end]);
        cells += n;
      }
      p = end - needle.length;
    }
  }
  if (cut.length === 0) return { body, cells: 0 };
  cut.sort((x, y) => x[0] - y[0]);
  const parts: string[] = [];
  let at = 0;
  for (const [s0, e0] of cut) {
    // Drop the comma that joined the action to the list (before it, or after it when it was first).
    let s1 = s0, e1 = e0;
    if (body.charCodeAt(s0 - 1) === 44) s1 = s0 - 1;
    else if (body.charCodeAt(e0) === 44) e1 = e0 + 1;
    parts.push(body.slice(at, s1));
    at = e1;
  }
  parts.push(body.slice(at));
  return { body: parts.join(""), cells };
}

export function sinkContext(): { context: Excel.RequestContext; stats: SinkStats } {
  const wb = new Workbook({ platform: "web" });
  const stats: SinkStats = { syncs: 0, totalRequestBytes: 0, maxRequestBytes: 0, hostMs: 0, hostCpuMs: 0, discardedCells: 0 };
  setDefaultWorkbook({
    answer(request: HostRequest) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const bytes = Buffer.byteLength(request.body, "utf8");
      stats.syncs++;
      stats.totalRequestBytes += bytes;
      stats.maxRequestBytes = Math.max(stats.maxRequestBytes, bytes);
      const slim = discardLargeWrites(request.body);
      stats.discardedCells += slim.cells;
      const answer = answerRequest(wb, { ...request, body: slim.body });
      stats.hostMs += performance.now() - t0;
      const c = process.cpuUsage(c0);
      stats.hostCpuMs += (c.user + c.system) / 1000;
      return Promise.resolve(answer);
    },
  });
  return { context: new (officeJs().Excel.RequestContext)() as Excel.RequestContext, stats };
}
