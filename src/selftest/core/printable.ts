/**
 * Text from a transcript or a report, made safe to print in a terminal (issue #36, finding 4). A
 * transcript or a report comes from elsewhere (a customer's file, a page's post): raw, its text could
 * move the cursor, clear the screen, set the terminal's title, or start a new line that prints a
 * fake "0 differences". Every control and format character (C0 and C1 controls, DEL, line and
 * paragraph separators, bidirectional overrides and isolates, zero-width characters, the BOM) is
 * written as a visible `\u{…}` escape, line breaks included: what is printed is one line per line
 * this code writes. Pure logic.
 */

const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `text` with every control or format character written as `\u{hex}`. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}
