/**
 * Datasets: the manifest's list (search, state per dataset, reporting disabled or absent) and the
 * entry to the import panel (`importPanel.ts`).
 */
import { h, replace } from "./dom";
import type { ManifestDatasetInfo, ManifestInfo } from "../service/manifest";
import { isPpmError } from "../service/errors";
import { datasetView, filterDatasets, formatCount, type DatasetView } from "./datasets";
import { describeError } from "./errorView";
import type { PaneContext, TabName } from "./context";
import { noConnection } from "./common";
import { textInput } from "./controls";
import { viewsSection } from "./viewsPanel";

type Loaded = { connectionId: string; manifest: ManifestInfo } | null;

export function mountDatasets(panel: HTMLElement, ctx: PaneContext, onShown: (l: (t: TabName) => void) => void): void {
  const search = textInput({ label: "Search datasets", hideLabel: true, type: "search", testid: "datasets-search", placeholder: "Search by name or key" });
  const reload = h("fluent-button", { type: "button", "data-testid": "datasets-reload", onclick: () => void load(true) }, "Reload");
  const company = h("span", { class: "meta", "data-testid": "datasets-company" });
  const toolbar = h("div", { class: "toolbar" }, search, reload);
  const body = h("div", { class: "body" });
  let loaded: Loaded = null;
  let loading: { id: string; controller: AbortController } | null = null;
  let openKey: string | null = null;
  // Saved views (issue #28): listed under the datasets, read again whenever the list is shown.
  const viewsCard = viewsSection(ctx, () => loaded?.manifest.companyId ?? null);

  search.addEventListener("input", () => renderList());

  function setChrome(visible: boolean): void {
    toolbar.hidden = !visible;
    company.hidden = !visible;
  }

  async function load(force = false): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn) {
      loaded = null;
      setChrome(false);
      replace(body, noConnection(ctx));
      return;
    }
    if (!force && loaded?.connectionId === conn.id) return renderList();
    loading?.controller.abort();
    const controller = new AbortController();
    loading = { id: conn.id, controller };
    openKey = null;
    setChrome(true);
    company.textContent = "";
    replace(body, h("div", { class: "loading", "data-testid": "datasets-loading", role: "status" }, `Reading the dataset list of ${conn.name}…`));
    try {
      const engine = await ctx.engine();
      const manifest = await engine.manifest(conn, controller.signal);
      if (controller.signal.aborted) return;
      ctx.store.setCompanyId(conn.id, manifest.companyId);
      loaded = { connectionId: conn.id, manifest };
      company.textContent = `Company ${manifest.companyId} · ${formatCount(manifest.datasets.length)} dataset${manifest.datasets.length === 1 ? "" : "s"}`;
      renderList();
    } catch (e) {
      if (controller.signal.aborted) return;
      loaded = null;
      if (isPpmError(e, "bi_reporting_disabled")) {
        setChrome(false);
        replace(
          body,
          h(
            "div",
            { class: "state-panel", role: "alert", "data-testid": "reporting-disabled" },
            h("h3", {}, "Reporting is not enabled for this company"),
            h("p", {}, `The service says reporting (BI) is not enabled for ${conn.name}, or the company is not eligible. Datasets cannot be listed or imported until an administrator enables it.`),
            h("p", {}, "Snapshots and records may still be available in their tabs."),
          ),
        );
        ctx.announce(`${conn.name}: reporting is not enabled for this company.`);
        return;
      }
      if (isPpmError(e, "route_absent")) {
        setChrome(false);
        replace(body, h("div", { class: "state-panel", "data-testid": "reporting-absent" }, h("p", {}, "This environment does not offer reporting datasets, so this section is hidden. Snapshots may still be available.")));
        return;
      }
      const view = describeError(e, { connectionId: conn.id, baseUrl: conn.baseUrl, secrets: ctx.secrets() });
      replace(body, ctx.errorPanel(view, { retry: () => void load(true) }));
      ctx.announce(view.title);
    } finally {
      if (loading?.controller === controller) loading = null;
    }
  }

  function views(): Array<DatasetView & { info: ManifestDatasetInfo }> {
    if (!loaded) return [];
    const now = ctx.now();
    return loaded.manifest.datasets.map((d) => ({
      ...datasetView(
        {
          key: d.key,
          name: d.name,
          schema_version: d.schemaVersion ?? "—",
          formats: d.formats,
          artifacts: { generated_at: d.generatedAt, latest_successful_generated_at: d.latestSuccessfulGeneratedAt, row_count: d.rowCount },
          status: d.status,
        },
        now,
      ),
      info: d,
    }));
  }

  function renderList(): void {
    if (!loaded) return;
    if (openKey) return;
    const all = views();
    const shown = filterDatasets(all, search.value);
    if (shown.length === 0) {
      replace(body, h("p", { class: "empty", "data-testid": "datasets-empty" }, all.length ? `No dataset matches "${search.value.trim()}".` : "The manifest lists no datasets."));
      return;
    }
    replace(body, h("ul", { class: "list", "data-testid": "datasets-list", "aria-label": "Datasets" }, ...shown.map((v) => row(v))), viewsCard.element);
    void viewsCard.refresh();
  }

  function row(v: DatasetView & { info: ManifestDatasetInfo }): HTMLLIElement {
    const importBtn = h(
      "fluent-button",
      { type: "button", appearance: "primary", size: "small", "data-testid": "dataset-import", disabled: v.importable ? null : true, "aria-label": `Import ${v.name}`, onclick: () => void openImport(v.info) },
      "Import…",
    );
    return h(
      "li",
      { class: `item state-${v.state}`, "data-testid": "dataset-row", "data-key": v.key, "data-state": v.state, "aria-disabled": v.importable ? null : "true" },
      h("div", { class: "item-head" }, h("span", { class: "item-title", "data-testid": "dataset-name" }, v.name), h("code", { "data-testid": "dataset-key" }, v.key)),
      h(
        "div",
        { class: "meta" },
        "Schema ",
        h("span", { "data-testid": "dataset-schema" }, v.schemaVersion),
        " · ",
        h("span", { "data-testid": "dataset-rows", "data-count": v.rowCount === null ? null : String(v.rowCount) }, v.rowsText),
        " · ",
        h("span", { "data-testid": "dataset-formats" }, v.formatsText || "—"),
      ),
      h(
        "div",
        { class: "meta" },
        v.generatedAt ? "Generated " : "",
        h("time", { "data-testid": "dataset-generated", datetime: v.generatedAt ?? null, title: v.generatedAbsolute || null }, v.generatedAt ? v.generatedRelative : "No export yet"),
        v.generatedAbsolute ? h("span", { class: "abs" }, " (", h("span", { "data-testid": "dataset-generated-absolute" }, v.generatedAbsolute), ")") : null,
      ),
      v.note ? h("div", { class: `note state-note ${v.state}`, "data-testid": "dataset-state-note" }, v.note) : null,
      h("div", { class: "actions" }, importBtn),
    );
  }

  async function openImport(d: ManifestDatasetInfo): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn || !loaded) return;
    let engine: Awaited<ReturnType<PaneContext["engine"]>>;
    let importPanel: typeof import("./importPanel").importPanel;
    try {
      [engine, { importPanel }] = await Promise.all([ctx.engine(), import(/* webpackChunkName: "import" */ "./importPanel")]);
    } catch (e) {
      // A chunk that cannot be fetched (offline, add-in updated meanwhile): say so, keep the list.
      body.prepend(ctx.errorPanel(describeError(e, { secrets: ctx.secrets() }), { retry: () => void openImport(d) }));
      return;
    }
    openKey = d.key;
    setChrome(false);
    replace(body, importPanel(ctx, engine, d, loaded.manifest.companyId, () => {
      openKey = null;
      setChrome(true);
      renderList();
      body.querySelector<HTMLElement>(`[data-key="${CSS.escape(d.key)}"] [data-testid="dataset-import"]`)?.focus();
    }));
    body.querySelector<HTMLElement>("h3")?.focus();
  }

  replace(panel, h("h2", {}, "Datasets"), company, toolbar, body);
  onShown((tab) => {
    if (tab === "datasets") void load(false);
  });
  const invalidate = () => {
    loaded = null;
    openKey = null;
    if (!panel.hidden) void load(true);
  };
  ctx.on("active", invalidate);
  ctx.on("credentials", invalidate);
}
