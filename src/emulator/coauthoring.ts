/**
 * Co-authoring (issue #26): several clients of ONE document, each with its own copy of the workbook
 * (cells, tables, sheets, names and `Excel.SettingCollection`), kept in step by a "service" that
 * orders every change and delivers it to the other clients after a delay `d`.
 *
 * The model (sources and limits in README.md, "Co-authoring: two clients of one workbook"):
 * - every request a client's host answers that changed its copy becomes one CHANGE, stamped with the
 *   service's next sequence number when it is made (arrival order at the service = the order the
 *   clients made them) and with the last sequence that client had received (its BASE);
 * - a change reaches every other client `delayMs` later (a timer: jest's fake timers drive it, so a
 *   test with d = 5 s needs no 5 s of real time); d = 0 applies it at once;
 * - settings are ONE value (issue #35): a request that changed a copy's settings sends that copy's
 *   whole collection, and it replaces the collection of every other copy (and the service's) when it
 *   arrives, unless that copy already holds a later one (by sequence). A co-author's key that had not
 *   yet reached the writer's copy vanishes. Microsoft documents no merge rule; `Office.Settings` is
 *   documented as each instance saving its in-memory copy (`saveAsync`), so the strictest reading is
 *   taken. Cell values resolve last-writer-wins per cell;
 * - a STRUCTURAL change (a table added, resized, sorted or filtered, rows hidden, cells inserted or
 *   deleted, a sheet added, removed or renamed) carries its sheet whole; a change that is concurrent
 *   with another client's change to the same sheet (its base did not include it) where either is
 *   structural is a MERGE CONFLICT: the later one is rejected and its client reloads (Excel's "Can't
 *   merge changes" and reload, office-js #1813; Microsoft documents no transform for it, so the
 *   stricter behaviour is taken: nothing of the rejected change survives);
 * - a reload (conflict, or {@link CoauthorClient.reload} / {@link CoauthorClient.reloadAtRequest}, the
 *   structural-conflict injector) kills the client's runtime: its workbook copy is retired (every
 *   later request of the old runtime fails, 5001), its in-memory state is gone, and a new copy is
 *   opened from the service's document (`client.workbook` is the new one; `onReload` listeners start
 *   the new runtime);
 * - each client has its own clock offset (`client.now()`), for the ±15-minute skew tests;
 * - `Workbook.getIsActiveCollabSession()` answers as the session stood `collabFlagDelayMs` ago (issue
 *   #35: the docs warn of "some delay" between the change and the method's result): true once two
 *   clients have been open together that long, still true for that long after the other one closed.
 */
import { WorkbookModel, type WorkbookOptions } from "./model";
import { loadWorkbook, toWorkbookFile, type WorkbookFile } from "./index";
import type { Cell } from "./cells";
import { profile } from "./profiles";

type SheetEntry = WorkbookFile["sheets"][number];
type TableEntry = WorkbookFile["tables"][number];
type StoredCell = SheetEntry["cells"][number];

/** One sheet as a change carries it whole (structural change): its file entry, its tables, its position. */
interface SheetState {
  readonly sheet: SheetEntry;
  readonly tables: TableEntry[];
  readonly index: number;
}

/** What one client's request changed, as the service orders and delivers it. */
export interface Change {
  readonly seq: number;
  /** The client that made it. */
  readonly origin: number;
  /** The last sequence that client had received when it made the change. */
  readonly base: number;
  /** Settings this request set (JSON text) or deleted (null) in its copy: what it meant to change. */
  readonly settings: ReadonlyArray<readonly [string, string | null]>;
  /**
   * What the change delivers (issue #35): the writer's WHOLE settings collection after the request
   * (null when the request changed no setting). It replaces the receiver's collection.
   */
  readonly settingsWhole: ReadonlyArray<readonly [string, string]> | null;
  /** Cell changes per sheet id (non-structural sheets): [row, column, the cell or null when cleared]. */
  readonly cells: ReadonlyMap<string, ReadonlyArray<readonly [number, number, Cell | null]>>;
  /** Sheets changed structurally, carried whole (null: deleted). */
  readonly sheets: ReadonlyMap<string, SheetState | null>;
  /** Workbook-level names, when they changed. */
  readonly names: { definedNames: string[]; nameFormulas: NonNullable<WorkbookFile["nameFormulas"]> } | null;
  /** Every sheet the change touches, and those it changes structurally. */
  readonly touched: ReadonlySet<string>;
  readonly structural: ReadonlySet<string>;
}

