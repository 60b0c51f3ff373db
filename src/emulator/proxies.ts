/**
 * Proxy objects with the Excel JavaScript API's semantics: every method and property write queues an
 * operation; nothing touches the workbook until `context.sync()`; a property can be read only after
 * it was loaded and synced (or set locally), otherwise reading throws `PropertyNotLoaded` at once.
 */
import { MAX_COLUMNS, MAX_ROWS, Rect, assertOnGrid, boundingRect, intersectRect, rectColumns, rectRows } from "./address";
import {
  EmulatedExcelError,
  ErrorCodes,
  invalidArgument,
  invalidOperation,
  itemNotFound,
} from "./errors";
import {
  CalculationMode,
  ClearApplyTo,
  ConditionalFormatModel,
  FilterCriteria,
  SheetModel,
  TableModel,
  WorkbookModel,
} from "./model";
import { jsonByteLength } from "./values";
import { dateSerial } from "./typed-input";
import { DATE1904_OFFSET } from "./model";

// ---------- load specifications ----------

interface LoadSpec {
  all: boolean;
  props: Set<string>;
  nav: Map<string, LoadSpec>;
  /** For collections: what to load on each item. */
  items?: LoadSpec;
}

function emptySpec(): LoadSpec {
  return { all: false, props: new Set(), nav: new Map() };
}

function addPath(spec: LoadSpec, path: string): void {
  const parts = path.split("/").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) return;
  let s = spec;
  for (let i = 0; i < parts.length - 1; i++) {
    let child = s.nav.get(parts[i]);
    if (!child) {
      child = emptySpec();
      s.nav.set(parts[i], child);
    }
    s = child;
  }
  s.props.add(parts[parts.length - 1]);
}

/** Accepts every form of `load`: none, "a, b/c", ["a", "b"], { select, expand } and property bags. */
function parseLoadArg(arg: unknown): LoadSpec {
  const spec = emptySpec();
  if (arg === undefined || arg === null) {
    spec.all = true;
    return spec;
  }
  if (typeof arg === "string") {
    for (const p of arg.split(",")) addPath(spec, p);
    if (spec.props.size === 0 && spec.nav.size === 0) spec.all = true;
    return spec;
  }
  if (Array.isArray(arg)) {
    for (const p of arg) {
      if (typeof p !== "string") throw invalidArgument("load: property names must be strings.");
      for (const q of p.split(",")) addPath(spec, q);
    }
    return spec;
  }
  if (typeof arg === "object") {
    const o = arg as Record<string, unknown>;
    if ("select" in o || "expand" in o) {
      if (typeof o.select === "string") for (const p of o.select.split(",")) addPath(spec, p);
      if (typeof o.expand === "string") {
        for (const p of o.expand.split(",")) {
          const name = p.trim();
          if (name && !spec.nav.has(name)) spec.nav.set(name, { all: true, props: new Set(), nav: new Map() });
        }
      }
      if (spec.props.size === 0 && spec.nav.size === 0) spec.all = true;
      return spec;
    }
    const walk = (obj: Record<string, unknown>, into: LoadSpec): void => {
      for (const [k, v] of Object.entries(obj)) {
        if (k === "$all" && v === true) into.all = true;
        else if (v === true) into.props.add(k);
        else if (typeof v === "object" && v !== null) {
          const child = into.nav.get(k) ?? emptySpec();
          into.nav.set(k, child);
          walk(v as Record<string, unknown>, child);
          if (child.props.size === 0 && child.nav.size === 0) child.all = true;
        }
      }
    };
    walk(o, spec);
    return spec;
  }
  throw invalidArgument("load: unsupported argument.");
}

// ---------- request context ----------

interface Staged {
  bytes: number;
  commit: () => void;
}

interface Operation {
  /** What would go over the wire, used for the payload estimate. */
  wire: { path: string; op: string; args?: unknown };
  apply: () => Staged | void;
  mutates: boolean;
}

let contextCounter = 0;

/**
 * Emulation of `Excel.RequestContext`. Create with `createRequestContext(workbook)` or let `run` make one.
 */
export class EmulatedRequestContext {
  readonly workbook: WorkbookProxy;
  readonly application: ApplicationProxy;
  /** Accepted for compatibility; the emulator keeps objects valid for the whole context anyway. */
  readonly trackedObjects = { add: (_o: unknown): void => undefined, remove: (_o: unknown): void => undefined };
  /** @internal */ readonly _id = ++contextCounter;
  private queue: Operation[] = [];
  private closed = false;

  /** `Excel.run` options this context was created with (`delayForCellEdit`). */
  readonly options: { delayForCellEdit?: boolean };

  constructor(readonly model: WorkbookModel, options: { delayForCellEdit?: boolean } = {}) {
    this.options = { ...options };
    this.application = new ApplicationProxy(this);
    this.workbook = new WorkbookProxy(this);
  }

  /** Number of operations waiting for the next `sync()`. */
  get pendingOperationCount(): number {
    return this.queue.length;
  }

  /** @internal */
  _enqueue(op: Operation): void {
    if (this.closed) {
      throw new EmulatedExcelError(
        ErrorCodes.invalidObjectPath,
        "The object cannot be used: its Excel.run batch has finished. Use objects only inside the batch that created them.",
      );
    }
    this.queue.push(op);
  }

  /** @internal */
  _checkSameContext(o: { _ctx: EmulatedRequestContext }): void {
    if (o._ctx !== this) {
      throw new EmulatedExcelError(ErrorCodes.invalidRequestContext, "Cannot use the object across different request contexts.");
    }
  }

  /** `context.load(object, props)`: the older spelling of `object.load(props)`. */
  load<T extends { load(arg?: unknown): unknown }>(object: T, props?: unknown): T {
    object.load(props);
    return object;
  }

  /**
   * Sends the queued operations. The whole request is rejected (nothing applied) when it exceeds the
   * payload limit; otherwise operations run in order and the first failure stops the rest (earlier
   * ones stay applied, as in Excel) and is thrown.
   */
  async sync(): Promise<void> {
    if (this.closed) {
      throw new EmulatedExcelError(ErrorCodes.invalidObjectPath, "This request context's Excel.run batch has finished.");
    }
    // Excel answers asynchronously; yielding keeps callers honest about awaiting.
    await Promise.resolve();
    // office.js sends nothing (no round trip) when nothing is queued.
    if (this.queue.length === 0) return;
    if (this.model.cellEditMode) {
      // RunOptions.delayForCellEdit: the batch waits for the user to leave the cell; without it the
      // batch fails at once (docs: "Delay execution while cell is being edited").
      if (!this.options.delayForCellEdit) {
        this.queue = [];
        throw new EmulatedExcelError(ErrorCodes.invalidOperationInCellEditMode, "The operation isn't available while a cell is being edited. Press Enter or Esc and try again.");
      }
      await this.model.cellEditExited();
    }
    const ops = this.queue;
    this.queue = [];
    const wb = this.model;
    let requestBytes = 2;
    try {
      for (const op of ops) requestBytes += jsonByteLength(op.wire) + 1;
    } catch {
      // JSON.stringify throws on BigInt and cycles: the request could never be sent.
      throw invalidArgument("The request could not be serialised as JSON (a BigInt or a circular value was queued). Nothing was applied.");
    }
    wb.stats.syncCount++;
    wb.stats.requestBytesPerSync.push(requestBytes);
    wb.stats.maxRequestBytes = Math.max(wb.stats.maxRequestBytes, requestBytes);
    if (requestBytes > wb.payloadLimitBytes) {
      wb.stats.rejectedSyncs++;
      wb.stats.responseBytesPerSync.push(0);
      if (wb.oversizeRequestError === "GeneralException") {
        throw new EmulatedExcelError(ErrorCodes.generalException, "An internal error has occurred. Nothing was applied.");
      }
      throw new EmulatedExcelError(
        ErrorCodes.requestPayloadSizeLimitExceeded,
        `The request payload size has exceeded the limit (${requestBytes} bytes > ${wb.payloadLimitBytes}). Nothing was applied.`,
      );
    }
    const staged: Staged[] = [];
    let mutated = false;
    let failure: { error: unknown } | undefined;
    let current: Operation | undefined;
    try {
      wb.beginBatch(ops.map((op) => op.wire));
      for (const [index, op] of ops.entries()) {
        current = op;
        const injected = wb.faultInjector?.({ ...op.wire, index });
        if (injected) throw injected;
        const s = op.apply();
        if (op.mutates) mutated = true;
        if (s) staged.push(s);
        wb.stats.operationsApplied++;
      }
    } catch (e) {
      // office.js reports where a batch failed in debugInfo.errorLocation (e.g. "Range.values").
      if (e instanceof EmulatedExcelError && current && e.debugInfo.errorLocation === undefined) {
        failure = { error: new EmulatedExcelError(e.code, e.message, `${current.wire.path} ${current.wire.op}`) };
      } else failure = { error: e };
    } finally {
      wb.endBatch(mutated);
      wb.calculationSuspended = false;
    }
    const responseBytes = staged.reduce((n, s) => n + s.bytes, 0);
    wb.stats.responseBytesPerSync.push(responseBytes);
    wb.stats.maxResponseBytes = Math.max(wb.stats.maxResponseBytes, responseBytes);
    if (mutated) wb.notifyChanged();
    if (failure !== undefined) throw failure.error;
    if (responseBytes > wb.payloadLimitBytes) {
      wb.stats.rejectedSyncs++;
      throw new EmulatedExcelError(
        ErrorCodes.responsePayloadSizeLimitExceeded,
        `The response payload size has exceeded the limit (${responseBytes} bytes > ${wb.payloadLimitBytes}). Load less data per sync.`,
      );
    }
    for (const s of staged) s.commit();
  }

  /** @internal Ends the context (called by `run`); later use of its objects throws InvalidObjectPath. */
  _close(): void {
    this.closed = true;
  }
}

function notLoaded(prop: string, type: string): EmulatedExcelError {
  return new EmulatedExcelError(
    ErrorCodes.propertyNotLoaded,
    `The property '${prop}' is not available on ${type}. Before reading the property's value, call the load method on the containing object and call "context.sync()" on the associated request context.`,
  );
}

// ---------- proxy base ----------

/** Common machinery: deferred resolution, loading, property reads. */
abstract class ProxyBase<H> {
  /** @internal */ readonly _ctx: EmulatedRequestContext;
  /** @internal */ readonly _path: string;
  /** @internal */ readonly _loaded = new Map<string, unknown>();
  private _handle: H | null | undefined;
  private _error: EmulatedExcelError | undefined;
  private _resolved = false;
  private _synced = false;
  protected abstract readonly _typeName: string;

