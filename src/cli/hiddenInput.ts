/**
 * Reading the token from a terminal without showing it (new-user trial, 2026-11-30: `--token-stdin`
 * at a terminal echoed the token as it was typed and left it in the scrollback). The terminal is put
 * in raw mode, so it echoes nothing, and the keys are read here: Enter (or Ctrl+D) ends the line,
 * Backspace takes back the last character, Ctrl+C cancels. A pipe or a file is read as before.
 */

/** What the keys typed so far make; `feed` returns whether the line is finished. */
export class HiddenLine {
  private chars: string[] = [];
  /**
   * Inside a terminal's escape sequence (an arrow or function key, bracketed paste's markers), which
   * is dropped whole, across pieces: "esc" after ESC, "csi" inside `ESC [ … final` (final byte
   * 0x40–0x7E), "ss3" before the one character of `ESC O x`.
   */
  private escape: "esc" | "csi" | "ss3" | null = null;
  cancelled = false;

  /** Takes a piece of raw terminal input; true once Enter, Ctrl+D or Ctrl+C was read. */
  feed(chunk: string): boolean {
    for (const ch of chunk) {
      if (this.escape === "esc") {
        this.escape = ch === "[" ? "csi" : ch === "O" ? "ss3" : null;
        continue;
      }
      if (this.escape === "csi") {
        if (ch >= "@" && ch <= "~") this.escape = null;
        continue;
      }
      if (this.escape === "ss3") {
        this.escape = null;
        continue;
      }
      if (ch === "\u001b") {
        this.escape = "esc";
        continue;
      }
      if (ch === "\r" || ch === "\n" || ch === "\u0004") return true;
      if (ch === "\u0003") {
        this.cancelled = true;
        return true;
      }
      if (ch === "\u007f" || ch === "\b") this.chars.pop();
      // Other control characters are not part of a token.
      else if (ch >= " ") this.chars.push(ch);
    }
    return false;
  }

  get text(): string {
    return this.chars.join("");
  }
}

/** The minimal terminal the reader needs (Node's `process.stdin` when it is a TTY). */
export interface RawTerminal {
  isRaw?: boolean;
  setRawMode(mode: boolean): unknown;
  setEncoding(encoding: BufferEncoding): unknown;
  on(event: "data", listener: (chunk: string) => void): unknown;
  removeListener(event: "data", listener: (chunk: string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Reads one line from a terminal without echo; rejects when Ctrl+C is pressed. */
export function readHiddenLine(input: RawTerminal, write: (text: string) => void, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const line = new HiddenLine();
    const wasRaw = input.isRaw === true;
    const onData = (chunk: string): void => {
      if (!line.feed(chunk)) return;
      input.removeListener("data", onData);
      input.setRawMode(wasRaw);
      input.pause();
      write("\n");
      if (line.cancelled) reject(new Error("cancelled (Ctrl+C) while reading the token"));
      else resolve(line.text);
    };
    write(prompt);
    input.setRawMode(true);
    input.setEncoding("utf8");
    input.on("data", onData);
    input.resume();
  });
}
