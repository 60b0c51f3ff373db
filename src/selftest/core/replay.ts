/**
 * Replays a transcript against a host and reports every difference between what was recorded and
 * what the host answers now: refusals (5103/5104 payload limits), error codes (and the action a
 * request stopped at), missing or extra results, and values.
 *
 * The host is a parameter (`answer`): `npm run host:replay` passes the emulated host's door
 * (`answerRequest`), tests may pass anything. Pure logic: no Office, no DOM.
 *
 * Decisions:
 * - **Ids the host chose are not differences.** Excel names worksheets `{00000000-0001-…}` and keeps
 *   references as it likes; the emulated host has its own scheme. Where a recorded answer has an id
 *   (`_Id`, `_ReferenceId`, `Id`) and the replayed one another, the pair is remembered and later
 *   requests are sent with the replayed id in place of the recorded one (in object paths only:
 *   `getItem(id)` and kept references, never in cell values).
 * - **Messages are not compared** (they are worded per host and per language); codes are.
 * - **A scrubbed transcript** (`scrubTranscript`) has placeholders in place of cell values: values
 *   (`values`, `text`, `formulas`, a setting's `value`) are then compared by type only (text,
 *   number, boolean, empty; an Excel error value such as `#N/A` exactly). Its numbers are dealt out
 *   in a random order per column (issue #36), so the emulated host sorts them into another row order
 *   than Excel sorted the originals: every block of cells (a 2-D array: values, types, formats) is
 *   compared by its rows and columns and, per column, by how many cells of each type (values) or
 *   each exact content (everything else) it holds, not row by row. A scrubbed transcript cannot
 *   show a difference in row order; an unscrubbed one can. Everything else — which results,
 *   addresses, counts, names, error codes, refusals — is compared exactly.
 */
import type { RecordedAnswer, Transcript } from "./transcript";
import { printable } from "./printable";

/** What a host answers one request (the shape of the emulated host's `HostAnswer`). */
export type HostReply = { readonly kind: "response"; readonly body: string } | { readonly kind: "refused"; readonly code: number; readonly message?: string };

export type Answerer = (request: { body: string; flags: number }) => HostReply | Promise<HostReply>;

export type DifferenceKind = "refusal" | "error" | "result" | "value";

export interface Difference {
  readonly scenario: string;
  /** 1-based index of the exchange within its scenario. */
  readonly exchange: number;
  readonly kind: DifferenceKind;
  /** Where in the answer: `refusal`, `Error.Code`, `Results[ActionId 12].Value.Values[3][2]`, … */
  readonly where: string;
  readonly recorded: unknown;
  readonly replayed: unknown;
}

export interface ReplayReport {
  readonly exchanges: number;
  readonly differences: Difference[];
  /** Host-chosen ids that differed and were mapped (not differences). */
  readonly mappedIds: number;
}

