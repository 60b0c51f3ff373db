/**
 * The workbook scenarios of the self-test kit. The same code runs inside real Excel (the self-test
 * variant of the add-in, `npm run test:excel`) and against the emulated host (the preview, `--host
 * emulated`; jest): it drives the add-in's own engine (`src/addin/engine.ts`, what the task pane
 * calls) through the global `Excel`, against the reference service, and checks the workbook cell for
 * cell through the same `Excel`.
 *
 * Each scenario makes its own sheets (imports go to new sheets named by the add-in). The kit runs
 * only in a workbook it created (`guardNewWorkbook`): it never touches anything else.
 */
import { createEngine, runExcel, type Engine } from "../addin/engine";
import { PpmClient } from "../service/client";
import type { Connection } from "../service/connection";
import type { BindingSource } from "../refresh/binding";
import type { LocalQuery } from "../query";
import { applyQuery, parseQuery } from "../query";
import { recordsServiceFrom } from "../records/client";
import { confirmWriteback, prepareWriteback, type WritebackDeps } from "../records/session";
import { excelWritebackWorkbook, findBinding } from "../workbook/writeback";
import { readBindings } from "../workbook/bindingStore";
import type { Table } from "../table/model";
import type { ScenarioResult } from "./core/report";
import { CONTROL_HEADER, CONTROL_HEADER_VALUE } from "../reference/controlHeader";

/** The setting that marks a workbook as the kit's own (it was new when the kit first ran in it). */
export const SELFTEST_MARK = "ppm.selftest";

export interface KitOptions {
  /** The reference service (demo data, `/__control` hooks), e.g. `http://localhost:4100`. */
  serviceUrl: string;
  /** Demo credentials of the reference service's `acme` company. */
  token?: string;
  apiAuth?: string;
  apiSecret?: string;
}

interface Env {
  readonly engine: Engine;
  readonly connection: Connection;
  readonly client: PpmClient;
  control(path: string): Promise<void>;
  /** Bindings made by earlier scenarios, by name. */
  readonly tables: Map<string, { bindingId: string; tableName: string; sheetName: string }>;
}

export interface Scenario {
  readonly name: string;
  /** A scenario that waits for something not built yet says why (reported as skipped). */
  readonly skip?: string;
  run(env: Env): Promise<string>;
}

class CheckFailed extends Error {}
function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new CheckFailed(what);
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The body of a table as Excel holds it: header, values, number formats, formulas. */
async function readTable(tableName: string): Promise<{ header: unknown[]; values: unknown[][]; formats: unknown[][]; formulas: unknown[][]; types: string[][] }> {
  return runExcel(async (context) => {
    const t = context.workbook.tables.getItem(tableName);
    const header = t.getHeaderRowRange().load("values");
    const body = t.getDataBodyRange().load("values, numberFormat, formulas, valueTypes");
    await context.sync();
    return { header: header.values[0], values: body.values, formats: body.numberFormat, formulas: body.formulas, types: body.valueTypes };
  });
}

async function importInto(env: Env, label: string, source: BindingSource, query: LocalQuery | null = null) {
  const out = await env.engine.importSource({
    connection: env.connection,
    companyId: "acme",
    source,
    query,
    destination: { kind: "newSheet" },
    signal: new AbortController().signal,
    onProgress: () => undefined,
    secrets: secretsOf(env.connection),
  });
  const { bindings } = await runExcel((context) => readBindings(context));
  const binding = bindings.find((b) => b.tableName === out.tableName);
  check(!!binding, `the import of ${label} stored no binding for table ${out.tableName}`);
  env.tables.set(label, { bindingId: binding.id, tableName: out.tableName, sheetName: out.sheetName });
  return out;
}

function secretsOf(c: Connection): string[] {
  return [c.token, c.apiSecret ?? ""].filter((s) => s !== "");
}

async function serviceTable(env: Env, format: "json" | "csv" | "odata" = "json"): Promise<Table> {
  const r = await env.client.fetchDataset("financials", { format, conditional: false });
  check(r.status === "updated", "the service sent no financials export");
  return r.table;
}

function tableOf(env: Env, label: string) {
  const t = env.tables.get(label);
  check(!!t, `"${label}" was not imported (an earlier scenario failed)`);
  return t;
}