/** Timers the session schedules deliveries with (default: the realm's, so jest's fake timers apply). */
export interface CoauthoringClock {
  setTimeout(fn: () => void, ms: number): unknown;
  /** The realm's time in ms (default `Date.now`, which jest's fake timers drive). */
  now?(): number;
}

/**
 * Default lag of `Workbook.getIsActiveCollabSession()` (issue #35). Microsoft documents only that
 * "there might be some delay between when the workbook status changes and when the changes are
 * reflected on the result of the method" (Excel.Workbook, ExcelApi 1.9), no figure. 30 s is taken:
 * presence reaches a client by its own channel, and a lag six times the 5 s content-propagation bound
 * the add-in assumes (`lockTiming.propagationMs`) means that, by default, a co-author's changes
 * arrive while the flag still says "alone" (the add-in must never rely on a false flag).
 */
export const COLLAB_FLAG_DELAY_MS = 30_000;

export interface CoauthoringOptions {
  /** Propagation delay d in milliseconds (default 0: every change reaches the others at once). */
  delayMs?: number;
  /**
   * How long `getIsActiveCollabSession()` lags behind the session (default {@link COLLAB_FLAG_DELAY_MS}):
   * it turns true this long after a second client joined, and false this long after it left.
   */
  collabFlagDelayMs?: number;
  /** Options of every client's workbook (platform, limits, …). */
  workbook?: Omit<WorkbookOptions, "firstSheetName">;
  clock?: CoauthoringClock;
}

export interface ClientOptions {
  /** A label for messages and tests ("Ann", "Ben"). */
  name?: string;
  /** This client's clock offset from the realm's (ms; +15 min = a clock 15 minutes ahead). */
  clockOffsetMs?: number;
}

/** What the service remembers per cell / sheet of one copy, and for its settings collection: the sequence of the change that set it. */
interface Versions {
  settings: number;
  cells: Map<string, number>;
  sheets: Map<string, number>;
}
const newVersions = (): Versions => ({ settings: 0, cells: new Map(), sheets: new Map() });

/** The state of one copy that changes are computed against. */
interface Capture {
  settings: Map<string, string>;
  sheets: Map<string, { meta: string; tables: string; cells: Map<string, string>; index: number }>;
  names: string;
}

/** The pseudo-sheet id of the workbook's own structure (its list of sheets and their names). */
export const WORKBOOK_STRUCTURE = "#workbook";

const cellKey = (r: number, c: number): string => `${r},${c}`;

function sheetMeta(s: SheetEntry): string {
  const { cells: _cells, ...rest } = s;
  void _cells;
  return JSON.stringify(rest);
}

function capture(wb: WorkbookModel): { file: WorkbookFile; state: Capture } {
  const file = toWorkbookFile(wb);
  const sheets = new Map<string, { meta: string; tables: string; cells: Map<string, string>; index: number }>();
  file.sheets.forEach((s, index) => {
    const cells = new Map<string, string>();
    for (const c of s.cells) cells.set(cellKey(c.r, c.c), JSON.stringify(c));
    const tables = JSON.stringify(file.tables.filter((t) => t.sheetId === s.id));
    sheets.set(s.id, { meta: sheetMeta(s), tables, cells, index });
  });
  return { file, state: { settings: new Map(file.settings), sheets, names: JSON.stringify([file.definedNames, file.nameFormulas ?? []]) } };
}

function toCell(s: StoredCell): Cell {
  const cell: Cell = {};
  if (s.v !== undefined) cell.v = s.v;
  if (s.f !== undefined) cell.f = s.f;
  if (s.nf !== undefined) cell.nf = s.nf;
  return cell;
}

