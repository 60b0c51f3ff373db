/**
 * Sending write-back changes: one PUT per changed record, carrying all of that record's valid
 * changes in one `custom_fields` object. Records are sent one after another, each independently: a
 * rejected record never stops the others, and every change ends with a visible result.
 */
import type { RecordKind } from "../contract/contract";
import type { Change } from "./diff";
import { describeRecordError, type RecordsClient } from "./client";
import { serviceValueText } from "./values";
import { heldKey, type HeldCell } from "./held";

/** One PUT to send. */
export interface RecordUpdate {
  kind: RecordKind;
  projectToken: string;
  customFields: Record<string, string>;
  /** The changes it carries, in preview order. */
  changes: Change[];
}

/** Result of one change after sending. */
export type ChangeResult =
  | { status: "saved"; /** The value the service now holds (normalised), when its answer shows it. */ stored: string | null }
  | { status: "rejected"; message: string; code?: string }
  | { status: "not-sent"; message: string };

export interface ChangeOutcome {
  change: Change;
  result: ChangeResult;
}

/** Groups the sendable (valid) changes into one update per record, in order of first appearance. */
export function planUpdates(kind: RecordKind, changes: readonly Change[]): RecordUpdate[] {
  const byToken = new Map<string, RecordUpdate>();
  for (const c of changes) {
    if (c.validation.status !== "valid") continue;
    let u = byToken.get(c.projectToken);
    if (!u) {
      u = { kind, projectToken: c.projectToken, customFields: {}, changes: [] };
      byToken.set(c.projectToken, u);
    }
    u.customFields[c.field] = c.new;
    u.changes.push(c);
  }
  return [...byToken.values()];
}

/** Why a change that was never sent was not sent (for the result column). */
export function notSentReason(c: Change): string {
  switch (c.validation.status) {
    case "invalid":
      return `Not sent: ${c.validation.message}`;
    case "conflict":
      return `Not sent: ${c.validation.message}`;
    case "ignored":
      return c.validation.message;
    case "valid":
      return "Not sent.";
  }
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Called after each record, for a progress line. */
  onRecord?: (done: number, total: number) => void;
}

/**
 * Sends every valid change, one PUT per record, and returns one outcome per input change (same
 * order). Never throws for a service failure; a cancelled signal stops before the next record and
 * marks the rest `not-sent`.
 */
export async function sendWriteback(client: RecordsClient, kind: RecordKind, changes: readonly Change[], options: SendOptions = {}): Promise<ChangeOutcome[]> {
  const results = new Map<Change, ChangeResult>();
  for (const c of changes) if (c.validation.status !== "valid") results.set(c, { status: "not-sent", message: notSentReason(c) });
  const updates = planUpdates(kind, changes);
  let done = 0;
  for (const u of updates) {
    if (options.signal?.aborted) {
      for (const c of u.changes) results.set(c, { status: "not-sent", message: "Not sent: cancelled." });
      continue;
    }
    try {
      const answer = await client.updateRecord(kind, u.projectToken, { custom_fields: u.customFields }, { signal: options.signal });
      for (const c of u.changes) {
        const stored = answer && Object.prototype.hasOwnProperty.call(answer, c.field) ? serviceValueText(answer[c.field]) : null;
        results.set(c, { status: "saved", stored });
      }
    } catch (e) {
      const err = describeRecordError(e);
      for (const c of u.changes) {
        const own = err.field === undefined || err.field === c.field;
        const message = own
          ? err.message
          : `Not saved: the service refused this record's update because of "${err.field}" (${err.message})`;
        results.set(c, { status: "rejected", message, ...(err.code ? { code: err.code } : {}) });
      }
    }
    done++;
    options.onRecord?.(done, updates.length);
  }
  return changes.map((c) => ({ change: c, result: results.get(c) ?? { status: "not-sent", message: "Not sent." } }));
}

/** Counts for a summary line. */
export function summarize(outcomes: readonly ChangeOutcome[]): { saved: number; rejected: number; notSent: number; records: number } {
  const records = new Set(outcomes.filter((o) => o.result.status === "saved").map((o) => o.change.projectToken));
  return {
    saved: outcomes.filter((o) => o.result.status === "saved").length,
    rejected: outcomes.filter((o) => o.result.status === "rejected").length,
    notSent: outcomes.filter((o) => o.result.status === "not-sent").length,
    records: records.size,
  };
}

/**
 * The cells to hold after a send: every changed cell that was not saved, with why. `previous` are
 * the cells held before this send; a cell held again keeps its recorded own fill (its current fill is
 * the mark).
 */
export function heldAfterSend(outcomes: readonly ChangeOutcome[], previous: readonly HeldCell[] = []): HeldCell[] {
  const before = new Map(previous.map((h) => [heldKey(h.projectToken, h.field), h]));
  const out: HeldCell[] = [];
  for (const { change, result } of outcomes) {
    if (result.status === "saved") continue;
    const v = change.validation;
    const status: HeldCell["status"] = result.status === "rejected" ? "rejected" : v.status === "valid" ? "not-sent" : v.status;
    const message = result.status === "rejected" ? result.message : v.status === "valid" ? result.message : v.message;
    const prior = before.get(heldKey(change.projectToken, change.field));
    out.push({ projectToken: change.projectToken, field: change.field, status, message, service: change.old, fill: prior?.fill ?? null });
  }
  return out;
}
