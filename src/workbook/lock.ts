/**
 * A per-table lock kept IN THE WORKBOOK, so two runtimes (the ribbon's function runtime and the task
 * pane, or two windows of the same workbook) never refresh the same table at the same time: each has
 * its own JavaScript memory, only the document is shared.
 *
 * Stored as one workbook setting per table (`Excel.SettingCollection`, ExcelApi 1.4: a live part of the
 * document that every runtime reads and writes directly, unlike `Office.context.document.settings`,
 * which is a per-runtime copy until `refreshAsync`). The value names an owner (one random id per
 * acquisition, so even a double click in one runtime is told apart), who holds it, since when, and
 * until when.
 *
 * Taking it (issue #21, item 11): read; if free, write; then WAIT and read back. Two runtimes that read
 * "free" at the same moment both write, and Excel keeps the last write; a write that arrives late (a
 * slow network, a busy runtime) would otherwise overwrite a lock the other runtime has already read
 * back as its own. The wait (`lockTiming`: at least 250 ms and three round trips of this runtime,
 * measured on the first read) lets such a write land before the read-back, so the loser sees it and
 * backs off before writing any cell. A write later still is caught by the ownership check before every
 * write block (item 15, {@link TableLock.ensure}): a refresh that no longer holds its lock writes
 * nothing more and restores nothing (a newer refresh owns the table).
 *
 * Expiry (issue #26, replacing item 12's date rule): a lease measured on THIS runtime's clock only.
 * A lock version (owner + renewal stamp) holds for `LOCK_TTL_MS` from the moment this runtime first
 * saw it, whatever its dates say: another runtime's `acquiredAt`/`expiresAt` are never compared with
 * this clock, so a co-author whose clock is 15 minutes off never takes a live lock, and a corrupt or
 * far-future `expiresAt` never holds longer. A live refresh renews its lock as it goes (a renewal is a
 * new version, seen afresh), so a long refresh is never taken over; a lock whose runtime died frees
 * `LOCK_TTL_MS` after this runtime first saw its last version. A user can clear a lock that a runtime
 * left behind (`clearTableLock`, with a confirmation in the pane).
 *
 * Co-authoring (issue #26, hazard 1): each co-author's Excel holds its own copy of the settings and a
 * write reaches the others only later (Excel keeps the last write per setting). When the workbook is
 * in a co-authoring session (`Workbook.getIsActiveCollabSession()`, ExcelApi 1.9, asked with the first
 * read), the wait before the read-back is at least twice `lockTiming.propagationMs` (a co-author's
 * write made just before ours reached it has reached us by then; ours reached them, so they refuse),
 * and the read-back must find the lock exactly as written (same owner, same version). The limits are
 * in src/workbook/README.md ("Table locks under co-authoring"). That wait is paid once per table: a
 * caller that already holds the lock (refresh on open claims it before fetching, then refreshes)
 * passes its owner id on (`LockOptions.owner`), and the lock is reused after one read that finds it
 * still that owner's — no second write, no second wait; a lock that changed hands is refused.
 *
 * Fencing (issue #34, item 6): the checks above are the writer's own reads, and a request can reach
 * Excel long after it was sent (a stalled network, a frozen runtime): the lock read in the same request
 * as the write cannot stop it. So the last word is Excel's. Each lock owner has a FENCE, a setting of
 * its own (`ppm.f.<owner>`, written with the lock); every write request of a refresh begins
 * with `settings.getItem(<its fence>)` ({@link TableLock.fence}), which fails with ItemNotFound once the
 * fence is gone, and Excel runs none of the request's later actions (docs, OfficeExtension.Error: "All
 * other commands after the failed command in the batch are not executed"). Whoever takes a lock over
 * (an expired one, or one a user cleared) deletes the previous owner's fence in the same request as
 * its own lock, before it writes anything to the table: from then on no request of the old owner
 * changes a cell, however late it arrives. A fence that vanished for another reason (a co-author's
 * settings write replacing the collection) refuses the write too: safe, the refresh stops as if it
 * had lost its lock. A refresh whose write is refused stops with `lock_lost` and writes nothing more;
 * the table keeps its "DATA INCOMPLETE" info line and refresh marker, so the new owner (or the next
 * start) puts the dead refresh's table back before anything else (`recovery.ts`), never a mix.
 *
 * Fences under co-authoring, where a client's settings write replaces the WHOLE collection as that
 * client last knew it (issue #35: a stale co-author's write can put back a deleted key or erase a new
 * one). Erasing a fence only refuses its owner's writes: safe. Putting back a revoked fence is the
 * danger: old owner A's stalled request could land after B took over. Why it cannot, within the
 * propagation bound the lock already rests on: (1) a lock and its fence are written in one request,
 * and every request that deletes a fence (takeover, release, clear) also rewrites or deletes that
 * lock, so a collection that holds A's fence also holds A's lock (a snapshot is the state after whole
 * requests); (2) a takeover writes nothing to the table before its read-back, which waits at least
 * twice `propagationMs` wherever the document may be shared: a co-author's write made before the
 * takeover reached it arrives within that wait, and if it put A's fence back it put A's lock back, so
 * the read-back finds A's lock and B backs off (`table_busy`) before any cell. A's stalled request then
 * lands on a table nobody else touched, and A (its lock its own again) completes: one export, whole
 * (test/workbook/fencing.test.ts, "a co-author's stale settings write…"). A co-author's write after the
 * takeover reached it carries the takeover. Only a write delayed beyond the bound could resurrect A's
 * fence after B started writing — the same failure the lock itself admits (README, "Table locks under
 * co-authoring"). A monotonically increasing token would not help: the stale collection restores a
 * state in which A's token was the current one, so any check inside Excel that passed then passes
 * again, and Excel has no in-request comparison of a request's constant with stored state beyond a
 * lookup's existence. A fence that no settings write can restore must live outside the settings (e.g.
 * a very hidden sheet per owner, `worksheets.getItem`), at the price of structural changes that merge-
 * conflict under co-authoring: not taken. For whoever merges #35's retry after an erased lock: each
 * attempt must write the fence with the lock (and revoke the previous owner's) for (1) to hold.
 */
