/**
 * The preview's Office host, installed right after Microsoft's Excel client library (the page's
 * `office-js/<client file>` script) and before the task pane (or ribbon-command) bundle runs, in place
 * of office.js from Microsoft's CDN.
 *
 * `Excel` is Microsoft's own (`@microsoft/office-js`, unmodified): the task pane runs exactly the code
 * it runs in Excel, and the library's requests reach the emulated host of this page's workbook through
 * the library's own bridge (`OSF.DDA.RichApi.executeRichApiRequestAsync`, see src/emulator/library.ts).
 *
 * `Office` is the library's namespace too; what office.js's loader and the real host would add to it
 * is a shim, documented member by member in src/dev/README.md ("The Common API shim"):
 * `Office.onReady`, `Office.context` (through the library's own getter: host, platform, diagnostics,
 * languages, partitionKey, officeTheme, requirements from the platform profile, `document` with
 * `settings` and the selection event, `ui` dialogs), `Office.actions.associate`, `Office.addin`,
 * `Office.ribbon`. Strict where the documentation says how: the settings' size limit (4001 "The
 * settings could not be saved."), one dialog at a time per window (12007).
 *
 * Where the workbook lives: in the task pane frame's own JavaScript realm, so every object, promise
 * and error the task pane sees is of its own realm, as with office.js. The preview page around it only
 * reads the model (to draw the grid) and types into cells through the same library. The ribbon-command
 * frame (separate runtimes) has its own library; its bridge forwards request bodies to the task pane
 * frame's workbook.
 */
import { createPreviewWorkbook, type PreviewWorkbook } from "./preview-workbook";
import { commonApiFactory, officeJs, setDefaultWorkbook } from "../emulator/library";
import { currentProfileId, isProfileId, profile, profileSupports, setCurrentProfile } from "../emulator/profiles";

/** What the preview page (the parent window) offers its frames. */
export interface PreviewHostApi {
  /** Saved workbook (serialised) to restore after the task pane frame reloads, if any. */
  savedWorkbook(): string | null;
  /** Called by the task pane frame once its workbook exists. */
  attach(workbook: PreviewWorkbook, frame: Window): void;
  /** Called by the task pane frame when it unloads, with the serialised workbook. */
  saveWorkbook(serialised: string): void;
  /** The workbook currently attached (the command frame uses it). */
  workbook(): PreviewWorkbook | null;
  /** Shows a notification in the preview, standing in for Excel's own. */
  notify(text: string): void;
  /** Value for `Office.context.partitionKey` (the preview sets one so the prefixing code path runs). */
  partitionKey: string | undefined;
  /**
   * Opens an Office dialog (`displayDialogAsync`) as an overlay frame. Returns null when the page
   * has no preview counterpart (it would need office.js from the CDN), so the caller fails the call.
   */
  openDialog(url: string, options: { height?: number; width?: number }): PreviewDialog | null;
  /** `messageParent` from inside a dialog frame. */
  dialogMessage(frame: Window, message: string): void;
  /**
   * Shared runtime (issue 17). Whether the add-in runs in one shared runtime (SharedRuntime 1.1)
   * or, with `?sharedRuntime=0`, in separate runtimes like Excel without it.
   */
  sharedRuntime: boolean;
  /** Resolves when the add-in has been started in this session (at once, on a document that loads it, or when the user opens it). */
  whenStarted(): Promise<void>;
  /** The document's startup behaviour (`Office.addin.setStartupBehavior`), kept with the saved workbook. */
  startupBehavior(): string;
  setStartupBehavior(behavior: string): void;
  /** `Office.ribbon.requestUpdate`: the preview's ribbon buttons take the enabled states. */
  ribbonUpdate(data: unknown): void;
  /**
   * Office's theme as `Office.context.officeTheme` reports it now (the toolbar switches it without
   * reloading the add-in, as changing Office's theme does not restart it; issue #37).
   */
  officeTheme?: "light" | "dark";
  /**
   * `Office.context.document.url`: the preview's workbook is a saved file with an address of its
   * own, kept across "Reopen workbook" (a new one for "New workbook"), so what this device answered
   * for a document (PPM formulas, refresh on open) is remembered as for a saved file in Excel.
   */
  documentUrl?(): string | null;
}

