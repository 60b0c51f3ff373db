/**
 * The task pane shell: tabs, status line, the shared progress bar, error panels, and the context
 * every section uses. Sections live in their own modules; the heavy engine is loaded on demand.
 */
import { h, replace } from "./dom";
import type { ConnectionStore } from "../addin/connectionStore";
import type { Engine } from "../addin/engine";
import type { ErrorView } from "./errorView";
import { formatCount } from "./datasets";
import type { Change, ErrorHandlers, JobProgress, JobResult, PaneContext, StatusScope, TabName } from "./context";
import { mountConnections, type ConnectionHooks } from "./connectionsPanel";
import { mountDatasets } from "./datasetsPanel";
import { mountSnapshots } from "./snapshotsPanel";
import { mountRefresh } from "./refreshPanel";
import type { MountRecords, RecordsContext } from "./recordsHost";
import { resolveConnectionId, summarize } from "../addin/refreshSummary";
import { tokenForm } from "./tokenForm";
import type { PaneRuntime } from "../addin/runtime";
import { busyText } from "../addin/refreshLock";
import { runExcel } from "../addin/excelRun";
import { focusControl, select as selectControl, selectValue, setDisabled, setSelectOptions, tabList } from "./controls";

export interface AppOptions {
  store: ConnectionStore;
  /** Loads the engine chunk (a dynamic import in the bundle; direct in tests). */
  loadEngine: () => Promise<Engine>;
  defaultServiceUrl: string;
  version: string;
  now?: () => Date;
  /** Loads the Records module (its own chunk). */
  loadRecords?: () => Promise<MountRecords>;
  /** The runtime shared with the ribbon commands (issue 17); refresh jobs take its lock. */
  runtime?: PaneRuntime;
}

const TABS: Array<{ name: TabName; label: string; a11y?: string }> = [
  // "Connect", not "Connections": five labels on one line in a 320 px pane (issue #25). Named as it
  // reads (issue #37: a name other than the visible label fails WCAG 2.5.3, and voice control).
  { name: "connections", label: "Connect" },
  { name: "datasets", label: "Datasets" },
  { name: "snapshots", label: "Snapshots" },
  { name: "refresh", label: "Refresh" },
  { name: "records", label: "Records" },
];

