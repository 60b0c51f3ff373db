/**
 * Run-time state of one reference service instance: export generations, records, switched-on
 * faults and delays, absent route groups and the request log. `reset()` restores the demo state.
 */
import { createHash } from "node:crypto";
import {
  COMPANIES,
  DATASETS,
  mix,
  type CompanyDef,
  type DatasetDef,
  type RecordData,
  type RecordKindName,
  seedRecords,
} from "./data";

export type RouteGroup = "reporting" | "snapshot" | "record";
export const ROUTE_GROUPS: readonly RouteGroup[] = ["reporting", "snapshot", "record"];

export type ArtifactStatus = "generated" | "not_generated" | "invalid_cached_artifact";

/** The cached export of one dataset for one company. */
export interface ArtifactState {
  status: ArtifactStatus;
  generation: number;
  /** Last generation attempt (manifest `generated_at`). */
  generatedAt: string | null;
  /** Last successful generation (manifest `latest_successful_generated_at`). */
  latestSuccessfulAt: string | null;
  rowCount: number;
  /**
   * Which rows the export holds after a partial regeneration, in export order: row `i` of the export
   * is the dataset's generated row `ids[i]` as of generation `versions[i]`. Null means the plain
   * form: rows `0 … rowCount-1`, all as of the current generation.
   */
  rows: ExportRows | null;
}

/** The explicit row list of an export (see {@link ArtifactState.rows}). */
export interface ExportRows {
  ids: Int32Array;
  versions: Int32Array;
  /** The id the next added row gets (ids are never reused, so added rows have new keys). */
  nextId: number;
}

/** A partial regeneration: fractions of the current rows to change, add and remove, and the seed that picks them. */
export interface RegenerationDelta {
  changed: number;
  added: number;
  removed: number;
  seed: number;
  /** true: `changed`, `added` and `removed` are numbers of rows (capped by the rows there are), not fractions. */
  inRows?: boolean;
}

/** What a partial regeneration did, in rows. */
export interface RegenerationCounts {
  changed: number;
  added: number;
  removed: number;
}

/** Rows for a fraction of `n`: rounded, but at least one when the fraction is above 0 (small demo tables). */
export function rowsForFraction(fraction: number, n: number): number {
  if (fraction <= 0) return 0;
  return Math.max(1, Math.round(fraction * n));
}

/** Deterministic pseudo-random numbers in [0, 1) from a 32-bit seed (mulberry32). */
function random(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `k` distinct indexes out of `0 … n-1` (k ≤ n), as a membership mask. */
function pickMask(n: number, k: number, next: () => number): Uint8Array {
  const mask = new Uint8Array(n);
  if (k * 2 > n) {
    // Dense: a partial Fisher-Yates over all indexes.
    const all = new Int32Array(n);
    for (let i = 0; i < n; i++) all[i] = i;
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(next() * (n - i));
      const t = all[i];
      all[i] = all[j];
      all[j] = t;
      mask[all[i]] = 1;
    }
    return mask;
  }
  let picked = 0;
  while (picked < k) {
    const i = Math.floor(next() * n);
    if (!mask[i]) {
      mask[i] = 1;
      picked++;
    }
  }
  return mask;
}

export interface FaultRule {
  /** The HTTP status to answer with, or "drop": close the connection without an answer. */
  status: number | "drop";
  remaining: number;
  retryAfter: number;
}

export interface DelayRule {
  /** Wait before the response starts. */
  ms: number;
  /** Wait between body chunks of streamed exports (slow-streaming mode). */
  chunkDelayMs: number;
  /** Requests still to delay; Infinity until cleared. */
  remaining: number;
}

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  /** Query string with credential-like values redacted. */
  query: string;
  status: number;
  /** False when the client went away before the response was complete. */
  complete: boolean;
}

const REQUEST_LOG_LIMIT = 1000;

