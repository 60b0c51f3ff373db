import { infoComplete, utcLabel } from "../../src/workbook/info";

const base = { environment: "https://ppm.example.com", refreshedAt: "2026-01-15T06:00:41Z", rowCount: 12345 };

describe("the info line", () => {
  it("leaves out what a snapshot does not have, instead of saying unknown", () => {
    const text = infoComplete({ ...base, source: { kind: "snapshot", endpoint: "projects" }, generatedAt: null, schemaVersion: null });
    expect(text).toBe("PPM · snapshot projects · refreshed 2026-01-15 06:00 UTC · 12,345 rows · date-times in UTC · source https://ppm.example.com");
    expect(text).not.toContain("unknown");
  });
  it("shows the local query of a filtered table", () => {
    const text = infoComplete({ ...base, source: { kind: "dataset", key: "financials", format: "csv" }, generatedAt: "2026-01-15T05:00:00Z", schemaVersion: "3", query: { filter: "amount gt 1000", top: 10 } });
    expect(text).toContain("dataset financials (csv) · local query $filter=amount gt 1000&$top=10 · generated 2026-01-15 05:00 UTC · schema 3");
  });
  it("reads dates as 2026-01-15 06:00 UTC", () => {
    expect(utcLabel("2026-01-15T06:00:59.999Z")).toBe("2026-01-15 06:00 UTC");
  });
});
