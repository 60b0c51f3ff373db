/**
 * The import panel for one dataset: destination, format, the local query builder (with its
 * Summarize step) and paste field with a preview of what is sent, what is applied locally and what
 * a summary will hold, then the import with progress and Cancel. An export larger than a sheet is
 * refused here, before downloading, until a summary or filter is chosen. Loaded on first use (with
 * the query engine it needs), not with the pane.
 */
import { h, replace } from "./dom";
import type { ManifestDatasetInfo } from "../service/manifest";
import type { LocalQuery } from "../query";
import { formatCount, importedText, importFormats } from "./datasets";
import { describeError } from "./errorView";
import {
  BuilderError,
  EMPTY_BUILDER,
  FILTER_OPS,
  FILTER_OP_LABELS,
  SUMMARY_METHODS,
  SUMMARY_METHOD_LABELS,
  sheetTypeWords,
  buildQuery,
  columnsFor,
  isSummaryActive,
  resultText,
  suggestAlias,
  summaryColumnNames,
  isEmptyQuery,
  queryText,
  foreignHost,
  readPasted,
  sentRequest,
  withoutCredentials,
  type BuilderState,
  type FilterOp,
  type SummaryAggregate,
  type SummaryMethod,
} from "../addin/queryBuilder";
import type { PaneContext } from "./context";
import type { Engine } from "../addin/engine";
import { checkbox, focusControl, isChecked, radioGroup, radioValue, select, selectValue, setDisabled, setInvalid, setRadioValue, setSelectOptions, textArea, textInput, withHint, type SelectOption } from "./controls";
import { destinationChoice } from "./common";
import { isValidTableName } from "../workbook/names";

/** The name an import gives its table when the user leaves the name empty (src/workbook/names.ts). */
function defaultTableName(key: string): string {
  return `ppm_${key.replace(/[^A-Za-z0-9_.]/g, "_")}`;
}

