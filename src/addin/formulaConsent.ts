/**
 * Consent for the PPM worksheet functions (follow-up to issue #28, the same hole issue #22 closed
 * for refresh on open): a formula fetches with THIS device's stored connection, and anyone can send
 * a workbook with `=PPM.QUERY("financials")` in it, read the result back out of the cells and have
 * it returned. So until this device has allowed PPM formulas for this document, every PPM function
 * answers `#N/A` and sends nothing; the pane (same shared runtime) asks, and Allow re-runs the
 * blocked formulas so the cells fill without retyping.
 *
 * The rule:
 * - a document with an address (`Office.context.document.url`): this device's stored answer for a
 *   hash of ("ppm-formulas-consent-v1", the address) decides. Only the hash is stored (localStorage,
 *   under the pane's partition prefix), never the address. Another workbook, or a copy at another
 *   address, is asked again;
 * - a document Office gives no address is asked too, and the answer holds for this runtime (this
 *   document's session) only. "No address" would mean a new workbook made here, but Office has been
 *   seen to report an empty or undefined `url` for saved documents on the web (office-js issues
 *   #2476, #5587), and a workbook from a stranger must not pass through that gap: the stricter rule.
 *
 * The refresh-on-open consent of issue #22 does not count: it is about the flagged tables (their
 * environments, companies and sources), while a formula can name any dataset of any connection.
 *
 * Pure: no Office, no DOM; the runtime gives it the storage and the document's address.
 */
import { sha256Hex } from "../service/hash";
import type { StorageLike } from "./connectionStore";

/** Storage key prefix (after the partition prefix) of this device's answers for PPM formulas. */
export const FORMULA_CONSENT_PREFIX = "ppm.v1.formulaConsent.";

/** The hash that names a document's formula consent on this device (the address itself is not stored). */
export function formulaConsentKey(documentUrl: string): string {
  return sha256Hex(JSON.stringify(["ppm-formulas-consent-v1", documentUrl])).slice(0, 32);
}

/** The message of a blocked formula (no connection detail, no token). */
export const FORMULA_CONSENT_MESSAGE = "PPM formulas in this workbook need your permission on this device: open the PPM pane and choose Allow.";

/** What the pane shows while formulas wait: how many, and what they would read from (names only). */
export interface FormulaConsentRequest {
  /** Formulas waiting (invocations Excel has not cancelled). */
  waiting: number;
  /** Connection names with their environment, e.g. `Acme (https://acme.example/ppm)`: never a token. */
  sources: string[];
}

export interface FormulaConsentOptions {
  storage: StorageLike;
  /** The storage key with the partition prefix (`ConnectionStore.key`). */
  key(name: string): string;
  /** The document's address, null when Office has none. */
  documentUrl(): string | null;
  onError?: (where: string, e: unknown) => void;
}

interface Waiting {
  source: string;
  retry: () => void;
}

export class FormulaConsent {
  /** Allowed in this runtime even when storing the answer failed (storage full or blocked). */
  private allowedHere = false;
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private readonly listeners = new Set<(request: FormulaConsentRequest | null) => void>();

  constructor(private readonly opts: FormulaConsentOptions) {}

  private hashed: { url: string; key: string } | null = null;

  /** The storage key for an address (the hash computed once per address, not once per formula). */
  private storageKey(url: string): string {
    if (this.hashed?.url !== url) this.hashed = { url, key: this.opts.key(FORMULA_CONSENT_PREFIX + formulaConsentKey(url)) };
    return this.hashed.key;
  }

  /** Whether PPM formulas may fetch in this document on this device. */
  allowed(): boolean {
    if (this.allowedHere) return true;
    const url = this.opts.documentUrl();
    if (url === null) return false; // asked; the answer is kept for this runtime only
    try {
      const text = this.opts.storage.getItem(this.storageKey(url));
      const stored: unknown = text ? JSON.parse(text) : null;
      return stored !== null && typeof stored === "object" && (stored as Record<string, unknown>)["answer"] === "allow";
    } catch {
      return false;
    }
  }

  /**
   * A formula was blocked: remember how to run it again once allowed, and tell the pane.
   * @param source the connection it would read from, by name and environment only.
   * @returns forget: the invocation was cancelled (its formula deleted or changed).
   */
  block(source: string, retry: () => void): () => void {
    const id = this.next++;
    this.waiting.set(id, { source, retry });
    this.publish();
    return () => {
      if (this.waiting.delete(id)) this.publish();
    };
  }

  /** What is waiting, or null when nothing is. */
  request(): FormulaConsentRequest | null {
    if (this.waiting.size === 0) return null;
    const sources = [...new Set([...this.waiting.values()].map((w) => w.source))].sort();
    return { waiting: this.waiting.size, sources };
  }

  /** Called now with the current request and on every change (null: nothing waits). */
  onChange(listener: (request: FormulaConsentRequest | null) => void): () => void {
    this.listeners.add(listener);
    listener(this.request());
    return () => this.listeners.delete(listener);
  }

  /**
   * Allow: remembered on this device for this document, and every blocked formula runs again.
   * The document's address is read now, so the answer is for the document the user is looking at.
   */
  allow(): void {
    this.allowedHere = true;
    const url = this.opts.documentUrl();
    if (url !== null) {
      try {
        this.opts.storage.setItem(this.storageKey(url), JSON.stringify({ answer: "allow", at: new Date().toISOString() }));
      } catch (e) {
        this.opts.onError?.("formula consent", e); // holds for this runtime; asked again next time
      }
    }
    const retries = [...this.waiting.values()].map((w) => w.retry);
    this.waiting.clear();
    this.publish();
    for (const r of retries) r();
  }

  private publishing = false;

  /** Tells the listeners once per turn (a recalculation blocks hundreds of formulas at once). */
  private publish(): void {
    if (this.publishing) return;
    this.publishing = true;
    queueMicrotask(() => {
      this.publishing = false;
      const request = this.request();
      for (const l of [...this.listeners]) l(request);
    });
  }
}

/** The pane's question while formulas wait: what they would read from (names and addresses only) and what Allow does. */
export function formulaConsentText(request: FormulaConsentRequest): string {
  const what = request.waiting === 1 ? "1 PPM formula in this workbook reads" : `${request.waiting} PPM formulas in this workbook read`;
  return `${what} data with your connection on this device: ${request.sources.join(", ")}. Nothing has been sent. Allow PPM formulas in this workbook on this device? (Only for workbooks you trust: formulas can put your data into cells.)`;
}
