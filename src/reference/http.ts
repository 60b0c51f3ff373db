/**
 * Small HTTP helpers for the reference service: sending JSON and text, reading request bodies,
 * parsing raw query strings, and streaming large bodies with backpressure.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Sends a JSON body with an exact Content-Length (`headers` may set another JSON Content-Type). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    ...headers,
    "Content-Length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** Sends a text body (plain text unless told otherwise). */
export function sendText(res: ServerResponse, status: number, text: string, contentType = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": String(Buffer.byteLength(text)) });
  res.end(text);
}

/**
 * The "route absent" answer: plain text, so a client can tell it from the JSON `unknown_dataset`
 * 404 of a reporting endpoint that exists.
 */
export function sendNotFound(res: ServerResponse): void {
  sendText(res, 404, "Not Found");
}

/** 405 with the `Allow` header naming the methods the path takes. */
export function sendMethodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader("Allow", allow);
  sendText(res, 405, "Method Not Allowed");
}

/** One query parameter exactly as sent: name and value percent-decoded (`+` = space). */
export interface QueryParam {
  name: string;
  value: string;
}

function decodeComponent(s: string): string {
  const spaced = s.replace(/\+/g, " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Malformed escapes are kept literally rather than failing the whole request.
    return spaced;
  }
}

/** Parses a raw query string (without `?`) keeping order and duplicates. */
export function parseQuery(raw: string): QueryParam[] {
  if (raw === "") return [];
  return raw
    .split("&")
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.indexOf("=");
      const name = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? "" : part.slice(eq + 1);
      return { name: decodeComponent(name), value: decodeComponent(value) };
    });
}

/** Splits a request target into path and raw query string (without `?`), undecoded. */
export function splitUrl(url: string | undefined): { path: string; query: string } {
  const u = url ?? "/";
  const q = u.indexOf("?");
  return q < 0 ? { path: u, query: "" } : { path: u.slice(0, q), query: u.slice(q + 1) };
}

/** A request body over the size limit. */
export class BodyTooLargeError extends Error {}

/** Reads a request body as UTF-8 text, refusing more than `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) throw new BodyTooLargeError(`body exceeds ${limit} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Waits `ms`, or less if the response is closed first (client gone, server closing), so an
 * injected delay never keeps a timer alive after nobody is listening.
 */
export function waitUnlessClosed(res: ServerResponse, ms: number): Promise<void> {
  if (res.destroyed || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on("close", done);
  });
}

/**
 * Writes the pieces of a body in ~64 KiB chunks, waiting for `drain` whenever the socket is
 * saturated, so a 200,000-row export never sits in memory as one string. Stops quietly when the
 * client goes away. `chunkDelayMs` slows the stream down for cancellation tests.
 */
export async function streamBody(res: ServerResponse, pieces: Iterable<string>, chunkDelayMs = 0): Promise<void> {
  // Slow mode sends small chunks with headers first, so a client sees a body trickle in.
  const CHUNK = chunkDelayMs > 0 ? 4 * 1024 : 64 * 1024;
  if (chunkDelayMs > 0) res.flushHeaders();
  let buf: string[] = [];
  let bufLen = 0;
  const flush = async (): Promise<boolean> => {
    if (bufLen === 0) return !res.destroyed;
    const data = buf.join("");
    buf = [];
    bufLen = 0;
    if (res.destroyed) return false;
    if (chunkDelayMs > 0) await waitUnlessClosed(res, chunkDelayMs);
    if (res.destroyed) return false;
    if (!res.write(data)) {
      await drainOrClose(res);
    }
    return !res.destroyed;
  };
  for (const piece of pieces) {
    buf.push(piece);
    bufLen += piece.length;
    if (bufLen >= CHUNK && !(await flush())) return;
  }
  if (!(await flush())) return;
  res.end();
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