import { WriteError } from "./blocks";

/** Every lock setting starts with this; the rest is the table name in lower case (Excel names are case-insensitive). */
export const LOCK_SETTING_PREFIX = "ppm.lock.";

/**
 * How long a lock holds without being renewed. Longer than the ribbon's whole window (5 minutes) and
 * than a block of a 200,000-row refresh on Excel on the web, so a live refresh (which renews its lock
 * at half this) is never taken over; short enough that a table whose runtime died is free again
 * within minutes.
 */
export const LOCK_TTL_MS = 10 * 60_000;
/** An ownership check older than this is repeated (fresh read) before the next write. */
export const CHECK_FRESH_MS = 2_000;

/**
 * The wait between writing a lock and reading it back: `max(minSettleMs, rttFactor × the round trip
 * of the first read)`, at most `maxSettleMs`. Tests that do not race set `minSettleMs` to 0.
 */
export const lockTiming = {
  minSettleMs: 250,
  rttFactor: 3,
  maxSettleMs: 3_000,
  /**
   * Co-authoring: the bound on how long a co-author's change takes to reach this copy. Microsoft
   * documents none ("Coauthoring in Excel add-ins": changes appear "as soon as" they are saved; with
   * AutoSave, in real time); 5 s covers what co-authoring shows on the web in practice. In a
   * co-authoring session the lock waits twice this (there and back) before it reads back.
   */
  propagationMs: 5_000,
};

export interface LockRecord {
  owner: string;
  /** Who holds it, for the message the other caller gets ("the task pane", "Refresh all on the ribbon"). */
  holder: string;
  acquiredAt: string;
  /** Last renewal (absent in locks written before issue #21: the acquisition time). */
  renewedAt?: string;
  expiresAt: string;
}

