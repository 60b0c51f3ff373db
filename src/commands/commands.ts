/**
 * Ribbon function commands (ExecuteFunction). Office wiring only; the work is in `refreshAll.ts`.
 * Runs in its own runtime (commands.html), which shares the task pane's origin and so its storage.
 */
import { ConnectionStore, deviceStorage } from "../addin/connectionStore";
import { createEngine } from "../addin/engine";
import { createRefreshAllCommand } from "./refreshAll";

const refreshAll = createRefreshAllCommand({
  store: () => new ConnectionStore(deviceStorage(() => window.localStorage).storage, { partitionKey: Office.context?.partitionKey }),
  engine: () => new Promise((resolve) => resolve(createEngine())),
  ui: () => Office.context?.ui as unknown as import("./refreshAll").DialogUi | undefined,
  pageUrl: () => window.location.href,
  storage: () => deviceStorage(() => window.localStorage).storage,
  partitionKey: () => Office.context?.partitionKey,
});

void Office.onReady(() => {
  Office.actions.associate("refreshAll", (event: Office.AddinCommands.Event) => void refreshAll(event));
});
