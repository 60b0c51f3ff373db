/**
 * The OData `$metadata` document (CSDL XML, OData 4.0) and the service document. Each dataset is
 * an entity type and an entity set of the same name; columns are typed properties.
 */
import type { DatasetDef } from "./data";

export const CSDL_NAMESPACE = "Service.Reporting";

function xmlAttr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** CSDL for the given datasets. Decimal columns carry `Scale="variable"`: values have up to two places but it is not promised. */
export function csdlDocument(datasets: readonly DatasetDef[]): string {
  const lines: string[] = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">',
    "  <edmx:DataServices>",
    `    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="${CSDL_NAMESPACE}">`,
  ];
  for (const ds of datasets) {
    lines.push(`      <EntityType Name="${xmlAttr(ds.key)}">`);
    lines.push("        <Key>");
    for (const k of ds.keyColumns) lines.push(`          <PropertyRef Name="${xmlAttr(k)}"/>`);
    lines.push("        </Key>");
    for (const c of ds.columns) {
      const extra = c.type === "Edm.Decimal" ? ' Scale="variable"' : "";
      lines.push(`        <Property Name="${xmlAttr(c.name)}" Type="${c.type}" Nullable="${c.nullable ? "true" : "false"}"${extra}/>`);
    }
    lines.push("      </EntityType>");
  }
  lines.push('      <EntityContainer Name="Container">');
  for (const ds of datasets) {
    lines.push(`        <EntitySet Name="${xmlAttr(ds.key)}" EntityType="${CSDL_NAMESPACE}.${xmlAttr(ds.key)}"/>`);
  }
  lines.push("      </EntityContainer>", "    </Schema>", "  </edmx:DataServices>", "</edmx:Edmx>", "");
  return lines.join("\n");
}

/** The OData service document: one entity set per listed dataset key. */
export function serviceDocument(datasets: readonly DatasetDef[]): unknown {
  return {
    "@odata.context": "/api/bi/odata/v1/$metadata",
    value: datasets.map((ds) => ({ name: ds.key, kind: "EntitySet", url: ds.key })),
  };
}
