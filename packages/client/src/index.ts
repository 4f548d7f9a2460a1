export * from "./client.js";
export * from "./discovery.js";
export * from "./http/index.js";
export * from "./lister-watcher.js";
export * from "./port/index.js";
