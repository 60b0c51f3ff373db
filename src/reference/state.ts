/**
 * Run-time state of one reference service instance: export generations, records, switched-on
 * faults and delays, absent route groups and the request log. `reset()` restores the demo state.
 */
import { createHash } from "node:crypto";
import {
  COMPANIES,
  DATASETS,
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
}

export interface FaultRule {
  status: number;
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
