/**
 * The ribbon's "Refresh all": unit tests of the reporting with fake Office dialogs, and an
 * integration test over real HTTP (reference service on 127.0.0.1) into the workbook emulator,
 * driving the same engine the task pane uses.
 */
import { createRefreshAllCommand, reportSummary, summaryDialogUrl } from "../../src/commands/refreshAll";
import { parseSummaryMessage, summaryMessage } from "../../src/commands/summaryMessages";
import { ConnectionStore } from "../../src/addin/connectionStore";
import { LAST_RIBBON_REFRESH_KEY } from "../../src/addin/refreshSummary";
import { createEngine } from "../../src/addin/engine";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, createExcelNamespace } from "../../src/emulator";
import { MemoryStorage } from "../helpers/memoryStorage";
import { fakeDialogUi, settle, waitFor } from "../helpers/fakeDialog";
import { CONTROL } from "../helpers/control";

describe("summary dialog", () => {
  it("its address carries no text: the page shows only what the command sends it", () => {
    const url = new URL(summaryDialogUrl("https://addin.example.com/app/commands.html?x=1"));
    expect(url.href).toBe("https://addin.example.com/app/summary.html");
  });

  it("answers the page's ready with the text by messageChild, resolves as soon as it is shown, closes on the page's Close", async () => {
    const { ui, dialogs, calls } = fakeDialogUi("dialog");
    expect(await reportSummary(ui, "https://a.example.com/commands.html", "done", "ok")).toBe("dialog");
    await waitFor(() => dialogs[0]?.received.length === 1);
    expect(dialogs[0].url).toBe("https://a.example.com/summary.html");
    expect(dialogs[0].received).toEqual([{ kind: "ppm-summary", state: "ok", text: "done" }]);
    expect(calls).not.toContain("close");
    dialogs[0].clickClose();
    expect(calls).toContain("close");
  });

  it("when no dialog can be shown (12007: another is open; DialogApi 1.1 without messageChild) it says so, and never calls messageParent", async () => {
    const failed = fakeDialogUi("fail");
    expect(await reportSummary(failed.ui, "https://a.example.com/c.html", "the text", "ok")).toBe("stored");
    const old = fakeDialogUi("no-message-child");
    expect(await reportSummary(old.ui, "https://a.example.com/c.html", "the text", "ok")).toBe("stored");
    // A dialog that could not be told what to say is closed again, not left empty.
    expect(old.calls).toEqual(["open https://a.example.com/summary.html", "close"]);
    expect(await reportSummary(undefined, "https://a.example.com/c.html", "t", "ok")).toBe("stored");
  });

  it("the page's messages: only well-formed summaries are shown", () => {
    expect(parseSummaryMessage(summaryMessage("failed", "x"))).toEqual({ kind: "ppm-summary", state: "failed", text: "x" });
    for (const bad of ["x", "{}", JSON.stringify({ kind: "ppm-summary", state: "evil", text: "x" }), JSON.stringify({ kind: "other", state: "ok", text: "x" }), 42, null]) expect(parseSummaryMessage(bad)).toBeNull();
    expect(parseSummaryMessage(summaryMessage("ok", "y".repeat(10_000)))!.text).toHaveLength(4000);
  });
});

