/**
 * The PPM worksheet functions (issue #28): Office wiring only, the work is in `runtime.ts`,
 * `logic.ts` and `data.ts`.
 *
 * The metadata Excel reads (functions.json) is generated at build time from the JSDoc below by
 * Microsoft's `custom-functions-metadata-plugin` (webpack.config.js), which also appends the
 * `CustomFunctions.associate(id, fn)` calls to this file. Nothing here is written by hand twice:
 * change a signature or a description here and the metadata follows.
 *
 * This bundle runs in the shared runtime (taskpane.html, manifest `<Runtimes>` with
 * `lifetime="long"`), so the functions use the pane's connection store, tokens and engine.
 */
import type { FunctionsRuntime } from "./runtime";

let loading: Promise<FunctionsRuntime> | null = null;

/** The functions' runtime, its code loaded on the first call (the task pane's first bundle stays small). */
function withRuntime(invocation: { setResult(v: unknown): void }, use: (rt: FunctionsRuntime) => void): void {
  loading ??= import(/* webpackChunkName: "functions-engine" */ "./wiring").then((m) => m.functionsRuntime());
  loading.then(use, (e: unknown) => {
    loading = null; // a failed chunk load (offline) is tried again by the next call
    invocation.setResult(new CustomFunctions.Error(CustomFunctions.ErrorCode.notAvailable, `PPM functions could not start: ${e instanceof Error ? e.message : String(e)}`));
  });
}

/**
 * One cell of a dataset's latest export, found by the dataset's key.
 * @customfunction VALUE
 * @param dataset Dataset key, e.g. "projects".
 * @param key The row's key; a composite key is its parts joined by | in $metadata order, e.g. "P-001|2026|3".
 * @param column Column name, e.g. "budget".
 * @param [connection] Name of a connection in the PPM pane (default: the workbook's environment).
 * @param invocation Streaming invocation (set by Excel).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `any` is how the metadata generator declares a number-or-text argument and a matrix of mixed values
export function value(dataset: string, key: any, column: string, connection: string | undefined, invocation: CustomFunctions.StreamingInvocation<any>): void {
  withRuntime(invocation, (rt) => rt.value(dataset, key, column, connection, invocation));
}

/**
 * A dataset as a spilled array (header first), filtered and summarised locally with OData options.
 * @customfunction QUERY
 * @param dataset Dataset key, e.g. "financials".
 * @param [options] Local query: $filter, $select, $orderby, $top, $skip and $apply, e.g. "$filter=fiscal_year eq 2026&$top=10".
 * @param [connection] Name of a connection in the PPM pane (default: the workbook's environment).
 * @param invocation Streaming invocation (set by Excel).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `any` is how the metadata generator declares a number-or-text argument and a matrix of mixed values
export function query(dataset: string, options: string | undefined, connection: string | undefined, invocation: CustomFunctions.StreamingInvocation<any[][]>): void {
  withRuntime(invocation, (rt) => rt.query(dataset, options, connection, invocation));
}

/**
 * A view saved in this workbook (PPM pane, Views), spilled with its header.
 * @customfunction VIEW
 * @param name The view's name.
 * @param [connection] Name of a connection in the PPM pane (default: the workbook's environment).
 * @param invocation Streaming invocation (set by Excel).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `any` is how the metadata generator declares a number-or-text argument and a matrix of mixed values
export function view(name: string, connection: string | undefined, invocation: CustomFunctions.StreamingInvocation<any[][]>): void {
  withRuntime(invocation, (rt) => rt.view(name, connection, invocation));
}

/**
 * When the data behind a PPM table or dataset was generated, and whether it is stale: "as of 2026-11-25 18:00 UTC".
 * @customfunction ASOF
 * @param tableOrDataset A PPM table's name, or a dataset key.
 * @param [connection] Name of a connection in the PPM pane (default: the workbook's environment).
 * @param invocation Streaming invocation (set by Excel).
 */
export function asof(tableOrDataset: string, connection: string | undefined, invocation: CustomFunctions.StreamingInvocation<string>): void {
  withRuntime(invocation, (rt) => rt.asOf(tableOrDataset, connection, invocation));
}