  constructor(ctx: EmulatedRequestContext, path: string, private readonly _resolver: () => H | null, queueInstantiate = true) {
    this._ctx = ctx;
    this._path = path;
    if (queueInstantiate) {
      ctx._enqueue({
        wire: { path, op: "instantiate" },
        mutates: false,
        apply: () => {
          this._instantiate();
          return { bytes: 0, commit: () => (this._synced = true) };
        },
      });
    }
  }

  /** @internal Marks a proxy made from already-resolved data (collection items). */
  _presetHandle(h: H): this {
    this._handle = h;
    this._resolved = true;
    this._synced = true;
    return this;
  }

  private _instantiate(): void {
    if (this._resolved) return;
    this._resolved = true;
    try {
      this._handle = this._resolver();
    } catch (e) {
      if (e instanceof EmulatedExcelError) this._error = e;
      else throw e;
    }
  }

  /** @internal The handle, or an error when the object could not be found / is a null object. */
  _resolve(): H {
    this._instantiate();
    if (this._error) throw this._error;
    if (this._handle === null || this._handle === undefined) {
      throw itemNotFound(`The requested ${this._typeName} is a null object (it does not exist).`);
    }
    return this._handle;
  }

  /** @internal Null when this is a null object. */
  _resolveNullable(): H | null {
    this._instantiate();
    if (this._error) throw this._error;
    return this._handle ?? null;
  }

  /** True when an *OrNullObject call found nothing. Readable after the next `sync()`. */
  get isNullObject(): boolean {
    if (!this._synced) throw notLoaded("isNullObject", this._typeName);
    return this._handle === null || this._handle === undefined;
  }

  /** @internal Reads a loaded property; throws PropertyNotLoaded like office.js. */
  protected _get<T>(prop: string): T {
    if (this._loaded.has(prop)) return this._loaded.get(prop) as T;
    if (this._synced && this._resolved && (this._handle === null || this._handle === undefined) && !this._error) {
      return undefined as T;
    }
    throw notLoaded(prop, this._typeName);
  }

  /** @internal Queues a property write and keeps the value locally, as office.js does. */
  protected _set(prop: string, value: unknown, apply: (h: H) => void): void {
    this._ctx._enqueue({
      wire: { path: this._path, op: `set ${prop}`, args: value },
      mutates: true,
      apply: () => apply(this._resolve()),
    });
    this._loaded.set(prop, value);
  }

  /** @internal Queues a method call. */
  protected _call(method: string, args: unknown, apply: (h: H) => void, mutates = true): void {
    this._ctx._enqueue({ wire: { path: this._path, op: method, args }, mutates, apply: () => apply(this._resolve()) });
  }

  /** @internal Names of scalar properties loaded by `load()` without arguments. */
  protected abstract _scalarNames(): readonly string[];
  /** @internal Value of a scalar property from the current model state. */
  protected abstract _scalar(h: H, prop: string): unknown;
  /** @internal Navigation properties (child proxies) by name. */
  _navigation(_prop: string): ProxyBase<unknown> | undefined {
    return undefined;
  }

  /** Queues loading of properties: `load()`, `load("a, b")`, `load(["a"])`, `load({ select, expand })`. */
  load(props?: unknown): this {
    const spec = parseLoadArg(props);
    this._queueLoad(spec, `load`);
    return this;
  }

  /** @internal */
  _queueLoad(spec: LoadSpec, opName: string): void {
    // Navigation children are created now so their instantiation is ordered before the load.
    const children: Array<[ProxyBase<unknown>, LoadSpec]> = [];
    for (const [name, childSpec] of spec.nav) {
      const child = this._navigation(name);
      if (!child) throw invalidArgument(`load: '${name}' is not a navigation property of ${this._typeName}.`);
      children.push([child, childSpec]);
    }
    this._ctx._enqueue({
      wire: { path: this._path, op: opName, args: { all: spec.all, props: [...spec.props], nav: [...spec.nav.keys()] } },
      mutates: false,
      apply: () => this._applyLoad(spec, children),
    });
  }

  /** @internal Computes load results now (inside sync), to be committed if the whole sync succeeds. */
  _applyLoad(spec: LoadSpec, children: Array<[ProxyBase<unknown>, LoadSpec]>): Staged {
    const h = this._resolveNullable();
    const values = new Map<string, unknown>();
    const childStaged: Staged[] = [];
    if (h !== null) {
      const names = spec.all ? [...this._scalarNames(), ...spec.props] : [...spec.props];
      for (const p of names) {
        const nav = this._navigation(p);
        if (nav && !this._scalarNames().includes(p)) {
          childStaged.push(nav._applyLoad({ all: true, props: new Set(), nav: new Map() }, []));
          continue;
        }
        if (!this._scalarNames().includes(p) && !this._extraLoadable().includes(p)) {
          throw invalidArgument(`The property '${p}' does not exist on ${this._typeName}.`);
        }
        values.set(p, this._scalar(h, p));
      }
      for (const [child, childSpec] of children) {
        const grand: Array<[ProxyBase<unknown>, LoadSpec]> = [];
        for (const [name, gs] of childSpec.nav) {
          const g = child._navigation(name);
          if (!g) throw invalidArgument(`load: '${name}' is not a navigation property of ${child._typeName}.`);
          grand.push([g, gs]);
        }
        childStaged.push(child._applyLoad(childSpec, grand));
      }
    }
    let bytes = 0;
    for (const [k, v] of values) if (k !== "items") bytes += jsonByteLength(v) + k.length + 4;
    bytes += this._extraBytes(values);
    for (const s of childStaged) bytes += s.bytes;
    return {
      bytes,
      commit: () => {
        this._synced = true;
        for (const [k, v] of values) this._loaded.set(k, v);
        for (const s of childStaged) s.commit();
      },
    };
  }

  /** @internal Extra loadable names (e.g. collection `items`). */
  protected _extraLoadable(): readonly string[] {
    return [];
  }
  /** @internal Bytes for values whose size is not their JSON (collections). */
  protected _extraBytes(_values: Map<string, unknown>): number {
    return 0;
  }

  /** office.js objects serialise their loaded properties; handy in test failure output. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of this._loaded) out[k] = v;
    return out;
  }
}

/** A single value returned by a method such as `getCount()`; readable after `sync()`. */
export class ClientResult<T> {
  private _value: T | undefined;
  private _ready = false;
  /** @internal */
  _setValue(v: T): void {
    this._value = v;
    this._ready = true;
  }
  get value(): T {
    if (!this._ready) throw notLoaded("value", "ClientResult");
    return this._value as T;
  }
}

function queueResult<T, H>(proxy: ProxyBase<H>, method: string, compute: (h: H) => T): ClientResult<T> {
  const result = new ClientResult<T>();
  proxy._ctx._enqueue({
    wire: { path: proxy._path, op: method },
    mutates: false,
    apply: () => {
      const v = compute(proxy._resolve());
      return { bytes: jsonByteLength(v), commit: () => result._setValue(v) };
    },
  });
  return result;
}

/** Base for collections: `items` after load; loading a non-collection property loads it on every item. */
abstract class CollectionProxy<H, I extends ProxyBase<unknown>> extends ProxyBase<H> {
  protected abstract _itemHandles(h: H): unknown[];
  protected abstract _makeItem(handle: unknown): I;
  protected _ownScalars(): readonly string[] {
    return [];
  }
  protected override _scalarNames(): readonly string[] {
    return this._ownScalars();
  }
  protected override _extraLoadable(): readonly string[] {
    return ["items"];
  }

  /** The loaded items. Throws PropertyNotLoaded until the collection was loaded and synced. */
  get items(): I[] {
    return this._get<I[]>("items");
  }

  override load(props?: unknown): this {
    const spec = parseLoadArg(props);
    const own = emptySpec();
    const itemSpec = emptySpec();
    let wantItems = spec.all;
    if (spec.all) itemSpec.all = true;
    for (const p of spec.props) {
      if (this._ownScalars().includes(p)) own.props.add(p);
      else if (p === "items") {
        wantItems = true;
        itemSpec.all = true;
      } else {
        wantItems = true;
        itemSpec.props.add(p);
      }
    }
    for (const [name, s] of spec.nav) {
      wantItems = true;
      if (name === "items") {
        for (const p of s.props) itemSpec.props.add(p);
        for (const [n2, s2] of s.nav) itemSpec.nav.set(n2, s2);
        if (s.all) itemSpec.all = true;
      } else itemSpec.nav.set(name, s);
    }
    if (wantItems) own.props.add("items");
    own.items = itemSpec;
    this._queueLoad(own, "load");
    return this;
  }

  protected override _scalar(h: H, prop: string): unknown {
    if (prop === "items") return this._itemHandles(h);
    return this._ownScalar(h, prop);
  }
  protected _ownScalar(_h: H, prop: string): unknown {
    throw invalidArgument(`The property '${prop}' does not exist on ${this._typeName}.`);
  }

