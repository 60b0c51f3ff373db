/** The workbook writer and the Excel side of refresh. Every function takes the request context as a parameter. */
export { importTable, typedRows, queueColumnFormats, errorText, type ImportOptions, type ImportResult, type ImportTarget } from "./writer";
export { writeRefresh, excelRefreshTarget, refreshTable, refreshAllTables, type RefreshWriteOptions, type TableRefreshOptions } from "./refresh";
export { importSource, type ImportSourceOptions } from "./importSource";
export { readBindings, saveBinding, queueSaveBinding, deleteBinding, newBindingId, type StoredBindings } from "./bindingStore";
export { WriteError, writeInBlocks, DEFAULT_TARGET_REQUEST_BYTES, type WriteErrorCode } from "./blocks";
export { findOccupiedCell } from "./sheet";
export * from "./cells";
export * from "./names";
export * from "./info";