/** Mounts the whole pane into `root` and returns its context (for tests and the records host). */
export function mountApp(root: HTMLElement, opts: AppOptions): PaneContext {
  const listeners = new Map<Change, Set<() => void>>();
  let enginePromise: Promise<Engine> | null = null;
  let job: { controller: AbortController; kind: string; cancel: () => void } | null = null;
  let tasks = 0;
  /** Scope of the last job, so its result is not shown under another connection or a later task. */
  let jobScope: StatusScope = {};
  const inScope = (scope: StatusScope | undefined) =>
    !scope || ((scope.connectionId === undefined || scope.connectionId === opts.store.activeId()) && (scope.task === undefined || scope.task === tasks));

  const statusEl = h("div", { class: "status", role: "status", "aria-live": "polite", "data-testid": "status" });
  const progressHost = h("div", { class: "progress-host" });
  // A finished job's result sits under the sticky navigation, not in it: it scrolls away with the
  // section instead of covering it (issue #25).
  const resultHost = h("div", { class: "result-host" });
  const notices = h("div", { class: "notices", "data-testid": "pane-notices" });
  const picker = selectControl({ label: "Connection", testid: "active-connection", options: [] });
  const select = picker.control;
  const panels = new Map<TabName, HTMLElement>();
  const tabs = tabList({
    label: "Sections",
    class: "tabs",
    size: "small",
    tabs: TABS.map((t) => ({ id: `tab-${t.name}`, label: t.label, ...(t.a11y ? { name: t.a11y } : {}), testid: `tab-${t.name}`, panelId: `panel-${t.name}` })),
    // Arrow keys, Home and End (the tab list's own keyboard handling) and clicks select a tab.
    onSelect: (id) => ctx.showTab(id.slice("tab-".length) as TabName),
  });
  const shown = new Set<(tab: TabName) => void>();
  let currentTab: TabName = "connections";

  const ctx: PaneContext = {
    store: opts.store,
    runtime: opts.runtime,
    notices,
    defaultServiceUrl: opts.defaultServiceUrl,
    now: opts.now ?? (() => new Date()),
    engine() {
      enginePromise ??= opts.loadEngine().catch((e) => {
        enginePromise = null; // a failed chunk load (offline) can be retried
        throw e;
      });
      return enginePromise;
    },
    active() {
      const id = opts.store.activeId();
      return id ? opts.store.get(id) : null;
    },
    activeConnection() {
      const id = opts.store.activeId();
      return id ? opts.store.connection(id) : null;
    },
    setActive(id) {
      opts.store.setActive(id);
      ctx.changed("active");
    },
    status(text, scope) {
      if (!inScope(scope)) return; // another connection's, or an earlier task's
      // Re-set even when equal, so screen readers announce a repeated message.
      statusEl.classList.remove("visually-hidden");
      statusEl.textContent = "";
      statusEl.textContent = text;
    },
    announce(text, scope) {
      if (!inScope(scope)) return;
      statusEl.classList.add("visually-hidden");
      statusEl.textContent = "";
      statusEl.textContent = text;
    },
    beginTask: () => ++tasks,
    showTab(tab, focus = false) {
      // Messages belong to what the user did where they did it: leaving a section clears its error
      // panels and the last job's result, so none lingers over another section (issue #25).
      if (tab !== currentTab) {
        panels.get(currentTab)?.querySelectorAll(".error-panel").forEach((p) => p.remove());
        replace(resultHost);
        // The status line too, now that it is in view under the tabs (issue #37).
        statusEl.textContent = "";
        // Notes that only report something past (the refresh on open's outcome) go too; a question
        // or a note with something left to do stays until answered or dismissed.
        notices.querySelectorAll("[data-transient]").forEach((n) => n.remove());
      }
      currentTab = tab;
      tabs.select(`tab-${tab}`, focus);
      for (const [name, panel] of panels) panel.hidden = name !== tab;
      for (const l of shown) l(tab);
    },
    editConnection(id) {
      ctx.showTab("connections");
      hooks?.edit(id);
    },
    addConnection() {
      ctx.showTab("connections");
      hooks?.add();
    },
    updateToken(id) {
      ctx.showTab("connections");
      hooks?.updateToken(id);
    },
    async runJob(kind, label, work) {
      if (job) {
        ctx.status("Another operation is still running; wait for it or cancel it first.");
        return undefined;
      }
      // A refresh shares the runtime's lock with the ribbon's commands and the refresh on open.
      let release: (() => void) | null = null;
      if (kind === "refresh" && opts.runtime) {
        release = opts.runtime.lock.tryAcquire("pane", label);
        if (!release) {
          ctx.status(busyText(opts.runtime.lock.holder!));
          return undefined;
        }
      }
      const controller = new AbortController();
      const scope: StatusScope = { connectionId: opts.store.activeId() ?? undefined, task: ctx.beginTask() };
      jobScope = scope;
      const bar = h("fluent-progress-bar", { "data-testid": "progress-bar", "aria-label": label, role: "progressbar" });
      const rowsEl = h("span", { "data-testid": "progress-rows", "data-rows": "0" }, "");
      const labelEl = h("span", { "data-testid": "progress-label", class: "progress-label" }, label);
      const cancel = h(
        "fluent-button",
        {
          type: "button",
          size: "small",
          "data-testid": "progress-cancel",
          "aria-keyshortcuts": "Escape",
          title: "Cancel (Esc)",
          onclick: () => stop(),
        },
        "Cancel",
      );
      const stop = () => {
        if (controller.signal.aborted) return;
        controller.abort();
        cancel.disabled = true;
        labelEl.textContent = "Cancelling…";
      };
      job = { controller, kind, cancel: stop };
      replace(resultHost);
      replace(progressHost, h("div", { class: "progress", "data-testid": "progress", "data-job": kind }, labelEl, bar, h("div", { class: "progress-row" }, rowsEl, cancel)));
      // The progress shows the label; the status region only says it.
      ctx.announce(label, scope);
      // The button that started the job is disabled while it runs, which would drop focus to the
      // page: it goes to Cancel instead (issue #25), where Enter or Esc stops the job.
      const active = root.ownerDocument.activeElement;
      if (!active || active === root.ownerDocument.body || root.contains(active)) focusControl(cancel);
      const progress = (p: JobProgress) => {
        if (p.label !== undefined) labelEl.textContent = p.label;
        if (p.rows !== undefined) {
          rowsEl.dataset.rows = String(p.rows);
          const verb = p.counting ?? (p.total !== undefined ? "written" : "received");
          rowsEl.textContent = p.total !== undefined ? `${formatCount(p.rows)} of ${formatCount(p.total)} rows ${verb}` : `${formatCount(p.rows)} rows ${verb}`;
        }
        if (p.total !== undefined && p.total > 0 && p.rows !== undefined) {
          bar.setAttribute("max", String(p.total));
          bar.setAttribute("value", String(Math.min(p.rows, p.total)));
          bar.setAttribute("aria-valuenow", String(Math.min(p.rows, p.total)));
          bar.setAttribute("aria-valuemax", String(p.total));
        } else {
          bar.removeAttribute("value"); // indeterminate
        }
      };
      try {
        return await work(controller.signal, progress);
      } catch (e) {
        if (controller.signal.aborted && isCancel(e)) {
          ctx.finishJob({ state: "cancelled", text: "Cancelled. Nothing was changed in the workbook." });
          return undefined;
        }
        replace(progressHost);
        throw e;
      } finally {
        job = null;
        release?.();
        progressHost.querySelector('[data-testid="progress"]')?.remove();
      }
    },
    jobRunning: () => job !== null,
    finishJob(result: JobResult) {
      // A job that ran with another connection, or was overtaken by a later task, reports nothing here.
      if (!inScope(jobScope)) return;
      const el = h(
        "fluent-message-bar",
        {
          class: `job-result ${result.state}`,
          role: "status",
          tabindex: "-1",
          intent: result.state === "done" ? "success" : result.state === "error" ? "error" : "info",
          layout: "multiline",
          "data-testid": "job-result",
          "data-state": result.state,
          "data-rows": result.rows !== undefined ? String(result.rows) : null,
          "data-table": result.table ?? null,
          "data-sheet": result.sheet ?? null,
        },
        h("span", {}, result.text),
        h("fluent-button", { type: "button", slot: "dismiss", appearance: "transparent", size: "small", "aria-label": "Dismiss", onclick: () => el.remove() }, "✕"),
      );
      replace(progressHost);
      replace(resultHost, el);
      // Shown in the result bar above; said once more, for screen readers only (issue #37: every
      // message appeared twice, there and in a footer the Import bar covered).
      ctx.announce(result.text);
      // After an import the result is what the user looks for next: focus it (it names the table and
      // sheet); after a failure or a cancel too, when focus would otherwise be lost with the progress.
      const active = root.ownerDocument.activeElement;
      if (result.state === "done" || !active || active === root.ownerDocument.body) el.focus();
    },
    errorPanel: (view, handlers) => errorPanel(ctx, view, handlers),
    secrets: () => opts.store.allSecrets(),
    changed(what) {
      for (const l of listeners.get(what) ?? []) l();
    },
    on(what, listener) {
      let set = listeners.get(what);
      if (!set) listeners.set(what, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
    copyText,
  };
  let hooks: ConnectionHooks | null = null;

  // --- header: active connection picker ---
  const renderSelect = () => {
    const list = opts.store.list();
    const active = opts.store.activeId();
    setSelectOptions(select, list.length ? list.map((c) => ({ value: c.id, label: `${c.name} — ${hostOf(c.baseUrl)}` })) : [{ value: "", label: "No connection yet" }], active ?? undefined);
    setDisabled(select, list.length === 0);
  };
  select.addEventListener("change", () => {
    const id = selectValue(select);
    if (id && id !== opts.store.activeId()) ctx.setActive(id);
  });
  ctx.on("connections", renderSelect);
  ctx.on("active", renderSelect);
  // The last job's outcome belongs to the connection it ran with.
  ctx.on("active", () => {
    replace(resultHost);
    statusEl.textContent = ""; // the status line spoke of the previous connection
  });
  // Esc cancels the running job from anywhere in the pane (forms handle their own Esc first). In a
  // dialog, or in a dropdown whose list is open, Esc closes that instead: the dropdown has closed
  // its list by the time the event reaches the document, so that is noted on the way down.
  const escClosesList = new WeakSet<Event>();
  root.ownerDocument.addEventListener(
    "keydown",
    (ev) => {
      const dd = ev.key === "Escape" && ev.target instanceof Element ? ev.target.closest("fluent-dropdown") : null;
      if (dd && (dd as { open?: unknown }).open === true) escClosesList.add(ev);
    },
    true,
  );
  root.ownerDocument.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || !job || ev.defaultPrevented || escClosesList.has(ev)) return;
    if (ev.target instanceof Element && ev.target.closest("fluent-dialog")) return;
    ev.preventDefault();
    job.cancel();
  });

  // --- tabs (WAI-ARIA tabs pattern, by the Fluent tab list: arrows move, Home/End jump) ---
  for (const t of TABS) {
    panels.set(t.name, h("section", { role: "tabpanel", id: `panel-${t.name}`, "aria-labelledby": `tab-${t.name}`, "data-testid": `panel-${t.name}`, class: "panel", tabindex: "0" }));
  }

  replace(
    root,
    h(
      "header",
      { class: "top" },
      h(
        "div",
        { class: "title-row" },
        h("h1", {}, "PPM for Excel"),
        // The add-in's own help page (next to taskpane.html); Office opens a new-window link in the browser.
        h("a", { href: "help.html", target: "_blank", rel: "noopener", class: "help-link", "data-testid": "help-link" }, "Help"),
      ),
      h("div", { class: "field inline" }, picker.label, select),
    ),
    h("div", { class: "nav", "data-testid": "nav" }, tabs.el, progressHost),
    resultHost,
    // The one status line, under the navigation where results appear (not a footer a section's
    // sticky bar covers; issue #37).
    statusEl,
    notices,
    ...[...panels.values()],
    h("footer", { class: "foot" }, `v${opts.version}`),
  );
  renderSelect();

  const onShown = (l: (tab: TabName) => void) => shown.add(l);
  hooks = mountConnections(panels.get("connections")!, ctx);
  mountDatasets(panels.get("datasets")!, ctx, onShown);
  mountSnapshots(panels.get("snapshots")!, ctx, onShown);
  mountRefresh(panels.get("refresh")!, ctx, onShown);
  mountRecordsTab(panels.get("records")!, ctx, onShown, opts.loadRecords);

  ctx.showTab(opts.store.list().length ? "datasets" : "connections");
  if (opts.store.problem) ctx.status(opts.store.problem);
  root.dataset.ready = "true";
  return ctx;
}

