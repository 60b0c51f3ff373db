/**
 * Synchronous SHA-256 in plain TypeScript. The client runs in browsers (where `crypto.subtle` is
 * async only) and in Node; fingerprints are needed synchronously and incrementally, so neither
 * platform API fits. Used for non-reversible token fingerprints and snapshot content fingerprints,
 * not for security-critical signing.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** Incremental SHA-256 over UTF-8 text or bytes. */
export class Sha256 {
  private readonly h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  private readonly block = new Uint8Array(64);
  private blockLen = 0;
  private totalBytes = 0;
  private readonly w = new Uint32Array(64);
  private readonly encoder = new TextEncoder();
  private done = false;

  /** Adds text (as UTF-8) or bytes. */
  update(data: string | Uint8Array): this {
    if (this.done) throw new Error("Sha256: update after digest");
    const bytes = typeof data === "string" ? this.encoder.encode(data) : data;
    this.totalBytes += bytes.length;
    let i = 0;
    while (i < bytes.length) {
      const n = Math.min(64 - this.blockLen, bytes.length - i);
      this.block.set(bytes.subarray(i, i + n), this.blockLen);
      this.blockLen += n;
      i += n;
      if (this.blockLen === 64) {
        this.compress();
        this.blockLen = 0;
      }
    }
    return this;
  }

  /** Lower-case hex digest. The hasher cannot be updated afterwards. */
  hex(): string {
    if (!this.done) {
      const bitLen = this.totalBytes * 8;
      this.block[this.blockLen++] = 0x80;
      if (this.blockLen > 56) {
        this.block.fill(0, this.blockLen);
        this.compress();
        this.blockLen = 0;
      }
      this.block.fill(0, this.blockLen);
      const hi = Math.floor(bitLen / 0x100000000);
      const lo = bitLen >>> 0;
      const dv = new DataView(this.block.buffer);
      dv.setUint32(56, hi);
      dv.setUint32(60, lo);
      this.compress();
      this.done = true;
    }
    let out = "";
    for (const v of this.h) out += v.toString(16).padStart(8, "0");
    return out;
  }

  private compress(): void {
    const w = this.w;
    const b = this.block;
    for (let t = 0; t < 16; t++) w[t] = (b[4 * t] << 24) | (b[4 * t + 1] << 16) | (b[4 * t + 2] << 8) | b[4 * t + 3];
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15];
      const y = w[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    let [a, bb, c, d, e, f, g, h] = this.h;
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    const H = this.h;
    H[0] += a;
    H[1] += bb;
    H[2] += c;
    H[3] += d;
    H[4] += e;
    H[5] += f;
    H[6] += g;
    H[7] += h;
  }
}

/** SHA-256 hex digest of UTF-8 text. */
export function sha256Hex(text: string): string {
  return new Sha256().update(text).hex();
}
