import { PpmError, type PpmErrorCode } from "../../src/service/errors";
import { QueryError } from "../../src/query/errors";
import { REPORTING_ERRORS } from "../../src/contract/contract";
import { ERROR_TEXT, describeError, describeFailure } from "../../src/taskpane/errorView";

const TOKEN = "demo-acme-token";

describe("describeError", () => {
  it("has a title and an action for every documented reporting code", () => {
    for (const code of Object.keys(REPORTING_ERRORS) as PpmErrorCode[]) {
      const v = describeError(new PpmError(code, `server said ${code}`, { status: REPORTING_ERRORS[code as keyof typeof REPORTING_ERRORS] }), { connectionId: "c1" });
      expect(v.code).toBe(code);
      expect(v.title.length).toBeGreaterThan(5);
      expect(v.action.length).toBeGreaterThan(10);
      expect(v.message).toBe(`server said ${code}`);
    }
  });

  it("has a title for every client code too", () => {
    const codes = Object.keys(ERROR_TEXT) as PpmErrorCode[];
    expect(codes).toEqual(expect.arrayContaining(["network", "timeout", "cancelled", "malformed_body", "schema_mismatch", "route_absent", "server_error"]));
    for (const code of codes) {
      const v = describeError(new PpmError(code, "x"));
      expect(v.title).toBe(ERROR_TEXT[code].title);
      expect(v.action).not.toBe("");
    }
  });

  it("does not say the title twice: the client's \"No export yet: …\" shows under the title without it", () => {
    const v = describeError(new PpmError("not_generated", 'No export yet: http://127.0.0.1:3001 has not generated the dataset "risks".', { status: 404 }));
    expect(v.title).toBe("No export yet");
    expect(v.message).toBe('http://127.0.0.1:3001 has not generated the dataset "risks".');
    // A message that only mentions the title elsewhere is kept whole.
    expect(describeError(new PpmError("not_generated", "Risks: No export yet: x")).message).toBe("Risks: No export yet: x");
  });

  it("401 offers update/forget token for exactly the failing connection", () => {
    const v = describeError(new PpmError("unauthorized", "Credentials missing or wrong", { status: 401 }), { connectionId: "c7" });
    expect(v.actions).toEqual(["updateToken", "forgetToken"]);
    expect(v.connectionId).toBe("c7");
    // Without a connection to act on, no buttons that would act on the wrong one.
    expect(describeError(new PpmError("unauthorized", "x")).actions).toEqual([]);
  });

  it("422 offers copy details with dataset key and request time, and never a secret", () => {
    const e = new PpmError("invalid_cached_artifact", `The cached export is unusable (${TOKEN})`, {
      status: 422,
      datasetKey: "timesheets",
      requestTime: "2026-11-21T05:00:00.000Z",
    });
    const v = describeError(e, { connectionId: "c1", baseUrl: "http://localhost:4100", secrets: [TOKEN] });
    expect(v.actions).toContain("copyDetails");
    expect(v.details).toContain("dataset_key: timesheets");
    expect(v.details).toContain("request_time: 2026-11-21T05:00:00.000Z");
    expect(v.details).toContain("environment: http://localhost:4100");
    expect(v.details).not.toContain(TOKEN);
    expect(v.message).not.toContain(TOKEN);
  });

  it("422 falls back to the context's dataset key and request time", () => {
    const v = describeError(new PpmError("invalid_cached_artifact", "bad"), { datasetKey: "timesheets", requestTime: "2026-01-01T00:00:00Z" });
    expect(v.details).toMatch(/dataset_key: timesheets[\s\S]*request_time: 2026-01-01T00:00:00Z/);
  });

  it("lists the refused $ options", () => {
    const v = describeError(new PpmError("unsupported_odata_query_options", "Unsupported options", { unsupportedOptions: ["$filter", "$top"] }));
    expect(v.message).toContain("$filter, $top");
  });

  it("query errors keep the engine's positioned message", () => {
    const v = describeError(new QueryError({ code: "syntax", option: "$filter", detail: "expected ')'", position: 23, found: "end of input" }));
    expect(v.code).toBe("syntax");
    expect(v.message).toBe("$filter: expected ')' at 23 but found end of input");
    expect(v.title).toMatch(/syntax/);
  });

  it("a summary beyond the number range names its column and says nothing was imported", () => {
    const v = describeError(new QueryError({ code: "overflow", option: "$apply", detail: "'total' (budget with sum) is about 3.40e+308, beyond the largest number a cell can hold (±1.7976931348623157e+308)", position: 22 }));
    expect(v).toMatchObject({ code: "overflow", title: "A result is too large for a number in Excel", actions: [] });
    expect(v.message).toMatch(/^\$apply: 'total' \(budget with sum\) is about 3\.40e\+308/);
    expect(v.action).toMatch(/nothing was imported/);
  });

  it("workbook and binding codes get their own wording", () => {
    const err = Object.assign(new Error("Stored table binding is invalid"), { code: "binding_invalid" });
    expect(describeError(err).title).toMatch(/link is damaged/);
    const office = Object.assign(new Error("The sheet is protected"), { name: "RichApi.Error", code: "AccessDenied" });
    expect(describeError(office)).toMatchObject({ code: "excel_AccessDenied", actions: ["retry"] });
  });

  it("explains a service that answered with something else, a 304 without validators and a short export", () => {
    const html = describeError(new PpmError("unexpected_content", 'The service answered with an HTML page, not the CSV export of "financials": a sign-in page or a proxy in between?'));
    expect(html).toMatchObject({ code: "unexpected_content", title: "The service answered with something else", actions: ["retry"] });
    expect(html.message).toMatch(/sign-in page/);
    expect(html.action).toMatch(/nothing was written/);
    const nm = describeError(new PpmError("unexpected_not_modified", "304 to a request without validators"));
    expect(nm.title).toMatch(/Not modified/);
    expect(nm.action).toMatch(/only valid for a conditional request/);
    const cut = describeError(new PpmError("incomplete_export", "59 of 120 rows"));
    expect(cut.title).toBe("The export arrived incomplete");
    expect(cut.action).toMatch(/previous data was kept/);
    // The same wording for the stored failure of a refresh.
    expect(describeFailure({ code: "incomplete_export", message: "59 of 120 rows" }).title).toBe("The export arrived incomplete");
  });

  it("a value longer than a cell never offers a retry, and names the cell limit", () => {
    const err = Object.assign(new Error('Row 1, column "name" holds 50,000,000 characters; an Excel cell holds at most 32,767.'), { code: "cell_too_long" });
    const v = describeError(err);
    expect(v.code).toBe("cell_too_long");
    expect(v.actions).toEqual([]);
    expect(`${v.title} ${v.message} ${v.action}`).toMatch(/32,767/);
    expect(v.action).not.toMatch(/^Retry/);
    expect(v.action).toMatch(/cannot help/);
  });

  it("aborts read as cancelled", () => {
    const abort = Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
    expect(describeError(abort).code).toBe("cancelled");
  });

  it("redacts secrets from unknown errors", () => {
    const v = describeError(new Error(`boom ${TOKEN}`), { secrets: [TOKEN] });
    expect(v.code).toBe("unexpected");
    expect(v.message).toBe("boom [redacted]");
  });
});

