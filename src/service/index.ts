/**
 * The service client's public API. Pure logic: no Office, no DOM, no Node-only modules (the
 * file-backed validator store lives in `./node` and is imported from there by Node code only).
 */
export * from "./errors";
export * from "./connection";
export * from "./validators";
export * from "./request";
export * from "./values";
export * from "./csdl";
export * from "./manifest";
export * from "./csv";
export * from "./dataset";
export * from "./customFields";
export * from "./resources";
export * from "./snapshot";
export * from "./client";
export { Sha256, sha256Hex } from "./hash";
/** The tabular model every call returns (defined in `src/table`, re-exported for convenience). */
export type { Table, Column, CellValue, ColumnType, TableMeta } from "../table/model";
