/** Test hooks: fault, delay (incl. slow streaming), absent groups, request log, reset, loopback-only. */
import type { Manifest } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { redactQuery } from "../../src/reference/control";
import type { RequestLogEntry } from "../../src/reference/state";
import { ACME_TOKEN, acme, control, get, json, start, type RequestLogReply } from "./helpers";

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
  const pre = await fetch(svc.url + "/api/bi/v1/financials", { method: "OPTIONS", headers: { Origin: "https://x", "Access-Control-Request-Method": "GET" } });
  expect(pre.status).toBe(204);
  const res = await get(svc.url, "/api/bi/odata/v1", acme());
  expect(res.status).toBe(503);
  await res.arrayBuffer();
});

test("fault rejects a bad status", async () => {
  const res = await fetch(svc.url + "/__control/fault?path=/x&status=200", { method: "POST" });
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
  const res = await fetch(svc.url + "/__control/absent?groups=snapshots", { method: "POST" });
  expect(res.status).toBe(400);
});

test("request log: method, path, redacted query, status; never credential values", async () => {
  await fetch(svc.url + "/__control/requests", { method: "DELETE" });
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
  const res = await fetch(svc.url + "/__control/nope", { method: "POST" });
  expect(res.status).toBe(404);
  expect(await res.text()).toBe("Not Found");
});