function isCancel(e: unknown): boolean {
  const o = e as { name?: unknown; code?: unknown } | null;
  return !!o && (o.name === "AbortError" || o.code === "cancelled");
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Clipboard with a fallback for hosts that block the async clipboard API (some Office webviews). */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through to the selection-based copy */
  }
  const area = h("textarea", { class: "offscreen", "aria-hidden": "true" });
  area.value = text;
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/**
 * The in-place error panel: title, what happened, what to do, and the buttons the error calls for.
 * "Update token" opens a token form inside the panel itself and retries on save.
 */
export function errorPanel(ctx: PaneContext, view: ErrorView, handlers: ErrorHandlers = {}): HTMLElement {
  // A Fluent message bar (intent error, multi-line): title, what happened, what to do, then buttons.
  const panel = h("fluent-message-bar", { class: "error-panel", role: "alert", intent: "error", layout: "multiline", "data-testid": "error-panel", "data-code": view.code });
  const extra = h("div", { class: "error-extra" });
  const buttons: HTMLElement[] = [];
  const connId = view.connectionId;
  for (const a of view.actions) {
    if (a === "updateToken" && connId) {
      buttons.push(
        h("fluent-button", { type: "button", appearance: "primary", "data-testid": "error-update-token", onclick: () => replace(extra, tokenForm(ctx, connId, () => handlers.retry?.(), () => replace(extra))) }, "Update token"),
      );
    } else if (a === "forgetToken" && connId) {
      buttons.push(
        h(
          "fluent-button",
          {
            type: "button",
            "data-testid": "error-forget-token",
            onclick: () => {
              ctx.store.forgetToken(connId);
              ctx.changed("credentials");
              const name = ctx.store.get(connId)?.name ?? "this connection";
              replace(extra, h("p", { class: "note" }, `The token of ${name} was removed from this device. Use Update token to enter a new one.`));
              ctx.status(`Token forgotten for ${name}.`);
            },
          },
          "Forget token",
        ),
      );
    } else if (a === "copyDetails" && view.details) {
      buttons.push(
        h(
          "fluent-button",
          {
            type: "button",
            "data-testid": "error-copy-details",
            onclick: () => {
              void ctx.copyText(view.details!).then((ok) => ctx.status(ok ? "Details copied to the clipboard." : "Copying was blocked; select the details text and copy it."));
            },
          },
          "Copy details",
        ),
      );
    } else if (a === "retry" && handlers.retry) {
      const retry = handlers.retry;
      buttons.push(h("fluent-button", { type: "button", "data-testid": "error-retry", onclick: () => retry() }, "Retry"));
    } else if (a === "editConnection" && connId) {
      buttons.push(h("fluent-button", { type: "button", "data-testid": "error-edit-connection", onclick: () => ctx.editConnection(connId) }, "Edit connection"));
    }
  }
  buttons.push(h("fluent-button", { type: "button", appearance: "subtle", "data-testid": "error-dismiss", onclick: () => panel.remove() }, "Dismiss"));
  replace(
    panel,
    h("strong", { class: "error-title" }, view.title),
    h("p", { "data-testid": "error-message" }, view.message),
    h("p", { "data-testid": "error-action", class: "action" }, view.action),
    view.details ? h("pre", { "data-testid": "error-details", class: "details", tabindex: "0", "aria-label": "Error details" }, view.details) : null,
    view.more?.length
      ? h("details", { class: "error-more", "data-testid": "error-more" }, h("summary", {}, "Details"), h("ul", { class: "plain" }, ...view.more.map((line) => h("li", {}, line))))
      : null,
    h("div", { class: "actions" }, ...buttons),
    extra,
  );
  // Errors appear where the action was; bring them into view in a long, scrolled pane.
  queueMicrotask(() => {
    if (panel.isConnected) panel.scrollIntoView?.({ block: "nearest" });
  });
  return panel;
}

