/**
 * The per-table "Refresh when this workbook opens" flag (issue 17), kept in the table's binding in
 * the workbook's settings, so it travels with the file. It holds no credential: the binding is
 * serialised through `serializeBinding`, which refuses any secret.
 */
import { bindingSettingKey, parseBinding, serializeBinding, type Binding } from "../refresh/binding";
import { readBindings } from "./bindingStore";

export interface OpenFlagResult {
  binding: Binding;
  /** Bindings flagged after the change (drives the add-in's startup behaviour). */
  flagged: number;
}

/**
 * Sets or clears the flag of one binding (two syncs: read, write). Reads the stored binding fresh,
 * so a refresh's newer validators are never overwritten with older ones.
 * @throws Error `table_missing` when no binding has that id.
 */
export async function setRefreshOnOpen(context: Excel.RequestContext, bindingId: string, on: boolean, secrets: readonly string[] = []): Promise<OpenFlagResult> {
  const { bindings } = await readBindings(context);
  const current = bindings.find((b) => b.id === bindingId);
  if (!current) throw Object.assign(new Error(`No table binding "${bindingId}" in this workbook.`), { code: "table_missing" });
  const { refreshOnOpen: _drop, ...rest } = current;
  void _drop;
  const binding: Binding = on ? { ...rest, refreshOnOpen: true } : rest;
  // Re-parse the JSON that is stored, so what is returned is exactly what a reader will see.
  const json = serializeBinding(binding, secrets);
  context.workbook.settings.add(bindingSettingKey(binding.id), json);
  await context.sync();
  const flagged = bindings.filter((b) => (b.id === bindingId ? on : b.refreshOnOpen === true)).length;
  return { binding: parseBinding(json), flagged };
}
