/**
 * `--token-stdin` at a terminal reads the token with echo off (new-user trial, 2026-11-30: it was
 * shown as typed). The key handling is tested on a fake terminal that records its raw mode.
 */
import { EventEmitter } from "node:events";
import { HiddenLine, readHiddenLine } from "../../src/cli/hiddenInput";

class FakeTerminal extends EventEmitter {
  isRaw = false;
  modes: boolean[] = [];
  paused = false;
  setRawMode(mode: boolean): this {
    this.isRaw = mode;
    this.modes.push(mode);
    return this;
  }
  setEncoding(): this {
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
  pause(): this {
    this.paused = true;
    return this;
  }
}

describe("reading the token without echo", () => {
  it("Enter or Ctrl+D ends the line; Backspace takes back a character; control keys are dropped", () => {
    const cases: Array<[string[], string]> = [
      [["demo-acme-token\r"], "demo-acme-token"],
      [["demo-", "acme-token\n", "ignored"], "demo-acme-token"],
      [["tok\u007fken\u0004"], "token"],
      [["ab\b\bcd\r"], "cd"],
      [["x\u001b[Ay\r"], "xy"],
      [["abc\u001b[D\u001b[Cdef\r"], "abcdef"],
      [["a\u001bOPb\r"], "ab"],
      [["\u001b[200~tok-", "en\u001b[2", "01~\r"], "tok-en"],
      [["a\u001b[1;5Cb\r"], "ab"],
      [["😀z\u007f\r"], "😀"],
    ];
    for (const [chunks, text] of cases) {
      const line = new HiddenLine();
      // The reader stops at the first piece that finishes the line.
      let at = 0;
      while (at < chunks.length && !line.feed(chunks[at])) at++;
      expect([chunks, line.text, line.cancelled, at]).toEqual([chunks, text, false, chunks.findIndex((c) => ["\r", "\n", "\u0004"].some((end) => c.includes(end)))]);
    }
  });

  it("puts the terminal in raw mode (no echo) while reading, and back after; the prompt and a line break go to the writer, never the token", async () => {
    const term = new FakeTerminal();
    const written: string[] = [];
    const read = readHiddenLine(term, (t) => written.push(t), "Token: ");
    expect(term.isRaw).toBe(true);
    term.emit("data", "secret-");
    term.emit("data", "value\r");
    await expect(read).resolves.toBe("secret-value");
    expect(term.modes).toEqual([true, false]);
    expect(term.paused).toBe(true);
    expect(term.listenerCount("data")).toBe(0);
    expect(written).toEqual(["Token: ", "\n"]);
  });

  it("Ctrl+C cancels, and the terminal is restored", async () => {
    const term = new FakeTerminal();
    const read = readHiddenLine(term, () => undefined, "Token: ");
    term.emit("data", "sec\u0003ret");
    await expect(read).rejects.toThrow(/cancelled \(Ctrl\+C\)/);
    expect(term.isRaw).toBe(false);
  });
});