describe("refreshAll command", () => {
  function acme(token = "very-secret-token") {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { partitionKey: "pk", newId: () => "c1" });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token });
    return { storage, store };
  }
  const stored = (storage: MemoryStorage) => JSON.parse(storage.getItem(`pk:${LAST_RIBBON_REFRESH_KEY}`) ?? "null") as { text?: string; state?: string } | null;

  it("always completes the event, even when the refresh itself throws, never leaks a token, and stores what it says", async () => {
    const { storage, store } = acme();
    const { ui, shown } = fakeDialogUi("dialog");
    let completed = 0;
    const command = createRefreshAllCommand({
      store: () => store,
      engine: async () => ({
        refreshAll: async () => {
          throw new Error("Excel is busy (very-secret-token)");
        },
      }),
      ui: () => ui,
      pageUrl: () => "https://a.example.com/commands.html",
      storage: () => storage,
      partitionKey: () => "pk",
    });
    await command({ completed: () => completed++ });
    await waitFor(() => shown().some((m) => m.state === "failed"));
    expect(completed).toBe(1);
    const last = shown().at(-1)!;
    expect(last).toMatchObject({ state: "failed", text: "Refresh all could not run: Excel is busy ([redacted])" });
    expect(stored(storage)).toMatchObject({ state: "failed", text: "Refresh all could not run: Excel is busy ([redacted])" });
    expect(JSON.stringify([shown(), [...storage.map.entries()].filter(([k]) => !k.includes("secret"))])).not.toContain("very-secret-token");
  });

  it("one dialog: the working dialog becomes the summary in place (no second dialog, no 12007)", async () => {
    const { storage, store } = acme();
    const { ui, dialogs } = fakeDialogUi("dialog", { openOnly: 1 });
    let completed = 0;
    const command = createRefreshAllCommand({
      store: () => store,
      engine: async () => ({ refreshAll: async () => (await settle(), { reports: [], broken: [] }) }),
      ui: () => ui,
      pageUrl: () => "https://a.example.com/commands.html",
      storage: () => storage,
      partitionKey: () => "pk",
    });
    await command({ completed: () => completed++ });
    await waitFor(() => dialogs[0]?.received.length === 2);
    expect(completed).toBe(1);
    expect(dialogs).toHaveLength(1);
    expect(dialogs[0].received.map((m) => m.state)).toEqual(["working", "ok"]);
    expect(dialogs[0].received[1].text).toBe("No PPM tables in this workbook to refresh.");
    expect(dialogs[0].closed).toBe(false);
  });

  it("no dialog can open (another one is open in this window: 12007): the summary is stored for the pane, not lost", async () => {
    const { storage, store } = acme();
    const { ui, calls } = fakeDialogUi("fail");
    let completed = 0;
    const command = createRefreshAllCommand({
      store: () => store,
      engine: async () => ({ refreshAll: async () => ({ reports: [], broken: [] }) }),
      ui: () => ui,
      pageUrl: () => "https://a.example.com/commands.html",
      storage: () => storage,
      partitionKey: () => "pk",
    });
    await command({ completed: () => completed++ });
    expect(completed).toBe(1);
    expect(calls.filter((c) => c.startsWith("open"))).toHaveLength(2);
    expect(stored(storage)).toMatchObject({ state: "ok", text: "No PPM tables in this workbook to refresh.", updated: 0, unchanged: 0, failed: 0 });
  });

  it("the user hid the working dialog: the summary opens in a new one when the refresh ends", async () => {
    const { storage, store } = acme();
    const { ui, dialogs } = fakeDialogUi("dialog");
    let release: () => void = () => undefined;
    const hold = new Promise<void>((r) => (release = r));
    const command = createRefreshAllCommand({
      store: () => store,
      engine: async () => ({ refreshAll: async () => (await hold, { reports: [], broken: [] }) }),
      ui: () => ui,
      pageUrl: () => "https://a.example.com/commands.html",
      storage: () => storage,
      partitionKey: () => "pk",
    });
    const done = command({ completed: () => undefined });
    await waitFor(() => dialogs[0]?.received.length === 1);
    dialogs[0].clickClose();
    release();
    await done;
    await waitFor(() => dialogs[1]?.received.length === 1);
    expect(dialogs).toHaveLength(2);
    expect(dialogs[0].received.map((m) => m.state)).toEqual(["working"]);
    expect(dialogs[1].received.map((m) => m.state)).toEqual(["ok"]);
  });
});

