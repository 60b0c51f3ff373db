/** Shared by the test files that talk to the reference service over real HTTP on 127.0.0.1. */
import { startReferenceService, type ReferenceService } from "../../src/reference/server";
import { CONTROL } from "./control";

export interface ReferenceServiceOptions {
  /** Also empty the service's request log before each test (for tests that count requests). */
  clearLog?: boolean;
}

/**
 * The reference service for the enclosing describe block (or file): started once before its tests
 * (a free port on 127.0.0.1, quiet), its state reset to the demo data before each test, closed after
 * them. Read `url` and `service` inside tests and hooks, not before the block's hooks have run.
 */
export function useReferenceService(opts: ReferenceServiceOptions = {}): { readonly url: string; readonly service: ReferenceService } {
  let service: ReferenceService | undefined;
  const started = (): ReferenceService => {
    if (!service) throw new Error("the reference service is not started yet (read it inside a test or hook)");
    return service;
  };
  beforeAll(async () => {
    service = await startReferenceService({ port: 0, quiet: true });
  });
  afterAll(async () => {
    await service?.close();
  });
  beforeEach(async () => {
    const url = started().url;
    const reset = await fetch(`${url}/__control/reset`, { method: "POST", headers: CONTROL });
    const said = await reset.text();
    if (!reset.ok) throw new Error(`the reference service's reset failed: ${reset.status} ${said}`);
    if (opts.clearLog) await fetch(`${url}/__control/requests`, { method: "DELETE", headers: CONTROL });
  });
  return {
    get url() {
      return started().url;
    },
    get service() {
      return started();
    },
  };
}
