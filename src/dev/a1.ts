/** A1 helpers for the preview grid (the emulator's own address rules, so the grid and Excel agree). */
import { cellAddress, parseAddress } from "../emulator/address";

export { cellAddress };

/**
 * The top-left cell of an address typed into the name box (`B7`, `b7`, `Sheet1!B7`,
 * `'My sheet'!B7:C9`), with its sheet when one was given; null for anything else.
 */
export function parseA1(text: string): { row: number; col: number; sheet?: string } | null {
  try {
    const p = parseAddress(text);
    return p.sheet === undefined ? { row: p.rect.r0, col: p.rect.c0 } : { row: p.rect.r0, col: p.rect.c0, sheet: p.sheet };
  } catch {
    return null;
  }
}
