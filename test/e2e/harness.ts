/**
 * The journeys' vocabulary: the preview page, the task pane frame inside it, the grid, the
 * reference service's control hooks, screenshots, and small waiting helpers.
 *
 * Journeys act only through the user interface (clicks and typing in the task pane and the grid)
 * and check results where a user or Excel would see them: grid cells (`data-*` attributes that
 * mirror what the emulated workbook holds) and the task pane's documented `data-testid`s. The
 * control hooks set up the service's state (regenerate, delay); they never make a step pass.
 *
 * **Waiting follows the page, not the clock (issue #37).** A wait ends when its state is reached,
 * and fails only when nothing has happened for a while: no change in any frame's DOM (counted by
 * {@link ACTIVITY_SCRIPT}), no request, no new answer from the probe. A slow or loaded machine
 * takes longer but keeps making progress, so it never runs out of a fixed time budget; a stuck
 * page is still caught, after `idleMs` of stillness.
 */
import * as fs from "fs";
import * as path from "path";
import type { Frame, FrameLocator, Locator, Page } from "playwright-core";
import { columnLetters } from "../../src/emulator/address";
import type { CaptureServer } from "./capture-server";
import { axeFrame, COMBOS, describe as describeAudits, previewLook, setPreviewLook, type Audit } from "./axe";
import { CONTROL } from "../helpers/control";

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  query: string;
  status: number;
}

/** A grid cell as the preview draws it: what the emulated workbook holds for that address. */
export interface GridCell {
  address: string;
  type: string;
  value: string;
  format: string;
  text: string;
  formula: string | null;
  /** Solid fill (`data-fill`), null for No Fill. */
  fill: string | null;
  /** The fill a conditional format gives the cell (`data-cf-fill`, drawn over `fill`), null for none. */
  cfFill: string | null;
}

export interface TablePlace {
  name: string;
  sheet: string;
  headerRow: number;
  firstColumn: number;
  dataRows: number;
  columns: number;
  address(i: number, c: number): string;
}

export interface Journey {
  name: string;
  run(t: E2E): Promise<void>;
}

export class E2EFailure extends Error {}

/** How long a wait accepts a page in which nothing changes before it fails (see the file's comment). */
export const IDLE_MS = 20_000;

/**
 * Runs in every frame before its own scripts (main.ts installs it with `addInitScript`): counts the
 * frame's DOM changes, the journeys' measure of whether the page is still doing something. Plain
 * JavaScript text, as the browser runs it (a function would be compiled with helpers of tsx's).
 */
