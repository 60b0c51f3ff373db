/**
 * Custom functions as Excel's calculation engine runs them (issue #28): a formula naming
 * `NAMESPACE.ID(...)` calls the function the add-in associated with that id, with the arguments the
 * formula gives and an invocation object; the cell shows `#BUSY!` until a result arrives, streaming
 * functions update their cell each time they set a result, and a matrix result spills.
 *
 * Sources (learn.microsoft.com, office/dev/add-ins/excel): "Create custom functions in Excel",
 * "Custom functions parameter options" (an omitted optional argument is `null`; the invocation
 * parameter comes last), "Receive and handle data with custom functions" (streaming: `setResult`,
 * `onCanceled` when the formula is deleted or changed), "Handle and return errors from your custom
 * function" (`CustomFunctions.Error` with an ErrorCode and a message, shown as the cell's error and in
 * its error indicator; an uncaught exception shows `#VALUE!`), "Return multiple results from your
 * custom function" (dynamic arrays spill; `#SPILL!` when a cell of the spill range is not empty), and
 * "Autogenerate JSON metadata" (the metadata's `parameters`, `options.stream`, `options.cancelable`).
 *
 * What is not emulated: the transport between Excel and the runtime (the RichApi message event that
 * carries invocations, `SetInvocationArrayResults` batches back). The host calls the associated
 * function directly; everything the function itself sees (arguments, invocation, timing: never
 * during the calculation itself) is as documented.
 */
import type { CellError, CellValue } from "./values";

/** One function of functions.json (the fields the host reads). */
export interface FunctionMetadata {
  id: string;
  name: string;
  parameters?: Array<{ name: string; optional?: boolean; repeating?: boolean }>;
  options?: { stream?: boolean; cancelable?: boolean };
  result?: { dimensionality?: "scalar" | "matrix" };
}

/** A result: a value, or a matrix that spills. */
export type CustomFunctionValue = CellValue | CellValue[][];

export const BUSY: CellError = { error: "#BUSY!" };

interface CellInvocation {
  signature: string;
  value: CustomFunctionValue;
  cancelled: boolean;
  onCanceled?: () => void;
}

/** An invocation object as the function receives it (`CustomFunctions.StreamingInvocation`). */
export interface HostInvocation {
  readonly functionName: string;
  readonly address: string;
  setResult(value: unknown): void;
  onCanceled?: () => void;
}

type Fn = (...args: unknown[]) => unknown;

/** A macrotask later (the host's files compile without DOM or Node typings: the timer is the realm's). */
const later = (f: () => void): void => void (globalThis as unknown as { setTimeout(f: () => void, ms: number): unknown }).setTimeout(f, 0);

export class CustomFunctionHost {
  private namespace = "";
  private readonly meta = new Map<string, FunctionMetadata>();
  private readonly fns = new Map<string, Fn>();
  private readonly cells = new Map<string, CellInvocation>();
  /** Calls of registered functions (tests, the preview's counters). */
  invocations = 0;

  constructor(private readonly changed: () => void) {}

  /** Registers the add-in's functions.json under its manifest namespace (`PPM`). */
  register(namespace: string, metadata: { functions: FunctionMetadata[] }): void {
    this.namespace = namespace.toUpperCase();
    for (const f of metadata.functions) this.meta.set(`${this.namespace}.${f.name.toUpperCase()}`, f);
    this.changed(); // formulas typed before the add-in loaded calculate now
  }

  /** `CustomFunctions.associate(id, fn)`. */
  associate(id: string, fn: Fn): void {
    this.fns.set(id.toUpperCase(), fn);
  }

  /** Whether `name` (upper case, `PPM.VALUE`) is a registered custom function. */
  knows(name: string): boolean {
    return this.meta.has(name);
  }

  /**
   * The value of the custom function call in cell `cellKey` for these arguments: the latest result
   * of this cell's invocation when the arguments are the same, else a new invocation (the previous one
   * is cancelled) and `#BUSY!` until it sets a result.
   */
  call(cellKey: string, address: string, name: string, args: CellValue[]): CustomFunctionValue {
    const meta = this.meta.get(name);
    if (!meta) return { error: "#NAME?" };
    const params = meta.parameters ?? [];
    const required = params.filter((p) => !p.optional).length;
    if (args.length < required || args.length > params.length) {
      return { error: "#VALUE!", message: `${name} takes ${required === params.length ? required : `${required} to ${params.length}`} arguments; got ${args.length}.` };
    }
    // Excel does not call a function with an error argument (without allowErrorForDataTypeAny): the error passes through.
    const errorArg = args.find((a): a is CellError => a !== null && typeof a === "object");
    if (errorArg) return errorArg;
    const padded: unknown[] = [...args];
    while (padded.length < params.length) padded.push(null);
    const signature = `${name}(${JSON.stringify(padded)})`;
    const existing = this.cells.get(cellKey);
    if (existing && existing.signature === signature) return existing.value;
    if (existing) this.cancel(existing);
    const ci: CellInvocation = { signature, value: BUSY, cancelled: false };
    this.cells.set(cellKey, ci);
    // Never during the calculation itself: Excel sends invocations to the runtime and goes on.
    later(() => this.invoke(ci, meta, name, address, padded));
    return BUSY;
  }

