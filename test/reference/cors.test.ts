/** CORS for a task pane on another origin: preflights, allowed request headers, exposed response headers. */
import type { ReferenceService } from "../../src/reference/server";
import { allowedOrigins, DEFAULT_ALLOWED_ORIGINS } from "../../src/reference/cors";
import { acme, start } from "./helpers";

const ORIGIN = "https://localhost:3000";
const ADDIN_HEADERS = [
  "Company-Api-Token",
  "Authorization",
  "If-None-Match",
  "If-Modified-Since",
  "record-token",
  "api-auth",
  "api-token",
  "api-secret",
  "Content-Type",
];
const MUST_EXPOSE = ["ETag", "Last-Modified", "X-Service-Dataset-Key", "X-Service-Schema-Version", "X-Service-Generated-At"];

function list(v: string | null): string[] {
  return (v ?? "").split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
}

describe("with exposed headers (default)", () => {
  let svc: ReferenceService;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(async () => {
    await svc.close();
  });

  test.each(["/api/bi/v1/financials", "/api/snapshot/projects", "/api/v1/project", "/no/such/route"])(
    "preflight on %s → 204 allowing the add-in's methods and headers",
    async (path) => {
      const res = await fetch(svc.url + path, {
        method: "OPTIONS",
        headers: {
          Origin: ORIGIN,
          "Access-Control-Request-Method": "PUT",
          "Access-Control-Request-Headers": ADDIN_HEADERS.join(",").toLowerCase(),
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(list(res.headers.get("access-control-allow-methods"))).toEqual(expect.arrayContaining(["get", "post", "put", "options"]));
      expect(list(res.headers.get("access-control-allow-headers"))).toEqual(expect.arrayContaining(ADDIN_HEADERS.map((h) => h.toLowerCase())));
      expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
      expect(await res.text()).toBe("");
    },
  );

  test("a dataset response echoes the origin, varies on it and exposes the validators", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/financials", { headers: acme({ Origin: ORIGIN }) });
    await res.arrayBuffer();
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(list(res.headers.get("vary"))).toContain("origin");
    const exposed = list(res.headers.get("access-control-expose-headers"));
    expect(exposed).toEqual(expect.arrayContaining([...MUST_EXPOSE, "OData-Version", "Retry-After"].map((h) => h.toLowerCase())));
  });

  test("error responses carry CORS headers too (so the client can read the error)", async () => {
    for (const path of ["/api/bi/v1/financials", "/nope"]) {
      const res = await fetch(svc.url + path, { headers: { Origin: ORIGIN } });
      await res.arrayBuffer();
      expect([401, 404]).toContain(res.status);
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    }
  });

  test("a Private Network Access preflight is allowed from the add-in's origin, and refused from any other", async () => {
    const ask = (origin: string) =>
      fetch(svc.url + "/api/bi/v1/financials", {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Private-Network": "true" },
      });
    const ours = await ask(ORIGIN);
    expect(ours.status).toBe(204);
    expect(ours.headers.get("access-control-allow-private-network")).toBe("true");
    const theirs = await ask("https://evil.example.com");
    expect(theirs.status).toBe(403);
    expect(theirs.headers.get("access-control-allow-private-network")).toBeNull();
    expect(theirs.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("dataset responses vary on the credential headers too", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/financials", { headers: acme({ Origin: ORIGIN }) });
    await res.arrayBuffer();
    expect(list(res.headers.get("vary"))).toEqual(expect.arrayContaining(["origin", "company-api-token", "authorization"]));
  });

  test("without Origin (not a browser) the response carries no CORS header, and no wildcard", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/manifest", { headers: acme() });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  // Finding 6 (issue #36): the service reflected any Origin.
  test.each(["https://evil.example.com", "http://localhost:3001", "https://localhost", "null", "http://127.0.0.1:3000"])(
    "a page on %s gets no CORS header on any answer, and its preflights are refused",
    async (origin) => {
      for (const path of ["/api/bi/v1/financials", "/api/bi/v1/manifest", "/nope"]) {
        const res = await fetch(svc.url + path, { headers: acme({ Origin: origin }) });
        await res.arrayBuffer();
        expect(res.headers.get("access-control-allow-origin")).toBeNull();
        expect(res.headers.get("access-control-expose-headers")).toBeNull();
        expect(list(res.headers.get("vary"))).toContain("origin");
        const pre = await fetch(svc.url + path, { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "company-api-token" } });
        expect(pre.status).toBe(403);
        expect(pre.headers.get("access-control-allow-origin")).toBeNull();
        expect(pre.headers.get("access-control-allow-headers")).toBeNull();
      }
    },
  );

  test("304 responses carry CORS headers", async () => {
    const first = await fetch(svc.url + "/api/bi/v1/financials", { headers: acme({ Origin: ORIGIN }) });
    await first.arrayBuffer();
    const res = await fetch(svc.url + "/api/bi/v1/financials", {
      headers: acme({ Origin: ORIGIN, "If-None-Match": first.headers.get("etag")! }),
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(list(res.headers.get("access-control-expose-headers"))).toContain("etag");
  });
});

describe("exposeHeaders: false", () => {
  let svc: ReferenceService;
  beforeAll(async () => {
    svc = await start({ exposeHeaders: false });
  });
  afterAll(async () => {
    await svc.close();
  });

  test("headers are sent but not exposed to a cross-origin script", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/financials", { headers: acme({ Origin: ORIGIN }) });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).not.toBeNull();
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
  });

  test("preflights still succeed", async () => {
    const res = await fetch(svc.url + "/api/bi/v1/financials", {
      method: "OPTIONS",
      headers: { Origin: ORIGIN, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "company-api-token" },
    });
    expect(res.status).toBe(204);
  });
});

describe("allowed origins", () => {
  test("are the dev server's by default, and exactly those given otherwise", async () => {
    expect(DEFAULT_ALLOWED_ORIGINS).toEqual(["https://localhost:3000", "http://localhost:3000"]);
    const svc = await start({ allowedOrigins: ["http://localhost:41234"] });
    try {
      const pre = (origin: string) => fetch(svc.url + "/api/bi/v1/manifest", { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": "GET" } }).then((r) => r.status);
      expect(await pre("http://localhost:41234")).toBe(204);
      expect(await pre("https://localhost:3000")).toBe(403);
    } finally {
      await svc.close();
    }
  });

  test("anything that is not an http(s) origin is refused at start", async () => {
    for (const bad of ["*", "null", "localhost:3000", "https://localhost:3000/taskpane.html", "ftp://localhost", "https://user:pw@localhost:3000"]) {
      await expect(start({ allowedOrigins: [bad] })).rejects.toThrow(/origin/);
    }
    expect([...allowedOrigins(["https://LocalHost:3000/", "http://localhost:80"])]).toEqual(["https://localhost:3000", "http://localhost"]);
  });
});