/** Values of a table equal the export's rows: same count, same text cells, same numbers where the export has numbers. */
function sameRowsAsExport(sheet: { header: unknown[]; values: unknown[][]; types: string[][] }, table: Table, what: string): void {
  check(same(sheet.header, table.columns.map((c) => c.name)), `${what}: header ${JSON.stringify(sheet.header)} is not the export's columns`);
  check(sheet.values.length === table.rows.length, `${what}: ${sheet.values.length} rows in the sheet, ${table.rows.length} in the export`);
  table.columns.forEach((c, j) => {
    if (c.type !== "text") return;
    for (let i = 0; i < table.rows.length; i++) {
      const want = table.rows[i][j] ?? "";
      check(sheet.values[i][j] === want, `${what}: ${c.name} row ${i + 1} is ${JSON.stringify(sheet.values[i][j])}, the export says ${JSON.stringify(want)}`);
      if (want !== "") check(sheet.types[i][j] === "String", `${what}: ${c.name} row ${i + 1} (${JSON.stringify(want)}) is not text in Excel (${sheet.types[i][j]})`);
    }
  });
}

/**
 * "import: financials (<label>) equals JSON": the financials export imported in another format (under
 * the table label `format`, which later scenarios use) holds the JSON import's values and number
 * formats cell for cell. Needs the JSON import first. `detail` follows the row count in the result.
 */
function importEqualsJson(format: "csv" | "odata", label: string, detail: string): Scenario {
  return {
    name: `import: financials (${label}) equals JSON`,
    async run(env) {
      const out = await importInto(env, format, { kind: "dataset", key: "financials", format });
      const imported = await readTable(out.tableName);
      const json = await readTable(tableOf(env, "json").tableName);
      check(same(imported.values, json.values), `${label} import: the cells differ from the JSON import's`);
      check(same(imported.formats, json.formats), `${label} import: the number formats differ from the JSON import's`);
      return `${out.rowCount} rows, ${detail}`;
    },
  };
}

/**
 * Regenerates the financials export (`more`: further parameters of `/__control/regenerate`), refreshes
 * the JSON import and checks that the refresh updated it to the new export (`what` names the step in
 * a failure).
 */
