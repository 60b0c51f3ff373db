/** The "Open" screen: read one record by kind + project_token, show it, copy it to a sheet. */
import type { RecordKind } from "../../contract/contract";
import { recordSheetRows, recordView, type RecordView } from "../../records";
import { selectedRecord, writeRecordSheet } from "../../workbook/writeback";
import { h, replace } from "../dom";
import { btn, kindSelect, show, type RecordsScreenContext } from "./common";
import { selectValue, setSelectValue, textInput } from "../controls";

export interface OpenScreenHooks {
  /** "Edit custom fields" of the shown record: hand it to the create/edit screen. */
  edit(view: RecordView): void;
}

/** Renders the Open screen into `panel`. */
export function mountOpenScreen(panel: HTMLElement, s: RecordsScreenContext, hooks: OpenScreenHooks): void {
  const { ctx } = s;
  const openKind = kindSelect("records-open-kind");
  const openToken = textInput({ label: "project_token", testid: "records-open-token", placeholder: "project_token", spellcheck: false });
  const openError = h("div", { class: "records-error", "data-testid": "records-open-error", role: "alert" });
  const viewHost = h("div");

  async function openRecord(): Promise<void> {
    openError.textContent = "";
    replace(viewHost);
    const token = openToken.value.trim();
    if (!token) return void (openError.textContent = "Enter a project_token, or select a row of an imported projects/proposals table and use “From selection”.");
    const p = s.credsProblem();
    const svc = s.service();
    if (p || !svc) return void (openError.textContent = p ?? "No connection.");
    const kind = selectValue(openKind.control) as RecordKind;
    try {
      ctx.notify(`Opening ${kind} ${token}…`);
      const data = await svc.getRecord(kind, token);
      renderView(recordView(kind, data, await s.customFields()));
      ctx.notify(`Opened ${kind} ${token}.`);
    } catch (e) {
      openError.textContent = s.errorText(e);
      s.maybeTokenUpdate(e, openError);
    }
  }

  function renderView(view: RecordView): void {
    const rows = view.fields.map((f) =>
      h(
        "tr",
        { "data-testid": "records-view-field", "data-field": f.name, "data-custom": f.custom ? "true" : null },
        h("th", { scope: "row" }, f.name, f.custom ? h("span", { class: "records-muted" }, " (custom)") : null),
        h("td", { "data-testid": "records-view-value" }, show(f.value)),
      ),
    );
    const copyStatus = h("div", { class: "records-muted", role: "status" });
    replace(
      viewHost,
      h(
        "div",
        { "data-testid": "records-view" },
        h("table", { class: "records-table" }, h("tbody", {}, ...rows)),
        h(
          "div",
          { class: "actions" },
          btn("records-view-copy", "Copy to sheet", async () => {
            try {
              const name = await ctx.runExcel((c) => writeRecordSheet(c, view.token ?? view.kind, recordSheetRows(view)));
              copyStatus.textContent = `Copied to sheet ${name}.`;
            } catch (e) {
              copyStatus.textContent = `Could not copy: ${s.errorText(e)}`;
            }
          }),
          btn("records-view-edit", "Edit custom fields", () => hooks.edit(view)),
        ),
        copyStatus,
      ),
    );
  }

  replace(
    panel,
    h(
      "div",
      { class: "records-row" },
      openKind.field,
      openToken,
      btn("records-open-from-selection", "From selection", async () => {
        openError.textContent = "";
        try {
          const r = await ctx.runExcel((c) => selectedRecord(c));
          if (!r.record) return void (openError.textContent = r.reason ?? "No record under the selection.");
          openToken.value = r.record.projectToken;
          setSelectValue(openKind.control, r.record.kind);
        } catch (e) {
          openError.textContent = s.errorText(e);
        }
      }),
      btn("records-open-submit", "Open", () => void openRecord(), true),
    ),
    openError,
    viewHost,
  );
  openToken.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") void openRecord();
  });
}