export const ACTIVITY_SCRIPT = `(() => {
  window.__ppmActivity = 0;
  new MutationObserver(() => { window.__ppmActivity += 1; }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Options of an extra reference service one journey starts for itself (see {@link E2E.startService}). */
export interface ExtraServiceOptions {
  /** Row counts per dataset key, e.g. `{ financials: 2_000_000 }` (rows are generated as they stream). */
  datasetRows?: Record<string, number>;
}

/** Throws with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new E2EFailure(message);
}

export function checkEqual<T>(actual: T, expected: T, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new E2EFailure(`${what}: expected ${e}, got ${a}`);
}

export class E2E {
  /** The task pane frame of the preview. */
  readonly tp: FrameLocator;

  /** Figures a journey measured (printed under its result line; never asserted: no timed assertions). */
  readonly notes: string[] = [];

  /** Every accessibility audit of this run (main.ts prints the count). */
  readonly audits: Audit[] = [];

  /**
   * @param serviceUrl the main reference service (demo data).
   * @param otherServiceUrl a second environment of the same service: no snapshot routes, and a
   *   10,000-row `financials` (several environments side by side, absent routes, a large import).
   */
  /** Requests the page's context started or finished (part of {@link activity}). */
  private network = 0;

  constructor(
    readonly page: Page,
    readonly serviceUrl: string,
    readonly otherServiceUrl: string,
    readonly origin: string,
    private readonly screenshotDir: string,
    private readonly extraService?: (opts: ExtraServiceOptions) => Promise<string>,
    private readonly capture?: () => Promise<CaptureServer>,
  ) {
    this.tp = page.frameLocator("#taskpane");
    const bump = () => void this.network++;
    page.context().on("request", bump);
    page.context().on("requestfinished", bump);
    page.context().on("requestfailed", bump);
  }

  /**
   * A number that changes whenever the page does something: DOM changes in any of its frames (the
   * task pane, the grid, dialogs) and requests. Waits compare it to tell a slow page from a stuck one.
   */
  async activity(): Promise<number> {
    let n = this.network;
    for (const f of this.page.frames()) {
      try {
        n += await f.evaluate(() => (window as unknown as { __ppmActivity?: number }).__ppmActivity ?? 0);
      } catch {
        n += 1; // navigating: that is activity too
      }
    }
    return n;
  }

  /**
   * Starts a server on another origin that records every request with its headers (what a host
   * someone else controls would see); it runs until the end of the e2e run.
   */
  async startCaptureServer(): Promise<CaptureServer> {
    if (!this.capture) throw new E2EFailure("this run cannot start capture servers");
    return this.capture();
  }

  /**
   * Starts another reference service (127.0.0.1, port 0) with these options and returns its URL;
   * it runs until the end of the e2e run. For a journey that needs a state the two shared services
   * do not have (an export larger than a sheet) without changing theirs for the other journeys.
   */
  async startService(opts: ExtraServiceOptions): Promise<string> {
    if (!this.extraService) throw new E2EFailure("this run cannot start extra reference services");
    return this.extraService(opts);
  }

  /** Records a measured figure for the run's output. */
  note(text: string): void {
    this.notes.push(text);
  }

  /** The task pane's frame, for reading several attributes in one round trip. */
  frame(): Frame {
    const f = this.page.frame({ name: "taskpane" });
    if (!f) throw new E2EFailure("the task pane frame is not there");
    return f;
  }

  /** A task pane element by its documented test id. */
  id(testId: string): Locator {
    return this.tp.getByTestId(testId);
  }

  /**
   * Disabled, for native controls and Fluent UI web components alike: Playwright's isDisabled()
   * only counts native form controls and aria-disabled, while a Fluent button is a form-associated
   * custom element whose disabled state is its `disabled` attribute (it matches :disabled).
   */
  async isDisabled(loc: Locator): Promise<boolean> {
    return loc.evaluate((el) => el.matches(":disabled") || el.getAttribute("aria-disabled") === "true" || (el.hasAttribute("disabled") && el.tagName.includes("-")));
  }

  // ---- Fluent UI controls ------------------------------------------------------------------------
  // Playwright's fill, check and selectOption act on native form controls; the pane's controls are
  // Fluent UI web components. These helpers act on them the way a user does (typing into the
  // component's own field, clicking, picking from the open list) and read the state the
  // component exposes; on native controls they do what Playwright does.

  /**
   * Types `text` into a text input or textarea, replacing what it held. In a Fluent one this is
   * the `<input>`/`<textarea>` in its shadow root (Playwright's CSS locators pierce open shadow
   * roots); the component takes its value from that field's own input events.
   */
  async fill(loc: Locator, text: string): Promise<void> {
    const tag = await loc.evaluate((el) => el.localName);
    if (tag === "fluent-text-input" || tag === "fluent-textarea") await loc.locator("input, textarea").fill(text);
    else await loc.fill(text);
  }

  /** The value of a text input or textarea (native or Fluent). */
  async inputValue(loc: Locator): Promise<string> {
    return loc.evaluate((el) => {
      const v = (el as { value?: unknown }).value;
      return typeof v === "string" ? v : "";
    });
  }

  /** Whether a checkbox or radio (native or Fluent) is checked. */
  async isChecked(loc: Locator): Promise<boolean> {
    return loc.evaluate((el) => (el as { checked?: unknown }).checked === true);
  }

  /** Checks a checkbox or radio with a click, unless it is checked already. */
  async check(loc: Locator): Promise<void> {
    if (await this.isChecked(loc)) return;
    await loc.click();
    await this.until(`${String(loc)} to be checked`, () => this.isChecked(loc));
  }

  /** The options of a dropdown (Fluent `fluent-option`s or a native select's), in order. */
  async options(loc: Locator): Promise<Array<{ value: string; label: string }>> {
    return loc.evaluate((el) =>
      [...el.querySelectorAll("fluent-option, option")].map((o) => ({ value: o.getAttribute("value") ?? "", label: (o.textContent ?? "").trim() })),
    );
  }

  /** Picks the option with `value`: opens the dropdown and clicks the option, as a user does. */
  async selectOption(loc: Locator, value: string): Promise<void> {
    if ((await loc.evaluate((el) => el.localName)) !== "fluent-dropdown") {
      await loc.selectOption(value);
      return;
    }
    await loc.click();
    await loc.locator(`fluent-option[value="${value.replace(/["\\]/g, "\\$&")}"]`).click();
    await this.until(`option ${value} to be selected in ${String(loc)}`, () => loc.evaluate((el, v) => (el as { value?: unknown }).value === v, value));
  }

  /** Waits for an element to be visible; fails with a sentence saying what the user should have seen. */
  async expectVisible(loc: Locator, what: string, idleMs = IDLE_MS): Promise<void> {
    try {
      await this.until(`${String(loc)} to be visible`, () => loc.isVisible(), idleMs);
    } catch (e) {
      throw new E2EFailure(`${what} (not shown: ${e instanceof Error ? e.message : String(e)})`);
    }
  }

  /**
   * Polls `probe` until it returns a truthy value. Fails with `what` only when the page has done
   * nothing for `idleMs` (no DOM change in any frame, no request, no new probe result): a slow
   * machine makes progress and is waited for, a stuck page is not (issue #37).
   */
  async until<T>(what: string, probe: () => Promise<T> | T, idleMs = IDLE_MS): Promise<NonNullable<T>> {
    let last: unknown;
    let seen: string | null = null;
    let changedAt = Date.now();
    for (;;) {
      try {
        const v = await probe();
        if (v) return v;
        last = v;
      } catch (err) {
        last = err instanceof Error ? err.message : err;
      }
      const now = `${await this.activity()}|${JSON.stringify(last)}`;
      if (now !== seen) {
        seen = now;
        changedAt = Date.now();
      } else if (Date.now() - changedAt > Math.max(idleMs, IDLE_MS)) {
        throw new E2EFailure(`timed out waiting for ${what}: nothing changed in the page for ${Math.round(Math.max(idleMs, IDLE_MS) / 1000)} s (last: ${JSON.stringify(last)})`);
      }
      await sleep(100);
    }
  }

  /** Waits until a locator's attribute has the wanted value (or satisfies the predicate). */
  async attr(loc: Locator, name: string, want: string | ((v: string | null) => boolean), timeoutMs = IDLE_MS): Promise<string | null> {
    const ok = typeof want === "string" ? (v: string | null) => v === want : want;
    let seen: string | null = null;
    await this.until(
      `${name}${typeof want === "string" ? `="${want}"` : " to match"} on ${String(loc)}`,
      async () => {
        seen = (await loc.count()) > 0 ? await loc.first().getAttribute(name) : null;
        return ok(seen);
      },
      timeoutMs,
    );
    return seen;
  }

  // ---- the grid ---------------------------------------------------------------------------------

  /**
   * Lets a redraw the preview has queued (it redraws once per animation frame after workbook
   * changes) happen before the grid is read, so a read never sees the previous state.
   */
  async settled(): Promise<void> {
    await this.page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));
  }

  /** Name of the active sheet as the grid shows it. */
  async activeSheet(): Promise<string> {
    await this.settled();
    return (await this.page.getAttribute("#grid", "data-sheet")) ?? "";
  }

  async sheetNames(): Promise<string[]> {
    await this.settled();
    return this.page.$$eval("#tabs [data-sheet]", (els) => els.map((e) => (e as HTMLElement).dataset.sheet ?? ""));
  }

  /** Clicks a sheet tab, like a user. */
  async openSheet(name: string): Promise<void> {
    await this.page.locator(`#tabs [data-sheet="${name}"]`).click();
    await this.until(`sheet ${name} to be active`, async () => (await this.activeSheet()) === name);
  }

  /**
   * Reads one cell of the active sheet. Cells outside the drawn window are brought into view with
   * the name box, as a user would (this also selects the cell, which nothing in a journey minds).
   */
  async cell(address: string): Promise<GridCell> {
    await this.settled();
    const read = () =>
      this.page.evaluate((a) => {
        const td = document.querySelector<HTMLElement>(`#grid td[data-address="${a}"]`);
        if (!td) return null;
        return {
          address: a,
          type: td.dataset.type ?? "",
          value: td.dataset.value ?? "",
          format: td.dataset.format ?? "",
          text: td.textContent ?? "",
          formula: td.dataset.formula ?? null,
          fill: td.dataset.fill ?? null,
          cfFill: td.dataset.cfFill ?? null,
        };
      }, address);
    const first = await read();
    if (first) return first;
    await this.goTo(address);
    return this.until(`cell ${address} to be drawn`, read);
  }

  /** Row `i` of a table (0 = header) as drawn in the grid, `columns` cells from its first column. */
  async tableRow(place: TablePlace, i: number, columns = place.columns): Promise<GridCell[]> {
    if ((await this.activeSheet()) !== place.sheet) await this.openSheet(place.sheet);
    const out: GridCell[] = [];
    for (let c = 0; c < columns; c++) out.push(await this.cell(place.address(i, c)));
    return out;
  }

  /**
   * Every used cell of a sheet as the grid would draw it (value text and type), in one round trip.
   * For checks over whole tables, where scrolling the virtualised grid cell by cell would be slow.
   */
  async sheetValues(sheet: string): Promise<Array<Array<{ type: string; value: string }>>> {
    return this.page.evaluate((name) => {
      type Wb = {
        usedExtent(s: string): { rows: number; cols: number };
        cell(s: string, r: number, c: number): { type: string; value: string };
      };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
      if (!wb) throw new Error("no workbook attached to the preview");
      const { rows, cols } = wb.usedExtent(name);
      const out: Array<Array<{ type: string; value: string }>> = [];
      for (let r = 0; r < rows; r++) {
        const row: Array<{ type: string; value: string }> = [];
        for (let c = 0; c < cols; c++) {
          const cell = wb.cell(name, r, c);
          row.push({ type: cell.type, value: cell.value });
        }
        out.push(row);
      }
      return out;
    }, sheet);
  }

  /**
   * Where an Excel table sits: its sheet, the 1-based row of its header and its 0-based first column.
   * `address(i, c)` is the A1 address of data row `i` (0 = header) and column `c` of the table.
   */
  async table(name: string): Promise<TablePlace> {
    const found = await this.page.evaluate((n) => {
      type Wb = { tables(): Array<{ name: string; sheet: string; r0: number; c0: number; r1: number; c1: number }> };
      const wb = (window as unknown as { __ppmPreviewHost?: { workbook(): Wb | null } }).__ppmPreviewHost?.workbook();
      return wb?.tables().find((t) => t.name === n) ?? null;
    }, name);
    if (!found) throw new E2EFailure(`no Excel table named ${name} in the workbook`);
    return {
      name,
      sheet: found.sheet,
      headerRow: found.r0 + 1,
      firstColumn: found.c0,
      dataRows: found.r1 - found.r0,
      columns: found.c1 - found.c0 + 1,
      address: (i: number, c: number) => `${columnLetters(found.c0 + c)}${found.r0 + 1 + i}`,
    };
  }

  /** Waits until what the user did in the grid has reached the workbook (the preview's `data-pending`). */
  async gridIdle(): Promise<void> {
    await this.until("the grid's input to reach the workbook", () => this.page.evaluate(() => (document.getElementById("grid")?.dataset.pending ?? "0") === "0"));
  }

  /** Types an address (`C5`, `Sheet1!C5`) into the name box and presses Enter (selects that cell). */
  async goTo(address: string): Promise<void> {
    await this.gridIdle();
    const box = this.page.getByTestId("preview-name-box");
    await box.fill(address);
    await box.press("Enter");
    const bang = address.lastIndexOf("!");
    const cell = bang < 0 ? address : address.slice(bang + 1);
    const sheet = bang < 0 ? null : address.slice(0, bang).replace(/^'(.*)'$/, "$1").replace(/''/g, "'");
    await this.until(`${address} to be selected`, () =>
      this.page.evaluate(
        ([a, s]) =>
          !!document.querySelector(`#grid td.selected[data-address="${a}"]`) &&
          (s === null || document.getElementById("grid")?.dataset.sheet === s) &&
          (document.getElementById("grid")?.dataset.pending ?? "0") === "0",
        [cell, sheet] as const,
      ),
    );
  }

  /** Selects a cell and types text into it, then Enter: exactly what a user does in Excel. */
  async typeInCell(address: string, text: string): Promise<void> {
    await this.goTo(address);
    await this.page.getByTestId("preview-grid-scroll").press("F2");
    const editor = this.page.getByTestId("preview-cell-editor");
    await editor.fill(text);
    await editor.press("Enter");
    await editor.waitFor({ state: "detached" });
    await this.gridIdle();
  }

  /** Counters of the emulated workbook (syncs, cell writes), to prove that something did not happen. */
  async workbookStats(): Promise<{ syncs: number; cellWrites: number; changes: number }> {
    return this.page.evaluate(() => {
      const host = (window as unknown as { __ppmPreviewHost?: { workbook(): { stats(): unknown } | null } }).__ppmPreviewHost;
      const wb = host?.workbook();
      if (!wb) throw new Error("no workbook attached to the preview");
      return wb.stats() as { syncs: number; cellWrites: number; changes: number };
    });
  }

  // ---- the reference service ----------------------------------------------------------------------

  /** Calls a control hook of the reference service (the main one unless `serviceUrl` names the other). */
  async control(action: string, params: Record<string, string | number> = {}, method = "POST", serviceUrl = this.serviceUrl): Promise<unknown> {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
    const res = await fetch(`${serviceUrl}/__control/${action}${qs ? `?${qs}` : ""}`, { method, headers: CONTROL });
    const body = await res.text();
    if (!res.ok) throw new E2EFailure(`control ${action} answered ${res.status}: ${body}`);
    return body ? JSON.parse(body) : null;
  }

  async requests(): Promise<RequestLogEntry[]> {
    const body = (await this.control("requests", {}, "GET")) as { requests: RequestLogEntry[] };
    return body.requests;
  }

  async clearRequests(): Promise<void> {
    await this.control("requests", {}, "DELETE");
  }

  // ---- evidence -----------------------------------------------------------------------------------

  /**
   * Audits the screen the journey shows now with axe-core (test/e2e/axe.ts): the task pane, and an
   * open Office dialog, each in Office's light and dark themes at 320 and 450 px; the pane is put
   * back as it was. Fails on any serious or critical violation (issue #37). Every screenshot is
   * audited, so every screen the README shows is.
   */
  async audit(screen: string): Promise<void> {
    const pane = this.frame();
    const paneShown = await this.page.locator("#pane").isVisible();
    const dialogHandle = (await this.page.getByTestId("preview-dialog").isVisible().catch(() => false)) ? await this.page.getByTestId("preview-dialog").locator("iframe").elementHandle() : null;
    const dialog = dialogHandle ? await dialogHandle.contentFrame() : null;
    if (!paneShown && !dialog) return;
    const was = await previewLook(this.page);
    const found: Audit[] = [];
    // The pointer off the pane: a hovered button's colours are not its colours.
    await this.page.mouse.move(1, 1);
    try {
      for (const look of COMBOS) {
        if (paneShown) {
          await setPreviewLook(this.page, pane, look, (what, probe) => this.until(what, probe));
          found.push({ screen, frame: "task pane", ...look, violations: await axeFrame(pane) });
        }
        // The dialog's page has no theme of its own and its own size: audited once.
        if (dialog && look.theme === "light" && look.width === 320) found.push({ screen, frame: "dialog", ...look, violations: await axeFrame(dialog) });
      }
    } finally {
      if (paneShown) await setPreviewLook(this.page, pane, was, (what, probe) => this.until(what, probe));
    }
    this.audits.push(...found);
    const bad = found.filter((a) => a.violations.length > 0);
    if (bad.length > 0) throw new E2EFailure(`accessibility (axe-core): serious or critical violations on ${screen}:\n${describeAudits(bad)}`);
  }

  /** Saves a screenshot of the whole preview (grid + task pane) as docs/screenshots/<name>.png, after auditing the screen. */
  async screenshot(name: string): Promise<void> {
    await this.audit(name);
    fs.mkdirSync(this.screenshotDir, { recursive: true });
    await this.page.screenshot({ path: path.join(this.screenshotDir, `${name}.png`) });
  }

  /** Where a screenshot called `name` goes (for screenshots of other pages than the main one). */
  screenshotPath(name: string): string {
    fs.mkdirSync(this.screenshotDir, { recursive: true });
    return path.join(this.screenshotDir, `${name}.png`);
  }

  /** Saves a screenshot of the task pane alone (for the README's screen-by-screen list), after auditing the screen. */
  async screenshotPane(name: string): Promise<void> {
    await this.audit(name);
    fs.mkdirSync(this.screenshotDir, { recursive: true });
    await this.page.locator("#taskpane").screenshot({ path: path.join(this.screenshotDir, `${name}.png`) });
  }
}
