/**
 * The summary dialog's page (`summary.html`), opened by the ribbon's commands with
 * `displayDialogAsync`. It shows only what its opener sends by `messageChild` (see
 * `summaryMessages.ts`); its address carries nothing, so opened outside an Office dialog (a link
 * to the add-in's origin) it stays empty. Text only (`textContent`), never HTML: the summary
 * carries table names and service messages.
 */
import { CLOSE, parseSummaryMessage, READY, summaryTitle } from "./summaryMessages";

/** The slice of `Office` the page uses (office.js in Office, the preview's shim in the browser). */
interface DialogOffice {
  onReady(): Promise<unknown>;
  EventType?: { DialogParentMessageReceived?: string };
  context?: {
    ui?: {
      messageParent?(message: string): void;
      addHandlerAsync?(eventType: string, handler: (arg: { message?: unknown; origin?: unknown }) => void, callback?: (result: { status: unknown }) => void): void;
    };
  };
}

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`summary.html: #${id} is missing`);
  return el as T;
}

function start(office: DialogOffice): void {
  const title = byId<HTMLHeadingElement>("title");
  const text = byId<HTMLDivElement>("text");
  const working = byId<HTMLProgressElement>("working");
  const close = byId<HTMLButtonElement>("close");
  const ui = office.context?.ui;
  const send = (message: string): void => {
    try {
      ui?.messageParent?.(message);
    } catch {
      /* not in a dialog: nobody to tell */
    }
  };
  close.addEventListener("click", () => send(CLOSE));

  const show = (raw: unknown, origin: unknown): void => {
    // From the add-in's own pages only (Office passes the sender's origin where it knows it).
    if (typeof origin === "string" && origin !== "" && origin !== location.origin) return;
    const m = parseSummaryMessage(raw);
    if (!m) return;
    document.body.dataset.state = m.state;
    title.textContent = summaryTitle(m.state);
    title.className = m.state === "failed" ? "failed" : "";
    // The headline, then one list item per table (issue #37: one block of text ran the tables
    // together). Text nodes only: the lines carry table names and service messages.
    const [headline, ...lines] = m.text.split("\n");
    const p = document.createElement("p");
    p.className = "headline";
    p.textContent = headline ?? "";
    const list = document.createElement("ul");
    for (const line of lines) {
      const li = document.createElement("li");
      li.textContent = line;
      list.appendChild(li);
    }
    text.replaceChildren(p, ...(lines.length ? [list] : []));
    working.hidden = m.state !== "working";
    // While the command runs: "Hide" (the summary takes its place when it ends).
    close.textContent = m.state === "working" ? "Hide" : "Close";
    for (const el of [title, text, close]) el.hidden = false;
    if (document.activeElement !== close) close.focus();
  };

  const type = office.EventType?.DialogParentMessageReceived ?? "dialogParentMessageReceived";
  if (typeof ui?.addHandlerAsync !== "function" || typeof ui.messageParent !== "function") return;
  try {
    ui.addHandlerAsync(type, (arg) => show(arg?.message, arg?.origin), (result) => {
      if (String(result?.status) === "succeeded") send(READY);
    });
  } catch {
    /* not in a dialog (or no DialogApi 1.2): stays empty */
  }
}

const office = (globalThis as unknown as { Office?: DialogOffice }).Office;
if (office && typeof office.onReady === "function") {
  void office.onReady().then(
    () => start(office),
    () => undefined,
  );
}
