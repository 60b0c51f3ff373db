/**
 * Bindings stored in the workbook's settings (`Excel.SettingCollection`, ExcelApi 1.4): they are
 * saved inside the file, so a workbook handed to a colleague can be refreshed with the colleague's
 * own token. One setting per binding (`ppm.binding.<id>`); values are JSON strings parsed with zod
 * when read back, because a workbook is untrusted input.
 */
import { BINDING_SETTING_PREFIX, bindingSettingKey, parseBinding, serializeBinding, type Binding } from "../refresh/binding";
import { WriteError } from "./blocks";
import { keepSetting } from "./settle";

/**
 * Budget for everything the add-in keeps in document settings (bindings and table locks), in
 * characters of key + JSON value. Settings are documented to hold about 2 MB, but saves are reported to
 * fail near 1 MB (office-js #621, #3957), and other add-ins share the same store; a quarter of the
 * lower figure holds some 200 bindings. Write-back baselines, which grow with the table, are not kept
 * in settings (see `writeback.ts`).
 */
export const SETTINGS_BUDGET_CHARS = 256_000;
/** Settings keys the add-in owns (bindings `ppm.binding.*`, locks `ppm.lock.*`, legacy baselines). */
export const ADDIN_SETTING_PREFIX = "ppm.";

/**
 * Loads the settings (one `sync`) and applies {@link checkSettingsBudget}; returns what `key` holds
 * now (null: absent), for {@link keepSetting}.
 */
export async function loadAndCheckSettingsBudget(context: Excel.RequestContext, key: string, json: string): Promise<{ value: unknown } | null> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  checkSettingsBudget(settings.items, key, json);
  const was = settings.items.find((s) => s.key === key);
  return was ? { value: was.value } : null;
}

/**
 * Refuses (`settings_full`, nothing written) when storing `json` under `key` would take the add-in's
 * settings over {@link SETTINGS_BUDGET_CHARS}. `items`: the loaded settings (key and value).
 */
export function checkSettingsBudget(items: readonly { key: string; value: unknown }[], key: string, json: string): void {
  let total = key.length + json.length;
  for (const s of items) {
    if (s.key === key || !s.key.startsWith(ADDIN_SETTING_PREFIX)) continue;
    total += s.key.length + (typeof s.value === "string" ? s.value.length : JSON.stringify(s.value).length);
  }
  if (total > SETTINGS_BUDGET_CHARS) {
    throw new WriteError(
      "settings_full",
      `This workbook's PPM settings would hold ${total.toLocaleString("en-US")} characters, over the ${SETTINGS_BUDGET_CHARS.toLocaleString("en-US")} the add-in allows itself (Excel's document settings fail near 1 MB). Nothing was written. Remove tables you no longer refresh (Refresh tab › Forget) and try again.`,
    );
  }
}

/** Queues storing a binding's JSON (reaches the workbook with the caller's next `sync`). */
export function queueBindingSetting(context: Excel.RequestContext, id: string, json: string): void {
  context.workbook.settings.add(bindingSettingKey(id), json);
}

export interface StoredBindings {
  bindings: Binding[];
  /** Settings under the binding prefix that could not be read, with the reason; never silently dropped. */
  broken: { key: string; code: string; message: string }[];
}

/** Prefix of the per-binding "Refresh when this workbook opens" settings (`openFlags.ts`; duplicated here to keep the import graph one-way). */
const OPEN_FLAG_PREFIX = "ppm.open.";

/**
 * Prefix of the per-binding STATUS settings (issue #26, hazard 6): what a refresh that wrote no data
 * learnt (a failure, or "unchanged" and when it asked), kept apart from the binding so it never
 * writes the binding whole from its own (possibly stale) copy. Excel keeps the last write per
 * setting, and a co-author's copy can lag: a failure stored as a whole binding would put old
 * validators back over the co-author's newer ones. The binding itself is written only with data
 * (import, a refresh holding the table's lock).
 */
export const STATUS_SETTING_PREFIX = "ppm.status.";

export function statusSettingKey(bindingId: string): string {
  return STATUS_SETTING_PREFIX + bindingId;
}

/** What a status setting holds. `basedOn`: the version of the binding it was learnt against. */
export interface BindingStatus {
  basedOn: string;
  lastCheckedAt: string | null;
  lastFailure: Binding["lastFailure"];
}

/**
 * A binding's data version: the refresh that wrote the data in the sheet (its time and validators).
 * A status learnt against another version describes data no longer there and is ignored.
 */
export function bindingVersion(b: Binding): string {
  const text = JSON.stringify([b.lastRefreshAt, b.validators.etag ?? null, b.validators.lastModified ?? null, b.validators.generatedAt ?? null, b.rowCount]);
  // FNV-1a (32 bits, twice with different offsets): short in the settings, collisions negligible for one binding's versions.
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    h1 = Math.imul(h1 ^ text.charCodeAt(i), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ text.charCodeAt(i), 0x811c9dc5) >>> 0;
  }
  return h1.toString(36) + h2.toString(36);
}

function parseStatus(value: unknown): BindingStatus | null {
  try {
    const v = (typeof value === "string" ? JSON.parse(value) : value) as Partial<BindingStatus> | null;
    if (!v || typeof v.basedOn !== "string") return null;
    const failure = v.lastFailure;
    const okFailure = failure === null || failure === undefined || (typeof failure === "object" && typeof failure.code === "string" && typeof failure.message === "string" && typeof failure.at === "string");
    if (!okFailure) return null;
    return { basedOn: v.basedOn, lastCheckedAt: typeof v.lastCheckedAt === "string" ? v.lastCheckedAt : null, lastFailure: failure ?? null };
  } catch {
    return null;
  }
}

