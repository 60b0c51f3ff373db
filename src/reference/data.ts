/**
 * Demo data of the reference service: companies, credentials, custom fields, the dataset catalog
 * with its deterministic row generators, and the seed records the snapshot and record endpoints
 * start from. Everything here is immutable; run-time state lives in `state.ts`.
 */
import type { EdmType } from "../contract/contract";

/** A company of the demo tenant. */
export interface CompanyDef {
  id: string;
  name: string;
  /** Company API token (reporting, snapshots, record `api-token`). */
  token: string;
  reportingEnabled: boolean;
  /** Whether the resource team hierarchy is enabled (controls `resource_team` on resource rows). */
  resourceTeams: boolean;
  /** Record credentials (`api-auth`, `api-secret`). */
  recordAuth: string;
  recordSecret: string;
  /** Seed mixed into every generated value, so companies never share data or ETags. */
  seed: number;
  customFields: CustomFieldDef[];
}

export interface CustomFieldDef {
  /** Display name: the key in `custom_fields` and in detail/snapshot rows. */
  name: string;
  type: "numeric" | "text";
  /** Column name of this field in the `projects` dataset (CSDL names cannot hold spaces). */
  column: string;
}

export const ACME_CUSTOM_FIELDS: CustomFieldDef[] = [
  { name: "Budget Contingency", type: "numeric", column: "budget_contingency" },
  { name: "Sponsor", type: "text", column: "sponsor" },
  { name: "Cost Center Code", type: "text", column: "cost_center_code" },
];

export const COMPANIES: readonly CompanyDef[] = [
  {
    id: "acme",
    name: "Acme Corporation",
    token: "demo-acme-token",
    reportingEnabled: true,
    resourceTeams: true,
    recordAuth: "demo-api-auth",
    recordSecret: "demo-api-secret",
    seed: 0x0ace,
    customFields: ACME_CUSTOM_FIELDS,
  },
  {
    id: "globex",
    name: "Globex Inc.",
    token: "demo-globex-token",
    reportingEnabled: false,
    resourceTeams: false,
    recordAuth: "demo-globex-api-auth",
    recordSecret: "demo-globex-api-secret",
    seed: 0x61b0,
    customFields: [{ name: "Sponsor", type: "text", column: "sponsor" }],
  },
];

/** The demo company with this id, if any. */
export function companyById(id: string): CompanyDef | undefined {
  return COMPANIES.find((c) => c.id === id);
}

// ---------------------------------------------------------------------------------------------
// Deterministic generation helpers

