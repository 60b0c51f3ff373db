/**
 * Task pane entry: Office wiring only. Everything else is in `app.ts` and the section modules; the
 * service client, query engine and workbook writer arrive in a separate chunk after first paint.
 */
import { mountApp } from "./app";
import { ConnectionStore, deviceStorage } from "../addin/connectionStore";
import { isDark } from "./theme";

declare const __PPM_DEFAULT_SERVICE_URL__: string;
declare const __PPM_VERSION__: string;

/** Applies Office's theme colours (when the host gives them) as CSS variables, and Fluent's tokens to match. */
function applyTheme(): void {
  const theme = (Office.context as { officeTheme?: Office.OfficeTheme } | undefined)?.officeTheme;
  const dark = !!theme?.bodyBackgroundColor && isDark(theme.bodyBackgroundColor);
  // Fluent UI components arrive in their own chunk; until then the pane's own CSS draws everything.
  void import(/* webpackChunkName: "fluent" */ "./fluent").then((m) => m.applyFluentTheme(dark)).catch(() => undefined);
  if (!theme) return;
  const s = document.documentElement.style;
  if (theme.bodyBackgroundColor) s.setProperty("--body-bg", theme.bodyBackgroundColor);
  if (theme.bodyForegroundColor) s.setProperty("--body-fg", theme.bodyForegroundColor);
  if (theme.controlBackgroundColor) s.setProperty("--control-bg", theme.controlBackgroundColor);
  if (theme.controlForegroundColor) s.setProperty("--control-fg", theme.controlForegroundColor);
  // Office's dark and black themes: switch the neutral palette too, not only the four colours.
  if (theme.bodyBackgroundColor && isDark(theme.bodyBackgroundColor)) document.documentElement.dataset.theme = "dark";
}

Office.onReady(() => {
  const root = document.getElementById("app");
  if (!root) return;
  applyTheme();
  const { storage, persistent } = deviceStorage(() => window.localStorage);
  const store = new ConnectionStore(storage, { partitionKey: Office.context?.partitionKey });
  const ctx = mountApp(root, {
    store,
    loadEngine: () => import(/* webpackChunkName: "engine" */ "../addin/engine").then((m) => m.createEngine()),
    loadRecords: () => import(/* webpackChunkName: "records" */ "./records").then((m) => m.mountRecords),
    defaultServiceUrl: __PPM_DEFAULT_SERVICE_URL__,
    version: __PPM_VERSION__,
  });
  if (!persistent) ctx.status("This device blocks the add-in's storage: connections last only until the pane closes.");
  // Warm the engine chunk while the user reads the first screen.
  setTimeout(() => void ctx.engine().catch(() => undefined), 0);
});
