/**
 * Microsoft's Excel client library (`@microsoft/office-js`, the pinned version in package.json) in
 * this JavaScript realm, and the bridge that carries its requests to the emulated host.
 *
 * The library runs unmodified. It sends every `context.sync()` through
 * `OSF.DDA.RichApi.executeRichApiRequestAsync(message, callback)` — the function Excel's host
 * fulfils — with the request body in `message[4]`, the headers in `message[3]` and the request flags
 * in `message[6]`. The bridge installed here fulfils it: it finds the workbook the request is for,
 * hands the body to {@link answerRequest} and gives the library the answer as Excel's host does
 * (`{ status: "succeeded", value: { data: [200, headers, body] } }`, or `status: "failed"` with 5103 /
 * 5104 for a payload over the web's limit).
 *
 * Routing (several workbooks in one realm; two clients of one workbook): a request context created
 * with a `RequestUrlAndHeaderInfo` — `{ url: "http://document.localhost/", headers }`, the library's
 * own documented way to address a document (`new Excel.RequestContext(info)`, `Excel.run({ session:
 * info }, …)`) — keeps the local-document executor, so the request still takes Excel's bridge, and
 * the library copies its headers into `message[3]`. The header `X-PPM-Workbook` names the workbook.
 * A request without it goes to the realm's default workbook (the browser preview's).
 *
 * Where the library comes from: a `<script>` of the project's own copy in the browser (the preview),
 * or `globalThis.__ppmLoadOfficeJs(clientFile)`, which Node hosts define (the jest environment
 * `test/helpers/officeJsEnvironment.js`, `scripts/officejs.js` for scripts such as the bench).
 */
import { answerRequest, FLAG_DELAY_FOR_CELL_EDIT, type HostAnswer, type HostRequest } from "./host";
import type { WorkbookModel } from "./model";
import { currentProfile, currentProfileId, profile, profileSupports } from "./profiles";

/** The header that names the workbook a request is for. */
export const WORKBOOK_HEADER = "X-PPM-Workbook";
/** The library's address for "the document this add-in runs in" (CoreConstants.localDocument). */
export const LOCAL_DOCUMENT_URL = "http://document.localhost/";

type Callback = (result: unknown) => void;

/**
 * The library's namespaces as this file sees them (no Office typings here: the emulator's runtime
 * files compile without them; `index.ts` gives them their office-js types).
 */
export interface ExcelLibrary {
  run(...args: unknown[]): Promise<unknown>;
  RequestContext: new (info?: unknown) => unknown;
  [member: string]: unknown;
}
export interface OfficeExtensionLibrary {
  Error: abstract new (...args: never[]) => Error;
  [member: string]: unknown;
}

interface LibraryGlobals {
  Excel?: ExcelLibrary;
  Office?: Record<string, unknown>;
  OfficeExtension?: OfficeExtensionLibrary;
  OSF?: { DDA?: { RichApi?: { executeRichApiRequestAsync?: (message: unknown[], callback: Callback) => void } } };
  __ppmLoadOfficeJs?: (clientFile: string) => void;
  __ppmOfficeJsBridge?: Bridge;
}

const g = globalThis as unknown as LibraryGlobals;

/** What Microsoft's library gives this realm. */
export interface OfficeJs {
  readonly Excel: ExcelLibrary;
  readonly Office: Record<string, unknown>;
  readonly OfficeExtension: OfficeExtensionLibrary;
}

/** One request as it crossed the bridge (for transcripts and tests). */
export interface Exchange {
  readonly workbook: WorkbookModel;
  readonly request: HostRequest;
  readonly answer: HostAnswer;
}

/**
 * Where a request goes: a workbook of this realm, or (the preview's separate command runtime) a host
 * in another frame's realm, reached through a function so only strings cross between the realms.
 */
export type HostTarget = WorkbookModel | { answer(request: HostRequest): Promise<HostAnswer> };

interface Bridge {
  library?: OfficeJs;
  readonly workbooks: Map<string, WeakRef<WorkbookModel>>;
  defaultTarget: HostTarget | null;
  readonly observers: Set<(e: Exchange) => void>;
}

function bridge(): Bridge {
  if (!g.__ppmOfficeJsBridge) g.__ppmOfficeJsBridge = { workbooks: new Map(), defaultTarget: null, observers: new Set() };
  return g.__ppmOfficeJsBridge;
}

/**
 * Microsoft's library in this realm, loading it if the host offers a loader, with the bridge to the
 * emulated host installed. Throws a clear error where neither is there.
 */
