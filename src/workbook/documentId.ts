/**
 * The document's id for PPM formula consent (issue #36): a random value in the workbook's settings
 * (`Excel.SettingCollection`, ExcelApi 1.4), written the first time this device allows PPM formulas
 * in the document. Document settings travel with the file, so the id is NOT a secret (anyone with a
 * copy of the file has it): it only tells files apart, so that a different file put at an address
 * this device allowed is asked again (src/addin/formulaConsent.ts). Office edge: the request
 * context is a parameter.
 */

/** The setting that holds the id. */
export const DOCUMENT_ID_SETTING = "ppm.documentId";

/** 128 random bits as 32 lowercase hex digits; anything else in the setting is not an id. */
const ID_PATTERN = /^[0-9a-f]{32}$/;

/** A new id (Web Crypto: the task pane, the shared runtime and Node 20 all have it). */
export function newDocumentId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The document's id, or null when it has none (or the setting holds something that is not one). */
export async function readDocumentId(context: Excel.RequestContext): Promise<string | null> {
  const item = context.workbook.settings.getItemOrNullObject(DOCUMENT_ID_SETTING);
  item.load("value");
  await context.sync();
  if (item.isNullObject) return null;
  return typeof item.value === "string" && ID_PATTERN.test(item.value) ? item.value : null;
}

/**
 * The document's id, written now when it has none. An existing id is kept, so co-authors and other
 * devices that allow formulas in the same document agree on one id instead of overwriting each
 * other's. Read in the same call as the write: an id a co-author wrote since the last read is used.
 */
export async function ensureDocumentId(context: Excel.RequestContext, make: () => string = newDocumentId): Promise<string> {
  const existing = await readDocumentId(context);
  if (existing !== null) return existing;
  const id = make();
  if (!ID_PATTERN.test(id)) throw new Error("A document id is 32 lowercase hex digits.");
  context.workbook.settings.add(DOCUMENT_ID_SETTING, id);
  await context.sync();
  return id;
}
