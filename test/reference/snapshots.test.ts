/** Snapshot endpoints: auth, list rows with custom fields, resource row contract and dedup overlap, scores. */
import { RESOURCE_DEDUP_KEY, ResourceRowSchema, ScoreRowSchema } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { ACME_RECORD_HEADERS, GLOBEX_TOKEN, acme, get, json, start, type Row } from "./helpers";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});

const ENDPOINTS = [
  "/api/snapshot/projects",
  "/api/snapshot/proposals",
  "/api/snapshot/projects/resources",
  "/api/snapshot/proposals/resources",
  "/api/snapshot/projects/scores",
  "/api/snapshot/proposals/scores",
];

async function rows(path: string, headers = acme()): Promise<Row[]> {
  const res = await get(svc.url, path, headers);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = await json<Row[]>(res);
  expect(Array.isArray(body)).toBe(true);
  return body;
}

describe("auth", () => {
  test.each(ENDPOINTS)("%s without a token → 401 JSON unauthorized", async (path) => {
    const res = await get(svc.url, path);
    expect(res.status).toBe(401);
    const body = await json(res);
    expect(body.error).toBe("unauthorized");
    expect(typeof body.message).toBe("string");
  });

  test.each(ENDPOINTS)("%s with a wrong token → 401", async (path) => {
    expect((await get(svc.url, path, { "Company-Api-Token": "wrong" })).status).toBe(401);
  });

  test("record headers do not authenticate snapshots", async () => {
    expect((await get(svc.url, "/api/snapshot/projects", ACME_RECORD_HEADERS)).status).toBe(401);
  });

  test.each(ENDPOINTS)("globex (reporting disabled) still reads %s", async (path) => {
    const body = await rows(path, { "Company-Api-Token": GLOBEX_TOKEN });
    expect(body.length).toBeGreaterThan(0);
  });

  test("snapshot paths refuse other methods", async () => {
    const res = await fetch(svc.url + "/api/snapshot/projects", { method: "POST", headers: acme() });
    expect(res.status).toBe(405);
  });
});

describe("project and proposal lists", () => {
  test("rows carry token, name, type, status, start date and custom fields by display name", async () => {
    const projects = await rows("/api/snapshot/projects");
    expect(projects.length).toBeGreaterThanOrEqual(5);
    for (const p of projects) {
      expect(Object.keys(p)).toEqual([
        "project_token",
        "project_name",
        "project_type",
        "status",
        "start_date",
        "Budget Contingency",
        "Sponsor",
        "Cost Center Code",
      ]);
      expect(typeof p.project_token).toBe("string");
      const bc = p["Budget Contingency"];
      expect(bc === null || bc === "" || (typeof bc === "string" && /^-?\d+(\.\d+)?$/.test(bc))).toBe(true);
    }
    const bcs = projects.map((p) => p["Budget Contingency"]);
    expect(bcs).toContain(null);
    expect(bcs).toContain("");
    expect(bcs).toContain("1500.5");
    expect(projects.map((p) => p["Cost Center Code"])).toContain("00420");
  });

  test("proposals have their own tokens", async () => {
    const proposals = await rows("/api/snapshot/proposals");
    const projects = await rows("/api/snapshot/projects");
    const projectTokens = new Set(projects.map((p) => p.project_token));
    expect(proposals.length).toBeGreaterThan(0);
    expect(proposals.every((p) => !projectTokens.has(p.project_token))).toBe(true);
  });

  test("globex rows carry globex's own custom fields", async () => {
    const projects = await rows("/api/snapshot/projects", { "Company-Api-Token": GLOBEX_TOKEN });
    expect(projects.every((p) => "Sponsor" in p && !("Budget Contingency" in p))).toBe(true);
  });
});

