/**
 * The emulated Excel host: one function, {@link answerRequest}, takes the body of a RichApi request
 * exactly as Microsoft's Excel client library (`@microsoft/office-js`) sends it for a `context.sync()`
 * and returns what Excel returns — a response body, or the refusal Excel on the web gives a payload
 * over its limit. Everything else (the bridge that carries bodies to it, `Excel.run`, load/sync,
 * PropertyNotLoaded, …) is the library's own.
 *
 * The request: `{ Actions: [...], ObjectPaths: { id: {...} } }`. Object paths (how an object is
 * reached): 1 GlobalObject (the workbook), 3 Method (`GetRange("A1")`), 4 Property (`Worksheets`),
 * 5 Indexer (`getItem(key)`), 6 ReferenceId (an object kept with `_KeepReference`), 7 NullObject.
 * Actions, run in order: 1 Instantiate (resolve a path; the result tells the library its id or
 * reference, or that it is a null object), 2 Query (`load`), 3 Method, 4 SetProperty, 5 Trace.
 * Types 2 NewObject, 6 RecursiveQuery, 7 QueryAsJson, 8 EnsureUnchanged and 9 Update are refused:
 * the library sends them only to hosts that report sets the profiles do not report.
 *
 * The response: `{ Results: [{ ActionId, Value }], TraceIds }` with the wire's PascalCase property
 * names, collections as `{ _Items: [...] }`; a failure stops the request there and adds
 * `Error: { Code, Message, ActionIndex, Location, HttpStatusCode }` (actions before it stay applied,
 * as in Excel), which the library turns into `OfficeExtension.Error` with its `debugInfo`. Docs
 * (learn.microsoft.com/javascript/api/office/officeextension.error, the `traceMessages` example: a
 * batch inserts its third and fourth paragraphs and fails on the fifth): "All other commands after the
 * failed command in the batch are not executed". The refresh's lock fence relies on exactly this
 * (src/workbook/lock.ts, "Fencing"; issue #34): an Instantiate that cannot resolve `getItem(key)`
 * fails there, and nothing queued after it runs.
 */
import { EmulatedExcelError, ErrorCodes, invalidArgument, itemNotFound } from "./errors";
import { TYPES, describeHostObject, type ArgRefs, type HostContext, type HostObject, type HostType, type TypeDef } from "./host-objects";
import type { WorkbookModel } from "./model";
import { API_SETS } from "./api-sets";
import { profile, profileSupports, type PlatformProfile } from "./profiles";

/** What the host answers: a response body (HTTP 200), or the bridge's refusal (status "failed"). */
export type HostAnswer =
  | { readonly kind: "response"; readonly body: string }
  /** 5103 request / 5104 response over the payload limit (RichApiMessageUtility's codes); 5001 an internal error. */
  | { readonly kind: "refused"; readonly code: number; readonly message: string };

export interface HostRequest {
  /** The request body text (`message[4]` of the library's request). */
  readonly body: string;
  /** The request flags the library sent (`message[6]`); 64 asks to wait while a cell is edited. */
  readonly flags?: number;
}

/** Request flag the library sets for `Excel.run({ delayForCellEdit: true }, …)`. */
export const FLAG_DELAY_FOR_CELL_EDIT = 64;

interface ObjectPathInfo {
  Id: number;
  ObjectPathType: number;
  Name: string;
  ParentObjectPathId?: number;
  ArgumentInfo?: { Arguments?: unknown[]; ReferencedObjectPathIds?: Array<number | null> };
}
interface ActionInfo {
  Id: number;
  ActionType: number;
  Name: string;
  ObjectPathId: number;
  ArgumentInfo?: { Arguments?: unknown[]; ReferencedObjectPathIds?: Array<number | null> };
  QueryInfo?: { Select?: string[]; Expand?: string[]; Top?: number; Skip?: number };
}

/** Per-workbook host state that outlives one request: objects kept by `_KeepReference`, time spent answering. */
interface HostState {
  nextReference: number;
  references: Map<string, HostObject>;
  /** Milliseconds spent in `answerRequest` (the emulated Excel's own work: what the bench takes out). */
  ms: number;
}
const states = new WeakMap<WorkbookModel, HostState>();
function stateOf(wb: WorkbookModel): HostState {
  let s = states.get(wb);
  if (!s) {
    s = { nextReference: 1, references: new Map(), ms: 0 };
    states.set(wb, s);
  }
  return s;
}