  override _applyLoad(spec: LoadSpec, children: Array<[ProxyBase<unknown>, LoadSpec]>): Staged {
    const base = super._applyLoad(spec, children);
    if (!spec.props.has("items")) return base;
    const h = this._resolve();
    const itemSpec = spec.items ?? { all: true, props: new Set<string>(), nav: new Map<string, LoadSpec>() };
    const items = this._itemHandles(h).map((ih) => this._makeItem(ih));
    const staged = items.map((it) => {
      const grand: Array<[ProxyBase<unknown>, LoadSpec]> = [];
      for (const [name, gs] of itemSpec.nav) {
        const g = it._navigation(name);
        if (!g) throw invalidArgument(`load: '${name}' is not a navigation property of the collection's items.`);
        grand.push([g, gs]);
      }
      return it._applyLoad(itemSpec, grand);
    });
    return {
      bytes: base.bytes + staged.reduce((n, s) => n + s.bytes + 2, 2),
      commit: () => {
        base.commit();
        this._loaded.set("items", items);
        for (const s of staged) s.commit();
      },
    };
  }
}

// ---------- application ----------

export class ApplicationProxy extends ProxyBase<WorkbookModel> {
  protected readonly _typeName = "Application";
  constructor(ctx: EmulatedRequestContext) {
    super(ctx, "application", () => ctx.model, false);
    this._presetHandle(ctx.model);
  }
  protected _scalarNames(): readonly string[] {
    return ["calculationMode"];
  }
  protected _scalar(h: WorkbookModel, _prop: string): unknown {
    return h.calculationMode;
  }
  get calculationMode(): CalculationMode {
    return this._get("calculationMode");
  }
  set calculationMode(mode: CalculationMode) {
    this._set("calculationMode", mode, (wb) => {
      if (mode !== "Automatic" && mode !== "AutomaticExceptTables" && mode !== "Manual") {
        throw invalidArgument(`calculationMode must be Automatic, AutomaticExceptTables or Manual; got ${String(mode)}.`);
      }
      const wasManual = wb.calculationMode === "Manual";
      wb.stats.calculationModeSets++;
      wb.calculationMode = mode;
      if (wasManual && mode !== "Manual") wb.calculateAll();
    });
  }
  /** Formulas are not recalculated for changes made in this sync; the flag clears when the sync ends. */
  suspendApiCalculationUntilNextSync(): void {
    this._call("suspendApiCalculationUntilNextSync", undefined, (wb) => {
      wb.calculationSuspended = true;
      wb.stats.suspendCalculationCalls++;
    }, false);
  }
  suspendScreenUpdatingUntilNextSync(): void {
    this._call("suspendScreenUpdatingUntilNextSync", undefined, (wb) => {
      wb.stats.suspendScreenUpdatingCalls++;
    }, false);
  }
  /** `application.calculate(type)`: recalculates all formulas. */
  calculate(_calculationType?: string): void {
    this._call("calculate", _calculationType, (wb) => wb.calculateAll());
  }
}

// ---------- workbook ----------

export class WorkbookProxy extends ProxyBase<WorkbookModel> {
  protected readonly _typeName = "Workbook";
  readonly worksheets: WorksheetCollectionProxy;
  readonly tables: TableCollectionProxy;
  readonly settings: SettingCollectionProxy;
  readonly application: ApplicationProxy;
  /** Workbook-scoped defined names (ExcelApi 1.1). */
  readonly names: NamedItemCollectionProxy;
  /** Worksheet functions evaluated by Excel (ExcelApi 1.2); only `date` is emulated. */
  readonly functions: FunctionsProxy;
  constructor(ctx: EmulatedRequestContext) {
    super(ctx, "workbook", () => ctx.model, false);
    this._presetHandle(ctx.model);
    this.application = ctx.application;
    this.worksheets = new WorksheetCollectionProxy(ctx);
    this.tables = new TableCollectionProxy(ctx, "workbook.tables", () => null);
    this.settings = new SettingCollectionProxy(ctx);
    this.names = new NamedItemCollectionProxy(ctx, "workbook.names", () => "");
    this.functions = new FunctionsProxy(ctx);
  }
  protected _scalarNames(): readonly string[] {
    return ["name"];
  }
  protected _scalar(_h: WorkbookModel, _prop: string): unknown {
    return "Book1.xlsx";
  }
  get name(): string {
    return this._get("name");
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    if (prop === "worksheets") return this.worksheets;
    if (prop === "tables") return this.tables;
    if (prop === "settings") return this.settings;
    if (prop === "names") return this.names;
    return undefined;
  }
  /**
   * The selected range (A1 of the active sheet unless a test selected something). With several areas
   * selected it fails at sync with `InvalidSelection` (docs: Workbook.getSelectedRange, "If multiple
   * ranges are selected, this method will throw an error").
   */
  getSelectedRange(): RangeProxy {
    return new RangeProxy(this._ctx, "workbook.getSelectedRange()", () => {
      if (this._ctx.model.extraSelectionAreas.length > 0) {
        throw new EmulatedExcelError(ErrorCodes.invalidSelection, "The current selection is invalid for this operation: several ranges are selected.");
      }
      const { sheet, rect } = this._ctx.model.selectedRange();
      return { sheetId: sheet.id, rect };
    });
  }
  /** The active cell: top-left cell of the selection. */
  getActiveCell(): RangeProxy {
    return new RangeProxy(this._ctx, "workbook.getActiveCell()", () => {
      const { sheet, rect } = this._ctx.model.selectedRange();
      return { sheetId: sheet.id, rect: { r0: rect.r0, c0: rect.c0, r1: rect.r0, c1: rect.c0 } };
    });
  }
}

// ---------- worksheets ----------

type SheetHandle = { sheetId: string };

function sheetOf(ctx: EmulatedRequestContext, h: SheetHandle): SheetModel {
  return ctx.model.requireSheetId(h.sheetId);
}

export class WorksheetCollectionProxy extends CollectionProxy<WorkbookModel, WorksheetProxy> {
  protected readonly _typeName = "WorksheetCollection";
  constructor(ctx: EmulatedRequestContext) {
    super(ctx, "worksheets", () => ctx.model, false);
    this._presetHandle(ctx.model);
  }
  protected _itemHandles(h: WorkbookModel): unknown[] {
    return h.sheets.map((s) => ({ sheetId: s.id }));
  }
  protected _makeItem(handle: unknown): WorksheetProxy {
    const h = handle as SheetHandle;
    return new WorksheetProxy(this._ctx, `worksheets[${h.sheetId}]`, () => h, false)._presetHandle(h);
  }
  /** Adds a worksheet at the end (`Sheet<N>` when no name is given). It is not activated. */
  add(name?: string): WorksheetProxy {
    let created: SheetHandle | null = null;
    this._call("add", name, (wb) => {
      created = { sheetId: wb.addSheet(name).id };
    });
    return new WorksheetProxy(this._ctx, `worksheets.add(${JSON.stringify(name ?? "")})`, () => {
      if (!created) throw invalidOperation("The worksheet was not created.");
      return created;
    });
  }
  private _find(key: string): SheetHandle | null {
    const wb = this._ctx.model;
    const s = wb.sheetByName(key) ?? wb.sheetById(key);
    return s ? { sheetId: s.id } : null;
  }
  /** By name (case-insensitive) or id; ItemNotFound at sync when missing. */
  getItem(key: string): WorksheetProxy {
    return new WorksheetProxy(this._ctx, `worksheets.getItem(${JSON.stringify(key)})`, () => {
      const h = this._find(key);
      if (!h) throw itemNotFound(`The worksheet '${key}' does not exist.`);
      return h;
    });
  }
  getItemOrNullObject(key: string): WorksheetProxy {
    return new WorksheetProxy(this._ctx, `worksheets.getItemOrNullObject(${JSON.stringify(key)})`, () => this._find(key));
  }
  getActiveWorksheet(): WorksheetProxy {
    return new WorksheetProxy(this._ctx, "worksheets.getActiveWorksheet()", () => ({ sheetId: this._ctx.model.activeSheet().id }));
  }
  getFirst(): WorksheetProxy {
    return new WorksheetProxy(this._ctx, "worksheets.getFirst()", () => ({ sheetId: this._ctx.model.sheets[0].id }));
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (wb) => wb.sheets.length);
  }
}

const WORKSHEET_SCALARS = ["name", "id", "position", "visibility"] as const;

