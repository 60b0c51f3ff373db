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
}

/** The `Office.Dialog` the preview hands out. */
export interface PreviewDialog {
  close(): void;
  addEventHandler(eventType: string, handler: (arg: unknown) => void): void;
}

declare global {
  interface Window {
    __ppmPreviewHost?: PreviewHostApi;
    __ppmPreviewWorkbook?: PreviewWorkbook;
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
  const ready = new Promise<void>((resolve) => {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
    else resolve();
  });

  const office = {
    HostType: { Excel: "Excel", Word: "Word", PowerPoint: "PowerPoint", Outlook: "Outlook", OneNote: "OneNote", Project: "Project", Access: "Access" },
    PlatformType: { PC: "PC", OfficeOnline: "OfficeOnline", Mac: "Mac", iOS: "iOS", Android: "Android", Universal: "Universal" },
    AsyncResultStatus: { Succeeded: "succeeded", Failed: "failed" },
    EventType: { DialogMessageReceived: "dialogMessageReceived", DialogEventReceived: "dialogEventReceived" },
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
          // The ribbon and shared runtime sets the manifest declares; the preview emulates both.
          return ["AddinCommands", "RibbonApi", "SharedRuntime", "DialogApi"].includes(name) && versionAtMost(version, "1.1");
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
          // In a dialog this goes to the page that opened it; elsewhere it has no receiver in Office,
          // and the preview shows it as a notification so nothing is lost silently.
          if (role === "dialog") host?.dialogMessage(window, message);
          else host?.notify(message);
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
    invoke(name: string): Promise<void> {
      const fn = associated.get(name);
      if (!fn) return Promise.reject(new Error(`No function command "${name}" is associated.`));
      return new Promise<void>((resolve) => {
        const event = { source: { id: name }, completed: () => resolve() };
        fn(event);
      });
    },
  };
}

install();