describe("resource rows", () => {
  let projectRows: Row[];
  let proposalRows: Row[];
  beforeAll(async () => {
    projectRows = await rows("/api/snapshot/projects/resources");
    proposalRows = await rows("/api/snapshot/proposals/resources");
  });

  test("every row satisfies the contract and is one resource and one period", () => {
    for (const r of [...projectRows, ...proposalRows]) {
      ResourceRowSchema.parse(r);
      expect(r).not.toHaveProperty("period_start_date");
      expect(r).not.toHaveProperty("period_end_date");
      expect(r).not.toHaveProperty("resource_department");
      expect(typeof r.resource_team).toBe("string");
      expect(typeof r.estimate).toBe("number");
      // No wide period-label columns.
      expect(Object.keys(r).some((k) => /^\d{4}-\d{2}$/.test(k) || /^(jan|feb|mar|apr)/i.test(k))).toBe(false);
    }
  });

  test("snapshot_source matches the endpoint; both work types occur", () => {
    expect(projectRows.every((r) => r.snapshot_source === "projects")).toBe(true);
    expect(proposalRows.every((r) => r.snapshot_source === "proposals")).toBe(true);
    for (const set of [projectRows, proposalRows]) {
      expect(new Set(set.map((r) => r.work_type))).toEqual(new Set(["project_work", "non_project_work"]));
    }
  });

  test("NPT rows carry category id and name; project rows do not", () => {
    for (const r of [...projectRows, ...proposalRows]) {
      if (r.work_type === "non_project_work") {
        expect(r.npt_category_id).not.toBeNull();
        expect(typeof r.npt_category_name).toBe("string");
      } else {
        expect(r.npt_category_id).toBeNull();
        expect(r.npt_category_name).toBeNull();
      }
    }
  });

  const key = (r: Row) => JSON.stringify(RESOURCE_DEDUP_KEY.map((k) => r[k] ?? null));

  test("project and proposal NPT rows overlap on the dedup key (a combining client has something to dedupe)", () => {
    const projectNpt = new Map(projectRows.filter((r) => r.work_type === "non_project_work").map((r) => [key(r), r]));
    const overlap = proposalRows.filter((r) => r.work_type === "non_project_work" && projectNpt.has(key(r)));
    expect(overlap.length).toBeGreaterThan(0);
    // Same time seen from both sides: same estimate.
    for (const r of overlap) expect(r.estimate).toBe(projectNpt.get(key(r))?.estimate);
    // And some NPT rows are unique to proposals.
    expect(proposalRows.some((r) => r.work_type === "non_project_work" && !projectNpt.has(key(r)))).toBe(true);
  });

  test("NPT keys are unique within one snapshot", () => {
    for (const set of [projectRows, proposalRows]) {
      const keys = set.filter((r) => r.work_type === "non_project_work").map(key);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  test("some project_work rows share the key tuple (they must NOT be deduped)", () => {
    const keys = projectRows.filter((r) => r.work_type === "project_work").map(key);
    expect(new Set(keys).size).toBeLessThan(keys.length);
  });

  test("NPT is zero outside the resource's availability", () => {
    const unavailable = projectRows.filter((r) => r.work_type === "non_project_work" && r.resource_id === 104 && r.period_number === 4);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.every((r) => r.estimate === 0)).toBe(true);
  });

  test("without a team hierarchy (globex) rows have no resource_team", async () => {
    const globex = await rows("/api/snapshot/projects/resources", { "Company-Api-Token": GLOBEX_TOKEN });
    expect(globex.length).toBeGreaterThan(0);
    expect(globex.every((r) => !("resource_team" in r))).toBe(true);
  });
});

describe("score rows", () => {
  test("flat matrix: one row per record and criterion; unselected criteria have null option fields", async () => {
    const scores = await rows("/api/snapshot/projects/scores");
    const projects = await rows("/api/snapshot/projects");
    const active = projects.filter((p) => p.status === "Active");
    const criteria = new Set(scores.map((s) => s.scoring_criterion_id));
    expect(scores).toHaveLength(active.length * criteria.size);
    expect(new Set(scores.map((s) => s.project_token))).toEqual(new Set(active.map((p) => p.project_token)));
    for (const s of scores) {
      ScoreRowSchema.parse(s);
      for (const f of ["project_token", "project_type", "score_category", "scoring_criterion_id", "scoring_criterion_name", "last_updated"]) {
        expect(s[f]).not.toBeNull();
      }
      const opt = [s.scoring_criterion_option_id, s.scoring_criterion_option_name, s.scoring_criterion_option_value];
      expect(opt.every((v) => v === null) || opt.every((v) => v !== null)).toBe(true);
    }
    expect(scores.some((s) => s.scoring_criterion_option_id === null)).toBe(true);
    expect(scores.some((s) => s.scoring_criterion_option_id !== null)).toBe(true);
  });

  test("proposal scores cover proposals only", async () => {
    const scores = await rows("/api/snapshot/proposals/scores");
    const proposals = await rows("/api/snapshot/proposals");
    expect(new Set(scores.map((s) => s.project_token))).toEqual(new Set(proposals.map((p) => p.project_token)));
    expect(scores.some((s) => s.scoring_criterion_option_value === null)).toBe(true);
  });
});
