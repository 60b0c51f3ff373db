/**
 * `ppm`: a thin command line over the service client, for admins diagnosing an environment and
 * power users exporting without Excel.
 *
 *     PPM_TOKEN=... npm run ppm -- doctor --env https://eu.example.com
 *     PPM_TOKEN=... npm run ppm -- datasets --env https://eu.example.com --json
 *     PPM_TOKEN=... npm run ppm -- export financials --env https://eu.example.com --out fin.csv --cache .ppm-cache
 *
 * The token is read from `PPM_TOKEN`, a file (`--token-file FILE`, refused unless only its owner
 * can read it) or standard input (`--token-stdin`); `--token` is refused (issue #36: a token on the
 * command line shows in every user's process list and stays in shell history). It is never printed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { applyQuery, createQuerySink, formatQuery, parseQuery } from "../query";
import { findView, parseViews, ViewError, VIEWS_FORMAT, type SavedView, type ViewsDocument } from "../views/views";
import { type Connection, normalizeBaseUrl } from "../service/connection";
import { type DatasetFormat, PpmClient } from "../service/client";
import { PpmError, type PpmErrorCode, redactSecrets } from "../service/errors";
import { FileValidatorStore, writeFileAtomic } from "../service/node";
import { validatorKey } from "../service/validators";
import type { Table } from "../table/model";
import { excelSafeCell, tableToCsv, tableToJson, terminalSafe, textTable } from "./output";
import { devServerOrigin } from "./devOrigin";
import { readHiddenLine } from "./hiddenInput";

/** Exit codes of the CLI. */
export const EXIT = {
  ok: 0,
  /** Anything not covered below (malformed response, failed doctor check, local query error). */
  failure: 1,
  /** Bad command line, missing token, invalid environment address. */
  usage: 2,
  /** Credentials refused, reporting disabled, access forbidden. */
  auth: 3,
  /** Unknown or not generated dataset, unusable cached export, route absent in this environment. */
  dataset: 4,
  /** Network failure, a redirect (never followed), timeout, rate limiting, server error. */
  network: 5,
} as const;

/** The exit code for a client error. */
export function exitCodeFor(code: PpmErrorCode): number {
  switch (code) {
    case "unauthorized":
    case "bi_reporting_disabled":
    case "forbidden":
    case "record_credentials_missing":
    case "query_string_token_rejected":
      return EXIT.auth;
    case "unknown_dataset":
    case "not_generated":
    case "invalid_cached_artifact":
    case "route_absent":
      return EXIT.dataset;
    case "network":
    case "redirected":
    case "timeout":
    case "rate_limited":
    case "server_error":
      return EXIT.network;
    case "invalid_base_url":
    case "invalid_request":
      return EXIT.usage;
    default:
      return EXIT.failure;
  }
}

/** Where the CLI reads its environment and writes its output (injectable for tests). */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  /** Bytes to stdout as they are (a byte-exact export); without it they are decoded as UTF-8. */
  stdoutBytes?(bytes: Uint8Array): void;
  stderr(text: string): void;
  fetch?: typeof fetch;
  /** All of standard input as text (`--token-stdin`). */
  readStdin?(): Promise<string>;
  /** The platform, for the token file's permission check (default `process.platform`). */
  platform?: string;
}