describe("refreshAll command against the reference service and the workbook emulator", () => {
  let service: ReferenceService;
  const g = globalThis as unknown as { Excel?: unknown };
  const saved = g.Excel;

  beforeAll(async () => {
    service = await startReferenceService({ port: 0, quiet: true });
  });
  afterAll(async () => {
    g.Excel = saved;
    await service.close();
  });

  it("reports unchanged, then updated after a regeneration, and stores the last summary", async () => {
    await fetch(`${service.url}/__control/reset`, { method: "POST", headers: CONTROL });
    const wb = new Workbook({});
    g.Excel = createExcelNamespace(wb);
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { partitionKey: "pk", newId: () => "acme1" });
    store.save({ name: "Acme", baseUrl: service.url, token: "demo-acme-token" });
    const conn = store.connection("acme1")!;

    // Import as the task pane does.
    const engine = createEngine();
    const manifest = await engine.manifest(conn);
    store.setCompanyId("acme1", manifest.companyId);
    const imported = await engine.importSource({
      connection: conn,
      companyId: manifest.companyId,
      source: { kind: "dataset", key: "financials", format: "json" },
      query: { filter: "fiscal_year eq 2026", select: ["project_id", "fiscal_year", "budget"] },
      destination: { kind: "newSheet" },
      signal: new AbortController().signal,
      secrets: store.allSecrets(),
      onProgress: () => undefined,
    });
    expect(imported.rowCount).toBeGreaterThan(0);
    expect(imported.rowCount).toBeLessThan(imported.fetchedRows);

    const run = async () => {
      const { ui, dialogs } = fakeDialogUi("dialog");
      let completed = 0;
      const command = createRefreshAllCommand({
        store: () => new ConnectionStore(storage, { partitionKey: "pk" }),
        engine: async () => createEngine(),
        ui: () => ui,
        pageUrl: () => "https://addin.example.com/commands.html",
        storage: () => storage,
        partitionKey: () => "pk",
      });
      await command({ completed: () => completed++ });
      await waitFor(() => dialogs[0]?.received.length === 2);
      // The command completes once the summary is shown, without waiting for the user to close it.
      expect(completed).toBe(1);
      // While it ran, the dialog said it was working; then the same dialog showed the summary.
      expect(dialogs).toHaveLength(1);
      expect(dialogs[0].received.map((m) => m.state)).toEqual(["working", expect.stringMatching(/^(ok|failed)$/)]);
      expect(dialogs[0].closed).toBe(false);
      dialogs[0].userCloses();
      return dialogs[0].received[1].text;
    };

    expect(await run()).toBe("0 updated, 1 unchanged, 0 failed\nfinancials (json) › ppm_financials: unchanged, 60 rows");
    // A partial regeneration: the ribbon's summary carries the rows added, changed and removed (#15).
    const r = await fetch(`${service.url}/__control/regenerate?company=acme&dataset=financials&changed=0.2&added=0.1&removed=0.1&seed=3`, { method: "POST", headers: CONTROL });
    expect(r.ok).toBe(true);
    const applied = (await r.json()) as { changed: number; added: number; removed: number };
    // This table's local query drops a key column (period_number), so rows match by position: the
    // summary says how many rows were rewritten, never "changed" (issue #25), or, rewritten in full
    // without a plan, the change in row count.
    expect(applied.added + applied.changed + applied.removed).toBeGreaterThan(0);
    expect(await run()).toMatch(/^1 updated, 0 unchanged, 0 failed\nfinancials \(json\) › ppm_financials: updated, [\d,]+ rows — ([\d,]+ rows? rewritten \(no key to match rows by\)|rewritten in full, changes not counted)(, [\d,]+ (more|fewer) rows?)?$/);
    const last: unknown = JSON.parse(storage.getItem(`pk:${LAST_RIBBON_REFRESH_KEY}`)!);
    expect(last).toMatchObject({ updated: 1, unchanged: 0, failed: 0 });

    // A forgotten token: the table fails with 401 and the summary says which table and why.
    store.forgetToken("acme1");
    const text = await run();
    expect(text).toMatch(/^0 updated, 0 unchanged, 1 failed\nfinancials \(json\) › ppm_financials: /);
    expect(text).not.toContain("demo-acme-token");
  });
});