  private invoke(ci: CellInvocation, meta: FunctionMetadata, name: string, address: string, args: unknown[]): void {
    if (ci.cancelled) return;
    const fn = this.fns.get(meta.id.toUpperCase());
    if (!fn) return this.set(ci, { error: "#NAME?", message: `No function is associated with the id ${meta.id}.` });
    const invocation: HostInvocation = {
      functionName: name,
      address,
      setResult: (v: unknown) => this.set(ci, convert(v)),
    };
    Object.defineProperty(invocation, "onCanceled", {
      get: () => ci.onCanceled,
      set: (h: () => void) => (ci.onCanceled = h),
      enumerable: true,
    });
    this.invocations++;
    let result: unknown;
    try {
      result = fn(...args, invocation);
    } catch (e) {
      return this.set(ci, convert(e));
    }
    if (meta.options?.stream) return; // results come through setResult
    if (result && typeof (result as Promise<unknown>).then === "function") {
      (result as Promise<unknown>).then(
        (v) => this.set(ci, convert(v)),
        (e: unknown) => this.set(ci, convert(e)),
      );
    } else this.set(ci, convert(result));
  }

  private set(ci: CellInvocation, v: CustomFunctionValue): void {
    if (ci.cancelled) return;
    ci.value = v;
    this.changed();
  }

  private cancel(ci: CellInvocation): void {
    ci.cancelled = true;
    try {
      ci.onCanceled?.();
    } catch {
      // The add-in's handler failing changes nothing for the workbook.
    }
  }

  /** The cell no longer holds this call (cleared, overwritten): its invocation is cancelled. */
  release(cellKey: string): void {
    const ci = this.cells.get(cellKey);
    if (!ci) return;
    this.cells.delete(cellKey);
    this.cancel(ci);
  }

  /**
   * A full recalculation (`application.calculate(Full | FullRebuild)`, Excel's Ctrl+Alt+F9): every
   * live invocation is cancelled and the next calculation of its cell calls the function anew, so
   * the cell shows `#BUSY!` until the new invocation sets a result. Source: "Receive and handle data
   * with custom functions" (Excel cancels a function "when the user triggers recalculation
   * manually. In this case, a new function call is triggered following the cancellation"). Which of
   * the API's calculation types counts as that is not documented; the host takes a full calculation
   * as the manual one (a `Recalculate` only calculates dirty cells, and a custom function's cell is
   * not dirty), and the self-test kit's list asks real Excel (src/taskpane/TESTING.md).
   */
  restartAll(): void {
    const all = [...this.cells.values()];
    this.cells.clear();
    for (const ci of all) this.cancel(ci);
    if (all.length > 0) this.changed();
  }

  /** Cells with a live invocation (to release the ones whose formula went away). */
  cellKeys(): string[] {
    return [...this.cells.keys()];
  }
}

/** A function's result as a cell value: `CustomFunctions.Error` → the error with its message; a matrix stays a matrix. */
export function convert(v: unknown): CustomFunctionValue {
  if (Array.isArray(v)) {
    if (v.length === 0 || !v.every((row) => Array.isArray(row) && row.length === (v[0] as unknown[]).length && row.length > 0)) {
      return { error: "#VALUE!", message: "A function returned an array that is not a rectangular matrix." };
    }
    return (v as unknown[][]).map((row) => row.map((x) => scalar(x)));
  }
  return scalar(v);
}

function scalar(v: unknown): CellValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : { error: "#NUM!" };
  if (typeof v === "object") {
    const o = v as { code?: unknown; message?: unknown };
    // CustomFunctions.Error: `code` is an ErrorCode value ("#N/A", "#VALUE!", …), `message` optional.
    if (typeof o.code === "string" && o.code.startsWith("#")) {
      return typeof o.message === "string" && o.message !== "" ? { error: o.code, message: o.message } : { error: o.code };
    }
    if (v instanceof Error) return { error: "#VALUE!" };
  }
  return { error: "#VALUE!" };
}
