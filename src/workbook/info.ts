/**
 * The info block: one text cell directly above a table's header row that tells the user where the
 * data came from and how fresh it is, and marks in-progress or failed writes so a partial table is
 * never mistaken for a complete one. Pure text functions; the writer puts the text in the cell.
 */
import { describeSource, type Binding } from "../refresh/binding";
import { formatQuery } from "../query/options";
import type { LocalQuery } from "../query";

/** Every info cell starts with this, so a refresh only ever rewrites its own cell. */
export const INFO_PREFIX = "PPM · ";

/**
 * `2026-11-21T04:05:06.789Z` → `2026-11-21 04:05 UTC` (times are shown in UTC, the documented
 * policy; minutes, as the pane shows them, so the sheet and the pane read the same).
 */
export function utcLabel(iso: string | null | undefined): string {
  if (!iso) return "unknown";
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export interface InfoFacts {
  source: Binding["source"];
  environment: string;
  generatedAt: string | null;
  schemaVersion: string | null;
  refreshedAt: string;
  rowCount: number;
  /** The local query of a filtered table, shown so a reader knows the table is not every row. */
  query?: LocalQuery | null;
}

/**
 * The info line of a complete table. What the source does not have (snapshots carry no generation
 * time or schema version) is left out rather than shown as "unknown".
 */
export function infoComplete(f: InfoFacts): string {
  return [
    `${INFO_PREFIX}${describeSource(f.source)}`,
    f.query && Object.keys(f.query).length ? `local query ${clip(formatQuery(f.query), 500)}` : null,
    f.generatedAt ? `generated ${utcLabel(f.generatedAt)}` : null,
    f.schemaVersion ? `schema ${f.schemaVersion}` : null,
    `refreshed ${utcLabel(f.refreshedAt)}`,
    `${f.rowCount.toLocaleString("en-US")} rows`,
    "date-times in UTC",
    `source ${f.environment}`,
  ]
    .filter((part): part is string => part !== null)
    .join(" · ");
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A reason short enough for the info line, never cut mid-word (issue #25): whole words up to `max` characters, then "…". */
export function shortReason(text: string, max = 160): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.(-]+$/, "")}…`;
}

/** Shown while an import or refresh is writing; if the add-in dies mid-write it stays, marking the table. */
export function infoInProgress(kind: "import" | "refresh", source: Binding["source"]): string {
  return `${INFO_PREFIX}⏳ ${kind === "import" ? "importing" : "refreshing"} ${describeSource(source)} — DATA INCOMPLETE until this message changes`;
}

/** Shown after a failed write. `restored` says whether the previous data is back. */
export function infoFailed(kind: "import" | "refresh", source: Binding["source"], at: string, code: string, message: string, restored: boolean): string {
  const what = kind === "import"
    ? "nothing was kept"
    : restored
      ? "the previous data was restored"
      : "the table may be INCOMPLETE; refresh again";
  return `${INFO_PREFIX}⚠ ${kind} of ${describeSource(source)} failed ${utcLabel(at)} (${code}): ${shortReason(message, 200)} — ${what}`;
}

/** Put at the start of the info line (after the prefix) when the last refresh failed (issue #15). */
export const STALE_MARK = "⚠ Not refreshed: ";

/**
 * The info line of a table whose last refresh failed while its previous data is intact: the stale
 * mark with the reason and time first, then the usual facts (generation time, last successful
 * refresh), so a failed refresh can never look current.
 */
export function infoStale(reason: string, at: string, facts: InfoFacts): string {
  const rest = infoComplete(facts).slice(INFO_PREFIX.length);
  return `${INFO_PREFIX}${STALE_MARK}${shortReason(reason)}, ${utcLabel(at)} · ${rest}`;
}

/** True for an info line carrying the stale mark. */
export function isStaleInfo(text: unknown): boolean {
  return typeof text === "string" && text.startsWith(INFO_PREFIX + STALE_MARK);
}
