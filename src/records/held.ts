/**
 * Edits that a send did not save (invalid, conflict, rejected, ignored, cancelled) are "held": the
 * refresh after the send must not overwrite them. They are put back into the sheet after the refresh,
 * exactly as they were (formula/value and number format), marked with a fill, and listed in the pane
 * until the user sends, reverts or discards them.
 *
 * The mark is the add-in's own solid fill. Before marking, the cell's own fill is read and kept in
 * the held record, and it is put back exactly when the mark is lifted. A cell whose own fill cannot
 * be restored exactly (a pattern other than none/solid) is held and listed but not marked, and a
 * mark the user has since replaced with a fill of their own is left alone.
 */
import { z } from "../contract/zod";

/** The fill of the mark (Excel's "Bad" cell style fill: reads as "needs attention"). */
export const MARK_FILL = "#FFC7CE";

export const CellFillSchema = z.union([
  z.strictObject({ pattern: z.literal("None") }),
  z.strictObject({ pattern: z.literal("Solid"), color: z.string().regex(/^#[0-9A-Fa-f]{6}$/) }),
]);
/** A cell's own fill, as far as the add-in can restore it exactly. */
export type CellFill = z.infer<typeof CellFillSchema>;

export const HeldCellSchema = z.strictObject({
  projectToken: z.string().min(1),
  field: z.string().min(1),
  /** Why it was not saved. */
  status: z.enum(["invalid", "conflict", "rejected", "ignored", "not-sent"]),
  message: z.string(),
  /** The service's value when it was held (null = none). */
  service: z.string().nullable(),
  /** The cell's own fill under the mark; null = not marked (its fill could not be restored exactly). */
  fill: CellFillSchema.nullable(),
});
export type HeldCell = z.infer<typeof HeldCellSchema>;

/** Map key of a cell: token and field cannot contain NUL. */
export function heldKey(projectToken: string, field: string): string {
  return `${projectToken}\u0000${field}`;
}

/** Is this fill the add-in's mark? */
export function isMarkFill(fill: CellFill | null): boolean {
  return fill !== null && fill.pattern === "Solid" && fill.color.toUpperCase() === MARK_FILL;
}

/**
 * Held cells that the user has since reverted (they no longer differ from the import record), given
 * the keys of the cells that still differ. Their marks are lifted and they are no longer listed.
 */
export function releasedHeld(held: readonly HeldCell[], stillChanged: ReadonlySet<string>): HeldCell[] {
  return held.filter((h) => !stillChanged.has(heldKey(h.projectToken, h.field)));
}
