// Lint as the Office add-in template does (`npm run lint`, zero warnings allowed), with the
// type-aware rules of typescript-eslint on every TypeScript file.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import officeAddins from "eslint-plugin-office-addins";
import globals from "globals";
import tseslint from "typescript-eslint";

// eslint-plugin-office-addins 4 ships flat configs (`configs.recommended`), but that config also
// brings its own copy of the typescript-eslint parser and plugin (8.8, older than ours, registered
// under the same "@typescript-eslint" name, which ESLint refuses to redefine) and prettier as an
// error-level rule (this repository is not prettier-formatted; turning it on would rewrite every
// file). So we register the plugin itself and take every `office-addins/*` rule, with the
// severity the template gives it, from its recommended config: a new rule in a later version of
// the plugin arrives here without editing this file.
const officeAddinsRules = Object.fromEntries(
  officeAddins.configs.recommended.flatMap((config) => Object.entries(config.rules ?? {})).filter(([name]) => name.startsWith("office-addins/")),
);
if (Object.keys(officeAddinsRules).length === 0) throw new Error("eslint-plugin-office-addins: no office-addins/* rules found in configs.recommended");

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "coverage/", "test-results/"] },

  // Plain JavaScript (build configs, launchers, the e2e runner): Node CommonJS, no type information.
  {
    files: ["**/*.js"],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: "commonjs", globals: { ...globals.node } },
  },
  {
    files: ["**/*.mjs"],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
  // Plain browser scripts served as they are (the Trusted Types default policy, loaded before Office.js).
  {
    files: ["src/**/*.js"],
    languageOptions: { sourceType: "script", globals: { ...globals.browser } },
  },

  // TypeScript: src, test, bench (all in tsconfig.json), with type information.
  {
    files: ["**/*.ts"],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: dirname(fileURLToPath(import.meta.url)) },
    },
    plugins: { "office-addins": officeAddins },
    rules: {
      // These rules know the request context only by the name `context` (as Office's documentation
      // and template name it), so code that calls `sync()` names it `context`, never `ctx`.
      ...officeAddinsRules,
      // A leading underscore marks a parameter kept on purpose: the emulator implements office.js
      // signatures whose arguments it does not need (e.g. `trackedObjects.add(_o)`).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      // zod is configured once (jitless: no eval under the pages' Content-Security-Policy) in
      // src/contract/zod.ts; importing "zod" directly could build schemas before that runs.
      "no-restricted-imports": ["error", { paths: [{ name: "zod", message: "Import { z } from src/contract/zod.ts (jitless, for the Content-Security-Policy)." }] }],
    },
  },
  {
    files: ["src/contract/zod.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  // Issue #34: the add-in calculates exactly its own formulas (Range.calculate); Application.calculate
  // recalculates every open workbook, in manual mode too, and a suspended API calculation obliges the
  // add-in to it. The emulator only answers these (test/architecture.test.ts checks the same).
  {
    files: ["src/**/*.ts"],
    ignores: ["src/emulator/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "CallExpression[callee.property.name='calculate'][callee.object.property.name='application']", message: "Application.calculate recalculates every open workbook: calculate the add-in's own ranges (Range.calculate)." },
        { selector: "MemberExpression[property.name='suspendApiCalculationUntilNextSync']", message: "A suspended API calculation obliges the add-in to recalculate the workbook: leave calculation to the user's mode." },
      ],
    },
  },
  {
    files: ["test/**/*.ts"],
    rules: {
      // Test doubles implement async interfaces (`fetchDataset: async () => ({ status: "unchanged" })`,
      // `Excel.run(async (context) => …)` batches that need no intermediate sync): `async` is the
      // plain way to write them and turns a throw into a rejection, as the real implementations do.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    files: ["test/emulator/emulator.test.ts"],
    rules: {
      // These tests break the load/sync rules on purpose: they read before load or sync, sync in
      // loops over failure cases and use every load form (empty, select/expand), to show that the
      // emulator throws or answers exactly where Excel does.
      ...Object.fromEntries(Object.keys(officeAddinsRules).map((name) => [name, "off"])),
    },
  },
);