/** The change between two captures of one copy (null when nothing the document keeps changed). */
function diff(before: Capture, after: { file: WorkbookFile; state: Capture }): Omit<Change, "seq" | "origin" | "base"> | null {
  const settings: Array<[string, string | null]> = [];
  for (const [k, v] of after.state.settings) if (before.settings.get(k) !== v) settings.push([k, v]);
  for (const k of before.settings.keys()) if (!after.state.settings.has(k)) settings.push([k, null]);
  const cells = new Map<string, Array<[number, number, Cell | null]>>();
  const sheets = new Map<string, SheetState | null>();
  const touched = new Set<string>();
  const structural = new Set<string>();
  const whole = (id: string): SheetState => {
    const s = after.file.sheets.find((x) => x.id === id)!;
    return { sheet: s, tables: after.file.tables.filter((t) => t.sheetId === id), index: after.state.sheets.get(id)!.index };
  };
  for (const [id, now] of after.state.sheets) {
    const was = before.sheets.get(id);
    if (!was || was.meta !== now.meta || was.tables !== now.tables) {
      sheets.set(id, whole(id));
      touched.add(id);
      structural.add(id);
      // A sheet added, renamed or shown/hidden changes the workbook's structure too (two clients adding a sheet of one name conflict).
      const shape = (meta: string) => {
        const m = JSON.parse(meta) as { name?: string; visibility?: string };
        return `${m.name ?? ""}|${m.visibility ?? ""}`;
      };
      if (!was || shape(was.meta) !== shape(now.meta)) {
        touched.add(WORKBOOK_STRUCTURE);
        structural.add(WORKBOOK_STRUCTURE);
      }
      continue;
    }
    const changes: Array<[number, number, Cell | null]> = [];
    for (const [k, v] of now.cells) {
      if (was.cells.get(k) === v) continue;
      const s = JSON.parse(v) as StoredCell;
      changes.push([s.r, s.c, toCell(s)]);
    }
    for (const k of was.cells.keys()) {
      if (now.cells.has(k)) continue;
      const [r, c] = k.split(",").map(Number);
      changes.push([r, c, null]);
    }
    if (changes.length) {
      cells.set(id, changes);
      touched.add(id);
    }
  }
  for (const id of before.sheets.keys()) {
    if (after.state.sheets.has(id)) continue;
    sheets.set(id, null);
    touched.add(id);
    structural.add(id);
    touched.add(WORKBOOK_STRUCTURE);
    structural.add(WORKBOOK_STRUCTURE);
  }
  const names = after.state.names !== before.names ? { definedNames: [...after.file.definedNames], nameFormulas: [...(after.file.nameFormulas ?? [])] } : null;
  if (!settings.length && !cells.size && !sheets.size && !names) return null;
  const settingsWhole = settings.length ? [...after.state.settings] : null;
  return { settings, settingsWhole, cells, sheets, names, touched, structural };
}

/** A workbook holding one sheet as a file carries it, to take its model objects from. */
function sheetModels(state: SheetState, options: Omit<WorkbookOptions, "firstSheetName">): WorkbookModel {
  const file: WorkbookFile = {
    format: "emulated-excel-workbook",
    version: 1,
    seq: 0,
    activeSheetId: state.sheet.id,
    sheets: [state.sheet],
    tables: state.tables,
    settings: [],
    definedNames: [],
  };
  return loadWorkbook(file, options);
}

/**
 * Applies a change to a copy: the settings collection (whole) and cells only where the copy's own
 * version is older (a client's later write is never overwritten by an earlier change arriving late),
 * sheets whole.
 */
