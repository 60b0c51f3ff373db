/**
 * Conditional GET per RFC 9110 §13: `If-None-Match` (weak comparison, lists, `*`) is evaluated
 * first; only when it is absent does `If-Modified-Since` count. A match means 304.
 */
import type { IncomingMessage } from "node:http";

/** Opaque tags of an `If-None-Match` value; `"*"` yields `["*"]`. */
export function parseEntityTags(value: string): string[] {
  if (value.trim() === "*") return ["*"];
  const tags: string[] = [];
  const re = /(?:W\/)?"([^"]*)"/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value)) !== null) tags.push(m[1]);
  return tags;
}

/** Weak comparison: the opaque parts are equal, whatever the `W/` prefixes. */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  const opaque = parseEntityTags(etag)[0];
  return parseEntityTags(ifNoneMatch).some((t) => t === "*" || t === opaque);
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/**
 * Decides a GET on a representation with this ETag and last-modified time (ms since epoch).
 * An unparseable `If-Modified-Since` is ignored, as RFC 9110 requires.
 */
export function evaluateConditional(req: IncomingMessage, etag: string, lastModifiedMs: number): "not_modified" | "send" {
  const inm = headerValue(req, "if-none-match");
  if (inm !== undefined) return etagMatches(inm, etag) ? "not_modified" : "send";
  const ims = headerValue(req, "if-modified-since");
  if (ims !== undefined) {
    const since = Date.parse(ims);
    if (Number.isNaN(since)) return "send";
    // HTTP dates have whole seconds; compare at that resolution.
    return Math.floor(lastModifiedMs / 1000) <= Math.floor(since / 1000) ? "not_modified" : "send";
  }
  return "send";
}
