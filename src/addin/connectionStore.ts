/**
 * The connections a user keeps on this device: environment + company, with their credentials.
 *
 * Where things live, and why:
 * - Everything is in the add-in's own storage (`localStorage` in the task pane and in the ribbon
 *   command runtime, which share an origin), never in the workbook: a workbook is shared with other
 *   people, a token is not. Workbook settings only ever hold bindings, which reference a
 *   connection by id.
 * - Keys are prefixed with `Office.context.partitionKey` when Office defines it: Excel on the web
 *   partitions add-in storage per host page, and an unprefixed key would be invisible (or worse,
 *   shared) across partitions.
 * - The non-secret part (name, base URL, company id) and the secrets (token, record credentials)
 *   are separate entries, so "forget token" removes exactly the secrets and keeps the connection.
 * - Secrets belong to the host they were entered for. Editing a connection's address to another
 *   origin (scheme, host or port) drops the stored token and record credentials: the edit must
 *   bring a token for the new host (record credentials are optional), or nothing is saved. A
 *   changed path on the same origin keeps them (the same server).
 *
 * This module is pure (the storage is injected), so it is tested in Node.
 */
import { normalizeBaseUrl } from "../service/connection";
import type { Connection } from "../service/connection";

/** The subset of the Web Storage API the store needs (`localStorage` satisfies it). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** In-memory {@link StorageLike}: used when the host blocks `localStorage` (nothing outlives the pane then). */
export class MemoryStorage implements StorageLike {
  private readonly map = new Map<string, string>();
  getItem(key: string): string | null {
    return this.map.has(key) ? this.map.get(key)! : null;
  }
  setItem(key: string, value: string): void {
    this.map.set(key, String(value));
  }
  removeItem(key: string): void {
    this.map.delete(key);
  }
}

/**
 * The add-in's `localStorage`, or an in-memory stand-in when the host blocks it (some privacy
 * settings make merely reading `window.localStorage` throw). `persistent` says which one it is.
 */
export function deviceStorage(get: () => StorageLike | null | undefined): { storage: StorageLike; persistent: boolean } {
  try {
    const s = get();
    if (s) {
      const probe = "ppm.v1.probe";
      s.setItem(probe, "1");
      s.removeItem(probe);
      return { storage: s, persistent: true };
    }
  } catch {
    /* blocked: fall through */
  }
  return { storage: new MemoryStorage(), persistent: false };
}

/** What is safe to show and list: a connection without its secrets. */
export interface ConnectionSummary {
  id: string;
  name: string;
  /** Normalised environment base URL. */
  baseUrl: string;
  /** Company id learnt from the manifest ("Test connection" or a dataset list), when known. */
  companyId: string | null;
  /** True when a company token is stored for this connection. */
  hasToken: boolean;
  /** True when both record credentials (`api-auth`, `api-secret`) are stored. */
  hasRecordCredentials: boolean;
}

/**
 * The origin (scheme, host and port) of an environment address, or null when it is not a URL.
 * Stored secrets are sent only to the origin they were entered for.
 */
export function addressOrigin(baseUrl: string): string | null {
  try {
    const u = new URL(baseUrl.trim());
    return u.origin === "null" ? null : u.origin.toLowerCase();
  } catch {
    return null;
  }
}

/** True when both addresses are URLs on the same origin (a secret for one may be sent to the other). */
export function sameOrigin(a: string, b: string): boolean {
  const x = addressOrigin(a);
  return x !== null && x === addressOrigin(b);
}

/**
 * What the connection form submits. Empty secret fields on edit mean "keep what is stored", as
 * long as the address stays on the same origin; on another origin nothing stored is kept.
 */
export interface ConnectionInput {
  /** Present when editing an existing connection. */
  id?: string;
  name: string;
  baseUrl: string;
  token?: string;
  apiAuth?: string;
  apiSecret?: string;
}

/** A form field a {@link ConnectionInputError} points at. */
export type ConnectionField = "name" | "baseUrl" | "token" | "apiAuth" | "apiSecret" | "id";

/** Bad form input. `field` says which input to focus; the message never repeats a secret. */
export class ConnectionInputError extends Error {
  constructor(
    readonly field: ConnectionField,
    message: string,
  ) {
    super(message);
    this.name = "ConnectionInputError";
  }
}

interface StoredMeta {
  id: string;
  name: string;
  baseUrl: string;
  companyId: string | null;
}

interface StoredSecrets {
  token?: string;
  apiAuth?: string;
  apiSecret?: string;
}