export function officeJs(): OfficeJs {
  const b = bridge();
  if (b.library) return b.library;
  if (!g.Excel || !g.OfficeExtension || !g.OSF) {
    if (typeof g.__ppmLoadOfficeJs === "function") g.__ppmLoadOfficeJs(profile(currentProfileId()).clientFile);
  }
  // Tests install namespaces of `createExcelNamespace` as the global `Excel`: the library's own is their prototype.
  let excel: object | undefined = g.Excel;
  while (excel && Object.prototype.hasOwnProperty.call(excel, WRAPPED)) excel = Object.getPrototypeOf(excel) as object;
  if (!excel || typeof (excel as { RequestContext?: unknown }).RequestContext !== "function" || !g.OfficeExtension || !g.OSF || !g.Office) {
    throw new Error(
      `Microsoft's Excel client library (@microsoft/office-js, ${profile(currentProfileId()).clientFile}) is not loaded in this realm. ` +
        "The browser preview loads it with a <script>; jest loads it through test/helpers/officeJsEnvironment.js; Node scripts call scripts/officejs.js's installInThisRealm() first.",
    );
  }
  installBridge();
  installRequirements();
  b.library = { Excel: excel as ExcelLibrary, Office: g.Office, OfficeExtension: g.OfficeExtension };
  return b.library;
}

/** Marks the namespaces `createExcelNamespace` builds on top of the library's `Excel`. */
export const WRAPPED: unique symbol = Symbol.for("ppm.emulator.excelNamespace") as never;

function installBridge(): void {
  const osf = g.OSF!;
  osf.DDA = osf.DDA ?? {};
  osf.DDA.RichApi = osf.DDA.RichApi ?? {};
  if ((osf.DDA.RichApi.executeRichApiRequestAsync as { ppm?: boolean } | undefined)?.ppm) return;
  const execute = (message: unknown[], callback: Callback): void => {
    const headers = Array.isArray(message[3]) ? (message[3] as unknown[]) : [];
    let id: string | null = null;
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === WORKBOOK_HEADER.toLowerCase()) id = String(headers[i + 1]);
    const b = bridge();
    const target = id === null ? b.defaultTarget : (b.workbooks.get(id)?.deref() ?? null);
    const reply = (r: unknown): void => void Promise.resolve().then(() => callback(r));
    if (!target) {
      reply({ status: "failed", error: { code: 5001, message: id === null ? "No workbook is open in this emulated Excel." : `The workbook '${id}' is no longer open.` } });
      return;
    }
    const request: HostRequest = { body: String(message[4]), flags: typeof message[6] === "number" ? message[6] : 0 };
    const send = (answer: HostAnswer): void => {
      if (answer.kind === "refused") reply({ status: "failed", error: { code: answer.code, message: answer.message } });
      else reply({ status: "succeeded", value: { data: [200, [], answer.body] } });
    };
    if (!isWorkbook(target)) {
      void target.answer(request).then(send, (e: unknown) => reply({ status: "failed", error: { code: 5001, message: e instanceof Error ? e.message : String(e) } }));
      return;
    }
    void answerWhenReady(target, request).then((answer) => {
      for (const o of b.observers) o({ workbook: target, request, answer });
      send(answer);
    });
  };
  (execute as { ppm?: boolean }).ppm = true;
  osf.DDA.RichApi.executeRichApiRequestAsync = execute;
}

/**
 * The library checks each API's requirement set with `Office.context.requirements.isSetSupported`
 * before it queues the call (ApiNotFound otherwise). `Office.context` is the library's getter over
 * `OSF._OfficeAppFactory.getContext()`, which office.js's loader sets up with the host; where no
 * Common API shim has done so (Node tests), the realm's profile answers through a minimal context.
 */
function installRequirements(): void {
  const osf = g.OSF as unknown as { _OfficeAppFactory?: unknown };
  if (osf._OfficeAppFactory) return;
  const p = currentProfile();
  osf._OfficeAppFactory = commonApiFactory({
    host: "Excel",
    platform: p.officePlatform,
    diagnostics: { host: "Excel", platform: p.officePlatform, version: p.version },
    // Asked at each call: a test may change the realm's profile (`setCurrentProfile`) to probe a floor.
    requirements: { isSetSupported: (name: string, version?: string | number) => profileSupports(currentProfile(), name, version) },
    document: commonApiDocument(),
  });
}

type AsyncCallback = (result: { status: "succeeded" | "failed"; value?: unknown; error?: { code: number; name: string; message: string } }) => void;

