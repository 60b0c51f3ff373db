import fc from "fast-check";
import { csvRecord, parseCsvStream, validateNumericCustomField } from "../../src/service";
import { CsvStreamParser } from "../../src/service/csv";

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

/** Records, or the error's message, of a parse of `text` fed in the given pieces. */
async function recordsOf(text: string, pieces: string[]): Promise<string[][] | string> {
  const out: string[][] = [];
  const p = new CsvStreamParser((f) => out.push([...f]));
  try {
    for (const piece of pieces) p.push(piece);
    p.end();
    return out;
  } catch (e) {
    return (e as Error).message;
  }
}

describe("CSV chunking (property)", () => {
  // Raw text, not an encoder's output: unquoted CR and LF, stray quotes, empty lines, both line endings.
  const rawChar = fc.constantFrom("a", "b", ",", ",", '"', "\r", "\n", "\r\n", "\r\n", "é");
  const rawText = fc.tuple(fc.constantFrom("h1,h2\r\n", "h1,h2\n"), fc.array(rawChar, { maxLength: 60 })).map(([head, cs]) => head + cs.join(""));

  it("any cut of the text into chunks gives the records (or the error) a character-by-character read gives", async () => {
    await fc.assert(
      fc.asyncProperty(rawText, fc.array(fc.nat(), { maxLength: 4 }), async (text, cuts) => {
        const slow = await recordsOf(text, [...text]);
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const pieces: string[] = [];
        let prev = 0;
        for (const q of [...points, text.length]) {
          pieces.push(text.slice(prev, q));
          prev = q;
        }
        expect(await recordsOf(text, pieces)).toEqual(slow);
        expect(await recordsOf(text, [text])).toEqual(slow);
      }),
      { numRuns: 3000 },
    );
  });

  it("pins the line-ending rules: CRLF text keeps lone CR and LF as data, LF text keeps a CR before the LF", async () => {
    // CRLF text: a lone LF is data, a lone CR is data, an empty line is one empty field.
    expect(await recordsOf("a,b\r\nx\ny,z\r\n\r\nc\rd,e\r\n", ["a,b\r\nx\ny,z\r\n\r\nc\rd,e\r\n"])).toEqual([["a", "b"], ["x\ny", "z"], [""], ["c\rd", "e"]]);
    // LF text: a CR before the LF is data.
    expect(await recordsOf("a,b\nx,y\r\n", ["a,b\nx,y\r\n"])).toEqual([["a", "b"], ["x", "y\r"]]);
    // Quoted fields, and quotes inside unquoted ones (data).
    expect(await recordsOf('a,b\r\n"x,1",y\r\nq"q,z\r\n', ['a,b\r\n"x,1",y\r\nq"q,z\r\n'])).toEqual([["a", "b"], ["x,1", "y"], ['q"q', "z"]]);
  });
});
