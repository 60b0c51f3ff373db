/**
 * Saved views (issue #28): a name, a dataset and a local query (its `$apply` is the view's summary).
 * Pure: no Office, no DOM. Kept in the workbook's settings under {@link VIEWS_SETTING} (the pane,
 * `PPM.VIEW`) and exported to a file that `ppm export --view NAME --views FILE` reads; both are the
 * same JSON document ({@link ViewsDocument}), validated strictly on the way in.
 *
 * A view holds no secret and no connection: only the dataset key and the query, plus (for the
 * reader's information) the environment and company it was saved from. Whoever runs it uses their
 * own connection.
 */
import { z } from "../contract/zod";
import { formatQuery, LocalQuerySchema, readStoredQuery, type LocalQuery } from "../query";

/** The workbook setting that holds the views (one JSON document). */
export const VIEWS_SETTING = "ppm.views";
/** The `format` field of a views document (file and setting). */
export const VIEWS_FORMAT = "ppm-views";
export const VIEWS_VERSION = 1;
/** At most this many views per workbook (the settings budget is shared with the table bindings). */
export const MAX_VIEWS = 200;
const MAX_NAME = 80;

export interface SavedView {
  name: string;
  /** Dataset key (as the manifest lists it). */
  dataset: string;
  /** The local query; `apply` is the summary. `{}` is the whole export. */
  query: LocalQuery;
  /** Where it was saved from (information only; never a token). */
  environment?: string;
  companyId?: string | null;
  /** ISO time it was saved. */
  savedAt?: string;
}

export interface ViewsDocument {
  format: typeof VIEWS_FORMAT;
  version: typeof VIEWS_VERSION;
  views: SavedView[];
}

const ViewSchema = z.strictObject({
  name: z.string().min(1).max(MAX_NAME),
  dataset: z.string().min(1).max(200),
  query: LocalQuerySchema,
  environment: z.string().max(2000).optional(),
  companyId: z.string().max(200).nullable().optional(),
  savedAt: z.string().max(40).optional(),
});

const DocumentSchema = z.strictObject({
  format: z.literal(VIEWS_FORMAT),
  version: z.literal(VIEWS_VERSION),
  views: z.array(ViewSchema).max(MAX_VIEWS),
});

export class ViewError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ViewError";
  }
}

/** Trims and checks a view name (1–80 characters, no control characters). */
export function checkViewName(name: string): string {
  const n = name.trim();
  if (n === "") throw new ViewError("Give the view a name.");
  if (n.length > MAX_NAME) throw new ViewError(`A view name has at most ${MAX_NAME} characters.`);
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(n)) throw new ViewError("A view name cannot contain control characters.");
  return n;
}

/** Names compare case-insensitively (as Excel compares names). */
export function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

export function emptyDocument(): ViewsDocument {
  return { format: VIEWS_FORMAT, version: VIEWS_VERSION, views: [] };
}

/**
 * Reads a views document (a file's text or the setting's value). Every query is checked as the
 * engine would read it. Throws {@link ViewError} naming the problem.
 */
export function parseViews(text: unknown): ViewsDocument {
  let raw: unknown = text;
  if (typeof text === "string") {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new ViewError(`The views file is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const r = DocumentSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ViewError(`The views file is not a PPM views document (${issue.path.join(".") || "(root)"}: ${issue.message}).`);
  }
  const seen = new Set<string>();
  for (const v of r.data.views) {
    checkViewName(v.name);
    const k = v.name.trim().toLowerCase();
    if (seen.has(k)) throw new ViewError(`The views file has two views named "${v.name}".`);
    seen.add(k);
    try {
      readStoredQuery(v.query);
    } catch (e) {
      throw new ViewError(`The query of view "${v.name}" is not valid: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return r.data;
}

/** The document as written to a file or the setting (stable key order, two-space indent). */
export function serializeViews(doc: ViewsDocument): string {
  return JSON.stringify({ format: VIEWS_FORMAT, version: VIEWS_VERSION, views: doc.views.map(orderView) }, null, 2) + "\n";
}

function orderView(v: SavedView): SavedView {
  const out: SavedView = { name: v.name, dataset: v.dataset, query: v.query };
  if (v.environment !== undefined) out.environment = v.environment;
  if (v.companyId !== undefined) out.companyId = v.companyId;
  if (v.savedAt !== undefined) out.savedAt = v.savedAt;
  return out;
}

export function findView(doc: ViewsDocument, name: string): SavedView | undefined {
  return doc.views.find((v) => sameName(v.name, name));
}

/** The document with `view` added, or replacing the view of the same name. */
export function upsertView(doc: ViewsDocument, view: SavedView): ViewsDocument {
  const name = checkViewName(view.name);
  const others = doc.views.filter((v) => !sameName(v.name, name));
  if (others.length >= MAX_VIEWS) throw new ViewError(`A workbook keeps at most ${MAX_VIEWS} views; delete one first.`);
  const next = { ...doc, views: [...others, { ...view, name }] };
  parseViews(JSON.parse(serializeViews(next))); // the same checks as on the way in
  return next;
}

export function removeView(doc: ViewsDocument, name: string): ViewsDocument {
  return { ...doc, views: doc.views.filter((v) => !sameName(v.name, name)) };
}

/** One line describing a view's query, as the pane lists it. */
export function describeView(v: SavedView): string {
  const q = formatQuery(v.query);
  return q === "" ? `${v.dataset} (whole export)` : `${v.dataset} · ${q}`;
}