const USAGE = `Usage: ppm <command> [options]

Commands:
  doctor --env URL [--origin ORIGIN] [--json]
      Checks reachability, credentials, reporting, which route groups exist and whether CORS
      lets the add-in (served from ORIGIN) work. The default ORIGIN is what \`npm start\` serves
      on localhost (PPM_DEV_PORT, default 3000): the scheme its running dev server answers
      with; else what it served when it last ran; else https only where the development
      certificate authority is installed and trusted (and PPM_DEV_HTTP is not 1), http otherwise.
  datasets --env URL [--json]
      Lists the manifest's datasets with their export status.
  export KEY --env URL [--format json|csv|odata] [--output-format csv|json] [--out FILE [--mkdir]]
             [--cache DIR] [--query '...'] [--excel-safe]
  export --view NAME --views FILE --env URL [the options of export but --query]
      Downloads the complete table (--format: which form of the export, default csv) and writes it
      as --output-format (default csv), whatever FILE is named. CSV from --format csv without
      --query or --excel-safe is the service's bytes unchanged; otherwise RFC 4180 CSV (CRLF) or
      JSON written from the table. --out into a directory that does not exist is an error unless
      --mkdir is given. With --cache (needs --out) a later run sends the stored validators and
      reports "unchanged" without rewriting FILE. --format odata asks for Int64/Decimal as strings
      (IEEE754Compatible=true) and reads numbers exactly too. --query applies a local OData 4.01
      query ($apply, $filter, $select, $orderby, $top, $skip, $count; the '$' is optional) before
      writing; a summary ($apply) is computed while the export streams in.
      --excel-safe (CSV only) puts a ' before text cells that start with =, +, -, @, a tab or a
      carriage return, so Excel opens them as text, not formulas (CSV injection), and starts the
      file with a UTF-8 byte order mark, so Excel on Windows reads it as UTF-8.
      --view NAME --views FILE runs a saved view (a file exported from the PPM pane's Views):
      its dataset (KEY may be left out) and its query, so the rows equal the pane's import of it.
      --cache DIR must be a directory of yours that no other user can write to (created 0700).

Options for every command:
  --env URL        environment base URL (or PPM_ENV)
  --token-file FILE  read the company API token from FILE (its first line); the file must be
                   readable by its owner only (chmod 600 FILE), or it is refused
  --token-stdin    read the company API token from standard input, e.g.
                   secret-tool lookup ppm acme | ppm datasets --env URL --token-stdin

The token comes from --token-file or --token-stdin (one of them), else from the PPM_TOKEN
environment variable. --token TOKEN is refused: other users of this computer could see the token
in the process list, and it would stay in shell history.

More options:
  --basic          authenticate reporting calls with Basic instead of the Company-Api-Token header
  --name NAME      company display name used in messages (or PPM_COMPANY)
  --timeout MS     per-request timeout (default 120000)
  --retries N      retries of idempotent requests on network errors, 429 and 502/503/504 (default 2)

Record credentials for doctor's record check: PPM_API_AUTH and PPM_API_SECRET.

Exit codes: 0 ok, 1 other failure (also a --query the data cannot satisfy: a sum beyond the
            number range, a division by zero), 2 usage (also a --query that is not valid),
            3 authentication/authorisation, 4 dataset unknown/not generated/unusable or route
            absent, 5 network/redirect/timeout/server.
`;

class UsageError extends Error {}

interface Parsed {
  command: string | undefined;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

function parse(argv: string[]): Parsed {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      env: { type: "string" },
      token: { type: "string" },
      "token-file": { type: "string" },
      "token-stdin": { type: "boolean" },
      basic: { type: "boolean" },
      name: { type: "string" },
      timeout: { type: "string" },
      retries: { type: "string" },
      json: { type: "boolean" },
      origin: { type: "string" },
      format: { type: "string" },
      out: { type: "string" },
      cache: { type: "string" },
      query: { type: "string" },
      view: { type: "string" },
      views: { type: "string" },
      "output-format": { type: "string" },
      mkdir: { type: "boolean" },
      "excel-safe": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  return { command: positionals[0], positionals: positionals.slice(1), values };
}

function str(v: string | boolean | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function intOption(v: string | boolean | undefined, name: string, min: number): number | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s) || Number(s) < min) throw new UsageError(`--${name} must be a whole number >= ${min}`);
  return Number(s);
}

/** Where this run's token came from; messages name it instead of a "stored token" the CLI has none of. */
type TokenSource = "PPM_TOKEN" | "--token-file" | "--token-stdin";
let tokenSource: TokenSource = "PPM_TOKEN";

/** The secrets of this run, for redaction (a token read from a file or stdin joins them once read). */
let runSecrets: string[] = [];

/** The first line of a token file or of standard input, without its line break. */
function firstLine(text: string): string {
  return text.replace(/^\uFEFF/, "").split(/\r?\n/, 1)[0].trim();
}

/** How much a `--token-file` may hold (a token is a line; anything larger is not a token file). */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;
/**
 * How much a `--views` file may hold: the pane's views live in the workbook's settings, whose budget
 * for everything the add-in keeps there is 256,000 characters (src/workbook/bindingStore.ts), so an
 * export of them is smaller; 1 MiB leaves room and refuses anything that is not one.
 */
export const MAX_VIEWS_FILE_BYTES = 1024 * 1024;

/**
 * Reads a file an option names, checked on the opened file (so it cannot be swapped in between):
 * a regular file (a FIFO, a device such as /dev/zero or a directory is refused at once: the file is
 * opened without blocking and nothing is read before the check), at most `maxBytes`, and whatever
 * `check` adds. Messages name the option and the file, never anything read from it.
 */
