/**
 * The self-test kit's `probes` scenario (issue #35): answers Microsoft does not document, recorded in
 * the user's real Excel on first contact. Each answer is in the transcript twice: in Excel's own
 * responses (which `npm run host:replay` compares with the emulated host's, so a different answer
 * shows there as a difference of the probe scenario) and in the transcript's `probes` section (the
 * verdicts, and the figures no response carries: a time, an observation over several requests).
 *
 * - **Numbers as text** (TEXTJOIN): the text TEXTJOIN gives numbers and booleans, in the workbook's
 *   locale (Range.text of `#,##0.00` shows its separators), against the add-in's prediction
 *   (`excelNumberText`, which the delta refresh's block checksums rely on).
 * - **ISFORMULA over a range**: one value per cell (as the dynamic-array lifting reads it, and the
 *   checksums' formula term assumes), or the first cell only.
 * - **Recalculating the block checksums at 200,000 × 12**: the time of a full recalculation of the
 *   add-in's own checksum formulas over a table of that size, on sheets the probe adds to the kit's
 *   own workbook and deletes again; and whether the first block's checksum equals the prediction.
 * - **Settings between two clients**: only when Excel says a second client has this workbook open
 *   (`getIsActiveCollabSession`); otherwise skipped, with that reason recorded. Both clients write
 *   their own key once a second for a while and read the others' keys; a key that was seen and then
 *   vanished without being deleted means a client's write replaces the whole collection.
 */
import { runExcel } from "../addin/excelRun";
import { checkSheetName, dropChecks, excelNumberText, predictChecksum, rowsPerBlock, storeChecks, type ChecksGeometry } from "../workbook/checksums";

/** What the probes found, as the transcript's `probes` section holds it. */
export type ProbeAnswers = Record<string, string | number | boolean | null>;

/** Rows and columns of the checksum-recalculation probe (the bench's delta table). */
export const PROBE_ROWS = 200_000;
export const PROBE_COLUMNS = 12;
/** The binding id the probe's checksum sheet is named after (never a real binding's: ids start with `b`). */
export const PROBE_BINDING_ID = "selftest-probe";
const PROBE_SHEET = "ppm probes";
const PROBE_DATA_SHEET = "ppm probe data";

/** The numbers and booleans whose text TEXTJOIN is asked for. */
export const PROBE_VALUES: ReadonlyArray<number | boolean> = [1.5, -0.25, 1234567.891, 0.1 + 0.2, 1 / 3, 45000.75, 123456789012345, 2 ** 53 + 2, 1e-7, 1e21, true, false];

/** The add-in's prediction of TEXTJOIN's text for one value (null: it does not predict it). */
function predicted(v: number | boolean): string | null {
  return typeof v === "boolean" ? (v ? "TRUE" : "FALSE") : excelNumberText(v);
}

/** What the probe's data cells hold: text in even columns, numbers in odd ones (about a bench row's 130 characters). */
function probeCell(column: number): string | number {
  return column % 2 === 0 ? "Project 1234567" : 1234.5;
}

