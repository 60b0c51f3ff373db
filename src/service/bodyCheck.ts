/**
 * Checks that a 200 answer to a dataset request really is that dataset's export before a single row
 * is read. A sign-in page, a proxy's interstitial or an error body sent with status 200 would
 * otherwise be read as a table: an HTML page parses as a one-column CSV.
 *
 * Three signals are used, each only where the service gives it:
 * - `X-Service-Dataset-Key` (spec: sent on dataset responses) must name the requested dataset;
 * - `Content-Type` (not fixed by the spec) must not name another kind of document: HTML, XML, JSON
 *   for the CSV form, CSV for the JSON forms. Generic types (`text/plain`,
 *   `application/octet-stream`) and a missing header pass, because the body check still follows;
 * - the first bytes of the body must not be markup (any form) or JSON (CSV form).
 * The CSV header and the JSON columns are compared with the manifest's columns afterwards (see
 * `CsvTableBuilder` and the client).
 */

/** What kind of document a content type or the first bytes of a body say arrived. */
export type ArrivedKind = "html" | "xml" | "json" | "csv";

/** The form that was requested. */
export type ExpectedForm = "json" | "csv" | "odata";

/** How much of the body is looked at before reading it: enough for an HTML head or a JSON error body. */
export const PEEK_BYTES = 4096;

/** The kind a `Content-Type` header names, or null when it names none of them (or is absent). */
export function contentKind(contentType: string | null): ArrivedKind | null {
  if (!contentType) return null;
  const t = contentType.split(";")[0].trim().toLowerCase();
  if (t === "text/html" || t === "application/xhtml+xml") return "html";
  if (t === "application/json" || t === "text/json" || t.endsWith("+json")) return "json";
  if (t === "text/csv" || t === "application/csv" || t === "text/comma-separated-values") return "csv";
  if (t === "text/xml" || t === "application/xml" || t.endsWith("+xml")) return "xml";
  return null;
}

/** The kind the first characters of a body show, or null when they show nothing conclusive. */
export function sniffKind(head: string, form: ExpectedForm): ArrivedKind | null {
  const t = head.replace(/^\uFEFF/, "").trimStart();
  const lower = t.slice(0, 512).toLowerCase();
  if (/^<!doctype html|^<html[\s>]|^<head[\s>]|^<body[\s>]/.test(lower)) return "html";
  if (/^<(?:!--|!doctype|\?xml|[a-z][\w:.-]*[\s/>])/.test(lower)) return /<html[\s>]|<body[\s>]/.test(lower) ? "html" : "xml";
  // A JSON object or array start, not just a bracket: a CSV column could be named `[x]`.
  if (form === "csv" && /^(?:\{\s*["}]|\[\s*[[{"\]\d-])/.test(t)) return "json";
  return null;
}

/** Whether `kind` cannot be the requested form. */
export function isWrongKind(kind: ArrivedKind, form: ExpectedForm): boolean {
  return form === "csv" ? kind !== "csv" : kind !== "json";
}

const FORM_LABEL: Record<ExpectedForm, string> = { csv: "CSV export", json: "JSON export", odata: "OData collection" };
const KIND_LABEL: Record<ArrivedKind, string> = { html: "an HTML page", xml: "an XML document", json: "a JSON body", csv: "CSV text" };

/**
 * The sentence for a wrong kind of answer. `errorCode` is the `error` field of a JSON body, when
 * one could be read (shown clipped; it is the service's text).
 */
export function wrongKindMessage(kind: ArrivedKind, form: ExpectedForm, key: string, how: { contentType?: string | null; errorCode?: string }): string {
  const seen = how.contentType ? ` (Content-Type ${clip(how.contentType.split(";")[0].trim(), 60)})` : "";
  const label = `the ${FORM_LABEL[form]} of "${key}"`;
  if (kind === "html") return `The service answered with an HTML page${seen}, not ${label}: a sign-in page or a proxy in between?`;
  if (kind === "json" && how.errorCode) return `The service answered with a JSON error body ("${clip(how.errorCode, 60)}") and status 200${seen}, not ${label}.`;
  return `The service answered with ${KIND_LABEL[kind]}${seen}, not ${label}.`;
}

/** The action for a wrong kind of answer. */
export function wrongKindAction(kind: ArrivedKind): string {
  return kind === "html" || kind === "xml"
    ? "Open the environment address in a browser: if a sign-in or proxy page appears, complete it or ask the network administrator to let the add-in through, then retry. Nothing was written."
    : "Retry; if it persists, report it to the service vendor. Nothing was written.";
}

/** The `error` field of a small JSON body (a 200 that is really an error), if it has one. */
export function jsonErrorCode(head: string): string | undefined {
  try {
    const body: unknown = JSON.parse(head.replace(/^\uFEFF/, ""));
    if (body && typeof body === "object" && !Array.isArray(body)) {
      const e = (body as Record<string, unknown>).error;
      if (typeof e === "string") return e;
      if (e && typeof e === "object" && typeof (e as Record<string, unknown>).code === "string") return (e as Record<string, string>).code;
    }
  } catch {
    /* Not a whole JSON document within the peeked bytes: no code to show. */
  }
  return undefined;
}

/** At most `n` characters of service text, marked when cut: messages never echo more than needed. */
export function clip(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}…`;
}

/**
 * Reads the first `bytes` bytes of a stream (fewer if it ends) and returns them decoded, plus a stream
 * that yields the whole body again, peeked chunks first. Chunking does not matter: 1-byte chunks are
 * gathered until `bytes` are there.
 */
export async function peekStream(stream: ReadableStream<Uint8Array>, bytes = PEEK_BYTES): Promise<{ head: string; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const r = await reader.read();
    if (r.done) {
      done = true;
      break;
    }
    chunks.push(r.value);
    size += r.value.byteLength;
  }
  const joined = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    joined.set(c, at);
    at += c.byteLength;
  }
  // `fatal: false`: a cut multi-byte character at the end of the peek is not an error here.
  const head = new TextDecoder().decode(joined.subarray(0, Math.min(size, bytes)));
  let replayed = false;
  const again = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!replayed) {
        replayed = true;
        if (size > 0) controller.enqueue(joined);
        if (done) controller.close();
        return;
      }
      try {
        const r = await reader.read();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      } catch (e) {
        controller.error(e);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { head, stream: again };
}
