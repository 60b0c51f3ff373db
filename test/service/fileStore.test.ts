import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FileValidatorStore } from "../../src/service/node";

describe("FileValidatorStore", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-store-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("round-trips validators and extra data, keeping extra data when only validators change", () => {
    const s = new FileValidatorStore(dir);
    expect(s.get("k")).toBeUndefined();
    s.set("k", { etag: '"a"' }, { out: "/x.csv" });
    s.set("k", { etag: '"b"' });
    expect(s.get("k")).toEqual({ etag: '"b"' });
    expect(s.getExtra("k")).toEqual({ out: "/x.csv" });
    expect(new FileValidatorStore(dir).get("k")).toEqual({ etag: '"b"' });
    s.delete("k");
    expect(s.get("k")).toBeUndefined();
  });

  it("treats a corrupt or foreign entry as absent, and names files without the key text", () => {
    const s = new FileValidatorStore(dir);
    s.set("https://h|company:acme|dataset:financials|format:csv", { etag: '"a"' });
    const [file] = fs.readdirSync(dir);
    expect(file).toMatch(/^[0-9a-f]{32}\.json$/);
    fs.writeFileSync(path.join(dir, file), "{not json");
    expect(s.get("https://h|company:acme|dataset:financials|format:csv")).toBeUndefined();
    fs.writeFileSync(path.join(dir, file), JSON.stringify({ key: "other", validators: { etag: "x" } }));
    expect(s.get("https://h|company:acme|dataset:financials|format:csv")).toBeUndefined();
  });
});