/** Storage key names (after the partition prefix). Versioned so a future shape can migrate. */
export const STORAGE_KEYS = {
  connections: "ppm.v1.connections",
  active: "ppm.v1.activeConnection",
  secretPrefix: "ppm.v1.secret.",
} as const;

export interface ConnectionStoreOptions {
  /** `Office.context.partitionKey`, when defined. */
  partitionKey?: string | null;
  /** Id generator (injected for deterministic tests). */
  newId?: () => string;
}

const MAX_NAME = 100;
const MAX_SECRET = 4096;

function defaultId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return `c-${c.randomUUID().slice(0, 8)}`;
  return `c-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/**
 * Connections on this device.
 *
 * @example
 * ```ts
 * const store = new ConnectionStore(localStorage, { partitionKey: Office.context.partitionKey });
 * const c = store.save({ name: "Acme", baseUrl: "https://eu.example.com", token });
 * const conn = store.connection(c.id); // with secrets, for the service client only
 * ```
 */
export class ConnectionStore {
  private readonly prefix: string;
  private readonly newId: () => string;
  /** Set when stored data could not be read; shown to the user instead of silently dropping it. */
  problem: string | null = null;

  constructor(
    private readonly storage: StorageLike,
    options: ConnectionStoreOptions = {},
  ) {
    this.prefix = options.partitionKey ? `${options.partitionKey}:` : "";
    this.newId = options.newId ?? defaultId;
  }

  /** The full storage key of a logical key (exposed for tests and diagnostics). */
  key(name: string): string {
    return this.prefix + name;
  }

  private readMeta(): StoredMeta[] {
    const raw = this.storage.getItem(this.key(STORAGE_KEYS.connections));
    if (raw === null) return [];
    try {
      const parsed: unknown = JSON.parse(raw);
      if (!Array.isArray(parsed)) throw new Error("not a list");
      const out: StoredMeta[] = [];
      for (const item of parsed as unknown[]) {
        if (!item || typeof item !== "object") continue;
        const e = item as Partial<Record<keyof StoredMeta, unknown>>;
        if (typeof e.id === "string" && typeof e.name === "string" && typeof e.baseUrl === "string") {
          out.push({ id: e.id, name: e.name, baseUrl: e.baseUrl, companyId: typeof e.companyId === "string" ? e.companyId : null });
        }
      }
      return out;
    } catch {
      this.problem = "The saved connections on this device could not be read. Adding a connection keeps a backup of the unreadable data.";
      return [];
    }
  }

  private writeMeta(list: StoredMeta[]): void {
    const k = this.key(STORAGE_KEYS.connections);
    if (this.problem) {
      // Keep what could not be read instead of overwriting it: nothing is lost.
      const old = this.storage.getItem(k);
      if (old !== null) this.storage.setItem(`${k}.unreadable`, old);
      this.problem = null;
    }
    this.storage.setItem(k, JSON.stringify(list));
  }

  private readSecrets(id: string): StoredSecrets {
    const raw = this.storage.getItem(this.key(STORAGE_KEYS.secretPrefix + id));
    if (raw === null) return {};
    try {
      const v: unknown = JSON.parse(raw);
      if (!v || typeof v !== "object") return {};
      const o = v as Record<string, unknown>;
      const out: StoredSecrets = {};
      if (typeof o.token === "string" && o.token) out.token = o.token;
      if (typeof o.apiAuth === "string" && o.apiAuth) out.apiAuth = o.apiAuth;
      if (typeof o.apiSecret === "string" && o.apiSecret) out.apiSecret = o.apiSecret;
      return out;
    } catch {
      return {};
    }
  }

  private writeSecrets(id: string, s: StoredSecrets): void {
    const k = this.key(STORAGE_KEYS.secretPrefix + id);
    if (!s.token && !s.apiAuth && !s.apiSecret) this.storage.removeItem(k);
    else this.storage.setItem(k, JSON.stringify(s));
  }

  private summary(m: StoredMeta): ConnectionSummary {
    const s = this.readSecrets(m.id);
    return { ...m, hasToken: !!s.token, hasRecordCredentials: !!s.apiAuth && !!s.apiSecret };
  }

  /** All connections, in the order they were added. No secrets. */
  list(): ConnectionSummary[] {
    return this.readMeta().map((m) => this.summary(m));
  }

  /** One connection without secrets, or null. */
  get(id: string): ConnectionSummary | null {
    const m = this.readMeta().find((c) => c.id === id);
    return m ? this.summary(m) : null;
  }

  /**
   * The connection with its secrets, for the service client. `token` is "" when it was forgotten
   * (the client then fails with 401 and the UI offers "Update token").
   */
  connection(id: string): Connection | null {
    const m = this.readMeta().find((c) => c.id === id);
    if (!m) return null;
    const s = this.readSecrets(id);
    const conn: Connection = { id: m.id, name: m.name, baseUrl: m.baseUrl, token: s.token ?? "" };
    if (s.apiAuth) conn.apiAuth = s.apiAuth;
    if (s.apiSecret) conn.apiSecret = s.apiSecret;
    return conn;
  }

  /**
   * Adds (no `id`) or updates (with `id`) a connection after validating every field.
   * @throws ConnectionInputError naming the field to correct; nothing is stored then.
   */
  save(input: ConnectionInput): ConnectionSummary {
    const { list, editing, meta, secrets } = this.validate(input);
    const next = editing ? list.map((c) => (c.id === meta.id ? meta : c)) : [...list, meta];
    this.writeSecrets(meta.id, secrets);
    this.writeMeta(next);
    return this.summary(meta);
  }

  /**
   * The connection `save(input)` would store, with its secrets, without storing anything: the pane
   * asks the service whether it accepts the token before saving (issue #37).
   * @throws ConnectionInputError as `save` does.
   */
  candidate(input: ConnectionInput): Connection {
    const { meta, secrets } = this.validate(input, false);
    const conn: Connection = { id: meta.id, name: meta.name, baseUrl: meta.baseUrl, token: secrets.token ?? "" };
    if (secrets.apiAuth) conn.apiAuth = secrets.apiAuth;
    if (secrets.apiSecret) conn.apiSecret = secrets.apiSecret;
    return conn;
  }

  private validate(input: ConnectionInput, allocate = true): { list: StoredMeta[]; editing: StoredMeta | undefined; meta: StoredMeta; secrets: StoredSecrets } {
    const list = this.readMeta();
    const editing = input.id !== undefined ? list.find((c) => c.id === input.id) : undefined;
    if (input.id !== undefined && !editing) throw new ConnectionInputError("id", "This connection no longer exists on this device.");

    const name = (input.name ?? "").trim();
    if (!name) throw new ConnectionInputError("name", "Enter a name for the connection.");
    if (name.length > MAX_NAME) throw new ConnectionInputError("name", `The name is too long (at most ${MAX_NAME} characters).`);

    let baseUrl: string;
    try {
      baseUrl = normalizeBaseUrl(input.baseUrl ?? "");
    } catch (e) {
      throw new ConnectionInputError("baseUrl", e instanceof Error ? e.message : "The environment address is not usable.");
    }
    // The pane's Content-Security-Policy allows plain http only to http://localhost:* and
    // http://127.0.0.1:* (scripts/csp.js): CSP host sources cannot name an IPv6 address, so a
    // connection to http://[::1] would be blocked by the browser on every request. Say so here.
    // (https://[::1] is allowed by the policy's `https:`; the CLI has no such policy and accepts both.)
    if (/^http:\/\/\[/i.test(baseUrl)) {
      throw new ConnectionInputError("baseUrl", `The environment address is not usable in the pane: plain http to an IPv6 address cannot be allowed by the add-in's security policy. Write ${baseUrl.replace(/^http:\/\/\[::1\]/i, "http://localhost")} instead.`);
    }

    // Secrets stay with their host: on another origin nothing stored is kept (nor sent there).
    const moved = !!editing && !sameOrigin(editing.baseUrl, baseUrl);
    const old = editing && !moved ? this.readSecrets(editing.id) : {};
    const token = cleanSecret(input.token, "token", "company API token");
    const apiAuth = cleanSecret(input.apiAuth, "apiAuth", "api-auth value");
    const apiSecret = cleanSecret(input.apiSecret, "apiSecret", "api-secret value");
    const secrets: StoredSecrets = {
      token: token ?? old.token,
      apiAuth: apiAuth ?? old.apiAuth,
      apiSecret: apiSecret ?? old.apiSecret,
    };
    if (!secrets.token && moved) {
      throw new ConnectionInputError(
        "token",
        `The address now points at another server (${addressOrigin(baseUrl) ?? baseUrl}). The stored token is only ever sent to ${addressOrigin(editing.baseUrl) ?? editing.baseUrl}: enter the company API token for the new address.`,
      );
    }
    if (!secrets.token) throw new ConnectionInputError("token", "Enter the company API token (gear menu › company API token in the service).");
    if (!!secrets.apiAuth !== !!secrets.apiSecret) {
      throw new ConnectionInputError(secrets.apiAuth ? "apiSecret" : "apiAuth", "Record credentials need both api-auth and api-secret (or neither).");
    }
    // A token pasted into the name or address would end up on screen and in bindings.
    for (const s of [secrets.token, secrets.apiSecret]) {
      if (s && s.length >= 4 && (name.includes(s) || baseUrl.includes(s))) {
        throw new ConnectionInputError(name.includes(s) ? "name" : "baseUrl", "A credential must not appear in the name or the address.");
      }
    }

    // A changed address or token may point at another company: the learnt company id is stale.
    const companyId = editing && editing.baseUrl === baseUrl && !token ? editing.companyId : null;
    const meta: StoredMeta = { id: editing ? editing.id : allocate ? this.uniqueId(list) : "new-connection", name, baseUrl, companyId };
    return { list, editing, meta, secrets };
  }

  private uniqueId(list: StoredMeta[]): string {
    for (let i = 0; i < 20; i++) {
      const id = this.newId();
      if (/^[A-Za-z0-9_.-]{1,64}$/.test(id) && !list.some((c) => c.id === id)) return id;
    }
    throw new Error("Could not allocate a connection id.");
  }

  /** Removes a connection and its secrets. Returns false when it did not exist. */
  remove(id: string): boolean {
    const list = this.readMeta();
    if (!list.some((c) => c.id === id)) return false;
    this.writeMeta(list.filter((c) => c.id !== id));
    this.storage.removeItem(this.key(STORAGE_KEYS.secretPrefix + id));
    if (this.activeId() === id) this.storage.removeItem(this.key(STORAGE_KEYS.active));
    return true;
  }

  /**
   * Replaces the company token of one connection (the "Update token" flow after a 401).
   * @throws ConnectionInputError for an empty or malformed token.
   */
  setToken(id: string, token: string): void {
    const m = this.readMeta().find((c) => c.id === id);
    if (!m) throw new ConnectionInputError("id", "This connection no longer exists on this device.");
    const t = cleanSecret(token, "token", "company API token");
    if (!t) throw new ConnectionInputError("token", "Enter the new company API token.");
    this.writeSecrets(id, { ...this.readSecrets(id), token: t });
  }

  /** Deletes the stored company token of one connection (record credentials stay). */
  forgetToken(id: string): void {
    const s = this.readSecrets(id);
    delete s.token;
    this.writeSecrets(id, s);
  }

  /** Remembers the company id a manifest reported for this connection. */
  setCompanyId(id: string, companyId: string | number | null): void {
    const list = this.readMeta();
    const value = companyId === null || companyId === undefined ? null : String(companyId);
    const m = list.find((c) => c.id === id);
    if (!m || m.companyId === value) return;
    this.writeMeta(list.map((c) => (c.id === id ? { ...c, companyId: value } : c)));
  }

  /** Id of the active connection: the stored choice when it still exists, else the first one. */
  activeId(): string | null {
    const list = this.readMeta();
    const chosen = this.storage.getItem(this.key(STORAGE_KEYS.active));
    if (chosen && list.some((c) => c.id === chosen)) return chosen;
    return list[0]?.id ?? null;
  }

  setActive(id: string): void {
    if (!this.readMeta().some((c) => c.id === id)) throw new ConnectionInputError("id", "This connection no longer exists on this device.");
    this.storage.setItem(this.key(STORAGE_KEYS.active), id);
  }

  /** Every secret stored on this device (for redaction and for refusing to write them into workbooks). */
  allSecrets(): string[] {
    return this.readMeta().flatMap((m) => {
      const s = this.readSecrets(m.id);
      return [s.token, s.apiAuth, s.apiSecret].filter((x): x is string => !!x);
    });
  }
}

/** undefined/blank → undefined (keep); otherwise the trimmed value after checks. */
function cleanSecret(value: string | undefined, field: ConnectionField, label: string): string | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (!v) return undefined;
  if (v.length > MAX_SECRET) throw new ConnectionInputError(field, `The ${label} is too long.`);
  // Header values cannot carry control characters or inner whitespace; a paste with a line break
  // would otherwise fail later with an obscure network error.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this check looks for
  if (/[\s\u0000-\u001f\u007f]/.test(v)) throw new ConnectionInputError(field, `The ${label} must not contain spaces or line breaks.`);
  if (/[^\u0020-\u007e]/.test(v)) throw new ConnectionInputError(field, `The ${label} must contain only plain ASCII characters.`);
  return v;
}