/** The `Office.Dialog` the preview hands out. */
export interface PreviewDialog {
  close(): void;
  addEventHandler(eventType: string, handler: (arg: unknown) => void): void;
  /** DialogApi 1.2: raises `DialogParentMessageReceived` in the dialog's page. */
  messageChild(message: string): void;
}

/** What a dialog frame's shim offers the page that opened it (`messageChild` lands here). */
export interface PreviewDialogChild {
  deliver(message: string, origin: string): void;
}

declare global {
  interface Window {
    __ppmPreviewHost?: PreviewHostApi;
    __ppmPreviewWorkbook?: PreviewWorkbook;
    __ppmPreviewDialogChild?: PreviewDialogChild;
  }
}

type ReadyInfo = { host: string; platform: string };
type AsyncResult = { status: string; value?: unknown; error?: { code: number; name?: string; message: string } };
type AsyncCallback = (result: AsyncResult) => void;

function hostApi(): PreviewHostApi | undefined {
  try {
    return window.parent !== window ? window.parent.__ppmPreviewHost : undefined;
  } catch {
    return undefined;
  }
}

/** Office's "colorful" (default) and "black" theme colours, as `Office.context.officeTheme` reports them. */
const LIGHT_THEME = {
  bodyBackgroundColor: "#ffffff",
  bodyForegroundColor: "#242424",
  controlBackgroundColor: "#ffffff",
  controlForegroundColor: "#242424",
  themeId: "colorful",
};
const DARK_THEME = {
  bodyBackgroundColor: "#292929",
  bodyForegroundColor: "#ffffff",
  controlBackgroundColor: "#1f1f1f",
  controlForegroundColor: "#ffffff",
  themeId: "black",
};

/** Office's messages for the failures the shim reports (the library's own en-US strings). */
const DIALOG_ALREADY_OPENED = { code: 12007, name: "Display Dialog Error", message: "The operation failed because this add-in already has an active dialog." };
const SETTINGS_CANNOT_SAVE = { code: 4001, name: "Save Settings Error", message: "The settings could not be saved." };

/** Answers asynchronously, as Office's asynchronous methods do. */
const later = (f: () => void): void => void setTimeout(f, 0);

/**
 * `Office.context.document.settings` (Office.Settings): an in-memory copy of the document's settings
 * loaded when the page starts; `set`/`remove` change the copy, `saveAsync` writes it into the document.
 * It is the same per-add-in, per-document store as Excel's `workbook.settings` (both are documented as
 * the add-in's settings in the file), so its size limit is the same too (B12).
 */
function documentSettings(workbook: PreviewWorkbook | null) {
  const copy = new Map<string, unknown>();
  const removed = new Set<string>();
  const load = () => {
    copy.clear();
    removed.clear();
    for (const [k, v] of workbook?.readSettings() ?? []) {
      try {
        copy.set(k, JSON.parse(v) as unknown);
      } catch {
        // Not JSON: not a value this API could have written; left out of the copy.
      }
    }
  };
  load();
  return {
    get: (name: string): unknown => (copy.has(name) ? copy.get(name) : null),
    set(name: string, value: unknown): void {
      copy.set(name, value);
      removed.delete(name);
    },
    remove(name: string): void {
      copy.delete(name);
      removed.add(name);
    },
    saveAsync(options?: unknown, callback?: AsyncCallback): void {
      const cb = typeof options === "function" ? (options as AsyncCallback) : callback;
      later(() => {
        try {
          if (!workbook) throw new Error("no document");
          workbook.saveSettings([...copy].map(([k, v]) => [k, JSON.stringify(v)]), [...removed]);
          removed.clear();
          cb?.({ status: "succeeded" });
        } catch {
          cb?.({ status: "failed", error: SETTINGS_CANNOT_SAVE });
        }
      });
    },
    refreshAsync(callback?: AsyncCallback): void {
      later(() => {
        load();
        callback?.({ status: "succeeded", value: undefined });
      });
    },
    /**
     * `addHandlerAsync(Office.EventType.SettingsChanged, …)`: where Microsoft's library registers
     * `Excel.SettingCollection.onSettingsChanged` (issue #26). Registration succeeds ("Your add-in's
     * code can register a handler for the settingsChanged event when the add-in is running with any
     * Excel client", Office.SettingsChangedEventArgs); the event fires only while several users edit
     * the workbook on the web, which the preview (one user) never has, so it is never raised here.
     */
    addHandlerAsync(eventType: string, _handler: unknown, options?: unknown, callback?: AsyncCallback): void {
      const cb = typeof options === "function" ? (options as AsyncCallback) : callback;
      later(() => cb?.(eventType === "settingsChanged" ? { status: "succeeded" } : { status: "failed", error: { code: 5001, message: `The preview does not raise ${eventType}.` } }));
    },
    removeHandlerAsync(_eventType: string, options?: unknown, callback?: AsyncCallback): void {
      const cb = typeof options === "function" ? (options as AsyncCallback) : callback;
      later(() => cb?.({ status: "succeeded" }));
    },
  };
}