const clock = (): number => {
  const p = (globalThis as { performance?: { now(): number } }).performance;
  return p ? p.now() : Date.now();
};

/** Milliseconds the host spent answering requests for `wb` (parsing bodies, running them, writing answers). */
export function hostMilliseconds(wb: WorkbookModel): number {
  return stateOf(wb).ms;
}

/** How many objects the library asked the host to keep for `wb` and has not released (tests check cleanup). */
export function keptReferenceCount(wb: WorkbookModel): number {
  return stateOf(wb).references.size;
}

const HTTP_STATUS: Record<string, number> = {
  InvalidArgument: 400,
  InvalidOperation: 400,
  InvalidReference: 400,
  InvalidSelection: 400,
  InvalidOperationInCellEditMode: 400,
  InsertDeleteConflict: 409,
  ItemAlreadyExists: 409,
  ItemNotFound: 404,
  ApiNotFound: 404,
  RangeExceedsLimit: 400,
  GeneralException: 500,
};

const upperFirst = (s: string): string => (s === "" ? s : s[0].toUpperCase() + s.slice(1));
const lowerFirst = (s: string): string => (s === "" ? s : s[0].toLowerCase() + s.slice(1));

function def(o: HostObject): TypeDef<HostType> {
  return TYPES[o.type] as unknown as TypeDef<HostType>;
}

/** An error the model raised (by shape: a model from another realm raises its own realm's class). */
function isHostError(e: unknown): e is EmulatedExcelError {
  if (e instanceof EmulatedExcelError) return true;
  const x = e as { name?: unknown; code?: unknown; debugInfo?: unknown } | null;
  return typeof x === "object" && x !== null && x.name === "RichApi.Error" && typeof x.code === "string" && typeof x.debugInfo === "object";
}

/**
 * A failure `wb.faultInjector` chose that is not an Excel error: the request is lost on its way (the
 * bridge answers it as failed, 5001) after the actions before it were applied.
 */
class LostRequest extends Error {}

/** A failure at one action, with the member it happened in (`Range.values`, `WorksheetCollection.getItem`). */
class ActionFailure extends Error {
  constructor(readonly error: EmulatedExcelError, readonly location: string) {
    super(error.message);
  }
}

/**
 * Refuses a member outside the workbook's platform profile, as Excel does: "The API you are trying to
 * use could not be found. It may be available in a newer version of Excel" (ApiNotFound). The set of
 * each member is the library's own (`api-sets.ts`); a member not listed there is ExcelApi 1.1.
 */
function checkApi(wb: WorkbookModel, type: string, member: string): void {
  const need = API_SETS[`${type}.${member}`];
  if (!need) return;
  const p = hostProfile(wb);
  if (profileSupports(p, need[0], need[1])) return;
  throw new EmulatedExcelError(
    ErrorCodes.apiNotFound,
    `The API you are trying to use could not be found. It may be available in a newer version of Excel. Please refer to the documentation: "Excel JavaScript API requirement sets" for more information. (${type}.${member} is ${need[0]} ${need[1]}; ${p.name} has ${p.requirementSets[need[0]] ? `${need[0]} ${p.requirementSets[need[0]]}` : `no ${need[0]}`}.)`,
    `${type}.${member}`,
  );
}

const profiles = new WeakMap<WorkbookModel, PlatformProfile>();

/** The profile whose requirement sets the host answers `wb` with: its platform's, or one set for it. */
export function hostProfile(wb: WorkbookModel): PlatformProfile {
  return profiles.get(wb) ?? profile(wb.platform);
}

/**
 * Makes the host answer `wb` with another set of requirement sets (a test probing the add-in's floor:
 * the same platform, an older Excel). Limits stay the workbook's.
 */
export function setHostProfile(wb: WorkbookModel, p: PlatformProfile | null): void {
  if (p) profiles.set(wb, p);
  else profiles.delete(wb);
}

/** UTF-8 length of a string (the bodies are measured as the bytes that cross the wire). */
const NON_ASCII = /[\u0080-\uffff]/;

