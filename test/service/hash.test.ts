/**
 * Fingerprints are stored in workbooks (snapshot validators, connection scopes), so the switch to
 * `@noble/hashes` must keep every digest byte-identical. These values were produced by the
 * hand-written implementation it replaced.
 */
import { createHash } from "crypto";
import { Sha256, sha256Hex } from "../../src/service/hash";
import { tableFingerprint } from "../../src/service/snapshot";
import { secretFingerprint } from "../../src/service/connection";
import type { Column } from "../../src/table/model";

describe("SHA-256 fingerprints", () => {
  it("keeps the digests stored by earlier versions", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("ppm-token-fingerprint:demo-acme-token")).toBe("6017433c315e9b48d9a4c0b0a1a370ec46404ab7b4f3c575891c8d73f062e088");
    expect(new Sha256().update("héllo ").update(new Uint8Array([0xf0, 0x9f, 0x98, 0x80])).hex()).toBe("a53c56966616f0ec3ed9db7ea07a6034430149528bbaba8966c284f9373669c2");
  });

  it("keeps stored table and secret fingerprints", () => {
    const columns = [
      { name: "project_token", type: "text" },
      { name: "budget", type: "decimal" },
    ] as Column[];
    expect(tableFingerprint(columns, [["pt_1", "12.50"], ["pt_é😀", null]])).toBe("sha256:2df8ff4a3e00b3db623cc4c82165b6ec44b7c87ba6e5988dc914bff2288bf67b");
    expect(secretFingerprint("demo-acme-token")).toBe("6017433c315e9b48");
  });

  it.each(["", "abc", "x".repeat(55), "x".repeat(56), "x".repeat(1000), "é€😀 ünïcode"])("matches node:crypto for %#", (s) => {
    expect(sha256Hex(s)).toBe(createHash("sha256").update(s, "utf8").digest("hex"));
  });

  it("is incremental: any split of the input gives the same digest", () => {
    const s = "a".repeat(130) + "😀" + "b".repeat(70); // cuts stay off the emoji's surrogate pair
    for (const cut of [0, 1, 63, 64, 65, 130, 132, s.length]) {
      expect(new Sha256().update(s.slice(0, cut)).update(s.slice(cut)).hex()).toBe(sha256Hex(s));
    }
  });
});
