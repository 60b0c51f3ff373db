/**
 * `checkCors`: the reporting preflight (with Authorization in basic mode) and the record preflight
 * (`OPTIONS /api/v1/project` for a PUT with the record headers), against the reference service and
 * against a tiny local server whose preflight leaves headers out.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { PpmClient } from "../../src/service";
import { ACME_API_AUTH, ACME_API_SECRET, ACME_TOKEN, acme } from "./helpers";

const ORIGIN = "https://localhost:3000";

interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** A server answering every OPTIONS with a 204 that allows `allowHeaders` only, and 404 otherwise. */
async function startPickyServer(allowHeaders: string[], allowMethods = "GET, POST, PUT, OPTIONS"): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? "", path: (req.url ?? "").split("?")[0], headers: req.headers });
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Origin": req.headers.origin ?? "*",
        "Access-Control-Allow-Methods": allowMethods,
        "Access-Control-Allow-Headers": allowHeaders.join(", "),
        "Content-Length": "0",
      });
      res.end();
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("not here");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const ALL_ADDIN_HEADERS = ["Company-Api-Token", "Authorization", "If-None-Match", "If-Modified-Since", "record-token", "api-auth", "api-token", "Content-Type"];

let svc: ReferenceService;
beforeAll(async () => {
  svc = await startReferenceService({ port: 0 });
});
afterAll(async () => {
  await svc?.close();
});

describe("checkCors against the reference service", () => {
  it("passes the record preflight when the connection has record credentials", async () => {
    const r = await new PpmClient(acme(svc.url), { retries: 0 }).checkCors(ORIGIN);
    expect(r.ok).toBe(true);
    expect(r.preflightOk).toBe(true);
    expect(r.recordPreflightOk).toBe(true);
    expect(r.recordMissingRequestHeaders).toEqual([]);
    expect(r.recordMissingMethods).toEqual([]);
  });

  it("passes in basic mode (the reference service allows Authorization)", async () => {
    const r = await new PpmClient(acme(svc.url, { authMode: "basic" }), { retries: 0 }).checkCors(ORIGIN);
    expect(r.preflightOk).toBe(true);
    expect(r.missingRequestHeaders).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it("skips the record preflight without record credentials", async () => {
    const r = await new PpmClient(acme(svc.url, { apiAuth: undefined, apiSecret: undefined }), { retries: 0 }).checkCors(ORIGIN);
    expect(r.ok).toBe(true);
    expect(r.recordPreflightOk).toBeUndefined();
    expect(r.recordMissingRequestHeaders).toBeUndefined();
  });
});

describe("checkCors against a preflight that leaves headers out", () => {
  it("reports api-secret missing from the record preflight, without failing reporting", async () => {
    const picky = await startPickyServer(ALL_ADDIN_HEADERS);
    try {
      const r = await new PpmClient(acme(picky.url), { retries: 0 }).checkCors(ORIGIN);
      expect(r.preflightOk).toBe(true);
      expect(r.ok).toBe(true);
      expect(r.recordPreflightOk).toBe(false);
      expect(r.recordMissingRequestHeaders).toEqual(["api-secret"]);
      expect(r.recordMissingMethods).toEqual([]);

      const rec = picky.seen.find((q) => q.method === "OPTIONS" && q.path === "/api/v1/project");
      expect(rec).toBeDefined();
      expect(rec!.headers.origin).toBe(ORIGIN);
      expect(rec!.headers["access-control-request-method"]).toBe("PUT");
      expect(String(rec!.headers["access-control-request-headers"]).split(",").sort()).toEqual(["api-auth", "api-secret", "api-token", "content-type", "record-token"]);
      // A preflight carries no credentials.
      const sent = JSON.stringify(picky.seen.filter((q) => q.method === "OPTIONS").map((q) => q.headers));
      for (const secret of [ACME_TOKEN, ACME_API_AUTH, ACME_API_SECRET]) expect(sent).not.toContain(secret);
    } finally {
      await picky.close();
    }
  });

  it("reports PUT missing from the allowed methods", async () => {
    const picky = await startPickyServer([...ALL_ADDIN_HEADERS, "api-secret"], "GET, POST, OPTIONS");
    try {
      const r = await new PpmClient(acme(picky.url), { retries: 0 }).checkCors(ORIGIN);
      expect(r.recordPreflightOk).toBe(false);
      expect(r.recordMissingRequestHeaders).toEqual([]);
      expect(r.recordMissingMethods).toEqual(["PUT"]);
    } finally {
      await picky.close();
    }
  });

  it("needs Authorization on the reporting preflight in basic mode only", async () => {
    const picky = await startPickyServer(ALL_ADDIN_HEADERS.filter((h) => h !== "Authorization").concat("api-secret"));
    try {
      const header = await new PpmClient(acme(picky.url), { retries: 0 }).checkCors(ORIGIN);
      expect(header.preflightOk).toBe(true);
      expect(header.missingRequestHeaders).toEqual([]);

      picky.seen.length = 0;
      const basic = await new PpmClient(acme(picky.url, { authMode: "basic" }), { retries: 0 }).checkCors(ORIGIN);
      expect(basic.preflightOk).toBe(false);
      expect(basic.ok).toBe(false);
      expect(basic.missingRequestHeaders).toEqual(["Authorization"]);
      // Records do not use Authorization: their preflight still passes.
      expect(basic.recordPreflightOk).toBe(true);
      const pre = picky.seen.find((q) => q.method === "OPTIONS" && q.path === "/api/bi/v1/manifest");
      expect(String(pre?.headers["access-control-request-headers"]).split(",")).toContain("authorization");
    } finally {
      await picky.close();
    }
  });
});
