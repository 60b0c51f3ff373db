/**
 * What the Records screens share: small DOM builders (the section's style is in taskpane.css, as
 * the Content-Security-Policy allows no inline style), and one
 * `RecordsScreenContext` over the shell's `RecordsContext` (active connection, records service,
 * cached custom-field metadata, error texts).
 */
import { PpmClient } from "../../service/client";
import type { Connection } from "../../service/connection";
import { describeRecordError, recordCredentialsProblem, recordsServiceFrom, type CustomFieldMeta, type RecordsService } from "../../records";
import { h } from "../dom";
import { select } from "../controls";
import type { RecordsContext } from "../recordsHost";


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
