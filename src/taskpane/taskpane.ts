/**
 * Task pane entry: Office wiring only. Everything else is in `app.ts` and the section modules; the
 * service client, query engine and workbook writer arrive in a separate chunk after first paint.
 */
import { mountApp } from "./app";
import { addinRuntime } from "../addin/runtime";
import { isDark } from "./theme";
import { mountOpenRefreshNotes } from "./openRefreshView";
import { mountFormulaConsent } from "./formulaConsentView";
import { loadFluent, mirrorDisabled } from "./controls";
import { describeMissing, missingCapabilities } from "../addin/platform";

declare const __PPM_DEFAULT_SERVICE_URL__: string;
declare const __PPM_VERSION__: string;

/** The theme last applied ("light" or "dark" and Office's colours), so a repeated check changes nothing. */
let appliedTheme = "";

/**
 * Applies Office's theme colours (when the host gives them) as CSS variables, and Fluent's tokens to
 * match. Called at start and whenever the pane's window gets the focus or becomes visible: Excel
 * raises no event when the user switches Office's theme (`OfficeThemeChanged` is Outlook's only), so
 * the pane looks again when the user comes back to it.
 */
function applyTheme(): void {
  const theme = (Office.context as { officeTheme?: Office.OfficeTheme } | undefined)?.officeTheme;
  const dark = !!theme?.bodyBackgroundColor && isDark(theme.bodyBackgroundColor);
  const key = JSON.stringify([dark, theme?.bodyBackgroundColor, theme?.bodyForegroundColor, theme?.controlBackgroundColor, theme?.controlForegroundColor]);
  if (key === appliedTheme) return;
  appliedTheme = key;
  // Fluent UI components arrive in their own chunk, requested here before the pane is built; the
  // pane's elements upgrade in place when it has loaded.
  void loadFluent().then((m) => m.applyFluentTheme(dark)).catch(() => undefined);
  const s = document.documentElement.style;
  const set = (name: string, value: string | undefined) => (value ? s.setProperty(name, value) : s.removeProperty(name));
  set("--body-bg", theme?.bodyBackgroundColor);
  set("--body-fg", theme?.bodyForegroundColor);
  set("--control-bg", theme?.controlBackgroundColor);
  set("--control-fg", theme?.controlForegroundColor);
  // Office's dark and black themes: switch the neutral palette too, not only the four colours.
  if (dark) document.documentElement.dataset.theme = "dark";
  else delete document.documentElement.dataset.theme;
}

void Office.onReady(() => {
  const root = document.getElementById("app");
  if (!root) return;
  applyTheme();
  mirrorDisabled(root);
  window.addEventListener("focus", applyTheme);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") applyTheme();
  });
  // The runtime shared with the ribbon's commands (one store, engine and lock; see src/addin/runtime.ts).
  const runtime = addinRuntime();
  const ctx = mountApp(root, {
    store: runtime.store,
    loadEngine: () => runtime.engine(),
    loadRecords: () => import(/* webpackChunkName: "records" */ "./records").then((m) => m.mountRecords),
    defaultServiceUrl: __PPM_DEFAULT_SERVICE_URL__,
    version: __PPM_VERSION__,
    runtime,
  });
  root.dataset.runtime = runtime.id;
  root.dataset.sharedRuntime = String(runtime.shared);
  if (!runtime.persistent) ctx.status("This device blocks the add-in's storage: connections last only until the pane closes.");
  // What this Excel lacks, said once (the Refresh tab says it again where refresh on open is offered).
  const missing = describeMissing(missingCapabilities(Office.context?.requirements));
  if (missing) ctx.status(missing);
  mountOpenRefreshNotes(ctx);
  mountFormulaConsent(ctx);
  ctx.on("bindings", () => {
    runtime.bindingsChanged();
    runtime.workbookChanged();
  });
  // With the shared runtime this page may have been loaded with the document, pane hidden
  // (startup behaviour "load"): refresh the flagged tables and follow the selection for the ribbon.
  if (runtime.shared) void runtime.start();
  // Warm the engine chunk while the user reads the first screen.
  else setTimeout(() => void ctx.engine().catch(() => undefined), 0);
});
