/**
 * The register of settings writes to settle (issue #35; the waiting and repairing is `settle.ts`).
 * Kept apart from `settle.ts` so that `lock.ts` registers its release without importing what imports it.
 */
/** One write to keep: `value` as given to `settings.add` (absent with `deleted`: the key was deleted). */
export interface KeptSetting {
  key: string;
  value?: unknown;
  deleted?: boolean;
  /**
   * How a loss is told and repaired:
   * - `cas` (a binding, a flag, a lock, anything others may change too): written again only when it
   *   stands at `previous` (the value it had before this write; null when the key was absent): a
   *   co-author's stale copy put it back. A value that is neither is someone's later change and is
   *   left alone;
   * - `merge` (this runtime's refresh-log key, which it may append to again meanwhile): `merge`
   *   returns what to write over the stored value (undefined: nothing is missing).
   */
  mode: "cas" | "merge";
  previous?: { value: unknown } | null;
  merge?: (stored: unknown) => unknown;
}

/** Rounds of wait, read back, write again. */
export const SETTLE_ROUNDS = 5;

interface Pending {
  items: Map<string, KeptSetting>;
  shared: boolean;
}

/**
 * Per request context (keyed by its `workbook` object, which a lock's guarded context shares with
 * the context it wraps).
 */
const pending = new WeakMap<object, Pending>();

function slot(context: Excel.RequestContext): Pending {
  const key = context.workbook as unknown as object;
  let p = pending.get(key);
  if (!p) {
    p = { items: new Map(), shared: false };
    pending.set(key, p);
  }
  return p;
}

/**
 * Registers a settings write that has reached Excel (call after its `sync` succeeded). `shared`:
 * Excel said co-authors are present (the writer asked); without it, the settle waits only where the
 * document may be co-authored (`lockTiming.mayBeShared()`, decided when it settles).
 */
export function keepSetting(context: Excel.RequestContext, kept: KeptSetting, shared = false): void {
  const p = slot(context);
  p.shared ||= shared;
  const was = p.items.get(kept.key);
  // A second write of one key in the same batch: its value is the one to keep, its first `previous` the one to detect.
  p.items.set(kept.key, was && kept.mode === "cas" ? { ...kept, previous: was.previous } : kept);
}

/** Whether anything waits to be settled on this context. */
export function hasUnsettled(context: Excel.RequestContext): boolean {
  return (pending.get(context.workbook)?.items.size ?? 0) > 0;
}


/** Takes what is registered on this context (nothing is left registered). */
export function takePending(context: Excel.RequestContext): { items: KeptSetting[]; shared: boolean } | null {
  const key = context.workbook as unknown as object;
  const p = pending.get(key);
  if (!p || p.items.size === 0) return null;
  pending.delete(key);
  return { items: [...p.items.values()], shared: p.shared };
}
