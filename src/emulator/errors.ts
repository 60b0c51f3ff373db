/**
 * Errors the workbook model raises while the host answers a request. The host puts their code and
 * message into the response (`{ Error: { Code, Message, … } }`), and Microsoft's library turns that
 * into its own `OfficeExtension.Error`: add-in code never sees this class.
 */

/** Error codes the emulator raises. Values are the strings Excel puts in `OfficeExtension.Error.code`. */
export const ErrorCodes = {
  invalidArgument: "InvalidArgument",
  invalidOperation: "InvalidOperation",
  itemNotFound: "ItemNotFound",
  itemAlreadyExists: "ItemAlreadyExists",
  invalidReference: "InvalidReference",
  /** Raised by Excel (on the web) when one `sync()` sends more than 5 MB. */
  requestPayloadSizeLimitExceeded: "RequestPayloadSizeLimitExceeded",
  /** Raised by Excel (on the web) when the data loaded in one `sync()` exceeds 5 MB (`Excel.ErrorCodes`). */
  responsePayloadSizeLimitExceeded: "ResponsePayloadSizeLimitExceeded",
  /** Raised by the library itself when a property is read before `load` + `sync` (listed for reference). */
  propertyNotLoaded: "PropertyNotLoaded",
  /** An object path the host cannot resolve (a reference released, a path missing from the request). */
  invalidObjectPath: "InvalidObjectPath",
  /** Raised when a range read or written cell by cell has more cells than Excel allows per operation. */
  rangeExceedsLimit: "RangeExceedsLimit",
  /** Raised by the library when objects from one request context are passed to another (listed for reference). */
  invalidRequestContext: "InvalidRequestContext",
  generalException: "GeneralException",
  /**
   * A batch that reached Excel while the user was typing in a cell, without `delayForCellEdit`
   * (docs: Excel.RunOptions.delayForCellEdit, "Delay execution while cell is being edited").
   */
  invalidOperationInCellEditMode: "InvalidOperationInCellEditMode",
  /** "The current selection is invalid for this operation" (docs: Excel error codes), e.g. several areas. */
  invalidSelection: "InvalidSelection",
  /** "The insert or delete operation attempted resulted in a conflict" (docs: Excel error codes), e.g. `deleteRowsAt` on a filtered table. */
  insertDeleteConflict: "InsertDeleteConflict",
  /** A member outside the host's requirement sets: "The API you are trying to use could not be found" (docs: Excel error codes). */
  apiNotFound: "ApiNotFound",
  /**
   * "You cannot perform the requested operation" (docs: Excel error codes, HTTP 403): issue #35, a
   * change a protected sheet or a protected workbook structure refuses.
   */
  accessDenied: "AccessDenied",
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Mirrors the fields of `OfficeExtension.Error` that callers rely on. */
export class EmulatedExcelError extends Error {
  /** Machine-readable code, e.g. `InvalidArgument`. */
  readonly code: ErrorCode;
  readonly debugInfo: { code: ErrorCode; message: string; errorLocation?: string };
  readonly traceMessages: string[] = [];
  readonly innerError: null = null;

  constructor(code: ErrorCode, message: string, errorLocation?: string) {
    super(message);
    // office.js names its errors RichApi.Error; keeping the name lets log output look familiar.
    this.name = "RichApi.Error";
    this.code = code;
    this.debugInfo = errorLocation === undefined ? { code, message } : { code, message, errorLocation };
  }
}

/** Narrows an unknown thrown value to an emulator error with the given code. */
export function isEmulatedError(e: unknown, code?: ErrorCode): e is EmulatedExcelError {
  return e instanceof EmulatedExcelError && (code === undefined || e.code === code);
}

export function invalidArgument(message: string, where?: string): EmulatedExcelError {
  return new EmulatedExcelError(ErrorCodes.invalidArgument, message, where);
}
export function invalidOperation(message: string, where?: string): EmulatedExcelError {
  return new EmulatedExcelError(ErrorCodes.invalidOperation, message, where);
}
export function itemNotFound(message: string, where?: string): EmulatedExcelError {
  return new EmulatedExcelError(ErrorCodes.itemNotFound, message, where);
}
export function accessDenied(message: string, where?: string): EmulatedExcelError {
  return new EmulatedExcelError(ErrorCodes.accessDenied, message, where);
}
export function itemAlreadyExists(message: string, where?: string): EmulatedExcelError {
  return new EmulatedExcelError(ErrorCodes.itemAlreadyExists, message, where);
}
