/**
 * The browser preview page: the real task pane (in a frame, with the emulator's `Excel` and a small
 * `Office` shim, see office-shim.ts) next to a spreadsheet-like grid that draws the emulated
 * workbook. Dev only: built by webpack in development as `preview.html`, never part of the add-in.
 *
 * The grid is a view plus a keyboard: it reads the workbook model to draw cells, and everything the
 * user does to the workbook (select a cell, type into it, switch sheets) goes through the same
 * `Excel` API the task pane uses, so the task pane sees exactly what it would see in Excel.
 *
 * Each drawn cell carries `data-address` (A1), `data-type` (number | text | boolean | empty |
 * formula | error), `data-format` (number format), `data-value` (the raw value), `data-fill`
 * (a solid fill, `Range.format.fill.color`), `data-cf-fill` (the fill conditional formatting
 * gives the cell, drawn over its own fill as Excel draws it), `data-error-message` (a custom
 * function's error message) and `data-spilled` (a cell showing a spilled array), so a test reads
 * what Excel would hold rather than formatted text. Large sheets are virtualised: only the rows in
 * view (plus a margin) exist in the DOM; the name box scrolls to any address.
 */
import type { PreviewDialog, PreviewHostApi } from "./office-shim";
import type { PreviewCell, PreviewWorkbook } from "./preview-workbook";
import { cellAddress, parseA1 } from "./a1";
import { ScenarioControls } from "./preview-controls";
import { isProfileId } from "../emulator/profiles";

const SAVED_KEY = "ppm-preview:workbook";
/** The saved document's startup behaviour (`Office.addin.setStartupBehavior`), kept with it. */
const STARTUP_KEY = "ppm-preview:startup";
/** The device the preview stands for ("other": another device, with its own, empty, storage). */
const DEVICE_KEY = "ppm-preview:device";
/**
 * The saved file's id: its address is `C:\\Users\\preview\\Documents\\<id>.xlsx`, a file on this device
 * (the preview has one user: an https address would make the add-in take the co-authoring path, issue #35).
 */
const FILE_KEY = "ppm-preview:file";

/** The id of the workbook file this session shows (a new one when there is none yet). */
function fileId(renew = false): string {
  let id = renew ? null : sessionStorage.getItem(FILE_KEY);
  if (!id) {
    id = Math.random().toString(36).slice(2, 10);
    sessionStorage.setItem(FILE_KEY, id);
  }
  return id;
}
/** Ribbon control ids of manifest.xml and the preview's buttons for them. */
const RIBBON_BUTTONS: Record<string, string> = { "PPM.RefreshAll": "ribbon-refresh-all", "PPM.RefreshTable": "ribbon-refresh-table" };
/** Controls the manifest starts disabled (`<Enabled>false</Enabled>`): the runtime enables them. */
const MANIFEST_DISABLED = ["PPM.RefreshTable"];
const ROW_HEIGHT = 22;
/** Rows drawn above and below the visible window, so scrolling a little never shows a gap. */
const OVERSCAN = 20;
/** Empty rows and columns drawn beyond the used range, so there is room to type. */
const MARGIN_ROWS = 5;
const MARGIN_COLS = 3;
const MIN_ROWS = 30;
const MIN_COLS = 10;
/** Columns beyond this are not drawn (a note says so); no dataset here is that wide. */
const MAX_DRAWN_COLS = 200;

/** Add-in pages opened as dialogs, and their preview copies (built by src/dev/webpack.preview.js). */
const PREVIEW_DIALOG_PAGES: Record<string, string> = { "summary.html": "preview-summary.html" };

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

interface Selection {
  row: number;
  col: number;
}

class PreviewPage {
  private workbook: PreviewWorkbook | null = null;
  private unsubscribe: (() => void) | null = null;
  private selection: Selection = { row: 0, col: 0 };
  private editing: { row: number; col: number; input: HTMLInputElement } | null = null;
  private renderQueued = false;
  /** Selections made in the grid that the workbook has not taken yet. */
  private selecting = 0;
  /**
   * What the user does in the grid (type, select, switch sheets) reaches the workbook in the order
   * it was done, one request after the other, as Excel takes input. `#grid[data-pending]` counts
   * what has not arrived yet, so a test waits for that state, not for a while (issue #37: an Enter's
   * move to the next cell landed after a later click under load, and the later cell lost).
   */
  private userQueue: Promise<unknown> = Promise.resolve();
  private pending = 0;

