/**
 * The custom functions' manifest entry and metadata (issue #28): the CustomFunctions extension point
 * in the shared runtime, and functions.json generated at build time from the JSDoc by Microsoft's
 * generator (the same code the webpack plugin runs), never kept in the repository.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { generateCustomFunctionsMetadata } from "custom-functions-metadata";

const ROOT = path.resolve(__dirname, "../..");
const manifest = fs.readFileSync(path.join(ROOT, "manifest.xml"), "utf8");

describe("manifest: custom functions", () => {
  it("the extension point is under AllFormFactors, in the shared runtime (Script and Page are the task pane page), namespace PPM", () => {
    const point = /<AllFormFactors>\s*<ExtensionPoint xsi:type="CustomFunctions">([\s\S]*?)<\/ExtensionPoint>\s*<\/AllFormFactors>/.exec(manifest);
    expect(point).not.toBeNull();
    expect(point![1]).toMatch(/<Script>\s*<SourceLocation resid="Taskpane.Url"\/>\s*<\/Script>\s*<Page>\s*<SourceLocation resid="Taskpane.Url"\/>\s*<\/Page>\s*<Metadata>\s*<SourceLocation resid="Functions.Metadata.Url"\/>\s*<\/Metadata>\s*<Namespace resid="Functions.Namespace"\/>/);
    expect(manifest).toContain('<bt:Url id="Functions.Metadata.Url" DefaultValue="https://localhost:3000/functions.json"/>');
    expect(manifest).toContain('<bt:String id="Functions.Namespace" DefaultValue="PPM"/>');
    expect(manifest).toContain('xsi:type="VersionOverridesV1_0"');
  });
});

describe("functions.json", () => {
  it("is generated from the JSDoc: four streaming functions with their optional arguments; the webpack build runs the plugin on that file", async () => {
    const source = path.join(ROOT, "src/functions/functions.ts");
    const result = await generateCustomFunctionsMetadata([source], true);
    expect(result.errors).toEqual([]);
    const meta = JSON.parse(result.metadataJson) as { functions: Array<{ id: string; options?: { stream?: boolean }; parameters: Array<{ name: string; optional?: boolean }>; result: { dimensionality?: string } }> };
    expect(meta.functions.map((f) => f.id)).toEqual(["VALUE", "QUERY", "VIEW", "ASOF"]);
    expect(meta.functions.every((f) => f.options?.stream === true)).toBe(true);
    const params = (id: string) => meta.functions.find((f) => f.id === id)!.parameters.map((p) => (p.optional ? `[${p.name}]` : p.name));
    expect(params("VALUE")).toEqual(["dataset", "key", "column", "[connection]"]);
    expect(params("QUERY")).toEqual(["dataset", "[options]", "[connection]"]);
    expect(meta.functions.find((f) => f.id === "QUERY")!.result.dimensionality).toBe("matrix");
    expect(result.associate.map((a) => a.functionName)).toEqual(["value", "query", "view", "asof"]);
    const config = fs.readFileSync(path.join(ROOT, "webpack.config.js"), "utf8");
    expect(config).toContain('new CustomFunctionsMetadataPlugin({ output: "functions.json", input: "./src/functions/functions.ts" })');
    // Never written by hand: no functions.json anywhere in the sources.
    const tracked = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (["node_modules", ".git", "dist"].includes(e.name) ? [] : tracked(path.join(dir, e.name))) : e.name === "functions.json" ? [path.join(dir, e.name)] : []));
    expect(tracked(ROOT)).toEqual([]);
  });
});
