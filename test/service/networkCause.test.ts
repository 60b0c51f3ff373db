/**
 * Issue #25 item 1: a network failure is said as exactly as the platform tells. In Node (the CLI)
 * the system error names the cause; over real sockets on 127.0.0.1: refused, closed without an
 * answer, not TLS; a name that does not resolve; a certificate error (the code undici reports).
 * None of them speaks of a browser.
 */
import * as http from "node:http";
import * as net from "node:net";
import { PpmClient } from "../../src/service/client";
import type { PpmError } from "../../src/service/errors";
import { addressSpace, localNetworkAccessApplies, networkCause } from "../../src/service/localNetwork";

const TOKEN = "demo-acme-token";

async function failure(baseUrl: string, fetchImpl?: typeof fetch): Promise<PpmError> {
  const client = new PpmClient({ id: "c", name: "Acme", baseUrl, token: TOKEN }, { retries: 0, timeoutMs: 10_000, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  try {
    await client.manifest();
  } catch (e) {
    return e as PpmError;
  }
  throw new Error("expected a failure");
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const noBrowserTalk = (e: PpmError) => expect(`${e.message} ${e.action}`).not.toMatch(/browser|Local Network|Chrome|Edge/i);

describe("network failures in Node say what happened", () => {
  it("refused: nothing listens on the port", async () => {
    const port = await closedPort();
    const e = await failure(`http://127.0.0.1:${port}`);
    expect(e.code).toBe("network");
    expect(e.message).toBe(`Could not reach 127.0.0.1:${port}: the connection was refused (nothing is listening there).`);
    expect(e.action).toMatch(/service is running/);
    expect(e.details).toMatchObject({ cause: "refused" });
    noBrowserTalk(e);
  });

  it("closed: the service cut the connection without answering", async () => {
    const srv = http.createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const e = await failure(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`);
      expect(e.details).toMatchObject({ cause: "closed" });
      expect(e.message).toMatch(/closed the connection before answering/);
      noBrowserTalk(e);
    } finally {
      srv.close();
    }
  });

  it("not TLS: https to a plain http service", async () => {
    const srv = http.createServer((_req, res) => res.end("x"));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const e = await failure(`https://127.0.0.1:${(srv.address() as net.AddressInfo).port}`);
      expect(e.details).toMatchObject({ cause: "not_tls" });
      expect(e.message).toMatch(/did not answer over https/);
      noBrowserTalk(e);
    } finally {
      srv.close();
    }
  });

  it("name not found, and a certificate refused (as undici reports them)", async () => {
    const e = await failure("https://nosuch-ppm-host.invalid");
    expect(e.details).toMatchObject({ cause: "name_not_found" });
    expect(e.message).toBe("Could not reach nosuch-ppm-host.invalid: the name nosuch-ppm-host.invalid was not found.");
    noBrowserTalk(e);
    const certFetch = (async () => {
      throw Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }) });
    }) as unknown as typeof fetch;
    const c = await failure("https://ppm.example.com", certFetch);
    expect(c.details).toMatchObject({ cause: "certificate", detail: "fetch failed: self-signed certificate" });
    expect(c.message).toBe("Could not reach ppm.example.com: its TLS certificate was not accepted.");
    expect(c.action).toMatch(/NODE_EXTRA_CA_CERTS/);
    noBrowserTalk(c);
  });

  it("classifies nested and aggregated system errors (Happy Eyeballs tries both address families)", () => {
    const agg = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" }), Object.assign(new Error("b"), { code: "ECONNREFUSED" })]), { code: undefined }) });
    expect(networkCause(agg)).toBe("refused");
    expect(networkCause(Object.assign(new TypeError("fetch failed"), { cause: { code: "UND_ERR_CONNECT_TIMEOUT" } }))).toBe("timed_out");
    expect(networkCause(new TypeError("Failed to fetch"))).toBe("unknown");
  });
});

describe("Local Network Access applies only from a less private page", () => {
  it("address spaces", () => {
    expect(["localhost", "127.0.0.1", "[::1]", "app.localhost"].map(addressSpace)).toEqual(["local", "local", "local", "local"]);
    expect(["10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.1.1", "printer.local", "[fd00::1]"].map(addressSpace)).toEqual(Array(6).fill("private"));
    expect(["example.com", "8.8.8.8", "172.32.0.1"].map(addressSpace)).toEqual(["public", "public", "public"]);
  });
  it("public → private or local, private → local; never from localhost, never in Node", () => {
    expect(localNetworkAccessApplies("https://addins.example.com", "http://localhost:4100/api")).toBe(true);
    expect(localNetworkAccessApplies("https://addins.example.com", "https://10.0.0.5/api")).toBe(true);
    expect(localNetworkAccessApplies("https://10.0.0.9", "http://localhost:4100/api")).toBe(true);
    expect(localNetworkAccessApplies("http://localhost:3000", "http://localhost:4100/api")).toBe(false);
    expect(localNetworkAccessApplies("https://10.0.0.9", "https://10.0.0.5/api")).toBe(false);
    expect(localNetworkAccessApplies("https://addins.example.com", "https://ppm.example.com/api")).toBe(false);
    expect(localNetworkAccessApplies(undefined, "http://localhost:4100/api")).toBe(false);
  });
});