  private user<T>(op: () => Promise<T>): Promise<T> {
    this.pending++;
    this.grid.dataset.pending = String(this.pending);
    const p = this.userQueue.then(op);
    this.userQueue = p.catch(() => undefined);
    return p.finally(() => {
      this.pending--;
      this.grid.dataset.pending = String(this.pending);
    });
  }
  /** The sheet the grid last drew, and where each sheet was scrolled (as Excel keeps per sheet). */
  private drawnSheet: string | null = null;
  private readonly scrollBySheet = new Map<string, { left: number; top: number }>();
  private readonly grid = $<HTMLTableElement>("grid");
  private readonly scroller = $<HTMLDivElement>("grid-scroll");
  private readonly tabs = $<HTMLElement>("tabs");
  private readonly nameBox = $<HTMLInputElement>("name-box");
  private readonly formulaText = $<HTMLInputElement>("formula-text");
  private readonly note = $<HTMLDivElement>("grid-note");
  private readonly frame = $<HTMLIFrameElement>("taskpane");
  private commandFrame: HTMLIFrameElement | null = null;
  private discarding = false;
  private savedFile: string | null = null;
  /** Separate runtimes (`?sharedRuntime=0`) instead of the shared one. */
  private readonly shared = new URLSearchParams(location.search).get("sharedRuntime") !== "0";
  /** Whether the add-in has been started in this Excel session, and who waits for it. */
  private started = true;
  private startWaiters: Array<() => void> = [];
  /** Ribbon controls Office was asked to disable (`requestUpdate`), and commands running now. */
  /** Controls shown disabled; the manifest starts "Refresh this table" disabled (`<Enabled>false</Enabled>`, issue #21). */
  private readonly ribbonDisabled = new Set<string>(MANIFEST_DISABLED);
  private readonly running = new Set<string>();

  readonly host: PreviewHostApi = {
    // The page keeps the last saved file itself (the task pane frame reloads; the page does not),
    // and in sessionStorage for a reload of the whole page when it fits there.
    savedWorkbook: () => this.savedFile ?? sessionStorage.getItem(SAVED_KEY),
    attach: (workbook) => this.attach(workbook),
    saveWorkbook: (serialised) => {
      // "New workbook" reloads the frame; the old workbook must not come back from its unload.
      if (this.discarding) return;
      this.savedFile = serialised;
      try {
        sessionStorage.setItem(SAVED_KEY, serialised);
      } catch {
        // Too large for sessionStorage: the workbook simply starts empty after a reload.
        sessionStorage.removeItem(SAVED_KEY);
      }
    },
    workbook: () => this.workbook,
    notify: (text) => this.notify(text),
    partitionKey: sessionStorage.getItem(DEVICE_KEY) === "other" ? "ppm-preview-other-device" : "ppm-preview",
    officeTheme: new URLSearchParams(location.search).get("theme") === "dark" ? "dark" : "light",
    documentUrl: () => `C:\\Users\\preview\\Documents\\${fileId()}.xlsx`,
    openDialog: (url, options) => this.openDialog(url, options),
    dialogMessage: (frame, message) => this.dialogMessage(frame, message),
    sharedRuntime: this.shared,
    whenStarted: () => (this.started ? Promise.resolve() : new Promise<void>((resolve) => this.startWaiters.push(resolve))),
    startupBehavior: () => sessionStorage.getItem(STARTUP_KEY) ?? "None",
    setStartupBehavior: (behavior) => {
      sessionStorage.setItem(STARTUP_KEY, behavior);
      this.showRuntime();
    },
    ribbonUpdate: (data) => this.ribbonUpdate(data),
  };
  private dialogs: Array<{ frame: HTMLIFrameElement; fire(type: string, arg: unknown): void }> = [];

