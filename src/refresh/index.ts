/** Refresh planning and the binding model (pure: no Office, no DOM). */
export * from "./binding";
export * from "./validate";
export * from "./plan";
export * from "./source";
export * from "./engine";
export * from "./delta";
