/**
 * `$metadata`: CSDL XML that validates against the OASIS schema in `../shared/schemas/odata-csdl/`
 * (xmllint), with the same typed columns the manifest lists.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Manifest } from "../../src/contract/contract";
import type { ReferenceService } from "../../src/reference/server";
import { acme, get, json, start } from "./helpers";

const XSD = resolve(__dirname, "../../../shared/schemas/odata-csdl/edmx.xsd");

function findXmllint(): string | undefined {
  for (const p of ["/usr/bin/xmllint", "/usr/local/bin/xmllint", "/opt/homebrew/bin/xmllint"]) if (existsSync(p)) return p;
  try {
    return execFileSync("sh", ["-c", "command -v xmllint"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

let svc: ReferenceService;
let xml: string;
let tmp: string;
beforeAll(async () => {
  svc = await start();
  const res = await get(svc.url, "/api/bi/odata/v1/$metadata", acme());
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/xml/);
  expect(res.headers.get("odata-version")).toBe("4.0");
  xml = await res.text();
  tmp = mkdtempSync(join(tmpdir(), "ppm-metadata-"));
});
afterAll(async () => {
  await svc.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs xmllint against the CSDL XSD; returns stderr, throws with it when the document is invalid. */
function validate(doc: string, name: string, xmllint: string): { ok: boolean; output: string } {
  const file = join(tmp, name);
  writeFileSync(file, doc, "utf8");
  try {
    const out = execFileSync(xmllint, ["--noout", "--nonet", "--schema", XSD, file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { ok: true, output: out };
  } catch (e) {
    const err = e as { stderr?: string };
    return { ok: false, output: String(err.stderr ?? e) };
  }
}

test("$metadata validates against the OASIS CSDL XSD (xmllint)", () => {
  const xmllint = findXmllint();
  const haveXsd = existsSync(XSD);
  if (!xmllint || !haveXsd) {
    const why = `${!xmllint ? "xmllint not installed" : ""}${!xmllint && !haveXsd ? " and " : ""}${!haveXsd ? `${XSD} missing` : ""}`;
    if (process.env.CI === "true") throw new Error(`CSDL validation cannot run in CI: ${why}`);
    console.warn(`SKIPPED CSDL XSD validation: ${why}`);
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>')).toBe(true);
    return;
  }
  const result = validate(xml, "metadata.xml", xmllint);
  expect(result.output).not.toMatch(/fails to validate|error/i);
  expect(result.ok).toBe(true);
  // The check is real: a broken document is refused by the same command.
  const broken = validate(xml.replace('Version="4.0"', 'Version="5.0"'), "broken.xml", xmllint);
  expect(broken.ok).toBe(false);
  const badType = validate(xml.replace('Type="Edm.String"', 'Type="not a type"'), "badtype.xml", xmllint);
  expect(badType.ok).toBe(false);
});

test("every dataset is an entity type + entity set whose properties match the manifest columns", async () => {
  const manifest = await json<Manifest>(await get(svc.url, "/api/bi/v1/manifest", acme()));
  for (const ds of manifest.datasets) {
    const m = new RegExp(`<EntityType Name="${ds.key}">([\\s\\S]*?)</EntityType>`).exec(xml);
    expect(m).not.toBeNull();
    const props = [...m![1].matchAll(/<Property Name="([^"]+)" Type="([^"]+)" Nullable="(true|false)"/g)].map((p) => ({
      name: p[1],
      type: p[2],
      nullable: p[3] === "true",
    }));
    expect(props).toEqual(ds.columns);
    expect(m![1]).toMatch(/<Key>\s*<PropertyRef Name="/);
    expect(xml).toContain(`<EntitySet Name="${ds.key}" EntityType="Service.Reporting.${ds.key}"/>`);
  }
});
