/**
 * A "null workbook": the smallest request context that accepts what `importTable` sends and throws
 * it away, counting request bytes per sync (JSON of each operation). Used by the benchmark to show
 * the add-in's own time and memory with neither Excel nor Microsoft's client library behind it (the
 * import scenarios run through the library and the emulated host; their "add-in" time includes the
 * library's serialisation, and the host's time is measured apart).
 */
export interface SinkStats {
  syncs: number;
  totalRequestBytes: number;
  maxRequestBytes: number;
}

export function sinkContext(): { context: Excel.RequestContext; stats: SinkStats } {
  const stats: SinkStats = { syncs: 0, totalRequestBytes: 0, maxRequestBytes: 0 };
  let pending = 0;
  const queue = (op: unknown) => {
    pending += Buffer.byteLength(JSON.stringify(op), "utf8");
  };
  const range = (address: unknown): unknown =>
    new Proxy(
      { format: { autofitColumns: () => queue({ address, op: "autofit" }) } },
      {
        set(_t, prop, value: unknown) {
          queue({ address, prop, value });
          return true;
        },
      },
    );
  const sheet = (name: string) => ({
    name,
    getRangeByIndexes: (r: number, c: number, rc: number, cc: number) => range([r, c, rc, cc]),
    tables: { add: (address: string) => (queue({ op: "tables.add", address }), new Proxy({}, { set: (_t, p, v: unknown) => (queue({ p, v }), true) })) },
    activate: () => queue({ op: "activate" }),
    load: () => undefined,
  });
  const context = {
    workbook: {
      worksheets: { items: [] as unknown[], load: () => undefined, add: (name: string) => (queue({ op: "worksheets.add", name }), sheet(name)), getItemOrNullObject: () => ({ isNullObject: true, load: () => undefined }) },
      tables: { items: [] as unknown[], load: () => undefined },
      settings: { items: [] as unknown[], load: () => undefined, add: (key: string, value: unknown) => queue({ op: "settings.add", key, value }) },
      names: { items: [] as unknown[], load: () => undefined },
      // The date-system probe: DATE(1904,1,1) is 1462 in the 1900 system.
      functions: { date: () => ({ value: 1462, load: () => undefined }) },
    },
    application: {
      calculationMode: "Automatic",
      load: () => undefined,
      suspendApiCalculationUntilNextSync: () => queue({ op: "suspendCalc" }),
      suspendScreenUpdatingUntilNextSync: () => queue({ op: "suspendScreen" }),
    },
    sync: (): Promise<void> => {
      stats.syncs++;
      stats.totalRequestBytes += pending;
      stats.maxRequestBytes = Math.max(stats.maxRequestBytes, pending);
      pending = 0;
      return Promise.resolve();
    },
  };
  return { context: context as unknown as Excel.RequestContext, stats };
}
