import { resolveConnectionId, summarize, summaryText, type ReportLike } from "../../src/addin/refreshSummary";
import { parseSelectionAddress, rectsIntersect } from "../../src/addin/selection";
import type { ConnectionSummary } from "../../src/addin/connectionStore";

const conn = (id: string, baseUrl: string, companyId: string | null): ConnectionSummary => ({ id, name: id, baseUrl, companyId, hasToken: true, hasRecordCredentials: false });

describe("resolveConnectionId", () => {
  const list = [conn("a", "https://eu.example.com", "acme"), conn("g", "https://eu.example.com", "globex"), conn("u", "https://us.example.com", "acme")];

  it("uses the importing connection when it still points at the same environment and company", () => {
    expect(resolveConnectionId({ connectionId: "a", environment: "https://eu.example.com/", companyId: "acme" }, list)).toBe("a");
  });
  it("finds a colleague's workbook's company by environment + company id", () => {
    expect(resolveConnectionId({ connectionId: "their-id", environment: "https://us.example.com", companyId: "acme" }, list)).toBe("u");
  });
  it("never uses another company's connection, even with the same id", () => {
    expect(resolveConnectionId({ connectionId: "a", environment: "https://eu.example.com", companyId: "globex" }, list)).toBe("g");
    expect(resolveConnectionId({ connectionId: "x", environment: "https://eu.example.com", companyId: "initech" }, list)).toBeNull();
  });
  it("without a company id only the importing connection matches", () => {
    expect(resolveConnectionId({ connectionId: "x", environment: "https://eu.example.com", companyId: null }, list)).toBeNull();
    expect(resolveConnectionId({ connectionId: "a", environment: "https://us.example.com", companyId: null }, list)).toBeNull();
  });
});

describe("summarize", () => {
  const origin = { connectionId: "a", environment: "https://eu.example.com", companyId: "acme" };
  const reports: ReportLike[] = [
    { bindingId: "1", tableName: "ppm_financials", outcome: "updated", rowCount: 10, warnings: [], binding: origin },
    { bindingId: "2", tableName: "ppm_projects", outcome: "unchanged", rowCount: 5, warnings: [], binding: origin },
    { bindingId: "3", tableName: "ppm_risks", outcome: "failed", rowCount: 0, failure: { code: "unauthorized", message: "Token refused." }, warnings: [], binding: origin },
  ];

  it("counts outcomes and keeps failure reasons with the connection to fix", () => {
    const s = summarize(reports, [{ key: "ppm.binding.bad", code: "binding_invalid", message: "Stored table binding is not valid JSON." }], () => "a");
    expect(s).toMatchObject({ updated: 1, unchanged: 1, failed: 2, headline: "1 updated, 1 unchanged, 2 failed" });
    expect(s.items[2]).toMatchObject({ outcome: "failed", reason: "Token refused.", code: "unauthorized", connectionId: "a" });
    expect(s.items[0].connectionId).toBeUndefined();
    expect(summaryText(s)).toBe(
      "1 updated, 1 unchanged, 2 failed\nppm_financials: updated, 10 rows\nppm_projects: unchanged, 5 rows\nppm_risks: failed: Token refused.\nppm.binding.bad: failed: Stored table binding is not valid JSON.",
    );
  });

  it("says so when there is nothing to refresh", () => {
    expect(summarize([]).headline).toMatch(/No PPM tables/);
  });

  it("caps the text report", () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ ...reports[i % 2], bindingId: String(i), tableName: `t${i}` }));
    const text = summaryText(summarize(many), 3);
    expect(text.split("\n")).toHaveLength(5);
    expect(text).toMatch(/and 9 more/);
  });

  it("every table failed the same way: the reason once for the run, the tables named (issue #25)", () => {
    const down = { code: "network", message: "Could not reach localhost:4100: the connection was refused (nothing is listening there)." };
    const six = Array.from({ length: 6 }, (_, i) => ({ ...reports[2], failure: down, bindingId: `n${i}`, tableName: `ppm_financials_${i + 1}` }));
    const s = summarize(six, [], () => "a");
    expect(s.common).toEqual({ code: "network", reason: down.message, connectionId: "a", bindingIds: six.map((r) => r.bindingId) });
    const text = summaryText(s);
    expect(text.split(down.message)).toHaveLength(2);
    expect(text).toBe(`0 updated, 0 unchanged, 6 failed\nNone of the 6 tables was refreshed: ${down.message}\nTables: ${six.map((r) => r.tableName).join(", ")}.`);
    // Two reasons, or one table: each table keeps its own line.
    expect(summarize([six[0], { ...six[1], failure: { code: "timeout", message: "Slow." } }]).common).toBeUndefined();
    expect(summarize([six[0]]).common).toBeUndefined();
    // Some tables of another environment refreshed: the shared reason is still said once, for its tables.
    const mixed = summarize([...six.slice(0, 3), reports[0]], [], () => "a");
    expect(mixed.common).toBeUndefined();
    expect(mixed.groups).toEqual([{ code: "network", reason: down.message, connectionId: "a", bindingIds: ["n0", "n1", "n2"] }]);
    expect(summaryText(mixed)).toBe(`1 updated, 0 unchanged, 3 failed\n3 tables failed: ${down.message} (ppm_financials_1, ppm_financials_2, ppm_financials_3)\nppm_financials: updated, 10 rows`);
  });
});

describe("selection helpers", () => {
  it("parses plain and quoted sheet names", () => {
    expect(parseSelectionAddress("Sheet1!B3")).toEqual({ sheetName: "Sheet1", firstCell: "B3" });
    expect(parseSelectionAddress("'Q1 ''draft'' data'!$C$4:$D$9")).toEqual({ sheetName: "Q1 'draft' data", firstCell: "C4" });
    expect(() => parseSelectionAddress("B3")).toThrow(/Unexpected/);
  });
  it("intersects rectangles", () => {
    const t = { row: 1, column: 0, rowCount: 10, columnCount: 3 };
    expect(rectsIntersect({ row: 5, column: 2, rowCount: 1, columnCount: 1 }, t)).toBe(true);
    expect(rectsIntersect({ row: 5, column: 3, rowCount: 1, columnCount: 1 }, t)).toBe(false);
    expect(rectsIntersect({ row: 0, column: 0, rowCount: 1, columnCount: 1 }, t)).toBe(false);
    expect(rectsIntersect({ row: 0, column: 0, rowCount: 2, columnCount: 1 }, t)).toBe(true);
  });
});
