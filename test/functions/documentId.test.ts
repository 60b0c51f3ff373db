/**
 * The document id formula consent is bound to (issue #36, src/workbook/documentId.ts), through
 * Microsoft's library against the emulated host: written into the document's settings at the first
 * Allow, kept when it is there, never taken from a setting that is not one.
 */
import { Workbook, createRequestContext } from "../../src/emulator";
import { DOCUMENT_ID_SETTING, ensureDocumentId, newDocumentId, readDocumentId } from "../../src/workbook/documentId";

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