/**
 * The Records tab. The Records module is mounted once (on first show) and kept; whether it is shown
 * is decided per active connection, on every show and every connection change, because the record
 * routes can be absent in one environment and present in another.
 */
function mountRecordsTab(panel: HTMLElement, ctx: PaneContext, onShown: (l: (t: TabName) => void) => void, load?: () => Promise<MountRecords>): void {
  const container = h("div", { "data-testid": "records-host" });
  const moduleHost = h("div", {});
  replace(panel, container);
  /** Probe results per connection id: true when the environment has no record routes. */
  const absent = new Map<string, boolean>();
  let moduleMounted = false;
  let visible = false;
  let generation = 0;

  async function render(): Promise<void> {
    if (!visible || !load) return;
    const mine = ++generation;
    try {
      const [mount, engine] = await Promise.all([load(), ctx.engine()]);
      const conn = ctx.activeConnection();
      if (conn && !absent.has(conn.id)) {
        // Only a missing route hides the section; missing credentials are the module's to explain.
        const probe = await engine.probe(conn).catch(() => null);
        absent.set(conn.id, probe?.details.record.state === "absent");
      }
      if (mine !== generation) return; // a newer render (another connection) took over
      if (conn && absent.get(conn.id)) {
        replace(container, h("div", { class: "state-panel", "data-testid": "records-absent" }, h("p", {}, "This environment does not offer the record endpoints, so records are hidden here.")));
        return;
      }
      if (!moduleMounted) {
        moduleMounted = true;
        mount(moduleHost, recordsContext());
      }
      if (moduleHost.parentElement !== container) replace(container, moduleHost);
    } catch (e) {
      if (mine !== generation) return;
      replace(container, h("p", { class: "note" }, `The Records section could not be loaded: ${(e as Error).message}`));
    }
  }

  onShown((tab) => {
    visible = tab === "records";
    void render();
  });
  ctx.on("active", () => void render());
  ctx.on("connections", () => {
    absent.clear(); // an edited connection may point at another environment now
    void render();
  });

  function recordsContext(): RecordsContext {
    const rctx: RecordsContext = {
      getActiveConnection: () => ctx.activeConnection(),
      onConnectionChange: (l) => {
        const offs = [ctx.on("active", l), ctx.on("credentials", l), ctx.on("connections", l)];
        return () => offs.forEach((o) => o());
      },
      runExcel: (work) => runExcel(work),
      notify: (text) => ctx.status(text),
      requestTokenUpdate: (id) => ctx.updateToken(id),
      refreshTables: async (ids) => {
        const engine = await ctx.engine();
        const { bindings } = await engine.listBindings();
        const connections = ctx.store.list();
        const reports = [];
        for (const id of ids) {
          const b = bindings.find((x) => x.id === id);
          if (!b) continue;
          const cid = resolveConnectionId(b, connections);
          const conn = cid ? ctx.store.connection(cid) : null;
          if (!conn) {
            reports.push({ bindingId: b.id, tableName: b.tableName, outcome: "failed" as const, rowCount: b.rowCount, failure: { code: "no_connection", message: "No connection on this device for this table." }, warnings: [], binding: b });
            continue;
          }
          reports.push(await engine.refreshOne(b.id, conn, { secrets: ctx.secrets() }));
        }
        const s = summarize(reports);
        ctx.changed("bindings");
        return { updated: s.updated, unchanged: s.unchanged, failed: s.failed, failures: s.items.filter((i) => i.outcome === "failed").map((i) => `${i.tableName}: ${i.reason}`) };
      },
    };
    return rctx;
  }
}