export class WorksheetProxy extends ProxyBase<SheetHandle> {
  protected readonly _typeName = "Worksheet";
  private _tables?: TableCollectionProxy;
  protected _scalarNames(): readonly string[] {
    return WORKSHEET_SCALARS;
  }
  protected _scalar(h: SheetHandle, prop: string): unknown {
    const s = sheetOf(this._ctx, h);
    switch (prop) {
      case "name": return s.name;
      case "id": return s.id;
      case "position": return this._ctx.model.sheets.indexOf(s);
      default: return s.visibility ?? "Visible";
    }
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    if (prop === "names") return this.names;
    return prop === "tables" ? (this.tables) : undefined;
  }
  get name(): string {
    return this._get("name");
  }
  set name(v: string) {
    this._set("name", v, (h) => this._ctx.model.renameSheet(sheetOf(this._ctx, h), v));
  }
  get id(): string {
    return this._get("id");
  }
  get position(): number {
    return this._get("position");
  }
  get visibility(): string {
    return this._get("visibility");
  }
  /** `Visible`, `Hidden` or `VeryHidden` (ExcelApi 1.1); the last visible sheet cannot be hidden. */
  set visibility(v: string) {
    this._set("visibility", v, (h) => {
      if (v !== "Visible" && v !== "Hidden" && v !== "VeryHidden") throw invalidArgument(`visibility must be Visible, Hidden or VeryHidden; got ${String(v)}.`);
      const wb = this._ctx.model;
      const sheet = sheetOf(this._ctx, h);
      if (v !== "Visible" && !wb.sheets.some((o) => o !== sheet && (o.visibility ?? "Visible") === "Visible")) {
        throw invalidOperation("A workbook must contain at least one visible worksheet.");
      }
      sheet.visibility = v;
      if (v !== "Visible" && wb.activeSheetId === sheet.id) {
        const other = wb.sheets.find((o) => (o.visibility ?? "Visible") === "Visible");
        if (other) wb.activeSheetId = other.id;
      }
    });
  }
  private _names?: NamedItemCollectionProxy;
  /** Names scoped to this sheet (ExcelApi 1.4). */
  get names(): NamedItemCollectionProxy {
    if (!this._names) this._names = new NamedItemCollectionProxy(this._ctx, `${this._path}.names`, () => this._resolve().sheetId);
    return this._names;
  }
  /** Tables on this worksheet. */
  get tables(): TableCollectionProxy {
    if (!this._tables) {
      this._tables = new TableCollectionProxy(this._ctx, `${this._path}.tables`, () => this._resolve().sheetId);
    }
    return this._tables;
  }
  activate(): void {
    this._call("activate", undefined, (h) => this._ctx.model.activateSheet(sheetOf(this._ctx, h)));
  }
  delete(): void {
    this._call("delete", undefined, (h) => this._ctx.model.deleteSheet(sheetOf(this._ctx, h)));
  }
  /** A range by A1 address on this sheet; no address means the whole sheet. */
  getRange(address?: string): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.getRange(${JSON.stringify(address ?? "")})`, () => {
      const h = this._resolve();
      const sheet = sheetOf(this._ctx, h);
      if (address === undefined || address === "") {
        return { sheetId: h.sheetId, rect: { r0: 0, c0: 0, r1: MAX_ROWS - 1, c1: MAX_COLUMNS - 1 } };
      }
      const { sheet: s, rect } = this._ctx.model.resolveAddress(address, sheet);
      if (s !== sheet) throw invalidArgument(`The address '${address}' refers to another worksheet.`);
      return { sheetId: h.sheetId, rect };
    });
  }
  /** A range by 0-based indexes; InvalidArgument when it leaves the grid. */
  getRangeByIndexes(startRow: number, startColumn: number, rowCount: number, columnCount: number): RangeProxy {
    return new RangeProxy(
      this._ctx,
      `${this._path}.getRangeByIndexes(${startRow},${startColumn},${rowCount},${columnCount})`,
      () => {
        const h = this._resolve();
        const rect = { r0: startRow, c0: startColumn, r1: startRow + rowCount - 1, c1: startColumn + columnCount - 1 };
        if (!(rowCount >= 1 && columnCount >= 1)) throw invalidArgument("getRangeByIndexes: rowCount and columnCount must be at least 1.");
        assertOnGrid(rect);
        return { sheetId: h.sheetId, rect };
      },
    );
  }
  /** Used range; on an empty sheet Excel returns A1. */
  getUsedRange(valuesOnly?: boolean): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.getUsedRange(${String(valuesOnly ?? false)})`, () => {
      const h = this._resolve();
      const r = this._ctx.model.usedRect(sheetOf(this._ctx, h), valuesOnly === true);
      return { sheetId: h.sheetId, rect: r ?? { r0: 0, c0: 0, r1: 0, c1: 0 } };
    });
  }
  /** Used range, or a null object on an empty sheet. */
  getUsedRangeOrNullObject(valuesOnly?: boolean): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.getUsedRangeOrNullObject(${String(valuesOnly ?? false)})`, () => {
      const h = this._resolve();
      const r = this._ctx.model.usedRect(sheetOf(this._ctx, h), valuesOnly === true);
      return r ? { sheetId: h.sheetId, rect: r } : null;
    });
  }
}

// ---------- ranges ----------

type RangeHandle = { sheetId: string; rect: Rect };

const RANGE_SCALARS = [
  "address",
  "addressLocal",
  "rowIndex",
  "columnIndex",
  "rowCount",
  "columnCount",
  "cellCount",
  "values",
  "numberFormat",
  "formulas",
  "text",
  "valueTypes",
  "isEntireColumn",
  "isEntireRow",
] as const;

export class RangeProxy extends ProxyBase<RangeHandle> {
  protected readonly _typeName = "Range";
  private _format?: RangeFormatProxy;
  private _conditionalFormats?: ConditionalFormatCollectionProxy;
  private _worksheet?: WorksheetProxy;
  protected _scalarNames(): readonly string[] {
    return RANGE_SCALARS;
  }
  private _sheet(h: RangeHandle): SheetModel {
    return this._ctx.model.requireSheetId(h.sheetId);
  }
  protected _scalar(h: RangeHandle, prop: string): unknown {
    const wb = this._ctx.model;
    const sheet = this._sheet(h);
    const r = h.rect;
    switch (prop) {
      case "address":
      case "addressLocal": return wb.addressOf(sheet, r);
      case "rowIndex": return r.r0;
      case "columnIndex": return r.c0;
      case "rowCount": return rectRows(r);
      case "columnCount": return rectColumns(r);
      case "cellCount": return rectRows(r) * rectColumns(r);
      case "values": return wb.readValues(sheet, r);
      case "numberFormat": return wb.readNumberFormat(sheet, r);
      case "formulas": return wb.readFormulas(sheet, r);
      case "text": return wb.readText(sheet, r);
      case "valueTypes": return wb.readValueTypes(sheet, r);
      case "isEntireColumn": return r.r0 === 0 && r.r1 === MAX_ROWS - 1;
      default: return r.c0 === 0 && r.c1 === MAX_COLUMNS - 1;
    }
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    if (prop === "format") return this.format;
    if (prop === "worksheet") return this.worksheet;
    if (prop === "conditionalFormats") return this.conditionalFormats;
    return undefined;
  }

  get address(): string { return this._get("address"); }
  get addressLocal(): string { return this._get("addressLocal"); }
  get rowIndex(): number { return this._get("rowIndex"); }
  get columnIndex(): number { return this._get("columnIndex"); }
  get rowCount(): number { return this._get("rowCount"); }
  get columnCount(): number { return this._get("columnCount"); }
  get cellCount(): number { return this._get("cellCount"); }
  get isEntireColumn(): boolean { return this._get("isEntireColumn"); }
  get isEntireRow(): boolean { return this._get("isEntireRow"); }
  get text(): string[][] { return this._get("text"); }
  get valueTypes(): string[][] { return this._get("valueTypes"); }

  get values(): unknown[][] {
    return this._get("values");
  }
  /** 2-D array of the range's size, a 1x1 array or a single value (applied to every cell); null keeps a cell. */
  set values(v: unknown[][]) {
    this._set("values", v, (h) => {
      this._ctx.model.writeValues(this._sheet(h), h.rect, v);
      this._ctx.model.autoExpandTables(this._sheet(h), h.rect);
    });
  }
  get numberFormat(): unknown[][] {
    return this._get("numberFormat");
  }
  set numberFormat(v: unknown[][]) {
    this._set("numberFormat", v, (h) => this._ctx.model.writeNumberFormat(this._sheet(h), h.rect, v));
  }
  get formulas(): unknown[][] {
    return this._get("formulas");
  }
  set formulas(v: unknown[][]) {
    this._set("formulas", v, (h) => {
      this._ctx.model.writeFormulas(this._sheet(h), h.rect, v);
      this._ctx.model.autoExpandTables(this._sheet(h), h.rect);
    });
  }

  /**
   * `copyFrom(source, copyType)` (ExcelApi 1.9): copies from a Range or an address (on this range's
   * sheet unless it names one) to this range's top-left cell, at the source's size.
   */
  copyFrom(source: RangeProxy | string, copyType: "All" | "Formulas" | "Values" | "Formats" = "All", skipBlanks = false, transpose = false): void {
    if (typeof source !== "string") this._ctx._checkSameContext(source);
    this._call("copyFrom", { source: typeof source === "string" ? source : source._path, copyType, skipBlanks, transpose }, (h) => {
      if (skipBlanks || transpose) throw invalidArgument("copyFrom: skipBlanks and transpose are not emulated.");
      if (!["All", "Formulas", "Values", "Formats"].includes(copyType)) throw invalidArgument(`copyFrom: copy type '${String(copyType)}' is not emulated.`);
      const wb = this._ctx.model;
      const dst = this._sheet(h);
      let src: SheetModel;
      let from: Rect;
      if (typeof source === "string") ({ sheet: src, rect: from } = wb.resolveAddress(source, dst));
      else {
        const sh = source._resolve();
        src = wb.requireSheetId(sh.sheetId);
        from = sh.rect;
      }
      wb.copyRange(src, from, dst, { r: h.rect.r0, c: h.rect.c0 }, copyType);
    });
  }

  get format(): RangeFormatProxy {
    if (!this._format) this._format = new RangeFormatProxy(this._ctx, `${this._path}.format`, () => this._resolve());
    return this._format;
  }
  /** The conditional formats that overlap this range (ExcelApi 1.6; see `ConditionalFormatCollectionProxy`). */
  get conditionalFormats(): ConditionalFormatCollectionProxy {
    if (!this._conditionalFormats) this._conditionalFormats = new ConditionalFormatCollectionProxy(this._ctx, `${this._path}.conditionalFormats`, () => this._resolve());
    return this._conditionalFormats;
  }
  get worksheet(): WorksheetProxy {
    if (!this._worksheet) {
      this._worksheet = new WorksheetProxy(this._ctx, `${this._path}.worksheet`, () => ({ sheetId: this._resolve().sheetId }));
    }
    return this._worksheet;
  }

  private _derived(name: string, args: unknown[], f: (h: RangeHandle) => Rect): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.${name}(${args.map((a) => JSON.stringify(a)).join(",")})`, () => {
      const h = this._resolve();
      const rect = f(h);
      assertOnGrid(rect, `result of ${name}`);
      return { sheetId: h.sheetId, rect };
    });
  }

  /** A cell relative to the top-left corner; it may lie outside this range but must stay on the grid. */
  getCell(row: number, column: number): RangeProxy {
    return this._derived("getCell", [row, column], (h) => ({
      r0: h.rect.r0 + row, c0: h.rect.c0 + column, r1: h.rect.r0 + row, c1: h.rect.c0 + column,
    }));
  }
  getRow(row: number): RangeProxy {
    return this._derived("getRow", [row], (h) => {
      if (!Number.isInteger(row) || row < 0 || row >= rectRows(h.rect)) throw invalidArgument(`getRow: row ${row} is outside the range.`);
      return { r0: h.rect.r0 + row, c0: h.rect.c0, r1: h.rect.r0 + row, c1: h.rect.c1 };
    });
  }
  getColumn(column: number): RangeProxy {
    return this._derived("getColumn", [column], (h) => {
      if (!Number.isInteger(column) || column < 0 || column >= rectColumns(h.rect)) {
        throw invalidArgument(`getColumn: column ${column} is outside the range.`);
      }
      return { r0: h.rect.r0, c0: h.rect.c0 + column, r1: h.rect.r1, c1: h.rect.c0 + column };
    });
  }
  /** Grows or shrinks from the top-left corner; the result must keep at least one row and column. */
  getResizedRange(deltaRows: number, deltaColumns: number): RangeProxy {
    return this._derived("getResizedRange", [deltaRows, deltaColumns], (h) => {
      const rect = { ...h.rect, r1: h.rect.r1 + deltaRows, c1: h.rect.c1 + deltaColumns };
      if (rect.r1 < rect.r0 || rect.c1 < rect.c0) throw invalidArgument("getResizedRange: the range would have no rows or columns.");
      return rect;
    });
  }
  getOffsetRange(rowOffset: number, columnOffset: number): RangeProxy {
    return this._derived("getOffsetRange", [rowOffset, columnOffset], (h) => ({
      r0: h.rect.r0 + rowOffset, c0: h.rect.c0 + columnOffset, r1: h.rect.r1 + rowOffset, c1: h.rect.c1 + columnOffset,
    }));
  }
  getEntireColumn(): RangeProxy {
    return this._derived("getEntireColumn", [], (h) => ({ r0: 0, c0: h.rect.c0, r1: MAX_ROWS - 1, c1: h.rect.c1 }));
  }
  getEntireRow(): RangeProxy {
    return this._derived("getEntireRow", [], (h) => ({ r0: h.rect.r0, c0: 0, r1: h.rect.r1, c1: MAX_COLUMNS - 1 }));
  }
  /** Smallest range containing this range and `other` (a Range or an address on the same sheet). */
  getBoundingRect(other: RangeProxy | string): RangeProxy {
    if (typeof other !== "string") this._ctx._checkSameContext(other);
    return this._derived("getBoundingRect", [typeof other === "string" ? other : other._path], (h) =>
      boundingRect(h.rect, this._otherRect(h, other)),
    );
  }
  getIntersectionOrNullObject(other: RangeProxy | string): RangeProxy {
    if (typeof other !== "string") this._ctx._checkSameContext(other);
    return new RangeProxy(this._ctx, `${this._path}.getIntersectionOrNullObject()`, () => {
      const h = this._resolve();
      const r = intersectRect(h.rect, this._otherRect(h, other));
      return r ? { sheetId: h.sheetId, rect: r } : null;
    });
  }
  private _otherRect(h: RangeHandle, other: RangeProxy | string): Rect {
    const sheet = this._sheet(h);
    if (typeof other === "string") {
      const { sheet: s, rect } = this._ctx.model.resolveAddress(other, sheet);
      if (s !== sheet) throw invalidArgument("The ranges must be on the same worksheet.");
      return rect;
    }
    const oh = other._resolve();
    if (oh.sheetId !== h.sheetId) throw invalidArgument("The ranges must be on the same worksheet.");
    return oh.rect;
  }
  /** Selects the range (and activates its worksheet), as a user would. */
  select(): void {
    this._call("select", undefined, (h) => {
      const wb = this._ctx.model;
      wb.requireSheetId(h.sheetId);
      wb.activeSheetId = h.sheetId;
      wb.selection = { sheetId: h.sheetId, rect: { ...h.rect } };
      wb.extraSelectionAreas = [];
    });
  }
  /** `clear(applyTo)`: "All" (default), "Contents", "Formats"; hyperlink options change nothing here. */
  /** Inserts empty cells, shifting the cells below down (see `WorkbookModel.shiftCells`). */
  /** `merge(across)` (ExcelApi 1.2): a thin call into `WorkbookModel.mergeCells` (issue #21). */
  merge(across = false): void {
    this._call("merge", across, (h) => this._ctx.model.mergeCells(this._sheet(h), h.rect, across === true));
  }
  /** `unmerge()` (ExcelApi 1.2). */
  unmerge(): void {
    this._call("unmerge", undefined, (h) => this._ctx.model.unmergeCells(this._sheet(h), h.rect));
  }

  insert(shift: string): RangeProxy {
    this._call("insert", shift, (h) => this._ctx.model.shiftCells(this._sheet(h), h.rect, shift, "insert"));
    // Excel returns the inserted range; it is the same address as this one.
    return this;
  }
  /** Deletes the cells, shifting the cells below up (see `WorkbookModel.shiftCells`). */
  delete(shift: string): void {
    this._call("delete", shift, (h) => this._ctx.model.shiftCells(this._sheet(h), h.rect, shift, "delete"));
  }
  clear(applyTo?: ClearApplyTo): void {
    this._call("clear", applyTo, (h) => {
      const a = applyTo ?? "All";
      if (!["All", "Formats", "Contents", "Hyperlinks", "RemoveHyperlinks"].includes(a)) {
        throw invalidArgument(`clear: unknown applyTo '${String(applyTo)}'.`);
      }
      this._ctx.model.clear(this._sheet(h), h.rect, a);
    });
  }
}

