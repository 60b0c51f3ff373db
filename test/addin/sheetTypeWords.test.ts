/**
 * The import panel's type words say what the sheet will hold (issue #37, item 11: `external_ref` was
 * shown as a "whole number" and written as text, so SUM over it gave 0). Checked against the
 * writer's own column plan over the reference service's real exports: a column the panel calls a
 * number is written as numbers, and one it says may be text is text whenever the writer makes it so.
 */
import { resultText, sheetTypeWords } from "../../src/addin/queryBuilder";
import { PpmClient } from "../../src/service/client";
import { planColumns } from "../../src/workbook/cells";
import { useReferenceService } from "../helpers/referenceService";

const svc = useReferenceService();

describe("the import panel's type words match what the writer writes", () => {
  it.each(["financials", "projects", "resource_allocations"])("%s: every column's words agree with the writer's plan for the real export", async (key) => {
    const client = new PpmClient({ id: "c", name: "Acme", baseUrl: svc.url, token: "demo-acme-token" });
    const manifest = await client.manifest();
    const columns = manifest.datasets.find((d) => d.key === key)!.columns;
    const r = await client.fetchDataset(key, { format: "json", conditional: false });
    if (r.status !== "updated") throw new Error("expected the export");
    const plan = planColumns(r.table);
    for (const c of columns) {
      const words = sheetTypeWords(c);
      const kind = plan.find((p) => p.name === c.name)!.kind;
      if (c.type === "text") expect([c.name, words, kind]).toEqual([c.name, "text", "text"]);
      else if (words === "identifier, written as text") expect([c.name, kind]).toEqual([c.name, "text"]);
      else if (/the column is text if a value has over 15 digits$/.test(words)) expect([c.name, c.sourceType]).toEqual([c.name, "Edm.Int64"]);
      // No "text" in the words: the sheet holds numbers (or dates, true/false), so SUM works.
      else expect([c.name, kind === "text"]).toEqual([c.name, false]);
    }
  });

  it("names the columns the issue was about, and a summary's result says the same", () => {
    expect(sheetTypeWords({ name: "external_ref", type: "integer", sourceType: "Edm.Int64" })).toBe("whole number; the column is text if a value has over 15 digits");
    expect(sheetTypeWords({ name: "resource_id", type: "integer", sourceType: "Edm.Int32" })).toBe("identifier, written as text");
    expect(sheetTypeWords({ name: "fiscal_year", type: "integer", sourceType: "Edm.Int32" })).toBe("whole number");
    expect(sheetTypeWords({ name: "budget", type: "decimal" })).toBe("decimal");
    expect(resultText([{ name: "resource_id", type: "integer" }, { name: "total", type: "decimal" }])).toBe("resource_id (identifier, written as text), total (decimal)");
  });
});
