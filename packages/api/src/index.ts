export * from "./errors.js";
export * from "./keys.js";
export * from "./list-watch.js";
export * from "./resources.js";
export type * from "./types.js";