/** A well-mixed 32-bit hash of a few integers; the only source of "randomness" in the demo data. */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** ISO-8601 UTC with `Z` and whole seconds (the service's date-time form). */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** A cell as the generator produces it; `bigint` only for Int64 values beyond 2^53. */
export type RawCell = string | number | boolean | bigint | null;

export interface GenContext {
  /** Company id, for identifiers that name their company (project tokens). */
  companyId: string;
  companySeed: number;
  /** Bumped by every regeneration; changes some row values. */
  generation: number;
}

export interface DatasetColumn {
  name: string;
  type: EdmType;
  nullable: boolean;
}

export type InitialArtifactState = "generated" | "not_generated" | "invalid_cached_artifact";

export interface DatasetDef {
  key: string;
  name: string;
  schemaVersion: string;
  columns: DatasetColumn[];
  /** Key properties for `$metadata` (never nullable). */
  keyColumns: string[];
  defaultRows: number;
  initial: InitialArtifactState;
  /** Generated-at of the initial export (fixed, so runs are reproducible). */
  initialGeneratedAt: string | null;
  publishedAt: string;
  customFields: CustomFieldDef[];
  pendingChanges: unknown[];
  /** Row `i` (0-based) of the export for a company and generation. Pure. */
  row(i: number, ctx: GenContext): RawCell[];
}

/**
 * Text values that break naive CSV writers, spreadsheet imports and type sniffing. Every one of
 * them appears in the first 100 rows of `financials`.
 */
export const TRICKY_TEXT: readonly string[] = [
  "Alpha, Beta & Gamma",
  'The "Big" Upgrade',
  "Line one\r\nLine two",
  "Line one\nLF only",
  "Carriage\rreturn only",
  "Zürich – Ω 東京",
  "=SUM(A1:A9)",
  "+41 44 668 18 00",
  "-5 days",
  "@risk review",
  "00123",
  "1/2",
  "1E5",
  "TRUE",
  "2026-03-01",
  "null",
  " leading and trailing space ",
  "Tab\tseparated",
  "Rocket 🚀 launch",
  '"',
  "'apostrophe",
];

const FIN_BASE_MS = Date.UTC(2026, 0, 5, 8, 0, 0);
const INT53 = 9007199254740993n; // 2^53 + 1: the first integer a double cannot hold

function col(name: string, type: EdmType, nullable = false): DatasetColumn {
  return { name, type, nullable };
}

const financials: DatasetDef = {
  key: "financials",
  name: "Project financials",
  schemaVersion: "3",
  columns: [
    col("project_id", "Edm.String"),
    col("project_name", "Edm.String"),
    col("cost_center_code", "Edm.String", true),
    col("fiscal_year", "Edm.Int32"),
    col("period_number", "Edm.Int32"),
    col("budget", "Edm.Decimal"),
    col("actual_cost", "Edm.Decimal", true),
    col("variance_pct", "Edm.Decimal"),
    col("period_start", "Edm.Date"),
    col("last_updated", "Edm.DateTimeOffset"),
    col("is_capex", "Edm.Boolean", true),
    col("external_ref", "Edm.Int64"),
  ],
  keyColumns: ["project_id", "fiscal_year", "period_number"],
  defaultRows: 120,
  initial: "generated",
  initialGeneratedAt: "2026-01-15T06:00:00Z",
  publishedAt: "2025-12-01T09:00:00Z",
  customFields: [],
  pendingChanges: [],
  row(i, { companySeed, generation }) {
    const p = Math.floor(i / 12) + 1;
    const period = (i % 12) + 1;
    const fy = 2025 + (p % 2);
    const h = mix(companySeed, i);
    const hg = mix(companySeed, i, generation);
    const name = i % 4 === 1 ? TRICKY_TEXT[((i - 1) / 4) % TRICKY_TEXT.length] : `Project ${p}`;
    const cost = i % 17 === 5 ? null : "00" + pad(100 + (mix(companySeed, p) % 900), 3);
    const budgetCents = 1_000_000 + (h % 9_000_000);
    // Regeneration moves actual costs, so a new export has different rows, not just a new date.
    const actualCents = i % 9 === 4 ? null : Math.floor((budgetCents * (80 + (hg % 41))) / 100);
    const variance = ((hg % 20001) - 10000) / 100;
    const updatedMs = FIN_BASE_MS + (h % (40 * 86400)) * 1000 + generation * 86400_000;
    const capex = i % 11 === 3 ? null : h % 2 === 0;
    const ext: number | bigint = i % 10 === 0 ? INT53 + BigInt(i) : 100_000 + i;
    return [
      `PRJ-${pad(p, 4)}`,
      name,
      cost,
      fy,
      period,
      budgetCents / 100,
      actualCents === null ? null : actualCents / 100,
      variance,
      `${fy}-${pad(period, 2)}-01`,
      isoSeconds(updatedMs),
      capex,
      ext,
    ];
  },
};

const PROJECT_TYPES = ["Capital", "Operational", "IT", "Research"];
const STATUSES = ["Active", "Active", "On Hold", "Completed"];

const projectsDataset: DatasetDef = {
  key: "projects",
  name: "Projects",
  schemaVersion: "2",
  columns: [
    col("project_token", "Edm.String"),
    col("project_name", "Edm.String"),
    col("project_type", "Edm.String"),
    col("status", "Edm.String"),
    col("start_date", "Edm.Date"),
    col("budget_contingency", "Edm.Decimal", true),
    col("sponsor", "Edm.String", true),
    col("cost_center_code", "Edm.String", true),
    col("is_active", "Edm.Boolean"),
    col("last_updated", "Edm.DateTimeOffset"),
  ],
  keyColumns: ["project_token"],
  defaultRows: 24,
  initial: "generated",
  initialGeneratedAt: "2026-01-15T05:30:00Z",
  publishedAt: "2025-11-20T10:00:00Z",
  customFields: ACME_CUSTOM_FIELDS,
  pendingChanges: [{ field: "Risk Owner", type: "text", change: "added", requested_at: "2026-01-10T12:00:00Z" }],
  row(i, { companyId, companySeed, generation }) {
    const h = mix(companySeed, 7, i);
    const status = STATUSES[h % STATUSES.length];
    return [
      `pt_${companyId}_${pad(i + 1, 4)}`,
      `Project ${i + 1}`,
      PROJECT_TYPES[(h >>> 3) % PROJECT_TYPES.length],
      status,
      `2025-${pad((i % 12) + 1, 2)}-${pad((h % 28) + 1, 2)}`,
      i % 5 === 2 ? null : ((h >>> 5) % 500000) / 100,
      i % 6 === 1 ? null : ["Dana Scully", "Fox Mulder", "Zoë Ångström"][h % 3],
      i % 7 === 3 ? null : "00" + pad(400 + (h % 100), 3),
      status === "Active",
      isoSeconds(Date.UTC(2026, 0, 10) + (h % 86400) * 1000 + generation * 3600_000),
    ];
  },
};

const RESOURCE_NAMES = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov"];

const resourceAllocations: DatasetDef = {
  key: "resource_allocations",
  name: "Resource allocations",
  schemaVersion: "1",
  columns: [
    col("resource_id", "Edm.Int32"),
    col("resource_name", "Edm.String"),
    col("project_token", "Edm.String"),
    col("fiscal_year", "Edm.Int32"),
    col("period_number", "Edm.Int32"),
    col("allocated_hours", "Edm.Decimal"),
    col("allocation_pct", "Edm.Decimal", true),
    col("updated_at", "Edm.DateTimeOffset"),
  ],
  keyColumns: ["resource_id", "project_token", "fiscal_year", "period_number"],
  defaultRows: 60,
  initial: "generated",
  // Deliberately different from the other datasets: "datasets may have different timestamps".
  initialGeneratedAt: "2026-01-14T22:15:00Z",
  publishedAt: "2025-10-01T08:00:00Z",
  customFields: [],
  pendingChanges: [],
  row(i, { companyId, companySeed, generation }) {
    const r = i % RESOURCE_NAMES.length;
    const period = (Math.floor(i / RESOURCE_NAMES.length) % 12) + 1;
    const proj = Math.floor(i / (RESOURCE_NAMES.length * 12)) + 1;
    const h = mix(companySeed, 11, i, generation);
    return [
      101 + r,
      RESOURCE_NAMES[r],
      `pt_${companyId}_${pad(proj, 4)}`,
      2026,
      period,
      (h % 3200) / 20,
      i % 8 === 6 ? null : (h % 10000) / 100,
      // Whole hours per generation on top of < 1 h of jitter: a regenerated row always shows a new time.
      isoSeconds(Date.UTC(2026, 0, 12) + (h % 3600) * 1000 + (generation - 1) * 3600_000),
    ];
  },
};

const risks: DatasetDef = {
  key: "risks",
  name: "Risks",
  schemaVersion: "1",
  columns: [
    col("risk_id", "Edm.Int32"),
    col("project_token", "Edm.String"),
    col("title", "Edm.String"),
    col("residual_priority", "Edm.String", true),
    col("residual_severity", "Edm.Int32", true),
    col("residual_likelihood", "Edm.Int32", true),
    col("identified_on", "Edm.Date"),
  ],
  keyColumns: ["risk_id"],
  defaultRows: 30,
  initial: "not_generated",
  initialGeneratedAt: null,
  publishedAt: "2026-01-02T08:00:00Z",
  customFields: [],
  pendingChanges: [],
  row(i, { companyId, companySeed }) {
    const h = mix(companySeed, 13, i);
    return [
      i + 1,
      `pt_${companyId}_${pad((i % 24) + 1, 4)}`,
      `Risk ${i + 1}`,
      i % 4 === 0 ? null : ["Low", "Medium", "High"][h % 3],
      i % 4 === 0 ? null : (h % 5) + 1,
      i % 4 === 0 ? null : ((h >>> 4) % 5) + 1,
      `2025-${pad((i % 12) + 1, 2)}-15`,
    ];
  },
};

const milestones: DatasetDef = {
  key: "milestones",
  name: "Milestones",
  schemaVersion: "1",
  columns: [
    col("milestone_id", "Edm.Int32"),
    col("project_token", "Edm.String"),
    col("milestone_name", "Edm.String"),
    col("due_date", "Edm.Date", true),
    col("completed", "Edm.Boolean"),
  ],
  keyColumns: ["milestone_id"],
  defaultRows: 0,
  initial: "generated",
  initialGeneratedAt: "2026-01-15T06:05:00Z",
  publishedAt: "2025-12-01T09:00:00Z",
  customFields: [],
  pendingChanges: [],
  row(i, { companyId }) {
    return [i + 1, `pt_${companyId}_${pad((i % 24) + 1, 4)}`, `Milestone ${i + 1}`, null, false];
  },
};

const timesheets: DatasetDef = {
  key: "timesheets",
  name: "Timesheets",
  schemaVersion: "4",
  columns: [
    col("timesheet_id", "Edm.Int64"),
    col("resource_id", "Edm.Int32"),
    col("week_start", "Edm.Date"),
    col("hours", "Edm.Decimal"),
    col("approved", "Edm.Boolean", true),
  ],
  keyColumns: ["timesheet_id"],
  defaultRows: 340,
  initial: "invalid_cached_artifact",
  initialGeneratedAt: "2026-01-13T03:00:00Z",
  publishedAt: "2025-09-01T09:00:00Z",
  customFields: [],
  pendingChanges: [],
  row(i, { companySeed }) {
    const h = mix(companySeed, 17, i);
    return [5_000_000 + i, 101 + (i % 5), `2026-01-${pad((i % 4) * 7 + 5, 2)}`, (h % 800) / 20, i % 3 === 0 ? null : true];
  },
};

/** The dataset catalog, in listing order. Every company lists the same keys. */
export const DATASETS: readonly DatasetDef[] = [financials, projectsDataset, resourceAllocations, risks, milestones, timesheets];

/** The listed dataset with this key, if any. */
export function datasetByKey(key: string): DatasetDef | undefined {
  return DATASETS.find((d) => d.key === key);
}

// ---------------------------------------------------------------------------------------------
// Seed records (projects and proposals) behind the snapshot and record endpoints

/** A stored project or proposal record. `custom` maps display name to the saved value. */
export interface RecordData {
  project_token: string;
  project_name: string;
  project_type: string;
  status: string;
  start_date: string;
  /** Display name → saved value: numeric fields hold a dot-decimal string or "" (saved, no value); null = no saved value record. */
  custom: Record<string, string | null>;
}

export type RecordKindName = "project" | "proposal";

function seedRecord(
  token: string,
  name: string,
  type: string,
  status: string,
  start: string,
  custom: Record<string, string | null>,
): RecordData {
  return { project_token: token, project_name: name, project_type: type, status, start_date: start, custom };
}

/** Fresh copies of a company's seed records (callers mutate them). */
export function seedRecords(companyId: string): { project: RecordData[]; proposal: RecordData[] } {
  if (companyId === "acme") {
    return {
      project: [
        seedRecord("pt_acme_0001", "ERP Migration", "IT", "Active", "2025-04-01", {
          "Budget Contingency": "1500.5",
          Sponsor: "Dana Scully",
          "Cost Center Code": "00420",
        }),
        seedRecord("pt_acme_0002", "Warehouse Expansion, Phase 2", "Capital", "Active", "2025-06-15", {
          "Budget Contingency": "25000",
          Sponsor: "Fox Mulder",
          "Cost Center Code": "00123",
        }),
        seedRecord("pt_acme_0003", "Zürich Office Fit-out", "Capital", "Active", "2025-09-01", {
          "Budget Contingency": "",
          Sponsor: "Zoë Ångström",
          "Cost Center Code": "01000",
        }),
        seedRecord("pt_acme_0004", 'Data Platform "Lakehouse"', "IT", "Active", "2025-11-03", {
          "Budget Contingency": null,
          Sponsor: null,
          "Cost Center Code": "00420",
        }),
        seedRecord("pt_acme_0005", "Safety Training Rollout", "Operational", "On Hold", "2025-02-10", {
          "Budget Contingency": "-250.75",
          Sponsor: "Walter Skinner",
          "Cost Center Code": "00007",
        }),
        seedRecord("pt_acme_0006", "Legacy CRM Retirement", "IT", "Completed", "2024-08-19", {
          "Budget Contingency": "0.1",
          Sponsor: "",
          "Cost Center Code": null,
        }),
      ],
      proposal: [
        seedRecord("pp_acme_0001", "Solar Roof Pilot", "Capital", "Submitted", "2026-03-01", {
          "Budget Contingency": "12000",
          Sponsor: "Dana Scully",
          "Cost Center Code": "00420",
        }),
        seedRecord("pp_acme_0002", "AI Helpdesk", "IT", "Draft", "2026-05-01", {
          "Budget Contingency": null,
          Sponsor: "Fox Mulder",
          "Cost Center Code": "00123",
        }),
        seedRecord("pp_acme_0003", "Fleet Electrification", "Operational", "Under Review", "2026-07-01", {
          "Budget Contingency": "",
          Sponsor: null,
          "Cost Center Code": null,
        }),
      ],
    };
  }
  return {
    project: [
      seedRecord(`pt_${companyId}_0001`, "Globex Launch Site", "Capital", "Active", "2025-05-01", { Sponsor: "Hank Scorpio" }),
      seedRecord(`pt_${companyId}_0002`, "Globex Payroll", "IT", "Active", "2025-07-01", { Sponsor: null }),
    ],
    proposal: [seedRecord(`pp_${companyId}_0001`, "Globex Monorail", "Capital", "Draft", "2026-02-01", { Sponsor: "Lyle Lanley" })],
  };
}

// ---------------------------------------------------------------------------------------------
// Resource snapshot seed: resources, periods, non-project-time categories, assignments

export interface ResourceDef {
  id: number;
  name: string;
  team: string;
  /** Period numbers in which the resource is unavailable (NPT estimates are 0 there). */
  unavailable: number[];
}

export const RESOURCES: readonly ResourceDef[] = [
  { id: 101, name: "Ada Lovelace", team: "Engineering", unavailable: [] },
  { id: 102, name: "Grace Hopper", team: "Engineering", unavailable: [] },
  { id: 103, name: "Alan Turing", team: "Finance", unavailable: [] },
  { id: 104, name: "Edsger Dijkstra", team: "PMO", unavailable: [4] },
  { id: 105, name: "Barbara Liskov", team: "Research", unavailable: [] },
];

export const NPT_CATEGORIES = [
  { id: 1, name: "Vacation" },
  { id: 2, name: "Training" },
  { id: 3, name: "Administration" },
] as const;

export const PERIODS = [1, 2, 3, 4].map((n) => ({
  fiscal_year: 2026,
  period_number: n,
  period: `2026-${pad(n, 2)}`,
  period_name: ["January", "February", "March", "April"][n - 1] + " 2026",
}));

export interface Assignment {
  resourceId: number;
  /** Index into the company's seed records of the snapshot's kind. */
  recordIndex: number;
  hours: number[];
}

/**
 * Assignments per snapshot source. Resource 101 works on two projects in the same periods, so two
 * project_work rows share the de-duplication key tuple and must both survive a combine.
 */
export const ASSIGNMENTS: Record<RecordKindName, Assignment[]> = {
  project: [
    { resourceId: 101, recordIndex: 0, hours: [40, 32.5, 40, 20] },
    { resourceId: 101, recordIndex: 1, hours: [20, 20, 16, 8] },
    { resourceId: 102, recordIndex: 0, hours: [60, 60, 52.25, 60] },
    { resourceId: 103, recordIndex: 2, hours: [12, 0, 12, 12] },
    { resourceId: 104, recordIndex: 3, hours: [80, 80, 80, 0] },
  ],
  proposal: [
    { resourceId: 102, recordIndex: 0, hours: [8, 8, 8, 8] },
    { resourceId: 103, recordIndex: 1, hours: [4, 6, 0, 10] },
    { resourceId: 105, recordIndex: 0, hours: [16, 16, 24, 24] },
  ],
};

/**
 * Non-project time per resource: category id → hours per period. Resources 102 and 103 appear in
 * both snapshots, so their NPT rows overlap on the de-duplication key (same values: it is the same
 * time, seen from both sides); 101/104 are project-only and 105 proposal-only.
 */
export const NPT: Record<number, Record<number, number[]>> = {
  101: { 1: [8, 0, 0, 16], 2: [4, 4, 0, 0] },
  102: { 1: [0, 24, 0, 0], 2: [2, 2, 2, 2] },
  103: { 1: [0, 0, 40, 0], 3: [6, 6, 6, 6.5] },
  104: { 1: [0, 8, 0, 0], 3: [10, 10, 10, 10] },
  105: { 1: [16, 0, 0, 0] },
};

/** Which resources' NPT rows each snapshot source reports. */
export const NPT_RESOURCES: Record<RecordKindName, number[]> = {
  project: [101, 102, 103, 104],
  proposal: [102, 103, 105],
};

// ---------------------------------------------------------------------------------------------
// Scores seed

export const CRITERIA = [
  {
    id: 1,
    name: "Strategic Alignment",
    category: "Strategy",
    options: [
      { id: 11, name: "Low", value: 1 },
      { id: 12, name: "Medium", value: 2 },
      { id: 13, name: "High", value: 3 },
    ],
  },
  {
    id: 2,
    name: "Delivery Risk",
    category: "Risk",
    options: [
      { id: 21, name: "Low", value: 3 },
      { id: 22, name: "Medium", value: 2 },
      { id: 23, name: "High", value: 1 },
    ],
  },
  {
    id: 3,
    name: "Return on Investment",
    category: "Value",
    options: [
      { id: 31, name: "< 10%", value: 1 },
      { id: 32, name: "10–25%", value: 2 },
      { id: 33, name: "> 25%", value: 3.5 },
    ],
  },
] as const;

/** Selected option id per record token and criterion id; absent = no option selected. */
export const SCORE_SELECTIONS: Record<string, Record<number, number>> = {
  pt_acme_0001: { 1: 13, 2: 22, 3: 33 },
  pt_acme_0002: { 1: 12, 3: 32 },
  pt_acme_0003: { 2: 21 },
  pt_acme_0005: { 1: 11, 2: 23, 3: 31 },
  pp_acme_0001: { 1: 13, 2: 21, 3: 33 },
  pp_acme_0002: { 3: 31 },
  pt_globex_0001: { 1: 12 },
};

export const SCORES_LAST_UPDATED = "2026-01-09T14:30:00Z";
