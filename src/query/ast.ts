/** Syntax tree of `$filter` / `$orderby` expressions. Every node keeps its 1-based source position. */
import type { Decimal } from "./decimal";

export type LiteralType = "text" | "integer" | "decimal" | "boolean" | "date" | "datetime" | "null";

export type BinaryOp =
  | "and"
  | "or"
  | "eq"
  | "ne"
  | "gt"
  | "ge"
  | "lt"
  | "le"
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "divby"
  | "mod";

export type Expr =
  /** `value`: text/date as string, integer as number or bigint, exact Decimal, datetime epoch ms. */
  | { k: "lit"; type: LiteralType; value: string | number | bigint | Decimal | boolean | null; pos: number; text: string }
  /** `name` is the reference as written, with quotes removed; `quoted` tells which rule resolves it. */
  | { k: "col"; name: string; quoted: boolean; pos: number; text: string }
  | { k: "neg"; arg: Expr; pos: number }
  | { k: "not"; arg: Expr; pos: number }
  /** `text` is the source text of the whole operation (set for `div`, `divby`, `mod`: errors quote it). */
  | { k: "bin"; op: BinaryOp; left: Expr; right: Expr; pos: number; text?: string }
  | { k: "in"; arg: Expr; items: Expr[]; pos: number }
  /** `name` is lower-cased (function names are case-insensitive). */
  | { k: "call"; name: string; args: Expr[]; pos: number; text: string };

export interface OrderItem {
  expr: Expr;
  desc: boolean;
  pos: number;
}
