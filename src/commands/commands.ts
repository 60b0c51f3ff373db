/**
 * Ribbon function commands (ExecuteFunction). Office wiring only; the work is in `refreshAll.ts`.
 * Runs in its own runtime (commands.html), which shares the task pane's origin and so its storage.
 */
import { ConnectionStore, deviceStorage } from "../addin/connectionStore";
import { createRefreshAllCommand } from "./refreshAll";

const refreshAll = createRefreshAllCommand({
  store: () => new ConnectionStore(deviceStorage(() => window.localStorage).storage, { partitionKey: Office.context?.partitionKey }),
  // Loaded on first use: the ribbon's function file stays small and starts fast (the engine carries
  // zod, the parsers and the writer).
  engine: async () => (await import(/* webpackChunkName: "engine" */ "../addin/engine")).createEngine(),
  ui: () => Office.context?.ui as unknown as import("./refreshAll").DialogUi | undefined,
  pageUrl: () => window.location.href,
  storage: () => deviceStorage(() => window.localStorage).storage,
  partitionKey: () => Office.context?.partitionKey,
});

Office.onReady(() => {
  Office.actions.associate("refreshAll", (event: Office.AddinCommands.Event) => void refreshAll(event));
});
