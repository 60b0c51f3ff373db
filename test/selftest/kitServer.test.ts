/**
 * The kit's test server (issue #36, finding 2; src/selftest/cli/testServer.ts) over real https on
 * this machine: 127.0.0.1 only, this run's nonce on every post, CORS for the page's origin only, the
 * first report and transcript only, a size cap that a real transcript fits under; each refusal
 * leaves the run's results untouched.
 */
import * as fs from "fs";
import * as https from "https";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import * as zlib from "zlib";
import { MAX_REPORT_BYTES, NONCE_HEADER, startKitServer, type KitServer } from "../../src/selftest/cli/testServer";
import { MAX_TRANSCRIPT_BYTES } from "../../src/selftest/core/transcript";

const PAGE = "https://localhost:3000";
const NONCE = "0123456789abcdef0123456789abcdef";
const REPORT = { kit: "ppm-selftest", host: { platform: "OfficeOnline", version: "16", emulated: false }, scenarios: [] };

let server: KitServer;
beforeAll(async () => {
  server = await startKitServer(0, { throwawayCertificate: true, pageOrigin: PAGE, nonce: NONCE });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One https request to the server (its throwaway certificate is not checked), with an optional body. */
function request(method: string, route: string, opts: { headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[]; host?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: opts.host ?? "127.0.0.1", port: server.port, method, path: route, rejectUnauthorized: false, headers: { Host: `localhost:${server.port}`, ...opts.headers }, agent: false },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    let answered = false;
    req.on("response", () => (answered = true));
    // After a 413 the server closes the connection while the body may still be on its way: the
    // answer already came, the write error is expected.
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    if (opts.chunks) {
      const chunks = [...opts.chunks];
      const pump = (): void => {
        while (chunks.length > 0 && !answered && !req.destroyed) {
          if (!req.write(chunks.shift()!)) return void req.once("drain", pump);
        }
        if (!answered && !req.destroyed) req.end();
      };
      pump();
    } else req.end(opts.body);
  });
}

const post = (route: string, body: string, headers: Record<string, string> = {}) => request("POST", route, { body, headers: { "Content-Type": "application/json", ...headers } });
const withNonce = { [NONCE_HEADER]: NONCE, Origin: PAGE };

