/**
 * Accessibility audits with axe-core (Deque's engine, the one Microsoft's Accessibility Insights
 * uses; issue #37): every screen a journey shows is checked in the task pane and in an open Office
 * dialog, in Office's light and dark themes, at 320 and 450 px, and any serious or critical
 * violation fails the journey. The rules run as axe ships them: nothing is disabled.
 *
 * axe runs in the page through the driver's `evaluate` (CDP), which the pages' Content-Security-
 * Policy does not see as an inline script; axe itself writes no HTML sink, so the policy and its
 * Trusted Types stay enforced and silent while it runs (main.ts would fail the journey otherwise).
 */
import * as fs from "fs";
import type { Frame, Page } from "playwright-core";

export type Theme = "light" | "dark";

/** The four ways the pane is audited: Office's two themes at Office's narrowest and a wide pane. */
export const COMBOS: ReadonlyArray<{ theme: Theme; width: number }> = [
  { theme: "light", width: 320 },
  { theme: "light", width: 450 },
  { theme: "dark", width: 320 },
  { theme: "dark", width: 450 },
];

/** One rule a screen breaks, with the elements it names (axe's CSS selectors). */
export interface Violation {
  rule: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** What one audit found: the screen, where, and the serious or critical violations. */
export interface Audit {
  screen: string;
  frame: "task pane" | "dialog" | "page";
  theme: Theme;
  width: number;
  violations: Violation[];
}

let source: string | null = null;

/** Runs axe on a frame's document; the serious and critical violations. */
export async function axeFrame(frame: Frame): Promise<Violation[]> {
  if (!(await frame.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== "undefined"))) {
    source ??= fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
    await frame.evaluate(source);
  }
  // What the user sees once still: transitions (a button's colours after a theme switch or a
  // click) measured half way would be colours nobody reads. Endless ones (a busy bar) are left be.
  // Counted in frames, not awaited: a transition whose element changed meanwhile can leave its
  // `finished` promise unsettled (seen in Chromium), and a frame count is no wall-clock budget.
  await frame.evaluate(async () => {
    for (let i = 0; i < 240; i++) {
      const running = document.getAnimations().filter((a) => a.playState === "running" && Number.isFinite(Number(a.effect?.getComputedTiming().endTime)));
      if (running.length === 0) break;
      await new Promise<void>((r) => requestAnimationFrame(() => r()));
    }
  });
  return frame.evaluate(async () => {
    type Result = { violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> }> };
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<Result> } }).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ rule: v.id, impact: v.impact ?? "", help: v.help, nodes: v.nodes.slice(0, 5).map((n) => `${n.target.map(String).join(" > ")}: ${(n.failureSummary ?? "").split("\n").slice(1).join(" ").trim().slice(0, 240)}`) }));
  });
}

/** The preview's pane width and Office's theme as the add-in sees them (without the toolbar, so no focus moves). */
export async function previewLook(page: Page): Promise<{ theme: Theme; width: number }> {
  return page.evaluate(() => {
    const host = (window as unknown as { __ppmPreviewHost?: { officeTheme?: "light" | "dark" } }).__ppmPreviewHost;
    return { theme: host?.officeTheme === "dark" ? "dark" : "light", width: Math.round(document.getElementById("pane")?.getBoundingClientRect().width ?? 0) };
  });
}

/**
 * Sets the pane's width and Office's theme, as the preview's toolbar does, without moving focus:
 * the pane reads the theme again on a focus event of its window (taskpane.ts), which is sent to it
 * here without focusing it. Resolves once the pane shows both.
 */
export async function setPreviewLook(page: Page, pane: Frame, look: { theme: Theme; width: number }, until: (what: string, probe: () => Promise<boolean>) => Promise<unknown>): Promise<void> {
  await page.evaluate(({ theme, width }) => {
    const host = (window as unknown as { __ppmPreviewHost?: { officeTheme?: "light" | "dark" } }).__ppmPreviewHost;
    if (host) host.officeTheme = theme;
    const el = document.getElementById("pane");
    if (el) el.style.width = `${width}px`;
    document.body.dataset.paneWidth = String(width);
  }, look);
  await pane.evaluate(() => window.dispatchEvent(new Event("focus")));
  await until(`the pane in the ${look.theme} theme at ${look.width} px`, () =>
    pane.evaluate(
      ({ theme, width }) =>
        new Promise<boolean>((resolve) =>
          // Two frames: Fluent's tokens are set a task after the theme attribute.
          requestAnimationFrame(() =>
            requestAnimationFrame(() => resolve((document.documentElement.dataset.theme === "dark") === (theme === "dark") && Math.abs(document.documentElement.clientWidth - width) <= 20)),
          ),
        ),
      look,
    ),
  );
}

/** "rule (impact): help — element: what is wrong" lines, for a failure message. */
export function describe(audits: readonly Audit[]): string {
  return audits
    .flatMap((a) => a.violations.map((v) => `${a.screen} [${a.frame}, ${a.theme}, ${a.width} px] ${v.rule} (${v.impact}): ${v.help} — ${v.nodes.join(" | ")}`))
    .join("\n");
}
