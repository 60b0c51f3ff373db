/** Test hooks: fault, delay (incl. slow streaming), absent groups, request log, reset; loopback-only, with their header, never from another origin's page. */
import * as http from "node:http";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Manifest } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { redactQuery } from "../../src/reference/control";
import type { RequestLogEntry } from "../../src/reference/state";
import { ACME_TOKEN, acme, control, get, json, start, type RequestLogReply } from "./helpers";
import { CONTROL } from "../helpers/control";

let svc: ReferenceService;
beforeAll(async () => {
  svc = await start();
});
afterAll(async () => {
  await svc.close();
});
afterEach(async () => {
  await control(svc.url, "reset");
});

test("fault: the next `count` requests answer the status with Retry-After, then normal service resumes", async () => {
  await control(svc.url, "fault?path=/api/bi/v1/financials&status=503&count=2&retryAfter=7");
  for (let i = 0; i < 2; i++) {
    const res = await get(svc.url, "/api/bi/v1/financials", acme());
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("7");
    expect((await json(res)).error).toBe("service_unavailable");
  }
  const ok = await get(svc.url, "/api/bi/v1/financials", acme());
  expect(ok.status).toBe(200);
  await ok.arrayBuffer();
});

test("fault 429 carries Retry-After; 500 does not; other paths are untouched", async () => {
  await control(svc.url, "fault?path=/api/bi/v1/manifest&status=429&count=1&retryAfter=2");
  await control(svc.url, "fault?path=/api/snapshot/projects&status=500&count=1");
  const other = await get(svc.url, "/api/bi/v1/financials.csv", acme());
  expect(other.status).toBe(200);
  await other.arrayBuffer();
  const limited = await get(svc.url, "/api/bi/v1/manifest", acme());
  expect(limited.status).toBe(429);
  expect(limited.headers.get("retry-after")).toBe("2");
  expect((await json(limited)).error).toBe("rate_limited");
  const failed = await get(svc.url, "/api/snapshot/projects", acme());
  expect(failed.status).toBe(500);
  expect(failed.headers.get("retry-after")).toBeNull();
  await failed.arrayBuffer();
});

test("fault with a trailing * matches a prefix; preflights do not consume faults", async () => {
  await control(svc.url, "fault?path=/api/bi/*&status=503&count=1");
  const pre = await fetch(svc.url + "/api/bi/v1/financials", { method: "OPTIONS", headers: { Origin: "https://localhost:3000", "Access-Control-Request-Method": "GET" } });
  expect(pre.status).toBe(204);
  const res = await get(svc.url, "/api/bi/odata/v1", acme());
  expect(res.status).toBe(503);
  await res.arrayBuffer();
});

test("fault rejects a bad status", async () => {
  const res = await fetch(svc.url + "/__control/fault?path=/x&status=200", { method: "POST", headers: CONTROL });
  expect(res.status).toBe(400);
  expect((await json(res)).error).toBe("bad_request");
});