function readOptionFile(option: string, file: string, maxBytes: number, check?: (st: fs.Stats) => void): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`${option} ${file}: ${code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : `cannot be opened (${code ?? "error"})`}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`${option} ${file}: not a regular file`);
    check?.(st);
    if (st.size > maxBytes) throw new UsageError(`${option} ${file} is too large (${st.size} bytes; at most ${maxBytes}).`);
    // At most one byte beyond the cap is read: a file that grew after the check is refused too.
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (;;) {
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > maxBytes) throw new UsageError(`${option} ${file} is too large (more than ${maxBytes} bytes).`);
    }
    return buf.subarray(0, n).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads `--token-file FILE`: a regular file that only its owner can read or write (mode 0600 or
 * 0400, like ssh's private keys), checked on the opened file so it cannot be swapped in between.
 * On Windows the POSIX mode says nothing about who can read the file, so it is not checked there.
 */
function readTokenFile(file: string, io: CliIo): string {
  const text = readOptionFile("--token-file", file, MAX_TOKEN_FILE_BYTES, (st) => {
    if ((io.platform ?? process.platform) === "win32") return;
    const mode = st.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new UsageError(`--token-file ${file} is readable or writable by other users (mode ${mode.toString(8).padStart(4, "0")}); refusing to use it. Run: chmod 600 ${file}`);
    }
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
    if (uid !== undefined && uid !== 0 && st.uid !== uid) throw new UsageError(`--token-file ${file} belongs to another user; refusing to use it.`);
  });
  return firstLine(text);
}

/** The message that refuses `--token`, naming the three ways that keep the token out of the process list. */
export const TOKEN_OPTION_REFUSED =
  "--token is not accepted: a token on the command line is visible to every user of this computer (ps) and stays in shell history. " +
  "Use --token-file FILE (a file only you can read), --token-stdin (e.g. from a password manager) or the PPM_TOKEN environment variable.";

/** The company API token of this run and where it came from (one of the options, else PPM_TOKEN). */
async function resolveToken(p: Parsed, io: CliIo): Promise<{ token: string; source: TokenSource }> {
  if (p.values.token !== undefined) throw new UsageError(TOKEN_OPTION_REFUSED);
  const given: TokenSource[] = [];
  if (str(p.values["token-file"]) !== undefined) given.push("--token-file");
  if (p.values["token-stdin"]) given.push("--token-stdin");
  if (given.length > 1) throw new UsageError(`use one of ${given.join(", ")}, not several`);
  const source = given[0] ?? "PPM_TOKEN";
  let token: string | undefined;
  if (source === "--token-file") {
    token = readTokenFile(str(p.values["token-file"])!, io);
    if (!token) throw new UsageError(`--token-file ${str(p.values["token-file"])} is empty`);
  } else if (source === "--token-stdin") {
    if (!io.readStdin) throw new UsageError("--token-stdin: standard input cannot be read here");
    token = firstLine(await io.readStdin());
    if (!token) throw new UsageError("--token-stdin: standard input held no token");
  } else {
    token = io.env.PPM_TOKEN;
    if (!token) throw new UsageError("no company API token: set the PPM_TOKEN environment variable, or use --token-file FILE or --token-stdin");
  }
  if (token && !runSecrets.includes(token)) runSecrets.push(token);
  return { token, source };
}

/** Everything needed to talk to the service, from options and environment. */
async function clientFrom(p: Parsed, io: CliIo, store?: FileValidatorStore): Promise<PpmClient> {
  const env = str(p.values.env) ?? io.env.PPM_ENV;
  if (!env) throw new UsageError("--env URL is required (or set PPM_ENV)");
  const baseUrl = normalizeBaseUrl(env);
  const { token, source } = await resolveToken(p, io);
  tokenSource = source;
  const conn: Connection = {
    id: "cli",
    name: str(p.values.name) ?? io.env.PPM_COMPANY ?? "the company",
    baseUrl,
    token,
    authMode: p.values.basic ? "basic" : "header",
  };
  if (io.env.PPM_API_AUTH) conn.apiAuth = io.env.PPM_API_AUTH;
  if (io.env.PPM_API_SECRET) conn.apiSecret = io.env.PPM_API_SECRET;
  return new PpmClient(conn, {
    fetch: io.fetch,
    timeoutMs: intOption(p.values.timeout, "timeout", 1),
    retries: intOption(p.values.retries, "retries", 0),
    validators: store,
  });
}

/**
 * An error's message and action as the CLI prints them. The client's wording is the add-in's,
 * which keeps tokens on the device ("update or clear the stored token"); the CLI stores none, so
 * it names where the token came from instead.
 */
function cliText(e: PpmError): { message: string; action: string } {
  const source = { PPM_TOKEN: "the PPM_TOKEN environment variable", "--token-file": "the --token-file file", "--token-stdin": "--token-stdin" }[tokenSource];
  const fix = (t: string) => t.replace(/the stored (?:company API )?token/gi, `the token in ${source}`);
  // The client's actions speak of the pane's controls (a connection, a field, a section to hide);
  // the CLI's own words where they differ.
  const cliActions: Partial<Record<PpmErrorCode, string>> = {
    unauthorized: `Check the token in ${source}: set it to a valid company API token for this company and environment.`,
    invalid_base_url: "Give --env (or PPM_ENV) as the environment's base address, https://host (http only for localhost), without credentials, query or the service's /api/... paths.",
    route_absent: "This environment does not offer this feature (its routes answer 404); use another environment or ask its administrator.",
    record_credentials_missing: "Set PPM_API_AUTH and PPM_API_SECRET to the company's record credentials.",
  };
  const action = cliActions[e.code] ?? fix(e.action);
  return { message: fix(e.message).replace(/^The environment address\b/, "The --env address"), action };
}

/**
 * Runs the CLI and returns its exit code. Never throws: every failure is printed (message and
 * action, secrets redacted) and mapped to an {@link EXIT} code.
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  runSecrets = [io.env.PPM_TOKEN, io.env.PPM_API_SECRET, io.env.PPM_API_AUTH, ...tokenArgs(argv)].filter((x): x is string => !!x);
  tokenSource = "PPM_TOKEN";
  const safe = (s: string) => redactSecrets(s, runSecrets);
  try {
    const p = parse(argv);
    if (p.values.help || p.command === "help" || p.command === undefined) {
      if (p.command === undefined && !p.values.help) io.stderr(USAGE);
      else io.stdout(USAGE);
      return p.command === undefined && !p.values.help ? EXIT.usage : EXIT.ok;
    }
    switch (p.command) {
      case "doctor":
        return await doctor(p, io);
      case "datasets":
        return await datasets(p, io);
      case "export":
        return await exportCommand(p, io);
      default:
        throw new UsageError(`unknown command "${p.command}" (use doctor, datasets or export)`);
    }
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && "code" in e && String((e as { code: unknown }).code).startsWith("ERR_PARSE_ARGS"))) {
      io.stderr(safe(`error: ${e.message}\nRun "ppm --help" for usage.\n`));
      return EXIT.usage;
    }
    if (e instanceof PpmError) {
      const t = cliText(e);
      io.stderr(safe(`error: ${t.message}\naction: ${t.action}\n`));
      return exitCodeFor(e.code);
    }
    if (e instanceof Error && e.name === "QueryError") {
      const code = (e as Error & { code?: string }).code;
      // A valid query whose result the data makes impossible (a sum beyond the double range, a
      // division by zero) is a failure of this run, not a usage error; nothing was written.
      if (code === "overflow" || code === "division_by_zero") {
        io.stderr(safe(`error: the --query cannot be evaluated on this data: ${e.message}\nnothing was written.\n`));
        return EXIT.failure;
      }
      io.stderr(safe(`error: the --query is not valid: ${e.message}\n`));
      return EXIT.usage;
    }
    io.stderr(safe(`error: ${e instanceof Error ? e.message : String(e)}\n`));
    return EXIT.failure;
  }
}

/** Values given to --token on the command line (refused, but still redacted from any message). */
function tokenArgs(argv: string[]): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if (a === "--token" && argv[i + 1]) out.push(argv[i + 1]);
    else if (a.startsWith("--token=")) out.push(a.slice("--token=".length));
  });
  return out;
}

// ------------------------------------------------------------------ doctor

interface Check {
  check: string;
  result: "ok" | "warn" | "FAIL" | "skip";
  detail: string;
  exit?: number;
}

async function doctor(p: Parsed, io: CliIo): Promise<number> {
  const client = await clientFrom(p, io);
  const given = str(p.values.origin);
  const served = given === undefined ? await devServerOrigin(io.env) : undefined;
  const origin = given ?? served!.origin;
  const checks: Check[] = [{ check: "environment address", result: "ok", detail: client.connection.baseUrl }];
  if (served) checks.push({ check: "add-in origin", result: "ok", detail: `${origin} (${served.why}; --origin sets another)` });
  const add = (c: Check) => checks.push(c);
  let reportingOk = false;
  try {
    const root = await client.serviceRoot();
    add({ check: "reachability", result: "ok", detail: "the reporting service root answered" });
    add({ check: "credentials", result: "ok", detail: "the company token was accepted" });
    add({ check: "reporting enabled", result: "ok", detail: `${root.length} dataset(s) in the service root` });
    reportingOk = true;
  } catch (e) {
    if (!(e instanceof PpmError)) throw e;
    const t = cliText(e);
    const fail = (check: string): Check => ({ check, result: "FAIL", detail: `${t.message} ${t.action}`, exit: exitCodeFor(e.code) });
    if (["network", "timeout", "server_error", "rate_limited"].includes(e.code)) {
      add(fail("reachability"));
      add({ check: "credentials", result: "skip", detail: "service not reachable" });
      add({ check: "reporting enabled", result: "skip", detail: "service not reachable" });
    } else if (e.code === "unauthorized") {
      add({ check: "reachability", result: "ok", detail: "the service answered" });
      add(fail("credentials"));
      add({ check: "reporting enabled", result: "skip", detail: "credentials refused" });
    } else if (e.code === "bi_reporting_disabled") {
      add({ check: "reachability", result: "ok", detail: "the service answered" });
      add({ check: "credentials", result: "ok", detail: "the company token was accepted" });
      add(fail("reporting enabled"));
    } else {
      add({ check: "reachability", result: "ok", detail: "the service answered" });
      add(fail("reporting service root"));
    }
  }
  const reachable = !checks.some((c) => c.check === "reachability" && c.result === "FAIL");
  if (reachable) {
    const probe = await client.probe();
    const groupRow = (group: "reporting" | "snapshot" | "record") => {
      const d = probe.details[group];
      const text: Record<typeof d.state, string> = {
        available: "offered",
        absent: "absent in this environment (404 without a service error body)",
        unauthorized: "credentials refused",
        disabled: "present, but reporting is disabled for this company",
        no_credentials: "present or unknown; set PPM_API_AUTH and PPM_API_SECRET to check record credentials",
        error: `error: ${typeof d.error?.message === "string" ? d.error.message : ""}`,
      };
      const result: Check["result"] = d.state === "available" ? "ok" : group === "reporting" ? (reportingOk ? "ok" : "FAIL") : "warn";
      add({ check: `routes: ${group}`, result, detail: text[d.state], ...(result === "FAIL" ? { exit: EXIT.dataset } : {}) });
    };
    groupRow("reporting");
    groupRow("snapshot");
    groupRow("record");
  }
  if (reportingOk) {
    try {
      const m = await client.manifest();
      // The manifest's word ("an export exists") and then each export's own answer (issue #37: the
      // manifest lists timesheets as generated, yet every download of it answers 422).
      const listed = m.datasets.filter((d) => d.usable);
      const none = m.datasets.filter((d) => !d.usable).map((d) => d.key);
      add({ check: "manifest", result: "ok", detail: `company ${m.companyId}, api ${m.apiVersion}: ${m.datasets.length} dataset(s); ${listed.length} with an export${none.length ? `, ${none.length} with no export yet (${none.join(", ")})` : ""}` });
      const broken: string[] = [];
      for (const d of listed) {
        const e = await client.probeExport(d.key);
        if (e) broken.push(`${d.key}: ${cliText(e).message}`);
      }
      add({
        check: "exports",
        result: broken.length ? "warn" : "ok",
        detail: broken.length ? `${listed.length - broken.length} of ${listed.length} can be downloaded; ${broken.join("; ")}` : `all ${listed.length} can be downloaded`,
      });
    } catch (e) {
      if (!(e instanceof PpmError)) throw e;
      const t = cliText(e);
      add({ check: "manifest", result: "FAIL", detail: `${t.message} ${t.action}`, exit: exitCodeFor(e.code) });
    }
    const cors = await client.checkCors(origin);
    add({
      check: "CORS preflight",
      result: cors.preflightOk ? "ok" : "FAIL",
      detail: cors.preflightOk
        ? `origin ${origin} may send the add-in's headers`
        : `origin ${origin}: allowed origin ${cors.allowOrigin ?? "(none)"}${cors.missingRequestHeaders.length ? `, headers not allowed: ${cors.missingRequestHeaders.join(", ")}` : ""}`,
      ...(cors.preflightOk ? {} : { exit: EXIT.failure }),
    });
    add({
      check: "CORS exposed headers",
      result: cors.checkedDataset === null ? "skip" : cors.missingExposedHeaders.length === 0 ? "ok" : "warn",
      detail:
        cors.checkedDataset === null
          ? "no dataset with a usable export to check"
          : cors.missingExposedHeaders.length === 0
            ? `validators readable by the add-in (checked on ${cors.checkedDataset})`
            : `not exposed: ${cors.missingExposedHeaders.join(", ")}; refresh falls back to the manifest's generation times`,
    });
    if (cors.recordPreflightOk !== undefined) {
      // Records are optional: a failed record preflight is a warning, not a failed verdict.
      const missing = [
        ...(cors.recordMissingRequestHeaders?.length ? [`headers not allowed: ${cors.recordMissingRequestHeaders.join(", ")}`] : []),
        ...(cors.recordMissingMethods?.length ? [`methods not allowed: ${cors.recordMissingMethods.join(", ")}`] : []),
      ];
      add({
        check: "CORS preflight (records)",
        result: cors.recordPreflightOk ? "ok" : "warn",
        detail: cors.recordPreflightOk
          ? `origin ${origin} may read and write projects and proposals`
          : `origin ${origin}: ${missing.length ? missing.join("; ") : "preflight of PUT /api/v1/project refused"}; record reads and writes would fail in the add-in`,
      });
    }
  }
  const failed = checks.find((c) => c.result === "FAIL");
  if (p.values.json) io.stdout(`${JSON.stringify({ ok: !failed, checks }, null, 2)}\n`);
  else {
    io.stdout(textTable(["CHECK", "RESULT", "DETAIL"], checks.map((c) => [c.check, c.result, c.detail])));
    io.stdout(failed ? "\nThe add-in would not work with this environment and token.\n" : "\nThe add-in would work with this environment and token.\n");
  }
  return failed ? (failed.exit ?? EXIT.failure) : EXIT.ok;
}