export class RangeFormatProxy extends ProxyBase<RangeHandle> {
  protected readonly _typeName = "RangeFormat";
  private _fill?: RangeFillProxy;
  protected _scalarNames(): readonly string[] {
    return [];
  }
  protected _scalar(): unknown {
    return undefined;
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    return prop === "fill" ? this.fill : undefined;
  }
  get fill(): RangeFillProxy {
    if (!this._fill) this._fill = new RangeFillProxy(this._ctx, `${this._path}.fill`, () => this._resolve());
    return this._fill;
  }
  /** Column widths are not modelled; the call is counted (stats.autofitCalls). */
  autofitColumns(): void {
    this._call("autofitColumns", undefined, (h) => {
      this._ctx.model.requireSheetId(h.sheetId).autofitCount++;
      this._ctx.model.stats.autofitCalls++;
    });
  }
  autofitRows(): void {
    this._call("autofitRows", undefined, (h) => {
      this._ctx.model.requireSheetId(h.sheetId);
      this._ctx.model.stats.autofitCalls++;
    });
  }
}

/** `Range.format.fill`: solid colours and No Fill (see `WorkbookModel.readFill` for the sources). */
export class RangeFillProxy extends ProxyBase<RangeHandle> {
  protected readonly _typeName = "RangeFill";
  protected _scalarNames(): readonly string[] {
    return ["color", "pattern", "tintAndShade"];
  }
  protected _scalar(h: RangeHandle, prop: string): unknown {
    const fill = this._ctx.model.readFill(this._ctx.model.requireSheetId(h.sheetId), h.rect);
    return prop === "color" ? fill.color : prop === "pattern" ? fill.pattern : fill.tintAndShade;
  }
  get color(): string { return this._get("color"); }
  set color(v: string) {
    this._set("color", v, (h) => this._ctx.model.writeFillColor(this._ctx.model.requireSheetId(h.sheetId), h.rect, v));
  }
  get pattern(): string { return this._get("pattern"); }
  get tintAndShade(): number { return this._get("tintAndShade"); }
  clear(): void {
    this._call("clear", undefined, (h) => this._ctx.model.clearFill(this._ctx.model.requireSheetId(h.sheetId), h.rect));
  }
}

// ---------- conditional formats ----------

/**
 * A conditional format as reached through one range: `scope` is that range, whose top-left cell the
 * rule's formula is read and written relative to (office-js #5194, "by design"), and whose collection
 * gives the format its `priority` (its index there).
 */
type CfHandle = { sheetId: string; cfId: string; scope: Rect };

function cfOf(ctx: EmulatedRequestContext, h: CfHandle): ConditionalFormatModel {
  return ctx.model.requireConditionalFormat(ctx.model.requireSheetId(h.sheetId), h.cfId);
}

/**
 * `Range.conditionalFormats` (https://learn.microsoft.com/en-us/javascript/api/excel/excel.conditionalformatcollection):
 * the formats that overlap the range, top priority first; `add("Custom")` puts a new one over the
 * range at the top priority. `getCount()` counts the formats overlapping the range (the docs' wording,
 * "in the workbook", is not relied on by the add-in).
 */
export class ConditionalFormatCollectionProxy extends CollectionProxy<RangeHandle, ConditionalFormatProxy> {
  protected readonly _typeName = "ConditionalFormatCollection";
  private _over(h: RangeHandle): ConditionalFormatModel[] {
    return this._ctx.model.conditionalFormatsOver(this._ctx.model.requireSheetId(h.sheetId), h.rect);
  }
  protected _itemHandles(h: RangeHandle): unknown[] {
    return this._over(h).map((cf) => ({ sheetId: h.sheetId, cfId: cf.id, scope: h.rect }));
  }
  protected _makeItem(handle: unknown): ConditionalFormatProxy {
    const h = handle as CfHandle;
    return new ConditionalFormatProxy(this._ctx, `conditionalFormats[${h.cfId}]`, () => h, false)._presetHandle(h);
  }
  /** Adds a format over this range at the top priority; only "Custom" is emulated (others: InvalidArgument). */
  add(type: string): ConditionalFormatProxy {
    let created: CfHandle | null = null;
    this._call("add", type, (h) => {
      const cf = this._ctx.model.addConditionalFormat(this._ctx.model.requireSheetId(h.sheetId), h.rect, type);
      created = { sheetId: h.sheetId, cfId: cf.id, scope: h.rect };
    });
    return new ConditionalFormatProxy(this._ctx, `${this._path}.add(${JSON.stringify(type)})`, () => {
      if (!created) throw invalidOperation("The conditional format was not created.");
      return created;
    });
  }
  getItemAt(index: number): ConditionalFormatProxy {
    return new ConditionalFormatProxy(this._ctx, `${this._path}.getItemAt(${index})`, () => {
      const h = this._resolve();
      const cf = this._over(h)[index];
      if (!cf) throw itemNotFound(`There is no conditional format at index ${index}.`);
      return { sheetId: h.sheetId, cfId: cf.id, scope: h.rect };
    });
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (h) => this._over(h).length);
  }
}

