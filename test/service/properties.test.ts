import fc from "fast-check";
import { csvRecord, parseCsvStream, validateNumericCustomField } from "../../src/service";

/**
 * Independent oracle for the spec's numeric custom-field rule, written as a character scanner
 * (no regular expression) so it cannot share a mistake with the implementation.
 */
function oracle(s: string): boolean {
  const isDigit = (c: string) => c >= "0" && c <= "9" && c.length === 1;
  let i = 0;
  if (s[i] === "+" || s[i] === "-") i++;
  let intDigits = 0;
  while (i < s.length && isDigit(s[i])) {
    i++;
    intDigits++;
  }
  if (intDigits === 0) return false;
  if (i === s.length) return true;
  if (s[i] !== "." && s[i] !== ",") return false;
  i++;
  let frac = 0;
  while (i < s.length && isDigit(s[i])) {
    i++;
    frac++;
  }
  return i === s.length && frac >= 1 && frac <= 2;
}

const digit = fc.constantFrom(..."0123456789");
const digits = (min: number, max: number) => fc.array(digit, { minLength: min, maxLength: max }).map((a) => a.join(""));

describe("numeric custom-field rule (property)", () => {
  it("accepts every value built by the rule", () => {
    fc.assert(
      fc.property(fc.constantFrom("", "+", "-"), digits(1, 12), fc.option(fc.tuple(fc.constantFrom(".", ","), digits(1, 2))), (sign, int, frac) => {
        const v = `${sign}${int}${frac ? frac[0] + frac[1] : ""}`;
        const r = validateNumericCustomField(v);
        expect(r).toEqual({ ok: true, normalized: v });
      }),
      { numRuns: 500 },
    );
  });

  it("agrees with the oracle on near-miss strings", () => {
    const alphabet = fc.constantFrom(..."0123456789+-.,eE '\t\u00a0\u0660");
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 10 }).map((a) => a.join("")), (s) => {
        const r = validateNumericCustomField(s);
        expect(r.ok).toBe(oracle(s));
        if (!r.ok) expect(r.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 3000 },
    );
  });

  it("rejects the named invalid families", () => {
    fc.assert(
      fc.property(digits(1, 3), digits(3, 3), digits(0, 2), fc.constantFrom(",", ".", "'", " "), (a, b, c, sep) => {
        // Thousands separator (optionally followed by decimals).
        expect(validateNumericCustomField(`${a}${sep}${b}${c ? `.${c}` : ""}`).ok).toBe(false);
      }),
    );
    fc.assert(
      fc.property(digits(1, 5), digits(3, 6), fc.constantFrom(".", ","), (a, b, sep) => {
        expect(validateNumericCustomField(`${a}${sep}${b}`).ok).toBe(false); // > 2 decimals
        expect(validateNumericCustomField(`${a}e${b.length}`).ok).toBe(false); // exponent
        expect(validateNumericCustomField(` ${a}`).ok).toBe(false);
        expect(validateNumericCustomField(`${a}\n`).ok).toBe(false);
      }),
    );
    expect(validateNumericCustomField("").ok).toBe(false);
  });

  it("agrees with the oracle on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (s) => {
        expect(validateNumericCustomField(s).ok).toBe(oracle(s));
      }),
      { numRuns: 2000 },
    );
  });
});

/** Independent RFC 4180 encoder: quotes every field (a different, equally valid style from csvRecord's). */
function encodeAllQuoted(rows: string[][]): string {
  return rows.map((r) => r.map((f) => `"${f.replace(/"/g, '""')}"`).join(",")).join("\r\n") + "\r\n";
}

function streamOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    if (p > prev) chunks.push(bytes.subarray(prev, p));
    prev = Math.max(prev, p);
  }
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

async function parseBytes(bytes: Uint8Array, cuts: number[]): Promise<string[][]> {
  const out: string[][] = [];
  await parseCsvStream(streamOf(bytes, cuts), (f) => out.push(f));
  return out;
}

// Characters that stress RFC 4180: separators, quotes, both line-break characters, non-ASCII (2-, 3-
// and 4-byte UTF-8, so chunk cuts fall inside characters).
const trickyChar = fc.constantFrom("a", "Z", "0", " ", ",", '"', "\r", "\n", "é", "€", "😀", "\t", ";");
const trickyString = fc.oneof(fc.array(trickyChar, { maxLength: 8 }).map((a) => a.join("")), fc.string({ unit: "grapheme", maxLength: 8 }).map((s) => s.replace(/\uFEFF/g, "")));
// (U+FEFF is removed because a leading byte-order mark is deliberately stripped from CSV bodies.)

const table = fc.integer({ min: 1, max: 5 }).chain((cols) => fc.array(fc.array(trickyString, { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 8 }));

describe("CSV round trip (property)", () => {
  it("arbitrary strings survive RFC 4180 encoding and chunked streaming parse", async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.array(fc.nat(), { maxLength: 6 }), async (rows, cuts) => {
        const bytes = new TextEncoder().encode(encodeAllQuoted(rows));
        expect(await parseBytes(bytes, cuts)).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });

  it("the CLI's writer (minimal quoting) round-trips through the same parser", async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.array(fc.nat(), { maxLength: 6 }), async (rows, cuts) => {
        const text = rows.map(csvRecord).join("");
        expect(text.endsWith("\r\n")).toBe(true);
        expect(await parseBytes(new TextEncoder().encode(text), cuts)).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });
});
