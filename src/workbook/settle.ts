/**
 * Settings writes that must survive co-authoring (issue #35; decision in `src/workbook/README.md`,
 * "Settings under co-authoring").
 *
 * Microsoft documents no merge rule for the document settings of two co-authors. `Office.Settings` is
 * documented as an in-memory copy per add-in instance that `saveAsync` persists whole; in Word a
 * co-author's settings change reloads the other user's add-in (office-js #4354). The strict reading,
 * which the emulated host takes: a client's settings write sends its WHOLE collection as that copy
 * knows it, so a key a co-author wrote less than one propagation delay earlier (not yet in the
 * writer's copy) vanishes, and a key changed that recently goes back to its older value.
 *
 * Such a loss can only come from a write made before the writer's copy received ours: by then a
 * co-author's change has reached us within one propagation bound, and ours reached them. So a write
 * that is still as written `2 × lockTiming.propagationMs` after it was made is durable (until someone
 * changes it on purpose). Every settings write the add-in must not lose is registered here
 * ({@link keepSetting}) once its request succeeded, and {@link settleSettings} waits out that window
 * once for everything registered on the request context, reads the keys back, and writes again what
 * a co-author's stale copy undid (a new write, so it waits again; at most {@link SETTLE_ROUNDS} rounds).
 *
 * Only where the document may be co-authored (`lockTiming.mayBeShared()`, set by the add-in runtime
 * from the document's address, or Excel said co-authors are present): a local file never waits. The
 * add-in's own batches settle after their result was handed back (`src/addin/engine.ts`), so the
 * user never waits for it; a runtime that dies during the wait leaves the write as it stands.
 */
import { lockTiming } from "./lock";
import { takePending, SETTLE_ROUNDS, type KeptSetting } from "./settleRegistry";

export { keepSetting, hasUnsettled, SETTLE_ROUNDS, type KeptSetting } from "./settleRegistry";

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits out the co-authoring window once for every write registered on `context`, reads the keys
 * back and writes again those a co-author's stale copy undid (see the module comment). Never throws.
 * @returns the keys still undone after the last round (empty: every write is durable).
 */
export async function settleSettings(context: Excel.RequestContext, options: { sleep?: (ms: number) => Promise<void> } = {}): Promise<string[]> {
  const p = takePending(context);
  // Nothing written, or a document nobody else can have open: nothing to wait for.
  if (!p || (!p.shared && !lockTiming.mayBeShared())) return [];
  const sleep = options.sleep ?? realSleep;
  let items: KeptSetting[] = p.items;
  try {
    for (let round = 0; round < SETTLE_ROUNDS && items.length > 0; round++) {
      // Two runtimes repairing at the same moment would undo each other again (each sends its whole
      // collection): after the first round each waits a random extra of up to four times the bound, so
      // their repairs fall more than one propagation apart and the later one carries the earlier.
      await sleep(2 * lockTiming.propagationMs + (round > 0 ? Math.floor(Math.random() * 4 * lockTiming.propagationMs) : 0));
      const read = items.map((k) => {
        const item = context.workbook.settings.getItemOrNullObject(k.key);
        item.load("value");
        return item;
      });
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- one read per settle round (a round waits the co-authoring window first), at most SETTLE_ROUNDS
      await context.sync();
      const undone: KeptSetting[] = [];
      items.forEach((k, i) => {
        const raw = read[i].isNullObject ? undefined : (read[i].value as unknown);
        if (k.mode === "merge") {
          const value = k.merge?.(raw);
          if (value !== undefined) undone.push({ ...k, value });
          return;
        }
        const stored = raw === undefined ? null : canon(raw);
        if (stored === (k.deleted ? null : canon(k.value))) return;
        if (k.previous !== undefined && stored === (k.previous === null ? null : canon(k.previous.value))) undone.push(k);
      });
      for (const k of undone) {
        if (k.deleted) context.workbook.settings.getItemOrNullObject(k.key).delete();
        else context.workbook.settings.add(k.key, k.value);
      }
      // eslint-disable-next-line office-addins/no-context-sync-in-loop -- the repairs of one round in one request
      if (undone.length > 0) await context.sync();
      items = undone;
    }
    return items.length > 0 ? items.map((k) => k.key) : [];
  } catch {
    return items.map((k) => k.key);
  }
}

/** A setting's value compared by its JSON text (settings hold JSON values). */
function canon(value: unknown): string {
  return JSON.stringify(value) ?? "undefined";
}
