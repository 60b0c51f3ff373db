/**
 * Records every request the Excel client library sends, and the host's answer, at the bridge every
 * platform shares: `OSF.DDA.RichApi.executeRichApiRequestAsync(message, callback)` (the library looks
 * it up at each request, so wrapping it sees every `context.sync()`). In real Excel the host behind
 * it is Excel; in the preview it is the emulated host. The recorder only watches: the message and the
 * answer pass through unchanged.
 *
 * `message[4]` is the request body, `message[6]` the flags; the answer is `{ status: "succeeded",
 * value: { data: [status, headers, body] } }` (body a text, or texts to join) or `{ status: "failed",
 * error: { code, message } }` (5103 / 5104: a payload over Excel on the web's limit).
 */
import type { RecordedAnswer, RecordedExchange, TranscriptScenario } from "./core/transcript";

type Callback = (result: unknown) => void;
type Execute = ((message: unknown[], callback: Callback) => void) & { ppm?: boolean };
interface RichApiGlobals {
  OSF?: { DDA?: { RichApi?: { executeRichApiRequestAsync?: Execute } } };
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

function answerOf(result: unknown): RecordedAnswer {
  const r = result as { status?: string; value?: { data?: unknown[] }; error?: { code?: unknown; message?: unknown } } | null;
  if (r?.status === "succeeded") {
    const raw = r.value?.data?.[2];
    const text = typeof raw === "string" ? raw : Array.isArray(raw) ? raw.join("") : "";
    return { kind: "response", body: parse(text) };
  }
  return { kind: "refused", code: Number(r?.error?.code ?? 0), message: typeof r?.error?.message === "string" ? r.error.message : "" };
}

export class BridgeRecorder {
  readonly scenarios: TranscriptScenario[] = [];
  private current: RecordedExchange[] | null = null;
  /** Requests seen since the last `begin` (recorded or not). */
  syncs = 0;
  private original: Execute | null = null;

  /**
   * Wraps the bridge of this realm. Throws when there is none (the page is not running in Office or
   * the preview). Returns the function that puts the original back.
   */
  install(realm: object = globalThis): () => void {
    const rich = (realm as RichApiGlobals).OSF?.DDA?.RichApi;
    const execute = rich?.executeRichApiRequestAsync;
    if (!rich || typeof execute !== "function") throw new Error("Office's request bridge (OSF.DDA.RichApi.executeRichApiRequestAsync) is not here: open the self-test in Excel or in the preview.");
    this.original = execute;
    const wrapped: Execute = (message, callback) => {
      this.syncs++;
      const sink = this.current;
      const request = { body: parse(String(message[4])), flags: typeof message[6] === "number" ? message[6] : 0 };
      execute(message, (result) => {
        sink?.push({ request, answer: answerOf(result) });
        callback(result);
      });
    };
    // The emulator's bridge marks itself so that it is installed once; the wrapper keeps the mark.
    if (execute.ppm) wrapped.ppm = true;
    rich.executeRichApiRequestAsync = wrapped;
    return () => {
      if (rich.executeRichApiRequestAsync === wrapped) rich.executeRichApiRequestAsync = execute;
    };
  }

  /** Starts recording a scenario (requests before the first `begin` are not recorded). */
  begin(name: string): void {
    this.current = [];
    this.syncs = 0;
    this.scenarios.push({ name, exchanges: this.current });
  }

  /** Stops recording; later requests (the kit's own checks between scenarios) are not recorded. */
  end(): void {
    this.current = null;
  }
}
