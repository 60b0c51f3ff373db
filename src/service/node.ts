/**
 * Node-only parts of the service client (the CLI's file-backed cache). Kept out of `index.ts` so
 * the browser bundle never reaches `fs`.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { sha256Hex } from "./hash";
import type { ValidatorStore, Validators } from "./validators";

/** One cache entry on disk: the validators plus whatever the caller wants to remember with them. */
interface FileEntry {
  key: string;
  validators: Validators;
  extra?: Record<string, unknown>;
}

/**
 * {@link ValidatorStore} backed by one JSON file per key in a directory (the CLI's `--cache DIR`).
 * File names are hashes of the key, so they carry no URL text; the key itself contains no secret.
 * The directory is created owner-only (0700) and every entry is written by {@link writeFileAtomic}
 * (a fresh 0600 file, then renamed), so an interrupted run never leaves a half-written entry and a
 * planted link is never followed.
 */
export class FileValidatorStore implements ValidatorStore {
  constructor(readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, `${sha256Hex(key).slice(0, 32)}.json`);
  }

  private read(key: string): FileEntry | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.file(key), "utf8");
    } catch {
      return undefined;
    }
    try {
      const parsed = JSON.parse(text) as FileEntry;
      // A hash collision or a hand-edited file must not hand back another dataset's validators.
      if (parsed && parsed.key === key && parsed.validators && typeof parsed.validators === "object") return parsed;
    } catch {
      /* A corrupt entry is treated as absent: the next download rewrites it. */
    }
    return undefined;
  }

  get(key: string): Validators | undefined {
    return this.read(key)?.validators;
  }

  /** Extra data stored with the key (the CLI keeps the output file it last wrote). */
  getExtra(key: string): Record<string, unknown> | undefined {
    return this.read(key)?.extra;
  }

  /** Stores validators; `extra` replaces the stored extra data, and when omitted the old one is kept. */
  set(key: string, validators: Validators, extra?: Record<string, unknown>): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const keep = extra ?? this.read(key)?.extra;
    const entry: FileEntry = { key, validators, ...(keep ? { extra: keep } : {}) };
    writeFileAtomic(this.file(key), [JSON.stringify(entry, null, 2)]);
  }

  delete(key: string): void {
    fs.rmSync(this.file(key), { force: true });
  }
}

/** Permission bits of every file the CLI writes (outputs and cache entries): owner read/write only. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Writes `chunks` to `file` so that no one else can redirect, read or see half of it:
 *
 * 1. A temporary file with an unpredictable name is created next to `file` exclusively
 *    (`O_CREAT | O_EXCL`, flag `wx`): an existing name, a planted symbolic link included, makes the
 *    open fail instead of being followed, so nothing outside the target is ever written.
 * 2. It is created with mode 0600 (owner only; the umask can only remove bits) and set to 0600
 *    again, so the output is never readable by other users, whatever umask the shell has.
 * 3. It is renamed over `file` (atomic on one file system; a link at `file` itself is replaced, not
 *    followed). On any failure the temporary file is removed and `file` is left as it was.
 *
 * The directory must exist. `suffix` names the temporary file (tests pass a fixed one).
 */
export function writeFileAtomic(file: string, chunks: Iterable<string | Uint8Array>, suffix: () => string = () => randomBytes(8).toString("hex")): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${suffix()}.tmp`);
  const fd = fs.openSync(tmp, "wx", PRIVATE_FILE_MODE);
  let done = false;
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    let buf = "";
    for (const c of chunks) {
      if (typeof c !== "string") {
        if (buf) fs.writeSync(fd, buf);
        buf = "";
        fs.writeSync(fd, c);
        continue;
      }
      buf += c;
      if (buf.length > 1 << 16) {
        fs.writeSync(fd, buf);
        buf = "";
      }
    }
    if (buf) fs.writeSync(fd, buf);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    done = true;
  } finally {
    if (!done) {
      try {
        fs.closeSync(fd);
      } catch {
        /* already closed */
      }
      fs.rmSync(tmp, { force: true });
    }
  }
}
