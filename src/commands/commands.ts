/**
 * Ribbon function commands (ExecuteFunction). Office wiring only; the work is in `refreshAll.ts`
 * and `refreshTable.ts`.
 *
 * With the shared runtime this bundle runs in taskpane.html next to the pane and takes the same
 * runtime (`addinRuntime()`: one store, one engine, one lock); without it (commands in a runtime of
 * their own) the runtime is this page's own, which shares the pane's origin and so its storage.
 */
import { deviceStorage } from "../addin/connectionStore";
import { addinRuntime, RIBBON_TABLE_HOLDER } from "../addin/runtime";
import { createRefreshAllCommand, type DialogUi } from "./refreshAll";
import { createRefreshTableCommand } from "./refreshTable";

const ui = () => Office.context?.ui as unknown as DialogUi | undefined;
const pageUrl = () => window.location.href;

const refreshAll = createRefreshAllCommand({
  store: () => addinRuntime().store,
  engine: () => addinRuntime().engine(),
  lock: () => addinRuntime().lock,
  sharedRuntime: () => addinRuntime().shared,
  ui,
  pageUrl,
  storage: () => deviceStorage(() => window.localStorage).storage,
  partitionKey: () => Office.context?.partitionKey,
});

const refreshTable = createRefreshTableCommand({
  engine: () => addinRuntime().engine(),
  refresh: (binding) => addinRuntime().refreshBinding(binding, new Date(), RIBBON_TABLE_HOLDER),
  lock: () => addinRuntime().lock,
  ribbon: () => addinRuntime().ribbon,
  ui,
  pageUrl,
  secrets: () => addinRuntime().store.allSecrets(),
});

void Office.onReady(() => {
  Office.actions.associate("refreshAll", (event: Office.AddinCommands.Event) => void refreshAll(event));
  Office.actions.associate("refreshTable", (event: Office.AddinCommands.Event) => void refreshTable(event));
});
