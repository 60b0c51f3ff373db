/** A1 helpers for the preview grid (the emulator's own address rules, so the grid and Excel agree). */
import { cellAddress, parseAddress } from "../../test/emulator/address";

export { cellAddress };

/** The top-left cell of an address typed into the name box (`B7`, `b7`, `Sheet1!B7`), or null. */
export function parseA1(text: string): { row: number; col: number } | null {
  try {
    const p = parseAddress(text);
    return { row: p.rect.r0, col: p.rect.c0 };
  } catch {
    return null;
  }
}
