/**
 * Consent for the PPM worksheet functions (follow-up to issue #28, tightened by issue #36): a
 * formula fetches with THIS device's stored connection, and anyone can send a workbook with
 * `=PPM.QUERY("financials")` in it. Once the data is in cells, Excel itself can send it anywhere
 * (`=WEBSERVICE("https://…?"&A1)`, `=IMAGE(…)`), so until this device has allowed PPM formulas to use
 * a connection in this document, every PPM function that would use it answers `#N/A` and sends
 * nothing; the pane (same shared runtime) asks, naming the connection, and Allow re-runs the blocked
 * formulas so the cells fill without retyping.
 *
 * The rule: an answer is for ONE document and ONE connection.
 * - The document is its address (`Office.context.document.url`) AND a random id written into the
 *   document's settings at the first Allow (src/workbook/documentId.ts). The stored answer is keyed
 *   by a hash of (address, id, connection): a different file put at an allowed address (a Downloads
 *   or attachment path, a replaced file on a share) lacks the id, or has another, and is asked
 *   again. The id is not a secret (it travels with the file; whoever has a copy has it): it tells
 *   files apart, the address tells places apart, and only both together match.
 * - The connection is its id and its environment address, not its name: a connection deleted and
 *   created again under the same name is a new connection (a new random id), and a connection
 *   edited to another environment is asked again. A renamed connection is the same credentials and
 *   keeps its answer. A formula naming a connection this document has not been allowed to use asks
 *   again, naming it, even when other connections are allowed here.
 * - No address (a new workbook, the browser preview, or Office not telling: office-js issues #2476,
 *   #5587), or an id that cannot be written (a read-only file): asked too, and the answer holds for
 *   this runtime (this session of the document) only. "No address" cannot be trusted to mean "made
 *   here", and an id alone is in every copy of the file.
 * - Allow allows exactly the connections the question the user saw named; a formula blocked while
 *   the question was on screen, naming another connection, is asked about next.
 *
 * What Allow cannot protect against, said in the question and the README: anyone who can edit the
 * allowed workbook (a co-author), or replace the file at its address with a copy carrying its id, can
 * make formulas read the allowed connections' data on this device.
 *
 * Only hashes are stored (localStorage, under the pane's partition prefix), never the address, the
 * id or a connection's address. The refresh-on-open consent of issue #22 does not count: it is about
 * the flagged tables, while a formula can name any dataset of any connection.
 *
 * Pure: no Office, no DOM; the runtime gives it the storage, the document's address and its id.
 */
import { sha256Hex } from "../service/hash";
import type { StorageLike } from "./connectionStore";

/** Storage key prefix (after the partition prefix) of this device's answers for PPM formulas. */
export const FORMULA_CONSENT_PREFIX = "ppm.v2.formulaConsent.";

/** A connection as consent knows it: what identifies it, and how the question names it. */
export interface ConsentConnection {
  /** The connection's id on this device (random; a re-created connection gets a new one). */
  id: string;
  /** Its normalised environment address. */
  baseUrl: string;
  /** How the question names it, e.g. `Acme (https://acme.example/ppm)`: never a token. */
  label: string;
}

/** The hash that names one answer on this device (the address, id and connection are not stored). */
export function formulaConsentKey(documentUrl: string, documentId: string, connection: Pick<ConsentConnection, "id" | "baseUrl">): string {
  return sha256Hex(JSON.stringify(["ppm-formulas-consent-v2", documentUrl, documentId, connection.id, connection.baseUrl])).slice(0, 32);
}

/** The message of a blocked formula (the connection by name only, no token). */
export function formulaConsentMessage(connectionName?: string): string {
  const which = connectionName ? ` to read with "${connectionName}"` : "";
  return `PPM formulas in this workbook need your permission on this device${which}: open the PPM pane and choose Allow.`;
}

/** What the pane shows while formulas wait: how many, and which connections they would read with. */
export interface FormulaConsentRequest {
  /** Formulas waiting (invocations Excel has not cancelled). */
  waiting: number;
  /** The connections' labels, e.g. `Acme (https://acme.example/ppm)`, sorted: never a token. */
  sources: string[];
  /** The connections themselves, in the order of `sources`: what Allow for this request allows. */
  connections: ConsentConnection[];
}

/** The document's id in its settings (src/workbook/documentId.ts over `Excel.run`). */
export interface DocumentIdAccess {
  /** The id the document carries; null when it has none. */
  read(): Promise<string | null>;
  /** The document's id, written into it now when it has none; throws when it cannot be written. */
  ensure(): Promise<string>;
}

export interface FormulaConsentOptions {
  storage: StorageLike;
  /** The storage key with the partition prefix (`ConnectionStore.key`). */
  key(name: string): string;
  /** The document's address, null when Office has none. */
  documentUrl(): string | null;
  /** The document's id; without it (a host with no settings) answers hold for this runtime only. */
  documentId?: DocumentIdAccess;
  onError?: (where: string, e: unknown) => void;
}

interface Waiting {
  connection: ConsentConnection;
  retry: () => void;
}

/** One key per connection identity (id and environment), for this runtime's answers and the waiting list. */
const identity = (c: Pick<ConsentConnection, "id" | "baseUrl">): string => JSON.stringify([c.id, c.baseUrl]);