const ID_KEYS = new Set(["_Id", "_ReferenceId", "Id"]);
/** Properties that hold cell values (compared by type only in a scrubbed transcript). */
export const VALUE_KEYS = new Set(["Values", "Text", "Formulas", "FormulasLocal", "FormulasR1C1", "Value", "ValuesAsJson"]);
/** Excel's error values, which a scrubbed transcript keeps as they are. */
export const EXCEL_ERROR_VALUES = new Set(["#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA", "#SPILL!", "#CALC!", "#FIELD!", "#BLOCKED!", "#BUSY!", "#CONNECT!", "#UNKNOWN!", "#EXTERNAL!", "#PYTHON!", "#TIMEOUT!"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A 2-D array of cells (rows of columns). */
const isBlock = (v: unknown): v is unknown[][] => Array.isArray(v) && v.length > 0 && v.every((r) => Array.isArray(r));

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return "empty";
  if (typeof v === "string") return EXCEL_ERROR_VALUES.has(v) ? v : v === "" ? "empty" : "text";
  return typeof v;
}

class Comparison {
  readonly found: Array<{ kind: DifferenceKind; where: string; recorded: unknown; replayed: unknown }> = [];
  constructor(
    private readonly ids: Map<string, string>,
    private readonly byType: boolean,
  ) {}

  value(rec: unknown, rep: unknown, where: string, inValue: boolean, key: string | null): void {
    if (key !== null && ID_KEYS.has(key) && typeof rec === "string" && typeof rep === "string") {
      if (rec !== rep) {
        const known = this.ids.get(rec);
        if (known === undefined) this.ids.set(rec, rep);
        else if (known !== rep) this.found.push({ kind: "value", where, recorded: rec, replayed: rep });
      }
      return;
    }
    if (this.byType && isBlock(rec) && isBlock(rep)) return this.block(rec, rep, where, inValue);
    if (Array.isArray(rec) && Array.isArray(rep)) {
      if (rec.length !== rep.length) {
        this.found.push({ kind: "value", where: `${where}.length`, recorded: rec.length, replayed: rep.length });
      }
      const n = Math.min(rec.length, rep.length);
      for (let i = 0; i < n; i++) this.value(rec[i], rep[i], `${where}[${i}]`, inValue, null);
      return;
    }
    if (isObject(rec) && isObject(rep)) {
      for (const k of new Set([...Object.keys(rec), ...Object.keys(rep)])) {
        const path = where === "" ? k : `${where}.${k}`;
        if (!(k in rep)) this.found.push({ kind: "value", where: path, recorded: rec[k], replayed: undefined });
        else if (!(k in rec)) this.found.push({ kind: "value", where: path, recorded: undefined, replayed: rep[k] });
        else this.value(rec[k], rep[k], path, inValue || VALUE_KEYS.has(k), k);
      }
      return;
    }
    const same = this.byType && inValue ? typeOf(rec) === typeOf(rep) : Object.is(rec, rep) || (rec === 0 && rep === 0);
    if (!same) this.found.push({ kind: "value", where, recorded: rec, replayed: rep });
  }

  /**
   * A block of cells of a scrubbed transcript: the same rows and columns, and per column the same
   * count of each type (`byType`: cell values) or of each exact content (types, formats).
   */
  private block(rec: unknown[][], rep: unknown[][], where: string, byType: boolean): void {
    if (rec.length !== rep.length) this.found.push({ kind: "value", where: `${where}.length`, recorded: rec.length, replayed: rep.length });
    const width = (b: unknown[][]) => Math.max(0, ...b.map((r) => r.length));
    if (width(rec) !== width(rep)) this.found.push({ kind: "value", where: `${where}[0].length`, recorded: width(rec), replayed: width(rep) });
    for (let j = 0; j < Math.min(width(rec), width(rep)); j++) {
      const count = (b: unknown[][]) => {
        const m = new Map<string, number>();
        for (const r of b) {
          const t = byType ? typeOf(r[j]) : JSON.stringify(r[j]);
          m.set(t, (m.get(t) ?? 0) + 1);
        }
        return [...m].sort().map(([t, n]) => `${n} ${t}`).join(", ");
      };
      const a = count(rec);
      const b = count(rep);
      if (a !== b) this.found.push({ kind: "value", where: `${where}[*][${j}]`, recorded: a, replayed: b });
    }
  }

  answer(rec: RecordedAnswer, rep: HostReply): void {
    if (rec.kind === "refused" || rep.kind === "refused") {
      const a = rec.kind === "refused" ? rec.code : "response";
      const b = rep.kind === "refused" ? rep.code : "response";
      if (a !== b) this.found.push({ kind: "refusal", where: "refusal", recorded: a, replayed: b });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(rep.body);
    } catch {
      this.found.push({ kind: "result", where: "body", recorded: "JSON", replayed: rep.body.slice(0, 80) });
      return;
    }
    const r = isObject(rec.body) ? rec.body : {};
    const p = isObject(body) ? body : {};
    const re = isObject(r.Error) ? r.Error : null;
    const pe = isObject(p.Error) ? p.Error : null;
    if (re || pe) {
      if ((re?.Code ?? null) !== (pe?.Code ?? null)) this.found.push({ kind: "error", where: "Error.Code", recorded: re?.Code ?? null, replayed: pe?.Code ?? null });
      else if ((re?.ActionIndex ?? null) !== (pe?.ActionIndex ?? null)) this.found.push({ kind: "error", where: "Error.ActionIndex", recorded: re?.ActionIndex ?? null, replayed: pe?.ActionIndex ?? null });
    }
    const results = (b: Record<string, unknown>): Map<unknown, unknown> => {
      const m = new Map<unknown, unknown>();
      if (Array.isArray(b.Results)) for (const x of b.Results) if (isObject(x)) m.set(x.ActionId, x.Value);
      return m;
    };
    const rr = results(r);
    const pr = results(p);
    for (const [id, v] of rr) {
      const where = `Results[ActionId ${String(id)}]`;
      if (!pr.has(id)) this.found.push({ kind: "result", where, recorded: "a result", replayed: "none" });
      else this.value(v, pr.get(id), `${where}.Value`, false, null);
    }
    for (const id of pr.keys()) if (!rr.has(id)) this.found.push({ kind: "result", where: `Results[ActionId ${String(id)}]`, recorded: "none", replayed: "a result" });
  }
}

/** A copy of a request body with every recorded host id replaced by the id the replaying host chose. */
export function mapIds(body: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (ids.size === 0) return body;
  if (typeof body === "string") return ids.get(body) ?? body;
  if (Array.isArray(body)) return body.map((x) => mapIds(x, ids));
  if (isObject(body)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) out[k] = mapIds(v, ids);
    return out;
  }
  return body;
}

