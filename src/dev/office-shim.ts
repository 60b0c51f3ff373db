/**
 * The `Office` and `Excel` globals for the browser preview, installed BEFORE the task pane (or the
 * ribbon-command runtime) bundle runs, in place of office.js from Microsoft's CDN.
 *
 * `Excel` is the workbook emulator's namespace, so the task pane runs exactly the code it runs in
 * Excel (`Excel.run`, proxies, `load`/`sync`). `Office` is a small shim of the members an add-in's
 * bootstrap touches: `onReady`, `context` (host, partitionKey, theme, requirements, ui),
 * `actions.associate`, `addin`.
 *
 * Where the workbook lives: in the task pane frame's own JavaScript realm (see `preview-host.ts`),
 * so every proxy object, promise and error the task pane sees is of its own realm, as with office.js.
 * The preview page around it only reads the model (to draw the grid) and types into cells through
 * this same `Excel` namespace. The ribbon-command frame borrows the task pane frame's workbook.
 */
import { createPreviewWorkbook, type PreviewWorkbook } from "./preview-workbook";

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
type AsyncCallback = (result: { status: string; value?: unknown; error?: { code: number; message: string } }) => void;

function hostApi(): PreviewHostApi | undefined {
  try {
    return window.parent !== window ? window.parent.__ppmPreviewHost : undefined;
  } catch {
    return undefined;
  }
}

/**
 * ExcelApi version the preview claims: the manifest's minimum (Excel never loads the add-in below it,
 * so code may assume it), and nothing newer, so checks for later sets take their fallback paths.
 */
const EXCEL_API_VERSION = "1.13";

function versionAtMost(asked: string | undefined, supported: string): boolean {
  if (!asked) return true;
  const a = asked.split(".").map(Number);
  const s = supported.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, s.length); i++) {
    const x = a[i] ?? 0;
    const y = s[i] ?? 0;
    if (x !== y) return x < y;
  }
  return true;
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