// ------------------------------------------------------------------ datasets

async function datasets(p: Parsed, io: CliIo): Promise<number> {
  const client = await clientFrom(p, io);
  const m = await client.manifest();
  if (p.values.json) {
    const out = m.datasets.map((d) => ({
      key: d.key,
      name: d.name,
      status: d.status,
      usable: d.usable,
      row_count: d.rowCount,
      generated_at: d.generatedAt,
      latest_successful_generated_at: d.latestSuccessfulGeneratedAt,
      schema_version: d.schemaVersion,
      formats: d.formats,
      custom_fields: d.customFields.map((f) => f.raw),
      published_at: d.publishedAt,
      pending_changes: d.pendingChanges,
    }));
    io.stdout(`${JSON.stringify({ api_version: m.apiVersion, company_id: m.companyId, datasets: out }, null, 2)}\n`);
    return EXIT.ok;
  }
  // The pane's words (issue #37): "no export yet", not "no usable export" beside the pane's other name for it.
  const statusText = { ready: "ready", empty: "ready (0 rows)", no_export: "no export yet" } as const;
  io.stdout(
    textTable(
      ["KEY", "STATUS", "ROWS", "GENERATED", "SCHEMA", "FORMATS", "NAME"],
      m.datasets.map((d) => [d.key, statusText[d.status], d.rowCount === null ? "-" : String(d.rowCount), d.latestSuccessfulGeneratedAt ?? "-", d.schemaVersion ?? "-", d.formats.join(","), d.name]),
    ),
  );
  for (const d of m.datasets) {
    if (d.pendingChanges.length > 0) io.stdout(`note: ${d.key} has ${d.pendingChanges.length} unresolved custom-field change(s) pending publication\n`);
  }
  return EXIT.ok;
}

