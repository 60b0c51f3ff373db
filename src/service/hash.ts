/**
 * SHA-256 for fingerprints, on `@noble/hashes` (audited, synchronous and incremental; the browser's
 * `crypto.subtle` is async only, and fingerprints are needed synchronously in the pane and in Node).
 * Used for non-reversible token fingerprints and snapshot content fingerprints. The digests are the
 * standard ones, so fingerprints stored in workbooks before the switch from the hand-written
 * implementation stay valid (test/service/hash.test.ts pins stored values).
 */
import { sha256 } from "@noble/hashes/sha2";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils";

/** Incremental SHA-256 over UTF-8 text or bytes. */
export class Sha256 {
  private readonly h = sha256.create();

  /** Adds text (as UTF-8) or bytes. */
  update(data: string | Uint8Array): this {
    this.h.update(typeof data === "string" ? utf8ToBytes(data) : data);
    return this;
  }

  /** The digest as lower-case hex; the hash cannot be updated afterwards. */
  hex(): string {
    return bytesToHex(this.h.digest());
  }
}

/** SHA-256 of UTF-8 text, lower-case hex. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}
