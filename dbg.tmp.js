const { chromium } = require("playwright-core");
const http = require("http"), fs = require("fs"), path = require("path");
const root = "/tmp/i28dist";
const srv = http.createServer((req, res) => { const p = path.join(root, decodeURIComponent(req.url.split("?")[0])); fs.readFile(p, (e, d) => { if (e) { res.writeHead(404); res.end(); return; } res.writeHead(200, {"Content-Type": p.endsWith(".html") ? "text/html" : p.endsWith(".js") ? "text/javascript" : p.endsWith(".json") ? "application/json" : "application/xml"}); res.end(d); }); }).listen(0, async () => {
  const b = await chromium.launch({ executablePath: "/usr/bin/chromium" });
  const page = await b.newPage();
  page.on("console", (m) => console.log("console", m.type(), m.text().slice(0, 300)));
  page.on("pageerror", (e) => console.log("pageerror", e.message));
  await page.goto(`http://localhost:${srv.address().port}/preview.html`);
  await page.waitForTimeout(6000);
  console.log(await page.evaluate(() => { const wb = window.__ppmPreviewHost.workbook(); return JSON.stringify({ knows: wb.model.customFunctions.knows("PPM.VALUE"), cf: typeof wb.model.customFunctions, fns: [...wb.model.customFunctions.fns?.keys?.() ?? []] }); }));
  console.log(await page.evaluate(async () => { const wb = window.__ppmPreviewHost.workbook(); await wb.typeInto(0, 0, "=PPM.VALUE(\"projects\",\"x\",\"y\")"); await new Promise(r => setTimeout(r, 500)); return JSON.stringify(wb.cell(wb.activeSheet(), 0, 0)); }));
  for (const f of page.frames()) console.log("frame", f.url(), await f.evaluate(() => typeof window.CustomFunctions + " " + (window.CustomFunctions ? Object.keys(window.CustomFunctions).join(",") : "")).catch(e => e.message));
  await b.close(); srv.close();
});
