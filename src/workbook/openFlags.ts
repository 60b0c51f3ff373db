/**
 * The per-table "Refresh when this workbook opens" flag (issue 17), kept in the workbook's settings,
 * so it travels with the file. It holds no credential.
 *
 * Its own setting, `ppm.open.<bindingId>` = `true` / `false` (issue #21, item 14): a refresh in another
 * runtime (the ribbon's, another window) stores the binding it read before the flag was ticked, and
 * Excel keeps the last write of a setting, so a flag kept inside the binding could be erased by that
 * refresh. Each runtime writes only the settings it owns: refreshes the binding, the pane this flag.
 * Bindings written before issue #21 carry the flag as `refreshOnOpen: true`; the flag's own setting,
 * when present, wins ({@link readBindings} merges the two).
 */
import type { Binding } from "../refresh/binding";
import { readBindings } from "./bindingStore";
import { keepSetting } from "./settle";

/** Prefix of the flag settings (the binding id follows). */
export const OPEN_FLAG_PREFIX = "ppm.open.";

export function openFlagKey(bindingId: string): string {
  return OPEN_FLAG_PREFIX + bindingId;
}

export interface OpenFlagResult {
  binding: Binding;
  /** Bindings flagged after the change (drives the add-in's startup behaviour). */
  flagged: number;
}

/**
 * Sets or clears the flag of one binding (two syncs: read, write); writes only the flag's own
 * setting, never the binding.
 * @throws Error `table_missing` when no binding has that id.
 */
export async function setRefreshOnOpen(context: Excel.RequestContext, bindingId: string, on: boolean, _secrets: readonly string[] = []): Promise<OpenFlagResult> {
  const { bindings } = await readBindings(context);
  const current = bindings.find((b) => b.id === bindingId);
  if (!current) throw Object.assign(new Error(`No table binding "${bindingId}" in this workbook.`), { code: "table_missing" });
  const was = context.workbook.settings.getItemOrNullObject(openFlagKey(bindingId));
  was.load("value");
  context.workbook.settings.add(openFlagKey(bindingId), on);
  await context.sync();
  // Issue #35: kept against a co-author's stale settings copy (settled with the batch).
  keepSetting(context, { key: openFlagKey(bindingId), value: on, mode: "cas", previous: was.isNullObject ? null : { value: was.value } });
  const { refreshOnOpen: _drop, ...rest } = current;
  void _drop;
  const binding: Binding = on ? { ...rest, refreshOnOpen: true } : rest;
  const flagged = bindings.filter((b) => (b.id === bindingId ? on : b.refreshOnOpen === true)).length;
  return { binding, flagged };
}
