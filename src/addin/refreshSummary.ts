/**
 * Pure helpers shared by the task pane's Refresh section and the ribbon's "Refresh all": which of
 * this device's connections serves a bound table, and the summary shown after a refresh.
 */
import type { ConnectionSummary } from "./connectionStore";

/** Storage key (after the partition prefix) of the last ribbon refresh summary, read by the pane. */
export const LAST_RIBBON_REFRESH_KEY = "ppm.v1.lastRibbonRefresh";

/** The binding fields that identify where a table's data comes from (no secrets). */
export interface BindingOrigin {
  connectionId: string;
  environment: string;
  companyId: string | null;
}

function sameEnvironment(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().replace(/\/+$/, "").toLowerCase();
  return norm(a) === norm(b);
}

/**
 * The connection on this device that should refresh a bound table, or null.
 *
 * 1. The connection the table was imported with, if it still points at the same environment.
 * 2. Otherwise (a workbook from a colleague, or a connection re-created here) the one connection
 *    to the same environment and company. Company ids are learnt from the manifest; a connection
 *    whose company is not known yet never matches by company, so data is never fetched with
 *    another company's token.
 */
export function resolveConnectionId(binding: BindingOrigin, connections: readonly ConnectionSummary[]): string | null {
  const own = connections.find((c) => c.id === binding.connectionId);
  if (own && sameEnvironment(own.baseUrl, binding.environment)) {
    if (!binding.companyId || !own.companyId || own.companyId === binding.companyId) return own.id;
  }
  if (!binding.companyId) return null;
  const matches = connections.filter((c) => sameEnvironment(c.baseUrl, binding.environment) && c.companyId === binding.companyId);
  return matches.length >= 1 ? matches[0].id : null;
}

/** One table's line in a refresh report (the subset of the engine's report the summary uses). */
export interface ReportLike {
  bindingId: string;
  tableName: string;
  outcome: "updated" | "unchanged" | "failed";
  rowCount: number;
  failure?: { code: string; message: string };
  warnings: string[];
  binding: BindingOrigin & { sheetName?: string };
  /** What an update wrote (issue #15). */
  delta?: { added: number; changed: number; removed: number; strategy: "delta" | "full"; exact?: boolean; matchedBy?: "key" | "position"; byContent?: number; byPosition?: number };
  /** Unchanged although the service had a new export: the table's rows came out the same (issue #37). */
  newExport?: boolean;
}

export interface SummaryItem {
  bindingId: string;
  tableName: string;
  /** The table's sheet, when known: tables are told apart as "sheet › table" (issue #25). */
  sheetName?: string;
  outcome: "updated" | "unchanged" | "failed";
  rowCount: number;
  /** Why it failed (already redacted by the engine). */
  reason?: string;
  code?: string;
  /** Connection used (or that would be used); set for 401 so "Update token" acts on exactly it. */
  connectionId?: string;
  warnings: string[];
  /** Unchanged although the service had a new export (a local query whose result did not change). */
  newExport?: true;
  /** Rows added, changed and removed by an update (issue #15). */
  counts?: { added: number; changed: number; removed: number; strategy: "delta" | "full"; exact: boolean; matchedBy: "key" | "position"; byContent?: number; byPosition?: number };
}

export interface RefreshSummary {
  updated: number;
  unchanged: number;
  failed: number;
  items: SummaryItem[];
  /** Stored bindings that could not be read at all (listed, never silently skipped). */
  broken: { key: string; code: string; message: string }[];
  /** One line for a notification: "2 updated, 1 unchanged, 1 failed". */
  headline: string;
  /**
   * Set when every table failed for the same reason (2 tables or more): the run's one failure, so
   * a stopped service is said once, not once per table (issue #25).
   */
  common?: FailureGroup;
  /** Tables that failed for the same reason, 2 or more per group: each reason is said once (issue #25). */
  groups: FailureGroup[];
}

/** Tables that failed the same way (same code, reason and connection). */
export interface FailureGroup {
  code: string;
  reason: string;
  connectionId?: string;
  /** Binding ids of its tables, in report order. */
  bindingIds: string[];
}

/**
 * Builds the summary. `connectionFor` gives the connection that served each binding (so an
 * `unauthorized` failure can offer "Update token" for exactly that one).
 */
