/**
 * The import panel for one dataset: destination, format, the local query builder and paste field
 * with a preview of what is sent and what is applied locally, then the import with progress and
 * Cancel. Loaded on first use (with the query engine it needs), not with the pane.
 */
import { h, replace } from "./dom";
import type { ManifestDatasetInfo } from "../service/manifest";
import type { LocalQuery } from "../query";
import { formatCount, importFormats } from "./datasets";
import { describeError } from "./errorView";
import {
  BuilderError,
  EMPTY_BUILDER,
  FILTER_OPS,
  FILTER_OP_LABELS,
  buildQuery,
  isEmptyQuery,
  queryText,
  foreignHost,
  readPasted,
  sentRequest,
  withoutCredentials,
  type BuilderState,
  type FilterOp,
} from "../addin/queryBuilder";
import type { PaneContext } from "./context";
import type { Engine } from "../addin/engine";
import { checkbox, focusControl, isChecked, radioGroup, radioValue, select, selectValue, setDisabled, setRadioValue, textArea, textInput, type SelectOption } from "./controls";

/** The import panel for one dataset. */
export function importPanel(ctx: PaneContext, engine: Engine, d: ManifestDatasetInfo, companyId: string, close: () => void): HTMLElement {
  const uid = `imp-${d.key.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const formats = importFormats(d.formats);
  const columns = d.columns.map((c) => ({ name: c.name, type: c.type }));
  const state: BuilderState = { ...EMPTY_BUILDER, filters: [] };
  let format: "json" | "csv" | "odata" = formats.includes("json") ? "json" : formats[0];
  let query: LocalQuery | null = {};
  const errorHost = h("div", { class: "error-host" });

  const dest = radioGroup({
    label: "Destination",
    value: "newSheet",
    choices: [
      { value: "newSheet", label: "New sheet", testid: "import-dest-new-sheet" },
      { value: "selection", label: "Existing sheet, at the selected cell", testid: "import-dest-selection" },
    ],
  });
  const fmt = radioGroup({
    label: "Format",
    value: format,
    choices: (["json", "csv", "odata"] as const).map((f) => ({ value: f, label: f === "odata" ? "OData" : f.toUpperCase(), testid: `import-format-${f}`, disabled: !formats.includes(f) })),
    onchange: (value) => {
      format = value as typeof format;
      update();
    },
  });

  // --- builder: columns to keep ---
  const colBoxes = columns.map((c) =>
    checkbox({ label: [document.createTextNode(c.name), h("span", { class: "type" }, ` ${c.type}`)], testid: "query-column", data: { column: c.name }, checked: true }),
  );
  const setAll = (on: boolean) => {
    for (const b of colBoxes) b.box.checked = on;
    update();
  };
  const colsAll = h("fluent-button", { type: "button", size: "small", "data-testid": "query-columns-all", onclick: () => setAll(true) }, "All");
  const colsNone = h("fluent-button", { type: "button", size: "small", "data-testid": "query-columns-none", onclick: () => setAll(false) }, "None");
  const colsFs = h(
    "fieldset",
    { class: "group columns", "data-testid": "query-columns" },
    h("legend", {}, "Columns to keep"),
    h("div", { class: "actions" }, colsAll, colsNone),
    h("div", { class: "checks" }, ...colBoxes.map((b) => b.row)),
  );
  colsFs.addEventListener("change", () => update());

  // --- builder: filters ---
  const filterList = h("div", { class: "filters" });
  const colOptions = (withNone: boolean): SelectOption[] => [...(withNone ? [{ value: "", label: "(none)" }] : []), ...columns.map((c) => ({ value: c.name, label: c.name }))];
  function renderFilters(): void {
    replace(
      filterList,
      ...state.filters.map((f, i) => {
        const col = select({ label: `Filter ${i + 1} column`, hideLabel: true, testid: "query-filter-column", options: colOptions(false), value: f.column });
        const op = select({ label: `Filter ${i + 1} comparison`, hideLabel: true, testid: "query-filter-op", options: FILTER_OPS.map((o) => ({ value: o, label: FILTER_OP_LABELS[o] })), value: f.op });
        const val = textInput({ label: `Filter ${i + 1} value`, hideLabel: true, testid: "query-filter-value", value: f.value });
        col.control.addEventListener("change", () => ((f.column = selectValue(col.control)), update()));
        op.control.addEventListener("change", () => ((f.op = selectValue(op.control) as FilterOp), update()));
        val.addEventListener("input", () => ((f.value = val.value), update()));
        return h(
          "div",
          { class: "filter-row", "data-testid": "query-filter-row", "data-index": String(i), role: "group", "aria-label": `Filter ${i + 1}` },
          col.label,
          op.label,
          col.control,
          op.control,
          val,
          h(
            "fluent-button",
            {
              type: "button",
              appearance: "subtle",
              size: "small",
              "data-testid": "query-filter-remove",
              "aria-label": `Remove filter ${i + 1}`,
              onclick: () => {
                state.filters.splice(i, 1);
                renderFilters();
                update();
                addFilter.focus();
              },
            },
            "Remove",
          ),
        );
      }),
    );
  }
  const addFilter = h(
    "fluent-button",
    {
      type: "button",
      size: "small",
      "data-testid": "query-filter-add",
      onclick: () => {
        state.filters.push({ column: columns[0]?.name ?? "", op: "eq", value: "" });
        renderFilters();
        update();
        const added = filterList.querySelector<HTMLElement>(`[data-index="${state.filters.length - 1}"] [data-testid="query-filter-value"]`);
        if (added) focusControl(added);
      },
    },
    "Add filter",
  );

  // --- builder: sort and top ---
  const sortCol = select({ label: "Sort by", testid: "query-sort-column", options: colOptions(true), value: "" });
  const sortDir = select({ label: "Direction", testid: "query-sort-dir", options: [{ value: "asc", label: "ascending" }, { value: "desc", label: "descending" }], value: "asc" });
  const top = textInput({ label: "Keep the first N rows", type: "number", testid: "query-top", placeholder: "all" });
  sortCol.control.addEventListener("change", () => update());
  sortDir.control.addEventListener("change", () => update());
  top.addEventListener("input", () => update());

  // --- paste field and preview ---
  const paste = textArea({ label: "Or paste an OData address or $filter=… text (replaces the options above)", testid: "query-paste", rows: 2, spellcheck: false, placeholder: "https://…/api/bi/odata/v1/financials?$filter=… or $filter=…&$top=…" });
  paste.addEventListener("input", () => update());
  const queryError = h("div", { class: "field-error", role: "alert", "data-testid": "query-error" });
  const sent = h("code", { "data-testid": "query-preview-sent" });
  const local = h("code", { "data-testid": "query-preview-local" });
  const removedHost = h("div");

  const start = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "import-start", "aria-keyshortcuts": "Control+Enter", title: "Import (Ctrl+Enter)", onclick: () => void run() }, "Import");

  function readBuilder(): LocalQuery {
    state.keep = colBoxes.filter((b) => isChecked(b.box)).map((b) => b.box.dataset.column!);
    state.sortColumn = selectValue(sortCol.control);
    state.sortDir = selectValue(sortDir.control) === "desc" ? "desc" : "asc";
    state.top = top.value;
    return buildQuery(state, columns);
  }

  function update(): void {
    queryError.textContent = "";
    replace(removedHost);
    // Each control is disabled itself: Fluent's controls do not all follow a disabled fieldset.
    const builderControls = [colsFs, colsAll, colsNone, ...colBoxes.map((b) => b.box), ...filterList.querySelectorAll("fluent-dropdown, fluent-text-input, fluent-button"), addFilter, sortCol.control, sortDir.control, top];
    const pasted = paste.value.trim() !== "";
    for (const c of builderControls) setDisabled(c, pasted);
    try {
      if (pasted) {
        const p = readPasted(paste.value, engine.query);
        if (p.datasetKey && p.datasetKey !== d.key) throw new BuilderError("filter", `The pasted address is for dataset "${p.datasetKey}", not "${d.key}". Open that dataset to import it.`);
        if (p.format && formats.includes(p.format) && p.format !== format) {
          format = p.format;
          setRadioValue(fmt.group, p.format);
        }
        const notes: string[] = [];
        if (p.removed.length) {
          // Clear the credential from the field too, not only from what is used.
          const clean = withoutCredentials(paste.value, engine.query);
          if (clean !== paste.value) paste.value = clean;
          notes.push(`Removed from the pasted address: ${p.removed.join(", ")}. The connection's own token is used, in a header.`);
        }
        const conn = ctx.activeConnection();
        const other = conn ? foreignHost(paste.value, conn.baseUrl) : null;
        if (other) notes.push(`The pasted address is on ${other.pasted}; the active connection's host ${other.used} is used instead. Only the query options are taken from the address.`);
        if (notes.length) replace(removedHost, ...notes.map((n, i) => h("div", { class: "note", "data-testid": i === 0 && p.removed.length ? "query-preview-removed" : "query-preview-host" }, n)));
        query = p.query;
      } else {
        query = readBuilder();
      }
      // Columns are checked now when the manifest lists them; otherwise after the download.
      if (!isEmptyQuery(query) && d.columns.length > 0) engine.query.validateQuery(query, d.columns);
      start.disabled = false;
    } catch (e) {
      query = null;
      const msg = e instanceof BuilderError ? e.message : describeError(e).message;
      queryError.textContent = msg;
      start.disabled = true;
    }
    const conn = ctx.activeConnection();
    sent.textContent = conn ? sentRequest(engine.paths, conn.baseUrl, d.key, format) : "";
    local.textContent = query ? queryText(query) : "—";
  }

  async function run(): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn || query === null) return;
    replace(errorHost);
    const destination = radioValue(dest.group) === "selection" ? ({ kind: "selection" } as const) : ({ kind: "newSheet" } as const);
    const q = query;
    start.disabled = true;
    try {
      const result = await ctx.runJob("import", `Importing ${d.name || d.key}…`, (signal, progress) =>
        engine.importSource({
          connection: conn,
          companyId,
          source: { kind: "dataset", key: d.key, format },
          query: isEmptyQuery(q) ? null : q,
          destination,
          signal,
          secrets: ctx.secrets(),
          onProgress: (p) =>
            progress(
              p.phase === "fetching"
                ? // The manifest's row count is the export's; the download is counted against it.
                  { label: `Downloading ${d.key} (${format.toUpperCase()})…`, rows: p.rows, total: d.rowCount ?? undefined, counting: "received" }
                : { label: `Writing ${d.key} to the sheet…`, rows: p.rows, total: p.total, counting: "written" },
            ),
        }),
      );
      if (result) {
        const filtered = result.fetchedRows !== result.rowCount ? ` (${formatCount(result.fetchedRows)} received, local query applied)` : "";
        ctx.finishJob({
          state: "done",
          text: `Imported ${formatCount(result.rowCount)} row${result.rowCount === 1 ? "" : "s"} of ${d.key} into table ${result.tableName} on sheet ${result.sheetName}${filtered}.`,
          rows: result.rowCount,
          table: result.tableName,
          sheet: result.sheetName,
        });
        ctx.changed("bindings");
      }
    } catch (e) {
      const view = describeError(e, { connectionId: conn.id, baseUrl: conn.baseUrl, datasetKey: d.key, secrets: ctx.secrets(), requestTime: ctx.now().toISOString() });
      ctx.finishJob({ state: "error", text: `Import failed: ${view.title}.` });
      replace(errorHost, ctx.errorPanel(view, { retry: () => void run() }));
    } finally {
      start.disabled = query === null;
    }
  }

  const panel = h(
    "section",
    { class: "import-panel card", "data-testid": "import-panel", "data-key": d.key, "aria-labelledby": `${uid}-title` },
    h(
      "div",
      { class: "item-head" },
      h("h3", { id: `${uid}-title`, tabindex: "-1" }, `Import ${d.name || d.key}`),
      h("fluent-button", { type: "button", size: "small", "data-testid": "import-close", onclick: close }, "Back to datasets"),
    ),
    h("p", { class: "meta" }, `${d.key} · schema ${d.schemaVersion ?? "—"} · ${d.rowCount === null ? "no export" : `${formatCount(d.rowCount)} rows`}`),
    dest.block,
    fmt.block,
    // Import sits right after the two choices every import needs, so it is a few Tab presses away;
    // the optional query below still applies (and Ctrl+Enter imports from anywhere in the panel).
    h("div", { class: "actions" }, start),
    h(
      "details",
      { class: "query", open: true, "data-testid": "query-section" },
      h("summary", { "data-testid": "query-toggle" }, "Local query (optional)"),
      h("p", { class: "hint" }, "The service always sends the complete table; these options are applied here, before writing."),
      colsFs,
      h("fieldset", { class: "group" }, h("legend", {}, "Filter rows (all must match)"), filterList, addFilter),
      h("div", { class: "row" }, h("div", { class: "field" }, sortCol.label, sortCol.control), h("div", { class: "field" }, sortDir.label, sortDir.control)),
      h("div", { class: "field" }, top),
      h("div", { class: "field" }, paste),
    ),
    queryError,
    h(
      "dl",
      { class: "preview" },
      h("dt", {}, "Sent to the service"),
      h("dd", {}, sent),
      h("dt", {}, "Applied locally"),
      h("dd", {}, local),
    ),
    removedHost,
    errorHost,
  );
  panel.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !start.disabled) {
      ev.preventDefault();
      void run();
    }
  });
  update();
  return panel;
}