export interface TableLock {
  readonly key: string;
  readonly owner: string;
  /** Releases now (one sync); never throws (an unreleased lock expires). Only ever deletes its own lock. */
  release(): Promise<void>;
  /**
   * Call before queueing each write block: throws `WriteError("lock_lost")` when the lock is no longer
   * this refresh's (another runtime took it over, or the user cleared it). Reads the lock again (one
   * sync, nothing else queued) when the last check is older than `CHECK_FRESH_MS`, and renews it when
   * half its time is used.
   */
  ensure(): Promise<void>;
  /**
   * The request context with every `sync()` also reading the lock (a few bytes), so {@link ensure}
   * rarely needs a sync of its own.
   */
  readonly context: Excel.RequestContext;
  /** True once a check found the lock taken by someone else. */
  readonly lost: boolean;
  /**
   * Call right after {@link ensure} and before queueing a write request: its first action is then the
   * fence check, so Excel refuses the whole request once the lock changed hands (see "Fencing"). The
   * request's sync then fails with `WriteError("lock_lost")` and nothing of it is applied.
   */
  fence(): void;
  /** {@link ensure}, then {@link fence}: what every write request of a refresh begins with. */
  ensureFenced(): Promise<void>;
  /**
   * On: from now on every request of this holder begins with the fence (for a phase of several writes
   * whose requests are sent by helpers: call it right after a sync). Off: no fence is queued after the
   * next request (the one already queued still leads it).
   */
  fenceEachRequest(on: boolean): void;
  /**
   * Excel said, when the lock was taken, that co-authors have this document open
   * (`getIsActiveCollabSession`): every cell the refresh changes reaches each of them (issue #26).
   */
  readonly collab: boolean;
}

export interface LockOptions {
  /** Who is refreshing, shown to a second caller. Default "another window". */
  holder?: string;
  now?: () => Date;
  ttlMs?: number;
  /**
   * The owner id of a lock the caller ALREADY HOLDS (it took it with {@link acquireTableLock} and
   * passes it on, issue #26: refresh on open claims the table before fetching). Then the lock is
   * reused as it stands: one read, no write, no wait (the claim already waited out the co-authoring
   * bound and read it back); a lock that is no longer that owner's is refused (`table_busy` while
   * another holds it, `lock_lost` otherwise). Absent: a fresh random id, and the lock is taken.
   */
  owner?: string;
  /** Waits `ms` (tests replace it). */
  sleep?: (ms: number) => Promise<void>;
}

export function lockSettingKey(tableName: string): string {
  return LOCK_SETTING_PREFIX + tableName.toLowerCase();
}

/** Every fence setting starts with this (see the module comment, "Fencing"). */
export const FENCE_SETTING_PREFIX = "ppm.f.";

/**
 * The fence of one lock owner: its existence is what lets that owner's write requests run. Owner ids
 * are random per acquisition, so the key needs no table name (and stays short: every write request
 * names it).
 */
export function fenceSettingKey(owner: string): string {
  return FENCE_SETTING_PREFIX + owner;
}

/**
 * Queues deleting a fence whether or not it exists (a method on a null object would fail the request):
 * it is added (or replaced), then deleted.
 */
function queueRevokeFence(context: Excel.RequestContext, key: string): void {
  const settings = context.workbook.settings;
  settings.add(key, "revoked");
  settings.getItem(key).delete();
}

export function parseLock(value: unknown): LockRecord | null {
  try {
    const v = (typeof value === "string" ? JSON.parse(value) : value) as Partial<LockRecord> | null;
    if (v && typeof v.owner === "string" && typeof v.expiresAt === "string") {
      const acquiredAt = String(v.acquiredAt ?? v.expiresAt);
      return { owner: v.owner, holder: typeof v.holder === "string" ? v.holder : "another window", acquiredAt, renewedAt: typeof v.renewedAt === "string" ? v.renewedAt : acquiredAt, expiresAt: v.expiresAt };
    }
  } catch {
    /* unreadable: treated as no lock (it cannot name an owner to wait for) */
  }
  return null;
}

/**
 * When this runtime first saw each lock version (owner + renewal stamp), by its own clock: the only
 * clock a lease is measured on. One map per JavaScript realm, i.e. per runtime in Excel.
 */
const firstSeen = new Map<string, number>();

/** A lock's version: a renewal makes a new one. */
export function lockVersion(lock: LockRecord): string {
  return `${lock.owner}|${lock.renewedAt ?? lock.acquiredAt}`;
}

/**
 * When a lock stops holding, by this runtime's clock: `LOCK_TTL_MS` after this runtime first saw this
 * version of it. Its own dates are another runtime's clock and are never compared with `now`; an
 * unreadable date still frees nothing early (it is only a version stamp).
 */
