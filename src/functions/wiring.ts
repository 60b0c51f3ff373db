/**
 * The worksheet functions' wiring in the shared runtime (issue #28): one {@link FormulaData} cache
 * and one {@link FunctionsRuntime} over the pane's connection store, loaded on the first call of a
 * PPM function (`functions.ts` imports it dynamically, so the task pane's first bundle stays small).
 */
import { addinRuntime } from "../addin/runtime";
import { runExcel } from "../addin/excelRun";
import { readBindings } from "../workbook/bindingStore";
import { PpmClient } from "../service/client";
import { MemoryValidatorStore } from "../service/validators";
import { FormulaData } from "./data";
import { FunctionsRuntime } from "./runtime";
import { readViews } from "../addin/viewStore";
import type { ExcelErrorValue } from "./logic";

/** How often the formulas' datasets are revalidated while the runtime lives (conditional requests). */
export const REVALIDATE_EVERY_MS = 5 * 60_000;

let runtime: FunctionsRuntime | null = null;
let data: FormulaData | null = null;

/** The functions' runtime, created on the first call (after Office has started the runtime). */
export function functionsRuntime(): FunctionsRuntime {
  if (runtime) return runtime;
  const shared = addinRuntime();
  data = new FormulaData({
    source: (conn) => {
      // One client per connection: its own validators (the formulas' cache never changes a table's).
      const client = new PpmClient(conn, { validators: new MemoryValidatorStore() });
      return {
        fetchDataset: (key, opts) => client.fetchDataset(key, opts),
        datasetKeys: async (key) => (await client.metadata()).entitySets.find((s) => s.name === key)?.keys ?? [],
      };
    },
  });
  const cache = data;
  runtime = new FunctionsRuntime({
    data: cache,
    connections: () => shared.store.list(),
    connection: (id) => shared.store.connection(id),
    bindings: async () => (await runExcel((context) => readBindings(context))).bindings,
    views: () => runExcel((context) => readViews(context)),
    consent: shared.formulaConsent,
    error: (code: ExcelErrorValue, message: string) =>
      new CustomFunctions.Error(code === "#N/A" ? CustomFunctions.ErrorCode.notAvailable : CustomFunctions.ErrorCode.invalidValue, message),
  });
  // Every refresh (pane, ribbon, refresh on open) ends by releasing the lock: the formulas' datasets
  // are then revalidated too, one conditional request each.
  shared.lock.onChange((holder) => {
    if (holder === null) void cache.revalidate();
  });
  // After a refresh, an import or a saved view, the formulas that read the workbook run again.
  shared.onWorkbookChanged(() => runtime?.workbookChanged());
  setInterval(() => void cache.revalidate(), REVALIDATE_EVERY_MS);
  return runtime;
}

/** The formula cache of this runtime (the pane's "Refresh formulas", tests). */
export function formulaData(): FormulaData {
  functionsRuntime();
  return data!;
}