describe("finding 2: who may post to the kit's server", () => {
  it("listens on 127.0.0.1 only: the IPv6 loopback and this machine's other addresses are refused", async () => {
    expect((server as unknown as { port: number }).port).toBeGreaterThan(0);
    const others = [
      "::1",
      ...Object.values(os.networkInterfaces())
        .flat()
        .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal)
        .map((a) => a.address),
    ];
    for (const address of others) {
      const outcome = await new Promise<string>((resolve) => {
        const s = net.connect({ host: address, port: server.port });
        s.once("connect", () => {
          s.destroy();
          resolve("connected");
        });
        s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
      });
      expect([address, outcome]).not.toEqual([address, "connected"]);
    }
  });

  it("refuses a post without this run's nonce, or with another one (403); nothing is taken", async () => {
    const attempts: Array<Record<string, string>> = [{ Origin: PAGE }, { Origin: PAGE, [NONCE_HEADER]: "f".repeat(32) }, { Origin: PAGE, [NONCE_HEADER]: NONCE.slice(0, 31) }, {}];
    for (const headers of attempts) {
      expect((await post("/results", JSON.stringify(REPORT), headers)).status).toBe(403);
      expect((await post("/transcript", "{}", headers)).status).toBe(403);
    }
    expect(server.transcript()).toBeNull();
    expect(await Promise.race([server.results(), new Promise((r) => setTimeout(() => r("none"), 200))])).toBe("none");
  });

  it("refuses a post from a page on another origin even with the nonce, and its preflight; CORS only for the page's origin", async () => {
    const foreign = await post("/results", JSON.stringify(REPORT), { [NONCE_HEADER]: NONCE, Origin: "https://evil.example.com" });
    expect(foreign.status).toBe(403);
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();
    const pre = await request("OPTIONS", "/results", { headers: { Origin: "https://evil.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ppm-kit-nonce" } });
    expect(pre.status).toBe(403);
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    const ours = await request("OPTIONS", "/results", { headers: { Origin: PAGE, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-ppm-kit-nonce, content-type" } });
    expect(ours.status).toBe(204);
    expect(ours.headers["access-control-allow-origin"]).toBe(PAGE);
    expect(String(ours.headers["access-control-allow-headers"]).toLowerCase()).toContain("x-ppm-kit-nonce");
    expect(await Promise.race([server.results(), new Promise((r) => setTimeout(() => r("none"), 200))])).toBe("none");
  });

  it("refuses a request addressed to another host name (421)", async () => {
    expect((await request("POST", "/results", { body: JSON.stringify(REPORT), headers: { ...withNonce, Host: `rebind.attacker.test:${server.port}` } })).status).toBe(421);
  });

  it("refuses a body over the cap (413) as soon as it passes it, declared or streamed; a real transcript fits", async () => {
    const declared = await request("POST", "/transcript", { headers: { ...withNonce, "Content-Length": String(MAX_TRANSCRIPT_BYTES + 1) } }).catch((e: Error) => ({ status: -1, headers: {}, body: e.message }));
    expect(declared.status).toBe(413);
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const streamed = await request("POST", "/transcript", { headers: { ...withNonce, "Transfer-Encoding": "chunked" }, chunks: Array.from({ length: MAX_TRANSCRIPT_BYTES / chunk.length + 2 }, () => chunk) }).catch((e: Error) => ({ status: -1, headers: {}, body: e.message }));
    expect(streamed.status).toBe(413);
    const bigReport = await post("/results", JSON.stringify({ ...REPORT, pad: "x".repeat(MAX_REPORT_BYTES) }), withNonce);
    expect(bigReport.status).toBe(413);
    expect(server.transcript()).toBeNull();
    // The kit's own full transcript (the emulated web host's, 1.8 MB) is taken whole.
    const real = zlib.gunzipSync(fs.readFileSync(path.join(__dirname, "..", "transcripts", "emulated-web.json.gz"))).toString("utf8");
    expect(Buffer.byteLength(real)).toBeGreaterThan(1_000_000);
    expect(Buffer.byteLength(real)).toBeLessThan(MAX_TRANSCRIPT_BYTES / 8);
    expect((await post("/transcript", real, withNonce)).status).toBe(200);
    expect(server.transcript()).toBe(real);
  });

  it("takes the first report and the first transcript only (409 after)", async () => {
    // A run of its own: nothing posted to it yet.
    const run = await startKitServer(0, { throwawayCertificate: true, pageOrigin: PAGE, nonce: NONCE });
    try {
      const to = (route: string, body: string) =>
        new Promise<number>((resolve, reject) => {
          const req = https.request({ host: "127.0.0.1", port: run.port, method: "POST", path: route, rejectUnauthorized: false, agent: false, headers: { Host: `localhost:${run.port}`, "Content-Type": "application/json", ...withNonce } }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          });
          req.on("error", reject);
          req.end(body);
        });
      expect(await to("/transcript", '{"first":true}')).toBe(200);
      expect(await to("/transcript", '{"forged":true}')).toBe(409);
      expect(run.transcript()).toBe('{"first":true}');
      expect(await to("/results", JSON.stringify(REPORT))).toBe(200);
      const forged = { ...REPORT, scenarios: [{ name: "forged", status: "passed", ms: 1, syncs: 1, detail: "" }] };
      expect(await to("/results", JSON.stringify(forged))).toBe(409);
      expect(await run.results()).toEqual(REPORT);
    } finally {
      await run.close();
    }
  }, 60_000);

  it("answers the page's origin on what it takes", async () => {
    expect(server.transcript()).not.toBeNull(); // the real transcript above
    const ok = await post("/results", JSON.stringify(REPORT), withNonce);
    expect(ok.status).toBe(200);
    expect(ok.headers["access-control-allow-origin"]).toBe(PAGE);
  });
});

describe("the emulated route's own origin", () => {
  it("is the default page origin, and the nonce is 128 random bits per run", async () => {
    const a = await startKitServer(0, { throwawayCertificate: true });
    const b = await startKitServer(0, { throwawayCertificate: true });
    try {
      expect(a.origin).toBe(`https://localhost:${a.port}`);
      expect(a.nonce).toMatch(/^[0-9a-f]{32}$/);
      expect(a.nonce).not.toBe(b.nonce);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
