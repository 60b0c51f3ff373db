/**
 * The set-up the CLI's file tests share: a reference service reset before each test, and a temp
 * directory (removed afterwards) to make fresh directories in. Call at the top level of a test file.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { CONTROL } from "../helpers/control";

export function cliFixture(prefix: string): { svc: () => ReferenceService; dir: (name: string) => string } {
  let svc: ReferenceService | undefined;
  let tmp: string | undefined;
  beforeAll(async () => {
    svc = await startReferenceService({ port: 0 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(async () => {
    await svc?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await fetch(`${svc!.url}/__control/reset`, { method: "POST", headers: CONTROL });
  });
  return {
    svc: () => svc!,
    /** A fresh directory under the test file's temp directory. */
    dir: (name) => {
      const d = path.join(tmp!, `${name}-${crypto.randomBytes(4).toString("hex")}`);
      fs.mkdirSync(d);
      return d;
    },
  };
}