export function summarize(
  reports: readonly ReportLike[],
  broken: readonly { key: string; code: string; message: string }[] = [],
  connectionFor: (b: BindingOrigin) => string | null = () => null,
): RefreshSummary {
  const items: SummaryItem[] = reports.map((r) => {
    const item: SummaryItem = { bindingId: r.bindingId, tableName: r.tableName, ...(r.binding.sheetName ? { sheetName: r.binding.sheetName } : {}), outcome: r.outcome, rowCount: r.rowCount, warnings: [...r.warnings] };
    if (r.outcome === "unchanged" && r.newExport) item.newExport = true;
    if (r.outcome === "updated" && r.delta) {
      const d = r.delta;
      item.counts = { added: d.added, changed: d.changed, removed: d.removed, strategy: d.strategy, exact: d.exact !== false, matchedBy: d.matchedBy ?? "key", ...(d.byContent !== undefined ? { byContent: d.byContent, byPosition: d.byPosition ?? 0 } : {}) };
    }
    if (r.outcome === "failed") {
      item.reason = r.failure?.message ?? "Unknown failure.";
      item.code = r.failure?.code ?? "error";
      const c = connectionFor(r.binding);
      if (c) item.connectionId = c;
    }
    return item;
  });
  const count = (o: SummaryItem["outcome"]) => items.filter((i) => i.outcome === o).length;
  const updated = count("updated");
  const unchanged = count("unchanged");
  const failed = count("failed") + broken.length;
  const headline =
    items.length === 0 && broken.length === 0
      ? "No PPM tables in this workbook to refresh."
      : `${updated} updated, ${unchanged} unchanged, ${failed} failed`;
  const byReason = new Map<string, FailureGroup>();
  for (const i of items) {
    if (i.outcome !== "failed") continue;
    const key = JSON.stringify([i.code, i.reason, i.connectionId ?? null]);
    let g = byReason.get(key);
    if (!g) byReason.set(key, (g = { code: i.code ?? "error", reason: i.reason ?? "Unknown failure.", ...(i.connectionId ? { connectionId: i.connectionId } : {}), bindingIds: [] }));
    g.bindingIds.push(i.bindingId);
  }
  const groups = [...byReason.values()].filter((g) => g.bindingIds.length >= 2);
  const common = groups.length === 1 && groups[0].bindingIds.length === items.length && broken.length === 0 ? groups[0] : undefined;
  return { updated, unchanged, failed, items, broken: [...broken], headline, groups, ...(common ? { common } : {}) };
}

/**
 * "3 added, 12 changed, 1 removed" (issue #15) when rows were matched by a key: the dataset's, a
 * snapshot's, or a summary's group-by columns (issue #25). Rows matched by position (no key, or a
 * key the table does not hold) cannot be called changed, added or removed: "12 rows rewritten (no
 * key to match rows by), 1 fewer row". After a full rewrite that had no plan to count from,
 * "rewritten in full, changes not counted" and how the row count moved. Without a key, how the rows
 * were matched to their records, which their own cells follow (issue #34): "; 1,180 rows matched by
 * identical content, 20 by position".
 */
export function countsText(c: { added: number; changed: number; removed: number; exact?: boolean; matchedBy?: "key" | "position"; byContent?: number; byPosition?: number }): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const rows = (x: number) => `${n(x)} row${x === 1 ? "" : "s"}`;
  const moved = c.added > 0 ? `, ${rows(c.added).replace(/ rows?$/, (w) => ` more${w}`)}` : c.removed > 0 ? `, ${rows(c.removed).replace(/ rows?$/, (w) => ` fewer${w}`)}` : "";
  const ways = c.byContent !== undefined ? `; ${rows(c.byContent)} matched by identical content, ${n(c.byPosition ?? 0)} by position` : "";
  if (c.exact === false) return `rewritten in full, changes not counted${moved}${ways}`;
  if (c.matchedBy === "position") return `${rows(c.changed)} rewritten (no key to match rows by)${moved}${ways}`;
  return `${n(c.added)} added, ${n(c.changed)} changed, ${n(c.removed)} removed`;
}

/** Why a table is "unchanged" although the service had a new export (issue #37). */
export const NEW_EXPORT_SAME_ROWS = "a new export, and none of this table's rows changed";

/** "sheet › table", or the table alone when its sheet is not known. */
export function where(i: { tableName: string; sheetName?: string }): string {
  return i.sheetName ? `${i.sheetName} › ${i.tableName}` : i.tableName;
}

/**
 * Plain-text report (ribbon dialog / notification): the headline, then one line per table naming
 * its outcome (`ppm_financials: updated, 1,200 rows — 3 added, 12 changed, 1 removed`; a failure
 * with its reason), unreadable links last.
 */
export function summaryText(s: RefreshSummary, maxLines = 20): string {
  const lines = [s.headline];
  const named = (ids: readonly string[]) => {
    const names = s.items.filter((i) => ids.includes(i.bindingId)).map(where);
    return `${names.slice(0, maxLines).join(", ")}${names.length > maxLines ? ` and ${names.length - maxLines} more` : ""}`;
  };
  if (s.common) {
    // Every table failed the same way: the reason once, then the tables it applies to.
    lines.push(`None of the ${s.items.length} tables was refreshed: ${s.common.reason}`);
    lines.push(`Tables: ${named(s.common.bindingIds)}.`);
    return lines.join("\n");
  }
  // A reason several tables share is said once, with the tables it applies to.
  const grouped = new Set(s.groups.flatMap((g) => g.bindingIds));
  const tables = [
    ...s.groups.map((g) => `${g.bindingIds.length} tables failed: ${g.reason} (${named(g.bindingIds)})`),
    ...s.items
      .filter((i) => !grouped.has(i.bindingId))
      .map((i) =>
        i.outcome === "failed"
          ? `${where(i)}: failed: ${i.reason ?? i.code ?? "unknown reason"}`
          : `${where(i)}: ${i.outcome}, ${i.rowCount.toLocaleString("en-US")} row${i.rowCount === 1 ? "" : "s"}${i.outcome === "updated" && i.counts ? ` — ${countsText(i.counts)}` : ""}${i.newExport ? ` — ${NEW_EXPORT_SAME_ROWS}` : ""}`,
      ),
    ...s.broken.map((b) => `${b.key}: failed: ${b.message}`),
  ];
  lines.push(...tables.slice(0, maxLines));
  if (tables.length > maxLines) lines.push(`… and ${tables.length - maxLines} more (open the task pane's Refresh tab).`);
  return lines.join("\n");
}
