/**
 * Emulator throughput figures (printed, never asserted): writing a 50,000 x 12 table in chunks sized
 * to stay under the 5 MB request limit, then reading it back, through Microsoft's own client library
 * (the bodies it sends and receives are the bytes counted; the host's share of the time is printed
 * apart). Run: `npx tsx src/emulator/bench.ts [rows]`.
 */
import "../../bench/officejs";
import { Workbook, createExcelNamespace, hostMilliseconds, PAYLOAD_LIMIT_BYTES } from "./index";

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 50_000);
  const cols = 12;
  const data: Array<Array<string | number | boolean>> = [];
  for (let r = 0; r < rows; r++) {
    const row: Array<string | number | boolean> = [];
    for (let c = 0; c < cols; c++) {
      row.push(c % 4 === 0 ? `Project ${r}-${c}` : c % 4 === 1 ? r * 1.5 + c : c % 4 === 2 ? r % 2 === 0 : `2025-01-${String((r % 28) + 1).padStart(2, "0")}`);
    }
    data.push(row);
  }
  const wb = new Workbook({ currentYear: 2025 });
  const Excel = createExcelNamespace(wb);
  const chunk = 5_000;
  const t0 = performance.now();
  await Excel.run(async (context) => {
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    sheet.getRangeByIndexes(0, 0, 1, cols).values = [Array.from({ length: cols }, (_, i) => `Col${i}`)];
    for (let start = 0; start < rows; start += chunk) {
      const part = data.slice(start, start + chunk);
      sheet.getRangeByIndexes(1 + start, 0, part.length, cols).values = part;
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one sync per chunk on purpose: each request must stay under the 5 MB payload limit
      await context.sync();
    }
    context.workbook.tables.add(sheet.getRangeByIndexes(0, 0, rows + 1, cols), true);
  });
  const tWrite = performance.now() - t0;
  const t1 = performance.now();
  let read = 0;
  await Excel.run(async (context) => {
    const sheet = context.workbook.worksheets.getItem("Sheet1");
    for (let start = 0; start < rows; start += chunk) {
      const r = sheet.getRangeByIndexes(1 + start, 0, Math.min(chunk, rows - start), cols);
      r.load("values");
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one sync per chunk on purpose: each response must stay under the 5 MB payload limit
      await context.sync();
      read += r.values.length;
    }
  });
  const tRead = performance.now() - t1;
  const s = wb.stats;
  console.log(`rows=${rows} cols=${cols} chunk=${chunk} rows/sync`);
  console.log(`write: ${tWrite.toFixed(0)} ms (${((rows * cols) / (tWrite / 1000) / 1e6).toFixed(2)} M cells/s), syncs=${s.syncCount}`);
  console.log(`max request ${(s.maxRequestBytes / 1024 / 1024).toFixed(2)} MB of ${(PAYLOAD_LIMIT_BYTES / 1024 / 1024).toFixed(0)} MB; bytes/cell ≈ ${(s.maxRequestBytes / (chunk * cols)).toFixed(1)}`);
  console.log(`read back ${read} rows: ${tRead.toFixed(0)} ms, max response ${(s.maxResponseBytes / 1024 / 1024).toFixed(2)} MB`);
  console.log(`cells written ${s.cellsWritten}, rejected syncs ${s.rejectedSyncs}`);
  console.log(`host (emulated Excel) ${hostMilliseconds(wb).toFixed(0)} ms of ${(tWrite + tRead).toFixed(0)} ms; the rest is the library building and reading the bodies`);
}

void main();
