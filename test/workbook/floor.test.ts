/**
 * The manifest's declared minimum is the add-in's real floor: every member its workbook flows use
 * (import, refresh unchanged and updated, a delta refresh, Show changes and Clear, the write-back
 * reads) is within ExcelApi <MinVersion>, and at least one needs exactly it. Found by the host, which
 * refuses a member outside a workbook's requirement sets as Excel does (ApiNotFound), using the
 * library's own table of which set each member belongs to (src/emulator/api-sets.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Workbook, createRequestContext, observeRequests, profile, setHostProfile, type Exchange } from "../../src/emulator";
import { importTable } from "../../src/workbook/writer";
import { refreshTable } from "../../src/workbook/refresh";
import { readBindings } from "../../src/workbook/bindingStore";
import { clearChanges, showChanges } from "../../src/workbook/changes";
import { readCellStates, readTableCells } from "../../src/workbook/writeback";
import type { RefreshSource } from "../../src/refresh/source";
import type { CellValue, Table } from "../../src/table/model";
import { TOKEN, bindingDraft, finRows, finTable, fixedNow } from "./helpers";

const manifest = readFileSync(join(__dirname, "..", "..", "manifest.xml"), "utf8");
const MIN = /<Set\s+Name="ExcelApi"\s+MinVersion="([0-9.]+)"/.exec(manifest)?.[1];
const later = () => new Date("2026-02-01T08:00:00Z");
const noQuery = (t: Table) => ({ table: t });
const keyed = (rows: CellValue[][], g: number): RefreshSource => ({
  fetch: () =>
    Promise.resolve({
      status: "updated",
      table: finTable(rows, { generatedAt: `2026-02-01T07:00:0${g}Z`, etag: `"e${g}"` }),
      validators: { etag: `"e${g}"`, generatedAt: `2026-02-01T07:00:0${g}Z` },
      key: { candidates: [["project_id"]], origin: "metadata", reason: "the key $metadata declares" },
    }),
});

/** The add-in's workbook flows, one after the other, on a workbook whose host has `excelApi`. */
async function flows(excelApi: string): Promise<Workbook> {
  const floor = { ...profile("windows-2021"), requirementSets: { ...profile("windows-2021").requirementSets, ExcelApi: excelApi } };
  const wb = new Workbook({ currentYear: 2025, platform: "windows-2021" });
  setHostProfile(wb, floor);
  const base = finRows(60);
  const table = finTable(base);
  await importTable(createRequestContext(wb), table, { binding: bindingDraft(table), secrets: [TOKEN], now: fixedNow });
  const unchanged: RefreshSource = { fetch: () => Promise.resolve({ status: "unchanged", validators: {} }) };
  expect((await refreshTable(createRequestContext(wb), "b1", unchanged, { applyQuery: noQuery, now: later })).outcome).toBe("unchanged");
  const edited = base.map((r) => [...r]);
  edited[5][1] = "Renamed";
  edited.splice(20, 2);
  const delta = await refreshTable(createRequestContext(wb), "b1", keyed(edited, 2), { applyQuery: noQuery, now: later });
  expect(delta.delta?.strategy).toBe("delta");
  const [binding] = (await readBindings(createRequestContext(wb))).bindings;
  await showChanges(createRequestContext(wb), binding);
  await clearChanges(createRequestContext(wb), binding);
  const full = await refreshTable(createRequestContext(wb), "b1", keyed(finRows(70, 1), 3), { applyQuery: noQuery, now: later });
  expect(full.outcome).toBe("updated");
  const cells = await readTableCells(createRequestContext(wb), binding.tableName);
  expect(cells.rows.length).toBe(70);
  await readCellStates(createRequestContext(wb), binding.tableName, [{ row: 0, column: "name" }] as never);
  return wb;
}

describe("the manifest's ExcelApi minimum is the add-in's real floor", () => {
  it("names one", () => {
    expect(MIN).toMatch(/^1\.\d+$/);
  });

  it(`every workbook flow runs on a host with exactly ExcelApi ${MIN} (no ExcelApiOnline)`, async () => {
    const seen: Exchange[] = [];
    const stop = observeRequests((e) => seen.push(e));
    try {
      await flows(MIN!);
    } finally {
      stop();
    }
    const failures = seen.filter((e) => e.answer.kind === "response" && e.answer.body.includes('"ApiNotFound"'));
    expect(failures).toEqual([]);
    expect(seen.length).toBeGreaterThan(20);
  });

  it(`one ExcelApi version lower, the flows fail: the host refuses a ${MIN} member (ApiNotFound)`, async () => {
    const [major, minor] = MIN!.split(".").map(Number);
    const seen: Exchange[] = [];
    const stop = observeRequests((e) => seen.push(e));
    let failed = false;
    try {
      await flows(`${major}.${minor - 1}`);
    } catch {
      failed = true;
    } finally {
      stop();
    }
    expect(failed).toBe(true);
    const refusals = seen.flatMap((e) => (e.answer.kind === "response" ? [(JSON.parse(e.answer.body) as { Error?: { Code: string; Message: string } }).Error] : [])).filter((x) => x?.Code === "ApiNotFound");
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.map((r) => r!.Message).join("\n")).toContain(`is ExcelApi ${MIN};`);
  });
});
