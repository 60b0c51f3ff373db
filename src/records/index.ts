/** Records: open, create, update projects/proposals and safe write-back of custom fields (pure: no Office, no DOM). */
export * from "./values";
export * from "./fields";
export * from "./baseline";
export * from "./held";
export * from "./diff";
export * from "./send";
export * from "./client";
export * from "./record";
export * from "./session";
