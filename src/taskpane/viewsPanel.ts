/**
 * Saved views (issue #28) in the Datasets tab: the workbook's views with Import (as a table) and
 * Delete, and Export, which offers the views document as a file (`ppm-views.json`, the file
 * `ppm export --view NAME --views FILE` reads) and shows the same text to copy where the host
 * blocks downloads. A view is created from the import panel ("Save as view").
 */
import { h, replace } from "./dom";
import { describeError } from "./errorView";
import { importedText } from "./datasets";
import type { PaneContext } from "./context";
import type { Engine } from "../addin/engine";
import type { SavedView } from "../views/views";

/** The views section; `refresh()` reads the workbook's views again. */
export function viewsSection(ctx: PaneContext, companyId: () => string | null): { element: HTMLElement; refresh(): Promise<void> } {
  const list = h("ul", { class: "list", "data-testid": "views-list", "aria-label": "Saved views" });
  const exportText = h("textarea", { class: "views-export", "data-testid": "views-export-text", readonly: true, rows: 6, hidden: true, "aria-label": "The views file" });
  const download = h("a", { "data-testid": "views-download", download: "ppm-views.json", hidden: true }, "Save ppm-views.json");
  const exportBtn = h("fluent-button", { type: "button", size: "small", "data-testid": "views-export", onclick: () => void exportViews() }, "Export views…");
  const errorHost = h("div", { class: "error-host" });
  const element = h(
    "section",
    { class: "views card", "data-testid": "views-section", "aria-label": "Saved views" },
    h("h3", {}, "Saved views"),
    h("p", { class: "hint" }, "A view is a dataset with a local query. Formulas use it (=PPM.VIEW(\"name\")); the CLI runs it (ppm export --view NAME --views ppm-views.json)."),
    list,
    h("div", { class: "actions" }, exportBtn, download),
    exportText,
    errorHost,
  );
  let objectUrl: string | null = null;

  async function refresh(): Promise<void> {
    replace(errorHost);
    try {
      const engine = await ctx.engine();
      const doc = await engine.readViews();
      element.hidden = false;
      if (doc.views.length === 0) {
        replace(list, h("li", { class: "empty", "data-testid": "views-empty" }, "No saved views yet: open a dataset's import panel and use Save as view."));
        exportBtn.setAttribute("disabled", "");
        return;
      }
      exportBtn.removeAttribute("disabled");
      replace(list, ...doc.views.map((v) => row(engine, v)));
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() }), { retry: () => void refresh() }));
    }
  }

  function row(engine: Engine, v: SavedView): HTMLLIElement {
    return h(
      "li",
      { class: "item", "data-testid": "view-row", "data-name": v.name },
      h("div", { class: "item-head" }, h("span", { class: "item-title", "data-testid": "view-name-text" }, v.name)),
      h("div", { class: "meta" }, h("code", {}, engine.describeView(v))),
      h(
        "div",
        { class: "actions" },
        h("fluent-button", { type: "button", appearance: "primary", size: "small", "data-testid": "view-import", "aria-label": `Import view ${v.name}`, onclick: () => void importView(engine, v) }, "Import"),
        h("fluent-button", { type: "button", size: "small", "data-testid": "view-delete", "aria-label": `Delete view ${v.name}`, onclick: () => void remove(engine, v) }, "Delete"),
      ),
    );
  }

  async function importView(engine: Engine, v: SavedView): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn) return;
    replace(errorHost);
    try {
      const result = await ctx.runJob("import", `Importing view ${v.name}…`, (signal, progress) =>
        engine.importSource({
          connection: conn,
          companyId: companyId(),
          source: { kind: "dataset", key: v.dataset, format: "json" },
          query: Object.keys(v.query).length ? v.query : null,
          destination: { kind: "newSheet" },
          signal,
          secrets: ctx.secrets(),
          onProgress: (p) => progress({ label: p.phase === "fetching" ? `Downloading ${v.dataset}…` : `Writing view ${v.name}…`, rows: p.rows, total: p.total, counting: p.phase === "fetching" ? "received" : "written" }),
        }),
      );
      if (result) {
        ctx.finishJob({ state: "done", text: importedText({ what: `view ${v.name}`, ...result }), rows: result.rowCount, table: result.tableName, sheet: result.sheetName });
        ctx.changed("bindings");
      }
    } catch (e) {
      const view = describeError(e, { connectionId: conn.id, baseUrl: conn.baseUrl, datasetKey: v.dataset, secrets: ctx.secrets(), requestTime: ctx.now().toISOString() });
      ctx.finishJob({ state: "error", text: `Import failed: ${view.title}.` });
      replace(errorHost, ctx.errorPanel(view, { retry: () => void importView(engine, v) }));
    }
  }

  async function remove(engine: Engine, v: SavedView): Promise<void> {
    try {
      await engine.deleteView(v.name);
      ctx.runtime?.workbookChanged?.(); // a =PPM.VIEW of it says so now
      ctx.status(`Deleted view ${v.name}.`);
      await refresh();
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
    }
  }

  async function exportViews(): Promise<void> {
    try {
      const engine = await ctx.engine();
      const text = engine.serializeViews(await engine.readViews());
      exportText.value = text;
      exportText.hidden = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
      objectUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      download.setAttribute("href", objectUrl);
      download.hidden = false;
      ctx.status("The views file is ready: save it, or copy the text below.");
    } catch (e) {
      replace(errorHost, ctx.errorPanel(describeError(e, { secrets: ctx.secrets() })));
    }
  }

  return { element, refresh };
}