// ------------------------------------------------------------------ export

async function exportCommand(p: Parsed, io: CliIo): Promise<number> {
  // The token first (issue #36): every message after this can redact it, a file that holds it read
  // as --views included. Reading it sends nothing.
  const cacheDir = str(p.values.cache);
  const store = cacheDir ? new FileValidatorStore(path.resolve(cacheDir)) : undefined;
  const client = await clientFrom(p, io, store);
  // A saved view (issue #28) names the dataset and the query; read it before anything is sent.
  const view = readViewOption(p);
  const key = p.positionals[0] ?? view?.dataset;
  if (!key) throw new UsageError("export needs a dataset KEY (see `ppm datasets`) or --view NAME --views FILE");
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  if (view && key !== view.dataset) throw new UsageError(`the view "${view.name}" is of dataset "${view.dataset}", not "${key}" (leave KEY out)`);
  const format = (str(p.values.format) ?? "csv") as DatasetFormat;
  if (!["json", "csv", "odata"].includes(format)) throw new UsageError(`--format must be json, csv or odata (got "${format}")`);
  const out = str(p.values.out);
  // One rule: the file format is --output-format (default csv); the --out name never changes it.
  const outputFormat = str(p.values["output-format"]) ?? "csv";
  if (outputFormat !== "csv" && outputFormat !== "json") throw new UsageError(`--output-format must be csv or json (got "${outputFormat}")`);
  const excelSafe = p.values["excel-safe"] === true;
  if (excelSafe && outputFormat !== "csv") throw new UsageError("--excel-safe applies to CSV output only");
  if (p.values.mkdir && !out) throw new UsageError("--mkdir needs --out FILE");
  if (cacheDir && !out) throw new UsageError("--cache needs --out FILE (an unchanged export is not rewritten, so it must be kept in a file)");
  if (cacheDir) checkCacheDirectory(path.resolve(cacheDir), io);
  const queryText = view ? formatQuery(view.query) || undefined : str(p.values.query);
  // Parse the query before any download so a typo costs nothing.
  const query = view ? (queryText !== undefined ? view.query : undefined) : queryText !== undefined ? parseQuery(queryText) : undefined;
  if (out) {
    const named = /\.(csv|json)$/i.exec(out)?.[1].toLowerCase();
    if (named && named !== outputFormat) io.stderr(`warning: writing ${outputFormat.toUpperCase()} to ${out}: the output format is --output-format (default csv), not the file name\n`);
    // Checked before downloading: a typo in the directory should not cost a download.
    const dir = path.dirname(path.resolve(out));
    if (!p.values.mkdir && !isDirectory(dir)) throw new UsageError(`the directory of --out does not exist: ${dir} (create it, or add --mkdir)`);
  }
  // The service's own bytes, unchanged (checksums match), unless the table must be rewritten.
  const byteExact = format === "csv" && outputFormat === "csv" && !query && !excelSafe;
  const raw: Uint8Array[] = [];

  const outPath = out ? path.resolve(out) : undefined;
  // The cache entry is only valid for the same output file, query and output format, and only while that file exists.
  const identity = { out: outPath ?? null, query: queryText ?? null, outputFormat, ...(excelSafe ? { excelSafe } : {}) };
  let conditional = false;
  let cacheKey: string | undefined;
  if (store && outPath) {
    await client.manifest().catch((e: unknown) => {
      if (e instanceof PpmError && ["cancelled", "unauthorized", "bi_reporting_disabled", "network", "redirected", "timeout"].includes(e.code)) throw e;
    });
    cacheKey = validatorKey(client.scope, key, format);
    const extra = store.getExtra(cacheKey);
    conditional = !!extra && JSON.stringify(extra) === JSON.stringify(identity) && fs.existsSync(outPath);
  }
  let lastProgress = 0;
  // A summary ($apply) is computed while the export streams in: only its groups are kept.
  const sink = query?.apply !== undefined ? createQuerySink(query) : undefined;
  const result = await client.fetchDataset(key, {
    format,
    conditional,
    ...(byteExact ? { onBody: (chunk: Uint8Array) => void raw.push(chunk) } : {}),
    sink,
    onProgress: (n) => {
      if (n - lastProgress >= 50_000) {
        lastProgress = n;
        io.stderr(`... ${n} rows\n`);
      }
    },
  });
  if (result.status === "unchanged") {
    if (store && cacheKey) store.set(cacheKey, result.validators, identity);
    io.stderr(`${key}: unchanged (the service answered 304 Not Modified); ${out} was not rewritten\n`);
    return EXIT.ok;
  }
  let table: Table = result.table;
  let count: number | undefined;
  if (sink?.finished) {
    count = sink.count;
  } else if (query) {
    const q = applyQuery(table, query);
    table = q.table;
    count = q.count;
  }
  const chunks: Iterable<string | Uint8Array> = byteExact
    ? raw
    : outputFormat === "csv"
      ? excelSafe
        ? withBom(tableToCsv(table, excelSafeCell))
        : tableToCsv(table)
      : tableToJson(table, count !== undefined ? { count } : {});
  if (outPath) {
    writeFileAtomically(outPath, chunks);
    io.stderr(`${key}: ${table.rows.length} row(s), ${table.columns.length} column(s) written to ${out}${count !== undefined ? ` (count: ${count})` : ""}\n`);
  } else if (byteExact) {
    if (io.stdoutBytes) for (const c of raw) io.stdoutBytes(c);
    else io.stdout(new TextDecoder("utf-8", { ignoreBOM: true }).decode(concatBytes(raw)));
  } else {
    let buf = "";
    for (const c of chunks) {
      buf += c as string;
      if (buf.length > 1 << 16) {
        io.stdout(buf);
        buf = "";
      }
    }
    io.stdout(buf);
    if (count !== undefined) io.stderr(`count: ${count}\n`);
  }
  if (store && cacheKey) store.set(cacheKey, result.validators, identity);
  return EXIT.ok;
}