async function regenerateAndRefresh(env: Env, more: string, what: string) {
  const t = tableOf(env, "json");
  await env.control(`/__control/regenerate?company=acme&dataset=financials${more}`);
  const report = await env.engine.refreshOne(t.bindingId, env.connection, { secrets: secretsOf(env.connection) });
  check(report.outcome === "updated", `expected "updated", got "${report.outcome}" ${report.failure?.message ?? ""}`);
  sameRowsAsExport(await readTable(t.tableName), await serviceTable(env), what);
  return report;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "import: financials (JSON)",
    async run(env) {
      const out = await importInto(env, "json", { kind: "dataset", key: "financials", format: "json" });
      const sheet = await readTable(out.tableName);
      sameRowsAsExport(sheet, await serviceTable(env), "JSON import");
      return `${out.rowCount} rows into ${out.sheetName}; text cells (=SUM(…), 00123, 1/2, TRUE) are text`;
    },
  },
  importEqualsJson("csv", "CSV", "cell for cell and format for format equal to JSON"),
  importEqualsJson("odata", "OData", "equal to JSON"),
  {
    name: "refresh: unchanged export (304, nothing written)",
    async run(env) {
      const t = tableOf(env, "json");
      const before = await readTable(t.tableName);
      const report = await env.engine.refreshOne(t.bindingId, env.connection, { secrets: secretsOf(env.connection) });
      check(report.outcome === "unchanged", `expected "unchanged", got "${report.outcome}" ${report.failure?.message ?? ""}`);
      check(same(await readTable(t.tableName), before), "an unchanged refresh changed the table");
      return "304; the table is cell for cell as before";
    },
  },
  {
    name: "refresh: full (every row regenerated)",
    async run(env) {
      const report = await regenerateAndRefresh(env, "", "after a full refresh");
      return `${report.rowCount} rows rewritten, equal to the new export`;
    },
  },
  {
    name: "refresh: delta (5% of rows changed, 2% added, 2% removed)",
    async run(env) {
      const report = await regenerateAndRefresh(env, "&changed=0.05&added=0.02&removed=0.02&seed=7", "after a delta refresh");
      const d = report.delta;
      check(!!d && d.strategy === "delta", `expected a delta write, got ${d ? `${d.strategy} (${d.reason})` : "no delta summary"}`);
      return `delta: ${d.added} added, ${d.changed} changed, ${d.removed} removed, ${d.cellsWritten} cells written; equal to the new export`;
    },
  },
  {
    name: "refresh: fails half way, the failed table is as before",
    async run(env) {
      const json = tableOf(env, "json");
      const csv = tableOf(env, "csv");
      const before = await readTable(csv.tableName);
      await env.control("/__control/regenerate?company=acme&dataset=financials");
      // The CSV export fails (503, more times than the client retries): refresh all gets half way.
      await env.control("/__control/fault?path=" + encodeURIComponent("/api/bi/v1/financials.csv") + "&status=503&count=20&retryAfter=0");
      try {
        const out = await env.engine.refreshAll((b) => (b.id === json.bindingId || b.id === csv.bindingId ? env.connection : null), { secrets: secretsOf(env.connection) });
        const byId = new Map(out.reports.map((r) => [r.bindingId, r]));
        check(byId.get(json.bindingId)?.outcome === "updated", `the JSON table: expected "updated", got "${byId.get(json.bindingId)?.outcome}"`);
        check(byId.get(csv.bindingId)?.outcome === "failed", `the CSV table: expected "failed", got "${byId.get(csv.bindingId)?.outcome}"`);
      } finally {
        await env.control("/__control/fault?path=" + encodeURIComponent("/api/bi/v1/financials.csv") + "&count=0");
      }
      const after = await readTable(csv.tableName);
      check(same(after.values, before.values), "the failed table's values changed");
      check(same(after.formats, before.formats), "the failed table's number formats changed");
      check(same(after.formulas, before.formulas), "the failed table's formulas changed");
      sameRowsAsExport(await readTable(json.tableName), await serviceTable(env), "the table refreshed before the failure");
      return `JSON table updated; CSV table failed (503) and is cell for cell as before (${before.values.length} rows)`;
    },
  },
  {
    name: "refresh: user columns and a sorted table",
    async run(env) {
      const t = tableOf(env, "odata");
      const header = (await readTable(t.tableName)).header as string[];
      const budget = header.indexOf("budget");
      check(budget >= 0, "financials has no budget column");
      // The user adds a calculated column and sorts by budget, largest first.
      await runExcel(async (context) => {
        const table = context.workbook.tables.getItem(t.tableName);
        const col = table.columns.add(undefined, undefined, "Budget x2");
        col.getDataBodyRange().formulas = [["=[@budget]*2"]];
        table.sort.apply([{ key: budget, ascending: false }]);
        await context.sync();
      });
      await env.control("/__control/regenerate?company=acme&dataset=financials");
      const report = await env.engine.refreshOne(t.bindingId, env.connection, { secrets: secretsOf(env.connection) });
      check(report.outcome === "updated", `expected "updated", got "${report.outcome}" ${report.failure?.message ?? ""}`);
      const after = await readTable(t.tableName);
      const x2 = after.header.indexOf("Budget x2");
      check(x2 === header.length, "the user column is gone or moved");
      const budgets = after.values.map((r) => Number(r[budget]));
      check(budgets.every((b, i) => i === 0 || budgets[i - 1] >= b), "the table is no longer sorted by budget, largest first");
      after.values.forEach((r, i) => check(Math.abs(Number(r[x2]) - 2 * Number(r[budget])) < 1e-6 && after.formulas[i][x2] === "=[@budget]*2", `row ${i + 1}: the calculated column is not =[@budget]*2`));
      const exported = (await serviceTable(env, "odata")).rows.length;
      check(after.values.length === exported, `${after.values.length} rows, the export has ${exported}`);
      return `${after.values.length} rows; user column kept and extended; sort by budget re-applied`;
    },
  },
  {
    name: "write-back: an edited custom field is saved",
    async run(env) {
      const out = await importInto(env, "projects", { kind: "snapshot", endpoint: "projects" });
      const sheet = await readTable(out.tableName);
      const col = sheet.header.indexOf("Budget Contingency");
      const tokenCol = sheet.header.indexOf("project_token");
      check(col >= 0 && tokenCol >= 0, "the projects snapshot has no Budget Contingency or project_token column");
      const token = String(sheet.values[0][tokenCol]);
      // The user types a new amount into the first row (typed input: Excel parses it as a number).
      await runExcel(async (context) => {
        context.workbook.tables.getItem(out.tableName).getDataBodyRange().getCell(0, col).values = [["4321.5"]];
        await context.sync();
      });
      const service = recordsServiceFrom(env.client);
      const binding = await runExcel((context) => findBinding(context, tableOf(env, "projects").bindingId));
      check(!!binding, "the projects binding is gone");
      const deps: WritebackDeps = {
        client: service,
        workbook: excelWritebackWorkbook(runExcel),
        customFields: () => service.customFields(),
        refresh: async (b) => {
          const r = await env.engine.refreshOne(b.id, env.connection, { secrets: secretsOf(env.connection) });
          return { outcome: r.outcome, message: r.failure?.message, binding: r.binding };
        },
      };
      const preview = await prepareWriteback(deps, binding);
      check(preview.changes.length === 1, `the preview shows ${preview.changes.length} changes, expected 1`);
      check(preview.changes[0].validation.status === "valid", `the change is not valid: ${JSON.stringify(preview.changes[0].validation)}`);
      const done = await confirmWriteback(deps, preview);
      check(done.summary.saved === 1, `saved ${done.summary.saved} of 1`);
      const record = await service.getRecord("project", token);
      check(JSON.stringify(record).includes("4321.5"), "the service's record does not hold 4321.5");
      const now = await readTable(out.tableName);
      check(Number(now.values[0][col]) === 4321.5, `the sheet shows ${JSON.stringify(now.values[0][col])} after the refresh`);
      return `1 change sent and saved for ${token}; the refreshed sheet shows it`;
    },
  },
  {
    name: "summaries: financials by fiscal year",
    async run(env) {
      const text = "$apply=groupby((fiscal_year),aggregate(budget with sum as total_budget,$count as rows))&$orderby=fiscal_year";
      const query = parseQuery(text);
      const out = await importInto(env, "summary", { kind: "dataset", key: "financials", format: "json" }, query);
      const sheet = await readTable(out.tableName);
      const oracle = applyQuery(await serviceTable(env), query).table;
      check(same(sheet.header, oracle.columns.map((c) => c.name)), `header ${JSON.stringify(sheet.header)}`);
      check(sheet.values.length === oracle.rows.length, `${sheet.values.length} groups, expected ${oracle.rows.length}`);
      oracle.rows.forEach((row, i) => row.forEach((v, j) => check(Number(sheet.values[i][j]) === Number(v), `group ${i + 1}, ${oracle.columns[j].name}: ${JSON.stringify(sheet.values[i][j])}, expected ${String(v)}`)));
      return `${oracle.rows.length} groups equal to the local query over the export`;
    },
  },
  {
    name: "errors: Excel's codes for a missing sheet and a bad address",
    async run(env) {
      const sheet = tableOf(env, "json").sheetName;
      // The add-in tells these apart by code (docs: "Error handling with the application-specific JavaScript APIs").
      const expectCode = async (what: string, want: string, queue: (context: Excel.RequestContext) => void): Promise<void> => {
        let code: unknown = "no error";
        try {
          await runExcel(async (context) => {
            queue(context);
            await context.sync();
          });
        } catch (e) {
          code = (e as { code?: unknown }).code;
        }
        check(code === want, `${what}: Excel answered ${String(code)}, expected ${want}`);
      };
      await expectCode("a sheet that does not exist", "ItemNotFound", (context) => void context.workbook.worksheets.getItem("ppm selftest: no such sheet").load("name"));
      await expectCode("an address that is not one", "InvalidArgument", (context) => void context.workbook.worksheets.getItem(sheet).getRange("A0").load("address"));
      return "ItemNotFound and InvalidArgument, as documented";
    },
  },
  {
    name: "worksheet functions",
    // The self-test variant is a plain task pane without the shared runtime and the CustomFunctions
    // extension point that PPM.* formulas need (its manifest must not replace the real add-in's), so
    // Excel would not call them here. They are proved in the preview by the formulas journeys.
    skip: "PPM.* formulas need the real add-in's shared runtime, which the self-test variant does not declare; they are proved by the preview's formulas journeys (test/e2e/journeys/formulas.ts)",
    run: () => Promise.resolve(""),
  },
];

