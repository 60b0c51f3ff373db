/**
 * Hidden-sheet slots keyed by what they hold (issue #26, hazard 8). Co-authors never pick "the first
 * free" row, column or sheet: two clients that each read "free" before the other's write reaches them
 * would claim the same slot. Every slot is named after its owner instead, so two clients writing at once
 * either write different slots or the same owner's slot (the same binding: last writer wins, as for
 * the binding itself).
 *
 * A sheet name is at most 31 characters (Excel's rule), so an id is represented by FNV-1a (32 bit) in 8
 * hex digits; the full id is kept in the slot and checked when it is read, so a hash collision shows
 * nothing rather than another binding's data.
 */

/** FNV-1a (32 bit) of a string, 8 hex digits. */
export function hash8(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The name of a binding's own very hidden sheet: `prefix` + 8 hex digits of the id's hash. */
export function slotSheetName(prefix: string, id: string): string {
  return prefix + hash8(id);
}

/**
 * Queues deleting one of the add-in's very hidden sheets. A very hidden sheet cannot be deleted (docs:
 * `Worksheet.delete`), so it is made hidden first in the same request.
 */
export function queueDeleteHiddenSheet(sheet: Excel.Worksheet): void {
  sheet.visibility = "Hidden";
  sheet.delete();
}