export function lockExpiry(lock: LockRecord, now: number, ttlMs = LOCK_TTL_MS): number {
  const id = lockVersion(lock);
  if (!firstSeen.has(id)) {
    // Bounded memory: versions are a few per table; forget the oldest beyond a generous number.
    if (firstSeen.size > 1_000) firstSeen.delete(firstSeen.keys().next().value as string);
    firstSeen.set(id, now);
  }
  return firstSeen.get(id)! + ttlMs;
}

/** True when a lock still holds at `now`. */
export function lockHolds(lock: LockRecord, now: number, ttlMs = LOCK_TTL_MS): boolean {
  return lockExpiry(lock, now, ttlMs) > now;
}

/** Forgets what {@link lockExpiry} remembered (tests). */
export function resetLockMemory(): void {
  firstSeen.clear();
}

function busy(tableName: string, held: LockRecord, now: number): WriteError {
  const since = held.acquiredAt.slice(11, 16);
  const day = held.acquiredAt.slice(0, 10);
  const today = new Date(now).toISOString().slice(0, 10);
  const until = new Date(lockExpiry(held, now)).toISOString();
  return new WriteError(
    "table_busy",
    `The table "${tableName}" is being refreshed right now by ${held.holder} (since ${day === today ? "" : `${day} `}${since} UTC). Wait for that refresh to finish, then refresh again. If nothing is refreshing it (a window was closed while it ran), the lock frees itself at ${until.slice(11, 16)} UTC, or clear it from the Refresh tab.`,
    { holder: held.holder, lockedUntil: until },
  );
}

function lockLost(tableName: string, now: LockRecord | null): WriteError {
  return new WriteError(
    "lock_lost",
    now
      ? `The refresh of "${tableName}" stopped: ${now.holder} took over the table while it ran (its lock had run out or was cleared). Nothing more was written; that refresh owns the table now.`
      : `The refresh of "${tableName}" stopped: its lock was cleared while it ran. Nothing more was written; refresh again.`,
  );
}

/**
 * Queues `Workbook.getIsActiveCollabSession()` (ExcelApi 1.9, under the add-in's 1.13 floor) with the
 * caller's next sync; `value` is read after it. False where the host cannot say.
 */
function isCollabSession(context: Excel.RequestContext): { readonly value: boolean } {
  let result: ReturnType<Excel.Workbook["getIsActiveCollabSession"]> | null = null;
  try {
    result = typeof context.workbook.getIsActiveCollabSession === "function" ? context.workbook.getIsActiveCollabSession() : null;
  } catch {
    result = null;
  }
  return {
    get value() {
      try {
        return result?.value === true;
      } catch {
        return false;
      }
    },
  };
}

