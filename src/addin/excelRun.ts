/**
 * The one way the add-in starts an Excel batch. Every batch passes `delayForCellEdit: true`: while the
 * user is typing in a cell, Excel otherwise fails the batch with `InvalidOperationInCellEditMode`
 * (docs: Excel.RunOptions, "Delay execution while cell is being edited"); with it, the batch waits
 * until the user leaves the cell. Hosts that predate the option ignore it.
 *
 * Tiny on purpose: the task pane's first bundle uses it without loading the engine.
 */

/** Options of every `Excel.run` the add-in makes. */
export const EXCEL_RUN_OPTIONS = { delayForCellEdit: true } as const;

/** Runs Excel work (`Excel.run`) with the global the host installed (office.js, or the preview's emulator). */
export function runExcel<T>(work: (context: Excel.RequestContext) => Promise<T>): Promise<T> {
  return Excel.run(EXCEL_RUN_OPTIONS as Excel.RunOptions, (context) => work(context));
}
