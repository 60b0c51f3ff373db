/**
 * The ribbon's "Refresh all": unit tests of the reporting with fake Office dialogs, and an
 * integration test over real HTTP (reference service on 127.0.0.1) into the workbook emulator,
 * driving the same engine the task pane uses.
 */
import { createRefreshAllCommand, reportSummary, summaryDialogUrl, type DialogLike, type DialogUi } from "../../src/commands/refreshAll";
import { ConnectionStore } from "../../src/addin/connectionStore";
import { LAST_RIBBON_REFRESH_KEY } from "../../src/addin/refreshSummary";
import { createEngine } from "../../src/addin/engine";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { Workbook, createExcelNamespace } from "../../src/emulator";
import { MemoryStorage } from "../helpers/memoryStorage";

/** A fake `Office.context.ui` recording what the command did. */
function fakeUi(mode: "dialog" | "fail" | "message-only") {
  const calls: string[] = [];
  const handlers = new Map<string, (arg: unknown) => void>();
  let markOpened: () => void = () => undefined;
  const opened = new Promise<void>((r) => (markOpened = r));
  const ui: DialogUi = {
    displayDialogAsync(url, _opts, cb) {
      calls.push(`open ${url}`);
      // The "working" dialog comes first; `opened` is the summary's.
      if (new URL(url).searchParams.get("state") !== "working") markOpened();
      if (mode === "fail") return cb({ status: "failed" });
      const dialog: DialogLike = {
        close: () => calls.push("close"),
        addEventHandler: (t, h) => handlers.set(t, h),
      };
      cb({ status: "succeeded", value: dialog });
    },
    messageParent: (m) => calls.push(`message ${m}`),
  };
  if (mode === "message-only") delete (ui as Partial<DialogUi>).displayDialogAsync;
  return { ui, calls, handlers, opened };
}

describe("summary dialog", () => {
  it("puts the text in the dialog page's address, clipped", () => {
    const url = new URL(summaryDialogUrl("https://addin.example.com/app/commands.html?x=1", "1 updated, 0 unchanged, 0 failed", "ok"));
    expect(url.origin + url.pathname).toBe("https://addin.example.com/app/summary.html");
    expect(url.searchParams.get("text")).toBe("1 updated, 0 unchanged, 0 failed");
    expect(url.searchParams.get("state")).toBe("ok");
    const long = new URL(summaryDialogUrl("https://a.example.com/commands.html", "x".repeat(5000), "failed"));
    expect(long.searchParams.get("text")!.length).toBe(1500);
  });

  it("resolves as soon as the dialog is shown; the dialog closes itself when the user closes it", async () => {
    const { ui, calls, handlers } = fakeUi("dialog");
    expect(await reportSummary(ui, "https://a.example.com/commands.html", "done", "ok")).toBe("dialog");
    expect(calls).not.toContain("close");
    handlers.get("dialogMessageReceived")!({ message: "close" });
    expect(calls).toContain("close");
  });

  it("falls back to messageParent when no dialog can be opened", async () => {
    const failed = fakeUi("fail");
    expect(await reportSummary(failed.ui, "https://a.example.com/c.html", "the text", "ok")).toBe("message");
    expect(failed.calls).toContain("message the text");
    const none = fakeUi("message-only");
    expect(await reportSummary(none.ui, "https://a.example.com/c.html", "t", "ok")).toBe("message");
    expect(await reportSummary(undefined, "https://a.example.com/c.html", "t", "ok")).toBe("none");
  });
});

describe("refreshAll command", () => {
  it("always completes the event, even when the refresh itself throws, and never leaks a token", async () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: () => "c1" });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token: "very-secret-token" });
    const { ui, calls } = fakeUi("fail");
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
    });
    await command({ completed: () => completed++ });
    expect(completed).toBe(1);
    const shown = calls.join("\n");
    expect(shown).toContain("Refresh all could not run: Excel is busy ([redacted])");
    expect(shown).not.toContain("very-secret-token");
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
    await fetch(`${service.url}/__control/reset`, { method: "POST" });
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
      const { ui, calls, handlers, opened } = fakeUi("dialog");
      let completed = 0;
      const command = createRefreshAllCommand({
        store: () => new ConnectionStore(storage, { partitionKey: "pk" }),
        engine: async () => createEngine(),
        ui: () => ui,
        pageUrl: () => "https://addin.example.com/commands.html",
        storage: () => storage,
        partitionKey: () => "pk",
      });
      const done = command({ completed: () => completed++ });
      // The command completes once the summary is shown, without waiting for the user to close it.
      await opened;
      await done;
      expect(completed).toBe(1);
      // While it ran, the command showed that it was working, and closed that dialog before the summary.
      const opens = calls.filter((c) => c.startsWith("open ")).map((c) => new URL(c.slice(5)).searchParams);
      expect(opens.map((p) => p.get("state"))).toEqual(["working", expect.stringMatching(/^(ok|failed)$/)]);
      expect(calls.indexOf("close")).toBeLessThan(calls.lastIndexOf(calls.find((c) => c.startsWith("open ") && !c.includes("state=working"))!));
      handlers.get("dialogEventReceived")!({ error: 12006 });
      expect(calls).toContain("close");
      return opens[1].get("text")!;
    };

    expect(await run()).toBe("0 updated, 1 unchanged, 0 failed\nfinancials (json) › ppm_financials: unchanged, 60 rows");
    // A partial regeneration: the ribbon's summary carries the rows added, changed and removed (#15).
    const r = await fetch(`${service.url}/__control/regenerate?company=acme&dataset=financials&changed=0.2&added=0.1&removed=0.1&seed=3`, { method: "POST" });
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