function apply(wb: WorkbookModel, versions: Versions, change: Change, options: Omit<WorkbookOptions, "firstSheetName">): boolean {
  let settingsChanged = false;
  if (change.settingsWhole && versions.settings < change.seq) {
    versions.settings = change.seq;
    const next = new Map(change.settingsWhole);
    settingsChanged = next.size !== wb.settings.size || [...next].some(([k, v]) => wb.settings.get(k) !== v);
    wb.settings.clear();
    for (const [k, v] of next) wb.settings.set(k, v);
  }
  for (const [id, state] of change.sheets) {
    versions.sheets.set(id, change.seq);
    const at = wb.sheets.findIndex((s) => s.id === id);
    for (let i = wb.tables.length - 1; i >= 0; i--) if (wb.tables[i].sheetId === id) wb.tables.splice(i, 1);
    if (state === null) {
      if (at >= 0) wb.sheets.splice(at, 1);
      continue;
    }
    const donor = sheetModels(state, options);
    const sheet = donor.sheets[0];
    if (at >= 0) wb.sheets[at] = sheet;
    else wb.sheets.splice(Math.min(state.index, wb.sheets.length), 0, sheet);
    wb.tables.push(...donor.tables);
    wb.bumpSeq(donor.currentSeq());
  }
  for (const [id, changes] of change.cells) {
    const sheet = wb.sheetById(id);
    if (!sheet) continue;
    if ((versions.sheets.get(id) ?? 0) > change.seq) continue;
    for (const [r, c, cell] of changes) {
      const k = `${id}|${r},${c}`;
      if ((versions.cells.get(k) ?? 0) > change.seq) continue;
      versions.cells.set(k, change.seq);
      if (cell === null) sheet.cells.take(r, c);
      else sheet.cells.put(r, c, cell);
    }
  }
  if (change.names) {
    wb.definedNames.splice(0, wb.definedNames.length, ...change.names.definedNames);
    wb.nameFormulas.clear();
    for (const n of change.names.nameFormulas) wb.nameFormulas.set(`${n.sheetId ?? ""}|${n.name.toLowerCase()}`, { ...n });
  }
  if (!wb.sheetById(wb.activeSheetId) && wb.sheets.length) wb.activeSheetId = wb.sheets[0].id;
  if (wb.selection && !wb.sheetById(wb.selection.sheetId)) wb.selection = null;
  // Formulas read the new cells: cached results of older generations are stale.
  wb.calcGeneration++;
  return settingsChanged;
}

/** Marks the versions of everything a change sets in a copy (the client's own change). */
function own(versions: Versions, change: Change): void {
  if (change.settingsWhole) versions.settings = change.seq;
  for (const id of change.sheets.keys()) versions.sheets.set(id, change.seq);
  for (const [id, changes] of change.cells) for (const [r, c] of changes) versions.cells.set(`${id}|${r},${c}`, change.seq);
}

/** Why a retired copy refuses requests (the bridge answers them as failed, 5001). */
export const RELOADED_MESSAGE = "The add-in was reloaded: this runtime's workbook connection is closed (co-authoring merge conflict or reload).";

/** One client (one Excel window of one co-author) of the shared document. */
export class CoauthorClient {
  /** The copy the current runtime talks to; a reload replaces it. */
  private wb: WorkbookModel;
  private versions: Versions = newVersions();
  private last: Capture;
  /** Last sequence received from the service (everything up to it is in this copy). */
  seen = 0;
  /** How many times the runtime was reloaded. */
  reloads = 0;
  /** Why the last reload happened. */
  lastReloadReason: string | null = null;
  open = true;
  /** When the client joined and left, on the session's clock (the collaboration flag lags behind them). */
  readonly joinedAt: number;
  closedAt: number | null = null;
  private readonly reloadListeners = new Set<(client: CoauthorClient, reason: string) => void>();
  private readonly changeListeners = new Set<(client: CoauthorClient, change: Change) => void>();
  private requestsUntilReload: number | null = null;
  private applying = false;

  constructor(
    readonly session: CoauthoringSession,
    readonly id: number,
    readonly name: string,
    /** This client's clock offset (ms). */
    public clockOffsetMs: number,
  ) {
    this.joinedAt = session.now();
    this.wb = this.openCopy();
    this.last = capture(this.wb).state;
  }

  /** The workbook copy of the current runtime. */
  get workbook(): WorkbookModel {
    return this.wb;
  }

  /** This client's wall clock (the realm's plus its offset). */
  now(): Date {
    return new Date(Date.now() + this.clockOffsetMs);
  }

  /** Calls `cb` after every reload (the new runtime starts there). */
  onReload(cb: (client: CoauthorClient, reason: string) => void): () => void {
    this.reloadListeners.add(cb);
    return () => void this.reloadListeners.delete(cb);
  }

  /** Calls `cb` after a co-author's change reached this copy (a settings change among them: Excel's `onSettingsChanged`). */
  onRemoteChange(cb: (client: CoauthorClient, change: Change) => void): () => void {
    this.changeListeners.add(cb);
    return () => void this.changeListeners.delete(cb);
  }

