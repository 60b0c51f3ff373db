/**
 * Saved views (issue #28): the document kept in the workbook and exported to a file, read strictly;
 * and `ppm export --view NAME --views FILE` against the reference service, whose rows equal the
 * query engine's on the same export (what the pane's import of the view writes).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { parseCsvText, PpmClient } from "../../src/service";
import { applyQuery, parseQuery } from "../../src/query";
import { tableToCsv } from "../../src/cli/output";
import { emptyDocument, findView, parseViews, removeView, serializeViews, upsertView, ViewError, MAX_VIEWS } from "../../src/views/views";

const ROOT = path.resolve(__dirname, "../..");
const TOKEN = "demo-acme-token";

describe("views document", () => {
  const v = { name: "Budget by year", dataset: "financials", query: parseQuery("$apply=groupby((fiscal_year),aggregate(budget with sum as total))") };

  it("round-trips through its file text; names compare case-insensitively; a view of the same name is replaced", () => {
    let doc = upsertView(emptyDocument(), v);
    doc = upsertView(doc, { ...v, name: "BUDGET BY YEAR", query: { top: 3 } });
    expect(doc.views).toHaveLength(1);
    const text = serializeViews(doc);
    expect(parseViews(text)).toEqual(doc);
    expect(findView(parseViews(text), "budget by year")?.query).toEqual({ top: 3 });
    expect(removeView(doc, "Budget By Year").views).toEqual([]);
  });

  it("refuses what is not a views document, naming the problem", () => {
    expect(() => parseViews("{")).toThrow(/not JSON/);
    expect(() => parseViews(JSON.stringify({ format: "ppm-views", version: 2, views: [] }))).toThrow(ViewError);
    expect(() => parseViews(JSON.stringify({ format: "ppm-views", version: 1, views: [{ ...v, token: "x" }] }))).toThrow(/views\.0/);
    expect(() => parseViews(JSON.stringify({ format: "ppm-views", version: 1, views: [v, { ...v, name: "budget BY year" }] }))).toThrow(/two views named/);
    expect(() => parseViews(JSON.stringify({ format: "ppm-views", version: 1, views: [{ ...v, query: { filter: 5 } }] }))).toThrow(ViewError);
    expect(() => upsertView(emptyDocument(), { ...v, name: "  " })).toThrow(/Give the view a name/);
    let doc = emptyDocument();
    for (let i = 0; i < MAX_VIEWS; i++) doc = upsertView(doc, { ...v, name: `v${i}` });
    expect(() => upsertView(doc, { ...v, name: "one more" })).toThrow(/at most 200 views/);
  });
});

describe("ppm export --view", () => {
  let svc: ReferenceService;
  let tmp: string;
  beforeAll(async () => {
    svc = await startReferenceService({ port: 0 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-views-"));
  });
  afterAll(async () => {
    await svc?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function ppm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [path.join(ROOT, "bin/ppm.js"), ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, PPM_TOKEN: TOKEN } }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      });
    });
  }

  it("writes the rows the query engine gives on the same export; usage errors name the problem", async () => {
    const query = "$filter=fiscal_year eq 2026&$select=project_id,period_number,budget&$orderby=budget desc&$top=5";
    const file = path.join(tmp, "views.json");
    fs.writeFileSync(file, serializeViews(upsertView(emptyDocument(), { name: "Top 5", dataset: "financials", query: parseQuery(query) })));
    const run = await ppm(["export", "--view", "top 5", "--views", file, "--env", svc.url]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const r = await new PpmClient({ id: "o", name: "o", baseUrl: svc.url, token: TOKEN }).fetchDataset("financials", { format: "csv", conditional: false });
    if (r.status !== "updated") throw new Error("no table");
    const want = [...tableToCsv(applyQuery(r.table, parseQuery(query)).table)].join("");
    expect(run.stdout).toBe(want);
    expect(parseCsvText(run.stdout)).toHaveLength(6);

    const missing = await ppm(["export", "--view", "Nope", "--views", file, "--env", svc.url]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('has no view named "Nope" (it has: Top 5)')]);
    const both = await ppm(["export", "--view", "Top 5", "--views", file, "--query", "$top=1", "--env", svc.url]);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("--view and --query cannot be combined")]);
    const other = await ppm(["export", "projects", "--view", "Top 5", "--views", file, "--env", svc.url]);
    expect([other.code, other.stderr]).toEqual([2, expect.stringContaining('is of dataset "financials", not "projects"')]);
    const noFile = await ppm(["export", "--view", "Top 5", "--env", svc.url]);
    expect([noFile.code, noFile.stderr]).toEqual([2, expect.stringContaining("--view needs --views FILE")]);
  });
});
