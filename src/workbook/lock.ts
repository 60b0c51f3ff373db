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
 * in src/workbook/README.md ("Table locks under co-authoring"). Issue #35: Excel's flag lags, so where
 * the document may be co-authored a false flag is not believed while it may lag or when someone else
 * is seen ({@link coauthorsPossible}); a solo user otherwise waits only the short wait ("What the
 * co-authoring wait costs" in the README). That wait is paid once per table: a
 * caller that already holds the lock (refresh on open claims it before fetching, then refreshes)
 * passes its owner id on (`LockOptions.owner`), and the lock is reused after one read that finds it
 * still that owner's — no second write, no second wait; a lock that changed hands is refused.
 */
import { WriteError } from "./blocks";
import { keepSetting } from "./settleRegistry";

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
  /**
   * Issue #35: whether this document may be co-authored at all. `getIsActiveCollabSession()` lags
   * ("there might be some delay", Excel.Workbook): a colleague who has just joined is not in it yet,
   * so a false answer proves nothing, and wherever co-authoring is possible the lock waits the
   * co-authoring bound and a refresh takes the co-authoring path. The add-in runtime sets this from
   * the document's address (`src/addin/runtime.ts`: only a workbook in the cloud can be co-authored);
   * elsewhere (a local file, the Node tests, the bench) false: only Excel's flag says so.
   */
  mayBeShared: (): boolean => false,
  /** Issue #35: acquisitions tried when a co-author's stale settings write erased the lock before its read-back. */
  attempts: 3,
  /**
   * Issue #35: how long `getIsActiveCollabSession()` may lag behind the session. Microsoft gives no
   * figure ("there might be some delay"); 30 s is the emulated host's default lag. Within this long of
   * this runtime's start, or of Excel last saying co-authors are present, a false flag is not believed
   * (see {@link coauthorsPossible}).
   */
  flagLagMs: 30_000,
};

/** Issue #35: this runtime's start (realm clock), and when Excel last said co-authors were present. */
const presence = { startedAt: Date.now(), coauthorsSeenAt: Number.NEGATIVE_INFINITY };

/**
 * Issue #35, the cost decision (src/workbook/README.md, "What the co-authoring wait costs"): where the
 * document may be co-authored, whether a lock must wait the co-authoring bound (`2 × propagationMs`)
 * before its read-back although Excel's flag says "alone". Only when the false flag cannot be
 * trusted or someone else is seen:
 * - this runtime started less than `flagLagMs` ago (a colleague whose runtime this is may have just
 *   joined: its own flag lags too), or Excel said co-authors were present less than `flagLagMs` ago
 *   (they may still be: the flag lags on the way out as well);
 * - `contended`: the first read found another owner's lock on the table (live or not: someone else
 *   refreshes it), or a read-back found the lock erased (a co-author's stale settings write).
 * A solo user refreshing a workbook in the cloud, its pane open for longer than the lag, therefore
 * waits what a local file waits (≥ 250 ms), not 10 s.
 */
function coauthorsPossible(now: number, contended: boolean): boolean {
  return contended || now - presence.startedAt < lockTiming.flagLagMs || now - presence.coauthorsSeenAt < lockTiming.flagLagMs;
}

/** Issue #35: Excel said co-authors are present (any reader of the flag may tell). */
export function noteCoauthors(now = Date.now()): void {
  presence.coauthorsSeenAt = now;
}

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
  // A fresh runtime (issue #35): started now, no co-author seen yet.
  presence.startedAt = Date.now();
  presence.coauthorsSeenAt = Number.NEGATIVE_INFINITY;
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

/** A fresh owner id: one per acquisition, so even a double click in one runtime is told apart. */
const newOwner = () => `o${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 8).toString(36)}`;

/**
 * The wait between writing a lock and reading it back, for a first read that took `rtt` ms: let a
 * write another runtime sent at the same time land (see the module comment); where the document may
 * be co-authored, at least twice the propagation bound (a co-author's write made before ours reached
 * them reaches us within one bound, and ours reaches them).
 */
function settleMs(rtt: number, shared: boolean): number {
  const settle = Math.min(lockTiming.maxSettleMs, Math.max(lockTiming.minSettleMs, lockTiming.rttFactor * rtt));
  return shared ? Math.max(settle, 2 * lockTiming.propagationMs + lockTiming.rttFactor * rtt) : settle;
}

/**
 * Takes the lock of one table or throws `WriteError("table_busy")` naming the table and who holds it.
 * Writes nothing to the sheet.
 */
