/**
 * A per-table lock kept IN THE WORKBOOK, so two runtimes (the ribbon's function runtime and the task
 * pane, or two windows of the same workbook) never refresh the same table at the same time: each has
 * its own JavaScript memory, only the document is shared.
 *
 * Stored as one workbook setting per table (`Excel.SettingCollection`, ExcelApi 1.4: a live part of the
 * document that every runtime reads and writes directly, unlike `Office.context.document.settings`,
 * which is a per-runtime copy until `refreshAsync`). The value names an owner (one random id per
 * acquisition, so even a double click in one runtime is told apart), who holds it and until when.
 * An expired lock (its runtime died, e.g. Excel closed the function runtime) is taken over.
 *
 * Acquiring costs three small syncs: read; write; read again. Two runtimes that both saw "free" both
 * write, and the re-read tells the loser (last writer wins in the document), which then backs off.
 *
 * Kept small and Office-only on purpose: issue #17 (shared runtime) reuses it as is.
 */
import { WriteError } from "./blocks";

/** Every lock setting starts with this; the rest is the table name in lower case (Excel names are case-insensitive). */
export const LOCK_SETTING_PREFIX = "ppm.lock.";

/**
 * How long a lock holds without being released. Longer than the ribbon's whole window (5 minutes) and
 * than a 200,000-row refresh on Excel on the web, so a live refresh is never taken over; short enough
 * that a table whose runtime died is free again within minutes.
 */
export const LOCK_TTL_MS = 10 * 60_000;

export interface LockRecord {
  owner: string;
  /** Who holds it, for the message the other caller gets ("task pane", "ribbon"). */
  holder: string;
  acquiredAt: string;
  expiresAt: string;
}

export interface TableLock {
  readonly key: string;
  readonly owner: string;
  /** Releases now (one sync); never throws (an unreleased lock expires). */
  release(): Promise<void>;
}

export interface LockOptions {
  /** Who is refreshing, shown to a second caller. Default "another window". */
  holder?: string;
  now?: () => Date;
  ttlMs?: number;
  /** Owner id; default a fresh random id per acquisition. */
  owner?: string;
}

export function lockSettingKey(tableName: string): string {
  return LOCK_SETTING_PREFIX + tableName.toLowerCase();
}

function parseLock(value: unknown): LockRecord | null {
  try {
    const v = (typeof value === "string" ? JSON.parse(value) : value) as Partial<LockRecord> | null;
    if (v && typeof v.owner === "string" && typeof v.expiresAt === "string") {
      return { owner: v.owner, holder: typeof v.holder === "string" ? v.holder : "another window", acquiredAt: String(v.acquiredAt ?? v.expiresAt), expiresAt: v.expiresAt };
    }
  } catch {
    /* unreadable: treated as no lock (it cannot name an owner to wait for) */
  }
  return null;
}

function busy(tableName: string, held: LockRecord): WriteError {
  const since = held.acquiredAt.slice(11, 19);
  return new WriteError(
    "table_busy",
    `The table "${tableName}" is being refreshed right now by ${held.holder} (since ${since} UTC). Wait for that refresh to finish, then refresh again.`,
  );
}

async function readLock(context: Excel.RequestContext, key: string): Promise<LockRecord | null> {
  const item = context.workbook.settings.getItemOrNullObject(key);
  item.load("value");
  await context.sync();
  return item.isNullObject ? null : parseLock(item.value);
}

/**
 * Takes the lock of one table or throws `WriteError("table_busy")` naming the table and who holds it.
 * Writes nothing to the sheet.
 */
export async function acquireTableLock(context: Excel.RequestContext, tableName: string, options: LockOptions = {}): Promise<TableLock> {
  const now = options.now ?? (() => new Date());
  const key = lockSettingKey(tableName);
  const owner = options.owner ?? `o${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 8).toString(36)}`;
  const current = await readLock(context, key);
  if (current && current.owner !== owner && Date.parse(current.expiresAt) > now().getTime()) throw busy(tableName, current);
  const record: LockRecord = {
    owner,
    holder: options.holder ?? "another window",
    acquiredAt: now().toISOString(),
    expiresAt: new Date(now().getTime() + (options.ttlMs ?? LOCK_TTL_MS)).toISOString(),
  };
  context.workbook.settings.add(key, JSON.stringify(record));
  await context.sync();
  const after = await readLock(context, key);
  if (!after || after.owner !== owner) throw busy(tableName, after ?? record);
  const lock: TableLock = {
    key,
    owner,
    async release() {
      try {
        const still = await readLock(context, key);
        if (still && still.owner === owner) {
          context.workbook.settings.getItemOrNullObject(key).delete();
          await context.sync();
        }
      } catch {
        /* the lock expires by itself */
      }
    },
  };
  return lock;
}
