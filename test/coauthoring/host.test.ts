/**
 * Issue #26: the two-client host (src/emulator/coauthoring.ts). Each client holds its own copy; a
 * change reaches the other after d; settings are one value (a write sends the whole collection, issue
 * #35); the collaboration flag lags (issue #35); a concurrent structural change
 * is a merge conflict that reloads the later client; the reload injector kills a runtime at any request.
 */
import { createRequestContext, inspect, seed } from "../../src/emulator";
import { COLLAB_FLAG_DELAY_MS, CoauthoringSession } from "../../src/emulator/coauthoring";

async function setSetting(ctx: Excel.RequestContext, key: string, value: unknown): Promise<void> {
  ctx.workbook.settings.add(key, value);
  await ctx.sync();
}
async function readSetting(ctx: Excel.RequestContext, key: string): Promise<unknown> {
  const item = ctx.workbook.settings.getItemOrNullObject(key);
  item.load("value");
  await ctx.sync();
  // eslint-disable-next-line office-addins/call-sync-before-read, office-addins/call-sync-after-load -- read after the sync above
  return item.isNullObject ? null : item.value;
}

describe("two clients of one document", () => {
  afterEach(() => jest.useRealTimers());

  it("a change reaches the other client after d (fake clock: 5 s without waiting 5 s)", async () => {
    jest.useFakeTimers();
    const session = new CoauthoringSession(null, { delayMs: 5_000 });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    const a = createRequestContext(ann.workbook);
    a.workbook.worksheets.getItem("Sheet1").getRange("A1:B1").values = [["x", 1]];
    await a.sync();
    expect(inspect(ben.workbook, "Sheet1!A1:B1").values).toEqual([["", ""]]);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(inspect(ben.workbook, "Sheet1!A1:B1").values).toEqual([["", ""]]);
    await jest.advanceTimersByTimeAsync(1);
    expect(inspect(ben.workbook, "Sheet1!A1:B1").values).toEqual([["x", 1]]);
    expect(inspect(session.document, "Sheet1!A1").values).toEqual([["x"]]);
  });

  it("settings are one value (issue #35): a write sends the writer's whole collection, so a co-author's key it had not received vanishes; a later collection is never replaced by an older one arriving late", async () => {
    jest.useFakeTimers();
    const session = new CoauthoringSession(null, { delayMs: 500 });
    const ann = session.addClient();
    const ben = session.addClient();
    const a = createRequestContext(ann.workbook);
    const b = createRequestContext(ben.workbook);
    await setSetting(a, "k", "from Ann");
    await setSetting(a, "only", "Ann's");
    // Ben has not received Ann's two writes: his collection is { k: "from Ben" }.
    await setSetting(b, "k", "from Ben");
    expect(await readSetting(a, "k")).toBe("from Ann");
    expect(await readSetting(b, "only")).toBeNull();
    await jest.advanceTimersByTimeAsync(500);
    for (const ctx of [a, b]) {
      expect(await readSetting(ctx, "k")).toBe("from Ben");
      // Ann's key never reached Ben's copy before his write replaced the collection: gone everywhere.
      expect(await readSetting(ctx, "only")).toBeNull();
    }
    expect([...session.document.settings.keys()]).toEqual(["k"]);
    // The change records what Ben meant to write and delivers his whole collection.
    const last = session.changes()[session.changes().length - 1];
    expect(last.settings).toEqual([["k", JSON.stringify("from Ben")]]);
    expect(last.settingsWhole).toEqual([["k", JSON.stringify("from Ben")]]);
    // A write made after receiving everything keeps every key.
    await setSetting(b, "again", 1);
    await jest.advanceTimersByTimeAsync(500);
    expect(await readSetting(a, "k")).toBe("from Ben");
    expect(await readSetting(a, "again")).toBe(1);
  });

  for (const lag of [0, 500, 5_000]) {
    it(`getIsActiveCollabSession lags the session by collabFlagDelayMs = ${lag} ms: true that long after a second client joined, false that long after it left`, async () => {
      jest.useFakeTimers();
      const session = new CoauthoringSession(null, { collabFlagDelayMs: lag });
      const ann = session.addClient();
      const ask = async () => {
        const ctx = createRequestContext(ann.workbook);
        const r = ctx.workbook.getIsActiveCollabSession();
        await ctx.sync();
        // eslint-disable-next-line office-addins/load-object-before-read, office-addins/call-sync-before-read -- a ClientResult, read after the sync above
        return r.value;
      };
      await jest.advanceTimersByTimeAsync(lag + 1);
      expect(await ask()).toBe(false);
      const ben = session.addClient();
      if (lag > 0) {
        expect(await ask()).toBe(false);
        await jest.advanceTimersByTimeAsync(lag - 1);
        expect(await ask()).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
      }
      expect(await ask()).toBe(true);
      ben.close();
      if (lag > 0) {
        expect(await ask()).toBe(true);
        await jest.advanceTimersByTimeAsync(lag);
      }
      expect(await ask()).toBe(false);
    });
  }

  it("the flag's default lag is COLLAB_FLAG_DELAY_MS (30 s)", async () => {
    jest.useFakeTimers();
    const session = new CoauthoringSession();
    expect(session.collabFlagDelayMs).toBe(COLLAB_FLAG_DELAY_MS);
    expect(COLLAB_FLAG_DELAY_MS).toBe(30_000);
    const ann = session.addClient();
    session.addClient();
    expect(session.collabFlag(ann)).toBe(false);
    await jest.advanceTimersByTimeAsync(COLLAB_FLAG_DELAY_MS);
    expect(session.collabFlag(ann)).toBe(true);
  });

  it("concurrent cell edits to different cells merge; a concurrent structural change is a merge conflict that reloads the later client", async () => {
    jest.useFakeTimers();
    const start = new (await import("../../src/emulator")).Workbook({});
    seed(start, "Sheet1!A1:B3", [["k", "v"], [1, "a"], [2, "b"]]);
    const session = new CoauthoringSession(start, { delayMs: 500 });
    const ann = session.addClient({ name: "Ann" });
    const ben = session.addClient({ name: "Ben" });
    const a = createRequestContext(ann.workbook);
    const b = createRequestContext(ben.workbook);
    a.workbook.worksheets.getItem("Sheet1").getRange("B2").values = [["A!"]];
    await a.sync();
    b.workbook.worksheets.getItem("Sheet1").getRange("B3").values = [["B!"]];
    await b.sync();
    await jest.advanceTimersByTimeAsync(500);
    expect(inspect(ann.workbook, "Sheet1!B2:B3").values).toEqual([["A!"], ["B!"]]);
    expect(inspect(ben.workbook, "Sheet1!B2:B3").values).toEqual([["A!"], ["B!"]]);

    // Ann makes a table (structural); Ben, not having seen it, writes a cell on the same sheet.
    a.workbook.tables.add("Sheet1!A1:B3", true);
    await a.sync();
    b.workbook.worksheets.getItem("Sheet1").getRange("A2").values = [[99]];
    await b.sync();
    const reloads: string[] = [];
    ben.onReload((_c, reason) => reloads.push(reason));
    await jest.advanceTimersByTimeAsync(0);
    expect(reloads).toHaveLength(1);
    expect(reloads[0]).toMatch(/merge conflict/);
    // The dead runtime's requests fail; the new copy is the service's document (Ben's write is gone).
    b.workbook.worksheets.getItem("Sheet1").getRange("A2").values = [[100]];
    await expect(b.sync()).rejects.toThrow();
    expect(inspect(ben.workbook, "Sheet1!A2").values).toEqual([[1]]);
    expect(ben.workbook.tables).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(500);
    expect(inspect(ann.workbook, "Sheet1!A2").values).toEqual([[1]]);
  });

  it("the reload injector kills a runtime at its n-th request: that request fails and applies nothing", async () => {
    const session = new CoauthoringSession();
    const ann = session.addClient();
    session.addClient();
    const a = createRequestContext(ann.workbook);
    ann.reloadAtRequest(2);
    a.workbook.worksheets.getItem("Sheet1").getRange("A1").values = [["one"]];
    await a.sync();
    a.workbook.worksheets.getItem("Sheet1").getRange("A2").values = [["two"]];
    await expect(a.sync()).rejects.toThrow();
    expect(ann.reloads).toBe(1);
    expect(inspect(ann.workbook, "Sheet1!A1:A2").values).toEqual([["one"], [""]]);
    expect(inspect(session.document, "Sheet1!A1:A2").values).toEqual([["one"], [""]]);
  });

  it("each client has its own clock offset", () => {
    const session = new CoauthoringSession();
    const ann = session.addClient({ clockOffsetMs: 15 * 60_000 });
    const ben = session.addClient({ clockOffsetMs: -15 * 60_000 });
    expect(ann.now().getTime() - ben.now().getTime()).toBeGreaterThanOrEqual(30 * 60_000 - 5);
  });
});
