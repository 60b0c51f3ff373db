import { infoComplete, utcLabel, shortReason } from "../../src/workbook/info";

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

describe("the stale mark's reason (issue #25)", () => {
  it("is cut between words, never inside one", () => {
    const long = "Could not reach localhost:4100; the browser does not say why. ".repeat(5).trim();
    for (const max of [40, 61, 80, 160]) {
      const s = shortReason(long, max);
      expect(s.length).toBeLessThanOrEqual(max);
      expect(s.endsWith("…")).toBe(true);
      const words = s.slice(0, -1).split(" ");
      const last = words[words.length - 1];
      expect(long.split(" ").map((w) => w.replace(/[.;:,]$/, ""))).toContain(last);
    }
    const whole = "Could not reach localhost:4100: the connection was refused (nothing is listening there). (network)";
    expect(shortReason(whole)).toBe(whole);
  });
});
