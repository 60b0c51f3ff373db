/**
 * Issue #25: undocumented snapshot fields are typed from their values, and only where every value
 * proves the type: `start_date` of the projects snapshot becomes a real date; a column where any
 * value is not a date stays text.
 */
import { inferColumnType } from "../../src/service/values";
import { snapshotTable } from "../../src/service/snapshot";
import { PpmClient } from "../../src/service/client";
import { startReferenceService } from "../../src/reference/server";

describe("inferColumnType: dates only where the data proves them", () => {
  it("every value a calendar date written YYYY-MM-DD → date; nulls and empty strings are no value", () => {
    expect(inferColumnType(["2026-01-15", "2025-12-31", null, ""])).toBe("date");
    expect(inferColumnType(["2024-02-29"])).toBe("date");
  });
  it("one value that is not a date keeps the column text", () => {
    for (const odd of ["2026-02-30", "2026-1-15", " 2026-01-15", "2026-01-15 ", "15.01.2026", "01/15/2026", "2026-01-15T00:00:00Z", "TBD", 20260115]) {
      expect(inferColumnType(["2026-01-15", odd])).toBe("text");
    }
    expect(inferColumnType(["2026-13-01"])).toBe("text");
  });
  it("date-times only with an explicit offset, all of them; never mixed with dates", () => {
    expect(inferColumnType(["2026-01-15T06:00:00Z", "2026-01-16T07:30:00.123+02:00"])).toBe("datetime");
    expect(inferColumnType(["2026-01-15T06:00:00"])).toBe("text");
    expect(inferColumnType(["2026-01-15T06:00:00Z", "2026-01-15"])).toBe("text");
  });
  it("numbers and booleans as before; no value at all is text", () => {
    expect(inferColumnType([1, 2, null])).toBe("integer");
    expect(inferColumnType([1, 2.5])).toBe("decimal");
    expect(inferColumnType([true, false])).toBe("boolean");
    expect(inferColumnType([1, true])).toBe("text");
    expect(inferColumnType([null, ""])).toBe("text");
  });
  it("a text custom field stays text whatever its values look like", () => {
    const t = snapshotTable("projects", [{ project_token: "p1", Kickoff: "2026-01-15", start_date: "2026-01-15" }], { fetchedAt: "2026-01-01T00:00:00Z", customFields: new Set(["Kickoff"]) });
    expect(t.columns.map((c) => [c.name, c.type])).toEqual([["project_token", "text"], ["Kickoff", "text"], ["start_date", "date"]]);
  });
});

describe("the reference service's projects snapshot", () => {
  it("start_date is a date column, like dataset dates", async () => {
    const svc = await startReferenceService({ port: 0 });
    try {
      const t = await new PpmClient({ id: "a", name: "Acme", baseUrl: svc.url, token: "demo-acme-token" }).fetchSnapshot("projects");
      expect(t.columns.find((c) => c.name === "start_date")?.type).toBe("date");
      const i = t.columns.findIndex((c) => c.name === "start_date");
      expect(t.rows.every((r) => typeof r[i] === "string" && /^\d{4}-\d{2}-\d{2}$/.test(r[i]))).toBe(true);
    } finally {
      await svc.close();
    }
  });
});