async function numbersAndFormulas(answers: ProbeAnswers): Promise<string> {
  return runExcel(async (context) => {
    const sheet = context.workbook.worksheets.add(PROBE_SHEET);
    const values = PROBE_VALUES.map((v) => [v]);
    sheet.getRangeByIndexes(0, 0, values.length, 1).values = values;
    const joined = sheet.getRange("B1");
    joined.formulas = [[`=TEXTJOIN("|",FALSE,A1:A${values.length})`]];
    // ISFORMULA over C1:C4 = constant, formula, text, formula: one value per cell gives 2 + 8 = 10.
    sheet.getRange("C1:C4").formulas = [[1], ["=1+1"], ["x"], ["=C1"]];
    const mask = sheet.getRange("D1");
    mask.formulas = [["=SUM(ISFORMULA(C1:C4)*2^(ROW(C1:C4)-1))"]];
    // The workbook's locale, as a number's display text shows it.
    const shown = sheet.getRange("E1");
    shown.numberFormat = [["#,##0.00"]];
    shown.values = [[1234.5]];
    // Range.getUsedRange over empty cells inside the sheet's used rectangle (A1:E12, values only):
    // the rectangle met with the range (C6:D8, the emulated host's strict reading, which a block's
    // probe is sized for) or only the range's own used cells (none: a null object).
    const usedInside = sheet.getRange("C6:D8").getUsedRangeOrNullObject(true);
    usedInside.load("address");
    joined.load("values");
    mask.load("values");
    shown.load("text");
    await context.sync();
    const inside = usedInside.isNullObject ? "null" : usedInside.address.replace(/^.*!/, "");
    const text: unknown = joined.values[0][0];
    const bits: unknown = mask.values[0][0];
    const parts = typeof text === "string" ? text.split("|") : [];
    const differ = PROBE_VALUES.flatMap((v, i) => {
      const want = predicted(v);
      return want !== null && parts[i] !== want ? [`${String(v)} → ${JSON.stringify(parts[i] ?? null)} (predicted ${want})`] : [];
    });
    answers["locale.1234.5 as #,##0.00"] = String(shown.text[0][0]);
    answers["textjoin.text"] = typeof text === "string" ? text : JSON.stringify(text);
    answers["textjoin.predicted"] = PROBE_VALUES.map((v) => predicted(v) ?? "?").join("|");
    answers["textjoin.matches prediction"] = differ.length === 0;
    answers["isformula.range mask"] = typeof bits === "number" ? bits : JSON.stringify(bits);
    answers["isformula.per cell"] = bits === 10;
    answers["usedrange.empty C6:D8 inside A1:E12"] = inside;
    answers["usedrange.met with the sheet's"] = inside === "C6:D8";
    sheet.delete();
    await context.sync();
    return `TEXTJOIN ${differ.length === 0 ? "as predicted" : `differs: ${differ.join("; ")}`}; ISFORMULA over a range ${bits === 10 ? "per cell" : bits === 0 ? "first cell only" : `gave ${JSON.stringify(bits)}`}; 1234.5 shows as ${String(shown.text[0][0])}; getUsedRange of empty cells inside the used rectangle: ${inside === "C6:D8" ? "the rectangle met with the range" : inside === "null" ? "none (the range's own used cells)" : inside}`;
  });
}

async function checksumRecalculation(answers: ProbeAnswers, rows: number): Promise<string> {
  const g: ChecksGeometry = { sheet: PROBE_DATA_SHEET, top: 1, left: 0, width: PROBE_COLUMNS, rows };
  const row = Array.from({ length: PROBE_COLUMNS }, (_, c) => probeCell(c));
  try {
    await runExcel(async (context) => {
      const sheet = context.workbook.worksheets.add(PROBE_DATA_SHEET);
      // One value per column over all its rows: a few hundred bytes, whatever the size.
      row.forEach((v, c) => void (sheet.getRangeByIndexes(1, c, rows, 1).values = v as never));
      await context.sync();
      await storeChecks(context, PROBE_BINDING_ID, g, [row]);
      // Every block formula calculated, as a refresh calculates them (Range.calculate on exactly those
      // cells; never Application.calculate, which recalculates every open workbook: issue #34).
      const blocks = Math.ceil(rows / rowsPerBlock([row], PROBE_COLUMNS));
      const started = Date.now();
      context.workbook.worksheets.getItem(checkSheetName(PROBE_BINDING_ID)).getRangeByIndexes(0, 1, blocks, 1).calculate();
      await context.sync();
      answers["checksums.rows × columns"] = `${rows} × ${PROBE_COLUMNS}`;
      answers["checksums.full recalculation ms"] = Date.now() - started;
      const first = context.workbook.worksheets.getItem(checkSheetName(PROBE_BINDING_ID)).getRange("B1");
      first.load("values");
      await context.sync();
      const got: unknown = first.values[0][0];
      // Every probe row is the same, so the first block holds `rowsPerBlock` copies of it.
      const want = predictChecksum(g, 0, Array.from({ length: Math.min(rows, rowsPerBlock([row], PROBE_COLUMNS)) }, () => row));
      answers["checksums.first block"] = typeof got === "number" ? got : JSON.stringify(got);
      answers["checksums.first block predicted"] = want;
    });
  } finally {
    await runExcel(async (context) => {
      await dropChecks(context, PROBE_BINDING_ID);
      context.workbook.worksheets.getItemOrNullObject(PROBE_DATA_SHEET).delete();
      await context.sync();
    });
  }
  return `full recalculation of the block checksums at ${rows.toLocaleString("en-US")} × ${PROBE_COLUMNS}: ${String(answers["checksums.full recalculation ms"])} ms; first block ${answers["checksums.first block"] === answers["checksums.first block predicted"] ? "as predicted" : `${String(answers["checksums.first block"])}, predicted ${String(answers["checksums.first block predicted"])}`}`;
}

