/**
 * The browser preview's scenario toolbar (issue #25): everything a demo or a test needs to show the
 * pane in every state, without a terminal. Each control calls the reference service's loopback-only
 * control hooks (`/__control/...`, src/reference/control.ts), the same ones the README lists with a
 * copyable `curl`, and the result line shows that `curl` after each action. Every call carries the
 * hooks' header (`X-PPM-Control: 1`, issue #36): the service allows it in a preflight from the dev
 * server's origin only, so no other web page can drive the service.
 *
 * - regenerate a dataset: all rows, or a given number of rows changed, added and removed;
 * - make the service fail: HTTP 503, slow (3 s before every answer), unreachable (connections
 *   closed unanswered), or not at all;
 * - stop and start the service (its port really closes; a standby address starts it again);
 * - the task pane's width (320, 350 or 450 px) and Office's light or dark theme (without restarting the add-in).
 *
 * Dev only: part of preview.html, never of the add-in.
 */

/** The demo datasets that can be regenerated, and the demo companies (src/reference/data.ts). */
const DATASETS = ["financials", "projects", "resource_allocations", "risks"];
const COMPANIES = ["acme", "globex"];
/** Every path of the spec's three route groups. */
const API_PATHS = "/api/*";
const SLOW_MS = 3000;
export const PANE_WIDTHS = [320, 350, 450] as const;
const WIDTH_KEY = "ppm-preview:pane-width";
/** The control hooks' header (src/reference/controlHeader.ts; the preview may not import the service). */
const CONTROL_HEADERS = { "X-PPM-Control": "1" };
/** The same header as a curl option, after the address (so the hint still starts `curl -X POST 'address'`). */
const CURL_HEADER = "-H 'X-PPM-Control: 1'";
const START_KEY = "ppm-preview:service-start";

type Failing = "none" | "503" | "slow" | "drop";
/** A control hook's JSON answer (flat: numbers, strings, booleans). */
type Answer = Record<string, string | number | boolean | null | undefined>;