/** Mutable state of one service instance; every handler reads and writes through it. */
export class ServiceState {
  readonly datasetRows: Record<string, number>;
  artifacts = new Map<string, ArtifactState>();
  records = new Map<string, { project: Map<string, RecordData>; proposal: Map<string, RecordData> }>();
  /** Per company and kind, the number used for the next created record's token. */
  nextRecordNumber = new Map<string, number>();
  reportingEnabled = new Map<string, boolean>();
  faults = new Map<string, FaultRule>();
  delays = new Map<string, DelayRule>();
  absent = new Set<RouteGroup>();
  requestLog: RequestLogEntry[] = [];

  constructor(
    datasetRows: Record<string, number> = {},
    private readonly initialAbsent: readonly RouteGroup[] = [],
  ) {
    this.datasetRows = { ...datasetRows };
    this.reset();
  }

  reset(): void {
    this.artifacts.clear();
    for (const company of COMPANIES) {
      for (const ds of DATASETS) {
        const hasExport = ds.initial !== "not_generated";
        this.artifacts.set(artifactKey(company.id, ds.key), {
          status: ds.initial,
          generation: hasExport ? 1 : 0,
          generatedAt: hasExport ? ds.initialGeneratedAt : null,
          latestSuccessfulAt: hasExport ? ds.initialGeneratedAt : null,
          rowCount: this.rowsFor(ds),
          rows: null,
        });
      }
      const seed = seedRecords(company.id);
      this.records.set(company.id, {
        project: new Map(seed.project.map((r) => [r.project_token, r])),
        proposal: new Map(seed.proposal.map((r) => [r.project_token, r])),
      });
      this.nextRecordNumber.set(`${company.id}|project`, seed.project.length + 1);
      this.nextRecordNumber.set(`${company.id}|proposal`, seed.proposal.length + 1);
      this.reportingEnabled.set(company.id, company.reportingEnabled);
    }
    this.faults.clear();
    this.delays.clear();
    this.absent = new Set(this.initialAbsent);
    this.requestLog = [];
  }

  rowsFor(ds: DatasetDef): number {
    const n = this.datasetRows[ds.key];
    return n === undefined ? ds.defaultRows : n;
  }

  artifact(companyId: string, datasetKey: string): ArtifactState {
    const a = this.artifacts.get(artifactKey(companyId, datasetKey));
    if (!a) throw new Error(`no artifact state for ${companyId}/${datasetKey}`);
    return a;
  }

  /**
   * A successful generation: new generation number and generated-at (strictly later, in whole
   * seconds, so `Last-Modified` always moves), and a usable export.
   */
  regenerate(companyId: string, datasetKey: string, nowMs: number = Date.now()): ArtifactState {
    const a = this.advance(companyId, datasetKey, nowMs);
    // A plain regeneration moves every row to the new generation (the rows keep their ids).
    if (a.rows) a.rows.versions.fill(a.generation);
    return a;
  }

  /** New generation number and generated-at, nothing else. */
  private advance(companyId: string, datasetKey: string, nowMs: number): ArtifactState {
    const a = this.artifact(companyId, datasetKey);
    const prev = a.generatedAt ? Date.parse(a.generatedAt) : 0;
    const next = Math.max(Math.floor(nowMs / 1000) * 1000, prev + 1000);
    const at = new Date(next).toISOString().replace(".000Z", "Z");
    a.generation += 1;
    a.generatedAt = at;
    a.latestSuccessfulAt = at;
    a.status = "generated";
    return a;
  }

