/**
 * Refresh: the table under the selection, one listed table, or every bound table; a summary
 * afterwards (updated / unchanged / failed with the reason), and the list of bound tables with
 * their source and last refresh. A table whose last refresh was a delta that changed or added rows
 * offers "Show changes" (and then "Clear highlight" with a legend) in both places (issue #15).
 */
import { h, replace } from "./dom";
import type { Binding } from "../refresh/binding";
import type { RefreshReport } from "../refresh/engine";
import { describeError, describeFailure, refreshFailureNote } from "./errorView";
import { formatAbsolute, formatCount, formatRelative } from "./datasets";
import { countsText, LAST_RIBBON_REFRESH_KEY, NEW_EXPORT_SAME_ROWS, resolveConnectionId, summarize, where, type RefreshSummary } from "../addin/refreshSummary";
import type { PaneContext, TabName } from "./context";
import type { Connection } from "../service/connection";
import { busyText } from "../addin/refreshLock";
import { checkbox, confirmDialog, isChecked, setDisabled } from "./controls";
import { ADDED_FILL, CHANGED_FILL } from "../refresh/highlight";
import type { ChangeHighlight } from "../workbook/changes";
import { collabWatch, holderText, type Collaboration } from "./collabWatch";

/** "0 B", "812 B", "14.2 KB", "3.47 MB" (1 KB = 1,024 bytes, as the browser's network panel counts). */
function formatBytes(n: number): string {
  if (n < 1024) return `${formatCount(n)} B`;
  const [unit, size] = n < 1024 * 1024 ? ["KB", n / 1024] : ["MB", n / 1024 / 1024];
  return `${size.toLocaleString("en-US", { maximumFractionDigits: size < 10 ? 2 : 1 })} ${unit}`;
}