describe("transient failures say what was already tried", () => {
  it("a 503 after retries says how many times it was sent and what to do", () => {
    const e = new PpmError("server_error", "The service is unavailable (503).", { status: 503, attempts: 3 });
    const v = describeError(e);
    expect(v.action).toMatch(/sent the request 3 times/);
    expect(v.action).toMatch(/Wait a minute, then choose Retry/);
    expect(v.actions).toContain("retry");
  });
  it("a 429 names the wait the service asked for", () => {
    const v = describeError(new PpmError("rate_limited", "Too many requests.", { status: 429, attempts: 2, retryAfterSeconds: 30 }));
    expect(v.action).toMatch(/2 times.*30 s/);
  });
  it("a timeout says it was not repeated and why", () => {
    const v = describeError(new PpmError("timeout", "No answer within 30 s."));
    expect(v.action).toMatch(/not repeated automatically/);
  });
  it("validation text has no Markdown backticks", () => {
    for (const code of ["invalid_custom_field", "unsupported_odata_query_options"] as const) {
      expect(new PpmError(code, "x").action).not.toContain("`");
    }
  });
});

describe("failures read back from a binding say only what is known (issue #25)", () => {
  it("a stored 503 makes no claim about retries; a stored unexplained network failure keeps its action and details", () => {
    const v = describeFailure({ code: "server_error", message: "The service answered HTTP 503 (service unavailable) to GET /api/bi/v1/financials." });
    expect(v.action).not.toMatch(/not repeated|already sent/);
    expect(v.action).toMatch(/temporary problem/);
    const n = describeFailure({ code: "network", message: "Could not reach localhost:4100; the browser does not say why." });
    expect(n.action).toMatch(/service is running/);
    expect(n.more?.join(" ")).toMatch(/Possible causes.*stopped/);
    expect(`${n.message} ${n.action} ${(n.more ?? []).join(" ")}`).not.toMatch(/Local Network|LocalNetworkAccess/);
  });
});

describe("a refresh's failure says what the refresh did to the workbook (issue #37, item 3)", () => {
  it("a 503 shared by three tables: their data is kept, their info lines now say ⚠ Not refreshed, a highlight was removed; never 'nothing was changed'", () => {
    // As the Refresh tab asks for a run's shared reason (three tables, one 503).
    const v = describeFailure({ code: "server_error", message: "The service answered HTTP 503 (service unavailable) to GET /api/bi/v1/financials." }, { refreshedTables: 3 });
    expect(v.action).not.toMatch(/[Nn]othing (in the workbook )?was (changed|written)/);
    expect(v.action).toMatch(/temporary problem/);
    expect(v.action).toMatch(/The 3 tables keep their data; their info lines now start with “⚠ Not refreshed”, and Show changes highlights, if any, were removed\.$/);
  });

  it("every failure the refresh marks stale gets the sentence, for one table; one that leaves the table alone does not", () => {
    for (const [code, message] of [
      ["rate_limited", "429"],
      ["timeout", "The service took too long."],
      ["incomplete_export", "Fewer rows arrived."],
      ["unexpected_content", "An HTML page."],
      ["row_shape", "Row 3 has 2 cells."],
      ["network", "Could not reach localhost:4100; the browser does not say why."],
    ]) {
      const v = describeFailure({ code, message }, { refreshedTables: 1 });
      expect([code, /[Nn]othing (in the workbook )?was (changed|written)/.test(v.action)]).toEqual([code, false]);
      expect(v.action).toMatch(/The table keeps its data; its info line now starts with “⚠ Not refreshed”/);
    }
    for (const code of ["table_busy", "lock_lost", "cancelled", "no_connection"]) {
      expect(describeFailure({ code, message: "m" }, { refreshedTables: 1 })).toEqual(describeFailure({ code, message: "m" }));
    }
    // An import's failure keeps its sentence: there nothing was written.
    expect(describeFailure({ code: "server_error", message: "503" }).action).toMatch(/Nothing in the workbook was changed\.$/);
  });
});
