export * from "./errors.js";
export * from "./fields.js";
export * from "./keys.js";
export * from "./labels.js";
export * from "./list-watch.js";
export * from "./resources.js";
export * from "./selector-errors.js";
export type * from "./types.js";
export * from "./validation.js";
