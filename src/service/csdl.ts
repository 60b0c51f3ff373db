/**
 * Reads the OData `$metadata` document (CSDL XML) into typed column lists per entity set.
 *
 * Written without `DOMParser` because this code also runs in Node and in the ribbon-command
 * runtime. CSDL is a small, regular XML vocabulary; only the elements that matter (`Schema`,
 * `EntityType`, `Key`/`PropertyRef`, `Property`, `EntitySet`) are read, everything else is skipped.
 */
import type { Column } from "../table/model";
import { columnTypeFromEdm } from "./values";

/** One entity set (= dataset) described by `$metadata`. */
export interface CsdlEntitySet {
  /** Entity set name (the dataset key). */
  name: string;
  /** Qualified entity type name. */
  entityType: string;
  columns: Column[];
  /** Key property names. */
  keys: string[];
}

/** The parts of `$metadata` the client uses. */
export interface ServiceMetadata {
  /** Entity sets by name, in document order. */
  entitySets: CsdlEntitySet[];
  /** Entity types by qualified name (also by bare name). */
  entityTypes: Record<string, { name: string; columns: Column[]; keys: string[] }>;
}

/** A CSDL document that cannot be read. `where` locates the problem. */
export class CsdlError extends Error {
  constructor(
    message: string,
    readonly where: string,
  ) {
    super(message);
  }
}

interface Tag {
  name: string;
  attrs: Record<string, string>;
  kind: "open" | "close" | "self";
  offset: number;
}

const TAG_RE = /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<![^>]*>/g;
const ATTR_RE = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, e: string) => {
    const l = e.toLowerCase();
    if (l === "amp") return "&";
    if (l === "lt") return "<";
    if (l === "gt") return ">";
    if (l === "quot") return '"';
    if (l === "apos") return "'";
    const code = l.startsWith("#x") ? parseInt(l.slice(2), 16) : parseInt(l.slice(1), 10);
    return String.fromCodePoint(code);
  });
}

function localName(n: string): string {
  const i = n.indexOf(":");
  return i >= 0 ? n.slice(i + 1) : n;
}

function* tags(xml: string): Generator<Tag> {
  TAG_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TAG_RE.exec(xml))) {
    if (!m[2]) continue; // comment, declaration, CDATA
    const attrs: Record<string, string> = {};
    ATTR_RE.lastIndex = 0;
    let a: RegExpExecArray | null;
    while ((a = ATTR_RE.exec(m[3] ?? ""))) attrs[localName(a[1])] = decodeEntities(a[2] ?? a[3] ?? "");
    yield { name: localName(m[2]), attrs, kind: m[1] ? "close" : m[4] ? "self" : "open", offset: m.index };
  }
}

function lineOf(xml: string, offset: number): string {
  let line = 1;
  for (let i = 0; i < offset && i < xml.length; i++) if (xml.charCodeAt(i) === 10) line++;
  return `line ${line}`;
}

/**
 * Parses CSDL XML. Unknown EDM types become `text` columns (their name is kept in `sourceType`).
 *
 * @throws CsdlError when the text is not an EDMX/CSDL document or an element is malformed.
 */
export function parseCsdl(xml: string): ServiceMetadata {
  if (typeof xml !== "string" || !/<(?:\w+:)?Edmx[\s>]/.test(xml)) {
    throw new CsdlError("the document is not OData CSDL XML (no Edmx root element)", "line 1");
  }
  const entityTypes: ServiceMetadata["entityTypes"] = {};
  const entitySets: CsdlEntitySet[] = [];
  let namespace = "";
  let alias = "";
  let current: { name: string; columns: Column[]; keys: string[] } | null = null;
  let inKey = false;
  for (const t of tags(xml)) {
    if (t.name === "Schema" && t.kind !== "close") {
      namespace = t.attrs.Namespace ?? "";
      alias = t.attrs.Alias ?? "";
    } else if (t.name === "EntityType" || t.name === "ComplexType") {
      if (t.kind === "close") {
        current = null;
        continue;
      }
      const name = t.attrs.Name;
      if (!name) throw new CsdlError(`${t.name} without a Name`, lineOf(xml, t.offset));
      const et = { name, columns: [] as Column[], keys: [] as string[] };
      entityTypes[namespace ? `${namespace}.${name}` : name] = et;
      if (alias) entityTypes[`${alias}.${name}`] = et;
      entityTypes[name] ??= et;
      current = t.kind === "self" ? null : et;
    } else if (t.name === "Key") {
      inKey = t.kind === "open";
    } else if (t.name === "PropertyRef" && current && inKey && t.kind !== "close") {
      if (t.attrs.Name) current.keys.push(t.attrs.Name);
    } else if (t.name === "Property" && current && t.kind !== "close") {
      const name = t.attrs.Name;
      const type = t.attrs.Type;
      if (!name || !type) throw new CsdlError("Property without Name or Type", lineOf(xml, t.offset));
      const col: Column = { name, type: columnTypeFromEdm(type), sourceType: type };
      // CSDL: Nullable defaults to true when absent.
      col.nullable = (t.attrs.Nullable ?? "true").toLowerCase() !== "false";
      current.columns.push(col);
    } else if (t.name === "EntitySet" && t.kind !== "close") {
      const name = t.attrs.Name;
      const type = t.attrs.EntityType;
      if (!name || !type) throw new CsdlError("EntitySet without Name or EntityType", lineOf(xml, t.offset));
      entitySets.push({ name, entityType: type, columns: [], keys: [] });
    }
  }
  for (const set of entitySets) {
    const et = entityTypes[set.entityType] ?? entityTypes[set.entityType.split(".").pop() ?? ""];
    if (et) {
      set.columns = et.columns.map((c) => ({ ...c }));
      set.keys = [...et.keys];
    }
  }
  return { entitySets, entityTypes };
}
