/**
 * The ribbon's "Refresh this table" (issue 17) with fakes: it checks the selection itself (the
 * ribbon can lag), takes the runtime's lock, and always completes the event once.
 */
import { createRefreshTableCommand, NOT_IN_TABLE } from "../../src/commands/refreshTable";
import { RefreshLock } from "../../src/addin/refreshLock";
import { RibbonState } from "../../src/addin/ribbonState";
import { fakeDialogUi, waitFor } from "../helpers/fakeDialog";
import type { Binding } from "../../src/refresh/binding";
import type { RefreshReport } from "../../src/refresh/engine";

const binding = { id: "b1", tableName: "ppm_financials", rowCount: 3 } as unknown as Binding;

function setup(opts: { at: Binding | null; refresh?: (b: Binding) => Promise<RefreshReport> }) {
  const fake = fakeDialogUi("dialog");
  const ui = fake.ui;
  const lock = new RefreshLock();
  const updates: unknown[] = [];
  const ribbon = new RibbonState({ requestUpdate: async (u) => void updates.push(u) });
  const refreshed: string[] = [];
  const command = createRefreshTableCommand({
    engine: async () => ({ bindingAtSelection: async () => opts.at }),
    refresh:
      opts.refresh ??
      (async (b) => {
        refreshed.push(b.tableName);
        return { bindingId: b.id, tableName: b.tableName, outcome: "unchanged", rowCount: 3, warnings: [], binding: b } as unknown as RefreshReport;
      }),
    lock: () => lock,
    ribbon: () => ribbon,
    ui: () => ui,
    pageUrl: () => "https://addin.example.com/taskpane.html",
    secrets: () => ["demo-acme-token"],
  });
  let completed = 0;
  const run = async () => {
    const before = fake.shown().length;
    await command({ completed: () => void completed++ });
    await waitFor(() => fake.shown().length > before);
    // The user closes the dialog (Office allows one at a time).
    for (const d of fake.dialogs) if (!d.closed) d.clickClose();
  };
  return {
    run,
    get messages() {
      return fake.shown().map((m) => m.text);
    },
    lock,
    refreshed,
    updates,
    completed: () => completed,
  };
}

describe("refreshTable command", () => {
  it("outside any bound table: says so, refreshes nothing, resends the ribbon state", async () => {
    const s = setup({ at: null });
    await s.run();
    expect(s.messages).toEqual([NOT_IN_TABLE]);
    expect(s.refreshed).toEqual([]);
    expect(s.updates).toHaveLength(1);
    expect(s.completed()).toBe(1);
  });

  it("refuses while another refresh holds the lock", async () => {
    const s = setup({ at: binding });
    const release = s.lock.tryAcquire("open", "Refreshing 2 tables on open…")!;
    await s.run();
    expect(s.messages[0]).toBe("A refresh started since the workbook opened is still running (Refreshing 2 tables on open…). Try again when it has finished.");
    expect(s.refreshed).toEqual([]);
    release();
    await s.run();
    expect(s.refreshed).toEqual(["ppm_financials"]);
    expect(s.messages[1]).toMatch(/^0 updated, 1 unchanged, 0 failed/);
    expect(s.lock.busy).toBe(false);
    expect(s.completed()).toBe(2);
  });

  it("a throwing refresh still completes the event, frees the lock and never shows a token", async () => {
    const s = setup({ at: binding, refresh: async () => Promise.reject(new Error("socket closed for demo-acme-token")) });
    await s.run();
    expect(s.messages[0]).toBe("Refresh this table could not run: socket closed for [redacted]");
    expect(s.lock.busy).toBe(false);
    expect(s.completed()).toBe(1);
  });
});