function install(): void {
  const host = hostApi();
  const role = document.documentElement.dataset.previewRole ?? "taskpane";
  const params = new URLSearchParams(location.search);
  const asked = params.get("profile");
  setCurrentProfile(isProfileId(asked) ? asked : "web");
  const p = profile(currentProfileId());
  const shared = host?.sharedRuntime ?? true;

  // The document this runtime acts on. A dialog page has no workbook access in Office.
  let workbook: PreviewWorkbook | null = null;
  if (role === "commands") {
    // The command runtime acts on the workbook the user sees; without one (page opened on its own)
    // it gets a private empty workbook rather than replacing the grid's.
    workbook = host?.workbook() ?? createPreviewWorkbook(null);
  } else if (role === "taskpane") {
    const own = createPreviewWorkbook(host?.savedWorkbook() ?? null);
    workbook = own;
    window.__ppmPreviewWorkbook = own;
    host?.attach(own, window);
    // Keep the workbook when the task pane frame is reloaded, as Excel keeps it when the pane closes.
    window.addEventListener("pagehide", () => host?.saveWorkbook(own.serialise()));
  }

  const associated = new Map<string, (event: unknown) => unknown>();
  const readyInfo: ReadyInfo = { host: "Excel", platform: p.officePlatform };
  const domReady = new Promise<void>((resolve) => {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
    else resolve();
  });
  // The task pane page is the shared runtime: its code starts only once the add-in is started
  // (the user opened it, or the document loads it). Its frame exists earlier because the preview
  // keeps the emulated workbook in that frame's realm.
  const ready = role === "taskpane" && host ? domReady.then(() => host.whenStarted()) : domReady;

  /** The one dialog this window has open (Office allows one at a time: 12007). */
  let openDialog: PreviewDialog | null = null;

  const context = {
    host: "Excel",
    platform: p.officePlatform,
    diagnostics: { host: "Excel", platform: p.officePlatform, version: p.version },
    displayLanguage: "en-US",
    contentLanguage: "en-US",
    partitionKey: params.get("partitionKey") ?? host?.partitionKey,
    // Office's current theme: the preview toolbar's (or `?theme=dark` on a page of its own), read
    // each time, as a theme switched while the add-in runs is.
    get officeTheme() {
      return (host?.officeTheme ?? (params.get("theme") === "dark" ? "dark" : "light")) === "dark" ? DARK_THEME : LIGHT_THEME;
    },
    requirements: {
      /**
       * The platform profile's requirement sets (`?profile=`); `?sharedRuntime=0` models Excel
       * without SharedRuntime and RibbonApi ("Shared runtime requirement sets": not on iPad).
       */
      isSetSupported(name: string, version?: string | number): boolean {
        if (!shared && /^(SharedRuntime|RibbonApi)$/i.test(String(name))) return false;
        return profileSupports(p, name, version);
      },
    },
    document: {
      settings: documentSettings(workbook),
      get url(): string | undefined {
        return host?.documentUrl?.() ?? undefined;
      },
      /**
       * `Office.context.document.addHandlerAsync(Office.EventType.DocumentSelectionChanged, …)`:
       * fired after a sync that moved the selection (the user clicking in the grid, or code
       * selecting a range), as Excel raises it for any selection change.
       */
      addHandlerAsync(eventType: string, handler: (event: unknown) => void, callback?: AsyncCallback): void {
        if (eventType !== "documentSelectionChanged" || !workbook) {
          later(() => callback?.({ status: "failed", error: { code: 5001, message: `The preview does not raise ${eventType}.` } }));
          return;
        }
        const wb = workbook;
        const key = () => JSON.stringify([wb.activeSheet(), wb.selection()]);
        let last = key();
        wb.onChange(() => {
          const now = key();
          if (now === last) return;
          last = now;
          later(() => handler({ type: "documentSelectionChanged" }));
        });
        later(() => callback?.({ status: "succeeded" }));
      },
    },
    ui: {
      displayDialogAsync(url: string, options: { height?: number; width?: number } | undefined, callback?: AsyncCallback): void {
        // Office answers asynchronously; so does the preview.
        later(() => {
          // Docs (Office.UI.displayDialogAsync, error 12007): "A dialog box is already opened from this
          // host window. A host window, such as a task pane, can only have one dialog box open at a time."
          if (openDialog) {
            callback?.({ status: "failed", error: DIALOG_ALREADY_OPENED });
            return;
          }
          const dialog = host?.openDialog(url, options ?? {}) ?? null;
          if (!dialog) {
            // A page the preview cannot show: fail the way Excel on the web does when the browser
            // blocks the dialog window (12011), so the add-in's own fallback path runs.
            callback?.({ status: "failed", error: { code: 12011, message: "This dialog is not available in the browser preview." } });
            return;
          }
          const mine: PreviewDialog = {
            close: () => {
              if (openDialog === mine) openDialog = null;
              dialog.close();
            },
            addEventHandler: (type, handler) => dialog.addEventHandler(type, handler),
            messageChild: (message) => dialog.messageChild(message),
          };
          // The user closing it (12006) frees the window for another dialog.
          dialog.addEventHandler("dialogEventReceived", () => {
            if (openDialog === mine) openDialog = null;
          });
          openDialog = mine;
          callback?.({ status: "succeeded", value: mine });
        });
      },
      messageParent(message: string): void {
        // In a dialog this goes to the page that opened it. Elsewhere (a task pane, a function
        // command's runtime) it has no receiver in Office and goes nowhere: so here too, so that
        // code relying on it is seen to lose its message (issue #21).
        if (role === "dialog") host?.dialogMessage(window, message);
      },
      /**
       * `Office.context.ui.addHandlerAsync(Office.EventType.DialogParentMessageReceived, …)`
       * (DialogApi 1.2): in a dialog, the handler receives what the opener sends with
       * `messageChild`, as `{ message, origin }`. Anywhere else it fails, as outside a dialog.
       */
      addHandlerAsync(eventType: string, handler: (arg: { message: string; origin: string }) => void, callback?: AsyncCallback): void {
        if (role !== "dialog" || eventType !== "dialogParentMessageReceived" || !host) {
          later(() => callback?.({ status: "failed", error: { code: 12002, message: "Not in a dialog." } }));
          return;
        }
        const previous = window.__ppmPreviewDialogChild;
        window.__ppmPreviewDialogChild = {
          deliver: (message, origin) => {
            previous?.deliver(message, origin);
            later(() => handler({ message, origin }));
          },
        };
        later(() => callback?.({ status: "succeeded" }));
      },
    },
  };

  // office.js's loader sets this up with the real host; the library's `Office.context` reads it.
  const osf = (window as unknown as { OSF?: { _OfficeAppFactory?: unknown } }).OSF;
  if (osf) osf._OfficeAppFactory = commonApiFactory(context);
  const { Office: office } = officeJs();
  if (workbook) setDefaultWorkbook(role === "taskpane" ? workbook.model : { answer: (r) => workbook.answer(r) });

  Object.assign(office, {
    HostType: office.HostType ?? { Excel: "Excel", Word: "Word", PowerPoint: "PowerPoint", Outlook: "Outlook", OneNote: "OneNote", Project: "Project", Access: "Access" },
    PlatformType: office.PlatformType ?? { PC: "PC", OfficeOnline: "OfficeOnline", Mac: "Mac", iOS: "iOS", Android: "Android", Universal: "Universal" },
    onReady(callback?: (info: ReadyInfo) => void): Promise<ReadyInfo> {
      return ready.then(() => {
        callback?.(readyInfo);
        return readyInfo;
      });
    },
    actions: {
      associate(name: string, fn: (event: unknown) => unknown): void {
        associated.set(name, fn);
      },
    },
    addin: {
      showAsTaskpane: () => Promise.resolve(),
      hide: () => Promise.resolve(),
      // "Run code in your Office Add-in when the document opens": document-scoped, asynchronous.
      setStartupBehavior: (behavior: string) =>
        new Promise<void>((resolve) => {
          later(() => {
            host?.setStartupBehavior(behavior);
            resolve();
          });
        }),
      getStartupBehavior: () => new Promise<string>((resolve) => later(() => resolve(host?.startupBehavior() ?? "None"))),
    },
    ribbon: {
      // Queues the update and resolves (the ribbon repaints later), as the article describes.
      requestUpdate: (data: unknown) =>
        new Promise<void>((resolve) => {
          later(() => {
            host?.ribbonUpdate(data);
            resolve();
          });
        }),
    },
  });

  if (role === "taskpane" && workbook) installCustomFunctions(workbook, p.id);

  /** The preview page invokes ribbon function commands through this. */
  (window as unknown as Record<string, unknown>).__ppmPreviewCommands = {
    names: () => [...associated.keys()],
    async invoke(name: string): Promise<void> {
      // A command on a runtime that is not started yet starts it first (Office does the same).
      await ready;
      await new Promise((r) => setTimeout(r, 0));
      const fn = associated.get(name);
      if (!fn) throw new Error(`No function command "${name}" is associated.`);
      return new Promise<void>((resolve) => {
        const event = { source: { id: name }, completed: () => resolve() };
        fn(event);
      });
    },
  };
}