export function utf8Length(s: string): number {
  // Most bodies are ASCII: one native scan answers them without a loop over every character.
  if (!NON_ASCII.test(s)) return s.length;
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * Answers one RichApi request for `workbook` as Excel does. The workbook's platform profile decides
 * the payload limits (5 MB each way on the web: a request over it is refused with nothing applied, a
 * response over it is refused after the request ran, as Excel on the web applies writes and then
 * cannot deliver the result). Counts every request in `workbook.stats`.
 */
export function answerRequest(workbook: WorkbookModel, request: HostRequest): HostAnswer {
  const t0 = clock();
  try {
    return answer(workbook, request);
  } finally {
    stateOf(workbook).ms += clock() - t0;
  }
}

function answer(workbook: WorkbookModel, request: HostRequest): HostAnswer {
  const wb = workbook;
  // Co-authoring (coauthoring.ts): the reload injector may kill this runtime here; a dead runtime's requests fail.
  wb.coauthoring?.beforeRequest();
  if (wb.retiredReason !== null) return { kind: "refused", code: 5001, message: wb.retiredReason };
  const requestBytes = utf8Length(request.body);
  const limit = payloadLimit(wb);
  wb.stats.syncCount++;
  wb.stats.requestBytesPerSync.push(requestBytes);
  wb.stats.maxRequestBytes = Math.max(wb.stats.maxRequestBytes, requestBytes);
  if (requestBytes > limit) {
    wb.stats.rejectedSyncs++;
    wb.stats.responseBytesPerSync.push(0);
    // Excel on the web often answers an oversized request with an internal error instead (office-js #1012, #1314).
    if (wb.oversizeRequestError === "GeneralException") return { kind: "refused", code: 5001, message: "An internal error has occurred." };
    return { kind: "refused", code: 5103, message: `The request payload size has exceeded the limit (${requestBytes} bytes > ${limit}).` };
  }
  let body: string;
  try {
    body = JSON.stringify(run(wb, JSON.parse(request.body) as { Actions?: ActionInfo[]; ObjectPaths?: Record<string, ObjectPathInfo> }, request.flags ?? 0));
  } catch (e) {
    if (e instanceof LostRequest) {
      wb.stats.responseBytesPerSync.push(0);
      return { kind: "refused", code: 5001, message: e.message };
    }
    // Anything the host itself trips over is Excel's internal error, with the reason for the reader.
    body = JSON.stringify({ Error: { Code: ErrorCodes.generalException, Message: `An internal error has occurred (${e instanceof Error ? e.message : String(e)}).`, HttpStatusCode: 500 } });
  }
  const responseBytes = utf8Length(body);
  wb.stats.responseBytesPerSync.push(responseBytes);
  wb.stats.maxResponseBytes = Math.max(wb.stats.maxResponseBytes, responseBytes);
  if (responseBytes > limit) {
    wb.stats.rejectedSyncs++;
    return { kind: "refused", code: 5104, message: `The response payload size has exceeded the limit (${responseBytes} bytes > ${limit}).` };
  }
  return { kind: "response", body };
}

/** The workbook's payload limit in bytes (its option, else its profile's; none: Infinity). */
export function payloadLimit(wb: WorkbookModel): number {
  return wb.payloadLimitBytes;
}

function run(wb: WorkbookModel, req: { Actions?: ActionInfo[]; ObjectPaths?: Record<string, ObjectPathInfo> }, flags: number): object {
  const actions = Array.isArray(req.Actions) ? req.Actions : [];
  const paths = req.ObjectPaths ?? {};
  const state = stateOf(wb);
  let mutated = false;
  const h: HostContext = { wb, changed: () => void (mutated = true) };
  const resolved = new Map<number, HostObject | null>();
  /** Object paths given a reference in this request (`_KeepReference`). */
  const kept = new Map<number, string>();
  const results: Array<{ ActionId: number; Value: unknown }> = [];
  const traceIds: number[] = [];

  const fail = (e: unknown, location: string): never => {
    if (e instanceof ActionFailure) throw e;
    if (e instanceof EmulatedExcelError) throw new ActionFailure(e, e.debugInfo.errorLocation ?? location);
    throw e;
  };

  /** Resolves an object path (once per request: a Method path with side effects runs once). */
  const resolve = (id: number): HostObject | null => {
    if (resolved.has(id)) return resolved.get(id)!;
    const p = paths[String(id)];
    if (!p) throw new ActionFailure(new EmulatedExcelError(ErrorCodes.invalidObjectPath, `The object path ${id} is not in the request.`), "");
    let out: HostObject | null;
    switch (p.ObjectPathType) {
      case 1:
        out = { type: "Workbook" };
        break;
      case 6: {
        const kept = state.references.get(p.Name);
        if (!kept) throw new ActionFailure(new EmulatedExcelError(ErrorCodes.invalidObjectPath, `The object reference '${p.Name}' is no longer valid.`), "");
        out = kept;
        break;
      }
      case 7:
        out = null;
        break;
      case 3:
      case 4:
      case 5: {
        const parent = p.ParentObjectPathId === undefined ? null : resolve(p.ParentObjectPathId);
        if (parent === null) {
          out = null;
          break;
        }
        const d = def(parent);
        const member = p.ObjectPathType === 5 ? "getItem" : lowerFirst(p.Name);
        const where = `${parent.type}.${member}`;
        try {
          d.check?.(parent, h);
          if (p.ObjectPathType !== 5) checkApi(wb, parent.type, member);
          if (p.ObjectPathType === 4) {
            const nav = d.nav?.[p.Name];
            if (!nav) throw new EmulatedExcelError(ErrorCodes.generalException, `${where} is not emulated.`);
            out = nav(parent, h);
          } else if (p.ObjectPathType === 5) {
            if (!d.indexer) throw new EmulatedExcelError(ErrorCodes.generalException, `${parent.type} has no indexer in the emulator.`);
            out = d.indexer(parent, (p.ArgumentInfo?.Arguments ?? [])[0], h);
          } else {
            const m = d.objects?.[p.Name];
            if (!m) throw new EmulatedExcelError(ErrorCodes.generalException, `${where} is not emulated.`);
            inject(parent, member, p.ArgumentInfo?.Arguments ?? []);
            out = m(parent, p.ArgumentInfo?.Arguments ?? [], h, argRefs(p.ArgumentInfo?.ReferencedObjectPathIds));
          }
        } catch (e) {
          return fail(e, where);
        }
        break;
      }
      default:
        throw new ActionFailure(new EmulatedExcelError(ErrorCodes.generalException, `Object paths of type ${p.ObjectPathType} are not emulated.`), "");
    }
    resolved.set(id, out);
    return out;
  };

  /** The action being answered (for `wb.faultInjector`). */
  let actionIndex = 0;
  /** Asks the test's fault injector (`WorkbookModel.faultInjector`) whether this operation fails. */
  const inject = (o: HostObject, op: string, args: unknown[]): void => {
    const injector = wb.faultInjector;
    if (!injector) return;
    const e = injector({ path: describeHostObject(o, h), op, args, index: actionIndex });
    if (!e) return;
    if (isHostError(e)) throw e;
    throw new LostRequest(e.message);
  };

  const argRefs = (ids: Array<number | null> | undefined): ArgRefs => (i) => {
    const id = ids?.[i];
    if (id === undefined || id === null) return undefined;
    return resolve(id);
  };

  /** The object of an action, which must exist (a method or a write on a null object is ItemNotFound). */
  const target = (a: ActionInfo, member: string): HostObject => {
    const o = resolve(a.ObjectPathId);
    if (o === null) throw new ActionFailure(itemNotFound(`The requested object is a null object (it does not exist).`), member);
    return o;
  };

  if (wb.cellEditMode && (flags & FLAG_DELAY_FOR_CELL_EDIT) === 0) {
    // Docs, Excel.RunOptions.delayForCellEdit: without it a batch fails while the user edits a cell.
    return {
      Results: [],
      Error: {
        Code: ErrorCodes.invalidOperationInCellEditMode,
        Message: "The operation isn't available while a cell is being edited. Press Enter or Esc and try again.",
        ActionIndex: 0,
        HttpStatusCode: 400,
      },
    };
  }

  // Excel calculates after a request: a suspension anywhere in it holds for all of its changes (model.beginBatch).
  wb.beginBatch(actions.map((a) => ({ path: "", op: lowerFirst(String(a.Name ?? "")) })));
  try {
    for (let index = 0; index < actions.length; index++) {
      const a = actions[index];
      actionIndex = index;
      let where = "";
      try {
        switch (a.ActionType) {
          case 1: {
            const o = resolve(a.ObjectPathId);
            let value: Record<string, unknown> | null = null;
            if (o !== null) {
              where = `${o.type}`;
              def(o).check?.(o, h);
              value = {};
              const id = def(o).id?.(o, h);
              if (id !== undefined) value._Id = id;
              const ref = kept.get(a.ObjectPathId);
              if (ref !== undefined) value._ReferenceId = ref;
            }
            results.push({ ActionId: a.Id, Value: value });
            break;
          }
          case 2: {
            const o = resolve(a.ObjectPathId);
            if (o !== null) {
              where = `${o.type}.load`;
              inject(o, "load", []);
            }
            results.push({ ActionId: a.Id, Value: o === null ? null : query(o, a.QueryInfo ?? {}, h) });
            break;
          }
          case 3: {
            if (a.Name === "_RemoveReference") {
              state.references.delete(String((a.ArgumentInfo?.Arguments ?? [])[0]));
              break;
            }
            if (a.Name === "_RemoveAllReferences") {
              state.references.clear();
              break;
            }
            // The library keeps every range of an `Excel.run` batch, null objects included: nothing to keep.
            if (a.Name === "_KeepReference" && resolve(a.ObjectPathId) === null) break;
            const o = target(a, a.Name);
            const d = def(o);
            where = `${o.type}.${lowerFirst(a.Name)}`;
            d.check?.(o, h);
            if (a.Name === "_KeepReference") {
              const refId = `ref${state.nextReference++}`;
              state.references.set(refId, o);
              kept.set(a.ObjectPathId, refId);
              break;
            }
            checkApi(wb, o.type, lowerFirst(a.Name));
            const call = d.calls?.[a.Name];
            if (!call) throw new EmulatedExcelError(ErrorCodes.generalException, `${where} is not emulated.`);
            if (!a.Name.startsWith("_")) inject(o, lowerFirst(a.Name), a.ArgumentInfo?.Arguments ?? []);
            const v = call(o, a.ArgumentInfo?.Arguments ?? [], h, argRefs(a.ArgumentInfo?.ReferencedObjectPathIds));
            wb.stats.operationsApplied++;
            if (v !== undefined) results.push({ ActionId: a.Id, Value: v });
            break;
          }
          case 4: {
            const o = target(a, a.Name);
            const d = def(o);
            where = `${o.type}.${lowerFirst(a.Name)}`;
            d.check?.(o, h);
            checkApi(wb, o.type, lowerFirst(a.Name));
            const prop = d.scalars[a.Name];
            if (!prop) throw new EmulatedExcelError(ErrorCodes.generalException, `${where} is not emulated.`);
            if (!prop.set) throw invalidArgument(`The property '${lowerFirst(a.Name)}' is read-only.`);
            inject(o, `set ${lowerFirst(a.Name)}`, a.ArgumentInfo?.Arguments ?? []);
            prop.set(o, (a.ArgumentInfo?.Arguments ?? [])[0], h);
            mutated = true;
            wb.stats.operationsApplied++;
            break;
          }
          case 5:
            traceIds.push(a.Id);
            break;
          default:
            throw new EmulatedExcelError(ErrorCodes.generalException, `Actions of type ${a.ActionType} are not emulated.`);
        }
      } catch (e) {
        const failure = e instanceof ActionFailure ? e : isHostError(e) ? new ActionFailure(e, e.debugInfo.errorLocation ?? where) : null;
        if (!failure) throw e;
        return {
          Results: results,
          TraceIds: traceIds,
          Error: {
            Code: failure.error.code,
            Message: failure.error.message,
            ActionIndex: index,
            Location: failure.location,
            HttpStatusCode: HTTP_STATUS[failure.error.code] ?? 400,
          },
        };
      }
    }
    return { Results: results, TraceIds: traceIds };
  } finally {
    wb.endBatch(mutated);
    // `suspendApiCalculationUntilNextSync` lasts until the end of this request.
    wb.calculationSuspended = false;
    if (mutated) wb.notifyChanged();
  }
}

/**
 * A Query action (`load`): selected scalars (every emulated one without a selection), navigation
 * properties by `a/b` paths and `Expand`, and for a collection its items as `_Items` (selection applies
 * to the items, except the collection's own scalars such as `count`).
 */
function query(o: HostObject, q: { Select?: string[]; Expand?: string[]; Top?: number; Skip?: number }, h: HostContext): Record<string, unknown> {
  const select = q.Select ?? [];
  const expand = q.Expand ?? [];
  return project(o, select, expand, h, q.Top, q.Skip);
}

/** Splits `a/b/c` paths into this level's names and the rest per navigation property. */
function splitPaths(paths: string[]): { here: string[]; below: Map<string, string[]> } {
  const here: string[] = [];
  const below = new Map<string, string[]>();
  for (const p of paths) {
    const parts = p.split("/").map((x) => x.trim()).filter((x) => x !== "");
    if (parts.length === 0) continue;
    if (parts.length === 1) here.push(parts[0]);
    else {
      const key = parts[0];
      below.set(key, [...(below.get(key) ?? []), parts.slice(1).join("/")]);
    }
  }
  return { here, below };
}

function project(o: HostObject, select: string[], expand: string[], h: HostContext, top?: number, skip?: number): Record<string, unknown> {
  const d = def(o);
  d.check?.(o, h);
  const sel = splitPaths(select);
  const exp = splitPaths(expand);
  const out: Record<string, unknown> = {};
  const isCollection = d.items !== undefined;
  const all = (select.length === 0 && expand.length === 0) || sel.here.includes("*");
  if (isCollection) {
    // The collection's own scalars (count) answer at its level; everything else is about its items.
    const own = sel.here.filter((n) => d.scalars[upperFirst(n)] !== undefined);
    for (const n of own) out[upperFirst(n)] = d.scalars[upperFirst(n)].get(o, h);
    const itemSelect = [...sel.here.filter((n) => !own.includes(n) && n !== "*"), ...[...sel.below].flatMap(([k, v]) => v.map((x) => `${k}/${x}`))];
    const onlyOwn = own.length > 0 && itemSelect.length === 0 && expand.length === 0 && !sel.here.includes("*");
    if (!onlyOwn) {
      let items = d.items!(o, h);
      if (typeof skip === "number" && skip > 0) items = items.slice(skip);
      if (typeof top === "number" && top >= 0) items = items.slice(0, top);
      out._Items = items.map((it) => {
        const v = project(it, itemSelect, expand, h);
        const id = def(it).id?.(it, h);
        if (id !== undefined) v._Id = id;
        return v;
      });
    }
    return out;
  }
  const names = all ? [...(d.defaults ?? []), ...sel.here.filter((n) => n !== "*").map(upperFirst)] : sel.here.map(upperFirst);
  for (const name of new Set(names)) {
    // Explicitly selected members must be in the profile; `load()` returns what the profile has.
    if (!all || sel.here.map(upperFirst).includes(name)) checkApi(h.wb, o.type, lowerFirst(name));
    else if (API_SETS[`${o.type}.${lowerFirst(name)}`] && !profileSupports(hostProfile(h.wb), ...API_SETS[`${o.type}.${lowerFirst(name)}`])) continue;
    const prop = d.scalars[name];
    if (prop) {
      out[name] = prop.get(o, h);
      continue;
    }
    const nav = d.nav?.[name];
    if (nav) {
      // `load("format")` on an object property: all of its scalars (Excel does the same).
      const child = nav(o, h);
      out[name] = child === null ? null : project(child, [], [], h);
      continue;
    }
    throw invalidArgument(`The property '${lowerFirst(name)}' does not exist on ${o.type}.`);
  }
  const children = new Map<string, { select: string[]; expand: string[] }>();
  for (const [k, v] of sel.below) children.set(upperFirst(k), { select: v, expand: [] });
  for (const n of exp.here) if (!children.has(upperFirst(n))) children.set(upperFirst(n), { select: [], expand: [] });
  for (const [k, v] of exp.below) {
    const c = children.get(upperFirst(k)) ?? { select: [], expand: [] };
    c.expand.push(...v);
    children.set(upperFirst(k), c);
  }
  for (const [name, c] of children) {
    checkApi(h.wb, o.type, lowerFirst(name));
    const nav = d.nav?.[name];
    if (!nav) throw invalidArgument(`'${lowerFirst(name)}' is not a navigation property of ${o.type}.`);
    const child = nav(o, h);
    out[name] = child === null ? null : project(child, c.select, c.expand, h);
  }
  return out;
}