/** `Excel.ConditionalFormat` (https://learn.microsoft.com/en-us/javascript/api/excel/excel.conditionalformat). */
export class ConditionalFormatProxy extends ProxyBase<CfHandle> {
  protected readonly _typeName = "ConditionalFormat";
  private _custom?: CustomConditionalFormatProxy;
  protected _scalarNames(): readonly string[] {
    return ["id", "type", "priority", "stopIfTrue"];
  }
  protected _scalar(h: CfHandle, prop: string): unknown {
    const cf = cfOf(this._ctx, h);
    switch (prop) {
      case "id": return cf.id;
      case "type": return cf.type;
      case "stopIfTrue": return cf.stopIfTrue;
      default: return this._ctx.model.conditionalFormatsOver(this._ctx.model.requireSheetId(h.sheetId), h.scope).indexOf(cf);
    }
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    return prop === "custom" ? this.custom : undefined;
  }
  get id(): string { return this._get("id"); }
  get type(): string { return this._get("type"); }
  get priority(): number { return this._get("priority"); }
  get stopIfTrue(): boolean { return this._get("stopIfTrue"); }
  set stopIfTrue(v: boolean) {
    this._set("stopIfTrue", v, (h) => {
      if (typeof v !== "boolean") throw invalidArgument("ConditionalFormat.stopIfTrue must be a boolean.");
      cfOf(this._ctx, h).stopIfTrue = v;
    });
  }
  /** The custom rule and format; a format of another type fails at sync (only Custom exists here). */
  get custom(): CustomConditionalFormatProxy {
    if (!this._custom) {
      this._custom = new CustomConditionalFormatProxy(this._ctx, `${this._path}.custom`, () => {
        const h = this._resolve();
        if (cfOf(this._ctx, h).type !== "Custom") throw invalidOperation("The conditional format is not of the Custom type.");
        return h;
      });
    }
    return this._custom;
  }
  /** Deletes the format (the cells' own formats are not touched). */
  delete(): void {
    this._call("delete", undefined, (h) => this._ctx.model.deleteConditionalFormat(this._ctx.model.requireSheetId(h.sheetId), h.cfId));
  }
  /** The range the format applies to (one area here, so never the "several ranges" error). */
  getRange(): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.getRange()`, () => {
      const h = this._resolve();
      return { sheetId: h.sheetId, rect: { ...cfOf(this._ctx, h).rect } };
    });
  }
}

/** `Excel.CustomConditionalFormat`: `rule` and `format`. */
export class CustomConditionalFormatProxy extends ProxyBase<CfHandle> {
  protected readonly _typeName = "CustomConditionalFormat";
  private _rule?: ConditionalFormatRuleProxy;
  private _format?: ConditionalRangeFormatProxy;
  protected _scalarNames(): readonly string[] {
    return [];
  }
  protected _scalar(): unknown {
    return undefined;
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    return prop === "rule" ? this.rule : prop === "format" ? this.format : undefined;
  }
  get rule(): ConditionalFormatRuleProxy {
    if (!this._rule) this._rule = new ConditionalFormatRuleProxy(this._ctx, `${this._path}.rule`, () => this._resolve());
    return this._rule;
  }
  get format(): ConditionalRangeFormatProxy {
    if (!this._format) this._format = new ConditionalRangeFormatProxy(this._ctx, `${this._path}.format`, () => this._resolve());
    return this._format;
  }
}

/** `Excel.ConditionalFormatRule.formula`, relative to the top-left cell of the range the format was reached through. */
export class ConditionalFormatRuleProxy extends ProxyBase<CfHandle> {
  protected readonly _typeName = "ConditionalFormatRule";
  protected _scalarNames(): readonly string[] {
    return ["formula"];
  }
  protected _scalar(h: CfHandle): unknown {
    return this._ctx.model.readConditionalFormula(cfOf(this._ctx, h), { r: h.scope.r0, c: h.scope.c0 });
  }
  get formula(): string { return this._get("formula"); }
  set formula(v: string) {
    this._set("formula", v, (h) => this._ctx.model.writeConditionalFormula(cfOf(this._ctx, h), v, { r: h.scope.r0, c: h.scope.c0 }));
  }
}

/** `Excel.ConditionalRangeFormat`: only `fill` is emulated. */
export class ConditionalRangeFormatProxy extends ProxyBase<CfHandle> {
  protected readonly _typeName = "ConditionalRangeFormat";
  private _fill?: ConditionalRangeFillProxy;
  protected _scalarNames(): readonly string[] {
    return [];
  }
  protected _scalar(): unknown {
    return undefined;
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    return prop === "fill" ? this.fill : undefined;
  }
  get fill(): ConditionalRangeFillProxy {
    if (!this._fill) this._fill = new ConditionalRangeFillProxy(this._ctx, `${this._path}.fill`, () => this._resolve());
    return this._fill;
  }
}

/** `Excel.ConditionalRangeFill` (https://learn.microsoft.com/en-us/javascript/api/excel/excel.conditionalrangefill): `color` "#RRGGBB", `clear()`. */
export class ConditionalRangeFillProxy extends ProxyBase<CfHandle> {
  protected readonly _typeName = "ConditionalRangeFill";
  protected _scalarNames(): readonly string[] {
    return ["color"];
  }
  protected _scalar(h: CfHandle): unknown {
    return cfOf(this._ctx, h).fill;
  }
  get color(): string { return this._get("color"); }
  set color(v: string) {
    this._set("color", v, (h) => this._ctx.model.writeConditionalFill(cfOf(this._ctx, h), v));
  }
  clear(): void {
    this._call("clear", undefined, (h) => {
      cfOf(this._ctx, h).fill = null;
    });
  }
}

// ---------- tables ----------

type TableHandle = { tableId: string };

function tableOf(ctx: EmulatedRequestContext, h: TableHandle): TableModel {
  return ctx.model.requireTableId(h.tableId);
}

/** `workbook.tables` (scopeSheetId null) or `worksheet.tables`. */
export class TableCollectionProxy extends CollectionProxy<string, TableProxy> {
  protected readonly _typeName = "TableCollection";
  constructor(ctx: EmulatedRequestContext, path: string, scope: () => string | null) {
    super(ctx, path, () => scope() ?? "", path !== "workbook.tables");
    if (path === "workbook.tables") this._presetHandle("");
  }
  private _tables(scope: string): TableModel[] {
    const wb = this._ctx.model;
    return scope === "" ? wb.tables : wb.tables.filter((t) => t.sheetId === scope);
  }
  protected override _ownScalars(): readonly string[] {
    return ["count"];
  }
  protected override _ownScalar(h: string, _prop: string): unknown {
    return this._tables(h).length;
  }
  get count(): number {
    return this._get("count");
  }
  protected _itemHandles(h: string): unknown[] {
    return this._tables(h).map((t) => ({ tableId: t.id }));
  }
  protected _makeItem(handle: unknown): TableProxy {
    const h = handle as TableHandle;
    return new TableProxy(this._ctx, `tables[${h.tableId}]`, () => h, false)._presetHandle(h);
  }
  /**
   * Creates a table over `address` (string or Range). Without a sheet in the address the ACTIVE sheet
   * is used, also through `worksheet.tables` (docs, TableCollection.add: "If the address does not
   * contain a sheet name, the currently-active sheet is used"; `Worksheet.tables` is a
   * TableCollection, and a worksheet-scoped exception is not documented: the stricter reading; issue #21).
   */
  add(address: RangeProxy | string, hasHeaders: boolean): TableProxy {
    if (typeof address !== "string") this._ctx._checkSameContext(address);
    let created: TableHandle | null = null;
    this._call("add", { address: typeof address === "string" ? address : address._path, hasHeaders }, (scope) => {
      const wb = this._ctx.model;
      let sheet: SheetModel;
      let rect: Rect;
      if (typeof address === "string") {
        const r = wb.resolveAddress(address, wb.activeSheet());
        if (scope !== "" && r.sheet.id !== scope && address.includes("!")) throw invalidArgument(`The address '${address}' is not on this worksheet.`);
        sheet = r.sheet;
        rect = r.rect;
      } else {
        const rh = address._resolve();
        sheet = wb.requireSheetId(rh.sheetId);
        if (scope !== "" && sheet.id !== scope) throw invalidArgument("The range is not on this worksheet.");
        rect = rh.rect;
      }
      created = { tableId: wb.addTable(sheet, rect, hasHeaders).id };
    });
    return new TableProxy(this._ctx, `${this._path}.add()`, () => {
      if (!created) throw invalidOperation("The table was not created.");
      return created;
    });
  }
  private _find(scope: string, key: string): TableHandle | null {
    const t = this._tables(scope).find((x) => x.name.toLowerCase() === String(key).toLowerCase() || x.id === key);
    return t ? { tableId: t.id } : null;
  }
  getItem(key: string): TableProxy {
    return new TableProxy(this._ctx, `${this._path}.getItem(${JSON.stringify(key)})`, () => {
      const h = this._find(this._resolve(), key);
      if (!h) throw itemNotFound(`The table '${key}' does not exist.`);
      return h;
    });
  }
  getItemOrNullObject(key: string): TableProxy {
    return new TableProxy(this._ctx, `${this._path}.getItemOrNullObject(${JSON.stringify(key)})`, () =>
      this._find(this._resolve(), key),
    );
  }
  getItemAt(index: number): TableProxy {
    return new TableProxy(this._ctx, `${this._path}.getItemAt(${index})`, () => {
      const t = this._tables(this._resolve())[index];
      if (!t) throw itemNotFound(`There is no table at index ${index}.`);
      return { tableId: t.id };
    });
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (scope) => this._tables(scope).length);
  }
}

const TABLE_SCALARS = ["name", "id", "showTotals", "showHeaders", "style"] as const;

export class TableProxy extends ProxyBase<TableHandle> {
  protected readonly _typeName = "Table";
  private _columns?: TableColumnCollectionProxy;
  private _rows?: TableRowCollectionProxy;
  private _sort?: TableSortProxy;
  private _autoFilter?: AutoFilterProxy;
  private _worksheet?: WorksheetProxy;
  protected _scalarNames(): readonly string[] {
    return TABLE_SCALARS;
  }
  protected _scalar(h: TableHandle, prop: string): unknown {
    const t = tableOf(this._ctx, h);
    switch (prop) {
      case "name": return t.name;
      case "id": return t.id;
      case "showTotals": return t.showTotals;
      case "showHeaders": return true;
      default: return t.style;
    }
  }
  override _navigation(prop: string): ProxyBase<unknown> | undefined {
    switch (prop) {
      case "columns": return this.columns;
      case "rows": return this.rows;
      case "sort": return this.sort;
      case "autoFilter": return this.autoFilter;
      case "worksheet": return this.worksheet;
      default: return undefined;
    }
  }
  get name(): string { return this._get("name"); }
  /** Validated by Excel's name rules at sync: InvalidArgument, or ItemAlreadyExists when taken. */
  set name(v: string) {
    this._set("name", v, (h) => this._ctx.model.renameTable(tableOf(this._ctx, h), v));
  }
  get id(): string { return this._get("id"); }
  get showHeaders(): boolean { return this._get("showHeaders"); }
  get style(): string { return this._get("style"); }
  set style(v: string) {
    this._set("style", v, (h) => {
      if (typeof v !== "string" || v === "") throw invalidArgument("table.style must be a style name.");
      tableOf(this._ctx, h).style = v;
    });
  }
  get showTotals(): boolean { return this._get("showTotals"); }
  set showTotals(v: boolean) {
    this._set("showTotals", v, (h) => this._ctx.model.setShowTotals(tableOf(this._ctx, h), v));
  }
  get worksheet(): WorksheetProxy {
    if (!this._worksheet) {
      this._worksheet = new WorksheetProxy(this._ctx, `${this._path}.worksheet`, () => ({ sheetId: tableOf(this._ctx, this._resolve()).sheetId }));
    }
    return this._worksheet;
  }
  get columns(): TableColumnCollectionProxy {
    if (!this._columns) this._columns = new TableColumnCollectionProxy(this._ctx, `${this._path}.columns`, () => this._resolve());
    return this._columns;
  }
  get rows(): TableRowCollectionProxy {
    if (!this._rows) this._rows = new TableRowCollectionProxy(this._ctx, `${this._path}.rows`, () => this._resolve());
    return this._rows;
  }
  get sort(): TableSortProxy {
    if (!this._sort) this._sort = new TableSortProxy(this._ctx, `${this._path}.sort`, () => this._resolve());
    return this._sort;
  }
  get autoFilter(): AutoFilterProxy {
    if (!this._autoFilter) this._autoFilter = new AutoFilterProxy(this._ctx, `${this._path}.autoFilter`, () => this._resolve());
    return this._autoFilter;
  }
  private _rangeOf(name: string, f: (t: TableModel) => Rect | null): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.${name}()`, () => {
      const t = tableOf(this._ctx, this._resolve());
      const r = f(t);
      if (!r) throw invalidOperation(`The table has no ${name.replace(/^get|Range$/g, "")} range.`);
      return { sheetId: t.sheetId, rect: r };
    });
  }
  getRange(): RangeProxy {
    return this._rangeOf("getRange", (t) => ({ ...t.rect }));
  }
  getHeaderRowRange(): RangeProxy {
    return this._rangeOf("getHeaderRowRange", (t) => this._ctx.model.headerRect(t));
  }
  getDataBodyRange(): RangeProxy {
    return this._rangeOf("getDataBodyRange", (t) => this._ctx.model.bodyRect(t));
  }
  getTotalRowRange(): RangeProxy {
    return this._rangeOf("getTotalRowRange", (t) => this._ctx.model.totalsRect(t));
  }
  /** ExcelApi 1.13: header row stays, new range overlaps the old one; name and id are kept. */
  resize(newRange: RangeProxy | string): void {
    if (typeof newRange !== "string") this._ctx._checkSameContext(newRange);
    this._call("resize", typeof newRange === "string" ? newRange : newRange._path, (h) => {
      const wb = this._ctx.model;
      const t = tableOf(this._ctx, h);
      const home = wb.requireSheetId(t.sheetId);
      let sheet: SheetModel;
      let rect: Rect;
      if (typeof newRange === "string") {
        ({ sheet, rect } = wb.resolveAddress(newRange, home));
      } else {
        const rh = newRange._resolve();
        sheet = wb.requireSheetId(rh.sheetId);
        rect = rh.rect;
      }
      wb.resizeTable(t, sheet, rect);
    });
  }
  /** Deletes the table and the contents of its cells. */
  delete(): void {
    this._call("delete", undefined, (h) => this._ctx.model.deleteTable(tableOf(this._ctx, h)));
  }
  /** Turns the table into a plain range (cells kept) and returns that range. */
  convertToRange(): RangeProxy {
    let result: RangeHandle | null = null;
    this._call("convertToRange", undefined, (h) => {
      const { sheet, rect } = this._ctx.model.convertTableToRange(tableOf(this._ctx, h));
      result = { sheetId: sheet.id, rect };
    });
    return new RangeProxy(this._ctx, `${this._path}.convertToRange()`, () => result);
  }
  clearFilters(): void {
    this._call("clearFilters", undefined, (h) => this._ctx.model.clearFilters(tableOf(this._ctx, h)));
  }
  reapplyFilters(): void {
    this._call("reapplyFilters", undefined, (h) => this._ctx.model.apiReapplyFilter(tableOf(this._ctx, h)));
  }
}

