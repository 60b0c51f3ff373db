/**
 * What every section of the pane shares: the connection store, the lazily loaded engine, the one
 * running job (with its progress bar and Cancel), the status line and the in-place error panel.
 */
import type { Connection } from "../service/connection";
import type { ConnectionStore, ConnectionSummary } from "../addin/connectionStore";
import type { Engine } from "../addin/engine";
import type { ErrorView } from "./errorView";
import type { PaneRuntime } from "../addin/runtime";

export type TabName = "connections" | "datasets" | "snapshots" | "refresh" | "records";

/** Progress of the running job, as the sections report it. */
export interface JobProgress {
  /** Replaces the label ("Downloading financials…", "Writing rows…"). */
  label?: string;
  rows?: number;
  /** Known total; without it the bar is indeterminate. */
  total?: number;
  /** What the rows count: downloaded ("received", the default) or put into the sheet ("written"). */
  counting?: "received" | "written";
}

/** How a finished job is reported in the shared `job-result` line. */
export interface JobResult {
  state: "done" | "cancelled" | "error";
  text: string;
  rows?: number;
  table?: string;
  sheet?: string;
}

/** Handlers an error panel can call. */
export interface ErrorHandlers {
  retry?: () => void;
}

/** Whose message a status line is (see {@link PaneContext.status}). */
export interface StatusScope {
  /** The connection the message is about; dropped if another connection is active by then. */
  connectionId?: string;
  /** The task (from `beginTask`) it reports; dropped if a later task has started. */
  task?: number;
}

export type Change = "connections" | "active" | "bindings" | "credentials";

export interface PaneContext {
  readonly store: ConnectionStore;
  /** The runtime shared with the ribbon (lock, startup behaviour, refresh on open), when there is one. */
  readonly runtime?: PaneRuntime;
  /** Where quiet pane-wide notes go (above the tabs' content, e.g. the refresh on open's). */
  readonly notices: HTMLElement;
  readonly defaultServiceUrl: string;
  now(): Date;
  /** The engine chunk (loaded once). */
  engine(): Promise<Engine>;
  /** Active connection without secrets, or null. */
  active(): ConnectionSummary | null;
  /** Active connection with secrets (for the engine only). */
  activeConnection(): Connection | null;
  setActive(id: string): void;
  /**
   * Announces a line in the status region. With a scope, the line is dropped when it no longer
   * applies: the active connection is another one now, or a later task has started since.
   */
  status(text: string, scope?: StatusScope): void;
  /**
   * Says `text` to screen readers only (the status region, visually hidden): for what the pane
   * shows anyway in a place of its own (a job's progress and result, a refresh summary, a test
   * result), so no message is on screen twice (issue #37).
   */
  announce(text: string, scope?: StatusScope): void;
  /** Starts a task that reports in the status line; its number scopes its messages. */
  beginTask(): number;
  /** Switches tab (and moves focus to it when `focus`). */
  showTab(tab: TabName, focus?: boolean): void;
  /** Opens the edit form of a connection in the Connections tab. */
  editConnection(id: string): void;
  /** Opens the empty "Add connection" form in the Connections tab. */
  addConnection(): void;
  /** Opens the "Update token" form of a connection in the Connections tab. */
  updateToken(id: string): void;
  /**
   * Runs the one job at a time with progress and Cancel. Resolves with the work's result, or
   * undefined when it was cancelled; rethrows other failures for the caller to show in place.
   */
  runJob<T>(kind: "import" | "snapshot" | "refresh", label: string, work: (signal: AbortSignal, progress: (p: JobProgress) => void) => Promise<T>): Promise<T | undefined>;
  jobRunning(): boolean;
  finishJob(result: JobResult): void;
  /** Builds an in-place error panel. */
  errorPanel(view: ErrorView, handlers?: ErrorHandlers): HTMLElement;
  /** Every stored secret (for redaction and for refusing to write them into a workbook). */
  secrets(): string[];
  /** Notifies sections of a change (they re-render what depends on it). */
  changed(what: Change): void;
  on(what: Change, listener: () => void): () => void;
  copyText(text: string): Promise<boolean>;
}
