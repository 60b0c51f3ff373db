/**
 * The OASIS OData ABNF test cases (../shared/odata-abnf/odata-abnf-testcases.yaml, unchanged from
 * oasis-tcs/odata-abnf) that apply to a flat table: `$filter`/`$orderby`/`$select`/`$top`/`$skip`/
 * `$count` over primitive columns, and the URL literal forms they use. Positive cases must be
 * accepted (and, evaluated on a small table, give the same rows as the independent oracle);
 * negative cases (`FailAt`) must be refused with a QueryError.
 *
 * Not applicable, with the reason printed per group: navigation and member paths (`/`), lambda
 * operators, `$it`/`$root`, parameter aliases and annotations (`@`), JSON arrays and objects,
 * enumerations and `has`, casts and `isof`, geo values, functions over data a flat table does not
 * have (durations, time of day, offsets, collections), the Edm.Double special values INF/NaN,
 * years outside 0000–9999, payload-only value rules, and options other than the six above.
 */
import * as fs from "fs";
import * as path from "path";
import { applyQuery, parseQuery, QueryError } from "../../src/query";
import type { CellValue, Column } from "../../src/table/model";
import { makeTable } from "./fixture";
import { OracleError, oracleApply } from "./oracle/oracle";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require("js-yaml") as { safeLoad(text: string, opts: { schema: unknown }): unknown; FAILSAFE_SCHEMA: unknown };

/** `../shared` beside the repository (as in CI), resolved from the repository root. */
const CORPUS = path.resolve(__dirname, "../../../shared/odata-abnf/odata-abnf-testcases.yaml");

interface Case {
  Name: string;
  Rule: string;
  Input: string;
  FailAt?: string;
}

const EXPRESSION_RULES = new Set(["filter", "orderby", "select", "queryOptions", "boolCommonExpr", "boolcommonExpr", "commonExpr", "notExpr"]);
/** URL literal rules, and value rules whose form URLs share (payload-only cases excluded below). */
const LITERAL_RULES = new Set([
  "primitiveLiteral",
  "stringLiteral",
  "decimalValue",
  "decimalLiteral",
  "doubleValue",
  "doubleLiteral",
  "int64Value",
  "int64Literal",
  "dateTimeOffsetValue",
  "dateTimeOffsetLiteral",
  "date",
  "dateValue",
  "boolean",
  "null",
]);