export async function acquireTableLock(context: Excel.RequestContext, tableName: string, options: LockOptions = {}): Promise<TableLock> {
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? realSleep;
  const ttl = options.ttlMs ?? LOCK_TTL_MS;
  const key = lockSettingKey(tableName);
  const owner = options.owner ?? newOwner();
  const started = Date.now();
  const collab = isCollabSession(context);
  let current = await readLock(context, key);
  const rtt = Date.now() - started;
  if (collab.value) noteCoauthors();
  // Issue #35: a false flag proves nothing (it lags); where the document may be co-authored the refresh
  // takes the co-authoring path (`collab` of the lock) whatever the flag says.
  const shared = collab.value || lockTiming.mayBeShared();
  if (options.owner !== undefined) return reuseHeldLock(context, tableName, key, current, options.owner, ttl, now, shared);
  // The co-authoring wait only when it is needed (see coauthorsPossible): Excel says co-authors are
  // here, or the document may be co-authored and the flag cannot be trusted or someone else is seen.
  let contended = current !== null && current.owner !== owner;
  for (let attempt = 1; ; attempt++) {
    if (current && current.owner !== owner && lockHolds(current, now().getTime())) throw busy(tableName, current, now().getTime());
    const stamp = now().toISOString();
    const record: LockRecord = { owner, holder: options.holder ?? "another window", acquiredAt: stamp, renewedAt: stamp, expiresAt: new Date(now().getTime() + ttl).toISOString() };
    context.workbook.settings.add(key, JSON.stringify(record));
    // eslint-disable-next-line office-addins/no-context-sync-in-loop -- a retry only after a co-author's write erased the lock (issue #35), at most `attempts` times
    await context.sync();
    const full = collab.value || (lockTiming.mayBeShared() && coauthorsPossible(Date.now(), contended));
    const settle = settleMs(rtt, full);
    if (settle > 0) await sleep(settle);
    const after = await readLock(context, key);
    if (after && after.owner === owner && lockVersion(after) === lockVersion(record)) {
      // The short wait where the document may be co-authored: until the co-authoring bound has passed,
      // a co-author's stale settings write can still erase the lock; the holder then writes it again.
      const retakeUntil = shared && !full ? Date.now() + 2 * lockTiming.propagationMs : 0;
      return heldLock(context, tableName, key, record, ttl, now, true, shared, retakeUntil);
    }
    if (after) throw busy(tableName, after, now().getTime());
    if (attempt >= lockTiming.attempts) {
      throw new WriteError("table_busy", `The table "${tableName}" could not be locked for this refresh: a colleague's add-in changed this workbook's settings at the same moment ${attempt} times in a row, which erased the lock each time. Nothing was written. Refresh again in a moment.`);
    }
    // Issue #35: the key is gone. A co-author's settings write from a copy that had not received
    // ours replaced the collection (nobody holds the table): take it again, waiting again, the full
    // co-authoring bound this time (a co-author is there).
    current = null;
    contended = true;
  }
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
function heldLock(context: Excel.RequestContext, tableName: string, key: string, held: LockRecord, ttl: number, now: () => Date, releases: boolean, collab: boolean, retakeUntil = 0): TableLock {
  const owner = held.owner;
  let record = held;
  let lastCheck = Date.now();
  let lost = false;
  let seenBy: LockRecord | null = null;
  /**
   * Issue #35: the stored lock is ours but an older version (a co-author's stale copy put it back), or
   * it vanished after a read that saw it before `retakeUntil` (a lock taken with the short wait, not
   * yet durable: a co-author's stale copy may have erased it; nobody else holds the table): written
   * again at once.
   */
  let reverted = false;
  /** When the last read that found the lock in place was SENT (it vanished after that). */
  let seenAt = Date.now();
  /** `value`: the lock as a read sent at `sentAt` found it. */
  const check = (value: LockRecord | null, sentAt: number) => {
    lastCheck = Date.now();
    if (value) seenAt = Math.max(seenAt, sentAt);
    if (!value && seenAt < retakeUntil) {
      reverted = true;
      retakeUntil = Date.now() + 2 * lockTiming.propagationMs;
      noteCoauthors();
    } else if (!value || value.owner !== owner) {
      lost = true;
      seenBy = value;
    } else if (lockVersion(value) !== lockVersion(record)) reverted = true;
  };
  // Every sync of the refresh also reads the lock (see `context` below).
  const guarded = {
    workbook: context.workbook,
    application: context.application,
    trackedObjects: context.trackedObjects,
    async sync(): Promise<void> {
      if (lost) throw lockLost(tableName, seenBy);
      const item = context.workbook.settings.getItemOrNullObject(key);
      item.load("value");
      const sentAt = Date.now();
      await context.sync();
      check(item.isNullObject ? null : parseLock(item.value), sentAt);
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
    async ensure() {
      if (lost) throw lockLost(tableName, seenBy);
      const sentAt = Date.now();
      if (sentAt - lastCheck > CHECK_FRESH_MS) check(await readLock(context, key), sentAt);
      if (lost) throw lockLost(tableName, seenBy);
      const t = now().getTime();
      if (reverted || t - Date.parse(record.renewedAt ?? record.acquiredAt) > ttl / 2) {
        // Renewed in a request of its own, right after the check above.
        reverted = false;
        record = { ...record, renewedAt: new Date(Math.max(t, Date.parse(record.renewedAt ?? record.acquiredAt) + 1)).toISOString(), expiresAt: new Date(t + ttl).toISOString() };
        context.workbook.settings.add(key, JSON.stringify(record));
        await context.sync();
      }
    },
    async release() {
      if (releases) await releaseOwned(context, key, owner, collab);
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
  return releaseOwned(context, lockSettingKey(tableName), owner, false, true);
}

/**
 * Deletes the lock `key` when it is still `owner`'s (one read, one write); false when it was gone or
 * another's. Issue #35: a co-author's stale settings copy can put a deleted lock back, so the deletion
 * is settled with the batch's other writes (`settle.ts`). Never throws unless `rethrow` (a lock left
 * behind expires).
 */
async function releaseOwned(context: Excel.RequestContext, key: string, owner: string, collab: boolean, rethrow = false): Promise<boolean> {
  try {
    const item = context.workbook.settings.getItemOrNullObject(key);
    item.load("value");
    await context.sync();
    if (item.isNullObject || parseLock(item.value)?.owner !== owner) return false;
    item.delete();
    await context.sync();
    keepSetting(context, { key, deleted: true, mode: "cas", previous: { value: item.value } }, collab);
    return true;
  } catch (e) {
    if (rethrow) throw e;
    return false;
  }
}