function install(): void {
  const host = hostApi();
  const role = document.documentElement.dataset.previewRole ?? "taskpane";
  const params = new URLSearchParams(location.search);

  // A dialog page has no workbook access in Office (no Excel namespace there either).
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
  const readyInfo: ReadyInfo = { host: "Excel", platform: "OfficeOnline" };
  const domReady = new Promise<void>((resolve) => {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
    else resolve();
  });
  // The task pane page is the shared runtime: its code starts only once the add-in is started
  // (the user opened it, or the document loads it). Its frame exists earlier because the preview
  // keeps the emulated workbook in that frame's realm.
  const ready = role === "taskpane" && host ? domReady.then(() => host.whenStarted()) : domReady;

  const office = {
    HostType: { Excel: "Excel", Word: "Word", PowerPoint: "PowerPoint", Outlook: "Outlook", OneNote: "OneNote", Project: "Project", Access: "Access" },
    PlatformType: { PC: "PC", OfficeOnline: "OfficeOnline", Mac: "Mac", iOS: "iOS", Android: "Android", Universal: "Universal" },
    AsyncResultStatus: { Succeeded: "succeeded", Failed: "failed" },
    StartupBehavior: { load: "Load", none: "None" },
    EventType: {
      DialogMessageReceived: "dialogMessageReceived",
      DialogEventReceived: "dialogEventReceived",
      DialogParentMessageReceived: "dialogParentMessageReceived",
      DocumentSelectionChanged: "documentSelectionChanged",
    },
    onReady(callback?: (info: ReadyInfo) => void): Promise<ReadyInfo> {
      return ready.then(() => {
        callback?.(readyInfo);
        return readyInfo;
      });
    },
    context: {
      host: "Excel",
      platform: "OfficeOnline",
      diagnostics: { host: "Excel", platform: "OfficeOnline", version: "preview" },
      displayLanguage: "en-US",
      contentLanguage: "en-US",
      partitionKey: params.get("partitionKey") ?? host?.partitionKey,
      // `?theme=dark` gives the colours of Office's dark theme, to try the pane's theme handling.
      officeTheme: params.get("theme") === "dark" ? DARK_THEME : LIGHT_THEME,
      requirements: {
        isSetSupported(name: string, version?: string): boolean {
          if (name === "ExcelApi") return versionAtMost(version, EXCEL_API_VERSION);
          // The ribbon and shared runtime sets; `?sharedRuntime=0` models Excel without them
          // ("Shared runtime requirement sets": not on iPad nor older volume-licensed Excel).
          const shared = host?.sharedRuntime ?? true;
          if ((name === "SharedRuntime" || name === "RibbonApi") && !shared) return false;
          // DialogApi 1.2 (messageChild): every platform with ExcelApi 1.13 has it ("Dialog API requirement sets").
          if (name === "DialogApi") return versionAtMost(version, "1.2");
          return ["AddinCommands", "RibbonApi", "SharedRuntime"].includes(name) && versionAtMost(version, "1.1");
        },
      },
      document: {
        /**
         * `Office.context.document.addHandlerAsync(Office.EventType.DocumentSelectionChanged, …)`:
         * fired after a sync that moved the selection (the user clicking in the grid, or code
         * selecting a range), as Excel raises it for any selection change.
         */
        addHandlerAsync(eventType: string, handler: (event: unknown) => void, callback?: AsyncCallback): void {
          if (eventType !== "documentSelectionChanged" || !workbook) {
            setTimeout(() => callback?.({ status: "failed", error: { code: 5001, message: `The preview does not raise ${eventType}.` } }), 0);
            return;
          }
          const wb = workbook;
          const key = () => JSON.stringify([wb.activeSheet(), wb.selection()]);
          let last = key();
          wb.onChange(() => {
            const now = key();
            if (now === last) return;
            last = now;
            setTimeout(() => handler({ type: "documentSelectionChanged" }), 0);
          });
          setTimeout(() => callback?.({ status: "succeeded" }), 0);
        },
      },
      ui: {
        displayDialogAsync(url: string, options: { height?: number; width?: number } | undefined, callback?: AsyncCallback): void {
          // Office answers asynchronously; so does the preview.
          setTimeout(() => {
            const dialog = host?.openDialog(url, options ?? {}) ?? null;
            if (dialog) callback?.({ status: "succeeded", value: dialog });
            // A page the preview cannot show: fail the way Excel on the web does when the browser
            // blocks the dialog window (12011), so the add-in's own fallback path runs.
            else callback?.({ status: "failed", error: { code: 12011, message: "This dialog is not available in the browser preview." } });
          }, 0);
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
            setTimeout(() => callback?.({ status: "failed", error: { code: 12002, message: "Not in a dialog." } }), 0);
            return;
          }
          const previous = window.__ppmPreviewDialogChild;
          window.__ppmPreviewDialogChild = {
            deliver: (message, origin) => {
              previous?.deliver(message, origin);
              setTimeout(() => handler({ message, origin }), 0);
            },
          };
          setTimeout(() => callback?.({ status: "succeeded" }), 0);
        },
      },
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
          setTimeout(() => {
            host?.setStartupBehavior(behavior);
            resolve();
          }, 0);
        }),
      getStartupBehavior: () => new Promise<string>((resolve) => setTimeout(() => resolve(host?.startupBehavior() ?? "None"), 0)),
    },
    ribbon: {
      // Queues the update and resolves (the ribbon repaints later), as the article describes.
      requestUpdate: (data: unknown) =>
        new Promise<void>((resolve) => {
          setTimeout(() => {
            host?.ribbonUpdate(data);
            resolve();
          }, 0);
        }),
    },
  };

  const w = window as unknown as Record<string, unknown>;
  w.Office = office;
  if (workbook) {
    w.Excel = workbook.Excel;
    if (workbook.OfficeExtension) w.OfficeExtension = workbook.OfficeExtension;
  }
  /** The preview page invokes ribbon function commands through this. */
  w.__ppmPreviewCommands = {
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

install();
