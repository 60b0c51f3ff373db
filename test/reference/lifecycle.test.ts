/**
 * The control hooks the browser preview's toolbar drives (issue #25): stop and start the service
 * (its port really closes: clients are refused), make it fail (503, slow, dropped connections)
 * until cleared, regenerate a given number of rows, and report its state.
 */
import * as net from "node:net";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { CONTROL } from "../helpers/control";

const TOKEN = "demo-acme-token";
let svc: ReferenceService;

beforeEach(async () => {
  svc = await startReferenceService({ port: 0, quiet: true });
});
afterEach(async () => {
  await svc.close();
});

const post = async (url: string) => {
  const res = await fetch(url, { method: "POST", headers: CONTROL });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const manifest = () => fetch(`${svc.url}/api/bi/v1/manifest`, { headers: { "Company-Api-Token": TOKEN } });
/** Whether a TCP connection to the service's port is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" });
    s.once("connect", () => (s.destroy(), resolve(false)));
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"));
  });

describe("stop and start", () => {
  it("stop closes the port (refused), answers with a start address on another port; start opens the same port again", async () => {
    expect((await manifest()).status).toBe(200);
    const stop = await post(`${svc.url}/__control/stop`);
    expect(stop).toMatchObject({ status: 200, body: { ok: true, running: false } });
    const start = String(stop.body.start);
    expect(start).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/__control\/start$/);
    expect(new URL(start).port).not.toBe(String(svc.port));
    // The answer went out, then the port closed.
    for (let i = 0; i < 20 && !(await refused(svc.port)); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await refused(svc.port)).toBe(true);
    await expect(manifest()).rejects.toThrow();
    const status = (await (await fetch(start.replace(/start$/, "status"), { headers: CONTROL })).json()) as unknown;
    expect(status).toMatchObject({ running: false, start });
    expect(await post(start)).toMatchObject({ status: 200, body: { ok: true, running: true, url: svc.url } });
    expect((await manifest()).status).toBe(200);
    expect(await (await fetch(`${svc.url}/__control/status`, { headers: CONTROL })).json()).toMatchObject({ running: true });
  });

  it("while stopped, the standby listener answers only start and status (503 otherwise); close() works while stopped", async () => {
    const a = await post(`${svc.url}/__control/stop`);
    const other = await fetch(String(a.body.start).replace(/start$/, "reset"), { method: "POST", headers: CONTROL });
    expect(other.status).toBe(503);
    expect(await other.json()).toMatchObject({ error: "stopped" });
  });
});

describe("failures until cleared", () => {
  it("status=drop closes the connection without an answer; count=unlimited keeps failing until count=0", async () => {
    expect(await post(`${svc.url}/__control/fault?path=/api/*&status=drop&count=unlimited`)).toMatchObject({ status: 200, body: { status: "drop", count: "unlimited" } });
    for (let i = 0; i < 4; i++) await expect(manifest()).rejects.toThrow(/fetch failed/);
    expect(await (await fetch(`${svc.url}/__control/status`, { headers: CONTROL })).json()).toMatchObject({ faults: [{ path: "/api/*", status: "drop", remaining: "unlimited" }] });
    await post(`${svc.url}/__control/fault?path=/api/*&count=0`);
    expect((await manifest()).status).toBe(200);
    await post(`${svc.url}/__control/fault?path=/api/*&status=503&count=unlimited&retryAfter=0`);
    for (let i = 0; i < 4; i++) expect((await manifest()).status).toBe(503);
  });

  it("rejects a bad status or count", async () => {
    expect((await post(`${svc.url}/__control/fault?path=/api/*&status=dropped`)).status).toBe(400);
    expect((await post(`${svc.url}/__control/fault?path=/api/*&count=lots`)).status).toBe(400);
  });
});

describe("regenerate a number of rows", () => {
  it("changedRows / addedRows / removedRows are exact row counts; mixing them with fractions is refused", async () => {
    const r = await post(`${svc.url}/__control/regenerate?company=acme&dataset=financials&changedRows=2&addedRows=1&removedRows=3&seed=4`);
    expect(r).toMatchObject({ status: 200, body: { changed: 2, added: 1, removed: 3, row_count: 118 } });
    expect((await post(`${svc.url}/__control/regenerate?company=acme&dataset=financials&changedRows=2&changed=0.1`)).status).toBe(400);
    expect((await post(`${svc.url}/__control/regenerate?company=acme&dataset=financials&addedRows=x`)).status).toBe(400);
  });
});
