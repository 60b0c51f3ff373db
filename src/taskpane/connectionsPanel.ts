/**
 * Connections: add / edit / remove, test, update or forget a token. Secrets are typed into
 * password fields, stored by the connection store on this device only, and never shown again.
 */
import { h, replace } from "./dom";
import { addressOrigin, ConnectionInputError, sameOrigin, type ConnectionField, type ConnectionSummary } from "../addin/connectionStore";
import { describeError, type ErrorView } from "./errorView";
import { tokenForm } from "./tokenForm";
import type { PaneContext } from "./context";
import { confirmDialog, focusControl, setInvalid, textInput, withHint } from "./controls";
import { checkToken, refusedText, type TokenCheck } from "./checkToken";
import type { Connection } from "../service/connection";

type TestResult = { state: "pending" } | { state: "ok"; companyId: string; datasets: number } | { state: "error"; view: ErrorView };

/** What other sections can open in this one. */
export interface ConnectionHooks {
  add(): void;
  edit(id: string): void;
  updateToken(id: string): void;
}

/** Same environment: same origin and path, ignoring case of the host and a trailing slash. */
export function sameEnvironment(a: string, b: string): boolean {
  const norm = (u: string) => {
    try {
      const x = new URL(u.trim());
      return `${x.protocol}//${x.host}${x.pathname.replace(/\/+$/, "")}`.toLowerCase();
    } catch {
      return u.trim().replace(/\/+$/, "").toLowerCase();
    }
  };
  return norm(a) === norm(b);
}

/**
 * The address field's hint (issue #37: it said "(https)" beside a pre-filled http://localhost
 * address). The rule of the connection store: https, or http to this computer only.
 */
export function addressHint(prefilled: string): string {
  const local = /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?(\/|$)/i.test(prefilled);
  return local
    ? "The base URL of your company's environment: https, or http on this computer only (as the pre-filled demo service)."
    : "The base URL of your company's environment (https).";
}