  start(): void {
    window.__ppmPreviewHost = this.host;
    $("preview-service").textContent = `default service: ${defaultServiceUrl()}`;
    this.frame.src = `${profilePage("preview-taskpane.html")}${location.search}`;
    this.scroller.addEventListener("scroll", () => this.queueRender());
    this.scroller.addEventListener("keydown", (e) => this.onGridKey(e));
    this.grid.addEventListener("mousedown", (e) => this.onGridMouseDown(e));
    this.grid.addEventListener("dblclick", (e) => {
      const cell = (e.target as HTMLElement).closest("td[data-address]");
      if (cell) this.beginEdit(null);
    });
    this.nameBox.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      this.goTo(this.nameBox.value);
    });
    $("ribbon-open").addEventListener("click", () => {
      this.startAddin();
      $("pane").hidden = false;
      document.body.classList.remove("pane-closed");
      this.frame.focus();
    });
    $("pane-close").addEventListener("click", () => {
      $("pane").hidden = true;
      document.body.classList.add("pane-closed");
      $("ribbon-open").focus();
    });
    $("ribbon-refresh-all").addEventListener("click", () => void this.runCommand("refreshAll", "ribbon-refresh-all"));
    $("ribbon-refresh-table").addEventListener("click", () => void this.runCommand("refreshTable", "ribbon-refresh-table"));
    $("preview-reopen").addEventListener("click", () => this.reopen(false));
    $("preview-reopen-other").addEventListener("click", () => this.reopen(true));
    this.showRuntime();
    $("preview-reset").addEventListener("click", () => {
      sessionStorage.removeItem(SAVED_KEY);
      fileId(true); // another file: another address
      this.savedFile = null;
      // A new document: it does not load the add-in (its startup behaviour is the default, none).
      sessionStorage.removeItem(STARTUP_KEY);
      this.showRuntime();
      this.discarding = true;
      this.workbook = null;
      this.frame.contentWindow?.location.reload();
    });
    window.addEventListener("resize", () => this.queueRender());
    // The scenario toolbar: the service's control hooks, the pane's width and theme (issue #25).
    new ScenarioControls(defaultServiceUrl() === "(none)" ? null : defaultServiceUrl(), (theme) => {
      // Office's theme changes; the add-in is not restarted (no refresh on open runs, the pane keeps
      // its section). The pane reads the theme again when it gets the focus.
      this.host.officeTheme = theme;
      // As the user going back to the pane: its window gets the focus. (A focus() from this page
      // does not always raise the event in a headless browser, so the event is sent as well.)
      this.frame.contentWindow?.focus();
      this.frame.contentWindow?.dispatchEvent(new Event("focus"));
    }).start();
  }

  /** Starts the add-in in this session (Office does so on Open, on a ribbon command, or with the document). */
  private startAddin(): void {
    if (this.started) return;
    this.started = true;
    const waiters = this.startWaiters;
    this.startWaiters = [];
    for (const w of waiters) w();
    this.showRuntime();
  }

  /**
   * "Closes" the workbook and opens the saved file again: a new Excel session. The task pane frame
   * (the shared runtime) is reloaded; its code starts at once, pane hidden, when the document's
   * startup behaviour is "Load", and otherwise only when the user opens the add-in. The ribbon
   * starts from the manifest's state ("Refresh this table" disabled). `otherDevice` opens it as on another
   * device: its storage partition holds no connection.
   */
  private reopen(otherDevice: boolean): void {
    const wb = this.workbook;
    if (wb) this.host.saveWorkbook(wb.serialise());
    if (otherDevice) sessionStorage.setItem(DEVICE_KEY, "other");
    else sessionStorage.removeItem(DEVICE_KEY);
    this.host.partitionKey = otherDevice ? "ppm-preview-other-device" : "ppm-preview";
    const load = this.host.startupBehavior().toLowerCase() === "load";
    this.started = load;
    this.startWaiters = [];
    this.ribbonDisabled.clear();
    for (const c of MANIFEST_DISABLED) this.ribbonDisabled.add(c);
    this.running.clear();
    this.updateRibbon();
    this.commandFrame?.remove();
    this.commandFrame = null;
    $("pane").hidden = true;
    document.body.classList.add("pane-closed");
    this.workbook = null;
    document.body.dataset.session = String(Number(document.body.dataset.session ?? "0") + 1);
    this.frame.src = `${profilePage("preview-taskpane.html")}${location.search}${location.search ? "&" : "?"}session=${document.body.dataset.session}`;
    this.showRuntime();
  }

  private showRuntime(): void {
    const el = $("preview-runtime");
    const startup = this.host.startupBehavior();
    el.dataset.shared = String(this.shared);
    el.dataset.started = String(this.started);
    el.dataset.startup = startup;
    el.dataset.device = this.host.partitionKey === "ppm-preview" ? "this" : "other";
    el.textContent = `${this.shared ? "shared runtime" : "separate runtimes"} · add-in ${this.started ? "started" : "not started"} · starts with this workbook: ${startup.toLowerCase() === "load" ? "yes" : "no"}${el.dataset.device === "other" ? " · another device" : ""}`;
  }

  /** `Office.ribbon.requestUpdate`: takes the enabled state of the controls it names. */
  private ribbonUpdate(data: unknown): void {
    const tabs = (data as { tabs?: Array<{ groups?: Array<{ controls?: Array<{ id?: string; enabled?: boolean }> }> }> }).tabs ?? [];
    for (const t of tabs) for (const g of t.groups ?? []) for (const c of g.controls ?? []) {
      if (!c.id || !(c.id in RIBBON_BUTTONS) || typeof c.enabled !== "boolean") continue;
      if (c.enabled) this.ribbonDisabled.delete(c.id);
      else this.ribbonDisabled.add(c.id);
    }
    this.updateRibbon();
  }

  private updateRibbon(): void {
    for (const [control, testId] of Object.entries(RIBBON_BUTTONS)) {
      const b = document.querySelector<HTMLButtonElement>(`[data-testid="${testId}"]`);
      if (!b) continue;
      b.dataset.ribbonEnabled = String(!this.ribbonDisabled.has(control));
      b.disabled = this.ribbonDisabled.has(control) || this.running.has(testId);
    }
  }

  private attach(workbook: PreviewWorkbook): void {
    this.discarding = false;
    this.unsubscribe?.();
    this.workbook = workbook;
    this.unsubscribe = workbook.onChange(() => this.queueRender());
    this.selection = workbook.selection() ?? { row: 0, col: 0 };
    // At once, not on the next frame: from here on the grid shows this workbook and no other.
    this.render();
  }

  /** Coalesces a burst of syncs (a large import) into one redraw per frame. */
  private queueRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  private render(): void {
    const wb = this.workbook;
    if (!wb) return;
    const started = performance.now();
    const sel = wb.selection();
    // While a selection the user made is on its way to the workbook, a redraw (a formula's result
    // arriving meanwhile) must not show the workbook's previous selection again: under load that
    // flicker lasted seconds (issue #37: "timed out waiting for A4 to be selected").
    if (sel && !this.editing && this.selecting === 0) this.selection = sel;
    this.renderTabs(wb);
    const sheet = wb.activeSheet();
    if (!sheet) {
      this.grid.replaceChildren();
      return;
    }
    if (sheet !== this.drawnSheet) {
      // Another sheet: its own scroll position, from A1 the first time (issue #37: the previous
      // sheet's horizontal scroll hid column A of a new sheet).
      if (this.drawnSheet !== null) this.scrollBySheet.set(this.drawnSheet, { left: this.scroller.scrollLeft, top: this.scroller.scrollTop });
      const to = this.scrollBySheet.get(sheet) ?? { left: 0, top: 0 };
      this.scroller.scrollLeft = to.left;
      this.scroller.scrollTop = to.top;
      this.drawnSheet = sheet;
    }
    const used = wb.usedExtent(sheet);
    const rows = Math.max(MIN_ROWS, used.rows + MARGIN_ROWS, this.selection.row + 1 + MARGIN_ROWS);
    const totalCols = Math.max(MIN_COLS, used.cols + MARGIN_COLS, this.selection.col + 1 + MARGIN_COLS);
    const cols = Math.min(totalCols, MAX_DRAWN_COLS);

    const viewTop = this.scroller.scrollTop;
    const viewRows = Math.ceil((this.scroller.clientHeight || 600) / ROW_HEIGHT);
    const first = Math.max(0, Math.floor(viewTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(rows - 1, first + viewRows + 2 * OVERSCAN);

    const thead = document.createElement("thead");
    const hr = document.createElement("tr");
    const corner = document.createElement("th");
    corner.className = "corner";
    hr.appendChild(corner);
    for (let c = 0; c < cols; c++) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = cellAddress(0, c).replace(/\d+$/, "");
      hr.appendChild(th);
    }
    thead.appendChild(hr);

    const tbody = document.createElement("tbody");
    if (first > 0) tbody.appendChild(spacer(first * ROW_HEIGHT, cols));
    for (let r = first; r <= last; r++) {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = String(r + 1);
      tr.appendChild(th);
      for (let c = 0; c < cols; c++) tr.appendChild(this.renderCell(wb.cell(sheet, r, c), r, c));
      tbody.appendChild(tr);
    }
    if (last < rows - 1) tbody.appendChild(spacer((rows - 1 - last) * ROW_HEIGHT, cols));

    this.grid.replaceChildren(thead, tbody);
    this.grid.dataset.sheet = sheet;
    this.grid.dataset.usedRows = String(used.rows);
    this.grid.dataset.usedCols = String(used.cols);
    this.grid.dataset.firstRow = String(first + 1);
    this.grid.dataset.lastRow = String(last + 1);
    const notes = [`${sheet}: ${used.rows.toLocaleString("en-US")} used rows × ${used.cols} columns`];
    if (totalCols > cols) notes.push(`only the first ${cols} columns are drawn`);
    this.note.textContent = notes.join(" · ");
    // How long drawing took, for the e2e suite's figures on large sheets.
    this.grid.dataset.renderMs = (performance.now() - started).toFixed(1);
    this.grid.dataset.drawnRows = String(last - first + 1);
    this.updateFormulaBar();
    // A redraw (the task pane syncing meanwhile) must not throw away what the user is typing.
    if (this.editing && document.activeElement !== this.editing.input) this.editing.input.focus();
  }

  private renderCell(cell: PreviewCell, r: number, c: number): HTMLTableCellElement {
    const td = document.createElement("td");
    td.dataset.address = cellAddress(r, c);
    td.dataset.type = cell.type;
    td.dataset.format = cell.format;
    td.dataset.value = cell.value;
    if (cell.formula) td.dataset.formula = cell.formula;
    if (cell.fill) {
      td.dataset.fill = cell.fill;
      td.style.background = cell.fill;
    }
    if (cell.cfFill) {
      td.dataset.cfFill = cell.cfFill;
      td.style.background = cell.cfFill;
    }
    if (cell.table) {
      td.dataset.table = cell.table;
      td.classList.add(cell.tableHeader ? "table-header" : "in-table");
    }
    if (this.editing && this.editing.row === r && this.editing.col === c) {
      td.appendChild(this.editing.input);
      td.classList.add("selected");
      return td;
    }
    td.textContent = cell.text;
    // A custom function's error message: Excel shows it from the cell's error indicator.
    td.title = cell.message ? `${cell.text}: ${cell.message}` : cell.text;
    if (cell.message) td.dataset.errorMessage = cell.message;
    if (cell.spilled) td.dataset.spilled = "true";
    if (r === this.selection.row && c === this.selection.col) {
      td.classList.add("selected");
      td.setAttribute("aria-selected", "true");
    }
    return td;
  }

  private renderTabs(wb: PreviewWorkbook): void {
    const sheets = wb.sheets();
    const active = wb.activeSheet();
    const key = JSON.stringify([sheets, active]);
    if (this.tabs.dataset.key === key) return;
    this.tabs.dataset.key = key;
    this.tabs.replaceChildren(
      ...sheets.map((name) => {
        const b = document.createElement("button");
        b.type = "button";
        b.setAttribute("role", "tab");
        b.dataset.sheet = name;
        b.dataset.testid = "preview-sheet-tab";
        b.setAttribute("aria-selected", String(name === active));
        b.textContent = name;
        b.addEventListener("click", () => void this.activateSheet(name));
        return b;
      }),
    );
  }

  private async activateSheet(name: string): Promise<void> {
    const wb = this.workbook;
    if (!wb) return;
    await this.user(() => wb.activate(name));
    this.scroller.scrollTop = 0;
    this.selection = wb.selection() ?? { row: 0, col: 0 };
    this.render();
  }

  private onGridMouseDown(e: MouseEvent): void {
    const td = (e.target as HTMLElement).closest<HTMLTableCellElement>("td[data-address]");
    if (!td || (this.editing && td.contains(this.editing.input))) return;
    if (this.editing) void this.commitEdit();
    const pos = parseA1(td.dataset.address ?? "");
    if (pos) void this.select(pos.row, pos.col);
    this.scroller.focus();
  }

  private onGridKey(e: KeyboardEvent): void {
    if (this.editing) return;
    const moves: Record<string, [number, number]> = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Tab: [0, 1],
    };
    const move = moves[e.key];
    if (move) {
      e.preventDefault();
      void this.select(Math.max(0, this.selection.row + move[0]), Math.max(0, this.selection.col + move[1]));
      return;
    }
    if (e.key === "Enter" || e.key === "F2") {
      e.preventDefault();
      this.beginEdit(null);
      return;
    }
    if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      void this.typeInto(this.selection.row, this.selection.col, "");
      return;
    }
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      this.beginEdit(e.key);
    }
  }

  private async select(row: number, col: number): Promise<void> {
    this.selection = { row, col };
    this.selecting++;
    this.ensureVisible(row);
    this.render();
    // Sideways too, as Excel brings the selected cell into view (A1 after editing Z1 showed column A cut).
    this.grid.querySelector<HTMLElement>("td.selected")?.scrollIntoView({ block: "nearest", inline: "nearest" });
    const wb = this.workbook;
    try {
      if (wb) await this.user(() => wb.select(row, col));
    } finally {
      this.selecting--;
    }
  }

  private goTo(text: string): void {
    const pos = parseA1(text.trim());
    const sheets = this.workbook?.sheets() ?? [];
    const sheet = pos?.sheet === undefined ? undefined : sheets.find((n) => n.toLowerCase() === pos.sheet?.toLowerCase());
    if (!pos || (pos.sheet !== undefined && !sheet)) {
      this.nameBox.setCustomValidity(pos ? `There is no sheet named ${pos.sheet}` : "Not an address");
      this.nameBox.reportValidity();
      return;
    }
    this.nameBox.setCustomValidity("");
    const go = async () => {
      if (sheet && sheet !== this.workbook?.activeSheet()) await this.activateSheet(sheet);
      await this.select(pos.row, pos.col);
      this.scroller.focus();
    };
    void go();
  }

  private ensureVisible(row: number): void {
    const top = row * ROW_HEIGHT;
    const header = ROW_HEIGHT;
    if (top < this.scroller.scrollTop) this.scroller.scrollTop = top;
    else if (top + 2 * ROW_HEIGHT + header > this.scroller.scrollTop + this.scroller.clientHeight) {
      this.scroller.scrollTop = top + 2 * ROW_HEIGHT + header - this.scroller.clientHeight;
    }
  }

  /** Opens the in-cell editor; `initial` is the first typed character (replaces the content, as in Excel). */
  private beginEdit(initial: string | null): void {
    const wb = this.workbook;
    const sheet = wb?.activeSheet();
    if (!wb || !sheet) return;
    const { row, col } = this.selection;
    const td = this.grid.querySelector<HTMLTableCellElement>(`td[data-address="${cellAddress(row, col)}"]`);
    if (!td) return;
    const cell = wb.cell(sheet, row, col);
    const input = document.createElement("input");
    input.dataset.testid = "preview-cell-editor";
    input.setAttribute("aria-label", `Edit ${cellAddress(row, col)}`);
    input.value = initial ?? cell.formula ?? cell.editText;
    td.replaceChildren(input);
    this.editing = { row, col, input };
    input.focus();
    input.addEventListener("keydown", (e) => {
      // The grid's own keys (Enter opens an editor) must not see the editor's keys.
      e.stopPropagation();
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        const [dr, dc] = e.key === "Enter" ? [1, 0] : [0, 1];
        // Both now, in this order: the move must not wait for the write and land after a later click.
        const written = this.commitEdit();
        void Promise.all([written, this.select(row + dr, col + dc)]).then(() => this.scroller.focus());
      } else if (e.key === "Escape") {
        e.preventDefault();
        this.editing = null;
        this.render();
        this.scroller.focus();
      }
    });
  }

  private async commitEdit(): Promise<void> {
    const editing = this.editing;
    if (!editing) return;
    this.editing = null;
    await this.typeInto(editing.row, editing.col, editing.input.value);
  }

  /** Writes text the way a user typing into the cell does (Excel parses it: numbers, dates, formulas). */
  private async typeInto(row: number, col: number, text: string): Promise<void> {
    const wb = this.workbook;
    if (!wb) return;
    try {
      await this.user(() => wb.typeInto(row, col, text));
    } catch (err) {
      this.notify(`Excel could not take that input: ${(err as Error).message ?? String(err)}`);
    }
    this.render();
  }

  private updateFormulaBar(): void {
    const wb = this.workbook;
    const sheet = wb?.activeSheet();
    const { row, col } = this.selection;
    // As in Excel, a render (a formula's result arriving) never overwrites what the user is typing
    // into the name box or the formula bar.
    if (document.activeElement !== this.nameBox) this.nameBox.value = cellAddress(row, col);
    if (!wb || !sheet) return;
    const cell = wb.cell(sheet, row, col);
    if (document.activeElement !== this.formulaText) this.formulaText.value = cell.formula ?? cell.editText;
  }

  /**
   * Runs a ribbon function command: in the task pane frame with the shared runtime (the pane and
   * the commands share one engine there), or in a frame of its own with separate runtimes, as in
   * Excel without SharedRuntime 1.1. Either way it acts on the same workbook.
   */
  private async runCommand(name: string, testId: string): Promise<void> {
    this.startAddin();
    const frame = this.shared ? this.frame : await this.commandsFrame();
    const api = (frame.contentWindow as unknown as { __ppmPreviewCommands?: { invoke(n: string): Promise<void> } })
      .__ppmPreviewCommands;
    if (!api) {
      this.notify("The ribbon command runtime did not start.");
      return;
    }
    this.running.add(testId);
    this.updateRibbon();
    try {
      await api.invoke(name);
    } catch (err) {
      this.notify(`${name} failed: ${(err as Error).message}`);
    } finally {
      this.running.delete(testId);
      this.updateRibbon();
    }
  }

  private commandsFrame(): Promise<HTMLIFrameElement> {
    if (this.commandFrame) return Promise.resolve(this.commandFrame);
    return new Promise((resolve) => {
      const f = document.createElement("iframe");
      f.hidden = true;
      f.title = "Ribbon command runtime";
      f.src = `${profilePage("preview-commands.html")}${location.search}`;
      f.addEventListener("load", () => {
        this.commandFrame = f;
        // office-shim's onReady resolves on DOMContentLoaded; give the command bundle its turn.
        setTimeout(() => resolve(f), 0);
      });
      document.body.appendChild(f);
    });
  }

  /**
   * An Office dialog as an overlay frame: the add-in's page (its preview copy, with the shim
   * instead of the CDN office.js), `messageParent` → "dialogMessageReceived", the overlay's ✕ →
   * "dialogEventReceived" (12006, the user closed it), `close()` removes it. Sizes are percentages
   * of the window, as Office's `height`/`width` options are of the screen.
   */
  private openDialog(url: string, options: { height?: number; width?: number }): PreviewDialog | null {
    let target: URL;
    try {
      target = new URL(url, location.href);
    } catch {
      return null;
    }
    const name = target.pathname.split("/").pop() ?? "";
    const page = PREVIEW_DIALOG_PAGES[name];
    if (target.origin !== location.origin || !page) return null;
    target.pathname = target.pathname.replace(/[^/]*$/, page);

    const handlers = new Map<string, Array<(arg: unknown) => void>>();
    const backdrop = document.createElement("div");
    backdrop.className = "dialog-backdrop";
    backdrop.dataset.testid = "preview-dialog";
    const box = document.createElement("div");
    box.className = "dialog-box";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-label", "Add-in dialog");
    box.style.width = `max(320px, ${Math.min(100, options.width ?? 50)}vw)`;
    box.style.height = `max(220px, ${Math.min(100, options.height ?? 50)}vh)`;
    const title = document.createElement("div");
    title.className = "dialog-title";
    const label = document.createElement("span");
    label.textContent = "PPM for Excel";
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "✕";
    close.dataset.testid = "preview-dialog-close";
    close.setAttribute("aria-label", "Close the dialog");
    title.append(label, close);
    const frame = document.createElement("iframe");
    frame.name = "dialog";
    frame.title = "Add-in dialog";
    frame.src = target.href;
    box.append(title, frame);
    backdrop.appendChild(box);

    const entry = {
      frame,
      fire: (type: string, arg: unknown) => {
        for (const h of handlers.get(type) ?? []) h(arg);
      },
    };
    const remove = () => {
      backdrop.remove();
      this.dialogs = this.dialogs.filter((d) => d !== entry);
    };
    close.addEventListener("click", () => {
      remove();
      entry.fire("dialogEventReceived", { error: 12006 });
    });
    this.dialogs.push(entry);
    document.body.appendChild(backdrop);
    return {
      close: remove,
      addEventHandler: (type, handler) => {
        handlers.set(type, [...(handlers.get(type) ?? []), handler]);
      },
      // DialogApi 1.2: to the dialog page's DialogParentMessageReceived handler, if it registered one.
      messageChild: (message) => {
        try {
          frame.contentWindow?.__ppmPreviewDialogChild?.deliver(message, location.origin);
        } catch {
          /* the dialog is gone */
        }
      },
    };
  }

  private dialogMessage(frame: Window, message: string): void {
    const dialog = this.dialogs.find((d) => d.frame.contentWindow === frame);
    dialog?.fire("dialogMessageReceived", { message, origin: location.origin });
  }

  private notify(text: string): void {
    const box = $<HTMLDivElement>("notice");
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "✕";
    close.setAttribute("aria-label", "Dismiss");
    close.addEventListener("click", () => (box.hidden = true));
    const body = document.createElement("div");
    body.dataset.testid = "preview-notice-text";
    body.textContent = text;
    box.replaceChildren(close, body);
    // A counter, so a reader can tell a new notification from the previous one with the same text.
    box.dataset.seq = String(Number(box.dataset.seq ?? "0") + 1);
    box.hidden = false;
  }
}

/**
 * The page of a runtime for the platform profile of `?profile=` (src/emulator/profiles.ts): each
 * loads the client file Office loads on that platform (src/dev/webpack.preview.js builds one per
 * profile; the web's has no suffix).
 */
function profilePage(base: string): string {
  const id = new URLSearchParams(location.search).get("profile");
  return id && isProfileId(id) && id !== "web" ? base.replace(/\.html$/, `.${id}.html`) : base;
}

function spacer(height: number, cols: number): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.className = "spacer";
  tr.setAttribute("aria-hidden", "true");
  const td = document.createElement("td");
  td.colSpan = cols + 1;
  td.style.height = `${height}px`;
  tr.appendChild(td);
  return tr;
}

declare const __PPM_DEFAULT_SERVICE_URL__: string;
function defaultServiceUrl(): string {
  return typeof __PPM_DEFAULT_SERVICE_URL__ === "string" && __PPM_DEFAULT_SERVICE_URL__ ? __PPM_DEFAULT_SERVICE_URL__ : "(none)";
}

const page = new PreviewPage();
(window as unknown as { __ppmPreview: PreviewPage }).__ppmPreview = page;
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => page.start(), { once: true });
else page.start();
