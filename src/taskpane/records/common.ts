/**
 * What the Records screens share: the section's style, small DOM builders, and one
 * `RecordsScreenContext` over the shell's `RecordsContext` (active connection, records service,
 * cached custom-field metadata, error texts).
 */
import { PpmClient } from "../../service/client";
import type { Connection } from "../../service/connection";
import { describeRecordError, recordCredentialsProblem, recordsServiceFrom, type CustomFieldMeta, type RecordsService } from "../../records";
import { h } from "../dom";
import { select } from "../controls";
import type { RecordsContext } from "../recordsHost";

const STYLE_ID = "records-style";
const CSS = `
.records-tabs { margin: 0 0 12px; flex-wrap: wrap; }
.records-notice { background: #fff4ce; border-left: 3px solid #c19c00; padding: 8px 10px; margin: 0 0 12px; }
.records-error { color: #a4262c; min-height: 1em; }
.records-ok { color: #107c41; min-height: 1em; }
.records-row { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; margin: 0 0 8px; }
.records-field { display: flex; flex-direction: column; gap: 2px; min-width: 0; }
.records-field .label { font-size: 12px; }
.records-table { border-collapse: collapse; width: 100%; font-size: 12px; margin: 8px 0; }
.records-table th, .records-table td { border-bottom: 1px solid #e0e0e0; padding: 4px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
.records-strong { font-weight: 600; }
.records-value { font-family: Consolas, "Courier New", monospace; white-space: pre-wrap; }
.records-result { font-weight: 600; margin-top: 2px; }
.records-table tr[data-validation="invalid"] td, .records-table tr[data-result="rejected"] td { background: #fde7e9; }
.records-table tr[data-validation="conflict"] td { background: #fff4ce; }
.records-table tr[data-result="saved"] td { background: #dff6dd; }
.records-field-error { color: #a4262c; font-size: 12px; min-height: 1em; }
.records-muted { color: #616161; font-size: 12px; }
`;

export function injectStyle(): void {
  if (document.getElementById(STYLE_ID)) return;
  const style = document.createElement("style");
  style.id = STYLE_ID;
  style.textContent = CSS;
  document.head.appendChild(style);
}

/** A Fluent button; an async `onclick` runs to completion on its own (it reports its errors itself). */
export function btn(testid: string, text: string, onclick: () => void | Promise<void>, primary = false): FluentButtonElement {
  return h("fluent-button", { type: "button", appearance: primary ? "primary" : null, "data-testid": testid, onclick: () => void onclick() }, text);
}

/** The record kind dropdown with its label (`<div class="records-field">label dropdown</div>`). */
export function kindSelect(testid: string): { control: FluentDropdownElement; field: HTMLElement } {
  return selectField("Kind", testid, [
    { value: "project", label: "Project" },
    { value: "proposal", label: "Proposal" },
  ]);
}

/** A labelled dropdown for a records row. */
export function selectField(label: string, testid: string, options: Array<{ value: string; label: string }>): { control: FluentDropdownElement; field: HTMLElement } {
  const s = select({ label, testid, options });
  return { control: s.control, field: h("div", { class: "records-field" }, s.label, s.control) };
}

export function show(v: string | null): string {
  return v === null ? "(none)" : v === "" ? "(empty)" : v;
}

/** The shell's context plus what every screen derives from it. */
export interface RecordsScreenContext {
  readonly ctx: RecordsContext;
  /** The active connection (with secrets; never display it), read again on each use. */
  connection: () => Connection | null;
  /** A records service for the active connection; null without a connection or token. */
  service: () => RecordsService | null;
  /** Custom-field metadata of the active connection (manifest), cached per connection; null = unavailable. */
  customFields: () => Promise<CustomFieldMeta[] | null>;
  /** Forgets the cached custom-field metadata (the connection or its credentials changed). */
  forgetCustomFields: () => void;
  /** Why record requests cannot be sent with the active connection; null when they can. */
  credsProblem: () => string | null;
  /** The user-facing text of an error: message and action. */
  errorText: (e: unknown) => string;
  /** After a 401, adds an "Update credentials" button to `host` for the active connection. */
  maybeTokenUpdate: (e: unknown, host: HTMLElement) => void;
}

export function screenContext(ctx: RecordsContext): RecordsScreenContext {
  let fieldCache: { connectionId: string; fields: CustomFieldMeta[] | null } | null = null;
  const connection = (): Connection | null => ctx.getActiveConnection();
  const service = (): RecordsService | null => {
    const c = connection();
    return c && c.token ? recordsServiceFrom(new PpmClient(c)) : null;
  };
  return {
    ctx,
    connection,
    service,
    customFields: async () => {
      const c = connection();
      if (!c) return null;
      if (fieldCache && fieldCache.connectionId === c.id) return fieldCache.fields;
      let fields: CustomFieldMeta[] | null = null;
      try {
        fields = (await service()?.customFields()) ?? null;
        if (fields && fields.length === 0) fields = null;
      } catch {
        fields = null;
      }
      fieldCache = { connectionId: c.id, fields };
      return fields;
    },
    forgetCustomFields: () => {
      fieldCache = null;
    },
    credsProblem: () => recordCredentialsProblem(connection()),
    errorText: (e) => {
      const d = describeRecordError(e);
      return d.action ? `${d.message} ${d.action}` : d.message;
    },
    maybeTokenUpdate: (e, host) => {
      const d = describeRecordError(e);
      const c = connection();
      if (d.code === "unauthorized" && c) host.appendChild(h("fluent-button", { type: "button", size: "small", onclick: () => ctx.requestTokenUpdate(c.id) }, "Update credentials"));
    },
  };
}