/**
 * A UTF-8 byte order mark first: CSV meant for Excel (`--excel-safe`). Excel on Windows reads a CSV
 * without one in the system's ANSI code page ("ZÃ¼rich" for "Zürich"); with it, as UTF-8. The plain
 * export stays byte-exact, without one.
 */
function* withBom(chunks: Iterable<string>): Generator<string> {
  yield "\uFEFF";
  yield* chunks;
}

/** `--view NAME --views FILE`: the saved view, or null without --view. Usage errors name the problem. */
function readViewOption(p: Parsed): SavedView | null {
  const name = str(p.values.view);
  const file = str(p.values.views);
  if (name === undefined) {
    if (file !== undefined) throw new UsageError("--views FILE needs --view NAME");
    return null;
  }
  if (file === undefined) throw new UsageError("--view needs --views FILE (a views file exported from the PPM pane)");
  if (p.values.query !== undefined) throw new UsageError("--view and --query cannot be combined: the view holds its query");
  // Like --token-file: a regular file of bounded size, opened without blocking (issue #36).
  const text = readOptionFile("--views", file, MAX_VIEWS_FILE_BYTES);
  const doc = viewsDocument(file, text);
  const view = findView(doc, name);
  if (!view) throw new UsageError(`${file} has no view named "${name}" (it has: ${doc.views.map((v) => v.name).join(", ") || "none"})`);
  return view;
}