/**
 * The settings-merge probe (see the module comment). `run` runs one batch in this client's Excel;
 * `sleep` waits. Returns the verdict, or why it was skipped.
 */
export async function probeSettingsMerge(
  run: <T>(work: (context: Excel.RequestContext) => Promise<T>) => Promise<T>,
  options: { id: string; seconds?: number; settleSeconds?: number; sleep?: (ms: number) => Promise<void> },
): Promise<{ verdict: "whole collection" | "per key" | "inconclusive" | "skipped"; detail: string }> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const prefix = "ppm.selftest.probe.";
  const mine = `${prefix}${options.id}`;
  const active = await run(async (context) => {
    const r = context.workbook.getIsActiveCollabSession();
    await context.sync();
    // eslint-disable-next-line office-addins/load-object-before-read -- a ClientResult, read after the sync above
    return r.value;
  });
  if (!active) {
    return { verdict: "skipped", detail: "Excel says nobody else is editing this workbook (getIsActiveCollabSession is false): open the kit's workbook in a second window or for a colleague (OneDrive or SharePoint) and run the probes in both at the same time to record how settings merge." };
  }
  const seen = new Map<string, number>();
  const vanished = new Set<string>();
  const read = (context: Excel.RequestContext) => {
    const items = context.workbook.settings;
    items.load("items/key");
    return items;
  };
  const look = (keys: readonly string[]) => {
    for (const k of seen.keys()) if (!keys.includes(k)) vanished.add(k);
    for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
  };
  try {
    for (let i = 0; i < (options.seconds ?? 20); i++) {
      const keys = await run(async (context) => {
        context.workbook.settings.add(mine, i);
        const items = read(context);
        // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one write and read a second is the probe
        await context.sync();
        return items.items.map((s) => s.key).filter((k) => k.startsWith(prefix));
      });
      look(keys);
      await sleep(1_000);
    }
    await sleep((options.settleSeconds ?? 15) * 1_000);
    look(await run(async (context) => {
      const items = read(context);
      await context.sync();
      return items.items.map((s) => s.key).filter((k) => k.startsWith(prefix));
    }));
  } finally {
    await run(async (context) => {
      const item = context.workbook.settings.getItemOrNullObject(mine);
      item.load("key");
      await context.sync();
      // Gone already when a co-author's write replaced the collection.
      if (item.isNullObject) return;
      item.delete();
      await context.sync();
    });
  }
  const others = [...seen.keys()].filter((k) => k !== mine);
  // Under whole-collection writes the client whose writes come last never sees the other's key (its
  // own later collection wins in its copy): the other client's transcript holds the verdict then.
  if (others.length === 0) return { verdict: "inconclusive", detail: "no other client's key reached this copy: either the other client did not run the probes at the same time, or its writes never survived this client's (the other client's own transcript then says \"whole collection\")" };
  if (vanished.size > 0) return { verdict: "whole collection", detail: `${[...vanished].map((k) => (k === mine ? "this client's key" : "a co-author's key")).join(" and ")} vanished while both clients wrote: a client's settings write replaces the whole collection` };
  return { verdict: "per key", detail: "every key stayed while both clients wrote once a second: settings merge per key" };
}

/** Runs the probes; `rows` of the recalculation probe (the issue's 200,000 by default). */
export async function runProbes(answers: ProbeAnswers, options: { rows?: number; runId: string }): Promise<string> {
  const rows = options.rows ?? PROBE_ROWS;
  const parts = [await numbersAndFormulas(answers), await checksumRecalculation(answers, rows)];
  const merge = await probeSettingsMerge((work) => runExcel(work), { id: options.runId });
  answers["settings.merge"] = merge.verdict;
  answers["settings.merge detail"] = merge.detail;
  parts.push(`settings between two clients: ${merge.verdict === "skipped" ? `skipped (${merge.detail})` : `${merge.verdict} (${merge.detail})`}`);
  return parts.join("; ");
}
