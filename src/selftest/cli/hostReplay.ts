/**
 * `npm run host:replay -- FILE [--scrub[=OUT]] [--profile web|windows|mac|windows-2021]`
 *
 * Sends every request of a transcript (recorded by the self-test kit in real Excel or in the preview)
 * to the emulated host and prints every difference: refusals, error codes, results, values. Exit
 * status: 0 no difference, 1 differences, 2 the file could not be read.
 *
 * `--scrub` first writes a scrubbed copy (cell values, sheet, table and column names replaced by
 * same-shaped placeholders: safe to share) to OUT (default: FILE with `.scrubbed.json`), then replays
 * that copy.
 *
 * A transcript comes from elsewhere (issue #36, finding 4): it is read as a regular file of at most
 * MAX_TRANSCRIPT_BYTES (16 MiB), decompressed to at most that much (a gzip bomb stops at the cap,
 * nothing larger is allocated), and everything printed from it goes through `printable` (no
 * control character reaches the terminal). The scrubbed copy is written by the CLI's atomic 0600
 * writer (a planted link is replaced, never followed).
 */
import * as fs from "fs";
import * as path from "path";
import * as zlib from "zlib";
import { isProfileId } from "../../emulator/profiles";
import { writeFileAtomic } from "../../service/node";
import { printable } from "../core/printable";
import { formatReplay } from "../core/replay";
import { scrubTranscript } from "../core/scrub";
import { MAX_TRANSCRIPT_BYTES, parseTranscript, serializeTranscript, TranscriptError, type Transcript } from "../core/transcript";
import { profileOf, replayOnEmulatedHost } from "./replayHost";

const USAGE = "usage: npm run host:replay -- FILE [--scrub[=OUT]] [--profile web|windows|mac|windows-2021]";

/**
 * Reads a transcript file (`.json`, or `.json.gz` as kept in test/transcripts): a regular file (a
 * FIFO or a device is refused at once: opened without blocking), at most `max` bytes as stored and
 * at most `max` bytes decompressed. Throws TranscriptError naming the problem.
 */
export function readTranscriptFile(file: string, max = MAX_TRANSCRIPT_BYTES): Transcript {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new TranscriptError(code === "ENOENT" ? "No such file." : `The file cannot be opened (${code ?? "error"}).`);
  }
  let raw: Buffer;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new TranscriptError("Not a regular file.");
    if (st.size > max) throw new TranscriptError(`The file is ${st.size} bytes, more than a transcript may be (${max}).`);
    raw = Buffer.alloc(st.size);
    let n = 0;
    while (n < raw.length) {
      const got = fs.readSync(fd, raw, n, raw.length - n, null);
      if (got === 0) break;
      n += got;
    }
    raw = raw.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
  let text: string;
  if (file.endsWith(".gz")) {
    try {
      // maxOutputLength: inflating stops there (a 600 KB gzip of zeros would otherwise take 600 MB).
      text = zlib.gunzipSync(raw, { maxOutputLength: max }).toString("utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw new TranscriptError(`Decompressed, the file is more than a transcript may be (${max} bytes); nothing more was read.`);
      throw new TranscriptError("The file is not valid gzip.");
    }
  } else {
    text = raw.toString("utf8");
  }
  return parseTranscript(text);
}

/** Runs the command; returns its exit status. `log`/`error` print a line each (tests capture them). */
export async function main(argv: string[], log: (line: string) => void = console.log, error: (line: string) => void = console.error): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    log(USAGE);
    return 0;
  }
  let file: string | null = null;
  let scrubTo: string | null = null;
  let profile: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--scrub") scrubTo = "";
    else if (a.startsWith("--scrub=")) scrubTo = a.slice("--scrub=".length);
    else if (a === "--profile") profile = argv[++i] ?? "";
    else if (a.startsWith("--profile=")) profile = a.slice("--profile=".length);
    else if (a.startsWith("--")) {
      error(`host:replay: unknown option ${printable(a)}\n${USAGE}`);
      return 2;
    } else if (file === null) file = a;
    else {
      error(`host:replay: one transcript at a time\n${USAGE}`);
      return 2;
    }
  }
  if (!file) {
    error(`host:replay: which transcript?\n${USAGE}`);
    return 2;
  }
  if (profile !== null && !isProfileId(profile)) {
    error(`host:replay: --profile must be web, windows, mac or windows-2021 (got "${printable(profile)}")`);
    return 2;
  }
  let t: Transcript;
  try {
    t = readTranscriptFile(file);
  } catch (e) {
    error(`host:replay: ${printable(file)}: ${printable(e instanceof TranscriptError || e instanceof Error ? e.message : String(e))}`);
    return 2;
  }
  if (scrubTo !== null) {
    const out = scrubTo || file.replace(/(\.json)?(\.gz)?$/, ".scrubbed.json");
    t = scrubTranscript(t);
    try {
      writeFileAtomic(path.resolve(out), [serializeTranscript(t)]);
    } catch (e) {
      error(`host:replay: the scrubbed copy could not be written to ${printable(out)} (${printable((e as NodeJS.ErrnoException).code ?? (e as Error).message)}); nothing was written.`);
      return 2;
    }
    log(`host:replay: scrubbed copy written to ${printable(out)} (cell values, sheet, table and column names replaced, numbers re-ranked per column; see src/selftest/README.md for what survives)`);
  }
  const p = profile !== null && isProfileId(profile) ? profile : profileOf(t);
  log(printable(`host:replay: ${file}${t.scrubbed ? " (scrubbed: values compared by type)" : ""}, recorded ${t.recordedAt} on ${t.host.emulated ? "the emulated host" : "Excel"} ${t.host.platform} ${t.host.version}; replaying on the emulated ${p} host`));
  const report = await replayOnEmulatedHost(t, p);
  log(formatReplay(report));
  return report.differences.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`host:replay: ${printable(e instanceof Error ? (e.stack ?? e.message) : String(e))}`);
      process.exit(2);
    },
  );
}