export function mountRefresh(panel: HTMLElement, ctx: PaneContext, onShown: (l: (t: TabName) => void) => void): void {
  const summaryHost = h("div", { class: "summary-host" });
  const ribbonHost = h("div", { class: "ribbon-host" });
  const errorHost = h("div", { class: "error-host" });
  const tablesHost = h("div", { class: "tables-host" });
  let bindings: Binding[] = [];
  /** Per binding id, from the workbook: changes of the last delta can be shown / are shown. */
  let highlights = new Map<string, ChangeHighlight>();

  const resolve = (b: Binding): Connection | null => {
    const id = resolveConnectionId(b, ctx.store.list());
    const conn = id ? ctx.store.connection(id) : null;
    return conn;
  };

  const selectedBtn = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "refresh-selected", onclick: () => void refreshSelected() }, "Refresh selected table");
  const allBtn = h("fluent-button", { type: "button", "data-testid": "refresh-all", onclick: () => void refreshAll() }, "Refresh all");
  const logHost = h("div", { class: "log-host" });
  // A disclosure button: its role as an attribute, so aria-expanded is allowed on it for every
  // reader of the DOM (Fluent's own role is in ElementInternals; issue #37, axe-core).
  const logBtn = h("fluent-button", { type: "button", role: "button", appearance: "subtle", "data-testid": "refresh-log-open", "aria-expanded": "false", onclick: () => void toggleLog() }, "Refresh log");
  const reloadBtn = h("fluent-button", { type: "button", appearance: "subtle", "data-testid": "bound-tables-reload", onclick: () => void loadTables() }, "Reload list");

  /** The last ribbon "Refresh all" (stored by the command runtime, which shares this storage). */
  function showRibbonResult(): void {
    let last: { at?: string; text?: string } | null = null;
    try {
      const raw = window.localStorage.getItem(ctx.store.key(LAST_RIBBON_REFRESH_KEY));
      last = raw ? (JSON.parse(raw) as { at?: string; text?: string }) : null;
    } catch {
      last = null;
    }
    if (!last?.text || !last.at) return replace(ribbonHost);
    replace(
      ribbonHost,
      h("p", { class: "note", "data-testid": "ribbon-last-refresh" }, `Ribbon "Refresh all" ${formatRelative(last.at, ctx.now())}: ${last.text.split("\n")[0]}`),
    );
  }

  /** Co-authoring (issue #26): whether others edit the workbook, and who holds which table. */
  let collab: Collaboration = { active: false, holders: {} };
  const collabHost = h("div", { class: "collab-host" });
  // The settings event and the 15 s poll read the list again (merged while a reading runs): collabWatch.ts.
  const watcher = collabWatch({ engine: () => ctx.engine(), reload: () => loadTables(), hidden: () => panel.hidden });

  async function readCollab(): Promise<void> {
    collab = await watcher.read();
    replace(
      collabHost,
      collab.active
        ? h("p", { class: "note", "data-testid": "coauthoring-note" }, "Co-authoring is active: others are editing this workbook. Their refreshes and settings appear here as they arrive; a table another person is refreshing says so below.")
        : null,
    );
  }

  async function loadTables(): Promise<void> {
    showRibbonResult();
    void watcher.watch();
    try {
      const engine = await ctx.engine();
      const stored = await engine.listBindings();
      bindings = stored.bindings;
      highlights = await readHighlights();
      await readCollab();
      renderTables(stored.broken);
    } catch (e) {
      replace(tablesHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() }), { retry: () => void loadTables() }));
    }
  }

  /** The workbook's highlight state; none (no buttons) when it cannot be read, the list still shows. */
  async function readHighlights(): Promise<Map<string, ChangeHighlight>> {
    try {
      const engine = await ctx.engine();
      return new Map(Object.entries(await engine.changeHighlights()));
    } catch {
      return new Map();
    }
  }

  /**
   * Fills every "changes" slot (in the summary and in the list) from `highlights`: "Show changes", or
   * "Clear highlight" and the legend. `focus` puts the keyboard on the slot's new button after a click.
   */
  function renderChanges(focus?: { bindingId: string; where: string }): void {
    for (const slot of panel.querySelectorAll<HTMLElement>("[data-changes-for]")) {
      const id = slot.dataset.changesFor ?? "";
      const where = slot.dataset.where ?? "list";
      const table = slot.dataset.table ?? "";
      const st = highlights.get(id);
      const prefix = where === "summary" ? "refresh-summary" : "bound-table";
      if (!st?.available) {
        replace(slot);
        continue;
      }
      const button = st.shown
        ? h("fluent-button", { type: "button", size: "small", "data-testid": `${prefix}-clear-changes`, "aria-label": `Clear the highlight in ${table}`, onclick: () => void setHighlight(id, table, false, where) }, "Clear highlight")
        : h("fluent-button", { type: "button", size: "small", "data-testid": `${prefix}-show-changes`, "aria-label": `Show changes in ${table}`, onclick: () => void setHighlight(id, table, true, where) }, "Show changes");
      const swatch = (color: string) => h("span", { class: "swatch", style: `background:${color}`, "aria-hidden": "true" });
      replace(
        slot,
        h("div", { class: "actions" }, button),
        st.shown
          ? h("p", { class: "note legend", "data-testid": "changes-legend" }, "Highlighted: ", swatch(CHANGED_FILL), " changed cells (yellow), ", swatch(ADDED_FILL), " added rows (green); cleared by the next refresh.")
          : null,
      );
      if (focus && focus.bindingId === id && focus.where === where) (button as HTMLElement).focus();
    }
  }

  async function setHighlight(bindingId: string, table: string, show: boolean, where: string): Promise<void> {
    replace(errorHost);
    for (const b of panel.querySelectorAll<HTMLElement>(`[data-changes-for="${CSS.escape(bindingId)}"] fluent-button`)) b.setAttribute("disabled", "");
    try {
      const engine = await ctx.engine();
      highlights.set(bindingId, show ? await engine.showChanges(bindingId) : await engine.clearChanges(bindingId));
      // The highlight is in the sheet: take the user there, with the table selected (issue #25).
      const shown = show ? await engine.goToTable(table).catch(() => false) : false;
      ctx.status(show ? `${table}: changed cells highlighted in yellow, added rows in green, until the next refresh.${shown ? " Its sheet is shown, with the table selected." : ""}` : `${table}: highlight cleared.`);
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
      highlights = await readHighlights();
    }
    renderChanges({ bindingId, where });
  }

  function renderTables(broken: { key: string; code: string; message: string }[] = []): void {
    const now = ctx.now();
    if (bindings.length === 0 && broken.length === 0) {
      replace(tablesHost, h("p", { class: "empty", "data-testid": "bound-tables-empty" }, "No tables in this workbook were imported by this add-in yet."));
      return;
    }
    replace(
      tablesHost,
      h(
        "ul",
        { class: "list", "data-testid": "bound-tables", "aria-label": "Tables in this workbook" },
        ...bindings.map((b) => {
          const last = b.lastRefreshAt;
          return h(
            "li",
            { class: "item", "data-testid": "bound-table", "data-table": b.tableName, "data-binding-id": b.id },
            h("div", { class: "item-head" }, h("span", { class: "item-title" }, `${b.sheetName} › ${b.tableName}`)),
            h("div", { class: "meta" }, h("span", { "data-testid": "bound-table-source" }, describeSource(b)), ` · ${formatCount(b.rowCount)} rows`),
            h(
              "div",
              { class: "meta" },
              "Last refresh ",
              h("time", { "data-testid": "bound-table-last-refresh", datetime: last ?? null, title: formatAbsolute(last) || null }, last ? formatRelative(last, now) : "never"),
              b.lastCheckedAt && (!last || formatRelative(b.lastCheckedAt, now) !== formatRelative(last, now)) ? ` · checked ${formatRelative(b.lastCheckedAt, now)}` : "",
            ),
            collab.holders[b.id]
              ? h("div", { class: "meta", "data-testid": "bound-table-holder" }, holderText(collab.holders[b.id], now))
              : null,
            b.lastFailure
              ? h("div", { class: "warn", "data-testid": "bound-table-failure" }, h("strong", { "data-testid": "bound-table-stale" }, "Stale"), ` — not refreshed: ${b.lastFailure.message.replace(/\.$/, "")}, ${formatRelative(b.lastFailure.at, now)}. The data is from the last successful refresh.`)
              : null,
            h("div", { class: "actions" }, h("fluent-button", { type: "button", size: "small", "data-testid": "bound-table-refresh", "aria-label": `Refresh ${b.tableName}`, onclick: () => void refreshOne(b) }, "Refresh")),
            h("div", { class: "changes", "data-changes-for": b.id, "data-where": "list", "data-table": b.tableName }),
            openToggle(b),
          );
        }),
        ...broken.map((x) => h("li", { class: "item", "data-testid": "bound-table-broken" }, h("div", { class: "warn" }, `${x.key}: ${x.message}`))),
      ),
    );
    renderChanges();
  }

  /**
   * "Refresh when this workbook opens" (issue 17): stored in the binding (travels with the file,
   * never a token); the first flagged table asks Office to load the add-in with this document,
   * clearing the last one stops that.
   */
  function openToggle(b: Binding): HTMLElement | null {
    if (!ctx.runtime) return null;
    return checkbox({
      label: "Refresh when this workbook opens",
      testid: "bound-table-open-refresh",
      checked: b.refreshOnOpen === true,
      onchange: (box) => void setOpenRefresh(b, box),
    }).row;
  }

  async function setOpenRefresh(b: Binding, box: FluentCheckboxElement): Promise<void> {
    const on = isChecked(box);
    const runtime = ctx.runtime;
    if (!runtime) return;
    setDisabled(box, true);
    replace(errorHost);
    try {
      const res = await runtime.setRefreshOnOpen(b.id, on);
      if (res.state === "busy") {
        box.checked = !on;
        ctx.status(`The setting was not changed: ${busyText(res.holder)}`);
        return;
      }
      bindings = bindings.map((x) => (x.id === b.id ? res.binding : x));
      const note =
        res.startup === "unsupported" && on
          ? " This Excel cannot start add-ins with a workbook; the table refreshes when the workbook is opened in Excel on the web, on Windows or on a Mac."
          : "";
      box.dataset.saved = String(on);
      ctx.status(`${b.tableName}: ${on ? "refreshes when this workbook opens" : "no longer refreshes when this workbook opens"}.${note}`);
    } catch (e) {
      // The flag may be saved while Office refused the startup change; the list shows what is stored.
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
      void loadTables();
    } finally {
      setDisabled(box, false);
    }
  }

  function describeSource(b: Binding): string {
    const s = b.source;
    const base = s.kind === "dataset" ? `dataset ${s.key} (${s.format})` : `snapshot ${s.endpoint}`;
    return b.query ? `${base}, local query` : base;
  }

  function showSummary(s: RefreshSummary): void {
    // Tables that failed the same way (a stopped service, an expired token): the reason once, with
    // its buttons, and the tables only named (issue #25). All of them: one message for the run.
    const groupOf = new Map<string, number>();
    s.groups.forEach((g, n) => g.bindingIds.forEach((id) => groupOf.set(id, n)));
    const groupPanels = s.groups.map((g, n) =>
      h(
        "div",
        { class: "failure-group", "data-testid": "refresh-summary-group", "data-group": String(n), "data-tables": String(g.bindingIds.length) },
        // Said against the headline's count: "2 of the 3 tables that failed, for the same reason" (issue #37).
        s.common ? null : h("p", { class: "strong" }, `${g.bindingIds.length} of the ${s.failed} tables that were not refreshed failed the same way:`),
        ctx.errorPanel(describeFailure({ code: g.code, message: g.reason }, { connectionId: g.connectionId, secrets: ctx.secrets(), refreshedTables: g.bindingIds.length }), { retry: () => void refreshAll() }),
      ),
    );
    const items = s.items.map((i) => {
      const failed = i.outcome === "failed";
      const grouped = groupOf.get(i.bindingId);
      const view = failed && grouped === undefined ? describeFailure({ code: i.code ?? "error", message: i.reason ?? "" }, { connectionId: i.connectionId, secrets: ctx.secrets(), refreshedTables: 1 }) : null;
      // A service that could not be reached (or answered too late) for this table alone: its
      // message with the details and Retry / Edit connection, as a run's shared reason has (issue #25).
      const unreachable = view !== null && (i.code === "network" || i.code === "timeout");
      const tokenButtons =
        view && (unreachable || (view.actions.includes("updateToken") && i.connectionId)) ? ctx.errorPanel(view, { retry: () => void refreshAll() }) : null;
      return h(
        "li",
        { class: `summary-item ${i.outcome}`, "data-testid": "refresh-summary-item", "data-table": i.tableName, "data-outcome": i.outcome, "data-group": grouped === undefined ? null : String(grouped) },
        h("span", { class: "strong" }, where(i)),
        failed ? ": not refreshed" : `: ${i.outcome}`,
        i.outcome !== "failed" ? ` (${formatCount(i.rowCount)} rows)` : "",
        i.newExport ? h("span", { class: "counts", "data-testid": "refresh-summary-new-export" }, ` — ${NEW_EXPORT_SAME_ROWS}`) : null,
        i.counts ? h("span", { class: "counts", "data-testid": "refresh-summary-counts", "data-strategy": i.counts.strategy, "data-matched-by": i.counts.matchedBy, "data-exact": String(i.counts.exact), "data-added": String(i.counts.added), "data-changed": String(i.counts.changed), "data-removed": String(i.counts.removed) }, ` — ${countsText(i.counts)}${i.counts.strategy === "delta" ? " (only these written)" : ""}`) : null,
        i.counts?.strategy === "full" ? h("div", { class: "note", "data-testid": "refresh-summary-no-highlight" }, "Rewritten in full, so the changed cells are not known one by one and cannot be highlighted.") : null,
        i.outcome === "updated" ? h("div", { class: "changes", "data-changes-for": i.bindingId, "data-where": "summary", "data-table": i.tableName }) : null,
        // The reason once: the service's own sentence (the panel's title would only repeat it).
        failed && grouped === undefined && !unreachable ? h("span", { "data-testid": "refresh-summary-reason", class: "reason" }, ` — ${i.reason}`) : null,
        // What the failed refresh wrote, where no panel says it (issue #37: "Nothing was changed" was false).
        failed && grouped === undefined && !tokenButtons && refreshFailureNote(i.code ?? "error") ? h("div", { class: "note", "data-testid": "refresh-summary-kept" }, refreshFailureNote(i.code ?? "error")) : null,
        ...i.warnings.map((w) => h("div", { class: "note" }, w)),
        tokenButtons,
        failed && i.code === "table_busy"
          ? h("div", { class: "actions" }, h("fluent-button", { type: "button", size: "small", "data-testid": "refresh-summary-clear-lock", "aria-label": `Clear the lock on ${i.tableName}`, onclick: () => void askClearLock(i.bindingId, i.tableName) }, "Clear lock…"))
          : null,
      );
    });
    replace(
      summaryHost,
      h(
        "div",
        { class: "summary card", role: "status", tabindex: "-1", "data-testid": "refresh-summary", "data-updated": String(s.updated), "data-unchanged": String(s.unchanged), "data-failed": String(s.failed), "data-common": s.common ? "true" : null, "data-groups": String(s.groups.length) },
        h("strong", {}, s.common ? `None of the ${s.items.length} tables was refreshed` : s.headline),
        ...groupPanels,
        h("ul", { class: "plain" }, ...items, ...s.broken.map((b) => h("li", { class: "summary-item failed" }, `${b.key}: ${b.message}`))),
      ),
    );
    renderChanges();
    ctx.announce(s.common ? `Refresh: none of the ${s.items.length} tables was refreshed. ${s.common.reason}` : `Refresh: ${s.headline}.`);
  }

  /**
   * "Clear lock…" on a table another refresh holds (issue #21, item 12): shows who holds it and until
   * when, and clears exactly that lock once confirmed (a refresh still running under it stops before
   * its next write), then refreshes the table.
   */
  async function askClearLock(bindingId: string, tableName: string): Promise<void> {
    replace(errorHost);
    try {
      const engine = await ctx.engine();
      const lock = await engine.tableLock(bindingId);
      if (!lock) {
        ctx.status(`${tableName} is no longer locked; refresh it again.`);
        return;
      }
      const since = formatAbsolute(lock.acquiredAt) || lock.acquiredAt;
      const until = formatAbsolute(lock.until) || lock.until;
      await confirmDialog({
        title: `Clear the lock on ${tableName}?`,
        message: `${tableName} is locked by ${lock.holder} since ${since}${lock.holds ? `, until ${until} at the latest` : " (the lock has run out)"}. Clear it only if nothing is refreshing this table now: a window that was closed while it refreshed leaves its lock behind. A refresh still running would stop before its next write.`,
        testid: "clear-lock-dialog",
        confirm: {
          label: "Clear lock and refresh",
          testid: "clear-lock-confirm",
          onClick: () => void clearLockAndRefresh(bindingId, tableName, lock.owner),
        },
        cancel: { label: "Keep", testid: "clear-lock-cancel" },
      }).open();
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
    }
  }

  async function clearLockAndRefresh(bindingId: string, tableName: string, owner: string): Promise<void> {
    try {
      const engine = await ctx.engine();
      const cleared = await engine.clearTableLock(bindingId, owner);
      ctx.status(cleared ? `The lock on ${tableName} was cleared.` : `The lock on ${tableName} changed in the meantime (another refresh took it); nothing was cleared.`);
      const b = bindings.find((x) => x.id === bindingId) ?? (await engine.listBindings()).bindings.find((x) => x.id === bindingId);
      if (cleared && b) await refreshOne(b);
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
    }
  }

  const connectionFor = (b: { connectionId: string; environment: string; companyId: string | null }) => resolveConnectionId(b, ctx.store.list());

  async function refreshWith(
    label: string,
    work: (signal: AbortSignal, onRows: (table: string, rows: number, total?: number, phase?: "fetching" | "writing") => void) => Promise<{ reports: RefreshReport[]; broken: { key: string; code: string; message: string }[] }>,
  ): Promise<void> {
    replace(errorHost);
    replace(summaryHost);
    try {
      const res = await ctx.runJob("refresh", label, (signal, progress) =>
        work(signal, (table, rows, total, phase) =>
          progress(phase === "fetching" ? { label: `Downloading ${table}…`, rows, counting: "received" } : { label: `Refreshing ${table}…`, rows, total, counting: "written" }),
        ),
      );
      if (!res) return;
      const s = summarize(res.reports, res.broken, connectionFor);
      // What the refresh did to the highlights (removed, or new changes to show), before the summary offers them.
      highlights = await readHighlights();
      showSummary(s);
      // Focus was on the job's Cancel button, gone with it: the summary is what comes next.
      if (document.activeElement === document.body || !document.activeElement) summaryHost.querySelector<HTMLElement>('[data-testid="refresh-summary"]')?.focus();
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
    }
    ctx.changed("bindings");
  }

  async function refreshSelected(): Promise<void> {
    replace(errorHost);
    let binding: Binding | null;
    try {
      const engine = await ctx.engine();
      binding = await engine.bindingAtSelection();
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
      return;
    }
    if (!binding) {
      replace(errorHost, ctx.errorPanel(describeFailure({ code: "no_table_at_selection", message: "The selected cell is not inside a table imported by this add-in." })));
      ctx.status("No linked table under the selection.");
      return;
    }
    await refreshOne(binding);
  }

  async function refreshOne(b: Binding): Promise<void> {
    const engine = await ctx.engine();
    const conn = resolve(b);
    await refreshWith(`Refreshing ${b.tableName}…`, async (signal, onRows) => {
      if (!conn) {
        const report: RefreshReport = {
          bindingId: b.id,
          tableName: b.tableName,
          outcome: "failed",
          rowCount: b.rowCount,
          failure: { at: ctx.now().toISOString(), code: "no_connection", message: `No connection on this device for ${b.environment}${b.companyId ? ` (company ${b.companyId})` : ""}.` },
          warnings: [],
          binding: b,
        };
        return { reports: [report], broken: [] };
      }
      const r = await engine.refreshOne(b.id, conn, { signal, secrets: ctx.secrets(), binding: b, onProgress: (rows, total, phase) => onRows(b.tableName, rows, total, phase) });
      return { reports: [r], broken: [] };
    });
  }

  /** The "Refresh log" view: the last refreshes of each table, newest first (kept in the workbook). */
  async function toggleLog(): Promise<void> {
    if (logBtn.getAttribute("aria-expanded") === "true") {
      logBtn.setAttribute("aria-expanded", "false");
      return replace(logHost);
    }
    logBtn.setAttribute("aria-expanded", "true");
    try {
      const engine = await ctx.engine();
      const entries = (await engine.readRefreshLog()).slice().reverse();
      const now = ctx.now();
      replace(
        logHost,
        entries.length === 0
          ? h("p", { class: "empty", "data-testid": "refresh-log-empty" }, "No refreshes recorded in this workbook yet.")
          : // A list, not a nine-column table: every entry fits a 320 px pane without sideways scrolling.
            h(
              "ol",
              { class: "log", "data-testid": "refresh-log", "aria-label": "Refresh log, newest first" },
              ...entries.map((e) =>
                h(
                  "li",
                  { class: "log-entry", "data-testid": "refresh-log-entry", "data-table": e.tableName, "data-outcome": e.outcome },
                  h(
                    "div",
                    { class: "log-head" },
                    h("time", { datetime: e.at, title: formatAbsolute(e.at) || null }, formatRelative(e.at, now)),
                    " · ",
                    h("strong", {}, e.tableName),
                    " · ",
                    h("span", { class: `outcome ${e.outcome}` }, e.outcome === "failed" ? `failed (${e.code ?? "error"})` : e.outcome === "updated" && e.strategy === "delta" ? "updated (delta)" : e.outcome === "updated" ? "updated (full rewrite)" : e.outcome === "unchanged" && e.strategy !== null ? "unchanged (a new export, the same rows)" : e.outcome),
                  ),
                  h(
                    "div",
                    { class: "meta" },
                    e.outcome === "updated" ? `${countsText({ ...e, exact: true })} · ` : "",
                    `${(e.ms / 1000).toFixed(1)} s · `,
                    h("span", { "data-testid": "refresh-log-bytes" }, e.bytesReceived === null ? "—" : formatBytes(e.bytesReceived)),
                    " downloaded",
                    e.outcome === "updated" ? ` · ${formatCount(e.cellsWritten)} cells written` : "",
                  ),
                  e.fallback ? h("div", { class: "meta", "data-testid": "refresh-log-fallback" }, `Rewritten in full: ${e.fallback}.`) : null,
                ),
              ),
            ),
      );
    } catch (err) {
      replace(logHost, ctx.errorPanel(describeError(err, { secrets: ctx.secrets() }), { retry: () => void toggleLog() }));
    }
  }

  async function refreshAll(): Promise<void> {
    const engine = await ctx.engine();
    await refreshWith("Refreshing all tables…", (signal, onRows) => engine.refreshAll(resolve, { signal, secrets: ctx.secrets(), onProgress: onRows }));
  }

  replace(
    panel,
    h("h2", {}, "Refresh"),
    h("p", { class: "hint" }, "Refresh asks the service for new data and writes only what changed (nothing when the export is unchanged). Your own columns next to a table are kept."),
    ctx.runtime && !ctx.runtime.startupSupported
      ? h("p", { class: "note", "data-testid": "open-refresh-unsupported" }, "This Excel cannot start add-ins when a workbook opens. Tables set to refresh when the workbook opens do so in Excel on the web, on Windows (Microsoft 365, version 2002 or later) and on a Mac (16.35 or later).")
      : null,
    h("div", { class: "toolbar" }, selectedBtn, allBtn),
    errorHost,
    summaryHost,
    ribbonHost,
    h("div", { class: "section-head" }, h("h3", {}, "Tables in this workbook"), reloadBtn),
    collabHost,
    tablesHost,
    h("div", { class: "section-head" }, h("h3", {}, "History"), logBtn),
    logHost,
  );
  onShown((tab) => {
    if (tab === "refresh") void loadTables();
  });
  // One lock with the ribbon and the refresh on open: while one of them refreshes, the pane waits.
  let lastOther = false;
  ctx.runtime?.lock.onChange((holder) => {
    const other = holder !== null && holder.owner !== "pane";
    // The ribbon's refresh (or the one on open) ran in this runtime: show its result at once.
    // (A task later: the command stores its summary right after it lets the lock go.)
    if (lastOther && holder === null && !panel.hidden) setTimeout(() => void loadTables(), 0);
    lastOther = other;
    selectedBtn.disabled = other;
    allBtn.disabled = other;
    selectedBtn.title = other ? `${holder.label} (${holder.owner === "ribbon" ? "from the ribbon" : "on open"})` : "";
    allBtn.title = selectedBtn.title;
  });
  ctx.on("bindings", () => {
    if (!panel.hidden) void loadTables();
  });
}