/** The import panel for one dataset. */
export function importPanel(ctx: PaneContext, engine: Engine, d: ManifestDatasetInfo, companyId: string, close: () => void): HTMLElement {
  const uid = `imp-${d.key.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const formats = importFormats(d.formats);
  const columns = d.columns.map((c) => ({ name: c.name, type: c.type, ...(c.sourceType ? { sourceType: c.sourceType } : {}) }));
  // `auto`: the alias is still the suggested one, so it follows the method and column.
  const summary: { groupBy: string[]; aggregates: Array<SummaryAggregate & { auto: boolean }> } = { groupBy: [], aggregates: [] };
  const state: BuilderState = { ...EMPTY_BUILDER, filters: [], summary };
  let format: "json" | "csv" | "odata" = formats.includes("json") ? "json" : formats[0];
  let query: LocalQuery | null = {};
  const errorHost = h("div", { class: "error-host" });

  const dest = destinationChoice("import");
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
    checkbox({ label: [document.createTextNode(c.name), h("span", { class: "type" }, ` ${sheetTypeWords(c)}`)], testid: "query-column", data: { column: c.name }, checked: true }),
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

  // --- builder: the Summarize step (OData $apply: groupby + aggregate) ---
  const groupBoxes = columns.map((c) =>
    checkbox({ label: [document.createTextNode(c.name), h("span", { class: "type" }, ` ${sheetTypeWords(c)}`)], testid: "summary-group-column", data: { column: c.name } }),
  );
  const groupFs = h(
    "fieldset",
    { class: "group columns", "data-testid": "summary-group" },
    h("legend", {}, "Group by (one row per combination, in the order checked)"),
    h("div", { class: "checks" }, ...groupBoxes.map((b) => b.row)),
  );
  groupFs.addEventListener("change", (ev) => {
    const box = ev.target instanceof Element ? ev.target.closest<FluentCheckboxElement>("fluent-checkbox") : null;
    const name = box?.dataset.column;
    if (!box || name === undefined) return;
    summary.groupBy = summary.groupBy.filter((g) => g !== name);
    if (isChecked(box)) summary.groupBy.push(name);
    update();
  });
  const aggList = h("div", { class: "aggregates", "data-testid": "summary-aggregates" });
  const aliasTaken = (except: number) => [...columns.map((c) => c.name), ...summary.aggregates.filter((_, k) => k !== except).map((a) => a.alias)];
  const fitColumn = (method: SummaryMethod, current: string) => {
    if (method === "count") return "";
    const fit = columnsFor(method, columns);
    return fit.some((c) => c.name === current) ? current : (fit[0]?.name ?? "");
  };
  function renderAggregates(focus?: { index: number; testid: string }): void {
    replace(
      aggList,
      ...summary.aggregates.map((a, i) => {
        const what = `Aggregate ${i + 1}`;
        const method = select({
          label: `${what}: what to compute`,
          hideLabel: true,
          testid: "summary-aggregate-method",
          options: SUMMARY_METHODS.map((m) => ({ value: m, label: SUMMARY_METHOD_LABELS[m] })),
          value: a.method,
        });
        const fit = columnsFor(a.method, columns);
        const col = select({ label: `${what}: column`, hideLabel: true, testid: "summary-aggregate-column", options: fit.map((c) => ({ value: c.name, label: c.name })), value: a.column });
        col.control.hidden = a.method === "count";
        const alias = textInput({ label: `${what}: name of its result column`, hideLabel: true, testid: "summary-aggregate-alias", value: a.alias, spellcheck: false, placeholder: "name" });
        const reSuggest = () => {
          if (a.auto) a.alias = suggestAlias(a.method, a.column, aliasTaken(i));
        };
        method.control.addEventListener("change", () => {
          a.method = selectValue(method.control) as SummaryMethod;
          a.column = fitColumn(a.method, a.column);
          reSuggest();
          renderAggregates({ index: i, testid: "summary-aggregate-method" });
          update();
        });
        col.control.addEventListener("change", () => {
          a.column = selectValue(col.control);
          reSuggest();
          alias.value = a.alias;
          update();
        });
        alias.addEventListener("input", () => {
          a.alias = alias.value;
          a.auto = false;
          update();
        });
        return h(
          "div",
          { class: a.method === "count" ? "aggregate-row rows-count" : "aggregate-row", "data-testid": "summary-aggregate-row", "data-index": String(i), role: "group", "aria-label": what },
          method.label,
          col.label,
          method.control,
          col.control,
          h("div", { class: "alias" }, h("span", { "aria-hidden": "true" }, "as"), alias),
          h(
            "fluent-button",
            {
              type: "button",
              appearance: "subtle",
              size: "small",
              "data-testid": "summary-aggregate-remove",
              "aria-label": `Remove aggregate ${i + 1}`,
              onclick: () => {
                summary.aggregates.splice(i, 1);
                renderAggregates();
                update();
                addAggregate.focus();
              },
            },
            "Remove",
          ),
        );
      }),
    );
    const target = focus ? aggList.querySelector<HTMLElement>(`[data-index="${focus.index}"] [data-testid="${focus.testid}"]`) : null;
    if (target) focusControl(target);
  }
  const addAggregate = h(
    "fluent-button",
    {
      type: "button",
      size: "small",
      "data-testid": "summary-aggregate-add",
      onclick: () => {
        const method: SummaryMethod = columnsFor("sum", columns).length > 0 ? "sum" : "count";
        // An amount is what is summed: the first decimal column (budget), not the first number (fiscal_year).
        const column = method === "sum" ? (columns.find((c) => c.type === "decimal")?.name ?? fitColumn(method, "")) : fitColumn(method, "");
        summary.aggregates.push({ method, column, alias: suggestAlias(method, column, aliasTaken(-1)), auto: true });
        renderAggregates({ index: summary.aggregates.length - 1, testid: "summary-aggregate-method" });
        update();
      },
    },
    "Add aggregate",
  );
  const summaryStep = h(
    "details",
    { class: "summary-step", "data-testid": "summary-section" },
    h("summary", { "data-testid": "summary-toggle" }, "Summarize (optional)"),
    h(
      "p",
      { class: "hint" },
      "One row per combination of the group-by columns, with totals, averages or counts over its rows. The filters above choose the rows that are summarized; sort and first N rows apply to the summary.",
    ),
    columns.length === 0 ? h("p", { class: "note" }, "The manifest lists no columns for this dataset: paste a summary below as $apply=… instead.") : null,
    groupFs,
    h("fieldset", { class: "group" }, h("legend", {}, "Aggregates"), aggList, addAggregate),
  );

  // --- builder: sort and top ---
  const sortCol = select({ label: "Sort by", testid: "query-sort-column", options: colOptions(true), value: "" });
  const sortDir = select({ label: "Direction", testid: "query-sort-dir", options: [{ value: "asc", label: "ascending" }, { value: "desc", label: "descending" }], value: "asc" });
  const top = textInput({ label: "Keep the first N rows", type: "number", testid: "query-top", placeholder: "all" });
  sortCol.control.addEventListener("change", () => update());
  sortDir.control.addEventListener("change", () => update());
  top.addEventListener("input", () => update());

  // --- paste field and preview ---
  const paste = textArea({ label: "Or paste an OData address or $filter=… / $apply=… text (replaces the options above)", testid: "query-paste", rows: 2, spellcheck: false, placeholder: "https://…/api/bi/odata/v1/financials?$filter=… or $filter=…&$top=…" });
  paste.addEventListener("input", () => update());
  const queryError = h("div", { class: "field-error", role: "alert", "data-testid": "query-error" });
  const sent = h("code", { "data-testid": "query-preview-sent" });
  const local = h("code", { "data-testid": "query-preview-local" });
  const result = h("code", { "data-testid": "query-preview-result" });
  const resultTerm = h("dt", { hidden: true }, "Result");
  const resultDef = h("dd", { hidden: true }, result);
  const keepNote = h("p", { class: "note", "data-testid": "query-columns-summary-note", hidden: true }, "A summary holds its group-by columns and aggregates.");
  const removedHost = h("div");

  const start = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "import-start", "aria-keyshortcuts": "Control+Enter", title: "Import (Ctrl+Enter)", onclick: () => void run() }, "Import");
  // The table's name, chosen at import (issue #25): tables are told apart by name in formulas, the
  // Refresh tab and the ribbon's summary. Empty: ppm_<key>, numbered when taken.
  const nameInput = textInput({ label: "Table name (optional)", testid: "import-table-name", placeholder: defaultTableName(d.key), spellcheck: false, maxlength: 255 });
  const nameField = withHint(nameInput, `Empty: ${defaultTableName(d.key)} (numbered if taken). Letters, digits, _ and ., starting with a letter or _.`);
  const nameError = h("div", { class: "field-error", role: "alert", "data-testid": "import-table-name-error" });
  nameField.append(nameError);
  nameInput.addEventListener("input", () => update());
  // Larger than a sheet: said before any download, from the manifest's row_count.
  let refused = false;
  // "Save as view" (issue #28): this dataset and the query as it stands, kept in the workbook.
  const viewName = textInput({ label: "View name", testid: "view-name", maxlength: 80, placeholder: "e.g. Budget by year" });
  const viewNote = h("p", { class: "note", role: "status", "data-testid": "view-saved" });
  const saveViewBtn = h("fluent-button", { type: "button", size: "small", "data-testid": "view-save", onclick: () => void saveAsView() }, "Save as view");
  const tooLargeText = h("p", { "data-testid": "import-too-large-message" });
  const tooLarge = h(
    "div",
    { class: "too-large", "data-testid": "import-too-large", role: "status", hidden: true },
    tooLargeText,
    h("p", { class: "hint" }, "Import it as a summary (group-by columns with totals or counts), or with a filter, so the result fits in a sheet. Either is computed as the rows arrive."),
    h("fluent-button", { type: "button", size: "small", "data-testid": "import-summarize", onclick: () => openSummarize() }, "Summarize"),
  );

  function readBuilder(): LocalQuery {
    state.keep = colBoxes.filter((b) => isChecked(b.box)).map((b) => b.box.dataset.column!);
    state.sortColumn = selectValue(sortCol.control);
    state.sortDir = selectValue(sortDir.control) === "desc" ? "desc" : "asc";
    state.top = top.value;
    return buildQuery(state, columns);
  }

  /** Sort choices follow what the rows will be: the summary's columns when there is one. */
  let sortKey = "";
  function refreshSortOptions(): void {
    const names = isSummaryActive(summary) ? summaryColumnNames(summary).filter((n) => n !== "") : columns.map((c) => c.name);
    const key = JSON.stringify(names);
    if (key === sortKey) return;
    sortKey = key;
    const current = selectValue(sortCol.control);
    setSelectOptions(sortCol.control, [{ value: "", label: "(none)" }, ...names.map((n) => ({ value: n, label: n }))], names.includes(current) ? current : "");
  }

  function openSummarize(): void {
    querySection.open = true;
    summaryStep.open = true;
    const target = paste.value.trim() !== "" ? paste : (groupBoxes.find((b) => !b.box.hasAttribute("disabled"))?.box ?? addAggregate);
    summaryStep.scrollIntoView({ block: "nearest" });
    focusControl(target);
  }

  function update(): void {
    queryError.textContent = "";
    replace(removedHost);
    const pasted = paste.value.trim() !== "";
    const summarizing = !pasted && isSummaryActive(summary);
    // Each control is disabled itself: Fluent's controls do not all follow a disabled fieldset.
    const builderControls = [
      ...filterList.querySelectorAll("fluent-dropdown, fluent-text-input, fluent-button"),
      addFilter,
      groupFs,
      ...groupBoxes.map((b) => b.box),
      ...aggList.querySelectorAll("fluent-dropdown, fluent-text-input, fluent-button"),
      addAggregate,
      sortCol.control,
      sortDir.control,
      top,
    ];
    for (const c of builderControls) setDisabled(c, pasted);
    for (const c of [colsFs, colsAll, colsNone, ...colBoxes.map((b) => b.box)]) setDisabled(c, pasted || summarizing);
    keepNote.hidden = !summarizing;
    refreshSortOptions();
    let resultColumns: string | null = null;
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
      // Columns are checked now when the manifest lists them; otherwise after the download. The
      // engine's own check, so $orderby/$top after a summary are held to the summary's columns.
      if (!isEmptyQuery(query) && d.columns.length > 0) {
        const out = engine.query.validateQuery(query, d.columns);
        if (query.apply !== undefined) resultColumns = resultText(out);
      }
    } catch (e) {
      query = null;
      const msg = e instanceof BuilderError ? e.message : describeError(e).message;
      queryError.textContent = msg;
    }
    const plan = query ? engine.query.streamingPlan(query, d.rowCount, d.key) : null;
    refused = !!plan?.refusal;
    tooLarge.hidden = !refused;
    tooLargeText.textContent = plan?.refusal?.message ?? "";
    const name = nameInput.value.trim();
    const badName = name !== "" && !isValidTableName(name);
    nameError.textContent = badName ? `"${name}" cannot be a table name: start with a letter or _, then letters, digits, _ or .; not a cell address such as A1 or R1C1.` : "";
    setInvalid(nameInput, badName);
    start.disabled = query === null || refused || badName;
    const conn = ctx.activeConnection();
    sent.textContent = conn ? sentRequest(engine.paths, conn.baseUrl, d.key, format) : "";
    local.textContent = query ? queryText(query) : "—";
    result.textContent = resultColumns ?? "";
    resultTerm.hidden = resultDef.hidden = resultColumns === null;
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
          // The engine refuses an export larger than a sheet without a summary or filter, as the pane does.
          sourceRows: d.rowCount,
          ...(nameInput.value.trim() ? { tableName: nameInput.value.trim() } : {}),
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
        ctx.finishJob({
          state: "done",
          text: importedText({ what: d.key, ...result }),
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
      start.disabled = query === null || refused || (nameInput.value.trim() !== "" && !isValidTableName(nameInput.value.trim()));
    }
  }

  async function saveAsView(): Promise<void> {
    viewNote.textContent = "";
    const conn = ctx.activeConnection();
    if (query === null) {
      viewNote.textContent = "Correct the query first: a view keeps the query as it is.";
      return;
    }
    try {
      await engine.saveView({ name: viewName.value, dataset: d.key, query, environment: conn?.baseUrl, companyId, savedAt: ctx.now().toISOString() }, ctx.secrets());
      ctx.runtime?.workbookChanged?.(); // a =PPM.VIEW of that name shows it now
      viewNote.textContent = `Saved view ${viewName.value.trim()}. Use it with =PPM.VIEW("${viewName.value.trim()}") or import it from the Datasets list.`;
    } catch (e) {
      viewNote.textContent = e instanceof Error ? e.message : String(e);
    }
  }

  const querySection = h(
    "details",
    { class: "query", open: true, "data-testid": "query-section" },
    h("summary", { "data-testid": "query-toggle" }, "Local query (optional)"),
    h("p", { class: "hint" }, "The service always sends the complete table; these options are applied here, before writing."),
    colsFs,
    keepNote,
    h("fieldset", { class: "group" }, h("legend", {}, "Filter rows (all must match)"), filterList, addFilter),
    summaryStep,
    h("div", { class: "row" }, h("div", { class: "field" }, sortCol.label, sortCol.control), h("div", { class: "field" }, sortDir.label, sortDir.control)),
    h("div", { class: "field" }, top),
    h("div", { class: "field" }, paste),
  );

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
    nameField,
    tooLarge,
    querySection,
    queryError,
    h(
      "dl",
      { class: "preview" },
      h("dt", {}, "Sent to the service"),
      h("dd", {}, sent),
      h("dt", {}, "Applied locally"),
      h("dd", {}, local),
      resultTerm,
      resultDef,
    ),
    removedHost,
    h("div", { class: "row save-view" }, h("div", { class: "field" }, viewName), h("div", { class: "actions" }, saveViewBtn)),
    viewNote,
    errorHost,
    // The primary action ends the form and stays in view while it scrolls (issue #25); Ctrl+Enter
    // imports from anywhere in the panel.
    h("div", { class: "import-actions", "data-testid": "import-actions" }, start, h("span", { class: "hint", "data-testid": "import-shortcut" }, "or Ctrl+Enter")),
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