/**
 * `Office.context.document` as far as Microsoft's Excel library reaches it (issue #26): its
 * `settings.addHandlerAsync(Office.EventType.SettingsChanged, handler, callback)` and
 * `removeHandlerAsync(…, { handler }, callback)`. The library registers
 * `Excel.SettingCollection.onSettingsChanged` there (`OfficeJsEventRegistration`, event id 1: a plain
 * `Excel.run` context has no session, so `context.eventRegistration` is the Common API's). The
 * document is this realm's one document — the default workbook (`setDefaultWorkbook`), as an add-in
 * runtime in Excel has exactly one; tests with several workbooks in one realm point it at the copy
 * whose runtime listens. Registration succeeds on every platform ("Your add-in's code can register a
 * handler for the settingsChanged event when the add-in is running with any Excel client"); whether
 * the event fires is the workbook's (`WorkbookModel.onSettingsChanged`; the co-authoring host raises
 * it). The handler gets `{ type: "settingsChanged" }`: the library replaces the arguments by its own
 * `SettingsChangedEventArgs` (`{ settings }`), and `Office.Settings` itself is not emulated.
 */
function commonApiDocument(): object {
  const registered = new Map<unknown, () => void>();
  const answer = (cb: AsyncCallback | undefined, failure?: string): void =>
    void Promise.resolve().then(() => cb?.(failure ? { status: "failed", error: { code: 5001, name: "Internal Error", message: failure } } : { status: "succeeded" }));
  return {
    settings: {
      addHandlerAsync(eventType: unknown, handler: unknown, options?: unknown, callback?: AsyncCallback): void {
        const cb = typeof options === "function" ? (options as AsyncCallback) : callback;
        if (eventType !== "settingsChanged" || typeof handler !== "function") return answer(cb, `The emulated Office.Settings raises only settingsChanged (asked: ${String(eventType)}).`);
        const target = bridge().defaultTarget;
        if (!target || !isWorkbook(target)) return answer(cb, "No workbook is open in this emulated Excel.");
        if (!registered.has(handler)) registered.set(handler, target.onSettingsChanged(() => (handler as (args: unknown) => void)({ type: "settingsChanged" })));
        answer(cb);
      },
      removeHandlerAsync(eventType: unknown, options?: unknown, callback?: AsyncCallback): void {
        const cb = typeof options === "function" ? (options as AsyncCallback) : callback;
        const handler = typeof options === "object" && options !== null ? (options as { handler?: unknown }).handler : undefined;
        for (const [h, off] of [...registered]) {
          if (handler !== undefined && h !== handler) continue;
          off();
          registered.delete(h);
        }
        answer(cb);
      },
    },
  };
}

/**
 * What office.js's loader provides the library once Office is initialised: `getContext()` behind
 * `Office.context`, and `getHostInfo()` (host type and platform), which some library code reads.
 */
export function commonApiFactory(context: object): { getContext(): object; getHostInfo(): { hostType: string; hostPlatform: string; hostSpecificFileVersion: string } } {
  const platform = (context as { platform?: string }).platform;
  const hostPlatform = platform === "OfficeOnline" ? "web" : platform === "Mac" ? "mac" : "win32";
  return {
    getContext: () => context,
    getHostInfo: () => ({ hostType: "excel", hostPlatform, hostSpecificFileVersion: "16.00" }),
  };
}

function isWorkbook(t: HostTarget): t is WorkbookModel {
  return typeof (t as WorkbookModel).instanceId === "string";
}

/**
 * Answers a request once the workbook can take it: while the user edits a cell, a request that asked
 * to wait (`Excel.RunOptions.delayForCellEdit`) waits until the user leaves the cell; one that did not
 * is refused by the host at once (docs: "Delay execution while cell is being edited").
 */
export function answerWhenReady(wb: WorkbookModel, request: HostRequest): Promise<HostAnswer> {
  if (wb.cellEditMode && ((request.flags ?? 0) & FLAG_DELAY_FOR_CELL_EDIT) !== 0) return wb.cellEditExited().then(() => answerRequest(wb, request));
  return Promise.resolve(answerRequest(wb, request));
}

/** Registers a workbook with the bridge; the session info that addresses it. */
export function sessionFor(wb: WorkbookModel): { url: string; headers: Record<string, string> } {
  bridge().workbooks.set(wb.instanceId, new WeakRef(wb));
  return { url: LOCAL_DOCUMENT_URL, headers: { [WORKBOOK_HEADER]: wb.instanceId } };
}

/** Where requests without a workbook header go: the document of this runtime (the preview's one workbook). */
export function setDefaultWorkbook(target: HostTarget | null): void {
  bridge().defaultTarget = target;
}

/** Calls `cb` with every request and answer that crosses the bridge; returns the unsubscribe function. */
export function observeRequests(cb: (e: Exchange) => void): () => void {
  const b = bridge();
  b.observers.add(cb);
  return () => void b.observers.delete(cb);
}

/** Whether the realm's profile (what `Office.context.requirements` answers) supports a set. */
export function realmSupports(name: string, version?: string): boolean {
  const office = g.Office as { context?: { requirements?: { isSetSupported(n: string, v?: string): boolean } } } | undefined;
  const req = office?.context?.requirements;
  return req ? req.isSetSupported(name, version) : profileSupports(currentProfile(), name, version);
}
