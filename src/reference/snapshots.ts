/**
 * Snapshot endpoints: project/proposal lists, resource cells (one object per resource and period)
 * and flat score matrices. Lists read the live record store, so record updates show here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PATHS, type SnapshotEndpoint } from "../contract/contract";
import {
  ASSIGNMENTS,
  CRITERIA,
  NPT,
  NPT_CATEGORIES,
  NPT_RESOURCES,
  PERIODS,
  RESOURCES,
  SCORE_SELECTIONS,
  SCORES_LAST_UPDATED,
  type CompanyDef,
  type RecordData,
  type RecordKindName,
} from "./data";
import { resolveSnapshotCompany } from "./auth";
import { recordView } from "./customFields";
import { sendJson, sendMethodNotAllowed } from "./http";
import type { ServiceState } from "./state";

/** Which snapshot endpoint a path addresses, if any. */
export function matchSnapshotRoute(path: string): SnapshotEndpoint | undefined {
  const entry = Object.entries(PATHS.snapshot).find(([, p]) => p === path);
  return entry ? (entry[0] as SnapshotEndpoint) : undefined;
}

/** Answers a snapshot request: header credential, then the JSON array of rows. */
export function handleSnapshot(state: ServiceState, req: IncomingMessage, res: ServerResponse, endpoint: SnapshotEndpoint): void {
  if (req.method !== "GET" && req.method !== "HEAD") return sendMethodNotAllowed(res, "GET");
  const company = resolveSnapshotCompany(req);
  if (!company) {
    return sendJson(res, 401, { error: "unauthorized", message: "The Company-Api-Token header is missing or not valid." });
  }
  sendJson(res, 200, snapshotRows(state, company, endpoint));
}

/** The rows of one snapshot endpoint for a company, in a stable order. */
export function snapshotRows(state: ServiceState, company: CompanyDef, endpoint: SnapshotEndpoint): Record<string, unknown>[] {
  switch (endpoint) {
    case "projects":
      return list(state, company, "project").map((r) => recordView(company, r));
    case "proposals":
      return list(state, company, "proposal").map((r) => recordView(company, r));
    case "projectResources":
      return resourceRows(state, company, "project");
    case "proposalResources":
      return resourceRows(state, company, "proposal");
    case "projectScores":
      // Only active projects carry project score rows.
      return scoreRows(list(state, company, "project").filter((r) => r.status === "Active"));
    case "proposalScores":
      return scoreRows(list(state, company, "proposal"));
  }
}

function list(state: ServiceState, company: CompanyDef, kind: RecordKindName): RecordData[] {
  return [...state.recordsOf(company.id, kind).values()];
}

function resourceRows(state: ServiceState, company: CompanyDef, kind: RecordKindName): Record<string, unknown>[] {
  const records = list(state, company, kind);
  const source = kind === "project" ? "projects" : "proposals";
  const rows: Record<string, unknown>[] = [];
  const base = (resourceId: number, p: (typeof PERIODS)[number]): Record<string, unknown> => {
    const res = RESOURCES.find((r) => r.id === resourceId)!;
    const row: Record<string, unknown> = {
      period: p.period,
      period_name: p.period_name,
      period_number: p.period_number,
      fiscal_year: p.fiscal_year,
      resource_id: res.id,
      resource_name: res.name,
    };
    if (company.resourceTeams) row.resource_team = res.team;
    return row;
  };
  for (const a of ASSIGNMENTS[kind]) {
    const rec = records[a.recordIndex];
    if (!rec) continue;
    PERIODS.forEach((p, i) => {
      rows.push({
        ...base(a.resourceId, p),
        estimate: a.hours[i],
        work_type: "project_work",
        snapshot_source: source,
        project_token: rec.project_token,
        project_name: rec.project_name,
        npt_category_id: null,
        npt_category_name: null,
      });
    });
  }
  for (const resourceId of NPT_RESOURCES[kind]) {
    const res = RESOURCES.find((r) => r.id === resourceId)!;
    for (const [catId, hours] of Object.entries(NPT[resourceId] ?? {})) {
      const cat = NPT_CATEGORIES.find((c) => c.id === Number(catId))!;
      PERIODS.forEach((p, i) => {
        rows.push({
          ...base(resourceId, p),
          // Outside the resource's availability non-project time is effectively zero.
          estimate: res.unavailable.includes(p.period_number) ? 0 : hours[i],
          work_type: "non_project_work",
          snapshot_source: source,
          project_token: null,
          project_name: null,
          npt_category_id: cat.id,
          npt_category_name: cat.name,
        });
      });
    }
  }
  return rows;
}

function scoreRows(records: RecordData[]): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const rec of records) {
    const selected = SCORE_SELECTIONS[rec.project_token] ?? {};
    for (const c of CRITERIA) {
      const opt = c.options.find((o) => o.id === selected[c.id]);
      rows.push({
        project_token: rec.project_token,
        project_name: rec.project_name,
        project_type: rec.project_type,
        score_category: c.category,
        scoring_criterion_id: c.id,
        scoring_criterion_name: c.name,
        scoring_criterion_option_id: opt ? opt.id : null,
        scoring_criterion_option_name: opt ? opt.name : null,
        scoring_criterion_option_value: opt ? opt.value : null,
        last_updated: SCORES_LAST_UPDATED,
      });
    }
  }
  return rows;
}
