/**
 * The interface between the task pane shell and the Records module (`src/taskpane/records/`),
 * which is built separately and mounted into the "Records" tab. The shell owns connections,
 * Excel access and notifications; the module owns everything inside its container.
 */
import type { Connection } from "../service/connection";

/** Outcome of refreshing bound tables on the module's behalf (after a write-back). */
export interface RecordsRefreshOutcome {
  updated: number;
  unchanged: number;
  failed: number;
  /** One line per failed table: `"<table>: <reason>"`. */
  failures: string[];
}

/** What the shell gives the Records module. */
export interface RecordsContext {
  /**
   * The active connection WITH its secrets (token, `api-auth`, `api-secret`), for constructing a
   * `PpmClient`; null when none is set up. Never log or display it; read it again on each use,
   * since the user may update the token at any time.
   */
  getActiveConnection(): Connection | null;
  /** Subscribes to "the active connection (or its credentials) changed"; returns an unsubscribe function. */
  onConnectionChange(listener: () => void): () => void;
  /** Runs Excel work in one batch (`Excel.run`); the preview's emulator and Excel behave the same. */
  runExcel: <T>(work: (context: Excel.RequestContext) => Promise<T>) => Promise<T>;
  /** Shows a short line in the pane's status region (announced by screen readers). */
  notify(text: string): void;
  /** Opens the shell's "Update token" flow for a connection (after a 401 from a record endpoint). */
  requestTokenUpdate(connectionId: string): void;
  /** Refreshes the bound tables with these binding ids (e.g. the snapshot table a write-back changed). */
  refreshTables(bindingIds: readonly string[]): Promise<RecordsRefreshOutcome>;
}

/** The module's entry point: renders into `container`; the returned function (if any) unmounts it. */
export type MountRecords = (container: HTMLElement, ctx: RecordsContext) => void | (() => void);