  /**
   * The structural-conflict injector: the `n`-th request from now (1 = the next) kills the runtime
   * before it is applied (it fails, 5001) and the client reloads.
   */
  reloadAtRequest(n: number): void {
    if (!Number.isInteger(n) || n < 1) throw new Error("reloadAtRequest: n is a request count from 1.");
    this.requestsUntilReload = n;
  }

  /** Kills the runtime and opens a new copy of the service's document. */
  reload(reason = "reloaded"): void {
    const old = this.wb;
    old.retiredReason = `${RELOADED_MESSAGE} (${reason})`;
    old.coauthoring = null;
    this.requestsUntilReload = null;
    this.wb = this.openCopy();
    this.versions = newVersions();
    this.seen = this.session.lastSeq;
    this.last = capture(this.wb).state;
    this.reloads++;
    this.lastReloadReason = reason;
    for (const l of [...this.reloadListeners]) l(this, reason);
  }

  /** Closes this client (it stops counting as a co-author; its copy refuses requests). */
  close(): void {
    this.open = false;
    this.closedAt = this.session.now();
    this.wb.retiredReason = "The workbook was closed in this window.";
    this.wb.coauthoring = null;
  }

  private openCopy(): WorkbookModel {
    const wb = loadWorkbook(toWorkbookFile(this.session.document), this.session.workbookOptions);
    // Ids (sheets, tables) made by different clients never collide.
    wb.bumpSeq(this.session.document.currentSeq() + (this.id + 1) * 1_000_000 + this.reloads * 100_000);
    wb.coauthoring = {
      active: () => this.session.collabFlag(this),
      beforeRequest: () => this.beforeRequest(),
    };
    wb.onChange(() => {
      if (wb === this.wb && !this.applying) this.commit();
    });
    return wb;
  }

  private beforeRequest(): void {
    if (this.requestsUntilReload === null) return;
    this.requestsUntilReload--;
    if (this.requestsUntilReload > 0) return;
    // The runtime dies at this request: it is refused (the copy is retired before the host answers it).
    this.reload("injected reload");
  }

  /** Sends what the last request changed to the service. */
  private commit(): void {
    const after = capture(this.wb);
    const d = diff(this.last, after);
    this.last = after.state;
    if (!d) return;
    const change: Change = { ...d, seq: 0, origin: this.id, base: this.seen };
    // The add-in's own settings change raises the event in its own copy too (see settingsEvent).
    if (this.session.submit(this, change) && change.settings.length) this.settingsEvent("local");
  }

  /**
   * Raises `settingsChanged` in this copy (README "Co-authoring": Office.SettingsChangedEventArgs,
   * "the event will fire only when the add-in is loaded with a spreadsheet that is opened in Excel on
   * the web, and more than one user is editing the spreadsheet"): only on the web profile and only
   * while two or more clients are open. For the add-in's own changes Microsoft does not say; the
   * stricter reading is taken: they raise it too (the add-in must not loop or storm on its own writes).
   */
  private settingsEvent(source: "local" | "remote"): void {
    if (!this.open || this.session.activeClients() < 2) return;
    if (profile(this.wb.platform).officePlatform !== "OfficeOnline") return;
    this.wb.raiseSettingsChanged(source);
  }

  /** @internal the service assigned the change its sequence. */
  accepted(change: Change): void {
    own(this.versions, change);
  }

  /** @internal a co-author's change arrives. */
  receive(change: Change): void {
    if (!this.open || change.seq <= this.seen) return;
    this.applying = true;
    let settingsChanged = false;
    try {
      settingsChanged = apply(this.wb, this.versions, change, this.session.workbookOptions);
    } finally {
      this.applying = false;
    }
    this.seen = change.seq;
    this.last = capture(this.wb).state;
    for (const l of [...this.changeListeners]) l(this, change);
    // A co-author's settings change that changed this copy (an older write arriving late changes nothing: no event).
    if (settingsChanged) this.settingsEvent("remote");
  }
}

