/**
 * Bindings stored in the workbook's settings (`Excel.SettingCollection`, ExcelApi 1.4): they are
 * saved inside the file, so a workbook handed to a colleague can be refreshed with the colleague's
 * own token. One setting per binding (`ppm.binding.<id>`); values are JSON strings parsed with zod
 * when read back, because a workbook is untrusted input.
 */
import { BINDING_SETTING_PREFIX, bindingSettingKey, parseBinding, serializeBinding, type Binding } from "../refresh/binding";
import { WriteError } from "./blocks";

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

/** Loads the settings (one `sync`) and applies {@link checkSettingsBudget}. */
export async function loadAndCheckSettingsBudget(context: Excel.RequestContext, key: string, json: string): Promise<void> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  checkSettingsBudget(settings.items, key, json);
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
 * Reads every binding stored in the workbook (one `sync`). A binding's `refreshOnOpen` is its flag's
 * own setting (`ppm.open.<id>`, issue #21) where that exists, else what the binding itself says.
 */
export async function readBindings(context: Excel.RequestContext): Promise<StoredBindings> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const out: StoredBindings = { bindings: [], broken: [] };
  const flags = new Map<string, boolean>();
  for (const s of settings.items) if (s.key.startsWith(OPEN_FLAG_PREFIX)) flags.set(s.key.slice(OPEN_FLAG_PREFIX.length), s.value === true || s.value === "true");
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
      out.bindings.push(b);
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
  await loadAndCheckSettingsBudget(context, bindingSettingKey(binding.id), json);
  queueBindingSetting(context, binding.id, json);
  await context.sync();
}

/** Removes a binding; the table itself stays as plain data. */
export async function deleteBinding(context: Excel.RequestContext, id: string): Promise<boolean> {
  const item = context.workbook.settings.getItemOrNullObject(bindingSettingKey(id));
  const flag = context.workbook.settings.getItemOrNullObject(OPEN_FLAG_PREFIX + id);
  await context.sync();
  if (item.isNullObject) return false;
  item.delete();
  if (!flag.isNullObject) flag.delete();
  await context.sync();
  return true;
}

/** A new binding id: time-based and random, valid as a setting-key suffix. */
export function newBindingId(random: () => number = Math.random): string {
  return `b${Date.now().toString(36)}${Math.floor(random() * 36 ** 6).toString(36).padStart(6, "0")}`;
}
