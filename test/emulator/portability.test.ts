/**
 * The emulator is bundled into the browser preview, so its runtime files must type-check with the
 * ES2022 library alone: no DOM, no Node typings. Only `index.ts` names `Excel.RequestContext` (a type).
 */
import * as path from "path";
import ts from "typescript";

const RUNTIME = ["address", "cells", "errors", "format", "formula", "host", "host-objects", "library", "model", "profiles", "shapes", "typed-input", "values"].map((f) =>
  path.join(__dirname, "..", "..", "src", "emulator", `${f}.ts`),
);

test("runtime files compile without DOM or Node typings", () => {
  const program = ts.createProgram(RUNTIME, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    lib: ["lib.es2022.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    noUnusedLocals: true,
  });
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? path.basename(d.file.fileName) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
  expect(problems).toEqual([]);
});