export class FormulaConsent {
  /** Connections allowed in this runtime (whether or not the answer could be stored). */
  private readonly allowedHere = new Set<string>();
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private readonly listeners = new Set<(request: FormulaConsentRequest | null) => void>();
  /** The document's id, read once per runtime (a recalculation checks hundreds of formulas). */
  private idRead: Promise<string | null> | null = null;

  constructor(private readonly opts: FormulaConsentOptions) {}

  /** The document's id; null when it has none or it cannot be read (then nothing stored matches). */
  private documentId(): Promise<string | null> {
    const access = this.opts.documentId;
    if (!access) return Promise.resolve(null);
    this.idRead ??= access.read().catch((e: unknown) => {
      this.idRead = null; // read again next time
      this.opts.onError?.("formula consent (document id)", e);
      return null;
    });
    return this.idRead;
  }

  /** Whether PPM formulas may fetch with `connection` in this document on this device. */
  async allowed(connection: ConsentConnection): Promise<boolean> {
    if (this.allowedHere.has(identity(connection))) return true;
    const url = this.opts.documentUrl();
    if (url === null) return false; // asked; the answer is kept for this runtime only
    const id = await this.documentId();
    if (id === null) return false;
    try {
      const text = this.opts.storage.getItem(this.opts.key(FORMULA_CONSENT_PREFIX + formulaConsentKey(url, id, connection)));
      const stored: unknown = text ? JSON.parse(text) : null;
      return stored !== null && typeof stored === "object" && (stored as Record<string, unknown>)["answer"] === "allow";
    } catch {
      return false;
    }
  }

  /**
   * A formula was blocked: remember how to run it again once allowed, and tell the pane.
   * @param connection the connection it would read with (the question names it).
   * @returns forget: the invocation was cancelled (its formula deleted or changed).
   */
  block(connection: ConsentConnection, retry: () => void): () => void {
    const id = this.next++;
    this.waiting.set(id, { connection, retry });
    this.publish();
    return () => {
      if (this.waiting.delete(id)) this.publish();
    };
  }

  /** What is waiting, or null when nothing is. */
  request(): FormulaConsentRequest | null {
    if (this.waiting.size === 0) return null;
    const byIdentity = new Map<string, ConsentConnection>();
    for (const w of this.waiting.values()) if (!byIdentity.has(identity(w.connection))) byIdentity.set(identity(w.connection), w.connection);
    const connections = [...byIdentity.values()].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return { waiting: this.waiting.size, sources: connections.map((c) => c.label), connections };
  }

  /** Called now with the current request and on every change (null: nothing waits). */
  onChange(listener: (request: FormulaConsentRequest | null) => void): () => void {
    this.listeners.add(listener);
    listener(this.request());
    return () => this.listeners.delete(listener);
  }

  /**
   * Allow, for the connections `request` names (the question the user answered, not whatever waits
   * by the time of the click): they may be used in this document on this device from now on, and
   * every formula blocked on them runs again. The answer is stored under this document's address
   * and id (the id is written into the document now when it has none); without an address, or when
   * the id cannot be written, it holds for this runtime only. Resolves once the answer is stored.
   */
  async allow(request: Pick<FormulaConsentRequest, "connections">): Promise<void> {
    const chosen = new Set(request.connections.map(identity));
    for (const k of chosen) this.allowedHere.add(k);
    const retries: Array<() => void> = [];
    for (const [n, w] of this.waiting) {
      if (!chosen.has(identity(w.connection))) continue;
      this.waiting.delete(n);
      retries.push(w.retry);
    }
    this.publish();
    for (const r of retries) r();
    // The address is read now, so the answer is for the document the user is looking at.
    const url = this.opts.documentUrl();
    if (url === null || !this.opts.documentId || chosen.size === 0) return;
    try {
      const id = await this.opts.documentId.ensure();
      this.idRead = Promise.resolve(id);
      const at = new Date().toISOString();
      for (const c of request.connections) {
        this.opts.storage.setItem(this.opts.key(FORMULA_CONSENT_PREFIX + formulaConsentKey(url, id, c)), JSON.stringify({ answer: "allow", at }));
      }
    } catch (e) {
      this.opts.onError?.("formula consent", e); // holds for this runtime; asked again next time
    }
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

/**
 * The pane's question while formulas wait: which connections they would read with (names and
 * addresses only), what Allow does, and what it risks: data in cells can leave through Excel itself.
 */
export function formulaConsentText(request: Pick<FormulaConsentRequest, "waiting" | "sources">): string {
  const what = request.waiting === 1 ? "1 PPM formula in this workbook wants" : `${request.waiting} PPM formulas in this workbook want`;
  const named = request.sources.length === 1 ? `your connection ${request.sources[0]}` : `your connections ${request.sources.join(", ")}`;
  return (
    `${what} to read data with ${named} on this device. Nothing has been sent. ` +
    `Allow PPM formulas in this workbook to use ${request.sources.length === 1 ? "it" : "them"} on this device? ` +
    "Once data is in cells, Excel itself can send it anywhere (for example with WEBSERVICE or IMAGE formulas), " +
    "and anyone who can edit this workbook can add such formulas: allow only workbooks whose authors and editors you trust."
  );
}