/** Why a workbook is not one the kit may use (null: it may). Reads only. */
export async function guardNewWorkbook(): Promise<string | null> {
  return runExcel(async (context) => {
    const wb = context.workbook;
    const mark = wb.settings.getItemOrNullObject(SELFTEST_MARK);
    const sheets = wb.worksheets.load("items/name");
    const tables = wb.tables.load("items/name");
    const names = wb.names.load("items/name");
    const settings = wb.settings.load("items/key");
    await context.sync();
    if (!mark.isNullObject) return null;
    const used = sheets.items.map((s) => s.getUsedRangeOrNullObject(true));
    await context.sync();
    const filled = sheets.items.filter((_, i) => !used[i].isNullObject).map((s) => s.name);
    const problems: string[] = [];
    if (filled.length) problems.push(`cells on ${filled.map((n) => `"${n}"`).join(", ")}`);
    if (tables.items.length) problems.push(`${tables.items.length} table(s)`);
    if (names.items.length) problems.push(`${names.items.length} defined name(s)`);
    if (settings.items.length) problems.push(`add-in settings`);
    if (problems.length === 0) return null;
    return `This workbook is not a new one (it has ${problems.join(", ")}). The self-test runs only in a new, empty workbook, which it creates; it changed nothing here.`;
  });
}