type ColumnHandle = { tableId: string; columnId: number };

export class TableColumnCollectionProxy extends CollectionProxy<TableHandle, TableColumnProxy> {
  protected readonly _typeName = "TableColumnCollection";
  protected override _ownScalars(): readonly string[] {
    return ["count"];
  }
  protected override _ownScalar(h: TableHandle): unknown {
    return tableOf(this._ctx, h).columns.length;
  }
  get count(): number {
    return this._get("count");
  }
  protected _itemHandles(h: TableHandle): unknown[] {
    return tableOf(this._ctx, h).columns.map((c) => ({ tableId: h.tableId, columnId: c.id }));
  }
  protected _makeItem(handle: unknown): TableColumnProxy {
    const h = handle as ColumnHandle;
    return new TableColumnProxy(this._ctx, `columns[${h.columnId}]`, () => h, false)._presetHandle(h);
  }
  /** Inserts a column at `index` (end when omitted); `values` is (rows incl. header) x 1. */
  add(index?: number | null, values?: unknown[][], name?: string): TableColumnProxy {
    let created: ColumnHandle | null = null;
    this._call("add", { index, values, name }, (h) => {
      const col = this._ctx.model.addTableColumn(tableOf(this._ctx, h), index, values, name);
      created = { tableId: h.tableId, columnId: col.id };
    });
    return new TableColumnProxy(this._ctx, `${this._path}.add()`, () => created);
  }
  private _find(h: TableHandle, key: number | string): ColumnHandle | null {
    const t = tableOf(this._ctx, h);
    const c = typeof key === "number"
      ? t.columns.find((x) => x.id === key)
      : t.columns.find((x) => x.name.toLowerCase() === key.toLowerCase() || String(x.id) === key);
    return c ? { tableId: h.tableId, columnId: c.id } : null;
  }
  /** By name (case-insensitive) or id. */
  getItem(key: number | string): TableColumnProxy {
    return new TableColumnProxy(this._ctx, `${this._path}.getItem(${JSON.stringify(key)})`, () => {
      const c = this._find(this._resolve(), key);
      if (!c) throw itemNotFound(`The table column '${String(key)}' does not exist.`);
      return c;
    });
  }
  getItemOrNullObject(key: number | string): TableColumnProxy {
    return new TableColumnProxy(this._ctx, `${this._path}.getItemOrNullObject(${JSON.stringify(key)})`, () =>
      this._find(this._resolve(), key),
    );
  }
  getItemAt(index: number): TableColumnProxy {
    return new TableColumnProxy(this._ctx, `${this._path}.getItemAt(${index})`, () => {
      const h = this._resolve();
      const c = tableOf(this._ctx, h).columns[index];
      if (!c) throw itemNotFound(`There is no table column at index ${index}.`);
      return { tableId: h.tableId, columnId: c.id };
    });
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (h) => tableOf(this._ctx, h).columns.length);
  }
}