test("delay: the response waits; the client can abort it", async () => {
  await control(svc.url, "delay?path=/api/bi/v1/manifest&ms=5000&count=1");
  const ac = new AbortController();
  const pending = fetch(svc.url + "/api/bi/v1/manifest", { headers: acme(), signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await expect(pending).rejects.toThrow();
  // count=1 was consumed: the next request is served at once.
  const res = await get(svc.url, "/api/bi/v1/manifest", acme());
  expect(res.status).toBe(200);
  await res.arrayBuffer();
});

test("slow streaming: headers arrive, then the body trickles; aborting mid-body works", async () => {
  await control(svc.url, "delay?path=/api/bi/v1/financials.csv&ms=0&chunkDelayMs=200&count=1");
  const ac = new AbortController();
  const res = await fetch(svc.url + "/api/bi/v1/financials.csv", { headers: acme(), signal: ac.signal });
  expect(res.status).toBe(200);
  // The first small chunk arrives while the rest is still being trickled out.
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  expect(first.value!.byteLength).toBeLessThan(20_000);
  ac.abort();
  await expect(reader.read()).rejects.toThrow();
  // The server learns of the abort when the socket closes; wait for that (not a speed assertion).
  let entry: RequestLogEntry | undefined;
  for (let i = 0; i < 100 && !entry; i++) {
    const log = await control<RequestLogReply>(svc.url, "requests", "GET");
    entry = log.requests.find((r) => r.path === "/api/bi/v1/financials.csv");
    if (!entry) await new Promise((r) => setTimeout(r, 20));
  }
  expect(entry).toEqual(expect.objectContaining({ status: 200, complete: false }));
});

test("absent groups answer plain 404 for every path of the group, and come back", async () => {
  await control(svc.url, "absent?groups=snapshot,record");
  for (const path of ["/api/snapshot/projects", "/api/snapshot/proposals/scores", "/api/v1/project"]) {
    const res = await get(svc.url, path, acme());
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toBe("Not Found");
  }
  const reporting = await get(svc.url, "/api/bi/v1/manifest", acme());
  expect(reporting.status).toBe(200);
  await reporting.arrayBuffer();
  await control(svc.url, "absent?groups=");
  const back = await get(svc.url, "/api/snapshot/projects", acme());
  expect(back.status).toBe(200);
  await back.arrayBuffer();
});

test("absent reporting group: even a known dataset is a plain 404", async () => {
  await control(svc.url, "absent?groups=reporting");
  const res = await get(svc.url, "/api/bi/v1/financials", acme());
  expect(res.status).toBe(404);
  expect(await res.text()).toBe("Not Found");
});

test("absentGroups option starts a service with groups absent, and reset keeps that configuration", async () => {
  const other = await start({ absentGroups: ["snapshot"] });
  try {
    expect((await get(other.url, "/api/snapshot/projects", acme())).status).toBe(404);
    await control(other.url, "reset");
    expect((await get(other.url, "/api/snapshot/projects", acme())).status).toBe(404);
    expect((await get(other.url, "/api/v1/project", acme())).status).toBe(401);
  } finally {
    await other.close();
  }
});

test("absent rejects unknown group names", async () => {
  const res = await fetch(svc.url + "/__control/absent?groups=snapshots", { method: "POST", headers: CONTROL });
  expect(res.status).toBe(400);
});

test("request log: method, path, redacted query, status; never credential values", async () => {
  await fetch(svc.url + "/__control/requests", { method: "DELETE", headers: CONTROL });
  await (await get(svc.url, `/api/bi/v1/manifest?company_api_token=${ACME_TOKEN}&x=1`)).arrayBuffer();
  await (await get(svc.url, `/api/bi/v1/financials?Company-Api-Token=${ACME_TOKEN}`)).arrayBuffer();
  await (await get(svc.url, "/api/bi/v1/nope", acme())).arrayBuffer();
  const log = await control<RequestLogReply>(svc.url, "requests", "GET");
  const text = JSON.stringify(log);
  expect(text).not.toContain(ACME_TOKEN);
  expect(log.requests).toEqual([
    expect.objectContaining({ method: "GET", path: "/api/bi/v1/manifest", query: "company_api_token=REDACTED&x=1", status: 200 }),
    expect.objectContaining({ method: "GET", path: "/api/bi/v1/financials", query: "Company-Api-Token=REDACTED", status: 400 }),
    expect.objectContaining({ method: "GET", path: "/api/bi/v1/nope", query: "", status: 404 }),
  ]);
});

test("redactQuery redacts credential-like names in any encoding and keeps the rest", () => {
  expect(redactQuery("")).toBe("");
  expect(redactQuery("a=1&api-secret=s&company%5Fapi%5Ftoken=t&b")).toBe("a=1&api-secret=REDACTED&company%5Fapi%5Ftoken=REDACTED&b");
});

test("reset restores records, artifacts, faults and the log", async () => {
  await control(svc.url, "regenerate?company=acme&dataset=risks");
  await control(svc.url, "fault?path=/api/bi/v1/manifest&status=503&count=5");
  await control(svc.url, "reset");
  const res = await get(svc.url, "/api/bi/v1/manifest", acme());
  expect(res.status).toBe(200);
  const body = await json<Manifest>(res);
  expect(body.datasets.find((d) => d.key === "risks")?.artifacts.row_count).toBeNull();
});

test("reporting toggle switches a company's 403 on and off", async () => {
  const headers = { "Company-Api-Token": "demo-globex-token" };
  expect((await get(svc.url, "/api/bi/v1/manifest", headers)).status).toBe(403);
  await control(svc.url, "reporting?company=globex&enabled=true");
  expect((await get(svc.url, "/api/bi/v1/manifest", headers)).status).toBe(200);
  await control(svc.url, "reset");
  expect((await get(svc.url, "/api/bi/v1/manifest", headers)).status).toBe(403);
});

test("unknown control action → plain 404", async () => {
  const res = await fetch(svc.url + "/__control/nope", { method: "POST", headers: CONTROL });
  expect(res.status).toBe(404);
  expect(await res.text()).toBe("Not Found");
});

// Finding 6 (issue #36): `/__control` checked only for a loopback peer, which a local browser is.
describe("who may use the control hooks", () => {
  /** A raw HTTP request (fetch cannot send another Host), with the service's answer. */
  function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    const { port } = new URL(svc.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method, path, headers, setHost: false }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }
  const faults = async () => ((await control<{ faults: unknown[] }>(svc.url, "status", "GET")).faults);

  test("without the X-PPM-Control header: 403, and nothing changes", async () => {
    await control(svc.url, "fault?path=/api/x&status=503&count=unlimited");
    for (const [method, action] of [["POST", "reset"], ["POST", "stop"], ["POST", "regenerate?company=acme&dataset=financials"], ["GET", "requests"], ["DELETE", "requests"], ["GET", "status"]]) {
      const res = await fetch(`${svc.url}/__control/${action}`, { method });
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe("control_refused");
      expect(body.message).toContain("X-PPM-Control: 1");
      const wrong = await fetch(`${svc.url}/__control/${action}`, { method, headers: { "X-PPM-Control": "yes" } });
      expect(wrong.status).toBe(403);
      await wrong.arrayBuffer();
    }
    expect(await faults()).toHaveLength(1);
    expect((await get(svc.url, "/api/bi/v1/manifest", acme())).status).toBe(200);
  });

  test("from a page on another origin: 403 even with the header (a preflight would have been refused first)", async () => {
    await control(svc.url, "fault?path=/api/x&status=503&count=unlimited");
    const res = await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: { ...CONTROL, Origin: "https://evil.example.com" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await faults()).toHaveLength(1);
    const pre = await fetch(`${svc.url}/__control/reset`, { method: "OPTIONS", headers: { Origin: "https://evil.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ppm-control" } });
    expect(pre.status).toBe(403);
    // The dev server's page (the browser preview's toolbar) passes: preflight allows the header, the call works.
    const ours = await fetch(`${svc.url}/__control/reset`, { method: "OPTIONS", headers: { Origin: "https://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ppm-control" } });
    expect(ours.status).toBe(204);
    expect(list(ours.headers.get("access-control-allow-headers"))).toContain("x-ppm-control");
    const reset = await fetch(`${svc.url}/__control/reset`, { method: "POST", headers: { ...CONTROL, Origin: "https://localhost:3000" } });
    expect(reset.status).toBe(200);
    expect(reset.headers.get("access-control-allow-origin")).toBe("https://localhost:3000");
    expect(await faults()).toEqual([]);
  });

  test("a Host that does not name this machine (DNS rebinding) is refused with 421, for every path", async () => {
    await control(svc.url, "fault?path=/api/x&status=503&count=unlimited");
    const { port } = new URL(svc.url);
    for (const host of [`rebind.evil.example:${port}`, "evil.example", `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, ""]) {
      const c = await raw("POST", "/__control/reset", { ...CONTROL, Host: host });
      expect(c.status).toBe(421);
      const m = await raw("GET", "/api/bi/v1/manifest", { ...acme(), Host: host });
      expect(m.status).toBe(421);
    }
    expect(await faults()).toHaveLength(1);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, "localhost", `[::1]:${port}`]) {
      expect((await raw("GET", "/__control/status", { ...CONTROL, Host: host })).status).toBe(200);
    }
  });

  test("the stopped service's standby listener applies the same rules", async () => {
    const stop = await control<{ start: string }>(svc.url, "stop");
    const start = stop.start;
    expect((await fetch(start, { method: "POST" })).status).toBe(403);
    expect((await fetch(start, { method: "POST", headers: { ...CONTROL, Origin: "https://evil.example.com" } })).status).toBe(403);
    const pre = await fetch(start, { method: "OPTIONS", headers: { Origin: "https://evil.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ppm-control" } });
    expect(pre.status).toBe(403);
    expect((await fetch(start, { method: "POST", headers: CONTROL })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 150));
    expect((await get(svc.url, "/api/bi/v1/manifest", acme())).status).toBe(200);
  });

  test("the curl the docs and the preview's toolbar show works, and the same call without the header does not", async () => {
    // Exactly the toolbar's hint (header after the address), run by curl (asynchronously: the service is in this process).
    const status = async (args: string[]) => (await run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", ...args])).stdout;
    const url = `${svc.url}/__control/fault?path=%2Fapi%2Fx&count=0`;
    expect(await status(["-X", "POST", url, "-H", "X-PPM-Control: 1"])).toBe("200");
    expect(await status(["-X", "POST", url])).toBe("403");
  });
});

const run = promisify(execFile);

function list(v: string | null): string[] {
  return (v ?? "").split(",").map((x) => x.trim().toLowerCase()).filter((x) => x !== "");
}
