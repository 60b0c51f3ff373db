/**
 * What the ribbon's buttons should look like, and asking Office to show it (issue 17).
 *
 * "Change the availability of add-in commands" (learn.microsoft.com/office/dev/add-ins/design/
 * disable-add-in-commands): `Office.ribbon.requestUpdate` (RibbonApi 1.1, needs the shared
 * runtime) takes the tab, group and control ids of the manifest. It only queues the update, the
 * ribbon sometimes does not repaint, and it can fail (`HostRestartNeeded` after an upgrade;
 * "RibbonApiNotAvailable", office-js#2876). So, as the article advises, the intended state is kept
 * here and every command checks it first instead of trusting the button's look.
 *
 * "Refresh this table" starts disabled (`<Enabled>false</Enabled>` in the manifest, issue #21): Office
 * shows it greyed out until the runtime, once it knows the selection is inside a bound table, enables
 * it. "Refresh all" starts enabled. Where the ribbon cannot be changed (no shared runtime), Office
 * shows no add-in commands with a state to set: Excel on iPad, the one platform of the add-in's
 * requirement set without SharedRuntime 1.1.
 */

/** Ids from manifest.xml (`OfficeTab id`, `Group id`, `Control id`). */
export const RIBBON_IDS = {
  tab: "TabData",
  group: "PPM.Group",
  refreshAll: "PPM.RefreshAll",
  refreshTable: "PPM.RefreshTable",
} as const;

/** The slice of `Office.ribbon` used here. */
export interface RibbonApi {
  requestUpdate(input: { tabs: Array<{ id: string; groups: Array<{ id: string; controls: Array<{ id: string; enabled: boolean }> }> }> }): Promise<void>;
}

export interface RibbonButtons {
  refreshAll: boolean;
  refreshTable: boolean;
}

export interface RibbonInputs {
  /** A refresh holds the runtime's lock. */
  busy: boolean;
  /** The selection is inside (or on the info line of) a bound table. */
  tableAtSelection: boolean;
}

/** The buttons' intended state for the given inputs. */
export function buttonsFor(inputs: RibbonInputs): RibbonButtons {
  return { refreshAll: !inputs.busy, refreshTable: !inputs.busy && inputs.tableAtSelection };
}

/**
 * Keeps the ribbon in step: coalesces bursts (selection changes while a request is queued) into
 * one `requestUpdate` for the latest state, and sends nothing when the state did not change.
 */
export class RibbonState {
  private inputs: RibbonInputs = { busy: false, tableAtSelection: false };
  private applied: RibbonButtons | null = null;
  private sending: Promise<void> | null = null;
  private lastError: unknown = null;

  constructor(
    private readonly api: RibbonApi | null,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  /** Whether the ribbon can be changed at all (shared runtime with RibbonApi 1.1). */
  get supported(): boolean {
    return this.api !== null;
  }

  /** The state the buttons should have now (what commands check before acting). */
  get intended(): RibbonButtons {
    return buttonsFor(this.inputs);
  }

  get error(): unknown {
    return this.lastError;
  }

  /** Updates some inputs; resolves when the resulting state has been handed to Office. */
  set(change: Partial<RibbonInputs>): Promise<void> {
    this.inputs = { ...this.inputs, ...change };
    return this.flush();
  }

  /** Sends the intended state again even if it was sent (a command found the ribbon out of step). */
  resend(): Promise<void> {
    this.applied = null;
    return this.flush();
  }

  private flush(): Promise<void> {
    if (!this.api) return Promise.resolve();
    if (this.sending) return this.sending;
    const api = this.api;
    const send = async (): Promise<void> => {
      // Loop: inputs may change while a request is on its way; the last state always goes out.
      for (;;) {
        const want = this.intended;
        if (this.applied && this.applied.refreshAll === want.refreshAll && this.applied.refreshTable === want.refreshTable) return;
        try {
          await api.requestUpdate({
            tabs: [
              {
                id: RIBBON_IDS.tab,
                groups: [
                  {
                    id: RIBBON_IDS.group,
                    controls: [
                      { id: RIBBON_IDS.refreshAll, enabled: want.refreshAll },
                      { id: RIBBON_IDS.refreshTable, enabled: want.refreshTable },
                    ],
                  },
                ],
              },
            ],
          });
          this.applied = want;
          this.lastError = null;
        } catch (e) {
          // The buttons stay as they were; commands still check `intended` themselves.
          this.lastError = e;
          this.onError(e);
          return;
        }
      }
    };
    // Cleared after the assignment (a send that finds nothing to do completes synchronously).
    this.sending = send().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }
}