interface ServiceStatus {
  running: boolean;
  start?: string;
  faults?: Array<{ path: string; status: number | "drop" }>;
  delays?: Array<{ path: string; ms: number }>;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export class ScenarioControls {
  private readonly state = $<HTMLElement>("sc-service-state");
  private readonly stopBtn = $<HTMLButtonElement>("sc-stop");
  private readonly startBtn = $<HTMLButtonElement>("sc-start");
  private readonly fail = $<HTMLSelectElement>("sc-fail");
  private readonly dataset = $<HTMLSelectElement>("sc-regen-dataset");
  private readonly company = $<HTMLSelectElement>("sc-regen-company");
  private readonly counts = { changed: $<HTMLInputElement>("sc-changed"), added: $<HTMLInputElement>("sc-added"), removed: $<HTMLInputElement>("sc-removed") };
  private readonly width = $<HTMLSelectElement>("sc-pane-width");
  private readonly theme = $<HTMLSelectElement>("sc-theme");
  private readonly result = $<HTMLElement>("sc-result");

  /**
   * @param serviceUrl the reference service `npm start` runs (the preview's default environment), or null.
   * @param switchTheme switches Office's theme as the add-in sees it (without restarting it).
   */
  constructor(
    private readonly serviceUrl: string | null,
    private readonly switchTheme: (theme: "light" | "dark") => void,
  ) {}

  start(): void {
    fill(this.dataset, DATASETS.map((d) => [d, d]));
    fill(this.company, COMPANIES.map((c) => [c, c]));
    fill(this.width, PANE_WIDTHS.map((w) => [String(w), `${w} px`]));
    const params = new URLSearchParams(location.search);
    this.theme.value = params.get("theme") === "dark" ? "dark" : "light";
    this.setWidth(Number(params.get("paneWidth") ?? sessionStorage.getItem(WIDTH_KEY) ?? 350));
    this.width.addEventListener("change", () => {
      this.setWidth(Number(this.width.value));
      sessionStorage.setItem(WIDTH_KEY, this.width.value);
      this.say(`Task pane width: ${this.width.value} px.`);
    });
    this.theme.addEventListener("change", () => this.setTheme(this.theme.value === "dark" ? "dark" : "light"));

    if (!this.serviceUrl) {
      for (const el of document.querySelectorAll<HTMLButtonElement | HTMLSelectElement | HTMLInputElement>("#scenarios .needs-service")) el.disabled = true;
      this.showState("none", "no reference service (the preview was built without one)");
      return;
    }
    this.stopBtn.addEventListener("click", () => void this.stop());
    this.startBtn.addEventListener("click", () => void this.startService());
    this.fail.addEventListener("change", () => void this.setFailing(this.fail.value as Failing));
    $("sc-regen-all").addEventListener("click", () => void this.regenerate(false));
    $("sc-regen-partial").addEventListener("click", () => void this.regenerate(true));
    void this.refreshState();
  }

  /** The pane's width, as Office sizes a task pane (the user can drag it; these are its usual widths). */
  private setWidth(px: number): void {
    const w = PANE_WIDTHS.includes(px as (typeof PANE_WIDTHS)[number]) ? px : 350;
    this.width.value = String(w);
    // CSSOM, not a style attribute (the preview's pages keep to the add-in's Content-Security-Policy).
    $("pane").style.width = `${w}px`;
    document.body.dataset.paneWidth = String(w);
  }

  /**
   * Switches Office's theme. Changing it in Office does not restart an add-in (so nothing runs as if
   * the workbook were opened again; issue #37); Excel raises no event either, so the pane reads
   * `Office.context.officeTheme` again when it gets the focus, which this gives it. The address
   * keeps the theme for a reload of the page.
   */
  private setTheme(theme: "light" | "dark"): void {
    const url = new URL(location.href);
    if (theme === "dark") url.searchParams.set("theme", "dark");
    else url.searchParams.delete("theme");
    history.replaceState(null, "", url);
    this.switchTheme(theme);
    this.say(`Office theme: ${theme}. The task pane applies it when it has the focus, as in Excel; the add-in was not restarted.`);
  }

  private async refreshState(): Promise<void> {
    const status = await this.status();
    if (!status) {
      this.showState("unreachable", `not answering at ${this.serviceUrl} (started with npm start?)`);
      return;
    }
    if (!status.running) {
      this.showState("stopped", "stopped");
      return;
    }
    const fault = status.faults?.find((f) => f.path === API_PATHS);
    const slow = status.delays?.some((d) => d.path === API_PATHS && d.ms > 0);
    const failing: Failing = fault ? (fault.status === "drop" ? "drop" : "503") : slow ? "slow" : "none";
    this.fail.value = failing;
    this.showState(failing === "none" ? "running" : `failing-${failing}`, failing === "none" ? "running" : `running, ${this.fail.selectedOptions[0]?.textContent ?? failing}`);
  }

  /** The service's status, or the standby listener's while it is stopped; null when neither answers. */
  private async status(): Promise<ServiceStatus | null> {
    try {
      const res = await fetch(`${this.serviceUrl}/__control/status`, { cache: "no-store", headers: CONTROL_HEADERS });
      if (res.ok) return (await res.json()) as ServiceStatus;
    } catch {
      // Stopped (refused) or not there: ask the standby listener, if this page stopped it.
    }
    const start = sessionStorage.getItem(START_KEY);
    if (!start) return null;
    try {
      const res = await fetch(start.replace(/start$/, "status"), { cache: "no-store", headers: CONTROL_HEADERS });
      return res.ok ? ((await res.json()) as ServiceStatus) : null;
    } catch {
      return null;
    }
  }

  private showState(state: string, text: string): void {
    this.state.dataset.state = state;
    this.state.textContent = `${text}`;
    const stopped = state === "stopped";
    this.stopBtn.disabled = stopped || state === "unreachable" || state === "none";
    this.startBtn.disabled = !stopped;
    this.fail.disabled = stopped || state === "unreachable" || state === "none";
  }

  private async stop(): Promise<void> {
    const body = await this.control("stop", {});
    if (!body) return;
    sessionStorage.setItem(START_KEY, String(body.start));
    this.showState("stopped", "stopped");
    this.say("Service stopped: its port refuses connections (as when the process is not running).", `curl -X POST '${this.serviceUrl}/__control/stop' ${CURL_HEADER}`);
  }

  private async startService(): Promise<void> {
    const start = sessionStorage.getItem(START_KEY);
    if (!start) return this.say("This page did not stop the service; start it where it was started (npm start).");
    const body = await this.post(start, "start");
    if (!body) return;
    sessionStorage.removeItem(START_KEY);
    this.say(`Service started again at ${String(body.url ?? this.serviceUrl)}.`, `curl -X POST '${start}' ${CURL_HEADER}`);
    await this.refreshState();
  }

  private async setFailing(mode: Failing): Promise<void> {
    // One mode at a time: clear the others first.
    await this.control("fault", { path: API_PATHS, count: "0" }, true);
    await this.control("delay", { path: API_PATHS, ms: "0" }, true);
    const calls: Record<Failing, [string, Record<string, string>] | null> = {
      none: null,
      "503": ["fault", { path: API_PATHS, status: "503", count: "unlimited", retryAfter: "0" }],
      slow: ["delay", { path: API_PATHS, ms: String(SLOW_MS) }],
      drop: ["fault", { path: API_PATHS, status: "drop", count: "unlimited" }],
    };
    const call = calls[mode];
    const done = call ? await this.control(call[0], call[1]) : {};
    if (!done) return;
    const what: Record<Failing, string> = {
      none: "The service answers normally again.",
      "503": "Every request to the service's API now answers HTTP 503, until set back to no.",
      slow: `Every request to the service's API now waits ${SLOW_MS / 1000} s before its answer.`,
      drop: "Every request to the service's API is now closed without an answer (unreachable), until set back to no.",
    };
    this.say(what[mode], call ? this.curl(call[0], call[1]) : `${this.curl("fault", { path: API_PATHS, count: "0" })}; ${this.curl("delay", { path: API_PATHS, ms: "0" })}`);
    await this.refreshState();
  }

  private async regenerate(partial: boolean): Promise<void> {
    const params: Record<string, string> = { company: this.company.value, dataset: this.dataset.value };
    if (partial) {
      for (const [k, input] of Object.entries(this.counts)) {
        const n = input.value.trim();
        if (!/^\d+$/.test(n)) return this.say(`Rows ${k}: a whole number, please.`);
        params[`${k}Rows`] = n;
      }
      // A new seed each time: the same counts pick other rows.
      params.seed = String(Math.floor(Math.random() * 1e9));
    }
    const body = await this.control("regenerate", params);
    if (!body) return;
    const rows = typeof body.row_count === "number" ? `, ${body.row_count.toLocaleString("en-US")} rows` : "";
    const what = partial
      ? `${String(body.changed)} changed, ${String(body.added)} added, ${String(body.removed)} removed`
      : "every row regenerated";
    this.say(`${params.dataset} (${params.company}) regenerated: ${what} (generation ${String(body.generation)}${rows}). Refresh the table to see it.`, this.curl("regenerate", params));
    this.result.dataset.changed = String(body.changed ?? "");
    this.result.dataset.added = String(body.added ?? "");
    this.result.dataset.removed = String(body.removed ?? "");
  }

  private curl(action: string, params: Record<string, string>): string {
    return `curl -X POST '${this.serviceUrl}/__control/${action}?${new URLSearchParams(params).toString()}' ${CURL_HEADER}`;
  }

  private control(action: string, params: Record<string, string>, quiet = false): Promise<Answer | null> {
    const qs = new URLSearchParams(params).toString();
    return this.post(`${this.serviceUrl}/__control/${action}${qs ? `?${qs}` : ""}`, action, quiet);
  }

  private async post(url: string, action: string, quiet = false): Promise<Answer | null> {
    try {
      const res = await fetch(url, { method: "POST", cache: "no-store", headers: CONTROL_HEADERS });
      const body = (await res.json().catch(() => ({}))) as Answer;
      if (!res.ok) {
        if (!quiet) this.say(`${action} failed: ${typeof body.message === "string" ? body.message : `HTTP ${res.status}`}`);
        return null;
      }
      return body;
    } catch {
      if (!quiet) this.say(`${action}: the reference service at ${this.serviceUrl} does not answer.`);
      await this.refreshState();
      return null;
    }
  }

  private say(text: string, curl?: string): void {
    const line = document.createElement("span");
    line.textContent = text;
    const parts: Node[] = [line];
    if (curl) {
      const code = document.createElement("code");
      code.dataset.testid = "preview-controls-curl";
      code.textContent = curl;
      parts.push(document.createTextNode(" "), code);
    }
    this.result.replaceChildren(...parts);
    this.result.dataset.seq = String(Number(this.result.dataset.seq ?? "0") + 1);
  }
}

function fill(select: HTMLSelectElement, options: Array<[string, string]>): void {
  select.replaceChildren(
    ...options.map(([value, label]) => {
      const o = document.createElement("option");
      o.value = value;
      o.textContent = label;
      return o;
    }),
  );
}
