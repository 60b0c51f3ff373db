/**
 * The "Write back from sheet" screen: custom-field edits in an imported projects/proposals snapshot
 * table, previewed cell by cell, sent one PUT per record, then the table refreshed.
 */
import {
  baselineIsCurrent,
  confirmWriteback,
  discardHeld,
  prepareForEditing,
  prepareWriteback,
  type Change,
  type ChangeResult,
  type HeldCell,
  type WritebackBinding,
  type WritebackDeps,
  type WritebackPreview,
} from "../../records";
import { excelWritebackWorkbook, findBinding, readBaseline, writableBindings } from "../../workbook/writeback";
import { h, replace } from "../dom";
import { btn, selectField, show, type RecordsScreenContext } from "./common";
import { confirmDialog, selectValue, setSelectOptions } from "../controls";

export interface WritebackScreen {
  /** Reads the workbook's writable (projects/proposals snapshot) tables into the table chooser. */
  loadTables(): Promise<void>;
  /** Enables "Send changes" only when there is something to send, nothing running and usable credentials. */
  updateConfirm(): void;
}

/** Renders the write-back screen into `panel`. */
export function mountWritebackScreen(panel: HTMLElement, s: RecordsScreenContext): WritebackScreen {
  const { ctx } = s;
  const table = selectField("Table", "records-wb-table", []);
  const wbTable = table.control;
  wbTable.addEventListener("change", () => void showStoredHeld());
  const wbStatus = h("div", { class: "records-muted", "data-testid": "records-wb-status", role: "status" });
  const wbWarnings = h("div");
  const wbPreviewHost = h("div");
  const wbSummary = h("div", { "data-testid": "records-wb-summary" });
  const wbRefresh = h("div", { "data-testid": "records-wb-refresh", role: "status" });
  const wbHeld = h("div", { "data-testid": "records-wb-held-list" });
  const confirm = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "records-wb-confirm", disabled: true }, "Send changes");
  // Closes the list only (issue #37: "Discard preview" read as discarding the edits, which stayed in
  // the sheet under a status that still said "Check the changes, then send them.").
  const cancel = btn("records-wb-cancel", "Close preview", () => {
    const had = preview?.changes.length ?? 0;
    clearPreview();
    wbStatus.textContent = had
      ? `Preview closed; nothing was sent. Your edits are still in the sheet: Detect changes lists them again, or type the old values back.`
      : "Preview closed.";
    wbStatus.dataset.state = "closed";
  });
  let bindings: WritebackBinding[] = [];
  let preview: WritebackPreview | null = null;
  let busy = false;
  const rowsByChange = new Map<Change, HTMLTableRowElement>();

  function updateConfirm(): void {
    confirm.disabled = busy || !preview || preview.recordsToUpdate === 0 || s.credsProblem() !== null;
    // Nothing to close while no preview is shown.
    cancel.disabled = busy || !preview;
  }

  async function loadTables(): Promise<void> {
    try {
      bindings = await ctx.runExcel((c) => writableBindings(c));
    } catch (e) {
      wbStatus.textContent = `Could not read the workbook's tables: ${s.errorText(e)}`;
      bindings = [];
    }
    const keep = selectValue(wbTable);
    setSelectOptions(
      wbTable,
      bindings.map((b) => ({ value: b.id, label: `${b.tableName} (${b.source.kind === "snapshot" ? b.source.endpoint : ""})` })),
      keep,
    );
    if (bindings.length === 0) wbStatus.textContent = "No imported projects or proposals snapshot table in this workbook. Import one under Snapshots first.";
    await showStoredHeld();
  }

  /**
   * Lists the chosen table's unsent edits kept from an earlier send (they live in its import
   * record), and offers "Start editing" only where it is needed: a table whose import record is
   * missing, unusable or older than its data (imported by an older version, issue #25).
   */
  async function showStoredHeld(): Promise<void> {
    const b = selectedBinding();
    if (!b) {
      prepare.hidden = true;
      prepareNote.hidden = true;
      return renderHeld([], null);
    }
    let baseline: Awaited<ReturnType<typeof readBaseline>> = null;
    try {
      baseline = await ctx.runExcel((c) => readBaseline(c, b.id));
    } catch {
      baseline = null;
    }
    const needed = !baseline || baseline.tooLarge || !baselineIsCurrent(baseline, b);
    prepare.hidden = !needed;
    prepareNote.hidden = !needed;
    renderHeld(baseline?.held ?? [], b);
  }

  function selectedBinding(): WritebackBinding | null {
    const id = selectValue(wbTable);
    return bindings.find((b) => b.id === id) ?? null;
  }

  function deps(): WritebackDeps | null {
    const svc = s.service();
    if (!svc) return null;
    return {
      client: svc,
      workbook: excelWritebackWorkbook(ctx.runExcel),
      customFields: s.customFields,
      refresh: async (b) => {
        const out = await ctx.refreshTables([b.id]);
        const fresh = await ctx.runExcel((c) => findBinding(c, b.id));
        if (fresh) bindings = bindings.map((x) => (x.id === fresh.id ? fresh : x));
        const outcome = out.failed > 0 ? "failed" : out.updated > 0 ? "updated" : "unchanged";
        return { outcome, message: out.failures.join("; ") || undefined, binding: fresh ?? undefined };
      },
    };
  }

  function clearPreview(): void {
    preview = null;
    wbStatus.dataset.state = "idle";
    rowsByChange.clear();
    replace(wbPreviewHost);
    replace(wbWarnings);
    wbSummary.textContent = "";
    updateConfirm();
  }

  function validationText(c: Change): string {
    const v = c.validation;
    if (v.status === "valid") return v.warning ? `OK · ${v.warning}` : "OK";
    return v.message;
  }

  const heldStatus: Record<HeldCell["status"], string> = {
    invalid: "Invalid",
    conflict: "Conflict",
    rejected: "Rejected by the service",
    ignored: "Not a custom field",
    "not-sent": "Not sent",
  };

  /** The edits kept in the sheet after a send, until they are sent, reverted or discarded. */
  function renderHeld(held: readonly HeldCell[], binding: WritebackBinding | null): void {
    wbHeld.dataset.count = String(held.length);
    if (held.length === 0 || !binding) return void replace(wbHeld);
    const discardNow = () =>
      void guarded("Putting the service's values back…", async () => {
        const d = deps();
        if (!d) return;
        const left = await discardHeld(d, binding, preview?.fields ?? (await s.customFields()), undefined);
        clearPreview();
        renderHeld(left, binding);
        wbStatus.textContent = left.length ? `${left.length} unsent edit${left.length === 1 ? "" : "s"} could not be discarded.` : "Unsent edits discarded; the cells hold the service's values again.";
        wbStatus.dataset.state = "discarded";
      });
    // Discarding overwrites what the user typed with the service's values: asked first, Keep focused.
    const discard = btn("records-wb-discard-held", "Discard unsent edits", () =>
      confirmDialog({
        title: "Discard unsent edits?",
        message: `The ${held.length === 1 ? "cell goes" : `${held.length} cells go`} back to the service's values; what you typed there is lost.`,
        testid: "records-wb-discard-dialog",
        confirm: { label: "Discard", testid: "records-wb-discard-confirm", onClick: discardNow },
        cancel: { label: "Keep my edits", testid: "records-wb-discard-cancel" },
      }).open(),
    );
    replace(
      wbHeld,
      h("div", { class: "records-notice" },
        h("div", { class: "records-strong" }, `${held.length} edit${held.length === 1 ? " was" : "s were"} not sent and ${held.length === 1 ? "is" : "are"} kept in the sheet as you typed ${held.length === 1 ? "it" : "them"} (marked in red). Correct and send, type the old value back, or discard:`),
        h("ul", {}, ...held.map((x) => h("li", { "data-testid": "records-wb-held", "data-token": x.projectToken, "data-field": x.field, "data-status": x.status }, `${x.field} · ${x.projectToken}: ${heldStatus[x.status]} — ${x.message}`))),
        h("div", { class: "actions" }, discard),
      ),
    );
  }

  function renderPreview(p: WritebackPreview): void {
    rowsByChange.clear();
    replace(wbWarnings, ...p.warnings.map((w) => h("div", { class: "records-notice", "data-testid": "records-wb-warning" }, w)));
    const notes = p.notes.map((n) => h("li", { "data-testid": "records-wb-note" }, n.sheetRow ? `Row ${n.sheetRow}: ${n.message}` : n.message));
    const rows = p.changes.map((c) => {
      const tr = h(
        "tr",
        { "data-testid": "records-wb-change", "data-row": c.row, "data-token": c.projectToken, "data-field": c.field, "data-validation": c.validation.status, "data-result": c.validation.status === "valid" ? "pending" : "not-sent" },
        h("td", {}, h("div", { class: "records-strong" }, c.field), h("div", { class: "records-muted" }, `Row ${c.sheetRow ?? c.row} · ${c.projectToken}`)),
        h("td", {}, h("span", { "data-testid": "records-wb-change-old", class: "records-value" }, show(c.old)), " → ", h("span", { "data-testid": "records-wb-change-new", class: "records-value" }, show(c.new))),
        h(
          "td",
          {},
          h("div", { "data-testid": "records-wb-change-check" }, validationText(c)),
          h("div", { "data-testid": "records-wb-change-result", class: "records-result" }, c.validation.status === "valid" ? "Pending" : "Not sent"),
        ),
      );
      rowsByChange.set(c, tr);
      return tr;
    });
    const valid = p.changes.filter((c) => c.validation.status === "valid").length;
    const other = p.changes.length - valid;
    wbSummary.textContent =
      p.changes.length === 0
        ? "No changed custom-field cells."
        : `${valid} valid change${valid === 1 ? "" : "s"} in ${p.recordsToUpdate} record${p.recordsToUpdate === 1 ? "" : "s"}${other ? `, ${other} not sendable (invalid, conflict or ignored)` : ""}.`;
    wbSummary.dataset.valid = String(valid);
    wbSummary.dataset.invalid = String(p.changes.filter((c) => c.validation.status === "invalid").length);
    wbSummary.dataset.conflict = String(p.changes.filter((c) => c.validation.status === "conflict").length);
    replace(
      wbPreviewHost,
      notes.length ? h("ul", { class: "records-muted" }, ...notes) : null,
      p.changes.length
        ? h(
            "table",
            { class: "records-table", "data-testid": "records-wb-preview" },
            h("thead", {}, h("tr", {}, ...["Cell", "Old → new", "Check · result"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, ...rows),
          )
        : null,
    );
    updateConfirm();
  }

  function resultText(r: ChangeResult): string {
    if (r.status === "saved") return r.stored !== null ? `Saved (service holds ${show(r.stored)})` : "Saved";
    return r.message;
  }

  async function guarded(label: string, work: () => Promise<void>): Promise<void> {
    if (busy) return;
    busy = true;
    updateConfirm();
    wbStatus.textContent = label;
    try {
      await work();
    } catch (e) {
      wbStatus.textContent = s.errorText(e);
    } finally {
      busy = false;
      updateConfirm();
    }
  }

  const prepare = btn("records-wb-prepare", "Start editing", () =>
    guarded("Getting the table ready for editing…", async () => {
      const b = selectedBinding();
      const d = deps();
      if (!b || !d) return void (wbStatus.textContent = b ? s.credsProblem() ?? "No connection." : "Choose a table first.");
      clearPreview();
      wbRefresh.textContent = "";
      const r = await prepareForEditing(d, b);
      if (!r.ready) {
        preview = r.preview;
        renderPreview(r.preview);
        wbStatus.textContent = "Some cells already differ from what was imported; send or discard them first (refresh the table to discard).";
        return;
      }
      replace(wbWarnings, ...r.warnings.map((w) => h("div", { class: "records-notice", "data-testid": "records-wb-warning" }, w)));
      wbStatus.textContent = `Ready: edit custom-field cells in ${b.tableName}, then choose “Detect changes”.${r.recorded ? " (The import record was taken now.)" : ""} Cells and number formats are left as they are.`;
      wbStatus.dataset.state = "ready";
    }),
  );

  // Shown only for a table without a usable import record (see showStoredHeld).
  prepare.hidden = true;
  const prepareNote = h(
    "p",
    { class: "records-muted", "data-testid": "records-wb-prepare-note", hidden: true },
    "This table has no usable import record (it was imported by an older version, or its data changed since): choose Start editing before you edit, so edits can be told from changes made on the service.",
  );

  const detect = btn("records-wb-detect", "Detect changes", () =>
    guarded("Comparing the sheet with what was imported…", async () => {
      const b = selectedBinding();
      const d = deps();
      if (!b || !d) return void (wbStatus.textContent = b ? s.credsProblem() ?? "No connection." : "Choose a table first.");
      wbRefresh.textContent = "";
      preview = await prepareWriteback(d, b);
      renderPreview(preview);
      renderHeld(preview.held, b);
      wbStatus.textContent = preview.changes.length ? "Check the changes, then send them." : "Nothing to send.";
      wbStatus.dataset.state = "preview";
    }),
  );

  confirm.addEventListener("click", () =>
    void guarded("Sending…", async () => {
      const p = preview;
      const d = deps();
      if (!p || !d) return;
      const done = await confirmWriteback(d, p, { onProgress: (t) => (wbStatus.textContent = t) });
      for (const o of done.outcomes) {
        const tr = rowsByChange.get(o.change);
        if (!tr) continue;
        tr.dataset.result = o.result.status;
        const cell = tr.querySelector<HTMLElement>('[data-testid="records-wb-change-result"]');
        // An unsendable change's reason is already in the check line; do not repeat it.
        if (cell) cell.textContent = o.result.status === "not-sent" && o.change.validation.status !== "valid" ? "Not sent" : resultText(o.result);
      }
      const sum = done.summary;
      wbSummary.textContent = `${sum.saved} saved in ${sum.records} record${sum.records === 1 ? "" : "s"}, ${sum.rejected} rejected by the service, ${sum.notSent} not sent.`;
      wbSummary.dataset.saved = String(sum.saved);
      wbSummary.dataset.rejected = String(sum.rejected);
      wbSummary.dataset.notSent = String(sum.notSent);
      const r = done.refresh;
      wbRefresh.dataset.outcome = r ? r.outcome : "none";
      wbRefresh.textContent = !r
        ? "Nothing was saved, so the table was not refreshed; your edits are still in the sheet."
        : r.outcome === "failed"
          ? `Saved, but the table could not be refreshed: ${r.message ?? "unknown reason"}. Refresh it later to see the service's values.`
          : `Table refreshed from the service (${r.outcome}).${done.baselineWarning ? ` ${done.baselineWarning}` : ""}`;
      renderHeld(done.held, p.binding);
      if (done.heldWarning) wbRefresh.textContent += ` ${done.heldWarning}`;
      wbStatus.textContent = "Done.";
      wbStatus.dataset.state = "done";
      ctx.notify(wbSummary.textContent);
      preview = null;
    }),
  );

  replace(
    panel,
    h("p", { class: "records-muted" }, "Edit custom-field cells of an imported projects or proposals snapshot table, then choose Detect changes: only the changed cells are sent, one request per record, and the table is refreshed afterwards."),
    h("div", { class: "records-row" }, table.field, btn("records-wb-reload", "Reload", () => void loadTables())),
    prepareNote,
    h("div", { class: "actions" }, prepare, detect),
    wbStatus,
    wbWarnings,
    wbPreviewHost,
    wbSummary,
    h("div", { class: "actions" }, confirm, cancel),
    wbRefresh,
    wbHeld,
  );

  return { loadTables, updateConfirm };
}