/**
 * The request with recorded ids replaced where the library puts ids: the arguments of object paths
 * (`getItem(id)`) and the names of reference paths (`ref12`); never in values written to cells (a
 * cell may hold the text `1`, which is also a table id in Excel).
 */
export function mapRequestIds(body: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (ids.size === 0 || !isObject(body) || !isObject(body.ObjectPaths)) return body;
  const paths: Record<string, unknown> = {};
  for (const [id, p] of Object.entries(body.ObjectPaths)) {
    if (!isObject(p)) {
      paths[id] = p;
      continue;
    }
    const out: Record<string, unknown> = { ...p };
    if (p.ObjectPathType === 6 && typeof p.Name === "string") out.Name = ids.get(p.Name) ?? p.Name;
    if (isObject(p.ArgumentInfo) && Array.isArray(p.ArgumentInfo.Arguments)) out.ArgumentInfo = { ...p.ArgumentInfo, Arguments: mapIds(p.ArgumentInfo.Arguments, ids) };
    paths[id] = out;
  }
  return { ...body, ObjectPaths: paths };
}

/** Sends every recorded request to `answer`, in order, and compares the answers. */
export async function replayTranscript(t: Transcript, answer: Answerer): Promise<ReplayReport> {
  const ids = new Map<string, string>();
  const differences: Difference[] = [];
  let exchanges = 0;
  for (const s of t.scenarios) {
    for (let i = 0; i < s.exchanges.length; i++) {
      const x = s.exchanges[i];
      exchanges++;
      const reply = await answer({ body: JSON.stringify(mapRequestIds(x.request.body, ids)), flags: x.request.flags });
      const c = new Comparison(ids, t.scrubbed);
      c.answer(x.answer, reply);
      for (const d of c.found) differences.push({ scenario: s.name, exchange: i + 1, ...d });
    }
  }
  return { exchanges, differences, mappedIds: ids.size };
}

const show = (v: unknown): string => {
  const text = v === undefined ? "(absent)" : JSON.stringify(v);
  return printable(text.length > 60 ? `${text.slice(0, 57)}...` : text);
};

/**
 * The report as lines of text: one line per difference (at most `limit`), then a total. Everything
 * taken from the transcript (scenario names, paths, values) is made printable (core/printable.ts).
 */
export function formatReplay(r: ReplayReport, limit = 50): string {
  const lines = r.differences.slice(0, limit).map((d) => `${d.kind.padEnd(7)} ${printable(d.scenario)} #${d.exchange} ${printable(d.where)}: recorded ${show(d.recorded)}, emulated host ${show(d.replayed)}`);
  if (r.differences.length > limit) lines.push(`… and ${r.differences.length - limit} more`);
  const kinds = (["refusal", "error", "result", "value"] as const).map((k) => `${r.differences.filter((d) => d.kind === k).length} ${k}`).join(", ");
  lines.push(`replay: ${r.exchanges} requests, ${r.differences.length} difference${r.differences.length === 1 ? "" : "s"} (${kinds})${r.mappedIds ? `; ${r.mappedIds} host ids mapped` : ""}`);
  return lines.join("\n");
}
