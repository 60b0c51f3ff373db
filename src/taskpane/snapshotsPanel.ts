/**
 * Snapshots: the six snapshot endpoints plus the combined resource view (project and proposal
 * resources with overlapping non-project time de-duplicated by the service client), each imported
 * as a bound, refreshable table like a dataset.
 */
import { h, replace } from "./dom";
import { describeError } from "./errorView";
import { importedText } from "./datasets";
import { destinationChoice, noConnection } from "./common";
import type { PaneContext, TabName } from "./context";
import { radioValue } from "./controls";

/** What each snapshot is, in the user's words. The combined view's rule is the spec's. */
export const SNAPSHOTS: ReadonlyArray<{ endpoint: string; label: string; hint: string }> = [
  { endpoint: "projects", label: "Projects", hint: "List of projects." },
  { endpoint: "proposals", label: "Proposals", hint: "List of proposals." },
  { endpoint: "projectResources", label: "Resources: projects", hint: "One row per resource and period, for projects." },
  { endpoint: "proposalResources", label: "Resources: proposals", hint: "One row per resource and period, for proposals." },
  {
    endpoint: "combinedResources",
    label: "Resources: combined",
    hint: "Projects and proposals together; overlapping non-project time is counted once (work type, resource, category, fiscal year, period).",
  },
  { endpoint: "projectScores", label: "Scores: projects", hint: "One row per active project and scoring criterion." },
  { endpoint: "proposalScores", label: "Scores: proposals", hint: "One row per proposal and scoring criterion." },
];

export function mountSnapshots(panel: HTMLElement, ctx: PaneContext, onShown: (l: (t: TabName) => void) => void): void {
  const body = h("div", { class: "body" });
  const errorHost = h("div", { class: "error-host" });
  /** Probe result per connection id: is the snapshot group absent in this environment? */
  const absent = new Map<string, boolean>();

  const dest = destinationChoice("snapshot");

  async function render(): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn) return replace(body, noConnection(ctx));
    if (!absent.has(conn.id)) {
      replace(body, h("div", { class: "loading", role: "status" }, "Checking what this environment offers…"));
      try {
        const engine = await ctx.engine();
        const probe = await engine.probe(conn);
        // Only a missing route hides the section; errors (401, network) show up when importing.
        absent.set(conn.id, probe.details.snapshot.state === "absent");
      } catch {
        absent.set(conn.id, false);
      }
    }
    if (ctx.activeConnection()?.id !== conn.id) return;
    if (absent.get(conn.id)) {
      replace(body, h("div", { class: "state-panel", "data-testid": "snapshots-absent" }, h("p", {}, "This environment does not offer snapshot endpoints, so snapshots are hidden here.")));
      return;
    }
    replace(
      body,
      dest.block,
      h(
        "ul",
        { class: "list", "aria-label": "Snapshots" },
        ...SNAPSHOTS.map((s) =>
          h(
            "li",
            { class: "item", "data-testid": "snapshot-row", "data-endpoint": s.endpoint },
            h("div", { class: "item-head" }, h("span", { class: "item-title" }, s.label)),
            h("div", { class: "meta" }, s.hint),
            h("div", { class: "actions" }, h("fluent-button", { type: "button", appearance: "primary", size: "small", "data-testid": "snapshot-import", "aria-label": `Import ${s.label}`, onclick: () => void run(s) }, "Import")),
          ),
        ),
      ),
      errorHost,
    );
  }

  async function run(s: (typeof SNAPSHOTS)[number]): Promise<void> {
    const conn = ctx.activeConnection();
    if (!conn) return;
    replace(errorHost);
    const destination = radioValue(dest.group) === "selection" ? ({ kind: "selection" } as const) : ({ kind: "newSheet" } as const);
    try {
      const engine = await ctx.engine();
      const result = await ctx.runJob("snapshot", `Importing ${s.label}…`, (signal, progress) =>
        engine.importSource({
          connection: conn,
          companyId: ctx.store.get(conn.id)?.companyId ?? null,
          source: { kind: "snapshot", endpoint: s.endpoint as "projects" },
          query: null,
          destination,
          signal,
          secrets: ctx.secrets(),
          onProgress: (p) => progress(p.phase === "fetching" ? { label: `Downloading ${s.label}…` } : { label: `Writing ${s.label} to the sheet…`, rows: p.rows, total: p.total }),
        }),
      );
      if (result) {
        ctx.finishJob({
          state: "done",
          text: importedText({ what: s.label, ...result }),
          rows: result.rowCount,
          table: result.tableName,
          sheet: result.sheetName,
        });
        ctx.changed("bindings");
      }
    } catch (e) {
      const view = describeError(e, { connectionId: conn.id, baseUrl: conn.baseUrl, secrets: ctx.secrets(), requestTime: ctx.now().toISOString() });
      ctx.finishJob({ state: "error", text: `Import failed: ${view.title}.` });
      replace(errorHost, ctx.errorPanel(view, { retry: () => void run(s) }));
    }
  }

  replace(panel, h("h2", {}, "Snapshots"), h("p", { class: "hint" }, "Read-only lists of projects and proposals, resource cells and scores. Each import becomes a table you can refresh."), body);
  onShown((tab) => {
    if (tab === "snapshots") void render();
  });
  const reset = () => {
    absent.clear();
    if (!panel.hidden) void render();
  };
  ctx.on("active", reset);
  ctx.on("credentials", reset);
}
