/**
 * A hostile or broken service for tests: a real HTTP server on 127.0.0.1 (port 0) that stands
 * between the client and the reference service, as a misconfigured proxy, an SSO interstitial or a
 * broken deployment would. Each path can get its own behaviour; everything else is passed through
 * to the reference service unchanged.
 */
import * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the reference service answered (for behaviours that alter a real answer). */
export interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What the hostile service sends instead. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the headers and `body`, then keep the connection open without ending (a stalled body). */
  stall?: boolean;
  /** Send the headers and `body`, then reset the connection. */
  reset?: boolean;
}

export interface RequestInfo {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The company token the request carried (header, Basic or record header), if any. */
  token: string | null;
  /** Fetches the same request from the reference service (`unconditional`: without validators). */
  upstream(opts?: { unconditional?: boolean }): Promise<Upstream>;
}

/** Returns the reply to send, or null to pass the request through. */
export type Behaviour = (req: RequestInfo) => Reply | null | Promise<Reply | null>;

export interface HostileService {
  url: string;
  /** Sets the behaviour for a path (`/api/bi/v1/financials.csv`), or a prefix ending in `*`. */
  on(path: string, behaviour: Behaviour): void;
  /** Removes every behaviour: a transparent proxy again. */
  clear(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "host"]);

function tokenOf(headers: http.IncomingHttpHeaders): string | null {
  const h = headers["company-api-token"] ?? headers["api-token"];
  if (typeof h === "string") return h;
  const auth = headers.authorization;
  if (typeof auth === "string" && /^basic /i.test(auth)) {
    const plain = Buffer.from(auth.slice(6), "base64").toString("utf8");
    const at = plain.indexOf(":");
    return at >= 0 ? plain.slice(at + 1) : null;
  }
  return null;
}

export interface HostileOptions {
  /**
   * Credentials to send upstream instead of the client's (for a test token the reference service
   * does not know): the client's token headers are replaced by these.
   */
  upstreamCredentials?: Record<string, string>;
}

const CREDENTIAL_HEADERS = new Set(["company-api-token", "authorization", "api-token"]);

export async function startHostileService(upstreamUrl: string, options: HostileOptions = {}): Promise<HostileService> {
  const behaviours = new Map<string, Behaviour>();
  const sockets = new Set<Socket>();
  const find = (path: string): Behaviour | undefined => {
    const exact = behaviours.get(path);
    if (exact) return exact;
    for (const [k, b] of behaviours) if (k.endsWith("*") && path.startsWith(k.slice(0, -1))) return b;
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", "http://x");
        const requestBody = chunks.length ? Buffer.concat(chunks) : undefined;
        const upstream = async (opts: { unconditional?: boolean } = {}): Promise<Upstream> => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && !HOP_BY_HOP.has(k)) headers[k] = v;
          if (options.upstreamCredentials) {
            for (const k of Object.keys(headers)) if (CREDENTIAL_HEADERS.has(k)) delete headers[k];
            Object.assign(headers, options.upstreamCredentials);
          }
          if (opts.unconditional) {
            delete headers["if-none-match"];
            delete headers["if-modified-since"];
          }
          const r = await fetch(`${upstreamUrl}${url.pathname}${url.search}`, { method: req.method, headers, body: requestBody, redirect: "manual" });
          const out: Record<string, string> = {};
          r.headers.forEach((v, k) => {
            if (!HOP_BY_HOP.has(k)) out[k] = v;
          });
          return { status: r.status, headers: out, body: Buffer.from(await r.arrayBuffer()) };
        };
        const behaviour = find(url.pathname);
        const info: RequestInfo = { method: req.method ?? "GET", path: url.pathname, headers: req.headers, token: tokenOf(req.headers), upstream };
        const reply = (behaviour && (await behaviour(info))) ?? (await upstream());
        const body = reply.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(reply.body, "utf8");
        const headers: Record<string, string> = { ...(reply.headers ?? {}) };
        for (const k of Object.keys(headers)) if (HOP_BY_HOP.has(k.toLowerCase())) delete headers[k];
        const status = reply.status ?? 200;
        if ("stall" in reply && reply.stall) {
          res.writeHead(status, headers);
          res.write(body);
          return; // never ended; close() destroys the socket
        }
        if ("reset" in reply && reply.reset) {
          res.writeHead(status, headers);
          res.write(body, () => setTimeout(() => req.socket.destroy(), 20));
          return;
        }
        if (status !== 304 && status !== 204) headers["Content-Length"] = String(body.length);
        res.writeHead(status, headers);
        res.end(status === 304 || status === 204 ? undefined : body);
      })().catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(599, { "Content-Type": "text/plain" });
        res.end(`hostile service failed: ${e instanceof Error ? e.message : String(e)}`);
      });
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    on: (path, b) => void behaviours.set(path, b),
    clear: () => behaviours.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * CSV records of a body, split at line breaks outside quotes (RFC 4180), each without its CRLF.
 * For cutting an export at a row boundary.
 */
export function csvRecords(text: string): string[] {
  const out: string[] = [];
  let inQuotes = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') inQuotes = !inQuotes;
    else if (!inQuotes && ch === "\r" && text[i + 1] === "\n") {
      out.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** The forms a hostile service echoes a token in: plain, Base64 (padded and not), Base64url, percent-encoded, Basic (Base64 and Base64url). */
export function echoedForms(token: string): Record<string, string> {
  const b = Buffer.from(token, "utf8");
  return {
    plain: token,
    base64: b.toString("base64"),
    base64url: b.toString("base64url"),
    percent: [...b].map((x) => `%${x.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
    basic: Buffer.from(`company_api_token:${token}`, "utf8").toString("base64"),
    basicUrl: Buffer.from(`company_api_token:${token}`, "utf8").toString("base64url"),
    base64Unpadded: b.toString("base64").replace(/=+$/, ""),
  };
}

/** One string carrying every echoed form of the token (what a hostile service puts in its text). */
export function echoAll(token: string | null): string {
  if (!token) return "no-token";
  return Object.values(echoedForms(token)).join(" | ");
}
