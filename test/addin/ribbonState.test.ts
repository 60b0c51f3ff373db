/**
 * The runtime's refresh lock and the ribbon state it drives (issue 17), with a fake
 * `Office.ribbon.requestUpdate` that records what Office was asked to show.
 */
import { readFileSync } from "fs";
import { join } from "path";
import { RefreshLock, busyText } from "../../src/addin/refreshLock";
import { RibbonState, RIBBON_IDS, buttonsFor, type RibbonApi } from "../../src/addin/ribbonState";

type Update = Parameters<RibbonApi["requestUpdate"]>[0];

function fakeRibbon(opts: { fail?: boolean; slow?: boolean } = {}) {
  const updates: Update[] = [];
  const pending: Array<() => void> = [];
  const api: RibbonApi = {
    requestUpdate(input) {
      updates.push(input);
      if (opts.fail) return Promise.reject(Object.assign(new Error("The API you are trying to use is not available."), { code: "HostRestartNeeded" }));
      if (opts.slow) return new Promise<void>((r) => pending.push(r));
      return Promise.resolve();
    },
  };
  const state = (u: Update) => Object.fromEntries(u.tabs[0].groups[0].controls.map((c) => [c.id, c.enabled]));
  return { api, updates, pending, state };
}

describe("RefreshLock", () => {
  it("admits one holder at a time, names it, and releases once", () => {
    const lock = new RefreshLock(() => new Date("2026-01-01T00:00:00Z"));
    const seen: Array<string | null> = [];
    lock.onChange((h) => seen.push(h ? h.owner : null));
    const release = lock.tryAcquire("ribbon", "Refresh all");
    expect(release).not.toBeNull();
    expect(lock.tryAcquire("pane", "Refreshing x…")).toBeNull();
    expect(busyText(lock.holder!)).toBe("A refresh started from the ribbon is still running (Refresh all). Try again when it has finished.");
    release!();
    release!(); // idempotent: a second call must not free someone else's lock
    const again = lock.tryAcquire("pane", "Refreshing x…");
    expect(again).not.toBeNull();
    release!();
    expect(lock.holder?.owner).toBe("pane");
    expect(seen).toEqual(["ribbon", null, "pane"]);
  });

  it("run() does not run the work while the lock is held, and frees it when the work throws", async () => {
    const lock = new RefreshLock();
    const release = lock.tryAcquire("open", "on open");
    let ran = false;
    const r = await lock.run("ribbon", "Refresh all", async () => {
      ran = true;
    });
    expect(r).toMatchObject({ ran: false, holder: { owner: "open" } });
    expect(ran).toBe(false);
    release!();
    await expect(lock.run("pane", "x", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(lock.busy).toBe(false);
  });
});

describe("RibbonState", () => {
  it("Refresh all is disabled while busy; Refresh this table only on a table and not busy", () => {
    expect(buttonsFor({ busy: false, tableAtSelection: false })).toEqual({ refreshAll: true, refreshTable: false });
    expect(buttonsFor({ busy: false, tableAtSelection: true })).toEqual({ refreshAll: true, refreshTable: true });
    expect(buttonsFor({ busy: true, tableAtSelection: true })).toEqual({ refreshAll: false, refreshTable: false });
  });

  it("sends the manifest's ids, and nothing when the state did not change", async () => {
    const r = fakeRibbon();
    const ribbon = new RibbonState(r.api);
    await ribbon.set({ tableAtSelection: true });
    await ribbon.set({ tableAtSelection: true });
    expect(r.updates).toHaveLength(1);
    expect(r.updates[0].tabs[0].id).toBe(RIBBON_IDS.tab);
    expect(r.updates[0].tabs[0].groups[0].id).toBe(RIBBON_IDS.group);
    expect(r.state(r.updates[0])).toEqual({ "PPM.RefreshAll": true, "PPM.RefreshTable": true });
    await ribbon.set({ busy: true });
    expect(r.state(r.updates[1])).toEqual({ "PPM.RefreshAll": false, "PPM.RefreshTable": false });
    const manifest = readFileSync(join(__dirname, "../../manifest.xml"), "utf8");
    for (const id of [RIBBON_IDS.group, RIBBON_IDS.refreshAll, RIBBON_IDS.refreshTable]) expect(manifest).toContain(`id="${id}"`);
    expect(manifest).toContain(`<OfficeTab id="${RIBBON_IDS.tab}">`);
  });

  it("coalesces a burst of changes into one request for the latest state", async () => {
    const r = fakeRibbon({ slow: true });
    const ribbon = new RibbonState(r.api);
    const first = ribbon.set({ tableAtSelection: true });
    void ribbon.set({ tableAtSelection: false });
    void ribbon.set({ tableAtSelection: true });
    void ribbon.set({ busy: true });
    expect(r.updates).toHaveLength(1);
    r.pending.shift()!();
    await new Promise((res) => setTimeout(res, 0));
    expect(r.updates).toHaveLength(2);
    expect(r.state(r.updates[1])).toEqual({ "PPM.RefreshAll": false, "PPM.RefreshTable": false });
    r.pending.shift()!();
    await first;
    expect(ribbon.intended).toEqual({ refreshAll: false, refreshTable: false });
  });

  it("a refused update is reported, not thrown; the intended state stays known and can be resent", async () => {
    const r = fakeRibbon({ fail: true });
    const errors: unknown[] = [];
    const ribbon = new RibbonState(r.api, (e) => errors.push(e));
    await expect(ribbon.set({ busy: true })).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    expect((ribbon.error as { code?: string }).code).toBe("HostRestartNeeded");
    expect(ribbon.intended.refreshAll).toBe(false);
    await ribbon.resend();
    expect(r.updates).toHaveLength(2);
  });

  it("without the Ribbon API (separate runtimes) it only keeps the intended state", async () => {
    const ribbon = new RibbonState(null);
    expect(ribbon.supported).toBe(false);
    await ribbon.set({ tableAtSelection: true });
    expect(ribbon.intended.refreshTable).toBe(true);
  });
});