/** A binding with its status merged in, when the status was learnt against this very version. */
export function withStatus(b: Binding, status: BindingStatus | null | undefined): Binding {
  if (!status || status.basedOn !== bindingVersion(b)) return b;
  return { ...b, lastFailure: status.lastFailure, lastCheckedAt: status.lastCheckedAt ?? b.lastCheckedAt };
}

/**
 * Stores what a refresh that wrote no data learnt (`updated`'s failure and check time) as the
 * binding's status, against the version it read (`read`): two syncs (budget read, write). Never
 * writes the binding itself.
 */
export async function saveBindingStatus(context: Excel.RequestContext, read: Binding, updated: Binding, secrets: readonly string[] = []): Promise<void> {
  const status: BindingStatus = { basedOn: bindingVersion(read), lastCheckedAt: updated.lastCheckedAt, lastFailure: updated.lastFailure };
  const json = JSON.stringify(status);
  // Document settings travel with the file: a secret never goes there (failures are redacted already; this is the last guard).
  if (secrets.some((t) => t.length >= 4 && json.includes(t))) throw new WriteError("write_failed", "The refresh status was not stored: it would contain a credential.");
  // No budget read (a request that loads every setting): a status is a few hundred characters and
  // replaces the previous one, far inside the room between the add-in's budget and Excel's limit.
  const key = statusSettingKey(read.id);
  const was = context.workbook.settings.getItemOrNullObject(key);
  was.load("value");
  context.workbook.settings.add(key, json);
  await context.sync();
  keepSetting(context, { key, value: json, mode: "cas", previous: was.isNullObject ? null : { value: was.value } });
}

/**
 * Reads every binding stored in the workbook (one `sync`). A binding's `refreshOnOpen` is its flag's
 * own setting (`ppm.open.<id>`, issue #21) where that exists, else what the binding itself says.
 */
export async function readBindings(context: Excel.RequestContext): Promise<StoredBindings> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const out: StoredBindings = { bindings: [], broken: [] };
  const flags = new Map<string, boolean>();
  const statuses = new Map<string, BindingStatus | null>();
  for (const s of settings.items) {
    if (s.key.startsWith(OPEN_FLAG_PREFIX)) flags.set(s.key.slice(OPEN_FLAG_PREFIX.length), s.value === true || s.value === "true");
    else if (s.key.startsWith(STATUS_SETTING_PREFIX)) statuses.set(s.key.slice(STATUS_SETTING_PREFIX.length), parseStatus(s.value));
  }
  for (const s of settings.items) {
    if (!s.key.startsWith(BINDING_SETTING_PREFIX)) continue;
    try {
      let b = parseBinding(s.value);
      if (bindingSettingKey(b.id) !== s.key) throw Object.assign(new Error(`Binding id "${b.id}" does not match its setting key.`), { code: "binding_invalid" });
      const flag = flags.get(b.id);
      if (flag !== undefined) {
        const { refreshOnOpen: _was, ...rest } = b;
        void _was;
        b = flag ? { ...rest, refreshOnOpen: true } : rest;
      }
      out.bindings.push(withStatus(b, statuses.get(b.id)));
    } catch (e) {
      const err = e as { code?: string; message?: string };
      out.broken.push({ key: s.key, code: err.code ?? "binding_invalid", message: err.message ?? String(e) });
    }
  }
  out.bindings.sort((a, b) => a.tableName.localeCompare(b.tableName));
  return out;
}

/** Queues storing a binding (reaches the workbook with the caller's next `sync`). */
export function queueSaveBinding(context: Excel.RequestContext, binding: Binding, secrets: readonly string[] = []): void {
  context.workbook.settings.add(bindingSettingKey(binding.id), serializeBinding(binding, secrets));
}

/** Stores a binding (one `sync`). @throws BindingError if it would contain a secret. */
export async function saveBinding(context: Excel.RequestContext, binding: Binding, secrets: readonly string[] = []): Promise<void> {
  const json = serializeBinding(binding, secrets);
  const previous = await loadAndCheckSettingsBudget(context, bindingSettingKey(binding.id), json);
  queueBindingSetting(context, binding.id, json);
  await context.sync();
  keepSetting(context, { key: bindingSettingKey(binding.id), value: json, mode: "cas", previous });
}

/** Removes a binding; the table itself stays as plain data. */
export async function deleteBinding(context: Excel.RequestContext, id: string): Promise<boolean> {
  const keys = [bindingSettingKey(id), OPEN_FLAG_PREFIX + id, statusSettingKey(id)];
  const items = keys.map((k) => {
    const item = context.workbook.settings.getItemOrNullObject(k);
    item.load("value");
    return item;
  });
  await context.sync();
  if (items[0].isNullObject) return false;
  const present = items.map((item, i) => ({ item, key: keys[i] })).filter((x) => !x.item.isNullObject);
  for (const { item } of present) item.delete();
  await context.sync();
  // Issue #35: a co-author's stale settings copy could put them back; settled with the batch.
  for (const { item, key } of present) keepSetting(context, { key, deleted: true, mode: "cas", previous: { value: item.value } });
  return true;
}

/** A new binding id: time-based and random, valid as a setting-key suffix. */
export function newBindingId(random: () => number = Math.random): string {
  return `b${Date.now().toString(36)}${Math.floor(random() * 36 ** 6).toString(36).padStart(6, "0")}`;
}
