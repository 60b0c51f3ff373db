/**
 * Node-only parts of the service client (the CLI's file-backed cache). Kept out of `index.ts` so
 * the browser bundle never reaches `fs`.
 */
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
 * Writes go to a temporary file first and are renamed, so an interrupted run never leaves a
 * half-written entry.
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
    fs.mkdirSync(this.dir, { recursive: true });
    const target = this.file(key);
    const tmp = `${target}.${process.pid}.tmp`;
    const keep = extra ?? this.read(key)?.extra;
    const entry: FileEntry = { key, validators, ...(keep ? { extra: keep } : {}) };
    fs.writeFileSync(tmp, JSON.stringify(entry, null, 2));
    fs.renameSync(tmp, target);
  }

  delete(key: string): void {
    fs.rmSync(this.file(key), { force: true });
  }
}
