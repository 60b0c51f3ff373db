/**
 * Shared by the engine tests that import over real HTTP (engine.test.ts, changeCounts.test.ts): the
 * reference service, a new emulated workbook as the global `Excel` and a device's connection store
 * holding the demo company "acme".
 */
import { ConnectionStore } from "../../src/addin/connectionStore";
import { Workbook, createExcelNamespace } from "../../src/emulator";
import type { ReferenceService } from "../../src/reference/server";
import type { Connection } from "../../src/service/connection";
import { MemoryStorage } from "../helpers/memoryStorage";
import { useReferenceService } from "../helpers/referenceService";

/** The reference service's demo token of the company "acme". */
export const TOKEN = "demo-acme-token";

export interface AcmeWorkbook {
  readonly service: ReferenceService;
  /** The workbook the global `Excel` answers from (a new one per test). */
  readonly wb: InstanceType<typeof Workbook>;
  /** The device's connection store: one connection, id "acme", the demo token. */
  readonly store: ConnectionStore;
  readonly conn: Connection;
}

/**
 * Registers the enclosing describe block's hooks: the reference service started once and reset
 * before each test; before each test a new workbook installed as the global `Excel` (the previous
 * global restored after the block) and a new connection store with "acme". Read the fields inside
 * tests and hooks (they change per test).
 */
export function useAcmeWorkbook(): AcmeWorkbook {
  const svc = useReferenceService();
  const g = globalThis as unknown as { Excel?: unknown };
  const saved = g.Excel;
  let now: { wb: InstanceType<typeof Workbook>; store: ConnectionStore; conn: Connection } | undefined;
  const current = () => {
    if (!now) throw new Error("the workbook is made before each test (read it inside a test or hook)");
    return now;
  };
  afterAll(() => {
    g.Excel = saved;
  });
  beforeEach(() => {
    const wb = new Workbook({});
    g.Excel = createExcelNamespace(wb);
    const store = new ConnectionStore(new MemoryStorage(), { newId: () => "acme" });
    store.save({ name: "Acme", baseUrl: svc.url, token: TOKEN });
    now = { wb, store, conn: store.connection("acme")! };
  });
  return {
    get service() {
      return svc.service;
    },
    get wb() {
      return current().wb;
    },
    get store() {
      return current().store;
    },
    get conn() {
      return current().conn;
    },
  };
}