/**
 * The views document in `text`. A file that is not one (not JSON, not a PPM views document) is
 * refused without quoting anything of it: a JSON parser's message quotes the text it choked on,
 * and `--views` may name a file that holds a secret (`--views tok --token-file tok`). Names of
 * views appear in messages only once the file has shown itself a views document.
 */
function viewsDocument(file: string, text: string): ViewsDocument {
  const notViews = (why: string) => new UsageError(`--views ${file} is not a views file exported from the PPM pane (${why}).`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw notViews("not JSON");
  }
  if (raw === null || typeof raw !== "object" || (raw as Record<string, unknown>).format !== VIEWS_FORMAT) throw notViews(`no "format": "${VIEWS_FORMAT}"`);
  try {
    return parseViews(raw);
  } catch (e) {
    throw new UsageError(`--views ${file}: ${e instanceof ViewError ? e.message : "not a valid views document"}`);
  }
}

/**
 * `--cache DIR` (issue #36): the cache decides whether an export is "unchanged", so only its owner
 * may write there. An existing directory must belong to this user and not be writable by group or
 * others (a world-writable one, such as /tmp, would let anyone plant entries); a missing one is
 * created 0700. Checked before anything is sent. Not on Windows, where the POSIX mode says nothing.
 */
function checkCacheDirectory(dir: string, io: CliIo): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new UsageError(`--cache ${dir}: cannot be used (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    st = fs.statSync(dir);
  }
  if (!st.isDirectory()) throw new UsageError(`--cache ${dir} is not a directory`);
  if ((io.platform ?? process.platform) === "win32") return;
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  if (uid !== undefined && st.uid !== uid) throw new UsageError(`--cache ${dir} belongs to another user; refusing to use it (its entries decide what counts as unchanged). Use a directory of your own.`);
  const mode = st.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new UsageError(`--cache ${dir} is writable by other users (mode ${mode.toString(8).padStart(4, "0")}); refusing to use it: anyone could plant entries that make an export report "unchanged". Run: chmod go-w ${dir}`);
  }
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Writes the output file (see {@link writeFileAtomic}: an exclusive 0600 temporary file renamed over
 * it). The directory must exist unless `--mkdir` asked for it.
 */
function writeFileAtomically(file: string, chunks: Iterable<string | Uint8Array>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, chunks);
}

/** Decodes an export's bytes shown at a terminal (a character split between two chunks is kept whole). */
const ttyDecoder = new TextDecoder();

function processIo(): CliIo {
  return {
    env: process.env,
    readStdin: async () => {
      // At a terminal the token is read with echo off (nothing of it on screen or in the scrollback).
      if (process.stdin.isTTY) return readHiddenLine(process.stdin, (t) => void process.stderr.write(t), "Company API token (not shown as you type; end with Enter): ");
      const parts: Buffer[] = [];
      for await (const chunk of process.stdin) parts.push(chunk as Buffer);
      return Buffer.concat(parts).toString("utf8");
    },
    stdout: (t) => void process.stdout.write(process.stdout.isTTY ? terminalSafe(t) : t),
    // Byte-exact unless a terminal shows them: there the text is made safe too (an escape sequence in
    // an export's cell would reach the terminal; adversarial review, 2026-11-30).
    stdoutBytes: (b) => void process.stdout.write(process.stdout.isTTY ? terminalSafe(ttyDecoder.decode(b, { stream: true })) : b),
    stderr: (t) => void process.stderr.write(process.stderr.isTTY ? terminalSafe(t) : t),
  };
}

/** Entry point for `bin/ppm.js` and `npm run ppm`: runs and sets the exit code (lets stdout drain). */
export function main(argv: string[] = process.argv.slice(2)): void {
  runCli(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      // Last resort: an error that escaped runCli's own handling may still quote a credential.
      const secrets = [process.env.PPM_TOKEN, process.env.PPM_API_SECRET, process.env.PPM_API_AUTH, ...tokenArgs(argv), ...runSecrets];
      const text = redactSecrets(`error: ${e instanceof Error ? e.message : String(e)}\n`, secrets);
      process.stderr.write(process.stderr.isTTY ? terminalSafe(text) : text);
      process.exitCode = EXIT.failure;
    },
  );
}

if (require.main === module) main();
