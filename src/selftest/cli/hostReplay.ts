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
 */
import * as fs from "fs";
import * as zlib from "zlib";
import { isProfileId } from "../../emulator/profiles";
import { formatReplay } from "../core/replay";
import { scrubTranscript } from "../core/scrub";
import { parseTranscript, serializeTranscript, TranscriptError, type Transcript } from "../core/transcript";
import { profileOf, replayOnEmulatedHost } from "./replayHost";

const USAGE = "usage: npm run host:replay -- FILE [--scrub[=OUT]] [--profile web|windows|mac|windows-2021]";

/** Reads a transcript file (`.json`, or `.json.gz` as kept in test/transcripts). */
export function readTranscriptFile(file: string): Transcript {
  const raw = fs.readFileSync(file);
  const text = file.endsWith(".gz") ? zlib.gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return parseTranscript(text);
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
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
      console.error(`host:replay: unknown option ${a}\n${USAGE}`);
      return 2;
    } else if (file === null) file = a;
    else {
      console.error(`host:replay: one transcript at a time\n${USAGE}`);
      return 2;
    }
  }
  if (!file) {
    console.error(`host:replay: which transcript?\n${USAGE}`);
    return 2;
  }
  if (profile !== null && !isProfileId(profile)) {
    console.error(`host:replay: --profile must be web, windows, mac or windows-2021 (got "${profile}")`);
    return 2;
  }
  let t: Transcript;
  try {
    t = readTranscriptFile(file);
  } catch (e) {
    console.error(`host:replay: ${file}: ${e instanceof TranscriptError || e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  if (scrubTo !== null) {
    const out = scrubTo || file.replace(/(\.json)?(\.gz)?$/, ".scrubbed.json");
    t = scrubTranscript(t);
    fs.writeFileSync(out, serializeTranscript(t));
    console.log(`host:replay: scrubbed copy written to ${out} (cell values, sheet, table and column names replaced; safe to share)`);
  }
  const p = profile !== null && isProfileId(profile) ? profile : profileOf(t);
  console.log(`host:replay: ${file}${t.scrubbed ? " (scrubbed: values compared by type)" : ""}, recorded ${t.recordedAt} on ${t.host.emulated ? "the emulated host" : "Excel"} ${t.host.platform} ${t.host.version}; replaying on the emulated ${p} host`);
  const report = await replayOnEmulatedHost(t, p);
  console.log(formatReplay(report));
  return report.differences.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`host:replay: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(2);
    },
  );
}