async function readLock(context: Excel.RequestContext, key: string): Promise<LockRecord | null> {
  const item = context.workbook.settings.getItemOrNullObject(key);
  item.load("value");
  await context.sync();
  return item.isNullObject ? null : parseLock(item.value);
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the lock of one table or throws `WriteError("table_busy")` naming the table and who holds it.
 * Writes nothing to the sheet.
 */
export async function acquireTableLock(context: Excel.RequestContext, tableName: string, options: LockOptions = {}): Promise<TableLock> {
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? realSleep;
  const ttl = options.ttlMs ?? LOCK_TTL_MS;
  const key = lockSettingKey(tableName);
  const owner = options.owner ?? `o${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 8).toString(36)}`;
  const started = Date.now();
  const collab = isCollabSession(context);
  const current = await readLock(context, key);
  const rtt = Date.now() - started;
  if (options.owner !== undefined) return reuseHeldLock(context, tableName, key, current, options.owner, ttl, now, collab.value);
  if (current && current.owner !== owner && lockHolds(current, now().getTime())) throw busy(tableName, current, now().getTime());
  const stamp = now().toISOString();
  const record: LockRecord = { owner, holder: options.holder ?? "another window", acquiredAt: stamp, renewedAt: stamp, expiresAt: new Date(now().getTime() + ttl).toISOString() };
  // Taking over: the previous owner's fence goes first, in the request that writes this lock and its fence.
  if (current && current.owner !== owner) queueRevokeFence(context, fenceSettingKey(current.owner));
  context.workbook.settings.add(key, JSON.stringify(record));
  context.workbook.settings.add(fenceSettingKey(owner), "1");
  await context.sync();
  // Let a write another runtime sent at the same time land before reading back (see the module comment).
  let settle = Math.min(lockTiming.maxSettleMs, Math.max(lockTiming.minSettleMs, lockTiming.rttFactor * rtt));
  // Co-authors' copies: a write made before ours reached them reaches us within the propagation bound, and ours reaches them.
  if (collab.value) settle = Math.max(settle, 2 * lockTiming.propagationMs + lockTiming.rttFactor * rtt);
  if (settle > 0) await sleep(settle);
  const after = await readLock(context, key);
  if (!after || after.owner !== owner || lockVersion(after) !== lockVersion(record)) {
    // Lost the race: this owner's fence goes (it would let nothing through: this refresh writes nothing).
    try {
      queueRevokeFence(context, fenceSettingKey(owner));
      await context.sync();
    } catch {
      /* a leftover fence of an owner that never writes is harmless */
    }
    throw busy(tableName, after ?? record, now().getTime());
  }
  return heldLock(context, tableName, key, record, ttl, now, true, collab.value);
}

/**
 * A lock the caller already holds under `owner` (see {@link LockOptions.owner}): `current` is this
 * call's own read of it, the read-back (no wait: the acquisition that took it waited already). Reused
 * only when it is still that owner's and still within its lease by this runtime's clock; its release
 * is left to the caller that took it (it releases after its own last step).
 */
function reuseHeldLock(context: Excel.RequestContext, tableName: string, key: string, current: LockRecord | null, owner: string, ttl: number, now: () => Date, collab: boolean): TableLock {
  const t = now().getTime();
  if (!current || current.owner !== owner) {
    if (current && lockHolds(current, t)) throw busy(tableName, current, t);
    throw lockLost(tableName, current);
  }
  if (!lockHolds(current, t, ttl)) throw lockLost(tableName, null);
  return heldLock(context, tableName, key, current, ttl, now, false, collab);
}

/**
 * The {@link TableLock} of a lock this runtime holds (`record` as stored); `releases`: its release
 * deletes it; `collab`: Excel said co-authors are present when it was read.
 */
function heldLock(context: Excel.RequestContext, tableName: string, key: string, held: LockRecord, ttl: number, now: () => Date, releases: boolean, collab: boolean): TableLock {
  const owner = held.owner;
  const fenceKey = fenceSettingKey(owner);
  let record = held;
  let lastCheck = Date.now();
  let lost = false;
  let seenBy: LockRecord | null = null;
  /** A fence check is queued: the next request begins with it. */
  let fenceQueued = false;
  /** Every request begins with the fence ({@link TableLock.fenceEachRequest}). */
  let fenceAll = false;
  const check = (value: LockRecord | null) => {
    lastCheck = Date.now();
    if (!value || value.owner !== owner) {
      lost = true;
      seenBy = value;
    }
  };
  const queueFence = () => {
    if (fenceQueued) return;
    // Microsoft's library instantiates every object it is asked for in the next request, in order
    // (an Instantiate action on `settings.getItem(key)`): Excel resolves the key there, and a missing
    // fence fails the request at that action, before anything queued after it (a `load` would only
    // add bytes: test/workbook/fencing.test.ts shows the request refused).
    context.workbook.settings.getItem(fenceKey);
    fenceQueued = true;
  };
  /** After a fenced request failed: was it refused because the fence is gone (the lock changed hands)? */
  const refusedByFence = async (): Promise<boolean> => {
    try {
      const fence = context.workbook.settings.getItemOrNullObject(fenceKey);
      fence.load("key");
      const item = context.workbook.settings.getItemOrNullObject(key);
      item.load("value");
      await context.sync();
      if (!fence.isNullObject) return false;
      lost = true;
      const now = item.isNullObject ? null : parseLock(item.value);
      seenBy = now?.owner === owner ? null : now;
      return true;
    } catch {
      return false;
    }
  };
  /**
   * Every request this lock's holder sends: a request that began with the fence and failed is checked
   * (was the fence gone? then `lock_lost`: nothing of it landed). With {@link fenceAll} the next
   * request's fence is queued as soon as this one is answered, before anything else is queued.
   */
  const send = async (): Promise<void> => {
    const fenced = fenceQueued;
    fenceQueued = false;
    try {
      await context.sync();
      // A request that began with the fence and ran proves the lock was this holder's when it ran.
      if (fenced) lastCheck = Date.now();
    } catch (e) {
      if (fenced && (await refusedByFence())) throw lockLost(tableName, seenBy);
      throw e;
    } finally {
      if (fenceAll && !lost) queueFence();
    }
  };
  const readOwn = async (): Promise<LockRecord | null> => {
    const item = context.workbook.settings.getItemOrNullObject(key);
    item.load("value");
    // `send` is this holder's sync (the fence's bookkeeping around `context.sync()`).
    await send();
    // eslint-disable-next-line office-addins/call-sync-before-read, office-addins/call-sync-after-load -- synced by `send` just above
    return item.isNullObject ? null : parseLock(item.value);
  };
  // Every sync of the refresh also reads the lock (see `context` below).
  const guarded = {
    workbook: context.workbook,
    application: context.application,
    trackedObjects: context.trackedObjects,
    async sync(): Promise<void> {
      if (lost) throw lockLost(tableName, seenBy);
      // Read with every request, fenced or not: a lock written over by a runtime that does not know of
      // fences (an older version of the add-in) is seen at the next request all the same.
      check(await readOwn());
    },
  } as unknown as Excel.RequestContext;
  const lock: TableLock = {
    key,
    owner,
    collab,
    context: guarded,
    get lost() {
      return lost;
    },
    fence() {
      // Queued first in the next request (the caller queues its writes after it): Excel stops there when the fence is gone.
      queueFence();
    },
    fenceEachRequest(on: boolean) {
      fenceAll = on;
      if (on && !lost) queueFence();
    },
    async ensureFenced() {
      await lock.ensure();
      lock.fence();
    },
    async ensure() {
      if (lost) throw lockLost(tableName, seenBy);
      if (Date.now() - lastCheck > CHECK_FRESH_MS) check(await readOwn());
      if (lost) throw lockLost(tableName, seenBy);
      const t = now().getTime();
      if (t - Date.parse(record.renewedAt ?? record.acquiredAt) > ttl / 2) {
        // Renewed in a request of its own, right after the check above.
        record = { ...record, renewedAt: new Date(t).toISOString(), expiresAt: new Date(t + ttl).toISOString() };
        context.workbook.settings.add(key, JSON.stringify(record));
        await send();
      }
    },
    async release() {
      fenceAll = false;
      if (!releases) {
        // The caller that took the lock releases it; a fence still queued is sent now, not with its requests.
        if (fenceQueued) await send().catch(() => undefined);
        return;
      }
      try {
        const still = await readOwn();
        if (still && still.owner === owner) {
          // The lock first: were the fence gone (a co-author's settings write replaced the collection),
          // its delete would fail the request after the lock's delete had run.
          context.workbook.settings.getItemOrNullObject(key).delete();
          context.workbook.settings.getItemOrNullObject(fenceKey).delete();
          await send();
        }
      } catch {
        /* the lock expires by itself */
      }
    },
  };
  return lock;
}

/** The lock on a table as stored, with when it stops holding by this runtime's clock; null when there is none. */
export async function readTableLock(context: Excel.RequestContext, tableName: string, now: Date = new Date()): Promise<(LockRecord & { holds: boolean; until: string }) | null> {
  const lock = await readLock(context, lockSettingKey(tableName));
  if (!lock) return null;
  const t = now.getTime();
  return { ...lock, holds: lockHolds(lock, t), until: new Date(lockExpiry(lock, t)).toISOString() };
}

/**
 * Clears a table's lock (issue #21, item 12): for a lock a runtime left behind, after the user
 * confirmed that nothing is refreshing the table. Deletes only the lock it was shown (`owner`), so a
 * refresh that took the table since is never cleared by a stale confirmation. A refresh still
 * running under the cleared lock stops before its next write (its ownership check fails).
 * @returns false when the lock was already gone or has another owner now.
 */
export async function clearTableLock(context: Excel.RequestContext, tableName: string, owner: string): Promise<boolean> {
  const key = lockSettingKey(tableName);
  const current = await readLock(context, key);
  if (!current || current.owner !== owner) return false;
  context.workbook.settings.getItemOrNullObject(key).delete();
  // Its fence with it: a refresh still running under the cleared lock has its next write refused by Excel.
  queueRevokeFence(context, fenceSettingKey(owner));
  await context.sync();
  return true;
}
