/** @type {import('jest').Config} */
module.exports = {
  // Node, plus Microsoft's Excel client library loaded on first use (test/helpers/officeJsEnvironment.js).
  testEnvironment: "<rootDir>/test/helpers/officeJsEnvironment.js",
  roots: ["<rootDir>/src", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/test/e2e/"],
  // Type checking is done once by `npm run typecheck`; ts-jest only transpiles (isolatedModules in tsconfig).
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] },
  testTimeout: 30000,
};