const NOT_FLAT: Array<[RegExp, string]> = [
  [/\//, "navigation or member path"],
  [/\$it|\$root|\$this/, "$it / $root / $this (lambda or primitive-collection scope)"],
  [/@/, "parameter alias or annotation"],
  [/[[\]{}]/, "JSON array or object"],
  [/\b(any|all)\(/, "lambda operator"],
  [/geo\.|geography'|geometry'/, "geo value"],
  [/\w+\.\w+'|\bhas\b/, "enumeration"],
  [/\b(cast|isof)\(/i, "cast / isof"],
  [/\b(matchesPattern|fractionalseconds|maxdatetime|mindatetime|time|totaloffsetminutes|totalseconds|hassubset|hassubsequence)(\(|%28)/, "function over data a flat table does not have"],
  [/\bModel\.|\bNamespace\./, "bound or qualified function or type"],
  [/\bINF\b|\bNaN\b/, "Edm.Double special value (no Double columns)"],
  [/(^|[^\d])-\d{4,}-\d\d-\d\d/, "negative year"],
];

const SUPPORTED_NAMES = /^\$?(filter|select|orderby|top|skip|count)=/i;

function classify(c: Case): string | undefined {
  if (!EXPRESSION_RULES.has(c.Rule) && !LITERAL_RULES.has(c.Rule)) return `rule ${c.Rule}`;
  if (/payload/i.test(c.Name)) return "payload-only value rule";
  if (/enumeration/i.test(c.Name)) return "enumeration";
  if (/right operand is not a list/.test(c.Name)) return "collection-valued operand";
  if (/actions/.test(c.Name)) return "action or function in $select";
  if (/Path expressions/.test(c.Name)) return "path over a navigation property";
  for (const [re, why] of NOT_FLAT) if (re.test(c.Input)) return why;
  if (c.Rule === "queryOptions" || c.Rule === "filter" || c.Rule === "orderby" || c.Rule === "select") {
    const parts = c.Input.split("&");
    if (!parts.every((p) => SUPPORTED_NAMES.test(p) || /^\$?count$/.test(p))) return "query option other than $filter/$select/$orderby/$top/$skip/$count";
  }
  return undefined;
}

/** The query text a case stands for. */
function queryText(c: Case): string {
  switch (c.Rule) {
    case "filter":
    case "orderby":
    case "select":
    case "queryOptions":
      return c.Input;
    case "boolCommonExpr":
    case "boolcommonExpr":
    case "notExpr":
      return `$filter=${c.Input}`;
    case "commonExpr":
      // Any expression can be a sort key; booleans, numbers and text alike.
      return `$orderby=${c.Input}`;
    case "boolean":
      return `$filter=${c.Input}`;
    default:
      // A literal equals itself: parsed, type-checked and evaluated on every row.
      return `$filter=${c.Input} eq ${c.Input}`;
  }
}

const BASE: Column[] = [
  { name: "Name", type: "text" },
  { name: "Price", type: "decimal" },
  { name: "Rating", type: "integer" },
  { name: "CompanyName", type: "text" },
  { name: "Completed", type: "boolean" },
  { name: "BirthDate", type: "datetime" },
  { name: "LifeTime", type: "datetime" },
  { name: "ReleaseDate", type: "date" },
  { name: "Street", type: "text" },
  { name: "City", type: "text" },
  { name: "FirstName", type: "text" },
  { name: "LastName", type: "text" },
  { name: "Cost", type: "decimal" },
  { name: "Revenue", type: "decimal" },
];
// `Size` is compared with true in one case and with 4.0 in another: two schemas.
const SCHEMAS: Column[][] = [
  [...BASE, { name: "Size", type: "boolean" }],
  [...BASE, { name: "Size", type: "decimal" }],
];
function rows(sizeBoolean: boolean): CellValue[][] {
  return [
    ["Milk", 2.55, 5, "Alfreds Futterkiste", true, "1990-05-01T10:20:30Z", "2025-01-31T08:00:00Z", "2014-01-01", "Hugo", "Berlin", "Smith", "Doe", 10, 12.5, sizeBoolean ? true : 4],
    ["Cheese", 5.1, 4, "Futterkiste", false, "2001-12-31T23:59:59Z", null, "2013-05-24", "NE 40th", "Redmond", "Miller", "Jones", 20, 15, sizeBoolean ? false : 4.0],
    [null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],
  ];
}
const NOW = Date.parse("2025-06-01T00:00:00Z");

describe("OASIS OData ABNF test cases that apply to a flat table", () => {
  test("every applicable case is accepted or refused as the corpus says", () => {
    if (!fs.existsSync(CORPUS)) {
      throw new Error(`ABNF corpus missing: expected ${CORPUS} (the shared folder must sit beside the repository clone, as in CI)`);
    }
    // FAILSAFE: every scalar stays a string (YAML 1.1 would turn date-times into Date objects).
    const doc = yaml.safeLoad(fs.readFileSync(CORPUS, "utf8"), { schema: yaml.FAILSAFE_SCHEMA }) as { TestCases: Case[] };
    const skipped = new Map<string, number>();
    const failures: string[] = [];
    let applicable = 0;
    let positive = 0;
    let evaluated = 0;
    for (const c of doc.TestCases) {
      const why = classify(c);
      if (why !== undefined) {
        skipped.set(why, (skipped.get(why) ?? 0) + 1);
        continue;
      }
      applicable++;
      const text = queryText(c);
      const shouldFail = c.FailAt !== undefined;
      // Accepted when it parses and compiles against at least one schema.
      let accepted = false;
      let lastError = "";
      for (const schema of SCHEMAS) {
        const sizeBoolean = schema === SCHEMAS[0];
        try {
          const q = parseQuery(text);
          const table = makeTable(schema, rows(sizeBoolean));
          const got = applyQuery(table, q, { now: NOW });
          accepted = true;
          if (!shouldFail) {
            const want = oracleApply(schema, table.rows, q, NOW);
            if (JSON.stringify([got.table.rows, got.count]) !== JSON.stringify([want.rows, want.count])) {
              failures.push(`${c.Rule} ${JSON.stringify(c.Input)}: engine ${JSON.stringify(got.table.rows)} but oracle ${JSON.stringify(want.rows)}`);
            }
            evaluated++;
          }
          break;
        } catch (e) {
          if (!(e instanceof QueryError) && !(e instanceof OracleError)) throw e;
          lastError = e.message;
        }
      }
      if (!shouldFail) positive++;
      if (accepted === shouldFail) failures.push(`${c.Rule} ${JSON.stringify(c.Input)} (${c.Name}): ${shouldFail ? "accepted, but the corpus says it fails" : `refused: ${lastError}`}`);
    }
    const skippedText = [...skipped].map(([why, n]) => `${n} ${why}`).join("; ");
    console.log(
      `ABNF corpus: ${applicable} applicable cases (${positive} positive, ${applicable - positive} negative), ${evaluated} evaluated against the oracle; ` +
        `${doc.TestCases.length - applicable} not applicable to a flat table: ${skippedText}`,
    );
    expect(failures).toEqual([]);
    expect(applicable).toBeGreaterThanOrEqual(100);
  });
});
