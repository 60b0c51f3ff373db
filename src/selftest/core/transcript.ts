/**
 * A transcript: every RichApi request the add-in's Excel code sent during a self-test run, and what the
 * host answered, per scenario, in order. Recorded at the bridge every platform shares
 * (`OSF.DDA.RichApi.executeRichApiRequestAsync`), so a transcript from real Excel and one from the
 * emulated host are the same kind of file and can be replayed against the emulated host alike
 * (`npm run host:replay FILE`).
 *
 * Pure data and validation: no Office, no DOM.
 */

export const TRANSCRIPT_FORMAT = "ppm-richapi-transcript";
export const TRANSCRIPT_VERSION = 1;

/**
 * The most a transcript may hold, as text (issue #36): what the kit's server takes from the page and
 * what `host:replay` reads or decompresses. The kit's own full run measures 1,798,154 bytes (the
 * emulated web host, test/transcripts/emulated-web.json.gz, which gzips to 174 KB); real Excel's
 * answers carry the same values with longer messages and more ids, so 16 MiB leaves nine times that.
 */
export const MAX_TRANSCRIPT_BYTES = 16 * 1024 * 1024;

/** What the host answered one request: a response body (parsed JSON), or the bridge's refusal. */
export type RecordedAnswer =
  | { readonly kind: "response"; readonly body: unknown }
  /** 5103 request / 5104 response over the payload limit; 5001 an internal error. */
  | { readonly kind: "refused"; readonly code: number; readonly message?: string };

export interface RecordedExchange {
  /** The request body as the library sent it (parsed JSON) and its flags (64: delayForCellEdit). */
  readonly request: { readonly body: unknown; readonly flags: number };
  readonly answer: RecordedAnswer;
}

export interface TranscriptScenario {
  readonly name: string;
  readonly exchanges: RecordedExchange[];
}

export interface TranscriptHost {
  /** `Office.context.diagnostics.platform` (`OfficeOnline`, `PC`, `Mac`) and `.version`. */
  readonly platform: string;
  readonly version: string;
  /** True when the host was the emulated one (the browser preview). */
  readonly emulated: boolean;
  /** The emulated host's platform profile (src/emulator/profiles.ts), when emulated. */
  readonly profile?: string;
}

export interface Transcript {
  readonly format: typeof TRANSCRIPT_FORMAT;
  readonly version: typeof TRANSCRIPT_VERSION;
  readonly recordedAt: string;
  readonly host: TranscriptHost;
  /** The workbook the run started from: its sheet names, in order (a new workbook: one empty sheet). */
  readonly workbook: { readonly sheets: string[]; readonly date1904?: boolean };
  /** True once `scrubTranscript` replaced cell values and sheet names with placeholders. */
  readonly scrubbed: boolean;
  readonly scenarios: TranscriptScenario[];
}

export class TranscriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TranscriptError";
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads a transcript from its JSON text, checking its shape (a transcript is a file someone sent:
 * untrusted input). Throws `TranscriptError` naming what is wrong and where.
 */
export function parseTranscript(text: string): Transcript {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The parser's message would quote the file: name the problem only.
    throw new TranscriptError("Not a transcript: the file is not JSON.");
  }
  if (!isObject(raw) || raw.format !== TRANSCRIPT_FORMAT) throw new TranscriptError(`Not a transcript: "format" is not "${TRANSCRIPT_FORMAT}".`);
  if (raw.version !== TRANSCRIPT_VERSION) throw new TranscriptError(`Transcript version ${JSON.stringify(raw.version)} is not supported (this kit reads version ${TRANSCRIPT_VERSION}).`);
  const host = raw.host;
  if (!isObject(host) || typeof host.platform !== "string" || typeof host.version !== "string" || typeof host.emulated !== "boolean") {
    throw new TranscriptError('Transcript "host" must have platform, version (text) and emulated (true/false).');
  }
  const wb = raw.workbook;
  if (!isObject(wb) || !Array.isArray(wb.sheets) || !wb.sheets.every((s) => typeof s === "string")) throw new TranscriptError('Transcript "workbook.sheets" must be a list of sheet names.');
  if (!Array.isArray(raw.scenarios)) throw new TranscriptError('Transcript "scenarios" must be a list.');
  raw.scenarios.forEach((s: unknown, i) => {
    if (!isObject(s) || typeof s.name !== "string" || !Array.isArray(s.exchanges)) throw new TranscriptError(`Scenario ${i + 1}: needs a name and a list of exchanges.`);
    s.exchanges.forEach((x: unknown, j) => {
      const where = `Scenario "${String(s.name)}", exchange ${j + 1}`;
      if (!isObject(x) || !isObject(x.request) || !isObject(x.answer)) throw new TranscriptError(`${where}: needs a request and an answer.`);
      if (typeof x.request.flags !== "number" || !isObject(x.request.body)) throw new TranscriptError(`${where}: the request needs a body (object) and flags (number).`);
      const a = x.answer;
      if (a.kind === "refused") {
        if (typeof a.code !== "number") throw new TranscriptError(`${where}: a refusal needs a numeric code.`);
      } else if (a.kind !== "response" || !("body" in a)) throw new TranscriptError(`${where}: the answer must be a response (with a body) or a refusal.`);
    });
  });
  if (typeof raw.recordedAt !== "string") throw new TranscriptError('Transcript "recordedAt" must be a date-time text.');
  return raw as unknown as Transcript;
}

/**
 * The transcript as JSON text: one line per exchange, so that a `git diff` of two transcripts shows
 * which requests changed and the file stays readable.
 */
export function serializeTranscript(t: Transcript): string {
  const head = { format: t.format, version: t.version, recordedAt: t.recordedAt, host: t.host, workbook: t.workbook, scrubbed: t.scrubbed };
  const headText = JSON.stringify(head, null, 1).replace(/\n\}$/, "");
  const scenarios = t.scenarios.map((s) => {
    const lines = s.exchanges.map((x) => `   ${JSON.stringify(x)}`);
    return ` {"name": ${JSON.stringify(s.name)}, "exchanges": [\n${lines.join(",\n")}\n ]}`;
  });
  return `${headText},\n "scenarios": [\n${scenarios.join(",\n")}\n ]\n}\n`;
}

/** Number of exchanges in a transcript. */
export function exchangeCount(t: Transcript): number {
  return t.scenarios.reduce((n, s) => n + s.exchanges.length, 0);
}
