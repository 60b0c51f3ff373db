/**
 * The emulated host's door: one function from a RichApi request body to a response body (or the web's
 * refusal), exercised through Microsoft's own client library and directly with the bodies it sends.
 */
import {
  Workbook,
  answerRequest,
  createExcelNamespace,
  createRequestContext,
  inspect,
  keptReferenceCount,
  observeRequests,
  officeJs,
  seed,
  setDefaultWorkbook,
  type Exchange,
} from "../../src/emulator";

type Body = { Results?: Array<{ ActionId: number; Value: unknown }>; Error?: { Code: string; Message: string; ActionIndex: number; Location: string; HttpStatusCode: number } };

/** Runs `f` and returns the exchanges that crossed the bridge meanwhile. */
async function recorded(f: () => Promise<unknown>): Promise<Exchange[]> {
  const seen: Exchange[] = [];
  const stop = observeRequests((e) => seen.push(e));
  try {
    await f();
  } finally {
    stop();
  }
  return seen;
}

const bodyOf = (e: Exchange): Body => {
  if (e.answer.kind !== "response") throw new Error(`refused: ${e.answer.code}`);
  return JSON.parse(e.answer.body) as Body;
};

describe("answerRequest: one request body in, one response body out", () => {
  it("answers what the library sends with Results by ActionId, PascalCase properties and _Items for collections", async () => {
    const wb = new Workbook({ currentYear: 2025, platform: "web" });
    seed(wb, "A1:B2", [[1, "a"], [2, "b"]]);
    const context = createRequestContext(wb);
    const range = context.workbook.worksheets.getItem("Sheet1").getRange("A1:B2");
    range.load("address, values");
    const sheets = context.workbook.worksheets;
    sheets.load("items/name");
    const [exchange] = await recorded(() => context.sync());
    const request = JSON.parse(exchange.request.body) as { Actions: Array<{ ActionType: number; Id: number }>; ObjectPaths: Record<string, { ObjectPathType: number; Name: string }> };
    // Instantiate, Query, and Method (_KeepReference: the range is tracked as in an Excel.run batch).
    expect(new Set(request.Actions.map((a) => a.ActionType))).toEqual(new Set([1, 2, 3]));
    expect(Object.values(request.ObjectPaths).map((p) => [p.ObjectPathType, p.Name])).toEqual(expect.arrayContaining([[1, ""], [4, "Worksheets"], [3, "GetRange"]]));
    const body = bodyOf(exchange);
    const values = body.Results!.map((r) => r.Value).filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null);
    expect(values).toEqual(expect.arrayContaining([{ Address: "Sheet1!A1:B2", Values: [[1, "a"], [2, "b"]] }]));
    expect(values).toEqual(expect.arrayContaining([{ _Items: [{ Name: "Sheet1", _Id: wb.sheets[0].id }] }]));
    expect(range.values).toEqual([[1, "a"], [2, "b"]]);
    expect(sheets.items.map((s) => s.name)).toEqual(["Sheet1"]);
    // Replaying the same body on a fresh workbook gives the same answer: the host is a pure function of it.
    const again = new Workbook({ currentYear: 2025, platform: "web" });
    seed(again, "A1:B2", [[1, "a"], [2, "b"]]);
    again.sheets[0].id = wb.sheets[0].id;
    expect(answerRequest(again, exchange.request)).toEqual(exchange.answer);
  });

  it("a failure stops the request at its action: Error with Code, Message, ActionIndex and Location; earlier actions stay applied", async () => {
    const wb = new Workbook({ platform: "web" });
    const context = createRequestContext(wb);
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1").values = [["first"]];
    s.getRange("A2:B2").values = [[1, 2, 3]];
    s.getRange("A3").values = [["third"]];
    let thrown: OfficeExtension.Error | undefined;
    const [exchange] = await recorded(() => context.sync().catch((e: OfficeExtension.Error) => void (thrown = e)));
    const err = bodyOf(exchange).Error!;
    expect(err).toMatchObject({ Code: "InvalidArgument", Location: "Range.values", HttpStatusCode: 400 });
    const actions = (JSON.parse(exchange.request.body) as { Actions: Array<{ Name: string }> }).Actions;
    expect(actions[err.ActionIndex].Name).toBe("Values");
    expect(thrown).toBeInstanceOf(officeJs().OfficeExtension.Error);
    expect(thrown!.debugInfo.errorLocation).toBe("Range.values");
    expect(inspect(wb, "A1:A3").values).toEqual([["first"], [""], [""]]);
  });

  const big = Array.from({ length: 1000 }, (_, r) => Array.from({ length: 10 }, (_, c) => `${r}:${c}:${"x".repeat(560)}`));

  it.each(["web", "windows"] as const)("a request body over 5 MB: refused on the web (5103, nothing applied), taken on Windows (%s)", async (platform) => {
    {
      const wb = new Workbook({ platform });
      const context = createRequestContext(wb);
      context.workbook.worksheets.getItem("Sheet1").getRange("A1:J1000").values = big;
      const [exchange] = await recorded(() => context.sync().catch((e: OfficeExtension.Error) => e.code));
      if (platform === "web") {
        expect(exchange.answer).toMatchObject({ kind: "refused", code: 5103 });
        expect(inspect(wb, "A1").values).toEqual([[""]]);
      } else {
        expect(exchange.answer.kind).toBe("response");
        expect(inspect(wb, "J1000").values[0][0]).toMatch(/^999:9:/);
      }
      expect(wb.stats.requestBytesPerSync[0]).toBe(Buffer.byteLength(exchange.request.body, "utf8"));
      expect(wb.stats.maxRequestBytes).toBeGreaterThan(5 * 1024 * 1024);
    }
  });

  it("a response body over 5 MB on the web: refused (5104) after the request ran", async () => {
    const web = new Workbook({ platform: "web" });
    seed(web, "A1:J1000", big);
    const context = createRequestContext(web);
    const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1:J1000");
    r.load("values");
    context.workbook.worksheets.getItem("Sheet1").getRange("L1").values = [["written"]];
    await expect(context.sync()).rejects.toMatchObject({ code: "ResponsePayloadSizeLimitExceeded" });
    // Excel on the web ran the request; only the answer could not be delivered.
    expect(inspect(web, "L1").values).toEqual([["written"]]);
  });

  it("keeps the references of an Excel.run batch and releases them when it ends (the library's cleanup request)", async () => {
    const wb = new Workbook({ platform: "web" });
    const Excel = createExcelNamespace(wb);
    const exchanges = await recorded(() =>
      Excel.run(async (context) => {
        const r = context.workbook.worksheets.getItem("Sheet1").getRange("A1");
        r.values = [["x"]];
        await context.sync();
        expect(keptReferenceCount(wb)).toBe(1);
        // The kept reference keeps the range usable in the next sync of the batch.
        r.load("values");
        await context.sync();
        expect(r.values).toEqual([["x"]]);
      }),
    );
    expect(keptReferenceCount(wb)).toBe(0);
    const last = JSON.parse(exchanges[exchanges.length - 1].request.body) as { Actions: Array<{ Name: string }> };
    expect(last.Actions.map((a) => a.Name).filter((n) => n !== "")).toEqual(["_RemoveReference"]);
    expect(wb.stats.syncCount).toBe(exchanges.length);
  });

  it("routes each request to its workbook: two workbooks in one realm, two clients on one workbook", async () => {
    const a = new Workbook({ platform: "web" });
    const b = new Workbook({ platform: "web" });
    await Promise.all([
      createExcelNamespace(a).run(async (context) => {
        context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["for a"]];
        await context.sync();
      }),
      createExcelNamespace(b).run(async (context) => {
        context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["for b"]];
        await context.sync();
      }),
    ]);
    expect(inspect(a, "A1").values).toEqual([["for a"]]);
    expect(inspect(b, "A1").values).toEqual([["for b"]]);
    const one = createRequestContext(a);
    const two = createRequestContext(a);
    one.workbook.worksheets.getItem("Sheet1").getRange("B1").values = [["one"]];
    two.workbook.worksheets.getItem("Sheet1").getRange("C1").values = [["two"]];
    await Promise.all([one.sync(), two.sync()]);
    expect(inspect(a, "A1:C1").values).toEqual([["for a", "one", "two"]]);
  });

  it("the library's own Excel.run (no session) reaches the realm's default workbook, and fails clearly without one", async () => {
    const { Excel } = officeJs();
    const run = (f: (context: Excel.RequestContext) => Promise<void>) => Excel.run(f);
    setDefaultWorkbook(null);
    await expect(
      run(async (context) => {
        context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["x"]];
        await context.sync();
      }),
    ).rejects.toMatchObject({ code: "GeneralException", message: expect.stringMatching(/No workbook is open/) as unknown });
    const wb = new Workbook({ platform: "web" });
    setDefaultWorkbook(wb);
    try {
      await run(async (context) => {
        context.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["default"]];
        await context.sync();
      });
    } finally {
      setDefaultWorkbook(null);
    }
    expect(inspect(wb, "A1").values).toEqual([["default"]]);
  });

  it("answers actions it does not emulate with GeneralException, naming them", () => {
    const wb = new Workbook({ platform: "web" });
    const body = JSON.stringify({
      Actions: [{ Id: 2, ActionType: 9, Name: "", ObjectPathId: 1, ObjectState: {} }],
      ObjectPaths: { 1: { Id: 1, ObjectPathType: 1, Name: "" } },
    });
    const answer = answerRequest(wb, { body });
    expect(answer.kind).toBe("response");
    expect((JSON.parse((answer as { body: string }).body) as Body).Error).toMatchObject({ Code: "GeneralException", Message: "Actions of type 9 are not emulated.", ActionIndex: 0 });
  });
});
