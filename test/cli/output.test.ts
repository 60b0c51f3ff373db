import { tableToCsv, tableToJson, textTable, cellText, excelSafeCell, terminalSafe } from "../../src/cli/output";
import { exitCodeFor, EXIT } from "../../src/cli/main";
import type { Table } from "../../src/table/model";

const table = (rows: Table["rows"]): Table => ({
  columns: [
    { name: "id", type: "integer" },
    { name: "name, full", type: "text" },
    { name: "ok", type: "boolean" },
  ],
  rows,
  meta: { key: "k", kind: "dataset", format: "csv", schemaVersion: "1", generatedAt: "g", etag: null, lastModified: null, fetchedAt: "f" },
});

describe("CLI output", () => {
  it("writes RFC 4180 CSV with CRLF after every record", () => {
    const text = [...tableToCsv(table([[1, 'a "b"\r\nc', true], [null, null, false]]))].join("");
    expect(text).toBe('id,"name, full",ok\r\n1,"a ""b""\r\nc",true\r\n,,false\r\n');
  });
  it("writes valid JSON for zero and several rows", () => {
    const empty = JSON.parse([...tableToJson(table([]))].join("")) as { rows: unknown[]; row_count: number; columns: unknown[] };
    expect(empty.rows).toEqual([]);
    expect(empty.row_count).toBe(0);
    expect(empty.columns).toHaveLength(3);
    const two = JSON.parse([...tableToJson(table([[1, "x", true], [2, null, null]]), { count: 7 })].join("")) as Record<string, unknown>;
    expect(two.rows).toEqual([{ id: 1, "name, full": "x", ok: true }, { id: 2, "name, full": null, ok: null }]);
    expect(two.count).toBe(7);
  });
  it("aligns text tables", () => {
    expect(textTable(["A", "BB"], [["xyz", "1"]])).toBe("A    BB\n---  --\nxyz  1\n");
    expect(cellText(null)).toBe("");
  });
  it("--excel-safe guards formula starts after spaces, in full width, and after a ';' (a list separator in some locales)", () => {
    const cases: Array<[string, string]> = [
      ["=1", "'=1"],
      [" =1", "' =1"],
      ["\u00a0+1", "'\u00a0+1"],
      ["＝SUM(A1)", "'＝SUM(A1)"],
      ["a;=HYPERLINK(\"x\")", "a;'=HYPERLINK(\"x\")"],
      ["a; @x", "a; '@x"],
      ["\tx", "'\tx"],
      ["a;b", "a;b"],
      ["it's 3-4", "it's 3-4"],
      ["plain", "plain"],
    ];
    for (const [text, safe] of cases) expect([text, excelSafeCell(text)]).toEqual([text, safe]);
  });

  it("text for a terminal loses escape sequences and bidirectional overrides; line breaks and tabs stay", () => {
    expect(terminalSafe("Risks\u001b]0;pwned\u0007\u001b[2J")).toBe("Risks\ufffd]0;pwned\ufffd\ufffd[2J");
    expect(terminalSafe("a\u202egnp.exe\u2066x\u009b")).toBe("a\ufffdgnp.exe\ufffdx\ufffd");
    expect(terminalSafe("line 1\n\tline 2 ✓ Zürich\r\nnext")).toBe("line 1\n\tline 2 ✓ Zürich\r\nnext");
    // A CR alone would return to the line's start and hide what was printed before it.
    expect(terminalSafe("safe\rEVIL\u2028x\u061c")).toBe("safe\ufffdEVIL\ufffdx\ufffd");
  });

  it("maps error codes to distinct exit codes", () => {
    expect(exitCodeFor("unauthorized")).toBe(EXIT.auth);
    expect(exitCodeFor("bi_reporting_disabled")).toBe(EXIT.auth);
    expect(exitCodeFor("not_generated")).toBe(EXIT.dataset);
    expect(exitCodeFor("unknown_dataset")).toBe(EXIT.dataset);
    expect(exitCodeFor("network")).toBe(EXIT.network);
    expect(exitCodeFor("timeout")).toBe(EXIT.network);
    expect(exitCodeFor("invalid_base_url")).toBe(EXIT.usage);
    expect(exitCodeFor("malformed_body")).toBe(EXIT.failure);
    expect(new Set(Object.values(EXIT)).size).toBe(6);
  });
});

describe("textTable within a width (issue #25)", () => {
  it("wraps a long last column between words under itself; the rule is no wider than the table", () => {
    const detail = "Could not reach localhost:4100: the connection was refused (nothing is listening there). Check that the service is running.";
    const text = textTable(["CHECK", "RESULT", "DETAIL"], [["reachability", "FAIL", detail]], 60);
    const lines = text.trimEnd().split("\n");
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
    expect(lines[1]).toBe(`${"-".repeat(12)}  ------  ${"-".repeat(60 - 22)}`);
    expect(lines.slice(2).map((l) => l.slice(22)).join(" ")).toBe(detail);
    expect(lines[3].slice(0, 22).trim()).toBe("");
  });
});
