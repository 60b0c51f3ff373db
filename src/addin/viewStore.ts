/**
 * Saved views in the workbook's settings (`Excel.SettingCollection`, ExcelApi 1.4), under
 * {@link VIEWS_SETTING}: one JSON document, the same as a views file. Office edge: the request
 * context is a parameter. A view holds no secret (the document is checked for the device's
 * secrets before it is written, as bindings are).
 */
import { redactSecrets } from "../service/errors";
import { loadAndCheckSettingsBudget } from "../workbook/bindingStore";
import { keepSetting } from "../workbook/settle";
import { emptyDocument, parseViews, serializeViews, upsertView, removeView, VIEWS_SETTING, ViewError, type SavedView, type ViewsDocument } from "../views/views";

/** The workbook's views (an empty document when there are none). @throws ViewError for a damaged setting. */
export async function readViews(context: Excel.RequestContext): Promise<ViewsDocument> {
  const item = context.workbook.settings.getItemOrNullObject(VIEWS_SETTING);
  item.load("value");
  await context.sync();
  if (item.isNullObject) return emptyDocument();
  return parseViews(typeof item.value === "string" ? item.value : JSON.stringify(item.value));
}

async function writeViews(context: Excel.RequestContext, doc: ViewsDocument, secrets: readonly string[]): Promise<void> {
  const json = serializeViews(doc);
  if (redactSecrets(json, secrets) !== json) throw new ViewError("The view would contain a credential; it was not saved.");
  const previous = await loadAndCheckSettingsBudget(context, VIEWS_SETTING, json);
  context.workbook.settings.add(VIEWS_SETTING, json);
  await context.sync();
  // Issue #35: kept against a co-author's stale settings copy (settled with the batch).
  keepSetting(context, { key: VIEWS_SETTING, value: json, mode: "cas", previous });
}

/** Adds a view, or replaces the one of the same name. Returns the new document. */
export async function saveView(context: Excel.RequestContext, view: SavedView, secrets: readonly string[] = []): Promise<ViewsDocument> {
  const next = upsertView(await readViews(context), view);
  await writeViews(context, next, secrets);
  return next;
}

export async function deleteView(context: Excel.RequestContext, name: string): Promise<ViewsDocument> {
  const next = removeView(await readViews(context), name);
  await writeViews(context, next, []);
  return next;
}