export class TableColumnProxy extends ProxyBase<ColumnHandle> {
  protected readonly _typeName = "TableColumn";
  private _where(h: ColumnHandle): { t: TableModel; index: number } {
    const t = tableOf(this._ctx, h);
    const index = t.columns.findIndex((c) => c.id === h.columnId);
    if (index < 0) throw itemNotFound("The table column has been deleted.");
    return { t, index };
  }
  protected _scalarNames(): readonly string[] {
    return ["id", "index", "name", "values"];
  }
  protected _scalar(h: ColumnHandle, prop: string): unknown {
    const { t, index } = this._where(h);
    switch (prop) {
      case "id": return h.columnId;
      case "index": return index;
      case "name": return t.columns[index].name;
      default: {
        const wb = this._ctx.model;
        const c = t.rect.c0 + index;
        return wb.readValues(wb.requireSheetId(t.sheetId), { r0: t.rect.r0, c0: c, r1: t.rect.r1, c1: c });
      }
    }
  }
  get id(): number { return this._get("id"); }
  get index(): number { return this._get("index"); }
  get values(): unknown[][] { return this._get("values"); }
  get name(): string { return this._get("name"); }
  set name(v: string) {
    this._set("name", v, (h) => this._ctx.model.renameTableColumn(tableOf(this._ctx, h), h.columnId, v));
  }
  private _rangeOf(name: string, f: (t: TableModel, c: number) => Rect | null): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.${name}()`, () => {
      const { t, index } = this._where(this._resolve());
      const r = f(t, t.rect.c0 + index);
      if (!r) throw invalidOperation(`The table column has no ${name} range.`);
      return { sheetId: t.sheetId, rect: r };
    });
  }
  getRange(): RangeProxy {
    return this._rangeOf("getRange", (t, c) => ({ r0: t.rect.r0, c0: c, r1: t.rect.r1, c1: c }));
  }
  getHeaderRowRange(): RangeProxy {
    return this._rangeOf("getHeaderRowRange", (t, c) => ({ r0: t.rect.r0, c0: c, r1: t.rect.r0, c1: c }));
  }
  getDataBodyRange(): RangeProxy {
    return this._rangeOf("getDataBodyRange", (t, c) => {
      const b = this._ctx.model.bodyRect(t);
      return { r0: b.r0, c0: c, r1: b.r1, c1: c };
    });
  }
  getTotalRowRange(): RangeProxy {
    return this._rangeOf("getTotalRowRange", (t, c) => (t.showTotals ? { r0: t.rect.r1, c0: c, r1: t.rect.r1, c1: c } : null));
  }
}

export class TableRowCollectionProxy extends CollectionProxy<TableHandle, TableRowProxy> {
  protected readonly _typeName = "TableRowCollection";
  protected override _ownScalars(): readonly string[] {
    return ["count"];
  }
  protected override _ownScalar(h: TableHandle): unknown {
    return this._ctx.model.bodyRowCount(tableOf(this._ctx, h));
  }
  /** Body rows (header and totals rows excluded). */
  get count(): number {
    return this._get("count");
  }
  protected _itemHandles(h: TableHandle): unknown[] {
    const n = this._ctx.model.bodyRowCount(tableOf(this._ctx, h));
    return Array.from({ length: n }, (_, i) => ({ tableId: h.tableId, index: i }));
  }
  protected _makeItem(handle: unknown): TableRowProxy {
    const h = handle as RowHandle;
    return new TableRowProxy(this._ctx, `rows[${h.index}]`, () => h, false)._presetHandle(h);
  }
  /** Inserts body rows (counted in stats.rowsAddCalls: add rows in bulk, not one call per row). */
  add(index?: number | null, values?: unknown[][], _alwaysInsert?: boolean): TableRowProxy {
    let created: RowHandle | null = null;
    this._call("add", { index, values }, (h) => {
      const t = tableOf(this._ctx, h);
      const at = index ?? this._ctx.model.bodyRowCount(t);
      this._ctx.model.addTableRows(t, index, values);
      created = { tableId: h.tableId, index: at };
    });
    return new TableRowProxy(this._ctx, `${this._path}.add()`, () => created);
  }
  getItemAt(index: number): TableRowProxy {
    return new TableRowProxy(this._ctx, `${this._path}.getItemAt(${index})`, () => {
      const h = this._resolve();
      const n = this._ctx.model.bodyRowCount(tableOf(this._ctx, h));
      if (!Number.isInteger(index) || index < 0 || index >= n) throw itemNotFound(`There is no table row at index ${index}.`);
      return { tableId: h.tableId, index };
    });
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (h) => this._ctx.model.bodyRowCount(tableOf(this._ctx, h)));
  }
}

type RowHandle = { tableId: string; index: number };

export class TableRowProxy extends ProxyBase<RowHandle> {
  protected readonly _typeName = "TableRow";
  private _rect(h: RowHandle): { t: TableModel; rect: Rect } {
    const t = tableOf(this._ctx, h);
    const b = this._ctx.model.bodyRect(t);
    const r = b.r0 + h.index;
    if (r > b.r1) throw itemNotFound("The table row no longer exists.");
    return { t, rect: { r0: r, c0: t.rect.c0, r1: r, c1: t.rect.c1 } };
  }
  protected _scalarNames(): readonly string[] {
    return ["index", "values"];
  }
  protected _scalar(h: RowHandle, prop: string): unknown {
    if (prop === "index") return h.index;
    const { t, rect } = this._rect(h);
    return this._ctx.model.readValues(this._ctx.model.requireSheetId(t.sheetId), rect);
  }
  get index(): number { return this._get("index"); }
  get values(): unknown[][] { return this._get("values"); }
  getRange(): RangeProxy {
    return new RangeProxy(this._ctx, `${this._path}.getRange()`, () => {
      const { t, rect } = this._rect(this._resolve());
      return { sheetId: t.sheetId, rect };
    });
  }
}

export class TableSortProxy extends ProxyBase<TableHandle> {
  protected readonly _typeName = "TableSort";
  protected _scalarNames(): readonly string[] {
    return ["fields", "matchCase", "method"];
  }
  protected _scalar(h: TableHandle, prop: string): unknown {
    const t = tableOf(this._ctx, h);
    if (prop === "fields") return t.sort ? t.sort.fields.map((f) => ({ ...f })) : [];
    if (prop === "matchCase") return t.sort?.matchCase ?? false;
    return "PinYin";
  }
  get fields(): Array<{ key: number; ascending: boolean }> { return this._get("fields"); }
  get matchCase(): boolean { return this._get("matchCase"); }
  /** Sorts the body rows and remembers the fields for `reapply()`. */
  apply(fields: Array<{ key: number; ascending?: boolean }>, matchCase?: boolean, _method?: string): void {
    this._call("apply", { fields, matchCase }, (h) => this._ctx.model.applySort(tableOf(this._ctx, h), fields, matchCase));
  }
  clear(): void {
    this._call("clear", undefined, (h) => this._ctx.model.clearSort(tableOf(this._ctx, h)));
  }
  /** Sorts the body rows again by the remembered fields (nothing happens without a sort). */
  reapply(): void {
    this._call("reapply", undefined, (h) => this._ctx.model.reapplySort(tableOf(this._ctx, h)));
  }
}

export class AutoFilterProxy extends ProxyBase<TableHandle> {
  protected readonly _typeName = "AutoFilter";
  protected _scalarNames(): readonly string[] {
    return ["enabled", "isDataFiltered", "criteria"];
  }
  protected _scalar(h: TableHandle, prop: string): unknown {
    const t = tableOf(this._ctx, h);
    if (prop === "enabled") return t.autoFilterEnabled !== false;
    if (prop === "isDataFiltered") return t.filters.size > 0;
    return t.columns.map((_, i) => JSON.parse(JSON.stringify(t.filters.get(i) ?? { filterOn: "Custom" })) as FilterCriteria);
  }
  get enabled(): boolean { return this._get("enabled"); }
  get isDataFiltered(): boolean { return this._get("isDataFiltered"); }
  get criteria(): FilterCriteria[] { return this._get("criteria"); }
  /** Filters `columnIndex` of the table by `criteria` (Values and simple Custom comparisons are evaluated). */
  apply(_range: RangeProxy | string, columnIndex?: number, criteria?: FilterCriteria): void {
    this._call("apply", { columnIndex, criteria }, (h) => {
      const t = tableOf(this._ctx, h);
      if (columnIndex === undefined) return;
      this._ctx.model.applyFilter(t, columnIndex, criteria);
    });
  }
  reapply(): void {
    this._call("reapply", undefined, (h) => this._ctx.model.apiReapplyFilter(tableOf(this._ctx, h)));
  }
  /** Removes the filter buttons and every criterion (ExcelApi 1.9). */
  remove(): void {
    this._call("remove", undefined, (h) => this._ctx.model.removeAutoFilter(tableOf(this._ctx, h)));
  }
  clearCriteria(): void {
    this._call("clearCriteria", undefined, (h) => this._ctx.model.clearFilters(tableOf(this._ctx, h)));
  }
}

// ---------- settings ----------

type SettingHandle = { key: string };

export class SettingCollectionProxy extends CollectionProxy<WorkbookModel, SettingProxy> {
  protected readonly _typeName = "SettingCollection";
  constructor(ctx: EmulatedRequestContext) {
    super(ctx, "settings", () => ctx.model, false);
    this._presetHandle(ctx.model);
  }
  protected _itemHandles(h: WorkbookModel): unknown[] {
    return [...h.settings.keys()].map((key) => ({ key }));
  }
  protected _makeItem(handle: unknown): SettingProxy {
    const h = handle as SettingHandle;
    return new SettingProxy(this._ctx, `settings[${JSON.stringify(h.key)}]`, () => h, false)._presetHandle(h);
  }
  /** Adds or replaces a setting; the value must be JSON-serialisable. */
  add(key: string, value: unknown): SettingProxy {
    this._call("add", { key, value }, (wb) => wb.setSetting(key, value));
    return new SettingProxy(this._ctx, `settings.add(${JSON.stringify(key)})`, () => ({ key }));
  }
  getItem(key: string): SettingProxy {
    return new SettingProxy(this._ctx, `settings.getItem(${JSON.stringify(key)})`, () => {
      if (!this._ctx.model.settings.has(key)) throw itemNotFound(`The setting '${key}' does not exist.`);
      return { key };
    });
  }
  getItemOrNullObject(key: string): SettingProxy {
    return new SettingProxy(this._ctx, `settings.getItemOrNullObject(${JSON.stringify(key)})`, () =>
      this._ctx.model.settings.has(key) ? { key } : null,
    );
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (wb) => wb.settings.size);
  }
}

export class SettingProxy extends ProxyBase<SettingHandle> {
  protected readonly _typeName = "Setting";
  protected _scalarNames(): readonly string[] {
    return ["key", "value"];
  }
  protected _scalar(h: SettingHandle, prop: string): unknown {
    if (prop === "key") return h.key;
    return this._ctx.model.getSetting(h.key);
  }
  get key(): string { return this._get("key"); }
  get value(): unknown { return this._get("value"); }
  set value(v: unknown) {
    this._set("value", v, (h) => {
      if (!this._ctx.model.settings.has(h.key)) throw itemNotFound(`The setting '${h.key}' does not exist.`);
      this._ctx.model.setSetting(h.key, v);
    });
  }
  delete(): void {
    this._call("delete", undefined, (h) => this._ctx.model.deleteSetting(h.key));
  }
}

// ---------- names ----------

/** `workbook.names` (scope "") or `worksheet.names` (scope = sheet id); items expose `name`. */
export class NamedItemCollectionProxy extends CollectionProxy<string, NamedItemProxy> {
  protected readonly _typeName = "NamedItemCollection";
  constructor(ctx: EmulatedRequestContext, path: string, scope: () => string) {
    super(ctx, path, scope, path !== "workbook.names");
    if (path === "workbook.names") this._presetHandle("");
  }
  private _list(scope: string): string[] {
    const wb = this._ctx.model;
    return scope === "" ? wb.definedNames : (wb.sheetById(scope)?.names ?? []);
  }
  protected _itemHandles(h: string): unknown[] {
    return this._list(h).map((name) => ({ name }));
  }
  protected _makeItem(handle: unknown): NamedItemProxy {
    const h = handle as { name: string };
    return new NamedItemProxy(this._ctx, `names[${JSON.stringify(h.name)}]`, () => h, false)._presetHandle(h);
  }
  getCount(): ClientResult<number> {
    return queueResult(this, "getCount", (scope) => this._list(scope).length);
  }
  /**
   * `names.add(name, reference)` (ExcelApi 1.4): a Range (an absolute reference to it) or a formula
   * (`"=Sheet1!$C$5"`). A thin call into `WorkbookModel.addDefinedName` (issue #21).
   */
  add(name: string, reference: RangeProxy | string, _comment?: string): void {
    if (typeof reference !== "string") this._ctx._checkSameContext(reference);
    this._call("add", { name, reference: typeof reference === "string" ? reference : reference._path }, (scope) => {
      const wb = this._ctx.model;
      let formula: string;
      if (typeof reference === "string") formula = reference;
      else {
        const h = reference._resolve();
        const a = wb.addressOf(wb.requireSheetId(h.sheetId), h.rect);
        const [sheetPart, cells] = [a.slice(0, a.lastIndexOf("!")), a.slice(a.lastIndexOf("!") + 1)];
        formula = `=${sheetPart}!${cells.replace(/([A-Z]+)(\d+)/g, "$$$1$$$2")}`;
      }
      wb.addDefinedName(name, scope === "" ? undefined : wb.requireSheetId(scope).name, formula);
    });
  }
}

export class NamedItemProxy extends ProxyBase<{ name: string }> {
  protected readonly _typeName = "NamedItem";
  protected _scalarNames(): readonly string[] {
    return ["name", "formula"];
  }
  protected _scalar(h: { name: string }, prop: string): unknown {
    if (prop === "formula") return this._ctx.model.nameFormula(h.name, null) ?? null;
    return h.name;
  }
  get name(): string {
    return this._get("name");
  }
  /** What the name refers to (`=Sheet1!$C$5`; after rows are deleted under it, `=#REF!`). */
  get formula(): string {
    return this._get("formula");
  }
}

// ---------- worksheet functions ----------

/** `workbook.functions` (ExcelApi 1.2): Excel evaluates the function; the result is a `FunctionResult`. */
export class FunctionsProxy extends ProxyBase<WorkbookModel> {
  protected readonly _typeName = "Functions";
  constructor(ctx: EmulatedRequestContext) {
    super(ctx, "workbook.functions", () => ctx.model, false);
    this._presetHandle(ctx.model);
  }
  protected _scalarNames(): readonly string[] {
    return [];
  }
  protected _scalar(): unknown {
    return undefined;
  }
  /** `DATE(year, month, day)`: the serial in the workbook's date system (1904 → 1904-01-01 is 0). */
  date(year: number, month: number, day: number): FunctionResultProxy<number> {
    const result = new FunctionResultProxy<number>();
    this._ctx._enqueue({
      wire: { path: this._path, op: "date", args: [year, month, day] },
      mutates: false,
      apply: () => {
        const wb = this._ctx.model;
        const base = dateSerial(year, month, day);
        const v = base === null ? null : wb.date1904 ? base - DATE1904_OFFSET : base;
        return { bytes: 16, commit: () => result._set(v === null || v < 0 ? null : v, v === null || v < 0 ? "#NUM!" : null) };
      },
    });
    return result;
  }
}

/** `Excel.FunctionResult`: `value` and `error` after `load()` + `sync()` (loaded with the call here). */
export class FunctionResultProxy<T> {
  private _ready = false;
  private _value: T | null = null;
  private _error: string | null = null;
  /** @internal */
  _set(v: T | null, error: string | null): void {
    this._value = v;
    this._error = error;
    this._ready = true;
  }
  load(_props?: unknown): this {
    return this;
  }
  get value(): T {
    if (!this._ready) throw notLoaded("value", "FunctionResult");
    return this._value as T;
  }
  get error(): string | null {
    if (!this._ready) throw notLoaded("error", "FunctionResult");
    return this._error;
  }
}
