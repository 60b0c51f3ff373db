import "./officejs";
import { PpmClient } from "../src/service";
import { sourceFromClient } from "../src/refresh/source";
import { importSource } from "../src/workbook/importSource";
import { sinkContext } from "./sink";
const url = process.argv[2], format = process.argv[3] as "json" | "csv";
const TOKEN = "demo-acme-token";
const MB = 1 << 20;
let peak = { rss: 0, heap: 0, ext: 0, ab: 0 };
const t = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss > peak.rss) peak = { rss: m.rss, heap: m.heapUsed, ext: m.external, ab: m.arrayBuffers };
}, 2);
(async () => {
  const start = process.memoryUsage();
  const client = new PpmClient({ id: "bench", name: "bench", baseUrl: url, token: TOKEN });
  const { context } = sinkContext();
  const imported = await importSource(context, sourceFromClient(client), {
    source: { kind: "dataset", key: "financials", format },
    connection: { id: "bench", baseUrl: url }, companyId: "acme", bindingId: "bench2", secrets: [TOKEN],
  });
  clearInterval(t);
  console.log("rows", imported.rowCount, "start rss/heap", (start.rss / MB) | 0, (start.heapUsed / MB) | 0);
  console.log("peak sample rss/heap/ext/ab MB", (peak.rss / MB) | 0, (peak.heap / MB) | 0, (peak.ext / MB) | 0, (peak.ab / MB) | 0, "maxRSS", (process.resourceUsage().maxRSS / 1024) | 0);
  global.gc!();
  const m = process.memoryUsage();
  console.log("after gc heap MB", (m.heapUsed / MB) | 0, "rss", (m.rss / MB) | 0, "ext", (m.external / MB) | 0);
  (globalThis as any).keep = [context, imported];
})();