/** The service of one shared document and its clients. */
export class CoauthoringSession {
  /** The document as the service holds it (every accepted change applied in order). */
  readonly document: WorkbookModel;
  readonly clients: CoauthorClient[] = [];
  delayMs: number;
  /** The lag of `getIsActiveCollabSession()` (see {@link COLLAB_FLAG_DELAY_MS}). */
  collabFlagDelayMs: number;
  readonly workbookOptions: Omit<WorkbookOptions, "firstSheetName">;
  private readonly clock: CoauthoringClock;
  private readonly log: Change[] = [];
  private readonly versions = newVersions();
  private inFlight = 0;
  private readonly idle: Array<() => void> = [];
  /** Changes rejected as merge conflicts (origin, sequence it would have had, reason). */
  readonly conflicts: Array<{ client: string; reason: string }> = [];

  constructor(initial: WorkbookModel | WorkbookFile | null = null, options: CoauthoringOptions = {}) {
    this.workbookOptions = options.workbook ?? {};
    this.delayMs = options.delayMs ?? 0;
    this.collabFlagDelayMs = options.collabFlagDelayMs ?? COLLAB_FLAG_DELAY_MS;
    this.clock = options.clock ?? { setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms) };
    if (initial === null) this.document = new WorkbookModel({ ...this.workbookOptions });
    else this.document = loadWorkbook(initial instanceof WorkbookModel ? toWorkbookFile(initial) : initial, this.workbookOptions);
  }

  /** Opens the document in a new client. */
  addClient(options: ClientOptions = {}): CoauthorClient {
    const id = this.clients.length;
    const c = new CoauthorClient(this, id, options.name ?? `client ${id + 1}`, options.clockOffsetMs ?? 0);
    c.seen = this.lastSeq;
    this.clients.push(c);
    return c;
  }

  /** The sequence of the last accepted change. */
  get lastSeq(): number {
    return this.log.length ? this.log[this.log.length - 1].seq : 0;
  }

  activeClients(): number {
    return this.clients.filter((c) => c.open).length;
  }

  /** The session's clock (ms). */
  now(): number {
    return this.clock.now ? this.clock.now() : Date.now();
  }

  /**
   * What `getIsActiveCollabSession()` answers in `client`'s copy: the session as it stood
   * `collabFlagDelayMs` ago — this client and at least one other open then.
   */
  collabFlag(client: CoauthorClient): boolean {
    const then = this.now() - this.collabFlagDelayMs;
    const openAt = (c: CoauthorClient) => c.joinedAt <= then && (c.closedAt === null || c.closedAt > then);
    return openAt(client) && this.clients.some((c) => c !== client && openAt(c));
  }

  /** Accepted changes, in service order. */
  changes(): readonly Change[] {
    return this.log;
  }

  /** @internal a client made a change: order it, check for a merge conflict, schedule its delivery. False: rejected. */
  submit(from: CoauthorClient, proposed: Change): boolean {
    const seq = this.lastSeq + 1;
    const concurrent = this.log.filter((c) => c.seq > proposed.base && c.origin !== proposed.origin);
    for (const other of concurrent) {
      for (const id of proposed.touched) {
        if (!other.touched.has(id)) continue;
        if (proposed.structural.has(id) || other.structural.has(id)) {
          const reason = `merge conflict: ${from.name}'s change to sheet ${id} was concurrent with a co-author's ${other.structural.has(id) ? "structural " : ""}change`;
          this.conflicts.push({ client: from.name, reason });
          // The service rejects it; the client learns at once and reloads after this request is answered.
          queueMicrotask(() => from.reload(reason));
          from.workbook.retiredReason = `${RELOADED_MESSAGE} (${reason})`;
          return false;
        }
      }
    }
    const change: Change = { ...proposed, seq };
    this.log.push(change);
    apply(this.document, this.versions, change, this.workbookOptions);
    from.accepted(change);
    for (const c of this.clients) {
      if (c === from) continue;
      if (this.delayMs <= 0) c.receive(change);
      else {
        this.inFlight++;
        this.clock.setTimeout(() => {
          try {
            c.receive(change);
          } finally {
            if (--this.inFlight === 0) for (const r of this.idle.splice(0)) r();
          }
        }, this.delayMs);
      }
    }
    // The origin is up to date with everything before its own change only if it had seen it all.
    if (from.seen === seq - 1) from.seen = seq;
    return true;
  }

  /** Resolves when every change in flight has reached every client (drive fake timers meanwhile). */
  settled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
