/**
 * The document id formula consent is bound to (issue #36, src/workbook/documentId.ts), through
 * Microsoft's library against the emulated host: written into the document's settings at the first
 * Allow, kept when it is there, never taken from a setting that is not one.
 */
import { Workbook, createRequestContext } from "../../src/emulator";
import { DOCUMENT_ID_SETTING, ensureDocumentId, newDocumentId, readDocumentId } from "../../src/workbook/documentId";
import { AddinRuntime } from "../../src/addin/runtime";
import { MemoryStorage } from "../helpers/memoryStorage";

describe("the document id in the workbook's settings", () => {
  it("is absent in a new workbook, written once by ensure, then read back and kept", async () => {
    const wb = new Workbook();
    expect(await readDocumentId(createRequestContext(wb))).toBeNull();
    const id = await ensureDocumentId(createRequestContext(wb));
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.parse(wb.settings.get(DOCUMENT_ID_SETTING)!)).toBe(id);
    expect(await readDocumentId(createRequestContext(wb))).toBe(id);
    // A second Allow (another device, a co-author) keeps the id the document has.
    expect(await ensureDocumentId(createRequestContext(wb), () => "f".repeat(32))).toBe(id);
    expect(JSON.parse(wb.settings.get(DOCUMENT_ID_SETTING)!)).toBe(id);
  });

  it("a setting that is not an id (planted text, a number) counts as none and is replaced at Allow", async () => {
    for (const planted of ["not-an-id", 42, "A".repeat(32), `${"a".repeat(32)} `]) {
      const wb = new Workbook();
      const ctx = createRequestContext(wb);
      ctx.workbook.settings.add(DOCUMENT_ID_SETTING, planted);
      await ctx.sync();
      expect(await readDocumentId(createRequestContext(wb))).toBeNull();
      const id = await ensureDocumentId(createRequestContext(wb));
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(await readDocumentId(createRequestContext(wb))).toBe(id);
    }
  });

  it("new ids are 128 random bits (no two alike in 10,000)", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newDocumentId()));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("the runtime's formula consent over a workbook's settings (issue #36)", () => {
  const URL = "https://contoso.sharepoint.com/sites/fin/budget.xlsx";
  const ACME = { id: "c-0000acme", baseUrl: "https://acme.example/ppm", label: "Acme (https://acme.example/ppm)" };
  /** A runtime for the document `wb` at `url`, over this device's `storage`, as addinRuntime() wires it. */
  const runtimeFor = (wb: InstanceType<typeof Workbook>, storage: MemoryStorage, url: string | null) =>
    new AddinRuntime({
      office: { context: { partitionKey: "pk", document: { url } } },
      storage,
      loadEngine: () => Promise.reject(new Error("not needed")),
      documentId: { read: () => readDocumentId(createRequestContext(wb)), ensure: () => ensureDocumentId(createRequestContext(wb)) },
    });

  it("Allow writes the id into the document; the same document is allowed in a new runtime, another file at its address is not", async () => {
    const storage = new MemoryStorage();
    const book = new Workbook();
    const first = runtimeFor(book, storage, URL).formulaConsent;
    expect(await first.allowed(ACME)).toBe(false);
    await first.allow({ connections: [ACME] });
    const id = JSON.parse(book.settings.get(DOCUMENT_ID_SETTING)!) as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(await runtimeFor(book, storage, URL).formulaConsent.allowed(ACME)).toBe(true);
    // A stranger's file at the same address: no id in its settings.
    expect(await runtimeFor(new Workbook(), storage, URL).formulaConsent.allowed(ACME)).toBe(false);
    // The allowed file's copy elsewhere (it carries the id), and the preview's document (no address).
    expect(await runtimeFor(book, storage, "https://fabrikam.example/copy.xlsx").formulaConsent.allowed(ACME)).toBe(false);
    expect(await runtimeFor(book, storage, null).formulaConsent.allowed(ACME)).toBe(false);
    // Stored under the partition prefix, as hashes only.
    const keys = [...storage.map.keys()];
    expect(keys).toEqual([expect.stringMatching(/^pk:ppm\.v2\.formulaConsent\.[0-9a-f]{32}$/)]);
  });
});