/**
 * Custom functions (issue #28) in the shared runtime, the task pane's frame: `CustomFunctions.associate`
 * (what office.js adds; `CustomFunctions.Error` and `ErrorCode` are the library's own, set when it
 * loads) hands each function to the workbook's host, and the host learns the functions from the
 * add-in's generated `functions.json` under the namespace its manifest declares
 * (`<Namespace resid="Functions.Namespace">`), both read from the build as Excel reads them.
 * Platforms without custom functions (the profiles' requirement sets: not CustomFunctionsRuntime)
 * get no registration, so PPM.* formulas stay `#NAME?` there, as in Excel.
 */
function installCustomFunctions(workbook: PreviewWorkbook, profileId: string): void {
  const w = window as unknown as { CustomFunctions?: Record<string, unknown> };
  const cf = (w.CustomFunctions ??= {});
  const host = workbook.model.customFunctions;
  cf.associate = (idOrMappings: string | Record<string, (...a: unknown[]) => unknown>, fn?: (...a: unknown[]) => unknown): void => {
    if (typeof idOrMappings === "string") {
      if (typeof fn === "function") host.associate(idOrMappings, fn);
      return;
    }
    for (const [id, f] of Object.entries(idOrMappings ?? {})) if (typeof f === "function") host.associate(id, f);
  };
  // Before the library sets them (or where it does not), the documented shapes: an ErrorCode and an Error with code and message.
  cf.ErrorCode ??= { invalidValue: "#VALUE!", notAvailable: "#N/A", divisionByZero: "#DIV/0!", invalidNumber: "#NUM!", nullReference: "#NULL!", invalidName: "#NAME?", invalidReference: "#REF!" };
  cf.Error ??= class CustomFunctionError extends Error {
    constructor(readonly code: string = "#VALUE!", message?: string) {
      super(message ?? "");
    }
  };
  /** What the registration came to (the e2e suite and a curious developer read it). */
  const status: { namespace: string | null; error: string | null } = { namespace: null, error: null };
  (window as unknown as { __ppmPreviewCustomFunctions?: typeof status }).__ppmPreviewCustomFunctions = status;
  if (!profileSupports(profile(isProfileId(profileId) ? profileId : "web"), "CustomFunctionsRuntime", "1.1")) {
    status.error = "this platform has no custom functions";
    return;
  }
  void (async () => {
    try {
      const [manifest, metadata] = await Promise.all([fetch("manifest.xml").then((r) => r.text()), fetch("functions.json").then((r) => r.json() as Promise<{ functions: [] }>)]);
      // Read with two patterns, not DOMParser: parseFromString is a Trusted Types sink, and the
      // pages require Trusted Types. The manifest is the repository's own, validated against the schemas.
      const resid = /<ExtensionPoint\s+xsi:type="CustomFunctions">[\s\S]*?<Namespace\s+resid="([^"]+)"/.exec(manifest)?.[1];
      const ns = resid ? new RegExp(`<bt:String\\s+id="${resid.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\s+DefaultValue="([^"]+)"`).exec(manifest)?.[1] : undefined;
      if (!ns) throw new Error("the manifest declares no custom functions namespace");
      host.register(ns, metadata);
      status.namespace = ns;
    } catch (e) {
      status.error = e instanceof Error ? e.message : String(e);
      console.warn("Preview: custom functions not registered:", status.error);
    }
  })();
}

install();
