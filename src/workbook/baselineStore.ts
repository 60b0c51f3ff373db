/**
 * Where write-back import records (baselines, `src/records/baseline.ts`) are kept in the workbook.
 *
 * Every read and write of a baseline goes through the one {@link baselineStore} below, so the storage
 * can move (issue 10 moves baselines out of document settings, which fail near 1 MB) by replacing
 * this object alone. Today: one document setting per binding, `ppm.records.baseline.<bindingId>`.
 */
import { BASELINE_SETTING_PREFIX, baselineSettingKey, parseBaseline, serializeBaseline, type Baseline } from "../records/baseline";

export interface BaselineStore {
  /** The record of a binding; null when none. @throws BaselineError when stored but unreadable. */
  read(context: Excel.RequestContext, bindingId: string): Promise<Baseline | null>;
  /** Stores (replaces) the record of `baseline.bindingId`. */
  save(context: Excel.RequestContext, baseline: Baseline): Promise<void>;
  /** Deletes the records whose binding is not in `liveBindingIds`; returns how many. */
  prune(context: Excel.RequestContext, liveBindingIds: readonly string[]): Promise<number>;
}

/** Baselines in document settings (one `sync` per call). */
export const settingsBaselineStore: BaselineStore = {
  async read(context, bindingId) {
    const item = context.workbook.settings.getItemOrNullObject(baselineSettingKey(bindingId));
    item.load("value");
    await context.sync();
    if (item.isNullObject) return null;
    return parseBaseline(item.value);
  },
  async save(context, baseline) {
    context.workbook.settings.add(baselineSettingKey(baseline.bindingId), serializeBaseline(baseline));
    await context.sync();
  },
  async prune(context, liveBindingIds) {
    const settings = context.workbook.settings;
    settings.load("items/key");
    await context.sync();
    let removed = 0;
    for (const s of settings.items) {
      if (s.key.startsWith(BASELINE_SETTING_PREFIX) && !liveBindingIds.includes(s.key.slice(BASELINE_SETTING_PREFIX.length))) {
        s.delete();
        removed++;
      }
    }
    if (removed) await context.sync();
    return removed;
  },
};

/** The store write-back uses. */
export const baselineStore: BaselineStore = settingsBaselineStore;
