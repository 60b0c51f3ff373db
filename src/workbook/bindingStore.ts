/**
 * Bindings stored in the workbook's settings (`Excel.SettingCollection`, ExcelApi 1.4): they are
 * saved inside the file, so a workbook handed to a colleague can be refreshed with the colleague's
 * own token. One setting per binding (`ppm.binding.<id>`); values are JSON strings parsed with zod
 * when read back, because a workbook is untrusted input.
 */
import { BINDING_SETTING_PREFIX, bindingSettingKey, parseBinding, serializeBinding, type Binding } from "../refresh/binding";

export interface StoredBindings {
  bindings: Binding[];
  /** Settings under the binding prefix that could not be read, with the reason; never silently dropped. */
  broken: { key: string; code: string; message: string }[];
}

/** Reads every binding stored in the workbook (one `sync`). */
export async function readBindings(context: Excel.RequestContext): Promise<StoredBindings> {
  const settings = context.workbook.settings;
  settings.load("items/key,items/value");
  await context.sync();
  const out: StoredBindings = { bindings: [], broken: [] };
  for (const s of settings.items) {
    if (!s.key.startsWith(BINDING_SETTING_PREFIX)) continue;
    try {
      const b = parseBinding(s.value);
      if (bindingSettingKey(b.id) !== s.key) throw Object.assign(new Error(`Binding id "${b.id}" does not match its setting key.`), { code: "binding_invalid" });
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
  queueSaveBinding(context, binding, secrets);
  await context.sync();
}

/** Removes a binding; the table itself stays as plain data. */
export async function deleteBinding(context: Excel.RequestContext, id: string): Promise<boolean> {
  const item = context.workbook.settings.getItemOrNullObject(bindingSettingKey(id));
  await context.sync();
  if (item.isNullObject) return false;
  item.delete();
  await context.sync();
  return true;
}

/** A new binding id: time-based and random, valid as a setting-key suffix. */
export function newBindingId(random: () => number = Math.random): string {
  return `b${Date.now().toString(36)}${Math.floor(random() * 36 ** 6).toString(36).padStart(6, "0")}`;
}