/** Mounts the section. */
export function mountConnections(panel: HTMLElement, ctx: PaneContext): ConnectionHooks {
  const formHost = h("div", { class: "form-host" });
  const list = h("ul", { class: "list", "data-testid": "connection-list", "aria-label": "Connections on this device" });
  const tests = new Map<string, TestResult>();
  let tokenFor: string | null = null;

  const addButton = h("fluent-button", { type: "button", appearance: "primary", "data-testid": "connection-add", onclick: () => openForm(null) }, "Add connection");

  replace(
    panel,
    h("h2", {}, "Connections"),
    h("p", { class: "hint" }, "Each connection is one environment and one company. Tokens stay on this device; they are never written into the workbook."),
    h("div", { class: "toolbar" }, addButton),
    formHost,
    list,
  );

  function openForm(editing: ConnectionSummary | null): void {
    const mode = editing ? "edit" : "add";
    const name = textInput({ label: "Name", testid: "connection-name", required: true, maxlength: 100, value: editing?.name ?? "" });
    const baseUrl = textInput({ label: "Environment address", type: "url", testid: "connection-base-url", required: true, spellcheck: false, value: editing?.baseUrl ?? ctx.defaultServiceUrl, placeholder: "https://your-environment.example.com" });
    const token = textInput({ label: "Company API token", type: "password", testid: "connection-token", spellcheck: false, required: !editing });
    const apiAuth = textInput({ label: "api-auth", testid: "connection-api-auth", spellcheck: false });
    const apiSecret = textInput({ label: "api-secret", type: "password", testid: "connection-api-secret", spellcheck: false });
    const error = h("div", { class: "field-error", role: "alert", "data-testid": "connection-form-error" });
    // A Fluent submit button: Enter in a field submits through it (the text inputs' implicit submission).
    const saveBtn = h("fluent-button", { type: "submit", appearance: "primary", "data-testid": "connection-save" }, "Save");
    const inputs: Record<ConnectionField, FluentTextInputElement | null> = { name, baseUrl, token, apiAuth, apiSecret, id: null };
    const tokenHint = editing ? (editing.hasToken ? "Leave empty to keep the stored token." : "No token is stored; enter one.") : "Service: gear menu › company API token.";
    const recordHint = editing?.hasRecordCredentials ? "Leave empty to keep the stored value." : undefined;
    const tokenField = withHint(token, tokenHint);
    const recordFields = [withHint(apiAuth, recordHint), withHint(apiSecret, recordHint)];
    const form = h(
      "form",
      { class: "card", "data-testid": "connection-form", "data-mode": mode, "aria-label": editing ? `Edit ${editing.name}` : "Add a connection", novalidate: true },
      h("h3", {}, editing ? `Edit ${editing.name}` : "Add a connection"),
      withHint(name, "For you, e.g. \"Acme (EU)\"."),
      withHint(baseUrl, addressHint(ctx.defaultServiceUrl)),
      tokenField,
      h(
        "details",
        { class: "optional", open: editing?.hasRecordCredentials ? true : null },
        h("summary", {}, "Record credentials (optional, for the Records section)"),
        ...recordFields,
      ),
      error,
      h(
        "div",
        { class: "actions" },
        saveBtn,
        h("fluent-button", { type: "button", "data-testid": "connection-cancel", onclick: () => closeForm(true) }, "Cancel"),
      ),
    );
    form.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") closeForm(true);
    });
    let duplicateConfirmed = false;
    let checking = false;
    /**
     * Secrets stay with their host (issue #22): once the address points at another origin, the
     * stored token and record credentials will not be kept, so the form asks for the token again
     * and says why, naming both hosts.
     */
    const showMoved = (): void => {
      if (!editing) return;
      const to = addressOrigin(baseUrl.value);
      const moved = to !== null && !sameOrigin(editing.baseUrl, baseUrl.value);
      form.dataset.addressMoved = String(moved);
      const from = addressOrigin(editing.baseUrl) ?? editing.baseUrl;
      const tokenText = moved ? `Another server (${to}): enter its company API token. The stored token is only sent to ${from}.` : tokenHint;
      const recordText = moved ? `Not kept for another server: enter them again if ${to} needs them.` : recordHint;
      const setHint = (field: HTMLElement, text: string | undefined) => {
        const el = field.querySelector<HTMLElement>(".hint");
        if (el) el.textContent = text ?? "";
      };
      setHint(tokenField, tokenText);
      for (const f of recordFields) setHint(f, recordText);
      if (moved) token.setAttribute("required", "");
      else if (editing.hasToken) token.removeAttribute("required");
    };
    form.addEventListener("input", () => {
      duplicateConfirmed = false;
      showMoved();
    });
    /**
     * Another connection on this device to the same environment and company: the company is the
     * one the service said the new token belongs to (not typed in). A connection whose company is
     * not known yet is asked once.
     */
    const findTwin = async (company: string, url: string): Promise<ConnectionSummary | undefined> => {
      const sameEnv = ctx.store.list().filter((c) => c.id !== editing?.id && sameEnvironment(c.baseUrl, url));
      for (const c of sameEnv) {
        let known = c.companyId;
        if (!known) {
          const conn = ctx.store.connection(c.id);
          known = conn ? await ctx.engine().then((engine) => engine.manifest(conn)).then((m) => m.companyId).catch(() => null) : null;
        }
        if (known === company) return { ...c, companyId: known };
      }
      return undefined;
    };
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (!checking) void submit();
    });
    const showInputError = (e: unknown): void => {
      const f = e instanceof ConnectionInputError ? inputs[e.field] : null;
      error.textContent = e instanceof Error ? e.message : "The connection could not be saved.";
      if (f) {
        setInvalid(f, true);
        focusControl(f);
      }
    };
    const submit = async (): Promise<void> => {
      for (const i of Object.values(inputs)) if (i) setInvalid(i, false);
      error.textContent = "";
      const input = { id: editing?.id, name: name.value, baseUrl: baseUrl.value, token: token.value, apiAuth: apiAuth.value, apiSecret: apiSecret.value };
      let candidate: Connection;
      try {
        candidate = ctx.store.candidate(input);
      } catch (e) {
        showInputError(e);
        return;
      }
      // The service is asked first (issue #37): a token it refuses is not saved, and never replaces
      // the connection in use.
      checking = true;
      saveBtn.disabled = true;
      form.dataset.checking = "true";
      const checkingNote = h("p", { class: "note", "data-testid": "connection-checking" }, `Checking the token with ${addressOrigin(candidate.baseUrl) ?? candidate.baseUrl}…`);
      error.before(checkingNote);
      let check: TokenCheck;
      let twin: ConnectionSummary | undefined;
      try {
        check = await checkToken(ctx, candidate);
        // A second connection to the same environment and company is most often a mistake that
        // later makes tables ambiguous: ask first, once per filled-in form.
        if (check.state === "accepted" && check.companyId !== null && !editing && !duplicateConfirmed) twin = await findTwin(check.companyId, candidate.baseUrl);
      } finally {
        checking = false;
        saveBtn.disabled = false;
        delete form.dataset.checking;
        checkingNote.remove();
      }
      if (check.state === "refused") {
        error.textContent = refusedText(candidate.baseUrl);
        setInvalid(token, true);
        focusControl(token);
        return;
      }
      if (twin) {
        // A question, not an error: Cancel (focused, and Esc) keeps the one connection there is.
        await confirmDialog({
          title: "Add a second connection?",
          message: `"${twin.name}" already connects to company ${twin.companyId} on ${twin.baseUrl}. Tables are refreshed with one connection per environment and company; use "Update token" on it instead, or add this one anyway.`,
          testid: "connection-duplicate",
          confirm: { label: "Add anyway", testid: "connection-duplicate-confirm", onClick: () => ((duplicateConfirmed = true), void submit()) },
          cancel: { label: "Cancel", testid: "connection-duplicate-cancel", onClick: () => closeForm(true) },
        }).open();
        return;
      }
      let saved: ConnectionSummary;
      try {
        saved = ctx.store.save(input);
      } catch (e) {
        showInputError(e);
        return;
      }
      // Secrets leave the DOM as soon as they are stored.
      token.value = "";
      apiSecret.value = "";
      tests.delete(saved.id);
      closeForm(false);
      const previous = ctx.store.activeId();
      const droppedRecord = !!editing?.hasRecordCredentials && !saved.hasRecordCredentials;
      const dropped = droppedRecord ? ` The record credentials of ${addressOrigin(editing.baseUrl) ?? editing.baseUrl} were not kept for the new address.` : "";
      // A token or address changed: earlier test results are stale (the "credentials" listeners).
      ctx.changed("connections");
      ctx.changed("credentials");
      if (check.state === "unchecked") {
        // Saved, but not known to work: it does not take the place of a connection in use.
        tests.set(saved.id, { state: "error", view: { ...check.view, connectionId: saved.id } });
        const keep = previous !== null && previous !== saved.id && ctx.store.get(previous) !== null;
        if (keep) render();
        else ctx.setActive(saved.id);
        const using = keep ? ` "${ctx.store.get(previous)?.name ?? ""}" is still the connection in use; choose Use on "${saved.name}" once it works.` : "";
        ctx.status(`Connection "${saved.name}" saved, but not checked: ${check.view.title}.${using}${dropped}`);
        return;
      }
      if (check.companyId !== null) {
        ctx.store.setCompanyId(saved.id, check.companyId);
        tests.set(saved.id, { state: "ok", companyId: check.companyId, datasets: check.datasets });
      }
      ctx.setActive(saved.id);
      if (check.companyId !== null) {
        ctx.status(`Connection "${saved.name}" saved: connected to company ${check.companyId}, ${check.datasets.toLocaleString("en-US")} dataset${check.datasets === 1 ? "" : "s"}.${dropped}`);
      } else {
        ctx.status(`Connection "${saved.name}" saved.${dropped} Testing it…`);
        void test(saved.id);
      }
    };
    replace(formHost, form);
    addButton.disabled = true;
    focusControl(name);
  }

  function closeForm(restoreFocus: boolean): void {
    replace(formHost);
    addButton.disabled = false;
    if (restoreFocus) addButton.focus();
  }

  async function test(id: string): Promise<void> {
    const conn = ctx.store.connection(id);
    if (!conn) return;
    tests.set(id, { state: "pending" });
    render();
    // The result line belongs to this test: dropped if the user moved on to another connection or task.
    const scope = { connectionId: ctx.store.activeId() === id ? id : undefined, task: ctx.beginTask() };
    try {
      const engine = await ctx.engine();
      const m = await engine.manifest(conn);
      ctx.store.setCompanyId(id, m.companyId);
      tests.set(id, { state: "ok", companyId: m.companyId, datasets: m.datasets.length });
      ctx.announce(`${conn.name}: connected to company ${m.companyId}, ${m.datasets.length.toLocaleString("en-US")} dataset${m.datasets.length === 1 ? "" : "s"}.`, scope);
      ctx.changed("connections");
    } catch (e) {
      const view = describeError(e, { connectionId: id, baseUrl: conn.baseUrl, secrets: ctx.secrets() });
      tests.set(id, { state: "error", view });
      ctx.announce(`${conn.name}: ${view.title}.`, scope);
    }
    render();
  }

  function item(c: ConnectionSummary, activeId: string | null): HTMLLIElement {
    const isActive = c.id === activeId;
    const t = tests.get(c.id);
    const btn = (testid: string, label: string, onclick: () => void, extra: Record<string, string | boolean | null> = {}) =>
      h("fluent-button", { type: "button", size: "small", "data-testid": testid, "aria-label": `${label}: ${c.name}`, onclick, ...extra }, label);

    let result: HTMLElement | null = null;
    if (t?.state === "pending") result = h("div", { class: "test-result", "data-testid": "connection-test-result", "data-state": "pending" }, "Testing…");
    else if (t?.state === "ok")
      result = h(
        "div",
        { class: "test-result ok", "data-testid": "connection-test-result", "data-state": "ok" },
        "Connected. Company ",
        h("span", { "data-testid": "connection-company-id", class: "strong" }, t.companyId),
        " · ",
        h("span", { "data-testid": "connection-dataset-count", class: "strong" }, t.datasets.toLocaleString("en-US")),
        ` dataset${t.datasets === 1 ? "" : "s"}`,
      );
    else if (t?.state === "error")
      result = h(
        "div",
        { class: "test-result error", "data-testid": "connection-test-result", "data-state": "error" },
        ctx.errorPanel(t.view, { retry: () => void test(c.id) }),
      );

    // Removing forgets the stored credentials too: asked in a dialog, "Keep" focused (and Esc).
    const askRemove = () =>
      void confirmDialog({
        title: `Remove ${c.name}?`,
        message: `Remove "${c.name}" and its stored credentials from this device?`,
        testid: "connection-remove-dialog",
        // Fluent has no "danger" appearance; the destructive button is the primary one.
        confirm: {
          label: "Remove",
          testid: "connection-remove-confirm",
          onClick: () => {
            ctx.store.remove(c.id);
            tests.delete(c.id);
            ctx.changed("connections");
            ctx.changed("active");
            ctx.status(`Connection "${c.name}" removed.`);
            addButton.focus();
          },
        },
        cancel: { label: "Keep", testid: "connection-remove-cancel" },
      }).open();

    const li = h(
      "li",
      { class: `item${isActive ? " active" : ""}`, "data-testid": "connection-item", "data-connection-id": c.id, "data-active": String(isActive), "data-token": c.hasToken ? "stored" : "missing" },
      h(
        "div",
        { class: "item-head" },
        h("span", { class: "item-title", "data-testid": "connection-item-name" }, c.name),
        isActive ? h("span", { class: "badge" }, "Active") : null,
      ),
      h("div", { class: "meta" }, h("span", { "data-testid": "connection-item-url" }, c.baseUrl)),
      h(
        "div",
        { class: "meta" },
        c.companyId ? `Company ${c.companyId} · ` : "",
        c.hasToken ? "Token stored on this device" : h("span", { class: "warn" }, "No token stored"),
        c.hasRecordCredentials ? " · record credentials stored" : "",
      ),
      h(
        "div",
        { class: "actions wrap" },
        btn("connection-select", isActive ? "In use" : "Use", () => {
          ctx.setActive(c.id);
          ctx.status(`Using "${c.name}".`);
        }, { disabled: isActive ? true : null }),
        btn("connection-test", "Test connection", () => void test(c.id)),
        btn("connection-edit", "Edit", () => openForm(c)),
        btn("connection-update-token", "Update token", () => {
          tokenFor = c.id;
          render();
        }),
        btn("connection-forget-token", "Forget token", () => {
          ctx.store.forgetToken(c.id);
          tests.delete(c.id);
          ctx.changed("credentials");
          ctx.changed("connections");
          ctx.status(`Token forgotten for "${c.name}".`);
        }, { disabled: c.hasToken ? null : true }),
        btn("connection-remove", "Remove", askRemove),
      ),
      tokenFor === c.id
        ? tokenForm(
            ctx,
            c.id,
            // The form asked the service already: its answer is this connection's test result.
            (check) => {
              if (check.state === "unchecked") tests.set(c.id, { state: "error", view: { ...check.view, connectionId: c.id } });
              else if (check.state === "accepted" && check.companyId !== null) tests.set(c.id, { state: "ok", companyId: check.companyId, datasets: check.datasets });
              else void test(c.id);
              render();
            },
            () => {
              tokenFor = null;
              render();
            },
          )
        : null,
      result,
    );
    return li;
  }

  function render(): void {
    const focused = document.activeElement as HTMLElement | null;
    const focusId = focused?.dataset?.testid;
    const focusConn = focused?.closest<HTMLElement>("[data-connection-id]")?.dataset.connectionId;
    const connections = ctx.store.list();
    const activeId = ctx.store.activeId();
    if (connections.length === 0) {
      replace(list, h("li", { class: "empty" }, h("p", { "data-testid": "connections-empty" }, "No connections yet. Add one with your environment address and company API token.")));
    } else {
      replace(list, ...connections.map((c) => item(c, activeId)));
    }
    // Re-rendering replaces nodes; keep keyboard focus where it was.
    if (focusId && focusConn && list.contains(focused) === false) {
      list.querySelector<HTMLElement>(`[data-connection-id="${CSS.escape(focusConn)}"] [data-testid="${focusId}"]`)?.focus();
    }
  }

  ctx.on("connections", render);
  ctx.on("active", render);
  ctx.on("credentials", () => {
    // A token changed (here or from an error panel elsewhere): earlier test results are stale.
    for (const [id, r] of tests) if (r.state !== "pending") tests.delete(id);
    render();
  });
  render();
  return {
    add: () => openForm(null),
    edit: (id) => {
      const c = ctx.store.get(id);
      if (c) openForm(c);
    },
    updateToken: (id) => {
      if (!ctx.store.get(id)) return;
      tokenFor = id;
      render();
    },
  };
}