/** Marks the (new) workbook as the kit's own, so a second run in it is allowed. */
async function markWorkbook(): Promise<void> {
  await runExcel(async (context) => {
    context.workbook.settings.add(SELFTEST_MARK, "a workbook the PPM self-test created");
    await context.sync();
  });
}

/** The names of the sheets of the workbook, in order (the transcript's starting point). */
export function sheetNames(): Promise<string[]> {
  return runExcel(async (context) => {
    const sheets = context.workbook.worksheets.load("items/name");
    await context.sync();
    return sheets.items.map((s) => s.name);
  });
}

/** The transcript section of the check for a new workbook and its mark. */
export const SETUP = "setup: a new workbook, marked as the kit's own";

export interface KitHooks {
  /** Called around each scenario (the recorder starts and stops a transcript section). */
  begin?(name: string): void;
  end?(): void;
  /** Requests seen during the current scenario. */
  syncs?(): number;
  onResult?(r: ScenarioResult): void;
}

/**
 * Runs the scenarios in order. Refuses (running nothing, writing nothing) in a workbook that is not
 * new; `refused` says why.
 */
export async function runKit(options: KitOptions, hooks: KitHooks = {}, scenarios: readonly Scenario[] = SCENARIOS): Promise<{ refused?: string; results: ScenarioResult[] }> {
  // The check and the mark are the transcript's first section, so a transcript replays from a new workbook.
  hooks.begin?.(SETUP);
  let refused: string | null;
  try {
    refused = await guardNewWorkbook();
    if (!refused) await markWorkbook();
  } finally {
    hooks.end?.();
  }
  if (refused) return { refused, results: scenarios.map((s) => ({ name: s.name, status: "not run", ms: 0, syncs: 0, detail: "not a new workbook" })) };
  const connection: Connection = {
    id: "selftest-acme",
    name: "Self-test (reference service)",
    baseUrl: options.serviceUrl,
    token: options.token ?? "demo-acme-token",
    apiAuth: options.apiAuth ?? "demo-api-auth",
    apiSecret: options.apiSecret ?? "demo-api-secret",
  };
  const control = async (path: string): Promise<void> => {
    // The control hooks' header (src/reference/controlHeader.ts): the service's CORS allows it for this page's origin only.
    const r = await fetch(new URL(path, options.serviceUrl).href, { method: "POST", cache: "no-store", headers: { [CONTROL_HEADER]: CONTROL_HEADER_VALUE } });
    if (!r.ok) throw new Error(`The reference service refused ${path.split("?")[0]} (HTTP ${r.status}).`);
  };
  await control("/__control/reset");
  const env: Env = { engine: createEngine(), connection, client: new PpmClient(connection), control, tables: new Map() };
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    if (s.skip) {
      const r: ScenarioResult = { name: s.name, status: "skipped", ms: 0, syncs: 0, detail: s.skip };
      results.push(r);
      hooks.onResult?.(r);
      continue;
    }
    const started = Date.now();
    hooks.begin?.(s.name);
    let r: ScenarioResult;
    try {
      const detail = await s.run(env);
      r = { name: s.name, status: "passed", ms: Date.now() - started, syncs: hooks.syncs?.() ?? 0, detail };
    } catch (e) {
      const message = e instanceof Error ? (e instanceof CheckFailed ? e.message : `${e.name}: ${e.message}`) : String(e);
      r = { name: s.name, status: "failed", ms: Date.now() - started, syncs: hooks.syncs?.() ?? 0, detail: message };
    } finally {
      hooks.end?.();
    }
    results.push(r);
    hooks.onResult?.(r);
  }
  return { results };
}