  /**
   * A regeneration that changes only some rows: of the current export's rows it removes
   * `removed × n`, changes `changed × n` of the others (they are generated as of the new
   * generation, which moves at least their update time) and inserts `added × n` rows with new keys
   * at random positions; every other row keeps its values and its order relative to the other kept
   * rows. The same seed on the same state picks the same rows. Counts are rounded, at least 1 for a
   * fraction above 0, and capped by the rows there are.
   */
  regeneratePartly(companyId: string, datasetKey: string, delta: RegenerationDelta, nowMs: number = Date.now()): { artifact: ArtifactState; counts: RegenerationCounts } {
    const a = this.artifact(companyId, datasetKey);
    const company = COMPANIES.find((c) => c.id === companyId);
    const n = a.rowCount;
    const current: ExportRows = a.rows ?? {
      ids: Int32Array.from({ length: n }, (_, i) => i),
      // A never-generated export (generation 0) would be generated as generation 1.
      versions: new Int32Array(n).fill(Math.max(1, a.generation)),
      nextId: n,
    };
    this.advance(companyId, datasetKey, nowMs);
    const g = a.generation;
    const next = random(mix(delta.seed, company?.seed ?? 0, g, n));
    const rows = (x: number) => (delta.inRows ? Math.floor(x) : rowsForFraction(x, n));
    const removed = Math.min(n, rows(delta.removed));
    const gone = pickMask(n, removed, next);
    const keptIdx: number[] = [];
    for (let i = 0; i < n; i++) if (!gone[i]) keptIdx.push(i);
    const changed = Math.min(keptIdx.length, rows(delta.changed));
    const touched = pickMask(keptIdx.length, changed, next);
    const added = rows(delta.added);
    const total = keptIdx.length + added;
    // Positions (in the new export) of the added rows.
    const fresh = pickMask(total, added, next);
    const ids = new Int32Array(total);
    const versions = new Int32Array(total);
    let k = 0;
    let nextId = current.nextId;
    for (let p = 0; p < total; p++) {
      if (fresh[p]) {
        ids[p] = nextId++;
        versions[p] = g;
      } else {
        const i = keptIdx[k];
        ids[p] = current.ids[i];
        versions[p] = touched[k] ? g : current.versions[i];
        k++;
      }
    }
    a.rows = { ids, versions, nextId };
    a.rowCount = total;
    return { artifact: a, counts: { changed, added, removed } };
  }

  recordsOf(companyId: string, kind: RecordKindName): Map<string, RecordData> {
    const r = this.records.get(companyId);
    if (!r) throw new Error(`no records for ${companyId}`);
    return r[kind];
  }

  newRecordToken(companyId: string, kind: RecordKindName): string {
    const k = `${companyId}|${kind}`;
    const n = this.nextRecordNumber.get(k) ?? 1;
    this.nextRecordNumber.set(k, n + 1);
    return `${kind === "project" ? "pt" : "pp"}_${companyId}_${String(n).padStart(4, "0")}`;
  }

  /** Consumes one matching fault, if any. */
  takeFault(path: string): FaultRule | undefined {
    const key = matchRule(this.faults, path);
    if (key === undefined) return undefined;
    const rule = this.faults.get(key)!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.faults.delete(key);
    return rule;
  }

  takeDelay(path: string): DelayRule | undefined {
    const key = matchRule(this.delays, path);
    if (key === undefined) return undefined;
    const rule = this.delays.get(key)!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.delays.delete(key);
    return rule;
  }

  log(entry: RequestLogEntry): void {
    this.requestLog.push(entry);
    if (this.requestLog.length > REQUEST_LOG_LIMIT) this.requestLog.splice(0, this.requestLog.length - REQUEST_LOG_LIMIT);
  }
}

/** Rules match a path exactly, or by prefix when the rule ends in `*`. */
function matchRule(rules: Map<string, unknown>, path: string): string | undefined {
  if (rules.has(path)) return path;
  for (const key of rules.keys()) {
    if (key.endsWith("*") && path.startsWith(key.slice(0, -1))) return key;
  }
  return undefined;
}

function artifactKey(companyId: string, datasetKey: string): string {
  return `${companyId}|${datasetKey}`;
}

/**
 * Strong ETag of one representation. Company, dataset, format and generation are hashed (the row
 * count too, since `--dataset-rows` changes content without a new generation).
 */
export function etagFor(company: CompanyDef, ds: DatasetDef, format: "json" | "csv" | "odata", a: ArtifactState, variant = ""): string {
  // `variant` names another representation of the same export (OData IEEE754Compatible): a strong
  // ETag belongs to one representation.
  const h = createHash("sha256")
    .update(`${company.id}|${ds.key}|${format}${variant ? "|" + variant : ""}|${a.generation}|${a.rowCount}|${ds.schemaVersion}`)
    .digest("base64url")
    .slice(0, 27);
  return `"${h}"`;
}
